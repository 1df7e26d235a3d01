/**
 * A whole-file replace through the CLI (issue 29 item 2), a real process:
 * the text report's op column and the --json report say `replace`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../mod.ts";
import { removeTemps, runApply, tempDir } from "./run_cli.ts";

afterAll(removeTemps, 30_000);

const OLD = "[main]\r\ndebug = 1\r\n";
const PATCH = "*** Begin Patch\n*** Delete File: app.ini\n*** Add File: app.ini\n+[main]\n+debug = 0\n*** End Patch\n";

describe("CLI: whole-file replace", () => {
  test("text report: the op is replace; CRLF and mode kept", async () => {
    const root = tempDir();
    writeFileSync(join(root, "app.ini"), OLD);
    chmodSync(join(root, "app.ini"), 0o640);
    const run = await runApply(["--root", root, "--expect", `app.ini=${sha256Hex(OLD)}`], PATCH);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ {2}replace {2}app\.ini {2}[0-9a-f]{8} → [0-9a-f]{8} {2}19 bytes {2}mode\+owner kept$/m);
    expect(readFileSync(join(root, "app.ini"), "utf8")).toBe("[main]\r\ndebug = 0\r\n");
    expect(statSync(join(root, "app.ini")).mode & 0o777).toBe(0o640);
  });

  test("--json: files[0].op is replace", async () => {
    const root = tempDir();
    writeFileSync(join(root, "app.ini"), OLD);
    const run = await runApply(["--root", root, "--json"], PATCH);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.files.map((f: { op: string }) => f.op)).toEqual(["replace"]);
  });
});
