/**
 * Finding the closest region of a chunk that did not match (SPEC §5.4), in
 * near-linear time: every occurrence of chunk line k at file line p votes for
 * window start p − k (rarest lines first, within a vote budget, so frequent
 * lines like `}` cannot make it quadratic); the best few starts are then
 * aligned with a small LCS over a bounded window to get the score, the
 * region, a compact diff and what kind of difference it is.
 *
 * @module
 */
import { type ExcerptLimits, refsOf } from "../text/excerpt.ts";
import type { MatchStats } from "./tier_index.ts";
import { contentEnd, contentStart, foldCode, indentationOf, isWhitespaceCode, looseKey } from "./normalize.ts";
import type { ClosestRegion, DifferenceKind } from "../types.ts";

/** The largest number of chunk lines aligned line by line. */
const MAX_ALIGNED_LINES = 400;
/** Regions scoring below this are not worth pointing at. */
export const MIN_CLOSEST_SCORE = 0.3;

/**
 * Reusable vote counters, one per file: reset by {@linkcode VoteScratch.takeBest}.
 *
 * @example
 * ```ts
 * const scratch = new VoteScratch(10, 3);
 * scratch.vote(4); scratch.vote(4); scratch.vote(7);
 * scratch.takeBest(1, 0, 10); // [{ start: 4, votes: 2 }]
 * ```
 */
export class VoteScratch {
  readonly #counts: Int32Array;
  readonly #touched: number[] = [];
  readonly #offset: number;

  constructor(fileLines: number, maxChunkLines: number) {
    this.#offset = maxChunkLines + 1;
    this.#counts = new Int32Array(fileLines + this.#offset + 1);
  }

  /** One vote for window start `start` (may be negative, down to −maxChunkLines). */
  vote(start: number): void {
    const i = start + this.#offset;
    if (this.#counts[i] === 0) this.#touched.push(i);
    this.#counts[i]!++;
  }

  /** The `k` best starts (most votes; ties prefer at/after `from`, nearest first), then reset. */
  takeBest(k: number, from: number, fileLines: number): { start: number; votes: number }[] {
    const best: { start: number; votes: number; rank: number }[] = [];
    for (const i of this.#touched) {
      const votes = this.#counts[i]!;
      this.#counts[i] = 0;
      const start = i - this.#offset;
      const rank = start >= from ? start - from : fileLines + (from - start);
      if (best.length < k || votes > best[best.length - 1]!.votes || (votes === best[best.length - 1]!.votes && rank < best[best.length - 1]!.rank)) {
        best.push({ start, votes, rank });
        best.sort((a, b) => b.votes - a.votes || a.rank - b.rank);
        if (best.length > k) best.pop();
      }
    }
    this.#touched.length = 0;
    return best.map(({ start, votes }) => ({ start, votes }));
  }
}

/** What aligned voting needs to know about one key space (a tier index or the loose index). */
export interface VoteSource {
  /** Ids of the chunk's lines (0: never occurs). */
  pattern: Int32Array;
  count(id: number): number;
  occurrences(id: number): Int32Array;
}

/**
 * Cast the votes of one chunk, rarest lines first, until `budget` votes.
 * Lines found more than `maxPerLine` times (`}`, blank lines) carry no
 * information about where the chunk belongs and do not vote.
 *
 * @example
 * ```ts
 * const scratch = new VoteScratch(3, 1);
 * castVotes({ pattern: Int32Array.of(1), count: () => 1, occurrences: () => Int32Array.of(2) }, scratch, 100, 100, newMatchStats());
 * scratch.takeBest(1, 0, 3); // [{ start: 2, votes: 1 }]
 * ```
 */
export function castVotes(source: VoteSource, scratch: VoteScratch, budget: number, maxPerLine: number, stats: MatchStats): void {
  const m = source.pattern.length;
  const order: { k: number; occ: Int32Array }[] = [];
  for (let k = 0; k < m; k++) {
    const id = source.pattern[k]!;
    if (id === 0 || source.count(id) > maxPerLine) continue;
    order.push({ k, occ: source.occurrences(id) });
  }
  order.sort((a, b) => a.occ.length - b.occ.length);
  let used = 0;
  for (const { k, occ } of order) {
    if (used + occ.length > budget) break;
    used += occ.length;
    for (let j = 0; j < occ.length; j++) scratch.vote(occ[j]! - k);
  }
  stats.votes += used;
}

/**
 * Loose keys (no whitespace at all, punctuation folded) of the file lines
 * some failing chunk mentions, built in one pass with a cheap prefilter on
 * the first and last non-blank characters.
 *
 * @example
 * ```ts
 * const loose = new LooseIndex(["f( a, b )"], ["f(a,b)"], newMatchStats());
 * [...loose.occurrences(loose.pattern(["f(a, b)"])[0]!)]; // [0]
 * ```
 */
export class LooseIndex {
  readonly #dict = new Map<string, number>();
  readonly #positions: number[][] = [[]];

  constructor(lines: readonly string[], texts: readonly string[], stats: MatchStats) {
    const edges = new Uint8Array(1 << 16);
    for (const text of texts) {
      const key = looseKey(text);
      if (key.length === 0 || this.#dict.has(key)) continue;
      this.#dict.set(key, this.#positions.length);
      this.#positions.push([]);
      edges[edgeSignature(key, 0, key.length)] = 1;
    }
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      const start = contentStart(line);
      const end = contentEnd(line, start);
      if (start === end || edges[edgeSignature(line, start, end)] === 0) continue;
      const id = this.#dict.get(looseKey(line));
      if (id !== undefined) this.#positions[id]!.push(i);
    }
    stats.diagnosticLines += lines.length;
  }

  /** Ids of texts (0 when blank or unknown). */
  pattern(texts: readonly string[]): Int32Array {
    const out = new Int32Array(texts.length);
    for (let i = 0; i < texts.length; i++) out[i] = this.#dict.get(looseKey(texts[i]!)) ?? 0;
    return out;
  }

  count(id: number): number {
    return this.#positions[id]?.length ?? 0;
  }

  occurrences(id: number): Int32Array {
    return Int32Array.from(this.#positions[id] ?? []);
  }
}

function edgeSignature(text: string, start: number, end: number): number {
  const a = foldCode(text.charCodeAt(start));
  const b = foldCode(text.charCodeAt(end - 1));
  return (Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca6b)) >>> 16;
}

/** The closest region with its 0-based bounds. */
export interface Closest {
  region: ClosestRegion;
  /** 0-based start and exclusive end. */
  start: number;
  end: number;
}

/**
 * Align the chunk's old lines with the file around `start` and describe the
 * result; undefined when the score is below {@linkcode MIN_CLOSEST_SCORE}.
 *
 * @example
 * ```ts
 * closestAt(["a", "x", "c"], ["a", "b", "c"], 0, { lines: 40, bytes: 4096 }, newMatchStats())?.region.score; // 0.67
 * ```
 */
export function closestAt(
  lines: readonly string[],
  expected: readonly string[],
  start: number,
  limits: ExcerptLimits,
  stats: MatchStats,
): Closest | undefined {
  const chunk = expected.slice(0, MAX_ALIGNED_LINES);
  const m = chunk.length;
  const n = lines.length;
  if (m === 0 || n === 0) return undefined;
  const slack = Math.min(10, m);
  const winStart = Math.max(0, Math.min(start, n - 1) - slack);
  const winEnd = Math.min(n, Math.max(start, 0) + m + slack);
  const window = lines.slice(winStart, winEnd);
  const ops = align(chunk.map(looseKey), window.map(looseKey), stats);
  let first = -1;
  let last = -1;
  let matched = 0;
  for (const op of ops) {
    if (op.i < 0 || op.j < 0) continue;
    if (matched === 0) first = op.j - op.i;
    last = op.j + (m - 1 - op.i);
    matched++;
  }
  const score = matched / m;
  if (matched === 0 || score < MIN_CLOSEST_SCORE) return undefined;
  const regionStart = Math.max(0, winStart + first);
  const regionEnd = Math.min(winEnd, winStart + last + 1);
  const { diff, difference } = describeAlignment(chunk, window, ops, regionStart - winStart, regionEnd - winStart, limits);
  return {
    start: regionStart,
    end: regionEnd,
    region: {
      start_line: regionStart + 1,
      end_line: regionEnd,
      score: Math.round(score * 100) / 100,
      difference,
      lines: refsOf(lines, regionStart, regionEnd, limits),
      diff,
    },
  };
}

/** One step of an alignment: chunk line i and/or window line j (−1 when absent). */
interface AlignOp {
  i: number;
  j: number;
}

/** LCS alignment of two short key lists, as ops in order. */
function align(a: readonly string[], b: readonly string[], stats: MatchStats): AlignOp[] {
  const m = a.length;
  const w = b.length;
  const table = new Uint16Array((m + 1) * (w + 1));
  for (let i = m - 1; i >= 0; i--) {
    for (let j = w - 1; j >= 0; j--) {
      const at = i * (w + 1) + j;
      table[at] = a[i] === b[j]
        ? table[at + w + 2]! + 1
        : Math.max(table[at + w + 1]!, table[at + 1]!);
    }
  }
  stats.lcsCells += m * w;
  const ops: AlignOp[] = [];
  let i = 0;
  let j = 0;
  while (i < m && j < w) {
    const at = i * (w + 1) + j;
    if (a[i] === b[j] && table[at] === table[at + w + 2]! + 1) ops.push({ i: i++, j: j++ });
    else if (table[at + w + 1]! >= table[at + 1]!) ops.push({ i: i++, j: -1 });
    else ops.push({ i: -1, j: j++ });
  }
  while (i < m) ops.push({ i: i++, j: -1 });
  while (j < w) ops.push({ i: -1, j: j++ });
  return ops;
}

/** Show a line so that whitespace differences are visible. */
function visible(text: string): string {
  return JSON.stringify(text);
}

function describeAlignment(
  chunk: readonly string[],
  window: readonly string[],
  ops: readonly AlignOp[],
  regionStart: number,
  regionEnd: number,
  limits: ExcerptLimits,
): { diff: string; difference: DifferenceKind } {
  let content = false;
  let indentation = false;
  const rows: { mark: " " | "-" | "+"; text: string }[] = [];
  let minus: string[] = [];
  let plus: string[] = [];
  const flush = (): void => {
    for (const text of minus) rows.push({ mark: "-", text });
    for (const text of plus) rows.push({ mark: "+", text });
    minus = [];
    plus = [];
  };
  for (const op of ops) {
    if (op.i >= 0 && op.j >= 0) {
      const want = chunk[op.i]!;
      const have = window[op.j]!;
      if (want === have) {
        flush();
        rows.push({ mark: " ", text: have });
        continue;
      }
      if (indentationOf(want) !== indentationOf(have)) indentation = true;
      if (!sameIgnoringWhitespace(want, have)) content = true;
      minus.push(visible(want));
      plus.push(visible(have));
    } else if (op.i >= 0) {
      content = true;
      minus.push(chunk[op.i]!);
    } else if (op.j >= regionStart && op.j < regionEnd) {
      content = true;
      plus.push(window[op.j]!);
    }
  }
  flush();
  const difference: DifferenceKind = content ? "content" : indentation ? "indentation" : "whitespace";
  return { diff: compactDiff(rows, limits), difference };
}

/** Equal once every whitespace character is removed (punctuation folds count as content). */
function sameIgnoringWhitespace(a: string, b: string): boolean {
  const strip = (s: string): string => {
    let out = "";
    for (let i = 0; i < s.length; i++) if (!isWhitespaceCode(s.charCodeAt(i))) out += s[i];
    return out;
  };
  return strip(a) === strip(b);
}

/** Diff rows with long unchanged runs collapsed, bounded by the excerpt limits. */
function compactDiff(rows: readonly { mark: string; text: string }[], limits: ExcerptLimits): string {
  const keep = new Uint8Array(rows.length);
  for (let r = 0; r < rows.length; r++) {
    if (rows[r]!.mark === " ") continue;
    for (let k = Math.max(0, r - 2); k <= Math.min(rows.length - 1, r + 2); k++) keep[k] = 1;
  }
  const out: string[] = [];
  let skipped = 0;
  let bytes = 0;
  for (let r = 0; r < rows.length; r++) {
    if (!keep[r]) {
      skipped++;
      continue;
    }
    if (skipped > 0) out.push(`  … (${skipped} unchanged line${skipped === 1 ? "" : "s"})`);
    skipped = 0;
    const row = rows[r]!;
    const line = `${row.mark} ${row.text.length > 240 ? row.text.slice(0, 239) + "…" : row.text}`;
    bytes += line.length + 1;
    if (out.length >= limits.lines || bytes > limits.bytes) {
      out.push(`  … (diff cut at ${limits.lines} lines / ${limits.bytes} bytes)`);
      return out.join("\n");
    }
    out.push(line);
  }
  if (skipped > 0) out.push(`  … (${skipped} unchanged line${skipped === 1 ? "" : "s"})`);
  return out.join("\n");
}
