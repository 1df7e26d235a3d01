/**
 * Finding the lines of decoded text without making a string per line
 * (SPEC §5.3, §5.5).
 *
 * A million-line file split into a million strings costs more than decoding
 * it, and keeps the garbage collector busy for everything that follows. The
 * scan here records where each line starts (native `indexOf` per line, no
 * per-character JS loop) and each line's ending; line strings are made only
 * for lines somebody reads, or all at once by {@linkcode splitScannedLines}
 * when a caller wants the whole array.
 *
 * Endings: LF, CRLF and lone CR; a CR directly followed by LF is one CRLF
 * ending. The dominant ending is the most frequent one; ties (and text
 * without any ending) resolve in the order LF, CRLF, lone CR.
 *
 * @module
 */

/** A line's ending: 0 none (last line without final newline), 1 LF, 2 CRLF, 3 lone CR. */
export type EolCode = 0 | 1 | 2 | 3;

/** Length of each {@linkcode EolCode}'s ending in UTF-16 code units (and in bytes). */
export const EOL_CHARS: readonly [0, 1, 2, 1] = [0, 1, 2, 1];

/** Where the lines of a text are. */
export interface ScannedLines {
  /**
   * Offset (UTF-16 code units) where each line starts, then `text.length`:
   * one entry more than there are lines. Line `i` is
   * `text.slice(starts[i], starts[i + 1] - EOL_CHARS[eols[i]])`.
   */
  starts: Int32Array;
  /** {@linkcode EolCode} per line. */
  eols: Uint8Array;
  /** The most frequent ending (see the module notes for ties). */
  dominant: "\n" | "\r\n" | "\r";
  /** Every line ends with the dominant ending, except perhaps the last, which may have none. */
  uniform: boolean;
}

/**
 * Scan `text` for its lines. An empty text has none; a text ending with a
 * line ending has no empty last line.
 *
 * @example
 * ```ts
 * const s = scanLines("a\r\nb");
 * [...s.starts]; // [0, 3, 4]
 * [...s.eols]; // [2, 0]
 * ```
 */
export function scanLines(text: string): ScannedLines {
  return text.indexOf("\r") < 0 ? scanLfLines(text) : scanMixed(text);
}

function grow<T extends Int32Array | Uint8Array>(array: T, make: (size: number) => T): T {
  const grown = make(array.length * 2);
  grown.set(array);
  return grown;
}

/** Characters sampled from the start of a text to guess its line length. */
const SAMPLE = 1 << 16;

/**
 * A guess of the line count of `text` from the line breaks (LF) in its
 * first 64 Ki characters, with some slack, so that the offset arrays
 * rarely grow: each growth allocates and copies them again, which on a
 * file of short lines (`}`, blank lines) used to happen four or five times.
 * Exact for texts shorter than the sample.
 *
 * @example
 * ```ts
 * lineCapacityFor("}\n".repeat(100)) >= 100; // true
 * ```
 */
export function lineCapacityFor(text: string): number {
  const length = text.length;
  const sample = Math.min(length, SAMPLE);
  let breaks = 0;
  for (let at = text.indexOf("\n"); at >= 0 && at < sample; at = text.indexOf("\n", at + 1)) breaks++;
  if (sample === length) return breaks + 2;
  // A text without LF in the sample (lone-CR endings, one huge line): the old guess.
  const perChar = breaks > 0 ? breaks / sample : 1 / 32;
  return Math.ceil(length * perChar * 1.125) + 64;
}

/**
 * Double an offset array, keeping its contents.
 *
 * @example
 * ```ts
 * grownInt32(new Int32Array([1, 2])).length; // 4
 * ```
 */
export function grownInt32(array: Int32Array): Int32Array {
  return grow(array, (size) => new Int32Array(size));
}

/**
 * {@linkcode scanLines} for a text known to hold no CR: every ending is
 * LF, so only the starts need recording.
 *
 * @example
 * ```ts
 * [...scanLfLines("a\nb").starts]; // [0, 2, 3]
 * ```
 */
export function scanLfLines(text: string): ScannedLines {
  const length = text.length;
  let starts: Int32Array = new Int32Array(lineCapacityFor(text));
  let count = 0;
  let pos = 0;
  while (pos < length) {
    if (count + 1 >= starts.length) starts = grownInt32(starts);
    starts[count++] = pos;
    const lf = text.indexOf("\n", pos);
    if (lf < 0) break;
    pos = lf + 1;
  }
  starts[count] = length;
  return lfScanOf(text, starts.subarray(0, count + 1));
}

/**
 * The scan of a text without any CR from its line starts (found by a
 * caller that read every line anyway): every ending is LF, except that the
 * last line has none when the text does not end with one.
 *
 * @example
 * ```ts
 * [...lfScanOf("a\nb", new Int32Array([0, 2, 3])).eols]; // [1, 0]
 * ```
 */
export function lfScanOf(text: string, starts: Int32Array): ScannedLines {
  const count = starts.length - 1;
  const eols = new Uint8Array(count).fill(1);
  if (count > 0 && text.charCodeAt(text.length - 1) !== 0x0a) eols[count - 1] = 0;
  return { starts, eols, dominant: "\n", uniform: true };
}

// Some CR: two native cursors, the next CR and the next LF, decide each ending.
function scanMixed(text: string): ScannedLines {
  const length = text.length;
  let starts: Int32Array = new Int32Array(lineCapacityFor(text));
  let eols = new Uint8Array(starts.length);
  const counts = [0, 0, 0, 0];
  let count = 0;
  let pos = 0;
  let nextCr = text.indexOf("\r");
  let nextLf = text.indexOf("\n");
  while (pos < length) {
    if (count + 1 >= starts.length) {
      starts = grownInt32(starts);
      eols = grow(eols, (size) => new Uint8Array(size));
    }
    starts[count] = pos;
    let eol: EolCode;
    if (nextCr >= 0 && (nextLf < 0 || nextCr < nextLf)) {
      if (nextCr + 1 === nextLf) {
        eol = 2;
        pos = nextLf + 1;
        nextLf = text.indexOf("\n", pos);
      } else {
        eol = 3;
        pos = nextCr + 1;
      }
      nextCr = text.indexOf("\r", pos);
    } else if (nextLf >= 0) {
      eol = 1;
      pos = nextLf + 1;
      nextLf = text.indexOf("\n", pos);
    } else {
      eol = 0;
      pos = length;
    }
    eols[count++] = eol;
    counts[eol]!++;
  }
  starts[count] = length;
  const [, lf, crlf, cr] = counts as [number, number, number, number];
  const dominant = lf >= crlf && lf >= cr ? "\n" : crlf >= cr ? "\r\n" : "\r";
  const dominantCount = dominant === "\n" ? lf : dominant === "\r\n" ? crlf : cr;
  return {
    starts: starts.subarray(0, count + 1),
    eols: eols.subarray(0, count),
    dominant,
    uniform: dominantCount + counts[0]! === count,
  };
}

/**
 * Line `i` of a scanned text, without its ending.
 *
 * @example
 * ```ts
 * const text = "a\r\nb";
 * scannedLine(text, scanLines(text), 1); // "b"
 * ```
 */
export function scannedLine(text: string, scan: Pick<ScannedLines, "starts" | "eols">, i: number): string {
  return text.slice(scan.starts[i]!, scan.starts[i + 1]! - EOL_CHARS[scan.eols[i] as EolCode]);
}

/**
 * Every line of a scanned text as a string array: one native split when
 * all endings are alike, otherwise one slice per line.
 *
 * @example
 * ```ts
 * const text = "a\nb\rc";
 * splitScannedLines(text, scanLines(text)); // ["a", "b", "c"]
 * ```
 */
export function splitScannedLines(text: string, scan: ScannedLines): string[] {
  const count = scan.eols.length;
  if (count === 0) return [];
  if (scan.uniform) {
    const lines = text.split(scan.dominant);
    // A final ending leaves an empty piece after it.
    if (lines.length > count) lines.pop();
    if (lines.length === count) return lines;
  }
  const lines = new Array<string>(count);
  for (let i = 0; i < count; i++) lines[i] = scannedLine(text, scan, i);
  return lines;
}
