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
  return text.indexOf("\r") < 0 ? scanLf(text) : scanMixed(text);
}

function grow<T extends Int32Array | Uint8Array>(array: T, make: (size: number) => T): T {
  const grown = make(array.length * 2);
  grown.set(array);
  return grown;
}

/** A first guess of the line count, so that growing is rare (lines of ~32 characters). */
function initialCapacity(length: number): number {
  return (length >>> 5) + 64;
}

// No CR anywhere: every ending is LF, so only the starts need recording.
function scanLf(text: string): ScannedLines {
  const length = text.length;
  let starts = new Int32Array(initialCapacity(length));
  let count = 0;
  let pos = 0;
  let finalNewline = true;
  while (pos < length) {
    if (count + 1 >= starts.length) starts = grow(starts, (size) => new Int32Array(size));
    starts[count++] = pos;
    const lf = text.indexOf("\n", pos);
    if (lf < 0) {
      finalNewline = false;
      break;
    }
    pos = lf + 1;
  }
  starts[count] = length;
  const eols = new Uint8Array(count).fill(1);
  if (!finalNewline) eols[count - 1] = 0;
  return { starts: starts.subarray(0, count + 1), eols, dominant: "\n", uniform: true };
}

// Some CR: two native cursors, the next CR and the next LF, decide each ending.
function scanMixed(text: string): ScannedLines {
  const length = text.length;
  let starts = new Int32Array(initialCapacity(length));
  let eols = new Uint8Array(starts.length);
  const counts = [0, 0, 0, 0];
  let count = 0;
  let pos = 0;
  let nextCr = text.indexOf("\r");
  let nextLf = text.indexOf("\n");
  while (pos < length) {
    if (count + 1 >= starts.length) {
      starts = grow(starts, (size) => new Int32Array(size));
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
