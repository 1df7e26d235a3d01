/**
 * Finding the closest region of a chunk that did not match (SPEC §5.4), in
 * near-linear time: every occurrence of chunk line k at file line p votes for
 * window start p − k (rarest lines first, within a vote budget, so frequent
 * lines like `}` cannot make it quadratic; lines that are only similar vote
 * through `similar.ts`); the best few starts are then aligned with a small
 * LCS over a bounded window to get the score, the region, a compact diff and
 * what kind of difference it is. The alignment pairs lines equal but for
 * whitespace and, when asked (a chunk none of whose lines is in the file),
 * lines that are merely similar (`listen 8080;` / `listen 80;`).
 *
 * @module
 */
import { type ExcerptLimits, type LineSource, refsOf } from "../text/excerpt.ts";
import { dice, trigramsOf } from "./similar.ts";
import type { MatchStats } from "./tier_index.ts";
import { indentationOf, isWhitespaceCode, looseKey } from "./normalize.ts";
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

/** The closest region with its 0-based bounds. */
export interface Closest {
  region: ClosestRegion;
  /** 0-based start and exclusive end. */
  start: number;
  end: number;
}

/** Pairs of lines compared for similarity at most in one alignment (beyond: equal-but-whitespace only). */
const MAX_SIMILARITY_CELLS = 20_000;
/** Lines less similar than this are not paired. */
export const PAIR_SCORE = 0.5;

/**
 * Align the chunk's old lines with the file around `start` and describe the
 * result; undefined when the score is below {@linkcode MIN_CLOSEST_SCORE}.
 * The score is the share of the chunk's lines found there equal but for
 * whitespace; with `similar`, lines that are only similar pair too and
 * count for their similarity (below 1).
 *
 * @example
 * ```ts
 * closestAt(["a", "x", "c"], ["a", "b", "c"], 0, { lines: 40, bytes: 4096 }, newMatchStats())?.region.score; // 0.67
 * ```
 */
export function closestAt(
  lines: LineSource,
  expected: readonly string[],
  start: number,
  limits: ExcerptLimits,
  stats: MatchStats,
  similar = false,
): Closest | undefined {
  const chunk = expected.slice(0, MAX_ALIGNED_LINES);
  const m = chunk.length;
  const n = lines.length;
  if (m === 0 || n === 0) return undefined;
  const slack = Math.min(10, m);
  const winStart = Math.max(0, Math.min(start, n - 1) - slack);
  const winEnd = Math.min(n, Math.max(start, 0) + m + slack);
  const window: string[] = [];
  for (let i = winStart; i < winEnd; i++) window.push(lines.at(i)!);
  const weigh = similar && m * window.length <= MAX_SIMILARITY_CELLS ? similarity(chunk, window) : undefined;
  const ops = align(...looseCodes(chunk, window), weigh, stats); // bounded spread: a pair
  let first = -1;
  let last = -1;
  let matched = 0;
  let weight = 0;
  for (const op of ops) {
    if (op.i < 0 || op.j < 0) continue;
    if (matched === 0) first = op.j - op.i;
    last = op.j + (m - 1 - op.i);
    matched++;
    weight += op.weight;
  }
  const score = weight / (100 * m);
  if (matched === 0 || score < MIN_CLOSEST_SCORE) return undefined;
  const regionStart = Math.max(0, winStart + first);
  const regionEnd = Math.min(winEnd, winStart + last + 1);
  const { diff, difference } = describeAlignment(chunk, window, ops, regionStart - winStart, regionEnd - winStart, limits);
  return {
    start: regionStart,
    end: regionEnd,
    region: {
      startLine: regionStart + 1,
      endLine: regionEnd,
      score: Math.round(score * 100) / 100,
      difference,
      lines: refsOf(lines, regionStart, regionEnd, limits),
      diff,
    },
  };
}

/**
 * Similarity in percent (0–99) of lines that are similar but not equal (see
 * `similar.ts`), by `i * w + j`; 0 below {@linkcode PAIR_SCORE}.
 */
function similarity(chunk: readonly string[], window: readonly string[]): Uint8Array {
  const a = chunk.map((t) => trigramsOf(t, 0, t.length));
  const b = window.map((t) => trigramsOf(t, 0, t.length));
  const out = new Uint8Array(chunk.length * window.length);
  for (let i = 0; i < chunk.length; i++) {
    for (let j = 0; j < window.length; j++) {
      const d = dice(a[i]!, b[j]!);
      if (d >= PAIR_SCORE) out[i * window.length + j] = Math.min(99, Math.round(d * 100));
    }
  }
  return out;
}

/**
 * One step of an alignment: chunk line i and/or window line j (−1 when
 * absent); `weight` 100 when equal but for whitespace, else their
 * similarity in percent.
 */
interface AlignOp {
  i: number;
  j: number;
  weight: number;
}

/**
 * Diagonals an alignment may stray beyond the window's own slack: a chunk
 * of m lines costs m × (slack + 2 × 16) cells, not m², and an alignment
 * needing more shifts than that is not a close region anyway.
 */
const BAND = 16;

/**
 * Heaviest alignment of two short line lists (LCS with weights) within a
 * band of diagonals around the chunk's place in the window, as ops in order.
 */
function align(ca: Int32Array, cb: Int32Array, similar: Uint8Array | undefined, stats: MatchStats): AlignOp[] {
  const m = ca.length;
  const w = cb.length;
  // Similar pairs weigh a little less than their similarity, so that the
  // alignment prefers lines equal but for whitespace.
  const weightOf = (i: number, j: number): number => (ca[i] === cb[j] ? 1000 : similar ? 9 * similar[i * w + j]! : 0);
  const hi = Math.min(w, w - m + BAND);
  // A window much shorter than the chunk (a file shorter than it, a start
  // near the end) leaves no diagonal between "starts together" and "ends
  // together": the band is then the one around the chunk's end aligned
  // with the window's, as wide as usual.
  const lo = hi >= Math.max(-m, -BAND) ? Math.max(-m, -BAND) : Math.max(-m, hi - 2 * BAND);
  const width = hi - lo + 1;
  const table = new Uint32Array((m + 1) * width);
  // Past the end of either list, or outside the band: nothing more aligns.
  const at = (i: number, j: number): number => {
    const d = j - i;
    return i >= m || j >= w || d < lo || d > hi ? 0 : table[i * width + d - lo]!;
  };
  // Where both lists start with the same lines, the alignment starts with
  // them: a pair of equal lines weighs most, so for a[i] = b[i] on
  // diagonal 0 (in the band) at(i, i) = 1000 + at(i + 1, i + 1) (any other
  // path can be rerouted through (i, i) inside the band without losing
  // weight), which is exactly the step the walk below takes. Their rows
  // are never read: the table starts below them.
  let prefix = 0;
  if (lo <= 0 && hi >= 0) while (prefix < m && prefix < w && ca[prefix] === cb[prefix]) prefix++;
  let cells = 0;
  // The recurrence of `at` with its bounds written out per neighbour (the
  // inner loop of every diagnosis): below (i + 1, j) is diagonal d − 1 of
  // the next row, right (i, j + 1) is d + 1 of this row, the pair (i + 1,
  // j + 1) is d of the next row.
  for (let i = m - 1; i >= prefix; i--) {
    const row = i * width - lo;
    const next = row + width;
    const lastRow = i + 1 >= m;
    const code = ca[i]!;
    for (let d = hi; d >= lo; d--) {
      const j = i + d;
      if (j < 0 || j >= w) continue;
      const below = lastRow || d - 1 < lo ? 0 : table[next + d - 1]!;
      const right = d + 1 > hi || j + 1 >= w ? 0 : table[row + d + 1]!;
      let best = below > right ? below : right;
      const pair = code === cb[j] ? 1000 : similar ? 9 * similar[i * w + j]! : 0;
      if (pair > 0) {
        const diagonal = (lastRow || j + 1 >= w ? 0 : table[next + d]!) + pair;
        if (diagonal > best) best = diagonal;
      }
      table[row + d] = best;
      cells++;
    }
  }
  stats.lcsCells += cells;
  const ops: AlignOp[] = [];
  for (let k = 0; k < prefix; k++) ops.push({ i: k, j: k, weight: 100 });
  let i = prefix;
  let j = prefix;
  while (i < m && j < w) {
    const pair = weightOf(i, j);
    const here = at(i, j);
    if (pair > 0 && here === at(i + 1, j + 1) + pair) ops.push({ i: i++, j: j++, weight: pair === 1000 ? 100 : pair / 9 });
    else if (at(i + 1, j) >= at(i, j + 1)) ops.push({ i: i++, j: -1, weight: 0 });
    else ops.push({ i: -1, j: j++, weight: 0 });
  }
  while (i < m) ops.push({ i: i++, j: -1, weight: 0 });
  while (j < w) ops.push({ i: -1, j: j++, weight: 0 });
  return ops;
}

/**
 * Each line's loose key (`looseKey`) as a small number, equal keys equal
 * numbers, for both lists: the alignment then compares numbers, not
 * strings per cell, and a text seen before costs one lookup, not a key.
 */
function looseCodes(a: readonly string[], b: readonly string[]): [Int32Array, Int32Array] {
  const byText = new Map<string, number>();
  const byKey = new Map<string, number>();
  const codes = (texts: readonly string[]): Int32Array => {
    const out = new Int32Array(texts.length);
    for (let k = 0; k < texts.length; k++) {
      const text = texts[k]!;
      let code = byText.get(text);
      if (code === undefined) {
        const key = looseKey(text);
        code = byKey.get(key);
        if (code === undefined) byKey.set(key, (code = byKey.size));
        byText.set(text, code);
      }
      out[k] = code;
    }
    return out;
  };
  return [codes(a), codes(b)];
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
    if (op.i >= 0 && op.j >= 0 && op.weight < 100) {
      // Similar, not equal: a content difference, shown as plain - and +.
      content = true;
      minus.push(chunk[op.i]!);
      plus.push(window[op.j]!);
    } else if (op.i >= 0 && op.j >= 0) {
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
