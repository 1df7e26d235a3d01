/**
 * The file lines most similar to a few query lines (SPEC §5.4 round 2): a
 * failing `@@` anchor (`def total_for_supplier(…)` → `def
 * total_for_vendor(…)`), or the lines of a chunk found nowhere (`listen
 * 8080;` → `listen 80;`, `TAX_RATES` → `TAX_RATE`), in ONE pass over the
 * file for every query of the file together, whatever their number.
 *
 * Similarity is the Dice coefficient of character trigrams of the lines
 * with all whitespace removed and ASCII letters lowercased (so whitespace
 * differences score 1). The pass counts, per line, the query trigrams it
 * holds: a bitset of the query trigrams (256 KiB, stays in cache) filters
 * each position; a trigram found in more lines than its share of a fixed
 * budget is common (`ret`, `con`) and stops being recorded, so the work is
 * one read of the text plus a bounded number of records. The lines sharing
 * most informative trigrams with a query are then scored exactly.
 *
 * @module
 */
import { EOL_CHARS, type EolCode } from "../text/line_scan.ts";
import { foldCode, isWhitespaceCode } from "./normalize.ts";
import type { MatchStats } from "./tier_index.ts";
import type { FlatLines } from "./tier_pass.ts";

/** Trigram codes: three 7-bit characters. */
const CODE_BITS = 21;
const CODE_MASK = (1 << CODE_BITS) - 1;
/**
 * The filter's bits: codes folded to 18 bits. With 16, 200 anchors' ~8000
 * trigrams set an eighth of the filter and an eighth of the file's trigrams
 * went on to the exact look-up; at 2^18 bits (32 KiB) a thirty-second, and
 * the pass over 2 Mi characters took 15–20% less (25–31 → 24–28 ms).
 */
const FILTER_BITS = 18;
const FILTER_MASK = (1 << FILTER_BITS) - 1;

function filterBit(code: number): number {
  return (code ^ (code >>> FILTER_BITS)) & FILTER_MASK;
}
/** Lines recorded for all query trigrams together at most (each trigram's share: 32–4096). */
const RECORD_BUDGET = 1 << 18;
/** Lines scored exactly per query. */
const CANDIDATES = 24;
/** Characters of a line scored at most (a longer line is cut). */
const SCORED_CHARS = 2000;

/**
 * Characters the similarity pass reads at most per file (about 50,000 lines
 * of code, a few milliseconds): the pass is a diagnosis, and on a larger
 * file it reads the stretches nearest where each failing search started
 * ({@linkcode similarityWindows}) and the failure says which lines it read.
 */
export const SIMILAR_CHAR_BUDGET: number = 1 << 21;

/** Lines `[from, to)` (0-based) of a file. */
export interface LineSpan {
  from: number;
  to: number;
}

/** The first line whose start offset is at least `offset` (`starts` ascending, one entry per line and a last one). */
function lineAtOffset(starts: Int32Array, n: number, offset: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid]! < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The lines the similarity pass reads: the whole file when it has at most
 * `budget` characters, else for each search start (0-based lines) an equal
 * share of the budget — an eighth of it before the start, the rest after
 * (the line looked for usually follows where the search started), moved
 * back from the end of the file — merged where they overlap. The spans
 * hold at most `budget` characters plus one line per start.
 *
 * @example
 * ```ts
 * similarityWindows(flatLinesOf(["a", "b"]), [0], 100); // [{ from: 0, to: 2 }]
 * ```
 */
export function similarityWindows(flat: FlatLines, searchStarts: readonly number[], budget: number = SIMILAR_CHAR_BUDGET): LineSpan[] {
  const n = flat.eols.length;
  const { starts } = flat;
  const total = starts[n]!;
  if (total <= budget || searchStarts.length === 0) return n > 0 ? [{ from: 0, to: n }] : [];
  const distinct = [...new Set(searchStarts.map((s) => Math.min(Math.max(0, s), n - 1)))].sort((a, b) => a - b);
  const share = Math.max(1, Math.floor(budget / distinct.length));
  const spans: LineSpan[] = [];
  for (const s of distinct) {
    let begin = Math.max(0, starts[s]! - (share >> 3));
    if (begin + share > total) begin = Math.max(0, total - share);
    const from = lineAtOffset(starts, n, begin);
    const to = Math.max(from + 1, Math.min(n, lineAtOffset(starts, n, begin + share)));
    const last = spans[spans.length - 1];
    if (last !== undefined && from <= last.to) last.to = Math.max(last.to, to);
    else spans.push({ from, to });
  }
  return spans;
}

/** One query's result: file lines (0-based) with their similarity in (0, 1], best first. */
export interface SimilarLine {
  line: number;
  score: number;
}

/** A code unit as the trigrams see it: 7 bits, letters lowercased, punctuation folded; -1 for whitespace and controls. */
function unit(c: number): number {
  if (c < 0x80) {
    if (c <= 0x20) return -1;
    return c >= 0x41 && c <= 0x5a ? c | 0x20 : c;
  }
  if (isWhitespaceCode(c)) return -1;
  const f = foldCode(c);
  return f < 0x80 ? f : (f ^ (f >>> 7) ^ (f >>> 14)) & 0x7f;
}

/** A 7-bit unit as the pass reads it: 0 for whitespace and controls (skipped), ASCII letters lowercased. */
const UNIT_OF: Uint8Array = Uint8Array.from({ length: 256 }, (_, c) => (c <= 0x20 ? 0 : c >= 0x41 && c <= 0x5a ? c | 0x20 : c));

/** The text's characters in `ranges` (offsets) as 7-bit units: ASCII kept, other characters folded ({@linkcode unit}), whitespace as a space. */
function unitsOf(text: string, ranges: readonly (readonly [number, number])[]): Uint8Array {
  const out = new Uint8Array(text.length);
  for (const [from, to] of ranges) {
    for (let i = from; i < to; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x80) out[i] = c;
      else {
        const u = unit(c);
        out[i] = u < 0 ? 0x20 : u;
      }
    }
  }
  return out;
}

/**
 * The distinct trigram codes of `text[start, end)`, at most `max` characters.
 *
 * @example
 * ```ts
 * trigramsOf("a b c", 0, 5).size; // 1 ("abc")
 * ```
 */
export function trigramsOf(text: string, start: number, end: number, max: number = SCORED_CHARS): Set<number> {
  const out = new Set<number>();
  let code = 0;
  let have = 0;
  const stop = Math.min(end, start + max);
  for (let i = start; i < stop; i++) {
    const u = unit(text.charCodeAt(i));
    if (u < 0) continue;
    code = ((code << 7) | u) & CODE_MASK;
    if (++have >= 3) out.add(code);
  }
  return out;
}

/**
 * Dice similarity of two trigram sets; two texts too short for a trigram
 * are compared by their whitespace-free text instead (`x` vs `x`).
 *
 * @example
 * ```ts
 * dice(trigramsOf("listen 8080;", 0, 12), trigramsOf("listen 80;", 0, 10)); // 0.875
 * ```
 */
export function dice(a: ReadonlySet<number>, b: ReadonlySet<number>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const g of small) if (large.has(g)) shared++;
  return (2 * shared) / (a.size + b.size);
}

/**
 * The lines of a file most similar to each of `queries`, found in one pass.
 *
 * @example
 * ```ts
 * const s = new SimilarLines(flatLinesOf(["def total_for_vendor(vendor, items):", "x = 1"]), ["def total_for_supplier(supplier, items):"], newMatchStats());
 * s.best(0, 5, 0.4); // [{ line: 0, score: 0.5… }]
 * ```
 */
export class SimilarLines {
  readonly #flat: FlatLines;
  readonly #queries: Set<number>[];
  readonly #slotOf = new Map<number, number>();
  /** Lines holding each query trigram (slot): `#lines[slot * #cap …]`, `#count[slot]` of them; -1: too common. */
  readonly #lines: Int32Array;
  readonly #count: Int32Array;
  readonly #cap: number;
  #scratch: Int32Array | undefined;

  /**
   * `ascii`: the file's bytes from its first line on, when every character
   * is ASCII (then byte offsets are character offsets): the pass reads them
   * instead of the string, which is faster.
   */
  constructor(flat: FlatLines, queries: readonly string[], stats: MatchStats, ascii?: Uint8Array, spans?: readonly LineSpan[]) {
    this.#flat = flat;
    this.#queries = queries.map((q) => trigramsOf(q, 0, q.length, Infinity));
    for (const grams of this.#queries) for (const g of grams) if (!this.#slotOf.has(g)) this.#slotOf.set(g, this.#slotOf.size);
    const slots = this.#slotOf.size;
    const cap = (this.#cap = Math.min(4096, Math.max(32, Math.floor(RECORD_BUDGET / Math.max(1, slots)))));
    this.#lines = new Int32Array(slots * cap);
    this.#count = new Int32Array(slots);
    if (slots === 0) return;
    // 2^18 bits (32 KiB, about the first-level cache): a hit is then looked up exactly.
    // Int32Array, not Uint32Array (same bits): a Uint32Array word with bit 31
    // set is no int32, and the JIT's int32 code for the scan then took
    // "Overflow" deoptimisations (with the `>>> 0` the hash had), in some
    // processes recompiling it twice as slow.
    const filter = new Int32Array(1 << (FILTER_BITS - 5));
    const refs = new Uint16Array(1 << FILTER_BITS);
    for (const g of this.#slotOf.keys()) {
      const f = filterBit(g);
      filter[f >>> 5]! |= 1 << (f & 31);
      refs[f]!++;
    }
    const { text, starts, eols } = flat;
    const n = eols.length;
    const read = (spans ?? [{ from: 0, to: n }]).map((span) => ({ from: Math.max(0, span.from), to: Math.min(n, span.to) }));
    // One code unit per character, 7 bits: an ASCII file's own bytes, else
    // the text read mapped once (the loop below then reads one kind of array).
    const units = ascii !== undefined && ascii.length === text.length ? ascii : unitsOf(text, read.map((r) => [starts[r.from]!, starts[r.to]!]));
    // Built once for every span (per span it cost more than the scan: a large file is read in one span per failing search).
    const table = this.#codeTable();
    stats.similarSetup += table.length;
    for (const span of read) {
      this.#scan(span.from, span.to, units, filter, refs, table);
      stats.diagnosticLines += span.to - span.from;
    }
  }

  /** Record the query trigrams of lines `[from, to)`. */
  #scan(from: number, to: number, units: Uint8Array, filter: Int32Array, refs: Uint16Array, table: Int32Array): void {
    const { starts, eols } = this.#flat;
    const tableMask = table.length / 2 - 1;
    const lines = this.#lines;
    const count = this.#count;
    const cap = this.#cap;
    let kept = new Uint8Array(256);
    let hits = new Int32Array(256);
    for (let line = from; line < to; line++) {
      const first = starts[line]!;
      const end = starts[line + 1]! - EOL_CHARS[eols[line] as EolCode];
      if (end - first > hits.length) {
        hits = new Int32Array(2 * (end - first));
        kept = new Uint8Array(2 * (end - first));
      }
      // Two loops without unpredictable branches (about twice as fast as
      // one that skips whitespace as it rolls): the line's units without
      // whitespace, lowercased; then its trigrams, each written to `hits`
      // and kept there only when the filter has it.
      let m = 0;
      for (let i = first; i < end; i++) {
        const u = UNIT_OF[units[i]!]!;
        kept[m] = u;
        m += u === 0 ? 0 : 1;
      }
      let found = 0;
      if (m >= 3) {
        let code = (kept[0]! << 7) | kept[1]!;
        for (let j = 2; j < m; j++) {
          code = ((code << 7) | kept[j]!) & CODE_MASK;
          const f = (code ^ (code >>> FILTER_BITS)) & FILTER_MASK;
          hits[found] = code;
          found += (filter[f >>> 5]! >>> (f & 31)) & 1;
        }
      }
      for (let h = 0; h < found; h++) {
        const code = hits[h]!;
        // The slot of `code` in the open-addressing table (code + 1, slot + 1 pairs; 0: empty).
        let at = Math.imul(code, 0x9e3779b1) & tableMask;
        while (table[2 * at] !== 0 && table[2 * at] !== code + 1) at = (at + 1) & tableMask;
        if (table[2 * at] === 0) continue;
        const slot = table[2 * at + 1]! - 1;
        const k = count[slot]!;
        if (k < 0 || (k > 0 && lines[slot * cap + k - 1] === line)) continue;
        if (k === cap) {
          // Too common to tell lines apart: stop looking for it.
          count[slot] = -1;
          const f = (code ^ (code >>> FILTER_BITS)) & FILTER_MASK;
          if (--refs[f]! === 0) filter[f >>> 5]! &= ~(1 << (f & 31));
          continue;
        }
        lines[slot * cap + k] = line;
        count[slot] = k + 1;
      }
    }
  }

  /** The query trigrams' slots as an open-addressing table of (code + 1, slot + 1) pairs: a hit is looked up without a Map. */
  #codeTable(): Int32Array {
    let size = 16;
    while (size < 2 * this.#slotOf.size) size *= 2;
    const table = new Int32Array(2 * size);
    const mask = size - 1;
    for (const [code, slot] of this.#slotOf) {
      // (No `>>> 0`: the mask keeps the low bits, and a uint32 past 2^31 is no int32.)
      let at = Math.imul(code, 0x9e3779b1) & mask;
      while (table[2 * at] !== 0) at = (at + 1) & mask;
      table[2 * at] = code + 1;
      table[2 * at + 1] = slot + 1;
    }
    return table;
  }

  /**
   * The `k` lines most similar to query `q` with a score of at least
   * `minScore`, best first (ties: the earlier line).
   */
  best(q: number, k: number, minScore: number): SimilarLine[] {
    const grams = this.#queries[q]!;
    const n = this.#flat.eols.length;
    const shared = (this.#scratch ??= new Int32Array(n));
    const touched: number[] = [];
    for (const g of grams) {
      const slot = this.#slotOf.get(g)!;
      const count = this.#count[slot]!;
      for (let j = 0; j < count; j++) {
        const line = this.#lines[slot * this.#cap + j]!;
        if (shared[line]++ === 0) touched.push(line);
      }
    }
    // The lines sharing the most informative trigrams, then scored exactly.
    let most = 0;
    for (const line of touched) most = Math.max(most, shared[line]!);
    const floor = Math.max(1, Math.min(most, Math.ceil(most / 3)));
    const candidates = touched.filter((line) => shared[line]! >= floor);
    candidates.sort((a, b) => shared[b]! - shared[a]! || a - b);
    for (const line of touched) shared[line] = 0;
    const { text, starts, eols } = this.#flat;
    const scored: SimilarLine[] = [];
    for (const line of candidates.slice(0, CANDIDATES)) {
      const end = starts[line + 1]! - EOL_CHARS[eols[line] as EolCode];
      const score = dice(grams, trigramsOf(text, starts[line]!, end));
      if (score >= minScore) scored.push({ line, score });
    }
    scored.sort((a, b) => b.score - a.score || a.line - b.line);
    return scored.slice(0, k);
  }
}
