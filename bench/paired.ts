/**
 * Interleaved paired measurement of two functions, for the target ratios.
 *
 * mitata measures one benchmark after another, so on a shared machine a
 * burst of background load can land on the numerator and miss the
 * denominator. Here the two run alternately (A B B A per round, which also
 * cancels a steady drift within the round); each round gives one ratio
 * (its two B samples over its two A samples) and a target is judged by the
 * median of at least five of them, with their spread (bench/target.ts):
 * both sides of each ratio saw the same machine. mitata's own output is still
 * printed; these ratios only decide the verdict of the targets.
 *
 * By default each sample starts from a collected heap (`Bun.gc(true)`, untimed, after
 * dropping the previous result): otherwise the full collection of the
 * previous sample's garbage — 40 MB of new file content for the large
 * plans — lands on whichever side happens to run next, which measured as
 * swings of ±15% in the doubling ratios on a 2-core machine. Collections
 * caused by a function's own allocations during its run are still timed.
 *
 * @module
 */

import { MIN_RUNS, median } from "./target.ts";

/**
 * Medians of both sides (milliseconds), and the ratio `b / a` of each round
 * (its two b samples over its two a samples): the targets are judged by the
 * median of these (bench/target.ts), `ratio`.
 */
export interface PairedResult {
  medianA: number;
  medianB: number;
  /** Median of `rounds`. */
  ratio: number;
  /** One ratio per A B B A round. */
  rounds: number[];
}

let sink: unknown;

function time(fn: () => unknown, gc: boolean): number {
  sink = undefined;
  if (gc) globalThis.Bun?.gc(true);
  const started = performance.now();
  sink = fn();
  return performance.now() - started;
}

/** How long to measure one pair. */
export interface PairedBudget {
  /** Time to spend on the pair after warm-up, in ms (default 3000). */
  budgetMs?: number;
  /**
   * Rounds at least (default 6: 12 samples per side; never fewer than
   * MIN_RUNS, the least a target is judged from) and at most (default 60).
   */
  minRounds?: number;
  maxRounds?: number;
  /**
   * Collect the heap before each sample (default true). Without it, which
   * side pays for the previous sample's garbage is luck; the bench reports
   * doubling ratios both ways.
   */
  gc?: boolean;
}

/**
 * Run `a` and `b` alternately (after two warm-up calls each) for as many
 * rounds as fit the budget, and return their medians and
 * `median(b) / median(a)`.
 *
 * @example
 * ```ts
 * const { ratio } = measurePaired(() => floor(bytes), () => planPatch(patch, snapshots));
 * ```
 */
export function measurePaired(a: () => unknown, b: () => unknown, budget: PairedBudget = {}): PairedResult {
  const { budgetMs = 3000, minRounds = 6, maxRounds = 60, gc = true } = budget;
  time(a, gc);
  time(b, gc);
  const warm = time(a, gc) + time(b, gc);
  const rounds = Math.min(Math.max(maxRounds, MIN_RUNS), Math.max(minRounds, MIN_RUNS, Math.floor(budgetMs / (2 * Math.max(warm, 0.001)))));
  const timesA: number[] = [];
  const timesB: number[] = [];
  const perRound: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const a1 = time(a, gc);
    const b1 = time(b, gc);
    const b2 = time(b, gc);
    const a2 = time(a, gc);
    timesA.push(a1, a2);
    timesB.push(b1, b2);
    perRound.push((b1 + b2) / Math.max(a1 + a2, 1e-6));
  }
  if (sink === Symbol.for("never")) console.log(sink);
  return { medianA: median(timesA), medianB: median(timesB), ratio: median(perRound), rounds: perRound };
}
