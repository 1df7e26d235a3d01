/**
 * The benchmark verdict: medians and ratios measured in one run, each ratio
 * with its SPEC §11 target (or marked informational), as Markdown tables.
 * Ratios rather than absolute times so a noisy or slow machine still gives
 * a stable verdict.
 *
 * @module
 */
import { adversarialCases } from "./adversarial.bench.ts";
import type { PairedResult } from "./paired.ts";
import type { SuiteSizes } from "./suite.ts";

/** One ratio of two medians, with an optional upper bound. */
export interface RatioSpec {
  label: string;
  numerator: string;
  denominator: string;
  /** Upper bound (inclusive unless `strict`); absent: informational. */
  max?: number;
  strict?: boolean;
}

/** A ratio with its value and verdict. */
export interface RatioRow extends RatioSpec {
  /** From mitata's medians. */
  value: number | null;
  /** From the interleaved paired measurement (targets only); decides the verdict when present. */
  paired: number | null;
  verdict: "PASS" | "FAIL" | "info" | "missing";
}

/**
 * The ratios of the suite: targets of SPEC §11 and informational ones.
 *
 * @example
 * ```ts
 * ratioSpecs(FULL_SIZES).filter((r) => r.max !== undefined).length;
 * ```
 */
export function ratioSpecs(sizes: SuiteSizes): RatioSpec[] {
  const { small, half, large, adversarial, adversarialDouble } = sizes;
  const specs: RatioSpec[] = [];
  const floorOf = (lines: number) => `floor code-${lines}`;
  specs.push({
    label: `planPatch 100 chunks, ${large} lines ÷ floor`,
    numerator: `plan code-${large}-c100`,
    denominator: floorOf(large),
    max: 2.0,
  });
  for (const [lines, names] of [[small, ["c1", "c10", "c100"]], [large, ["c1", "c10", "tier3", "fail"]]] as const) {
    for (const name of names) {
      specs.push({
        label: `planPatch ${name}, ${lines} lines ÷ floor`,
        numerator: `plan code-${lines}-${name}`,
        denominator: floorOf(lines),
      });
    }
  }
  for (const lines of [adversarial, adversarialDouble]) {
    for (const c of adversarialCases(lines)) {
      specs.push({
        label: `adversarial ${c.patch} ÷ floor of its file`,
        numerator: `plan ${c.patch}`,
        denominator: `floor ${c.file}`,
        ...(lines === adversarial ? { max: 3.0 } : {}),
      });
    }
  }
  const small2 = adversarialCases(adversarial);
  const large2 = adversarialCases(adversarialDouble);
  for (let i = 0; i < small2.length; i++) {
    specs.push({
      label: `doubling ${small2[i]!.patch} → ${adversarialDouble} lines`,
      numerator: `plan ${large2[i]!.patch}`,
      denominator: `plan ${small2[i]!.patch}`,
      max: 2.2,
    });
  }
  specs.push({
    label: `doubling planPatch 100 chunks ${half} → ${large} lines`,
    numerator: `plan code-${large}-c100`,
    denominator: `plan code-${half}-c100`,
    max: 2.2,
  });
  specs.push({
    label: `doubling floor ${half} → ${large} lines (reference)`,
    numerator: floorOf(large),
    denominator: floorOf(half),
  });
  for (const lines of [large, small]) {
    for (const peer of ["naive", "diff"]) {
      specs.push({
        label: `ours ÷ ${peer === "naive" ? "naive first-match scanner" : "diff.applyPatch"}, 100 chunks, ${lines} lines`,
        numerator: `ours code-${lines}-c100`,
        denominator: `${peer} code-${lines}-c100`,
        ...(lines === large ? { max: 1.0, strict: true } : {}),
      });
    }
  }
  specs.push({
    label: `ours ÷ naive scanner, adversarial near miss matching once, ${adversarial} lines`,
    numerator: `ours braces-odd-${adversarial}-nearmiss`,
    denominator: `naive braces-odd-${adversarial}-nearmiss`,
  });
  return specs;
}

/**
 * Evaluate ratio specs against mitata's medians (any unit, same for all) and,
 * for targets, the interleaved paired ratios keyed by label, which decide
 * the verdict when present.
 */
export function evaluateRatios(
  specs: readonly RatioSpec[],
  medians: ReadonlyMap<string, number>,
  paired: ReadonlyMap<string, PairedResult> = new Map(),
): RatioRow[] {
  return specs.map((spec) => {
    const n = medians.get(spec.numerator);
    const d = medians.get(spec.denominator);
    const value = n === undefined || d === undefined || d <= 0 ? null : n / d;
    const pairedRatio = paired.get(spec.label)?.ratio ?? null;
    const decisive = pairedRatio ?? value;
    if (decisive === null) return { ...spec, value, paired: pairedRatio, verdict: "missing" };
    if (spec.max === undefined) return { ...spec, value, paired: pairedRatio, verdict: "info" };
    const pass = spec.strict ? decisive < spec.max : decisive <= spec.max;
    return { ...spec, value, paired: pairedRatio, verdict: pass ? "PASS" : "FAIL" };
  });
}

function formatMs(ns: number): string {
  const ms = ns / 1e6;
  return ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2);
}

/** Markdown table of medians in milliseconds, in the order measured. */
export function formatMedians(medians: ReadonlyMap<string, number>): string {
  const lines = ["| benchmark | median (ms) |", "|---|---:|"];
  for (const [name, ns] of medians) lines.push(`| ${name} | ${formatMs(ns)} |`);
  return lines.join("\n");
}

/** Markdown table of ratios with targets and verdicts. */
export function formatRatios(rows: readonly RatioRow[]): string {
  const lines = [
    "| ratio (one run) | mitata p50s | interleaved | target | verdict |",
    "|---|---:|---:|---:|---|",
  ];
  const times = (v: number | null) => (v === null ? "—" : `${v.toFixed(2)}×`);
  for (const r of rows) {
    const target = r.max === undefined ? "" : `${r.strict ? "<" : "≤"} ${r.max.toFixed(1)}×`;
    lines.push(`| ${r.label} | ${times(r.value)} | ${r.paired === null ? "" : times(r.paired)} | ${target} | ${r.verdict} |`);
  }
  return lines.join("\n");
}
