/**
 * The runtime matrix's checks (SPEC §1.1), written to run unmodified under
 * Node ≥ 22.18, Deno 2 and Bun: only `node:` modules, the library through
 * mod.ts, and the runtime-neutral scenario loader — no `bun:test`. It is
 * started by test/runtimes/runtimes.test.ts once per runtime:
 *
 *   node test/runtimes/suite.ts [SSHD_JSON]
 *   deno run -A test/runtimes/suite.ts [SSHD_JSON]
 *
 * `SSHD_JSON` (see {@linkcode SshTarget}) points at a throwaway sshd the Bun
 * test harness started. Each check prints one line of JSON
 * `{"group", "name", "ok", "detail"?}` to stdout; the last line is
 * `{"done": true, "passed", "failed", "runtime"}`. Exit code 1 on any failure.
 *
 * Groups: `scenarios-plan` (every scenario through parsePatch + planPatch,
 * the plan applied in memory), `scenarios-local` (every scenario through
 * applyPatch and a real LocalShell), `ssh` (applyPatch over the sshd, and a
 * refused patch's typed failure), `local-user` (the passwd entry, whatever
 * `$USER`/`$HOME` say: the Bun side starts this with `$USER` unset and a
 * fake `$HOME`; the detail records what this runtime's os.userInfo() says),
 * `wire` (compressed reads decompressed by this runtime's node:zlib — zstd
 * and gzip —, the snapshot cache in memory and on disk, over LocalShell
 * with `compress: true` and over the sshd with the default).
 *
 * @module
 */
import { isDeepStrictEqual } from "node:util";
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { userInfo } from "node:os";
import { tmpdir } from "node:os";
import { createHash } from "node:crypto";
import { applyFleet, applyPatch, connectSsh, LocalShell, parsePatch, planPatch, readSnapshots, reconcileFleet, SnapshotCache } from "../../mod.ts";
import { localUser } from "../../lib/ssh/local_user.ts";
import type { PatchFailure, Warning } from "../../mod.ts";
import {
  applyPlanInMemory,
  buildSnapshots,
  describeTreeDifference,
  loadScenarios,
  patchPaths,
  projectFailures,
  readTree,
} from "../support/scenarios.ts";
import type { Scenario } from "../support/scenarios.ts";
import { materialise, treeState } from "./scenario_files.ts";

/** The sshd a check may log in to (written by the Bun side). */
export interface SshTarget {
  host: string;
  port: number;
  user: string;
  identityFile: string;
  knownHostsFile: string;
  /** A directory on the host the user may write (here: the same machine). */
  root: string;
}

/** One check's outcome line. */
export interface CheckLine {
  group: string;
  name: string;
  ok: boolean;
  detail?: string;
}

const runtime = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined"
  ? "deno"
  : typeof process.versions.bun === "string"
  ? "bun"
  : "node";
let passed = 0;
let failed = 0;

async function check(group: string, name: string, body: () => void | Promise<void>): Promise<void> {
  let line: CheckLine;
  try {
    await body();
    line = { group, name, ok: true };
    passed++;
  } catch (error) {
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    line = { group, name, ok: false, detail: detail.slice(0, 4000) };
    failed++;
  }
  process.stdout.write(JSON.stringify(line) + "\n");
}

function expectEqual(actual: unknown, expected: unknown, what: string): void {
  if (!isDeepStrictEqual(actual, expected)) {
    throw new Error(`${what}:\n  expected ${JSON.stringify(expected)}\n  actual   ${JSON.stringify(actual)}`);
  }
}

function missingWarnings(scenario: Scenario, warnings: readonly Warning[]): string[] {
  const present = new Set(warnings.map((w) => w.code));
  return scenario.expectedWarnings.filter((code) => !present.has(code));
}

function checkFailures(scenario: Scenario, stage: string, errors: readonly PatchFailure[]): void {
  if (scenario.expected.kind !== "failure") {
    throw new Error(`${stage} failed, but the scenario expects success: ${JSON.stringify(errors).slice(0, 2000)}`);
  }
  expectEqual(projectFailures(errors, scenario.expected.errors), scenario.expected.errors, "failures");
}

/** The same steps as test/scenarios.test.ts, without bun:test. */
function planScenario(scenario: Scenario): void {
  const parsed = parsePatch(scenario.patch, { limits: scenario.options.limits });
  const warnings: Warning[] = [...parsed.warnings];
  if (!parsed.ok) {
    checkFailures(scenario, "parsePatch", parsed.errors);
  } else {
    const snapshots = buildSnapshots(scenario.input, patchPaths(parsed.patch), scenario.setup);
    const result = planPatch(parsed.patch, snapshots, scenario.options);
    if (!result.ok) {
      warnings.push(...result.warnings);
      checkFailures(scenario, "planPatch", result.errors);
    } else {
      warnings.push(...result.plan.warnings, ...result.plan.files.flatMap((f) => f.warnings));
      if (scenario.expected.kind !== "tree") throw new Error("the plan succeeded, but the scenario expects failures");
      const difference = describeTreeDifference(scenario.expected.tree, applyPlanInMemory(scenario.input, result.plan));
      if (difference !== "") throw new Error(difference);
    }
  }
  const missing = missingWarnings(scenario, warnings);
  if (missing.length > 0) throw new Error(`missing warnings ${missing.join(", ")}`);
}

/** The same steps as test/contract/scenarios.test.ts, through LocalShell. */
async function applyScenarioLocally(scenario: Scenario, shell: LocalShell): Promise<void> {
  const root = materialise(scenario);
  try {
    const before = treeState(root);
    const report = await applyPatch(shell, {
      root,
      patch: scenario.patch,
      matching: scenario.options.matching,
      ...(scenario.options.encoding !== undefined ? { encoding: scenario.options.encoding } : {}),
      expectedSha256: scenario.options.expectedSha256,
      requireShaForDelete: scenario.options.requireShaForDelete,
      createParents: scenario.options.createParents,
      limits: scenario.options.limits,
    });
    if (scenario.expected.kind === "failure") {
      if (report.ok) throw new Error("the patch applied, but the scenario expects failures");
      expectEqual(projectFailures(report.errors!, scenario.expected.errors), scenario.expected.errors, "failures");
      expectEqual(treeState(root), before, "a refused patch changed the tree");
      return;
    }
    if (!report.ok) throw new Error(`applyPatch failed: ${JSON.stringify(report.errors).slice(0, 2000)}`);
    const warned = [...report.warnings, ...report.files.flatMap((f) => f.warnings)];
    const missing = missingWarnings(scenario, warned);
    if (missing.length > 0) throw new Error(`missing warnings ${missing.join(", ")}`);
    const after = readTree(root);
    for (const link of Object.keys(scenario.setup.symlinks ?? {})) after.delete(link);
    const difference = describeTreeDifference(scenario.expected.tree, after);
    if (difference !== "") throw new Error(difference);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function sshChecks(target: SshTarget): Promise<void> {
  const file = join(target.root, "app.conf");
  writeFileSync(file, "listen 80\nworkers 2\n");
  const options = {
    host: target.host,
    port: target.port,
    username: target.user,
    identityFile: target.identityFile,
    knownHostsFile: target.knownHostsFile,
    sshConfigFile: false as const,
    agent: false as const,
  };
  await check("ssh", "applyPatch over the test sshd changes the file", async () => {
    const shell = await connectSsh(options);
    try {
      const report = await applyPatch(shell, {
        root: target.root,
        patch: "*** Begin Patch\n*** Update File: app.conf\n@@\n listen 80\n-workers 2\n+workers 8\n*** End Patch\n",
      });
      if (!report.ok) throw new Error(JSON.stringify(report.errors));
      expectEqual(report.files.map((f) => f.op), ["update"], "ops");
    } finally {
      await shell.close();
    }
    expectEqual(readFileSync(file, "utf8"), "listen 80\nworkers 8\n", "file after the patch");
  });
  const wireShell = await connectSsh(options);
  try {
    await wireChecks(wireShell, target.root, undefined, "ssh");
  } finally {
    await wireShell.close();
  }
  await check("fleet", "applyFleet over the sshd: two roots, a connection each, both applied; reconcileFleet has nothing to settle", async () => {
    const roots = ["f1", "f2"].map((name) => join(target.root, name));
    // Owned like the root itself: by the login user when this runs as root.
    const { uid, gid } = statSync(target.root);
    for (const root of roots) {
      mkdirSync(root, { recursive: true });
      writeFileSync(join(root, "app.conf"), "listen 80\nworkers 2\n");
      for (const p of [root, join(root, "app.conf")]) chownSync(p, uid, gid);
    }
    const targets = roots.map((root, i) => ({ name: `f${i + 1}`, root, connect: () => connectSsh(options) }));
    const report = await applyFleet(targets, { patch: FLEET_PATCH }, { concurrency: 2 });
    expectEqual(report.hosts.map((h) => h.state), ["applied", "applied"], "states");
    for (const root of roots) expectEqual(readFileSync(join(root, "app.conf"), "utf8"), "listen 80\nworkers 8\n", "file after the fleet");
    expectEqual((await reconcileFleet(report, targets)).hosts, [], "nothing to reconcile");
  });
  await check("ssh", "a stale patch over SSH is a typed context_mismatch and changes nothing", async () => {
    const shell = await connectSsh(options);
    try {
      const report = await applyPatch(shell, {
        root: target.root,
        patch: "*** Begin Patch\n*** Update File: app.conf\n@@\n listen 80\n-workers 2\n+workers 4\n*** End Patch\n",
      });
      expectEqual(report.ok, false, "ok");
      expectEqual(report.errors?.map((e) => e.code), ["context_mismatch"], "codes");
    } finally {
      await shell.close();
    }
    expectEqual(readFileSync(file, "utf8"), "listen 80\nworkers 8\n", "file after the refused patch");
  });
}

const FLEET_PATCH = "*** Begin Patch\n*** Update File: app.conf\n@@\n listen 80\n-workers 2\n+workers 8\n*** End Patch\n";

/** Code-like text that compresses well, ~170 KiB. */
function wireText(tag: string): string {
  return Array.from({ length: 4000 }, (_, i) => `  let v${i} = f(${i}, "${tag}"); // ${i}`).join("\n") + "\n";
}
const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

async function wireChecks(shell: LocalShell | Awaited<ReturnType<typeof connectSsh>>, root: string, compress: true | undefined, where: string): Promise<void> {
  const text = wireText(where);
  writeFileSync(join(root, "wire.ts"), text);
  await check("wire", `${where}: a large read travels compressed and arrives exact`, async () => {
    const snaps = await readSnapshots(shell, root, ["wire.ts"], { compress });
    expectEqual(snaps.get("wire.ts")?.transfer, "compressed", "transfer");
    expectEqual(snaps.get("wire.ts")?.sha256, sha256(text), "sha256");
  });
  await check("wire", `${where}: a cached content is proved by hash and patched; the disk cache is verified on load`, async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "sap-runtime-cache-")), "c");
    // flushed before the directory is removed: the commit's rememberCommitted
    // writes to the disk cache in the background (an rm racing it fails
    // with ENOTEMPTY)
    let fresh: SnapshotCache | undefined;
    try {
      const cache = new SnapshotCache({ dir });
      await readSnapshots(shell, root, ["wire.ts"], { cache, compress });
      await cache.flush();
      fresh = new SnapshotCache({ dir });
      const report = await applyPatch(shell, {
        root,
        cache: fresh,
        compress,
        patch: `*** Begin Patch\n*** Update File: wire.ts\n@@\n-  let v7 = f(7, "${where}"); // 7\n+  let v7 = 7;\n*** End Patch\n`,
      });
      if (!report.ok) throw new Error(JSON.stringify(report.errors));
      expectEqual(report.files[0]?.snapshot, "cached", "snapshot");
      expectEqual(readFileSync(join(root, "wire.ts"), "utf8"), text.replace(`  let v7 = f(7, "${where}"); // 7`, "  let v7 = 7;"), "file after the patch");
    } finally {
      await fresh?.flush().catch(() => {});
      rmSync(join(dir, ".."), { recursive: true, force: true });
    }
  });
}

await check("local-user", "localUser() is the passwd entry of the uid, not $USER / $HOME", () => {
  const name = execFileSync("id", ["-un"], { encoding: "utf8" }).trim();
  const home = execFileSync("getent", ["passwd", String(process.getuid!())], { encoding: "utf8" }).split(":")[5]!;
  const me = localUser();
  let info: unknown;
  try {
    info = userInfo();
  } catch (error) {
    info = String(error);
  }
  expectEqual({ name: me.name, home: me.home }, { name, home }, `localUser() (os.userInfo() here says ${JSON.stringify(info)}, HOME=${process.env.HOME}, USER=${process.env.USER})`);
});

const scenarios = loadScenarios();
await check("setup", `loaded ${scenarios.length} scenarios`, () => {
  if (scenarios.length < 40) throw new Error(`only ${scenarios.length} scenarios found`);
});
for (const scenario of scenarios) await check("scenarios-plan", scenario.name, () => planScenario(scenario));
const local = new LocalShell();
for (const scenario of scenarios) await check("scenarios-local", scenario.name, () => applyScenarioLocally(scenario, local));
const wireRoot = mkdtempSync(join(tmpdir(), "sap-runtime-wire-"));
try {
  await wireChecks(local, wireRoot, true, "local");
} finally {
  rmSync(wireRoot, { recursive: true, force: true });
}
await check("fleet", "applyFleet over three LocalShell roots: a drifted one stops the rollout, a re-run skips the hosts done", async () => {
  const base = mkdtempSync(join(tmpdir(), "sap-runtime-fleet-"));
  try {
    const targets = ["a", "b", "c"].map((name) => {
      const root = join(base, name);
      mkdirSync(root);
      writeFileSync(join(root, "app.conf"), name === "b" ? "listen 80\nworkers 3\n" : "listen 80\nworkers 2\n");
      return { name, root, shell: local };
    });
    const first = await applyFleet(targets, { patch: FLEET_PATCH }, { concurrency: 1 });
    expectEqual(first.hosts.map((h) => h.state), ["applied", "failed", "not_started"], "states");
    writeFileSync(join(base, "b", "app.conf"), "listen 80\nworkers 2\n");
    const again = await applyFleet(targets, { patch: FLEET_PATCH });
    expectEqual(again.hosts.map((h) => h.state), ["skipped", "applied", "applied"], "states of the re-run");
    expectEqual(JSON.parse(JSON.stringify(again)), again, "plain JSON");
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
const sshdFile = process.argv[2];
if (sshdFile !== undefined) await sshChecks(JSON.parse(readFileSync(sshdFile, "utf8")) as SshTarget);
process.stdout.write(JSON.stringify({ done: true, passed, failed, runtime, version: process.version }) + "\n");
process.exitCode = failed === 0 ? 0 : 1;
