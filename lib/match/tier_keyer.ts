/**
 * One tier's dictionary of query keys and the filters that let a pass over
 * a million lines key almost none of them (SPEC §5.5): a length table, a
 * signature of four sampled code units, and per signature a short chain of
 * keys that a line is compared with in place.
 *
 * @module
 */
import { foldCode, type LineTier, normalizeLine } from "./normalize.ts";
import { TierIndex } from "./tier_index.ts";

const SIG_BITS = 16;
const SIG_MASK = (1 << SIG_BITS) - 1;
/** Line lengths up to this are filtered by a table; longer ones pass when any key is longer. */
export const MAX_TRACKED_LENGTH = 4096;
/**
 * Keys sharing one signature beyond which a line is looked up in the
 * dictionary instead of compared with each of them: keys that agree on
 * every sampled code unit (`K00001M00N1Z`, `K00002M00N2Z`, … — easy to
 * make on purpose) would otherwise turn each line into a scan of them all,
 * quadratic work (SPEC §5.5: near-linear for any input).
 */
const CHAIN_LIMIT = 8;

/**
 * A cheap signature of `line[start, end)`: its length and four sampled code
 * units (folded at tier 4, which keeps lengths). Equal keys have equal
 * signatures, so a line whose signature no query has cannot match.
 *
 * @example
 * ```ts
 * signature("  x = 1", 2, 7, false) === signature("x = 1", 0, 5, false); // true
 * ```
 */
export function signature(line: string, start: number, end: number, fold: boolean): number {
  const length = end - start;
  if (length === 0) return 0;
  let a = line.charCodeAt(start);
  let b = line.charCodeAt(start + (length >> 1));
  let c = line.charCodeAt(start + ((length * 3) >> 2));
  let d = line.charCodeAt(end - 1);
  if (fold) {
    a = foldCode(a);
    b = foldCode(b);
    c = foldCode(c);
    d = foldCode(d);
  }
  // One multiply mixes length and samples: the filter needs no more (the
  // samples carry all there is), and this runs for almost every line.
  return Math.imul(length + a * 0x3b + (b << 7) + (c << 14) + (d << 21), 0x9e3779b1) >>> (32 - SIG_BITS);
}
/** `text[start, end)` folded at tier 4, code unit by code unit as {@linkcode sameFolded} compares. */
function foldRegion(text: string, start: number, end: number): string {
  let out = "";
  for (let j = start; j < end; j++) out += String.fromCharCode(foldCode(text.charCodeAt(j)));
  return out;
}

/** Whether `text[start, end)` folded at tier 4 equals `key` (same length already checked). */
function sameFolded(key: string, text: string, start: number, end: number): boolean {
  for (let j = 0; start + j < end; j++) if (foldCode(text.charCodeAt(start + j)) !== key.charCodeAt(j)) return false;
  return true;
}

/** Whether `text[start, end)` equals `key` (same length already checked). */
function sameText(key: string, text: string, start: number, end: number): boolean {
  // Short regions (`}`, `end`, `});`) compare faster code unit by code unit
  // than through a native call.
  if (end - start <= 16) {
    for (let j = 0; start + j < end; j++) if (text.charCodeAt(start + j) !== key.charCodeAt(j)) return false;
    return true;
  }
  return text.startsWith(key, start);
}

/**
 * One tier's dictionary, filters and ids while a pass runs; `finish` turns
 * it into a {@linkcode TierIndex}.
 *
 * @example
 * ```ts
 * const k = new TierKeyer(3, new Set(["  x"]), 1);
 * k.dict.get("x"); // 1
 * ```
 */
export class TierKeyer {
  readonly tier: LineTier;
  /**
   * Key comparisons made: one per key of the line's signature compared in
   * place, or one dictionary lookup for a crowded signature. The work
   * counters of the tests bound it (MatchStats.linesKeyed).
   */
  keyed = 0;
  readonly dict: Map<string, number> = new Map();
  /** Key text by id (index 0 unused). */
  readonly keys: string[] = [""];
  /** 1 for each signature some key has: the filter (small, so it stays in cache). */
  readonly sigs: Uint8Array = new Uint8Array(SIG_MASK + 1);
  // Keys by signature, as chains of ids: a line that passes the filter is
  // compared in place with the few keys sharing its signature, so no line
  // is ever sliced or hashed.
  readonly sigHead: Int32Array = new Int32Array(SIG_MASK + 1);
  readonly sigNext: number[] = [0];
  /** Keys per signature, saturating at 255 (above CHAIN_LIMIT: look up, do not walk). */
  readonly sigCount: Uint8Array = new Uint8Array(SIG_MASK + 1);
  readonly lengths: Uint8Array = new Uint8Array(MAX_TRACKED_LENGTH + 1);
  longLengths = false;
  /** The id of the empty key (blank lines), 0 when no query is blank. */
  readonly emptyId: number;
  /** Per line: the id of its key, 0 for none. */
  ids: Int32Array;
  readonly counts: Int32Array;

  constructor(tier: LineTier, queries: ReadonlySet<string>, lineCount: number) {
    this.tier = tier;
    for (const query of queries) {
      const key = normalizeLine(query, tier);
      if (this.dict.has(key)) continue;
      const id = this.dict.size + 1;
      this.dict.set(key, id);
      this.keys.push(key);
      if (key.length > 0) {
        const sig = signature(key, 0, key.length, tier === 4);
        this.sigNext.push(this.sigHead[sig]!);
        this.sigHead[sig] = id;
        this.sigs[sig] = 1;
        if (this.sigCount[sig]! < 255) this.sigCount[sig]!++;
      } else {
        this.sigNext.push(0);
      }
      if (key.length <= MAX_TRACKED_LENGTH) this.lengths[key.length] = 1;
      else this.longLengths = true;
    }
    this.emptyId = this.dict.get("") ?? 0;
    this.ids = new Int32Array(lineCount);
    this.counts = new Int32Array(this.dict.size + 2);
  }

  /**
   * The id of the key equal to the (non-empty) region `text[start, end)`
   * with signature `sig`, or 0. At tier 4 the region is folded as it is
   * compared (folding keeps lengths).
   */
  resolve(text: string, start: number, end: number, sig: number): number {
    const fold = this.tier === 4;
    if (this.sigCount[sig]! > CHAIN_LIMIT) {
      // A crowded signature: one slice and one hash lookup, whatever the
      // number of keys sharing it.
      this.keyed++;
      return this.dict.get(fold ? foldRegion(text, start, end) : text.slice(start, end)) ?? 0;
    }
    const length = end - start;
    for (let id = this.sigHead[sig]!; id !== 0; id = this.sigNext[id]!) {
      this.keyed++;
      const key = this.keys[id]!;
      if (key.length === length && (fold ? sameFolded(key, text, start, end) : sameText(key, text, start, end))) return id;
    }
    return 0;
  }

  /** Room for `capacity` lines (ids kept): a pass that finds the lines as it goes. */
  growIds(capacity: number): Int32Array {
    if (capacity > this.ids.length) {
      const grown = new Int32Array(capacity);
      grown.set(this.ids);
      this.ids = grown;
    }
    return this.ids;
  }

  /** The pass found `count` lines. */
  trimIds(count: number): void {
    this.ids = this.ids.subarray(0, count);
  }

  /** The finished index. */
  finish(): TierIndex {
    return new TierIndex(this.tier, this.ids, this.dict, this.counts);
  }
}
