/**
 * A file renamed away by the co-tenant while the engine hard-links its pin,
 * and back right after (wrapped link/ln), made sap_pin answer "may not
 * pin" (the link failed, and the name was a regular file again by the time
 * it looked) — reported as unsafe_directory "the remote user may not
 * hard-link it … patch it as a user who owns it (or with sudo)", not
 * retryable, although the engine ran as root (redteam finding: 13 of 120
 * commits under a rename-toggling co-tenant). sap_pin now tells a race
 * from a refusal by link's own error (ENOENT: the name was gone while
 * link(2) ran) and retries up to 3 times; a name that keeps changing is a
 * retryable conflict. A real refusal (file systems without hard links,
 * fs.protected_hardlinks) keeps its path: see the delta upload test "no
 * hard link possible (FAULT INJECTED: sap_link fails)".
 */
import { afterAll, expect } from "bun:test";
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { parsePatch } from "../../lib/patch/parse.ts";
import { planPatch } from "../../lib/plan/plan.ts";
import { commitRemote } from "../../lib/remote/commit.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { shQuote as q } from "../../lib/remote/shell.ts";
import { cleanupTemps, rootTest, shellCases, tempDir } from "../support/local_trees.ts";
import { attackBin, coTenantTree } from "./co_tenant_fixture.ts";
import type { AttackRule } from "./co_tenant_fixture.ts";

afterAll(cleanupTemps);

rootTest("a file renamed away while the engine hard-links its pin, and back (wrapped link/ln), is reported a retryable conflict, not 'may not hard-link it' (running as root)", async () => {
  const dash = shellCases().find((c) => c.name === "dash")!;
  const t = coTenantTree({ files: { "f.txt": "v1\n" } });
  const f = join(t.work, "f.txt");
  const rule = (tool: string): AttackRule => ({ tool, pattern: "*f.txt*", before: `mv ${q(f)} ${q(`${f}.held`)}`, after: `mv ${q(`${f}.held`)} ${q(f)}` });
  const path = dash.options.env?.PATH ?? process.env.PATH!;
  const env = { ...(dash.options.env ?? (process.env as Record<string, string>)), PATH: `${attackBin(t, [rule("link"), rule("ln")], path)}:${path}` };
  const shell = new LocalShell({ ...dash.options, env, cwd: tempDir("sap-cwd-") });
  const snap = (await readSnapshots(shell, t.root, ["shared/f.txt"], { sharedDirectories: "allow" })).get("shared/f.txt")!;
  expect(snap.rejected?.code).toBe("conflict");
  expect(snap.rejected?.retryable).toBe(true);
});

rootTest("the same toggle during a commit's pin is a retryable conflict with nothing changed (not 'may not hard-link it')", async () => {
  const dash = shellCases().find((c) => c.name === "dash")!;
  const t = coTenantTree({ files: { "f.txt": "v1\n" } });
  const f = join(t.work, "f.txt");
  const plain = new LocalShell({ ...dash.options, cwd: tempDir("sap-cwd-") });
  const snaps = await readSnapshots(plain, t.root, ["shared/f.txt"], { sharedDirectories: "allow" });
  const rule = (tool: string): AttackRule => ({ tool, pattern: "*f.txt*", before: `mv ${q(f)} ${q(`${f}.held`)}`, after: `mv ${q(`${f}.held`)} ${q(f)}` });
  const path = dash.options.env?.PATH ?? process.env.PATH!;
  const env = { ...(dash.options.env ?? (process.env as Record<string, string>)), PATH: `${attackBin(t, [rule("link"), rule("ln")], path)}:${path}` };
  const shell = new LocalShell({ ...dash.options, env, cwd: tempDir("sap-cwd-") });
  const parsed = parsePatch("*** Begin Patch\n*** Update File: shared/f.txt\n@@\n-v1\n+v2\n*** End Patch\n");
  if (!parsed.ok) throw new Error("patch");
  const planned = planPatch(parsed.patch, snaps);
  if (!planned.ok) throw new Error("plan");
  const report = await commitRemote(shell, t.root, planned.plan, { sharedDirectories: "allow" });
  expect(report.errors?.map((e) => [e.code, e.path, e.retryable])).toEqual([["conflict", "shared/f.txt", true]]);
  expect(report.errors![0]!.message).not.toContain("hard-link");
  expect(report.errors![0]!.message).toContain("renamed, replaced or changed while it was being checked");
  expect(readFileSync(f, "utf8")).toBe("v1\n");
  expect(readdirSync(t.work).filter((n) => n.startsWith(".sap-"))).toEqual([]);
});

rootTest("a name renamed away and back during only the first link is pinned by the retry: the read and the commit succeed", async () => {
  const dash = shellCases().find((c) => c.name === "dash")!;
  const t = coTenantTree({ files: { "f.txt": "v1\n" } });
  const f = join(t.work, "f.txt");
  const marks = tempDir("sap-marks-");
  chmodSync(marks, 0o777);
  // each tool's first call only (a marker per tool the attacker can write)
  const rule = (tool: string): AttackRule => ({
    tool,
    pattern: "*f.txt*",
    before: `[ -e ${q(join(marks, tool))} ] || { : > ${q(join(marks, tool))}; mv ${q(f)} ${q(`${f}.held`)}; }`,
    after: `[ ! -e ${q(`${f}.held`)} ] || mv ${q(`${f}.held`)} ${q(f)}`,
  });
  const path = dash.options.env?.PATH ?? process.env.PATH!;
  const env = { ...(dash.options.env ?? (process.env as Record<string, string>)), PATH: `${attackBin(t, [rule("link"), rule("ln")], path)}:${path}` };
  const shell = new LocalShell({ ...dash.options, env, cwd: tempDir("sap-cwd-") });
  const snap = (await readSnapshots(shell, t.root, ["shared/f.txt"], { sharedDirectories: "allow" })).get("shared/f.txt")!;
  expect(snap.rejected).toBeUndefined();
  expect(new TextDecoder().decode(snap.bytes)).toBe("v1\n");
  expect(existsSync(join(marks, "link")) || existsSync(join(marks, "ln"))).toBe(true); // the toggle did happen
  rmSync(join(marks, "link"), { force: true });
  rmSync(join(marks, "ln"), { force: true });
  const report = await applyPatch(shell, { root: t.root, sharedDirectories: "allow", patch: "*** Begin Patch\n*** Update File: shared/f.txt\n@@\n-v1\n+v2\n*** End Patch\n" });
  expect(report.errors).toBeUndefined();
  expect(report.ok).toBe(true);
  expect(readFileSync(f, "utf8")).toBe("v2\n");
});
