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
import { EOL_CHARS, type EolCode, grownInt32, lineCapacityFor } from "../text/line_scan.ts";
import { isWhitespaceCode } from "./normalize.ts";
import { MAX_TRACKED_LENGTH, signature, type TierKeyer } from "./tier_keyer.ts";

export { TierKeyer } from "./tier_keyer.ts";

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
  const { lengths, sigs, counts } = k;
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
  starts[count] = total;
  k.trimIds(count);
  return starts.subarray(0, count + 1);
}

function sameChars(text: string, a: number, b: number, length: number): boolean {
  for (let j = 0; j < length; j++) if (text.charCodeAt(a + j) !== text.charCodeAt(b + j)) return false;
  return true;
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
  return sameChars(text, start, previous, length);
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

