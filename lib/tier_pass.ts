/**
 * The passes that key every file line at a tier (SPEC §5.5): tier 1 alone,
 * tiers 2–4 together, reading each line's text at most once, in the flat
 * text by offsets: no line string is made for a line that cannot match.
 * A length filter, then a signature of four sampled code units, reject most
 * lines; the rest are compared in place with the keys of their signature
 * (usually one), so no line is sliced or hashed.
 *
 * @module
 */
import { EOL_CHARS, type EolCode } from "./line_scan.ts";
import { foldCode, isWhitespaceCode, type LineTier, normalizeLine } from "./normalize.ts";
import { TierIndex } from "./tier_index.ts";

const SIG_BITS = 16;
const SIG_MASK = (1 << SIG_BITS) - 1;
const MAX_TRACKED_LENGTH = 4096;
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
 */
function signature(line: string, start: number, end: number, fold: boolean): number {
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
  let h = Math.imul(length, 0x9e3779b1) ^ Math.imul(a + (d << 16), 0x85ebca6b) ^ Math.imul(b + (c << 16), 0xc2b2ae35);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 13;
  return h & SIG_MASK;
}


function isBlankCode(c: number): boolean {
  return c === 0x20 || c === 0x09 || (c > 0x7f && isWhitespaceCode(c)) || (c >= 0x0a && c <= 0x0d);
}

/**
 * The lines of a text as offsets: line `i` is
 * `text.slice(starts[i], starts[i + 1] - EOL_CHARS[eols[i]])`
 * (see `line_scan.ts`). The passes read the text only through these.
 */
export interface FlatLines {
  readonly text: string;
  /** One entry more than there are lines; the last is `text.length`. */
  readonly starts: Int32Array;
  readonly eols: Uint8Array;
}

/**
 * The flat form of a line array: joined with LF, the offsets counted from
 * the lines themselves (so a line holding a line break stays one line).
 *
 * @example
 * ```ts
 * [...flatLinesOf(["a", "bc"]).starts]; // [0, 2, 4]
 * ```
 */
export function flatLinesOf(lines: readonly string[]): FlatLines {
  const n = lines.length;
  const starts = new Int32Array(n + 1);
  const eols = new Uint8Array(n).fill(1);
  let offset = 0;
  for (let i = 0; i < n; i++) {
    starts[i] = offset;
    offset += lines[i]!.length + 1;
  }
  if (n > 0) {
    eols[n - 1] = 0;
    offset--;
  }
  starts[n] = offset;
  return { text: lines.join("\n"), starts, eols };
}

/**
 * The tier-1 pass. The length alone (from the offsets) rejects most lines
 * without reading their text; a signature of the text rejects most others;
 * only the rest are compared or looked up.
 *
 * @example
 * ```ts
 * const k = new TierKeyer(1, new Set(["b"]), 2);
 * passExact(flatLinesOf(["a", "b"]), k);
 * k.finish().ids; // Int32Array [0, 1]
 * ```
 */
export function passExact(flat: FlatLines, k: TierKeyer): void {
  const { text, starts, eols } = flat;
  const { lengths, sigs, ids, counts } = k;
  const longLengths = k.longLengths;
  const n = eols.length;
  for (let i = 0; i < n; i++) {
    const start = starts[i]!;
    const end = starts[i + 1]! - EOL_CHARS[eols[i] as EolCode];
    const length = end - start;
    if (length <= MAX_TRACKED_LENGTH ? lengths[length] === 0 : !longLengths) continue;
    if (i > 0 && sameAsPrevious(flat, i, start, length)) {
      const previous = ids[i - 1]!;
      if (previous !== 0) {
        ids[i] = previous;
        counts[previous]!++;
      }
      continue;
    }
    let id: number;
    if (length === 0) id = k.emptyId;
    else {
      const sig = signature(text, start, end, false);
      if (sigs[sig] === 0) continue;
      id = k.resolve(text, start, end, sig);
    }
    if (id !== 0) {
      ids[i] = id;
      counts[id]!++;
    }
  }
}

/**
 * The pass for tiers 2, 3 and (when something can fold) 4 together: each
 * line's text is read once.
 *
 * @example
 * ```ts
 * const queries = new Set(["b"]);
 * const [k2, k3] = [new TierKeyer(2, queries, 2), new TierKeyer(3, queries, 2)];
 * passTrimmed(flatLinesOf(["b  ", "  b"]), k2, k3, undefined);
 * [k2.finish().ids, k3.finish().ids]; // [Int32Array [1, 0], Int32Array [1, 1]]
 * ```
 */
export function passTrimmed(flat: FlatLines, k2: TierKeyer, k3: TierKeyer, k4: TierKeyer | undefined): void {
  const { text, starts, eols } = flat;
  const n = eols.length;
  for (let i = 0; i < n; i++) {
    const lineStart = starts[i]!;
    const lineEnd = starts[i + 1]! - EOL_CHARS[eols[i] as EolCode];
    if (i > 0 && sameAsPrevious(flat, i, lineStart, lineEnd - lineStart)) {
      repeatPrevious(k2, i);
      repeatPrevious(k3, i);
      if (k4 !== undefined) repeatPrevious(k4, i);
      continue;
    }
    let start = lineStart;
    while (start < lineEnd && isBlankCode(text.charCodeAt(start))) start++;
    let end = lineEnd;
    while (end > start && isBlankCode(text.charCodeAt(end - 1))) end--;
    // Tier 2 keeps leading whitespace; a blank line's tier-2 key is "" too.
    probe(k2, i, text, lineStart, start === lineEnd ? lineStart : end, false);
    probe(k3, i, text, start, end, false);
    if (k4 !== undefined) probe(k4, i, text, start, end, true);
  }
}

/**
 * Line `i` is a short line equal to line `i − 1` (runs of `}`, `end`,
 * blank lines): its ids are copied without any other work. Longer lines are
 * left to the signature cache, so this never reads most lines.
 */
function sameAsPrevious(flat: FlatLines, i: number, start: number, length: number): boolean {
  if (length > 16) return false;
  const { text, starts, eols } = flat;
  const previous = starts[i - 1]!;
  if (start - EOL_CHARS[eols[i - 1] as EolCode] - previous !== length) return false;
  for (let j = 0; j < length; j++) if (text.charCodeAt(start + j) !== text.charCodeAt(previous + j)) return false;
  return true;
}

function repeatPrevious(k: TierKeyer, i: number): void {
  const previous = k.ids[i - 1]!;
  if (previous !== 0) {
    k.ids[i] = previous;
    k.counts[previous]!++;
  }
}

/** Key line `i` at one tier: its region after trimming is `text[start, end)`. */
function probe(k: TierKeyer, i: number, text: string, start: number, end: number, fold: boolean): void {
  const length = end - start;
  if (length <= MAX_TRACKED_LENGTH ? k.lengths[length] === 0 : !k.longLengths) return;
  let id: number;
  if (length === 0) id = k.emptyId;
  else {
    const sig = signature(text, start, end, fold);
    if (k.sigs[sig] === 0) return;
    id = k.resolve(text, start, end, sig);
  }
  if (id !== 0) {
    k.ids[i] = id;
    k.counts[id]!++;
  }
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
  readonly ids: Int32Array;
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

  /** The finished index. */
  finish(): TierIndex {
    return new TierIndex(this.tier, this.ids, this.dict, this.counts);
  }
}
