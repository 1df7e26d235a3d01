/**
 * The passes that key every file line at a tier (SPEC §5.5): tier 1 alone,
 * tiers 2–4 together, reading each line's text at most once, in the flat
 * text by offsets: no line string is made for a line that cannot match.
 * A length filter, then the keyer's filter (a signature of four sampled
 * code units naming the one key that has it, or, with many keys, a bit
 * table of the whole-line hash), reject most lines; the rest are resolved
 * through the key table and compared in place with the one key they may
 * equal, so no line string is made.
 *
 * @module
 */
import { EOL_CHARS, type EolCode, grownInt32, lineCapacityFor } from "../text/line_scan.ts";
import { contentEnd, contentStart, isWhitespaceCode, normalizeLine } from "./normalize.ts";
import { HASH_FILTER_SHIFT, MAX_TRACKED_LENGTH, signature, type TierKeyer } from "./tier_keyer.ts";
import { regionHash } from "./key_table.ts";

export { TierKeyer } from "./tier_keyer.ts";

/** Whitespace a trimmed tier strips (also a line break): shared with `trimmed_pass.ts`. */
export function isBlankCode(c: number): boolean {
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
  const { lengths, sigs, bloom, ids, counts } = k;
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
    else if (bloom !== undefined) {
      const h = regionHash(text, start, end, false);
      const bit = h >>> HASH_FILTER_SHIFT;
      if ((bloom[bit >>> 5]! & (1 << (bit & 31))) === 0) continue;
      id = k.resolveHashed(text, start, end, h);
    } else {
      const entry = sigs[signature(text, start, end, false, k.shift)]!;
      if (entry === 0) continue;
      id = k.resolveSignature(text, start, end, entry);
    }
    if (id !== 0) {
      ids[i] = id;
      counts[id]!++;
    }
  }
}

/**
 * {@linkcode passExact} while finding the lines, for a text without any CR
 * (every line ends with LF, the last perhaps with nothing): each line is
 * keyed right after the native search found its end, while it is still in
 * the cache, instead of in a second pass over offsets. Returns the line
 * starts (one per line, then `text.length`), as `scanLfLines` would.
 *
 * @example
 * ```ts
 * const k = new TierKeyer(1, new Set(["b"]), 0);
 * [...passExactScanning("a\nb\n", k)]; // [0, 2, 4]
 * k.finish().ids; // Int32Array [0, 1]
 * ```
 */
export function passExactScanning(text: string, k: TierKeyer): Int32Array {
  const total = text.length;
  let starts: Int32Array = new Int32Array(Math.max(lineCapacityFor(text), k.ids.length + 1));
  let ids = k.growIds(starts.length);
  const { lengths, sigs, bloom, counts } = k;
  const longLengths = k.longLengths;
  let count = 0;
  let pos = 0;
  let previousStart = 0;
  let previousLength = -1;
  while (pos < total) {
    if (count + 1 >= starts.length) {
      starts = grownInt32(starts);
      ids = k.growIds(starts.length);
    }
    const i = count++;
    const start = pos;
    starts[i] = start;
    const lf = text.indexOf("\n", start);
    const end = lf < 0 ? total : lf;
    pos = lf < 0 ? total : lf + 1;
    const length = end - start;
    const sameLength = length === previousLength;
    const before = previousStart;
    previousStart = start;
    previousLength = length;
    if (length <= MAX_TRACKED_LENGTH ? lengths[length] === 0 : !longLengths) continue;
    if (sameLength && length <= 16 && sameChars(text, start, before, length)) {
      const previous = ids[i - 1]!;
      if (previous !== 0) {
        ids[i] = previous;
        counts[previous]!++;
      }
      continue;
    }
    let id: number;
    if (length === 0) id = k.emptyId;
    else if (bloom !== undefined) {
      const h = regionHash(text, start, end, false);
      const bit = h >>> HASH_FILTER_SHIFT;
      if ((bloom[bit >>> 5]! & (1 << (bit & 31))) === 0) continue;
      id = k.resolveHashed(text, start, end, h);
    } else {
      const entry = sigs[signature(text, start, end, false, k.shift)]!;
      if (entry === 0) continue;
      id = k.resolveSignature(text, start, end, entry);
    }
    if (id !== 0) {
      ids[i] = id;
      counts[id]!++;
    }
  }
  starts[count] = total;
  k.trimIds(count);
  return starts.subarray(0, count + 1);
}

function sameChars(text: string, a: number, b: number, length: number): boolean {
  // From the end: neighbouring lines that differ mostly differ there (numbered keys, arguments).
  for (let j = length - 1; j >= 0; j--) if (text.charCodeAt(a + j) !== text.charCodeAt(b + j)) return false;
  return true;
}

/** The tier-1 result a tiers 2–4 pass builds on: its ids and its keys by id. */
export interface LowerTier {
  readonly ids: Int32Array;
  readonly keyOf: readonly string[];
}

/**
 * For every key id of a lower tier, the id its key has at `to`'s tier (the
 * tiers' normalisations compose: trimming the end, then both ends, then
 * folding), so a line the lower tier keyed needs no comparison here.
 */
export function tierMap(keyOf: readonly string[], to: TierKeyer): Int32Array {
  const map = new Int32Array(keyOf.length);
  for (let id = 1; id < keyOf.length; id++) map[id] = to.dict.get(normalizeLine(keyOf[id]!, to.tier)) ?? 0;
  return map;
}

/**
 * The lines tier 1 keyed, for the selectors' passes: each key's count
 * goes to the id its trimmed (and, at tier 4, folded) form has at `k`'s
 * tier — once per key, not once per line (the normalisations compose, so
 * every line carrying a tier-1 key has that key's id here too). Reading a
 * per-key table for each of 260,000 keyed lines of a million was a
 * random access into tens of thousands of entries: the pass cost more per
 * line as the patch grew.
 */
export function countKeyedLines(k: TierKeyer, lower: LowerTier & { count(id: number): number }): void {
  const counts = k.counts;
  const keyOf = lower.keyOf;
  const fold = k.foldsText;
  for (let id1 = 1; id1 < keyOf.length; id1++) {
    const lines = lower.count(id1);
    if (lines === 0) continue;
    const key = keyOf[id1]!;
    let s = 0;
    while (s < key.length && isBlankCode(key.charCodeAt(s))) s++;
    let e = key.length;
    while (e > s && isBlankCode(key.charCodeAt(e - 1))) e--;
    const id = probe(k, key, s, e, fold);
    if (id !== 0) counts[id]! += lines;
  }
}

/**
 * The pass for one tier 3 or 4 keyer alone (the selectors of
 * `index.ts`), counting how many lines carry each key — no per-line ids
 * (the selectors only need to know which keys occur): each line not keyed
 * by tier 1 is trimmed at both ends and probed once; the lines tier 1
 * keyed count through their keys ({@linkcode countKeyedLines}).
 *
 * @example
 * ```ts
 * const k = new TierKeyer(4, new Set(["b"]), 0);
 * passLoosest(flatLinesOf(["a", "  b  ", "b"]), k, undefined);
 * k.finish().count(1); // 2
 * ```
 */
export function passLoosest(flat: FlatLines, k: TierKeyer, lower: (LowerTier & { count(id: number): number }) | undefined): void {
  const { text, starts, eols } = flat;
  const n = eols.length;
  const ids1 = lower?.ids;
  const fold = k.foldsText;
  const counts = k.counts;
  if (lower !== undefined) countKeyedLines(k, lower);
  let previousId = 0;
  for (let i = 0; i < n; i++) {
    // (A line right after a keyed line never equals it: it would be keyed too.)
    if (ids1 !== undefined && ids1[i] !== 0) continue;
    const lineStart = starts[i]!;
    const lineEnd = starts[i + 1]! - EOL_CHARS[eols[i] as EolCode];
    let id: number;
    if (i > 0 && sameAsPrevious(flat, i, lineStart, lineEnd - lineStart)) id = previousId;
    else {
      let start = lineStart;
      while (start < lineEnd && isBlankCode(text.charCodeAt(start))) start++;
      let end = lineEnd;
      while (end > start && isBlankCode(text.charCodeAt(end - 1))) end--;
      id = probe(k, text, start, end, fold);
    }
    previousId = id;
    if (id !== 0) counts[id]!++;
  }
}

/** Record `id` (when not 0) for line `i`. */
export function keep(k: TierKeyer, i: number, id: number): void {
  if (id !== 0) {
    k.ids[i] = id;
    k.counts[id]!++;
  }
}

/**
 * Line `i` is a short line equal to line `i − 1` (runs of `}`, `end`,
 * blank lines): its ids are copied without any other work. Longer lines are
 * left to the signature cache, so this never reads most lines.
 */
export function sameAsPrevious(flat: FlatLines, i: number, start: number, length: number): boolean {
  if (length > 16) return false;
  const { text, starts, eols } = flat;
  const previous = starts[i - 1]!;
  if (start - EOL_CHARS[eols[i - 1] as EolCode] - previous !== length) return false;
  return sameChars(text, start, previous, length);
}

/** Line `i` takes line `i − 1`'s id (see {@linkcode sameAsPrevious}). */
export function repeatPrevious(k: TierKeyer, i: number): void {
  const previous = k.ids[i - 1]!;
  if (previous !== 0) {
    k.ids[i] = previous;
    k.counts[previous]!++;
  }
}

/** The id of the region `text[start, end)` (a line after trimming) at one tier, or 0. */
export function probe(k: TierKeyer, text: string, start: number, end: number, fold: boolean): number {
  const length = end - start;
  if (length <= MAX_TRACKED_LENGTH ? k.lengths[length] === 0 : !k.longLengths) return 0;
  if (length === 0) return k.emptyId;
  const bloom = k.bloom;
  if (bloom !== undefined) {
    const h = regionHash(text, start, end, fold);
    const bit = h >>> HASH_FILTER_SHIFT;
    return (bloom[bit >>> 5]! & (1 << (bit & 31))) === 0 ? 0 : k.resolveHashed(text, start, end, h);
  }
  const entry = k.sigs[signature(text, start, end, fold, k.shift)]!;
  return entry === 0 ? 0 : k.resolveSignature(text, start, end, entry);
}
