/**
 * How every timed ratio target of the bench is judged (issue 31): from at
 * least {@link MIN_RUNS} runs, each giving one ratio (a paired round, an
 * interleaved round of whole processes), by their **median**, with the
 * spread (min / median / max) printed beside it — and a required target
 * passes only with a margin: its median must be at least
 * {@link REQUIRED_MARGIN} (10 %) inside the bound, so a ≤ 2.0× target needs a
 * median ≤ 1.8×. A target met by a few percent is a coin toss on a shared
 * machine; this makes the verdict say so.
 *
 * Goals (SPEC §11.1: whole process ≤ 1.0× GNU patch; the fleet's same-kex
 * row) are judged by the same median, without the margin: they do not fail
 * the run, and a margin on a goal would only hide how close it is.
 *
 * Count and byte targets (one exec each, bytes on the wire, peak RSS) are
 * not ratios of times: they are exact and judged as they are.
 *
 * @module
 */

/** A required target's median must lie this fraction inside its bound. */
export const REQUIRED_MARGIN = 0.1;

/** Fewer runs than this and a target is not judged (it fails, saying why). */
export const MIN_RUNS = 5;

/** The spread of one target's per-run ratios. */
export interface Spread {
  min: number;
  median: number;
  max: number;
  runs: number;
}

/** Median of a list (the mean of the two middle values for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Min, median and max of the finite values, or null when there are none.
 *
 * @example
 * ```ts
 * spreadOf([1.2, 1.0, 1.4]); // { min: 1, median: 1.2, max: 1.4, runs: 3 }
 * ```
 */
export function spreadOf(values: readonly number[]): Spread | null {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return null;
  return { min: Math.min(...finite), median: median(finite), max: Math.max(...finite), runs: finite.length };
}

/** One judged ratio target. */
export interface RatioJudgement {
  spread: Spread | null;
  /** The bound as written (≤ max, or < max when strict). */
  max: number;
  strict: boolean;
  kind: "required" | "goal";
  /** The bound the median is held to: max × (1 − margin) for a required target, max for a goal. */
  limit: number;
  /** 1 − median ÷ max: how far inside the bound the median lies (negative: outside). */
  margin: number | null;
  pass: boolean;
  /** e.g. `median 0.71× (min 0.66×, max 0.79×, 11 runs), margin 11 % of ≤ 0.8× (needs ≤ 0.72×)`. */
  text: string;
}

/**
 * Judge per-run ratios against a bound: by their median, from at least
 * {@link MIN_RUNS} runs, a required target with {@link REQUIRED_MARGIN}.
 *
 * @example
 * ```ts
 * judgeRatio([1.7, 1.75, 1.8, 1.85, 1.9], 2.0).pass; // false: median 1.8× is not inside 1.8× (10 % of ≤ 2.0×)
 * judgeRatio([1.5, 1.6, 1.7, 1.6, 1.6], 2.0).pass; // true
 * ```
 */
export function judgeRatio(ratios: readonly number[], max: number, options: { strict?: boolean; kind?: "required" | "goal" } = {}): RatioJudgement {
  const strict = options.strict === true;
  const kind = options.kind ?? "required";
  const limit = kind === "required" ? max * (1 - REQUIRED_MARGIN) : max;
  const spread = spreadOf(ratios);
  const bound = `${strict ? "<" : "≤"} ${fmt(max)}`;
  if (spread === null) return { spread, max, strict, kind, limit, margin: null, pass: false, text: `not measured (${bound})` };
  const margin = 1 - spread.median / max;
  const enough = spread.runs >= MIN_RUNS;
  // 1e-9: 2.0 × 0.9 is 1.8000000000000003 in floating point; a 1.8 median holds.
  const inside = strict ? spread.median < limit : spread.median <= limit + 1e-9;
  const pass = enough && inside;
  const needs = kind === "required" ? ` (needs ${strict ? "<" : "≤"} ${fmt(limit)})` : "";
  const text =
    `median ${fmt(spread.median)} (min ${fmt(spread.min)}, max ${fmt(spread.max)}, ${spread.runs} runs), ` +
    `margin ${Math.round(margin * 100)} % of ${bound}${needs}` +
    (enough ? "" : ` — only ${spread.runs} runs, ${MIN_RUNS} needed`);
  return { spread, max, strict, kind, limit, margin, pass, text };
}

function fmt(ratio: number): string {
  return `${ratio.toFixed(2)}×`;
}

/**
 * Per-round ratios of two contenders measured in the same interleaved
 * rounds: `numerator[i] / denominator[i]`, rounds where either is missing or
 * not positive dropped.
 *
 * @example
 * ```ts
 * roundRatios([2, 4], [1, 2]); // [2, 2]
 * ```
 */
export function roundRatios(numerator: readonly number[], denominator: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.min(numerator.length, denominator.length); i++) {
    const d = denominator[i]!;
    if (d > 0 && Number.isFinite(numerator[i]!)) out.push(numerator[i]! / d);
  }
  return out;
}
