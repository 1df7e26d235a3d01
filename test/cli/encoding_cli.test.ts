/**
 * `--encoding` through the CLI (issue 29 item 6), a real process: a
 * latin-1 file is patched byte-exactly; without the flag the refusal names
 * it; an unknown name is a usage error.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { removeTemps, runApply, tempDir } from "./run_cli.ts";

afterAll(removeTemps, 30_000);

const bytes = (...parts: (string | number[])[]): Uint8Array =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === "string" ? [...p].map((c) => c.charCodeAt(0)) : p)));
const LATIN = bytes("name = M", [0xfc], "ller\r\n");
const PATCH = "*** Begin Patch\n*** Update File: a.ini\n@@\n-name = Müller\n+name = Mädler\n*** End Patch\n";

function rootWith(content: Uint8Array): string {
  const root = tempDir();
  writeFileSync(join(root, "a.ini"), content);
  return root;
}

describe("CLI: --encoding", () => {
  test("--encoding latin1: applied byte-exactly (CRLF kept)", async () => {
    const root = rootWith(LATIN);
    const run = await runApply(["--root", root, "--encoding", "latin1"], PATCH);
    expect(run.code).toBe(0);
    expect([...new Uint8Array(readFileSync(join(root, "a.ini")))]).toEqual([...bytes("name = M", [0xe4], "dler\r\n")]);
  });

  test("without it: invalid_utf8 naming --encoding latin1, nothing changed", async () => {
    const root = rootWith(LATIN);
    const run = await runApply(["--root", root, "--json"], PATCH);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report.errors[0].code).toBe("invalid_utf8");
    expect(report.errors[0].message).toContain("send the request again with --encoding latin1");
    expect([...new Uint8Array(readFileSync(join(root, "a.ini")))]).toEqual([...LATIN]);
  });

  test("an unknown encoding is a usage error", async () => {
    const run = await runApply(["--root", tempDir(), "--encoding", "latin-1"], PATCH);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--encoding must be one of utf-8, latin1, windows-1252");
  });
});
