/**
 * Interleaved paired measurement of two functions, for the target ratios.
 *
 * mitata measures one benchmark after another, so on a shared machine a
 * burst of background load can land on the numerator and miss the
 * denominator. Here the two run alternately (A B B A per round, which also
 * cancels a steady drift within the round) and the ratio is taken of the
 * two medians: both sides see the same machine. mitata's own output is still
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

/** Medians of both sides (milliseconds) and their ratio `b / a`. */
export interface PairedResult {
  medianA: number;
  medianB: number;
  ratio: number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
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
  /** Rounds at least (default 6: 12 samples per side) and at most (default 60). */
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
  const rounds = Math.min(maxRounds, Math.max(minRounds, Math.floor(budgetMs / (2 * Math.max(warm, 0.001)))));
  const timesA: number[] = [];
  const timesB: number[] = [];
  for (let round = 0; round < rounds; round++) {
    timesA.push(time(a, gc));
    timesB.push(time(b, gc));
    timesB.push(time(b, gc));
    timesA.push(time(a, gc));
  }
  if (sink === Symbol.for("never")) console.log(sink);
  const medianA = median(timesA);
  const medianB = median(timesB);
  return { medianA, medianB, ratio: medianB / medianA };
}
