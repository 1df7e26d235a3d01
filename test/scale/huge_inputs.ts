/**
 * Huge inputs through the whole library (issue 28 item 2): million-line
 * Adds, Updates inserting or deleting a million lines, a hundred thousand
 * chunks, a hundred thousand files — past the argument count at which an
 * engine refuses a call (`f(...list)`: about 125,000 under V8, so Node and
 * Deno; about 640,000 under Bun's JSC) and past any recursion depth.
 *
 * A property test: every shape is generated from a seed (random line
 * contents, random insertion points), and each result is checked against
 * what the shape says it must be — computed here, not by the library:
 *
 * - no call throws; every result is JSON-serialisable;
 * - a shape that applies: each planned file's bytes are the expected bytes,
 *   its `newSha256` their SHA-256, its diff shows exactly the inserted and
 *   deleted lines; through `applyPatch` + `LocalShell` the files on disk
 *   are the expected bytes;
 * - a shape that must be refused (the default limits, or chunks that do not
 *   match) gets the typed failure it names (`limit_exceeded` with the
 *   limit's name, `context_mismatch`), with a message, nothing written.
 *
 * Runtime-neutral (only `node:` modules and mod.ts, no `bun:test`), so the
 * same checks run under Bun, Node and Deno:
 *
 *   node test/scale/huge_inputs.ts [--lines=N] [--chunks=K] [--files=F] [--seed=S]
 *
 * Each check prints one JSON line `{"name", "ok", "ms", "detail"?}`; the
 * last line is `{"done": true, "passed", "failed", "runtime", "maxRssKiB"}`.
 * Exit code 1 on any failure. test/scale/huge_inputs.test.ts runs it under
 * Node (V8's limit) and Bun in `npm test`; `npm run hardening` runs the
 * heavy sizes (1M lines, 150k chunks and files).
 *
 * @module
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyPatch, DEFAULT_LIMITS, LocalShell, parsePatch, planPatch } from "../../mod.ts";
import type { FileSnapshot, Limits, PatchFailure, Snapshots } from "../../mod.ts";
import { seeded } from "../hardening/prng.ts";
import type { Rng } from "../hardening/prng.ts";
import { peakRssBytes } from "../support/peak_rss.ts";

/** Sizes of one run. */
export interface HugeSizes {
  /** Lines of the big Adds, inserts and deletes. */
  lines: number;
  /** Chunks of the many-chunk Updates. */
  chunks: number;
  /** File sections of the many-file patch (planned only: no commit of that many files). */
  files: number;
  seed: number;
}

/** What a shape must come to. */
type Expectation =
  | { kind: "applies"; files: Record<string, string | null>; inserted: number; deleted: number }
  | { kind: "refused"; code: string; limit?: keyof Limits };

/** One generated input. */
interface Shape {
  patch: string;
  /** The files before (path → content). */
  before: Record<string, string>;
  limits: Partial<Limits>;
  expect: Expectation;
  /** Also run through applyPatch and a real LocalShell (default true). */
  commit?: boolean;
}

/** One check's outcome line. */
export interface HugeCheckLine {
  name: string;
  ok: boolean;
  ms: number;
  /** The process's peak RSS so far (KiB), after the check. */
  maxRssKiB: number;
  detail?: string;
}

const encoder = new TextEncoder();
const sha = (bytes: Uint8Array | string): string => createHash("sha256").update(bytes).digest("hex");
const RAISED: Partial<Limits> = { maxPatchBytes: 1 << 30, maxFileBytes: 1 << 30, maxChunksPerFile: 10_000_000, maxFiles: 10_000_000 };
const WORDS = ["value", "return", "const", "if (x)", "{", "}", "éàü", "日本", "\t", "  ", "call(a, b);", "// note", "x += 1;", "😀"];

/** A random line (never empty, so it is never a blank-only context line). */
function randomLine(rng: Rng, tag: string): string {
  let out = tag;
  const words = rng.int(0, 4);
  for (let w = 0; w < words; w++) out += " " + rng.pick(WORDS);
  return out;
}

function randomLines(rng: Rng, n: number, tag: string): string[] {
  const out: string[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = randomLine(rng, `${tag}${i}`);
  return out;
}

/** Patch text from section lines (built with a loop: the lines may be millions). */
function patchOf(sections: string[][]): string {
  const parts: string[] = ["*** Begin Patch"];
  for (const s of sections) for (const line of s) parts.push(line);
  parts.push("*** End Patch");
  return parts.join("\n");
}

const prefixed = (prefix: string, lines: readonly string[]): string[] => {
  const out: string[] = new Array(lines.length);
  for (let i = 0; i < lines.length; i++) out[i] = prefix + lines[i];
  return out;
};

const text = (lines: readonly string[]): string => (lines.length === 0 ? "" : lines.join("\n") + "\n");

/** The first limit a patch of this size hits, if any (parsePatch checks the bytes first). */
function firstLimit(patch: string, count: number, limit: "maxChunksPerFile" | "maxFiles"): Expectation | null {
  if (encoder.encode(patch).length > DEFAULT_LIMITS.maxPatchBytes) return { kind: "refused", code: "limit_exceeded", limit: "maxPatchBytes" };
  return count > DEFAULT_LIMITS[limit] ? { kind: "refused", code: "limit_exceeded", limit } : null;
}

/** k chunks, each replacing one line of three (unique lines: no ambiguity). */
function manyChunks(rng: Rng, k: number): { rows: string[]; section: string[]; after: string[] } {
  const rows = randomLines(rng, 3 * k, "r");
  const section: string[] = ["*** Update File: chunks.txt"];
  const after = rows.slice();
  for (let c = 0; c < k; c++) {
    const changed = `changed ${c} ${rng.pick(WORDS)}`;
    section.push("@@", ` ${rows[3 * c]}`, `-${rows[3 * c + 1]}`, `+${changed}`);
    after[3 * c + 1] = changed;
  }
  return { rows, section, after };
}

/** f Add sections of one line each. */
function manyFiles(rng: Rng, f: number): { sections: string[][]; files: Record<string, string | null> } {
  const sections: string[][] = [];
  const files: Record<string, string | null> = {};
  for (let i = 0; i < f; i++) {
    const line = randomLine(rng, `f${i}`);
    sections.push([`*** Add File: many/${i}.txt`, `+${line}`]);
    files[`many/${i}.txt`] = `${line}\n`;
  }
  return { sections, files };
}

/**
 * The generated shapes, deterministic for a seed. Each is built only when
 * it runs (and dropped after), so a run holds one shape's million lines at
 * a time.
 */
export function hugeShapes(sizes: HugeSizes): { name: string; build: () => Shape }[] {
  const n = sizes.lines;
  const k = sizes.chunks;
  const rngFor = (i: number): Rng => seeded(sizes.seed * 1000 + i);
  return [
    {
      name: `Add of ${n} lines`,
      build: () => {
        const added = randomLines(rngFor(1), n, "add ");
        return {
          patch: patchOf([["*** Add File: big/added.txt", ...prefixed("+", added)]]),
          before: {},
          limits: RAISED,
          expect: { kind: "applies", files: { "big/added.txt": text(added) }, inserted: n, deleted: 0 },
        };
      },
    },
    {
      name: `Update inserting ${n} lines at a random place`,
      build: () => {
        const rng = rngFor(2);
        const small = randomLines(rng, 50, "row ");
        const at = rng.int(1, small.length - 2);
        const inserted = randomLines(rng, n, "new ");
        return {
          patch: patchOf([["*** Update File: insert.txt", "@@", ` ${small[at - 1]}`, ...prefixed("+", inserted), ` ${small[at]}`]]),
          before: { "insert.txt": text(small) },
          limits: RAISED,
          expect: { kind: "applies", files: { "insert.txt": text([...small.slice(0, at), ...inserted, ...small.slice(at)]) }, inserted: n, deleted: 0 },
        };
      },
    },
    {
      name: `Update deleting ${n} lines`,
      build: () => {
        const long = randomLines(rngFor(3), n + 2, "old ");
        return {
          patch: patchOf([["*** Update File: delete.txt", "@@", ` ${long[0]}`, ...prefixed("-", long.slice(1, n + 1)), ` ${long[n + 1]}`]]),
          before: { "delete.txt": text(long) },
          limits: RAISED,
          expect: { kind: "applies", files: { "delete.txt": text([long[0]!, long[n + 1]!]) }, inserted: 0, deleted: n },
        };
      },
    },
    {
      name: `Update replacing all ${n + 2} lines, Delete and Move of the same size`,
      build: () => {
        const rng = rngFor(4);
        const long = randomLines(rng, n + 2, "old ");
        const replacement = randomLines(rng, n, "rep ");
        return {
          patch: patchOf([
            ["*** Update File: replace.txt", "@@", ...prefixed("-", long), ...prefixed("+", replacement)],
            ["*** Delete File: gone.txt"],
            ["*** Update File: moved.txt", "*** Move to: moved/there.txt", "@@", ` ${long[0]}`, `-${long[1]}`, "+moved"],
          ]),
          before: { "replace.txt": text(long), "gone.txt": text(long), "moved.txt": text(long) },
          limits: RAISED,
          expect: {
            kind: "applies",
            files: { "replace.txt": text(replacement), "gone.txt": null, "moved.txt": null, "moved/there.txt": text([long[0]!, "moved", ...long.slice(2)]) },
            inserted: n + 1,
            deleted: 2 * (n + 2) + 1,
          },
        };
      },
    },
    {
      name: `Update of ${k} chunks`,
      build: () => {
        const { rows, section, after } = manyChunks(rngFor(5), k);
        return { patch: patchOf([section]), before: { "chunks.txt": text(rows) }, limits: RAISED, expect: { kind: "applies", files: { "chunks.txt": text(after) }, inserted: k, deleted: k } };
      },
    },
    {
      // None of the chunks matches: a typed failure, nothing written.
      name: `Update of ${k} chunks that do not match`,
      build: () => {
        const { rows, section } = manyChunks(rngFor(5), k);
        return { patch: patchOf([section]), before: { "chunks.txt": text(rows.map((r) => `${r} (edited meanwhile)`)) }, limits: RAISED, expect: { kind: "refused", code: "context_mismatch" } };
      },
    },
    {
      name: `${sizes.files} Add sections (planned only)`,
      build: () => {
        const { sections, files } = manyFiles(rngFor(6), sizes.files);
        return { patch: patchOf(sections), before: {}, limits: RAISED, expect: { kind: "applies", files, inserted: sizes.files, deleted: 0 }, commit: false };
      },
    },
    {
      name: `Add of ${n} code-like lines under the default limits`,
      build: () => {
        const lines = randomLines(rngFor(1), n, "add ").map((l, i) => `${l} ${"x".repeat(40 + (i % 7))}`);
        const patch = patchOf([["*** Add File: refused.txt", ...prefixed("+", lines)]]);
        const expect: Expectation = encoder.encode(patch).length > DEFAULT_LIMITS.maxPatchBytes
          ? { kind: "refused", code: "limit_exceeded", limit: "maxPatchBytes" }
          : { kind: "applies", files: { "refused.txt": text(lines) }, inserted: n, deleted: 0 };
        return { patch, before: {}, limits: {}, expect };
      },
    },
    {
      name: `Update of ${k} chunks under the default limits`,
      build: () => {
        const { rows, section, after } = manyChunks(rngFor(5), k);
        const patch = patchOf([section]);
        return {
          patch,
          before: { "chunks.txt": text(rows) },
          limits: {},
          expect: firstLimit(patch, k, "maxChunksPerFile") ?? { kind: "applies", files: { "chunks.txt": text(after) }, inserted: k, deleted: k },
        };
      },
    },
    {
      name: `${sizes.files} Add sections under the default limits (planned only)`,
      build: () => {
        const { sections, files } = manyFiles(rngFor(6), sizes.files);
        const patch = patchOf(sections);
        return { patch, before: {}, limits: {}, expect: firstLimit(patch, sizes.files, "maxFiles") ?? { kind: "applies", files, inserted: sizes.files, deleted: 0 }, commit: false };
      },
    },
  ];
}

/** Snapshots of the shape's paths as readSnapshots would give them. */
function snapshotsOf(shape: Shape, paths: readonly string[]): Snapshots {
  const out = new Map<string, FileSnapshot>();
  const dirs = new Set<string>([""]);
  for (const p of Object.keys(shape.before)) for (let i = p.indexOf("/"); i >= 0; i = p.indexOf("/", i + 1)) dirs.add(p.slice(0, i));
  for (const path of paths) {
    const content = shape.before[path];
    let snap: FileSnapshot;
    if (content !== undefined) {
      const bytes = encoder.encode(content);
      snap = { path, kind: "file", bytes, sha256: sha(bytes), size: bytes.length, mode: 0o644, nlink: 1 };
    } else {
      const slash = path.lastIndexOf("/");
      snap = { path, kind: "missing", parentExists: dirs.has(slash < 0 ? "" : path.slice(0, slash)) };
    }
    out.set(path, snap);
  }
  return out;
}

/** `+` and `-` lines of a unified diff (headers left out), counted without splitting it. */
function diffCounts(diff: string): { plus: number; minus: number } {
  let plus = 0;
  let minus = 0;
  for (let i = 0; i < diff.length; i = diff.indexOf("\n", i) + 1 || diff.length) {
    const c = diff.charCodeAt(i);
    if (c === 0x2b && !diff.startsWith("+++ ", i)) plus++;
    else if (c === 0x2d && !diff.startsWith("--- ", i)) minus++;
  }
  return { plus, minus };
}

function checkRefusal(errors: readonly PatchFailure[], expect: Extract<Expectation, { kind: "refused" }>, where: string): void {
  if (errors.length === 0) throw new Error(`${where}: refused without errors`);
  const hit = errors.find((e) => e.code === expect.code);
  if (hit === undefined) throw new Error(`${where}: expected ${expect.code}, got ${errors.slice(0, 3).map((e) => `${e.code}: ${e.message.slice(0, 200)}`).join(" | ")}`);
  if (expect.limit !== undefined && hit.limit?.name !== expect.limit) throw new Error(`${where}: expected the ${expect.limit} limit, got ${JSON.stringify(hit.limit)}`);
  for (const e of errors) if (typeof e.message !== "string" || e.message.trim() === "") throw new Error(`${where}: ${e.code} without a message`);
  JSON.stringify(errors);
}

/** parsePatch + planPatch: the pure core, checked against the shape. */
export function checkPlanned(shape: Shape): void {
  const parsed = parsePatch(shape.patch, { limits: shape.limits });
  JSON.stringify(parsed.ok ? parsed.warnings : parsed.errors);
  if (!parsed.ok) {
    if (shape.expect.kind !== "refused") throw new Error(`parsePatch refused it: ${parsed.errors[0]?.code}: ${parsed.errors[0]?.message.slice(0, 300)}`);
    return checkRefusal(parsed.errors, shape.expect, "parsePatch");
  }
  const paths = parsed.patch.ops.flatMap((op) => (op.type === "update" && op.moveTo !== undefined ? [op.path, op.moveTo] : [op.path]));
  const planned = planPatch(parsed.patch, snapshotsOf(shape, paths), { limits: shape.limits });
  if (!planned.ok) {
    if (shape.expect.kind !== "refused") throw new Error(`planPatch refused it: ${planned.errors[0]?.code}: ${planned.errors[0]?.message.slice(0, 300)}`);
    return checkRefusal(planned.errors, shape.expect, "planPatch");
  }
  if (shape.expect.kind !== "applies") throw new Error(`planned, but ${shape.expect.code} was expected`);
  let plus = 0;
  let minus = 0;
  const seen = new Set<string>();
  for (const file of planned.plan.files) {
    const counts = diffCounts(file.diff);
    plus += counts.plus;
    minus += counts.minus;
    const target = file.op === "move" ? file.moveTo! : file.path;
    seen.add(target);
    if (file.op === "delete") {
      if (shape.expect.files[file.path] !== null) throw new Error(`${file.path}: deleted, not expected to be`);
      continue;
    }
    if (file.op === "move") seen.add(file.path);
    const want = shape.expect.files[target];
    if (typeof want !== "string") throw new Error(`${target}: planned, not expected`);
    const bytes = file.newBytes!;
    if (bytes.length !== encoder.encode(want).length || new TextDecoder().decode(bytes) !== want) throw new Error(`${target}: the planned bytes are not the expected content`);
    if (file.newSha256 !== sha(bytes)) throw new Error(`${target}: newSha256 is not the SHA-256 of the planned bytes`);
  }
  for (const path of Object.keys(shape.expect.files)) if (!seen.has(path) && shape.expect.files[path] !== null) throw new Error(`${path}: expected, not planned`);
  if (plus !== shape.expect.inserted || minus !== shape.expect.deleted) {
    throw new Error(`the diffs show +${plus} -${minus}, expected +${shape.expect.inserted} -${shape.expect.deleted}`);
  }
}

/** applyPatch through a real LocalShell on a fresh directory; the disk is checked after. */
export async function checkCommitted(shape: Shape): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "sap-huge-"));
  try {
    for (const [path, content] of Object.entries(shape.before)) writeFileSync(join(root, path), content);
    const report = await applyPatch(new LocalShell({ cwd: root }), { root, patch: shape.patch, limits: shape.limits });
    JSON.stringify(report);
    if (shape.expect.kind === "refused") {
      if (report.ok) throw new Error(`applied, but ${shape.expect.code} was expected`);
      checkRefusal(report.errors ?? [], shape.expect, "applyPatch");
      for (const [path, content] of Object.entries(shape.before)) if (readFileSync(join(root, path), "utf8") !== content) throw new Error(`${path} changed by a refused patch`);
      return;
    }
    if (!report.ok) throw new Error(`applyPatch refused it: ${report.errors?.[0]?.code}: ${report.errors?.[0]?.message.slice(0, 300)}`);
    for (const [path, want] of Object.entries(shape.expect.files)) {
      let have: string | null = null;
      try {
        have = readFileSync(join(root, path), "utf8");
      } catch {
        have = null;
      }
      if (have !== want) throw new Error(`${path} on disk is ${have === null ? "missing" : `${have.length} chars`}, expected ${want === null ? "missing" : `${want.length} chars`}${have !== null && want !== null ? " (different content)" : ""}`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * Run every shape (planned, and committed unless the shape says not), one
 * JSON line per check on `write`.
 *
 * @example
 * ```ts
 * const { failed } = await runHugeInputs({ lines: 200_000, chunks: 130_000, files: 130_000, seed: 28 }, console.log);
 * ```
 */
export async function runHugeInputs(sizes: HugeSizes, write: (line: string) => void): Promise<{ passed: number; failed: number }> {
  let passed = 0;
  let failed = 0;
  const check = async (name: string, body: () => void | Promise<void>): Promise<void> => {
    const started = performance.now();
    const line: HugeCheckLine = { name, ok: true, ms: 0, maxRssKiB: 0 };
    try {
      await body();
      passed++;
    } catch (error) {
      line.ok = false;
      line.detail = (error instanceof Error ? (error.stack ?? error.message) : String(error)).slice(0, 3000);
      failed++;
    }
    line.ms = Math.round(performance.now() - started);
    line.maxRssKiB = Math.round(peakRssBytes() / 1024);
    write(JSON.stringify(line));
  };
  for (const { name, build } of hugeShapes(sizes)) {
    let shape: Shape | null = build();
    await check(`plan: ${name}`, () => checkPlanned(shape!));
    if (shape.commit !== false) await check(`apply: ${name}`, () => checkCommitted(shape!));
    shape = null; // the next shape's millions of lines need the room
    (globalThis as { Bun?: { gc(force: boolean): void } }).Bun?.gc(true);
  }
  return { passed, failed };
}

/**
 * The largest number of arguments this engine accepts in one call
 * (`push(...list)`), found by bisection: the sizes of a run must be past it,
 * or the run proves nothing about spreads.
 *
 * @example
 * ```ts
 * argumentLimit() > 100_000; // true under Node, Deno and Bun
 * ```
 */
export function argumentLimit(): number {
  let lo = 1000;
  let hi = 8_000_000;
  const filled = new Array<number>(hi).fill(0);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    try {
      const list = filled.slice(0, mid);
      ([] as number[]).push(...list);
      lo = mid;
    } catch {
      hi = mid - 1;
    }
  }
  return lo;
}

const isMain = (() => {
  const entry = process.argv[1] ?? "";
  return entry.endsWith("huge_inputs.ts");
})();

if (isMain) {
  const arg = (name: string, fallback: number): number => {
    const given = process.argv.find((a) => a.startsWith(`--${name}=`));
    return given === undefined ? fallback : Number(given.slice(name.length + 3));
  };
  const runtime = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined" ? "deno" : typeof process.versions.bun === "string" ? "bun" : "node";
  const sizes: HugeSizes = { lines: arg("lines", 200_000), chunks: arg("chunks", 130_000), files: arg("files", 130_000), seed: arg("seed", 28) };
  const { passed, failed } = await runHugeInputs(sizes, (line) => void process.stdout.write(line + "\n"));
  const maxRssKiB = Math.round(peakRssBytes() / 1024);
  process.stdout.write(JSON.stringify({ done: true, passed, failed, runtime, maxRssKiB, sizes, argumentLimit: argumentLimit() }) + "\n");
  if (failed > 0) process.exitCode = 1;
}
