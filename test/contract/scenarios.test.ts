/**
 * The scenario suite end to end through applyPatch and the real remote
 * engine: each scenario's input is materialised as real files (modes and
 * symlinks from setup.json), then applyPatch (parse → one real snapshot exec
 * → plan → one real commit exec), and the root is compared byte for byte
 * with `expected/` — or the failures with `expected_failure.json`, the tree
 * left exactly as it was and no commit exec made. This checks that real
 * snapshots plan exactly like the model snapshots of the pure-core suite and
 * that the commit writes exactly the planned bytes. Runtime budget (see
 * test/support/shells_under_test.ts): runs under the BusyBox userland (the
 * tool set most unlike GNU) and over SSH with sudo (the whole remote stack)
 * unless SAP_SCENARIO_SHELLS lists others (e.g.
 * "dash,bash,busybox,ssh-root,ssh-sudo"); test/contract/apply.test.ts
 * runs the §10 regressions through applyPatch on every shell.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { describeTreeDifference, loadScenarios, projectFailures, readTree } from "../support/scenarios.ts";
import type { Scenario } from "../support/scenarios.ts";
import { assertNoLeftovers, cleanupTemps, CountingShell, noLeftoversAfterEach, tempDir } from "../support/local_trees.ts";
import { only, shellsUnderTest } from "../support/shells_under_test.ts";
import type { ShellUnderTest } from "../support/shells_under_test.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();
const scenarios = loadScenarios();

function materialise(s: Scenario): string {
  const root = tempDir("sap-scenario-");
  for (const [path, bytes] of s.input) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), bytes);
    chmodSync(join(root, path), Number.parseInt(s.setup.modes?.[path] ?? "644", 8));
  }
  for (const [link, target] of Object.entries(s.setup.symlinks ?? {})) {
    mkdirSync(dirname(join(root, link)), { recursive: true });
    symlinkSync(target, join(root, link));
  }
  return root;
}

/** Every entry below root: files as mode + bytes, symlinks as their target (scenario trees hold both). */
function treeState(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      const rel = relative(root, full);
      if (entry.isSymbolicLink()) out.set(rel, `link ${readlinkSync(full)}`);
      else if (entry.isDirectory()) {
        out.set(rel, "dir");
        walk(full);
      } else out.set(rel, `${(lstatSync(full).mode & 0o7777).toString(8)} ${readFileSync(full).toString("base64")}`);
    }
  };
  walk(root);
  return out;
}

async function run(c: ShellUnderTest, s: Scenario): Promise<void> {
  const root = materialise(s);
  const before = treeState(root);
  const shell = new CountingShell(await c.open());
  const report = await applyPatch(shell, {
    root,
    patch: s.patch,
    matching: s.options.matching,
    ...(s.options.encoding !== undefined ? { encoding: s.options.encoding } : {}),
    expectedSha256: s.options.expectedSha256,
    requireShaForDelete: s.options.requireShaForDelete,
    createParents: s.options.createParents,
    limits: s.options.limits,
  });
  expect(report.elevated).toBe(c.expectElevated);
  if (s.expected.kind === "failure") {
    if (report.ok) throw new Error(`expected failures ${JSON.stringify(s.expected.errors)}, but the patch applied`);
    expect(projectFailures(report.errors!, s.expected.errors)).toEqual(s.expected.errors);
    // A refused patch changes nothing and never reaches the commit exec.
    expect(treeState(root)).toEqual(before);
    expect(shell.count).toBeLessThanOrEqual(1);
    return;
  }
  if (!report.ok) throw new Error(`applyPatch failed: ${JSON.stringify(report.errors, null, 2)}`);
  expect(shell.count).toBe(2); // one snapshot exec, one commit exec
  const warned = new Set([...report.warnings, ...report.files.flatMap((f) => f.warnings)].map((w) => w.code));
  expect(s.expectedWarnings.filter((code) => !warned.has(code))).toEqual([]);
  assertNoLeftovers(root);
  const after = readTree(root);
  for (const link of Object.keys(s.setup.symlinks ?? {})) after.delete(link);
  const difference = describeTreeDifference(s.expected.tree, after);
  if (difference !== "") throw new Error(difference);
  for (const [path, mode] of Object.entries(s.setup.modes ?? {})) {
    if (s.expected.tree.has(path)) expect((statSync(join(root, path)).mode & 0o7777).toString(8)).toBe(mode);
  }
}

const names = (process.env.SAP_SCENARIO_SHELLS ?? "busybox,ssh-sudo").split(",").map((s) => s.trim());
for (const c of only(shellsUnderTest({ suite: "contract: scenarios" }), names)) {
  describe(`scenarios through the real engine (${c.name})`, () => {
    for (const s of scenarios) test(s.name, () => run(c, s));
  });
}
