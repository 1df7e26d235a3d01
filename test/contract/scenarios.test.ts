/**
 * The scenario suite through the real remote engine: each scenario's input
 * is materialised as real files (modes and symlinks from setup.json), then
 * parsePatch → readSnapshots (real) → planPatch → commitRemote (real), and
 * the root is compared byte for byte with `expected/` (or the failures with
 * `expected_failure.json`). This checks that real snapshots plan exactly
 * like the model snapshots of the pure-core suite and that the commit writes
 * exactly the planned bytes. Runtime budget (see
 * test/support/shells_under_test.ts): runs under the BusyBox userland (the
 * tool set most unlike GNU) and over SSH with sudo (the whole remote stack)
 * unless SAP_SCENARIO_SHELLS lists others (e.g.
 * "dash,bash,busybox,ssh-root,ssh-sudo"); test/contract/apply.test.ts
 * covers applyPatch's orchestration on every shell.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { commitRemote } from "../../lib/commit.ts";
import { parsePatch } from "../../lib/parse.ts";
import { planPatch } from "../../lib/plan.ts";
import { readSnapshots } from "../../lib/snapshot.ts";
import { describeTreeDifference, loadScenarios, patchPaths, projectFailures, readTree } from "../support/scenarios.ts";
import type { Scenario } from "../support/scenarios.ts";
import { assertNoLeftovers, cleanupTemps, noLeftoversAfterEach, tempDir } from "../support/local_trees.ts";
import { only, shellsUnderTest } from "../support/shells_under_test.ts";
import type { ShellUnderTest } from "../support/shells_under_test.ts";

afterAll(cleanupTemps);
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

async function run(c: ShellUnderTest, s: Scenario): Promise<void> {
  const parsed = parsePatch(s.patch, { limits: s.options.limits });
  if (!parsed.ok) return; // parse failures never reach the engine (covered by the pure-core suite)
  const root = materialise(s);
  const shell = await c.open();
  const snapshots = await readSnapshots(shell, root, patchPaths(parsed.patch), { maxFileBytes: s.options.limits?.maxFileBytes });
  const result = planPatch(parsed.patch, snapshots, s.options);
  if (!result.ok) {
    if (s.expected.kind !== "failure") throw new Error(`plan failed: ${JSON.stringify(result.errors, null, 2)}`);
    expect(projectFailures(result.errors, s.expected.errors)).toEqual(s.expected.errors);
    return;
  }
  if (s.expected.kind !== "tree") throw new Error(`expected failures ${JSON.stringify(s.expected.errors)}, but the plan succeeded`);
  const report = await commitRemote(shell, root, result.plan);
  if (!report.ok) throw new Error(`commit failed: ${JSON.stringify(report.errors, null, 2)}`);
  expect(report.elevated).toBe(c.expectElevated);
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
