/**
 * The CLI speaks CLI (issue 15 item 5): failures name its flags, never a
 * library option or an MCP tool; dry runs print the full SHA-256s that
 * `--expect` needs as a ready line; and a reader that closes stdout early
 * (`… | head -1`) does not turn an applied patch into exit 1.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../mod.ts";
import { REPO, removeTemps, runApply, siteCopy, tempDir } from "./run_cli.ts";

afterAll(removeTemps, 30_000);

const CONF_PATCH = [
  "*** Begin Patch",
  "*** Update File: site.conf",
  "@@ server {",
  "     listen 80;",
  "-    server_name harbour.example;",
  "+    server_name harbour.example www.harbour.example;",
  "*** End Patch",
].join("\n");

const sha = (root: string, path: string): string => sha256Hex(readFileSync(join(root, path)));

describe("apply.ts in CLI words", () => {
  test("a dry run ends with a ready --expect line of full SHA-256s, and that line applies", async () => {
    const root = siteCopy();
    const before = sha(root, "site.conf");
    const dry = await runApply(["--root", root, "--dry-run"], CONF_PATCH);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`run it again without --dry-run and with:\n  --expect site.conf=${before}\n`);
    const line = dry.stdout.split("\n").find((l) => l.startsWith("  --expect "))!.trim().split(" ");
    const applied = await runApply(["--root", root, ...line], CONF_PATCH);
    expect(applied.code).toBe(0);
    // After a commit: the flags for the next patch, with the new versions.
    expect(applied.stdout).toContain(`To patch these files again on top of this result, pass:\n  --expect site.conf=${sha(root, "site.conf")}\n`);
  });

  test("a wrong --expect whose chunk still applies exactly: the current SHA-256 as a flag (issue 29.3)", async () => {
    const root = siteCopy();
    const json = JSON.parse((await runApply(["--root", root, "--json", "--expect", `site.conf=${"0".repeat(64)}`], CONF_PATCH)).stdout);
    const current = json.errors[0].current_sha256;
    expect(current).toMatch(/^[0-9a-f]{64}$/);
    expect(json.errors[0].message).toContain(`send the same patch again with this SHA-256 (pass --expect site.conf=${current})`);
    for (const word of ["read_file", "file_sha256", "expected_sha256", "expectedSha256"]) expect(json.errors[0].message).not.toContain(word);
  });

  test("a wrong --expect: the next step is in flags (--expect), with no MCP tool or library option named", async () => {
    const root = siteCopy();
    const STALE = CONF_PATCH.replace("listen 80", "listen 8080");
    const run = await runApply(["--root", root, "--expect", `site.conf=${"0".repeat(64)}`], STALE);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("[1] precondition_failed · site.conf");
    expect(run.stdout).toContain("pass --expect site.conf=<SHA-256 of the version you read>");
    for (const word of ["read_file", "file_sha256", "expected_sha256", "expectedSha256"]) expect(run.stdout).not.toContain(word);
    const json = JSON.parse((await runApply(["--root", root, "--json", "--expect", `site.conf=${"0".repeat(64)}`], STALE)).stdout);
    expect(json.errors[0].message).toContain("pass --expect site.conf=");
    expect(json.errors[0].hints.map((h: { kind: string }) => h.kind)).toEqual(["read", "expected_sha256"]);
  });

  test("a chunk that does not match: 'read lines … again', never 'with read_file'", async () => {
    const root = siteCopy();
    const run = await runApply(["--root", root], CONF_PATCH.replace("listen 80", "listen 8080"));
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("[1] context_mismatch · site.conf · chunk 1");
    expect(run.stdout).toMatch(/read lines \d+–\d+ of site\.conf again/);
    expect(run.stdout).not.toContain("read_file");
  });

  test("`… | head -1` closes stdout under a large report: the patch is applied and the exit code is still 0", async () => {
    const root = tempDir("sap-cli-epipe-");
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i}`);
    writeFileSync(join(root, "big.txt"), lines.join("\n") + "\n");
    // 8000 changed lines: a diff of ~300 KB, far more than a pipe buffer,
    // so the report is still being written when head exits.
    const patch = ["*** Begin Patch", "*** Update File: big.txt", "@@", ...lines.slice(0, 8000).flatMap((l) => [`-${l}`, `+${l} changed`]), "*** End Patch"].join("\n");
    const patchFile = join(tempDir("sap-cli-patch-"), "big.patch");
    writeFileSync(patchFile, patch);
    const script = `${JSON.stringify(process.execPath)} examples/apply.ts --root ${JSON.stringify(root)} --patch ${JSON.stringify(patchFile)} | head -1; echo "exit=\${PIPESTATUS[0]}"`;
    const run = spawnSync("bash", ["-c", script], { cwd: REPO, encoding: "utf8", env: { ...process.env, HOME: tempDir("sap-cli-home-") } });
    expect(run.stdout).toStartWith("Applied 1 file in local ");
    expect(run.stdout.trim().split("\n").at(-1)).toBe("exit=0");
    expect(run.stderr).not.toContain("EPIPE");
    expect(readFileSync(join(root, "big.txt"), "utf8").startsWith("line 0 changed\n")).toBe(true);
  });
});
