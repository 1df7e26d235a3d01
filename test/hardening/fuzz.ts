/**
 * Campaign 5 — fuzzing the pure core: generated inputs through parsePatch
 * and, when they parse, planPatch on hostile snapshots. Every result must
 * be typed: never a throw; `ok` → a plan whose every `newSha256` is the
 * SHA-256 of its `newBytes`; not ok → at least one error, each with a known
 * code and a non-empty message; everything JSON-serialisable. The slowest
 * input's time and size are recorded, and a scaling probe doubles the
 * adversarial inputs to show the time stays near-linear.
 *
 * @module
 */
import { parsePatch } from "../../lib/patch/parse.ts";
import { planPatch } from "../../lib/plan/plan.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import { signatureSamples } from "../../lib/match/tier_keyer.ts";
import type { FailureCode, PatchFailure, PlanOptions, PlanResult, Snapshots } from "../../lib/types.ts";
import { hostileOptions, hostilePatch, hostileSnapshots, loadFuzzCorpus } from "./fuzz_inputs.ts";
import { seeded } from "./prng.ts";

/** Every code of the documented FailureCode union (lib/types.ts). */
const KNOWN_CODES: ReadonlySet<string> = new Set<FailureCode>([
  "invalid_patch", "invalid_path", "path_outside_root", "symlink_rejected", "not_found", "already_exists", "not_regular_file",
  "invalid_utf8", "duplicate_path", "anchor_not_found", "context_mismatch", "ambiguous_hunk", "out_of_order_hunk", "anchor_after_change",
  "overlapping_hunks", "precondition_failed", "conflict", "locked", "permission_denied", "unsafe_directory", "limit_exceeded", "remote_unsupported",
  "remote_error", "outcome_unknown", "partial_apply", "timeout", "cancelled", "invalid_argument", "connect_failed",
  "auth_failed", "host_key_unknown", "host_key_mismatch",
]);

/** Parameters of {@linkcode runFuzz}. */
export interface FuzzOptions {
  inputs: number;
  seed: number;
  /** One input in this many is big (megabytes); default 500. */
  bigEvery?: number;
}

/** The slowest input seen. */
export interface SlowestInput {
  kind: string;
  ms: number;
  /** Patch plus file bytes. */
  bytes: number;
  /** Milliseconds per MiB of input. */
  msPerMiB: number;
}

/** One of the slowest inputs, kept to be timed again. */
interface Candidate {
  kind: string;
  text: string;
  bytes: number;
  ms: number;
  plan: { snapshots: Snapshots; options: PlanOptions } | null;
}

/** What a fuzz run measured. */
export interface FuzzFigures {
  inputs: number;
  /** Inputs that threw or returned a malformed result (each is a violation). */
  crashes: number;
  violations: string[];
  parsedOk: number;
  plannedOk: number;
  planFailed: number;
  /** Failure codes seen, with counts. */
  codes: Record<string, number>;
  /**
   * The slowest input: the ten slowest of the run timed again (best of
   * three), so that a garbage-collection pause during a tiny input does not
   * pass for the cost of that input.
   */
  slowest: SlowestInput;
  /** The slowest single measurement of the run, pauses included. */
  slowestRawMs: number;
  /** The slowest of the inputs of 1 MiB or more (re-timed likewise): the near-linearity figure. */
  slowestBig: SlowestInput | null;
  totalMs: number;
}

function checkErrors(errors: PatchFailure[], where: string, figures: FuzzFigures): string[] {
  const out: string[] = [];
  if (!Array.isArray(errors) || errors.length === 0) return [`${where}: not ok without errors`];
  for (const e of errors) {
    if (!KNOWN_CODES.has(e.code)) out.push(`${where}: unknown code ${JSON.stringify(e.code)}`);
    if (typeof e.message !== "string" || e.message.trim() === "") out.push(`${where}: empty message for ${e.code}`);
    if (typeof e.retryable !== "boolean") out.push(`${where}: retryable missing for ${e.code}`);
    figures.codes[e.code] = (figures.codes[e.code] ?? 0) + 1;
  }
  try {
    JSON.stringify(errors);
  } catch (error) {
    out.push(`${where}: errors are not JSON-serialisable (${error})`);
  }
  return out;
}

function checkPlan(result: PlanResult, snapshots: Snapshots, where: string, figures: FuzzFigures): string[] {
  if (typeof result !== "object" || result === null || typeof result.ok !== "boolean") return [`${where}: malformed plan result`];
  if (!result.ok) {
    figures.planFailed++;
    return checkErrors(result.errors, where, figures);
  }
  figures.plannedOk++;
  const out: string[] = [];
  for (const f of result.plan.files) {
    if (f.op === "delete") {
      if (f.newBytes !== undefined) out.push(`${where}: a delete with new bytes`);
    } else if (!(f.newBytes instanceof Uint8Array) || f.newSha256 !== sha256Hex(f.newBytes)) {
      out.push(`${where}: ${f.op} ${f.path}: newSha256 is not sha256(newBytes)`);
    }
    if (f.expected.state === "sha256" && f.expected.sha256 !== snapshots.get(f.path)?.sha256) {
      out.push(`${where}: ${f.path}: expected sha is not the snapshot's`);
    }
    if (typeof f.diff !== "string") out.push(`${where}: ${f.path}: no diff`);
  }
  return out;
}

/**
 * Run `inputs` generated inputs (seeded) through the pure core.
 *
 * @example
 * ```ts
 * const f = runFuzz({ inputs: 100_000, seed: 9 });
 * f.crashes; // 0
 * ```
 */
export function runFuzz(options: FuzzOptions): FuzzFigures {
  const rng = seeded(options.seed);
  const corpus = loadFuzzCorpus();
  const bigEvery = options.bigEvery ?? 500;
  const figures: FuzzFigures = {
    inputs: options.inputs,
    crashes: 0,
    violations: [],
    parsedOk: 0,
    plannedOk: 0,
    planFailed: 0,
    codes: {},
    slowest: { kind: "", ms: 0, bytes: 0, msPerMiB: 0 },
    slowestRawMs: 0,
    slowestBig: null,
    totalMs: 0,
  };
  const startAll = performance.now();
  const slow: Candidate[] = [];
  const slowBig: Candidate[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < options.inputs; i++) {
    const big = i % bigEvery === bigEvery - 1;
    const { kind, text, tree } = hostilePatch(rng, corpus, big);
    const where = `input ${i} (seed ${options.seed}, ${kind})`;
    const problems: string[] = [];
    let bytes = encoder.encode(text).length;
    let planInput: Candidate["plan"] = null;
    const started = performance.now();
    try {
      const parsed = parsePatch(text);
      if (typeof parsed !== "object" || parsed === null || typeof parsed.ok !== "boolean" || !Array.isArray(parsed.warnings)) {
        problems.push(`${where}: malformed parse result`);
      } else if (!parsed.ok) {
        problems.push(...checkErrors(parsed.errors, `${where} parse`, figures));
      } else {
        figures.parsedOk++;
        const snapshots = hostileSnapshots(rng, corpus, parsed.patch, big, tree);
        for (const s of snapshots.values()) bytes += s.bytes?.length ?? 0;
        const planOptions = hostileOptions(rng, snapshots);
        planInput = { snapshots, options: planOptions };
        const planned = planPatch(parsed.patch, snapshots, planOptions);
        problems.push(...checkPlan(planned, snapshots, `${where} plan`, figures));
      }
    } catch (error) {
      problems.push(`${where}: threw ${error instanceof Error ? error.stack?.split("\n").slice(0, 3).join(" ") : String(error)}`);
    }
    const ms = performance.now() - started;
    figures.slowestRawMs = Math.max(figures.slowestRawMs, ms);
    keep(slow, { kind, text, bytes, ms, plan: planInput });
    if (bytes >= 1024 * 1024) keep(slowBig, { kind, text, bytes, ms, plan: planInput });
    if (problems.length > 0) {
      figures.crashes++;
      if (figures.violations.length < 50) figures.violations.push(...problems.slice(0, 3));
    }
  }
  figures.totalMs = performance.now() - startAll;
  figures.slowest = retime(slow) ?? figures.slowest;
  figures.slowestBig = retime(slowBig);
  return figures;
}

/** Keep the ten slowest candidates. */
function keep(list: Candidate[], c: Candidate): void {
  if (list.length < 10) list.push(c);
  else {
    const min = list.reduce((m, x, i) => (x.ms < list[m]!.ms ? i : m), 0);
    if (c.ms > list[min]!.ms) list[min] = c;
  }
}

/** The slowest of the candidates when each is timed again, best of three. */
function retime(list: Candidate[]): SlowestInput | null {
  let worst: SlowestInput | null = null;
  for (const c of list) {
    const ms = timeBest(() => {
      const parsed = parsePatch(c.text);
      if (parsed.ok && c.plan) planPatch(parsed.patch, c.plan.snapshots, c.plan.options);
    }, 3);
    if (worst === null || ms > worst.ms) worst = { kind: c.kind, ms, bytes: c.bytes, msPerMiB: c.bytes > 0 ? (ms * 1024 * 1024) / c.bytes : 0 };
  }
  return worst;
}

/** One scaling measurement: an adversarial input at size n and 2n. */
export interface ScalingProbe {
  name: string;
  bytes: number;
  ms: number;
  doubledMs: number;
  /** doubledMs / ms: about 2 for linear, 4 for quadratic. */
  ratio: number;
}

function timeBest(run: () => void, repeats: number): number {
  let best = Infinity;
  for (let i = 0; i < repeats; i++) {
    const t = performance.now();
    run();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

/**
 * Near-linearity probe: parse + plan adversarial shapes at a size and at
 * twice that size (best of five runs each). Wall-clock ratios on a busy
 * machine are noisy; the counted-work tests (test/unit/match/locate.test.ts,
 * signature_collisions.test.ts) are the guard, this is the figure.
 *
 * @example
 * ```ts
 * scalingProbes(1).every((p) => p.ratio < 3);
 * ```
 */
export function scalingProbes(scale: number): ScalingProbe[] {
  const enc = new TextEncoder();
  const shapes: { name: string; build: (n: number) => { patch: string; file: Uint8Array } }[] = [
    {
      name: "lines of `}` with a 100-line chunk (SPEC §5.5)",
      build: (n) => ({
        patch: ["*** Begin Patch", "*** Update File: f.txt", "@@", ...Array(50).fill(" }"), "-}", "+{", ...Array(49).fill(" }"), "*** End Patch"].join("\n"),
        file: enc.encode("}\n".repeat(n)),
      }),
    },
    {
      name: "deep @@ nesting",
      build: (n) => ({
        patch: ["*** Begin Patch", "*** Update File: f.txt", ...Array.from({ length: n / 10 }, (_, i) => `@@ a${i}`), " x", "-y", "+z", "*** End Patch"].join("\n"),
        file: enc.encode(Array.from({ length: n / 10 }, (_, i) => `a${i}`).join("\n") + "\nx\ny\n"),
      }),
    },
    {
      // Lines that differ only where a cheap sampled signature does not
      // look (every 1st, middle, 3/4 and last character equal): any
      // per-signature chain or bucket degenerates to a scan of them all.
      name: "anchors alike in every sampled character",
      build: (n) => {
        const sampled = new Set(signatureSamples(12));
        const key = (i: number): string => {
          const digits = String(i).padStart(8, "0");
          let out = "";
          let d = 0;
          for (let p = 0; p < 12; p++) out += sampled.has(p) ? "K" : digits[d++]!;
          return out;
        };
        const count = n / 10;
        return {
          patch: ["*** Begin Patch", "*** Update File: f.txt", ...Array.from({ length: count }, (_, i) => `@@ ${key(i)}`), " x", "-y", "+z", "*** End Patch"].join("\n"),
          file: enc.encode(Array.from({ length: count }, (_, i) => key(i)).join("\n") + "\nx\ny\n"),
        };
      },
    },
    {
      // Issue 16: the similarity search once scanned the file per anchor.
      name: "@@ anchors found nowhere, one per 1000 lines",
      build: (n) => {
        const lines = Array.from({ length: n }, (_, i) => (i % 10 === 0 ? `function handler${i}(request) {` : `  step(${i});`));
        const body: string[] = [];
        for (let k = 0; k < n / 1000; k++) body.push(`@@ function hnadler${k * 1000}(request) {`, ` ${lines[k * 1000 + 1]}`, "+  audit();");
        return { patch: ["*** Begin Patch", "*** Update File: f.txt", ...body, "*** End Patch"].join("\n"), file: enc.encode(lines.join("\n") + "\n") };
      },
    },
    {
      // Issue 16: a KMP scan of the rest of the file per chunk of frequent lines.
      name: "low entropy, one chunk of frequent lines per 1000 lines",
      build: (n) => {
        const alphabet = ["a();", "b();", "c();", "d();"];
        let x = 7;
        const lines = Array.from({ length: n }, () => alphabet[(x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 30]!);
        const body: string[] = [];
        for (let k = 0; k < n / 1000; k++) {
          const at = k * 1000 + 500;
          body.push("@@", ...lines.slice(at, at + 12).map((l) => ` ${l}`), "-" + lines[at + 12], "+changed();");
        }
        return { patch: ["*** Begin Patch", "*** Update File: f.txt", ...body, "*** End Patch"].join("\n"), file: enc.encode(lines.join("\n") + "\n") };
      },
    },
    {
      // Issue 16: a diagnosis (and kilobytes of message) per failing chunk.
      name: "failing chunks, one per 1000 lines",
      build: (n) => {
        const lines = Array.from({ length: n }, (_, i) => `  value${i} = compute(${i});`);
        const body: string[] = [];
        for (let k = 0; k < n / 1000; k++) body.push("@@", ` ${lines[k * 1000]} // stale`, `-${lines[k * 1000 + 1]}`, "+  x = 1;");
        return { patch: ["*** Begin Patch", "*** Update File: f.txt", ...body, "*** End Patch"].join("\n"), file: enc.encode(lines.join("\n") + "\n") };
      },
    },
    {
      name: "one huge line",
      build: (n) => {
        const line = "q".repeat(n * 10);
        return { patch: ["*** Begin Patch", "*** Update File: f.txt", "@@", `-${line}`, `+${line}!`, "*** End Patch"].join("\n"), file: enc.encode(line + "\n") };
      },
    },
  ];
  const base = Math.round(100_000 * scale);
  return shapes.map(({ name, build }) => {
    const run = (n: number): { ms: number; bytes: number } => {
      const { patch, file } = build(n);
      const parsed = parsePatch(patch);
      if (!parsed.ok) throw new Error(`${name}: ${parsed.errors[0]?.message}`);
      const snaps = new Map([["f.txt", { path: "f.txt", kind: "file" as const, bytes: file, sha256: sha256Hex(file), size: file.length, mode: 0o644, nlink: 1 }]]);
      const ms = timeBest(() => {
        const p = parsePatch(patch);
        if (p.ok) planPatch(p.patch, snaps);
      }, 5);
      return { ms, bytes: enc.encode(patch).length + file.length };
    };
    const small = run(base);
    const doubled = run(base * 2);
    return { name, bytes: small.bytes, ms: small.ms, doubledMs: doubled.ms, ratio: doubled.ms / Math.max(small.ms, 0.001) };
  });
}
