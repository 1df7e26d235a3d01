/**
 * The passes of `tier_pass.ts` for an ASCII file whose bytes are at hand
 * (`bytes[i]` is the text's code unit `i`: a file `decodeText` found
 * ASCII, past its BOM; nothing in it folds). Lines are hashed and compared
 * through the bytes: a byte costs less to read than a code unit, and the
 * keys' bytes lie in one small array (`KeyTable.encodeKeyBytes`)
 * instead of strings spread over the heap — with 67,000 keys each
 * comparison with a key string was a few cache misses. Same ids, counts
 * and starts as the string passes (tests compare them).
 *
 * Each filter has its own copy of the tier-1 loop: one loop for both is
 * compiled for the shapes that ran first in the process and runs the other
 * slower (measured with `bench/compare_trees.ts`, both orders: the
 * `alternating` family after `lowentropy`, `failing` and `crowded` planned
 * at 2.42× the floor with one loop, 1.84× with two).
 *
 * @module
 */
import { EOL_CHARS, type EolCode, grownInt32, lineCapacityFor } from "../text/line_scan.ts";
import { HASH_FILTER_SHIFT, MAX_TRACKED_LENGTH, signature, signatureBytes, type TierKeyer } from "./tier_keyer.ts";
import { regionHashBytes } from "./key_table.ts";
import { countKeyedLines, type FlatLines, type LowerTier } from "./tier_pass.ts";

/**
 * `passExactScanning` (find the lines of an LF-only text and key them at
 * tier 1 in one pass) for an ASCII text whose bytes are at hand: lines
 * are still found by the native search in `text`.
 *
 * @example
 * ```ts
 * const k = new TierKeyer(1, new Set(["b"]), 0, true);
 * [...passExactScanningBytes("a\nb\n", new TextEncoder().encode("a\nb\n"), k)]; // [0, 2, 4]
 * k.finish().ids; // Int32Array [0, 1]
 * ```
 */
export function passExactScanningBytes(text: string, bytes: Uint8Array, k: TierKeyer): Int32Array {
  if (bytes.length !== text.length || k.foldsText) throw new RangeError("passExactScanningBytes: the bytes must be the ASCII text's, at an unfolded tier");
  k.dict.encodeKeyBytes();
  return k.bloom !== undefined ? scanHashed(text, bytes, k, k.bloom) : scanSigned(text, bytes, k);
}

/** Tier 1 with many keys: every line that passes the length filter is hashed whole and filtered by `bloom`. */
function scanHashed(text: string, bytes: Uint8Array, k: TierKeyer, bloom: Int32Array): Int32Array {
  const total = text.length;
  let starts: Int32Array = new Int32Array(Math.max(lineCapacityFor(text), k.ids.length + 1));
  let ids = k.growIds(starts.length);
  const { lengths, counts } = k;
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
    if (sameLength && length <= 16 && sameBytes(bytes, start, before, length)) {
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
      const h = regionHashBytes(bytes, start, end);
      const bit = h >>> HASH_FILTER_SHIFT;
      if ((bloom[bit >>> 5]! & (1 << (bit & 31))) === 0) continue;
      id = k.resolveHashedBytes(bytes, text, start, end, h);
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

/** Tier 1 with few keys: lines past the length filter are filtered by their sampled signature. */
function scanSigned(text: string, bytes: Uint8Array, k: TierKeyer): Int32Array {
  const total = text.length;
  let starts: Int32Array = new Int32Array(Math.max(lineCapacityFor(text), k.ids.length + 1));
  let ids = k.growIds(starts.length);
  const { lengths, sigs, sigBits, counts } = k;
  const shift = k.shift;
  const filterShift = k.filterShift;
  const longLengths = k.longLengths;
  let count = 0;
  let pos = 0;
  let previousStart = 0;
  let previousLength = -1;
  /** Lines that passed the length filter so far. */
  let passed = 0;
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
    passed++;
    if (sameLength && length <= 16 && sameBytes(bytes, start, before, length)) {
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
      // Sampled from the text, which the line search has just read: a line
      // that passes the length filter among many that do not would find its
      // bytes out of the cache (a code file with one chunk: 15% slower).
      const mixed = signature(text, start, end, false, 0);
      const bit = mixed >>> filterShift;
      if ((sigBits[bit >>> 5]! & (1 << (bit & 31))) === 0) continue;
      const entry = sigs[mixed >>> shift]!;
      if (entry === 0) continue;
      // A short line is compared through the bytes while most lines get
      // this far (then the bytes are read in order and arrive ahead of
      // use), else through the text: the bytes of a line here and there
      // among lines that stop at the length filter are not in the cache,
      // the text just searched is (a code file with one failing chunk: 25%
      // slower by bytes; a file of frequent short lines: 15% faster). A
      // longer line is compared natively in the text (few keys: the key is
      // in the cache too), which beats a loop over its bytes (alternating
      // 60-character lines: 20%). Either gives the same id.
      id = length <= 16 && 2 * passed > i ? k.resolveSignatureBytes(bytes, text, start, end, entry) : k.resolveSignature(text, start, end, entry);
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

function sameBytes(bytes: Uint8Array, a: number, b: number, length: number): boolean {
  // From the end: neighbouring lines that differ mostly differ there.
  for (let j = length - 1; j >= 0; j--) if (bytes[a + j] !== bytes[b + j]) return false;
  return true;
}

/**
 * `passLoosest` (the selectors' pass: one tier 3 or 4 keyer, counts only)
 * for an ASCII file whose bytes are at hand: the lines tier 1 did not key
 * are trimmed, sampled, hashed and compared through the bytes.
 *
 * @example
 * ```ts
 * const k = new TierKeyer(4, new Set(["b"]), 0, true);
 * passLoosestBytes(flatLinesOf(["a", "  b  ", "b"]), new TextEncoder().encode("a\n  b  \nb"), k, undefined);
 * k.finish().count(1); // 2
 * ```
 */
export function passLoosestBytes(flat: FlatLines, bytes: Uint8Array, k: TierKeyer, lower: (LowerTier & { count(id: number): number }) | undefined): void {
  const { text, starts, eols } = flat;
  if (bytes.length !== text.length || k.foldsText) throw new RangeError("passLoosestBytes: the bytes must be the ASCII text's, at an unfolded tier");
  k.dict.encodeKeyBytes();
  const n = eols.length;
  const ids1 = lower?.ids;
  const counts = k.counts;
  const { lengths, sigs, sigBits, bloom } = k;
  const longLengths = k.longLengths;
  const shift = k.shift;
  const filterShift = k.filterShift;
  if (lower !== undefined) countKeyedLines(k, lower);
  let previousId = 0;
  let previousStart = 0;
  let previousLength = -1;
  for (let i = 0; i < n; i++) {
    if (ids1 !== undefined && ids1[i] !== 0) continue;
    let id = 0;
    const lineStart = starts[i]!;
    const lineLength = starts[i + 1]! - EOL_CHARS[eols[i] as EolCode] - lineStart;
    // The previous unkeyed line (one right after a keyed line never equals it).
    const sameLength = lineLength === previousLength && previousStart + lineLength + EOL_CHARS[eols[i - 1] as EolCode] === lineStart;
    const before = previousStart;
    previousStart = lineStart;
    previousLength = lineLength;
    if (sameLength && lineLength <= 16 && sameBytes(bytes, lineStart, before, lineLength)) {
      id = previousId;
    } else {
      let start = lineStart;
      let end = lineStart + lineLength;
      while (start < end && isBlankByte(bytes[start]!)) start++;
      while (end > start && isBlankByte(bytes[end - 1]!)) end--;
      const length = end - start;
      if (length <= MAX_TRACKED_LENGTH ? lengths[length] !== 0 : longLengths) {
        if (length === 0) id = k.emptyId;
        else if (bloom !== undefined) {
          const h = regionHashBytes(bytes, start, end);
          const bit = h >>> HASH_FILTER_SHIFT;
          if ((bloom[bit >>> 5]! & (1 << (bit & 31))) !== 0) id = k.resolveHashedBytes(bytes, text, start, end, h);
        } else {
          const mixed = signatureBytes(bytes, start, end, 0);
          const bit = mixed >>> filterShift;
          if ((sigBits[bit >>> 5]! & (1 << (bit & 31))) !== 0) {
            const entry = sigs[mixed >>> shift]!;
            if (entry !== 0) id = k.resolveSignatureBytes(bytes, text, start, end, entry);
          }
        }
      }
    }
    previousId = id;
    if (id !== 0) counts[id]!++;
  }
}

/** An ASCII blank a trimmed tier strips (space, tab, a line break): `isBlankCode` below 0x80. */
function isBlankByte(c: number): boolean {
  return c === 0x20 || c === 0x09 || (c >= 0x0a && c <= 0x0d);
}

