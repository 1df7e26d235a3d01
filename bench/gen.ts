/**
 * Seeded generator of benchmark patches (Codex format) and of the
 * adversarial inputs of SPEC §5.5.
 *
 * Every "unique" chunk is proved unique by counting its old side in the
 * file with {@linkcode LineIndex}; the generator also computes each patch's
 * expected output on its own, so the benchmark can check ours and the peers
 * against an oracle that shares no code with them.
 *
 * @module
 */
import { generateCodeLines, Prng } from "./gen_text.ts";
import { LineIndex } from "./line_index.ts";

export { generateCodeLines, linesToBytes, Prng } from "./gen_text.ts";

/** One body line of a generated chunk: Codex marker and text. */
export interface BodyLine {
  marker: " " | "-" | "+";
  text: string;
}

/** A generated chunk and where its old side starts in the file (0-based). */
export interface ChunkSpec {
  start: number;
  body: BodyLine[];
  /** The text after `@@` (a bare `@@` when absent). */
  anchor?: string;
}

/** The old side of a chunk: its context and deleted lines, in order. */
export function oldSide(chunk: ChunkSpec): string[] {
  return chunk.body.filter((l) => l.marker !== "+").map((l) => l.text);
}

/** The new side of a chunk: its context and inserted lines, in order. */
export function newSide(chunk: ChunkSpec): string[] {
  return chunk.body.filter((l) => l.marker !== "-").map((l) => l.text);
}

/**
 * Format chunks as one Codex `*** Update File` patch with a bare `@@` before
 * every chunk.
 *
 * @example
 * ```ts
 * formatCodexPatch("a.txt", [{ start: 0, body: [{ marker: "-", text: "x" }, { marker: "+", text: "y" }] }]);
 * // "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch\n"
 * ```
 */
export function formatCodexPatch(path: string, chunks: readonly ChunkSpec[]): string {
  return formatCodexPatchFiles([{ path, chunks }]);
}

/**
 * Format one Codex patch updating several files, in the order given.
 *
 * @example
 * ```ts
 * formatCodexPatchFiles([{ path: "a", chunks: [] }, { path: "b", chunks: [] }]);
 * ```
 */
export function formatCodexPatchFiles(files: readonly { path: string; chunks: readonly ChunkSpec[] }[]): string {
  const out = ["*** Begin Patch"];
  for (const file of files) {
    out.push(`*** Update File: ${file.path}`);
    for (const chunk of file.chunks) {
      out.push(chunk.anchor === undefined ? "@@" : `@@ ${chunk.anchor}`);
      for (const line of chunk.body) out.push(line.marker + line.text);
    }
  }
  out.push("*** End Patch");
  return out.join("\n") + "\n";
}

/**
 * Apply chunks at their known positions (the oracle): the file's own lines
 * for context, the patch's for insertions. Assumes `\n` endings and a final
 * newline, as every generated file has.
 *
 * @example
 * ```ts
 * expectedText(["a", "b"], [{ start: 1, body: [{ marker: "-", text: "b" }, { marker: "+", text: "c" }] }]);
 * // "a\nc\n"
 * ```
 */
export function expectedText(lines: readonly string[], chunks: readonly ChunkSpec[]): string {
  const out: string[] = [];
  let cursor = 0;
  for (const chunk of chunks) {
    for (let i = cursor; i < chunk.start; i++) out.push(lines[i]!);
    let at = chunk.start;
    for (const line of chunk.body) {
      if (line.marker === "+") out.push(line.text);
      else if (line.marker === " ") out.push(lines[at++]!);
      else at++;
    }
    cursor = at;
  }
  for (let i = cursor; i < lines.length; i++) out.push(lines[i]!);
  return out.join("\n") + "\n";
}

/** Lines before and after the changed line of a generated chunk (Codex uses 3). */
const CONTEXT = 3;

function indentOf(line: string): string {
  return line.slice(0, line.length - line.trimStart().length);
}

/** A changed version of `line` that differs in content, keeping its indent. */
function changed(line: string, tag: number): string {
  const digits = /\d+/.exec(line);
  if (digits) {
    const bumped = String(Number(digits[0]) + 100000 + tag);
    return line.slice(0, digits.index) + bumped + line.slice(digits.index + digits[0].length);
  }
  return `${line} // patched ${tag}`;
}

/**
 * Chunk shapes: 0 replace one line by one, 1 replace one by two, 2 insert
 * one line, 3 delete one line.
 */
export type ChunkShape = 0 | 1 | 2 | 3;

/** One chunk around old-side start `p`, of a shape chosen by the PRNG among `shapes`. */
function chunkAt(lines: readonly string[], p: number, tag: number, rng: Prng, shapes?: readonly ChunkShape[]): ChunkSpec {
  const body: BodyLine[] = [];
  for (let i = 0; i < CONTEXT; i++) body.push({ marker: " ", text: lines[p + i]! });
  const target = lines[p + CONTEXT]!;
  const indent = indentOf(target);
  const shape = shapes ? rng.pick(shapes) : rng.int(4);
  let after = p + CONTEXT + 1;
  if (shape === 0 || shape === 1) {
    body.push({ marker: "-", text: target });
    body.push({ marker: "+", text: changed(target, tag) });
    if (shape === 1) body.push({ marker: "+", text: `${indent}audit("chunk ${tag}", ${tag});` });
  } else if (shape === 2) {
    body.push({ marker: "+", text: `${indent}audit("chunk ${tag}", ${tag});` });
    after = p + CONTEXT; // pure insertion: the target line is trailing context
  } else {
    body.push({ marker: "-", text: target });
  }
  for (let i = 0; i < CONTEXT; i++) body.push({ marker: " ", text: lines[after + i]! });
  return { start: p, body };
}

/** Old-side span of the chunk shapes above, for spacing. */
const MAX_SPAN = 2 * CONTEXT + 1;

function usable(chunk: ChunkSpec, index: LineIndex): boolean {
  const old = oldSide(chunk);
  const deleted = chunk.body.find((l) => l.marker === "-");
  // A deleted line that is blank or a lone brace is not a realistic edit;
  // a blank last line would exercise Codex's trailing-blank retry instead.
  if (deleted && deleted.text.trim().length <= 1) return false;
  if (old[old.length - 1]!.trim() === "") return false;
  return index.count(old, 2) === 1;
}

/**
 * `count` chunks in file order whose old sides each occur exactly once in
 * `lines` (proved with `index`), one per equal segment of the file, of the
 * given shapes (default: all four).
 *
 * @example
 * ```ts
 * const lines = generateCodeLines(2000, 1);
 * const chunks = uniqueChunks(lines, 10, 1, new LineIndex(lines, (s) => s));
 * ```
 */
export function uniqueChunks(
  lines: readonly string[],
  count: number,
  seed: number,
  index: LineIndex,
  shapes?: readonly ChunkShape[],
): ChunkSpec[] {
  const rng = new Prng(seed);
  const segment = Math.floor(lines.length / count);
  if (segment < MAX_SPAN + 2) throw new RangeError(`${lines.length} lines are too few for ${count} chunks`);
  const chunks: ChunkSpec[] = [];
  for (let k = 0; k < count; k++) {
    const base = k * segment;
    let chosen: ChunkSpec | undefined;
    const room = segment - MAX_SPAN - 1;
    for (let attempt = 0; attempt < 200 && !chosen; attempt++) {
      const candidate = chunkAt(lines, base + rng.int(room), k + 1, rng, shapes);
      if (usable(candidate, index)) chosen = candidate;
    }
    // A short segment may be mostly pasted blocks: try every position.
    for (let offset = 0; offset < room && !chosen; offset++) {
      const candidate = chunkAt(lines, base + offset, k + 1, rng, shapes);
      if (usable(candidate, index)) chosen = candidate;
    }
    if (!chosen) throw new Error(`no unique chunk found in lines ${base}..${base + segment}`);
    chunks.push(chosen);
  }
  return chunks;
}

/**
 * A chunk that matches only at tier 3 (leading and trailing whitespace
 * ignored): a unique chunk re-indented by two spaces on every non-blank
 * line, proved absent under exact and trailing-whitespace matching and
 * unique under trimmed matching. Returns the patch chunk (re-indented) and
 * the oracle chunk (file indentation, which ours should restore).
 */
export function tier3Chunk(
  lines: readonly string[],
  seed: number,
  exact: LineIndex,
  trimEnd: LineIndex,
  trim: LineIndex,
): { patch: ChunkSpec; oracle: ChunkSpec } {
  const rng = new Prng(seed);
  for (let attempt = 0; attempt < 1000; attempt++) {
    const start = Math.floor(lines.length * 0.6) + rng.int(Math.floor(lines.length * 0.3));
    const oracle = chunkAt(lines, start, 1, rng);
    // Blank lines carry no indentation; keep them out so the chunk tests the
    // uniform-delta case only.
    if (!usable(oracle, exact) || oracle.body.some((l) => l.text.trim() === "")) continue;
    const body = oracle.body.map((l) => ({ marker: l.marker, text: l.text === "" ? "" : "  " + l.text }));
    const patch = { start, body };
    const old = oldSide(patch);
    if (exact.count(old, 1) === 0 && trimEnd.count(old, 1) === 0 && trim.count(old, 2) === 1) {
      return { patch, oracle };
    }
  }
  throw new Error("no tier-3 chunk found");
}

/**
 * A chunk that matches nowhere at any tier: a unique chunk with its second
 * line changed in content. Its closest region is where it came from.
 */
export function failingChunk(lines: readonly string[], seed: number, exact: LineIndex, trim: LineIndex): ChunkSpec {
  const rng = new Prng(seed);
  for (let attempt = 0; attempt < 1000; attempt++) {
    const start = Math.floor(lines.length * 0.5) + rng.int(Math.floor(lines.length * 0.4));
    const chunk = chunkAt(lines, start, 1, rng);
    if (!usable(chunk, exact) || chunk.body[1]!.text.trim() === "") continue;
    chunk.body[1] = { marker: " ", text: changed(chunk.body[1]!.text, 777) };
    if (trim.count(oldSide(chunk), 1) === 0) return chunk;
  }
  throw new Error("no failing chunk found");
}

// ---------------------------------------------------------------------------
// Adversarial inputs (SPEC §5.5)
// ---------------------------------------------------------------------------

/** Lines of the adversarial chunks: 100 old lines each. */
export const ADVERSARIAL_CHUNK_LINES = 100;
/** The odd line of the near-miss chunk. */
export const ODD_LINE = "    return done;";
/** The line of the one-repeated-line file. */
export const REPEATED_LINE = "    const value = compute(input, 42);";

/** `n` lines of `}`; with `oddAt`, line `oddAt` is {@linkcode ODD_LINE} instead. */
export function braceLines(n: number, oddAt?: number): string[] {
  const lines = new Array<string>(n).fill("}");
  if (oddAt !== undefined) lines[oddAt] = ODD_LINE;
  return lines;
}

/** `n` copies of {@linkcode REPEATED_LINE}. */
export function repeatedLines(n: number): string[] {
  return new Array<string>(n).fill(REPEATED_LINE);
}

/**
 * A 100-line chunk made only of `line`: it matches at every position of a
 * file of that line (the answer must be `ambiguous_hunk`, fast).
 */
export function everywhereChunk(line: string): ChunkSpec {
  const half = ADVERSARIAL_CHUNK_LINES / 2;
  const body: BodyLine[] = [];
  for (let i = 0; i < half; i++) body.push({ marker: " ", text: line });
  body.push({ marker: "-", text: line });
  body.push({ marker: "+", text: `${line} // changed` });
  for (let i = 0; i < half - 1; i++) body.push({ marker: " ", text: line });
  return { start: 0, body };
}

/**
 * 99 `}` context lines and then {@linkcode ODD_LINE} replaced: nearly
 * matches at every position of a brace file (the worst case for a scan that
 * compares front to back), and matches exactly once where the odd line is.
 */
export function nearMissChunk(start: number): ChunkSpec {
  const body: BodyLine[] = [];
  for (let i = 0; i < ADVERSARIAL_CHUNK_LINES - 1; i++) body.push({ marker: " ", text: "}" });
  body.push({ marker: "-", text: ODD_LINE });
  body.push({ marker: "+", text: "    return finished;" });
  return { start, body };
}

export { LineIndex } from "./line_index.ts";
