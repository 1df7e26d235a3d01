/**
 * Campaign 2 — remote process death: SIGKILL the commit program's process
 * group at seeded random moments, then judge the trial by the invariants of
 * verdict.ts (reconcile over a fresh exec must settle and clean up, and
 * leave nothing locked: a further commit of the same paths must get its
 * locks at once and leave nothing behind).
 *
 * @module
 */
import { rmSync } from "node:fs";
import { commitRemote } from "../../lib/remote/commit.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import type { RemoteShell } from "../../lib/remote/shell.ts";
import { tempDir } from "../support/local_trees.ts";
import { fourOpFixture, writeBefore } from "./fixture.ts";
import type { TxFixture } from "./fixture.ts";
import { KillingShell, phaseOf } from "./killing_shell.ts";
import { seeded } from "./prng.ts";
import { checkCommit, checkNothingLocked, checkReconcile, resultLabel, strayDirectories } from "./verdict.ts";

/** Parameters of {@linkcode runKillCampaign}. */
export interface KillCampaignOptions {
  trials: number;
  seed: number;
  /** The shell the commit runs through (wrapped by the killer) and reconcile runs on. */
  shell: RemoteShell;
  /** A fresh empty root; default: a temp dir. */
  makeRoot?: () => string;
  /** Write the fixture into a root (e.g. handing it to the SSH login user); default writeBefore. */
  prepare?: (root: string, fx: TxFixture) => void;
  fixture?: TxFixture;
  /** Called after each trial (progress). */
  onTrial?: (i: number) => void;
}

/** What a kill campaign measured. */
export interface KillFigures {
  trials: number;
  /** Trials where every invariant held. */
  survived: number;
  violations: string[];
  /** Where the program was when it died, by phase. */
  phases: Record<string, number>;
  /** The commit's result, by label (ok / error code). */
  results: Record<string, number>;
  /** How reconcile settled the batch. */
  settled: Record<string, number>;
  /** Trials that left a directory of neither the old nor the new tree (not a violation; reported). */
  strayDirectoryTrials: number;
  /** Median clean commit time the delays were spread over, ms. */
  cleanMs: number;
}

function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

/**
 * Run `trials` kills spread uniformly over [0, 1.1 × the median clean
 * commit time] (the program's own clock: the killer starts with it).
 *
 * @example
 * ```ts
 * const figures = await runKillCampaign({ trials: 40, seed: 1, shell: new LocalShell() });
 * figures.survived === figures.trials;
 * ```
 */
export async function runKillCampaign(options: KillCampaignOptions): Promise<KillFigures> {
  const fx = options.fixture ?? fourOpFixture();
  const makeRoot = options.makeRoot ?? (() => tempDir("sap-kill-"));
  const prepare = options.prepare ?? ((root: string, f: TxFixture) => writeBefore(root, f));
  const killer = new KillingShell(options.shell);
  const rng = seeded(options.seed);
  const figures: KillFigures = {
    trials: options.trials,
    survived: 0,
    violations: [],
    phases: {},
    results: {},
    settled: {},
    strayDirectoryTrials: 0,
    cleanMs: 0,
  };

  // The clean duration the kill moments are spread over.
  const clean: number[] = [];
  for (let i = 0; i < 5; i++) {
    const root = makeRoot();
    prepare(root, fx);
    killer.killAfterMs = null;
    const report = await commitRemote(killer, root, fx.plan);
    if (!report.ok) throw new Error(`clean commit failed: ${report.errors?.[0]?.message}`);
    clean.push(killer.lastDurationMs);
    rmSync(root, { recursive: true, force: true });
  }
  clean.sort((a, b) => a - b);
  figures.cleanMs = clean[2]!;

  for (let i = 0; i < options.trials; i++) {
    const root = makeRoot();
    prepare(root, fx);
    const op = `kill_${options.seed}_${i}`;
    const delay = rng() * 1.1 * figures.cleanMs;
    killer.killAfterMs = delay;
    const where = `trial ${i} (seed ${options.seed}, kill at ${delay.toFixed(2)} ms)`;
    const problems: string[] = [];
    const report = await commitRemote(killer, root, fx.plan, { operationId: op });
    bump(figures.phases, phaseOf(killer.lastStdout));
    bump(figures.results, resultLabel(report));
    problems.push(...checkCommit(root, fx, report));
    const rec = await reconcile(options.shell, root, reconcileTicket(fx.plan, op), { lockWaitMs: 5000 });
    const { violations, settled } = checkReconcile(root, fx, rec);
    problems.push(...violations);
    bump(figures.settled, settled);
    if (settled !== "mixed" && strayDirectories(root, fx, settled).length > 0) figures.strayDirectoryTrials++;
    // "nothing locked after reconcile": a fresh commit of the same paths
    // (another operation, the default stale-lock age) gets its locks at
    // once — it applies the plan, or finds the paths changed — and leaves
    // nothing behind either
    const probe = await commitRemote(options.shell, root, fx.plan, { operationId: `${op}_probe`, lockWaitMs: 1000 });
    problems.push(...checkNothingLocked(root, probe));
    if (problems.length === 0) figures.survived++;
    else figures.violations.push(...problems.map((p) => `${where}: ${p}`));
    rmSync(root, { recursive: true, force: true });
    options.onTrial?.(i);
  }
  return figures;
}
