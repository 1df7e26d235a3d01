/**
 * The text model (SPEC §5.3): bytes ⇄ logical lines, keeping every line's
 * own ending, the UTF-8 BOM and the final-newline state.
 *
 * Decisions where the spec is silent (also in the README):
 * - Line endings are LF, CRLF and lone CR; a CR directly followed by LF is one
 *   CRLF ending, never a CR line plus an empty LF line.
 * - The dominant ending is the most frequent one; ties (and files without
 *   any ending) resolve in the order LF, CRLF, lone CR.
 * - An empty file (or one holding only a BOM) counts as "ends with a
 *   newline" for new content, exactly like an added file.
 * - Deleting every line keeps a BOM that was there: the BOM is an encoding
 *   property of the file, like its mode, not part of its first line.
 * - Invalid UTF-8 reports the 0-based byte offset (counting the BOM) of the
 *   first ill-formed sequence and its 1-based line.
 *
 * @module
 */
import type { LineEdit } from "./types.ts";

/** A line's ending: 0 none (last line without final newline), 1 LF, 2 CRLF, 3 lone CR. */
export type EolCode = 0 | 1 | 2 | 3;

/** A decoded UTF-8 text file, split into logical lines. */
export interface TextFile {
  /** Logical lines without endings; a file ending in a newline has no trailing `""` line; empty file → `[]`. */
  readonly lines: string[];
  /** {@linkcode EolCode} per line. */
  readonly eols: Uint8Array;
  /** A UTF-8 BOM was present (it is not part of `lines[0]`). */
  readonly bom: boolean;
  /** The last line has an ending. False for an empty file. */
  readonly finalNewline: boolean;
  /** The most frequent ending; LF when there is none; ties resolve LF, CRLF, CR. */
  readonly dominantEol: "\n" | "\r\n" | "\r";
  /** The original bytes, for slice copies. */
  readonly bytes: Uint8Array;
  /** Every character is ASCII, so character offsets equal byte offsets (after the BOM). */
  readonly ascii?: boolean;
  /**
   * The decoded text (without the BOM) the lines were split from. It costs
   * no memory (the lines are slices of it) and lets the matcher scan one flat
   * string instead of reading every line.
   */
  readonly text?: string;
}

/** The result of {@linkcode decodeText}. */
export type DecodeResult =
  | { ok: true; file: TextFile }
  | { ok: false; line: number; byteOffset: number };

const BOM_LENGTH = 3;
const LF = 0x0a;
const CR = 0x0d;
const EOL_TEXT = ["", "\n", "\r\n", "\r"] as const;
const EOL_LENGTH = [0, 1, 2, 1] as const;

const fatalDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

function hasBom(bytes: Uint8Array): boolean {
  return bytes.length >= BOM_LENGTH && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/**
 * Decode UTF-8 bytes into lines. Invalid UTF-8 gives the first bad
 * sequence's 1-based line and 0-based byte offset.
 *
 * @example
 * ```ts
 * const r = decodeText(new TextEncoder().encode("a\r\nb"));
 * if (r.ok) r.file.lines; // ["a", "b"], eols [2, 0], finalNewline false
 * ```
 */
export function decodeText(bytes: Uint8Array): DecodeResult {
  if (!(bytes instanceof Uint8Array)) throw new TypeError("decodeText: bytes must be a Uint8Array");
  const bom = hasBom(bytes);
  const body = bom ? bytes.subarray(BOM_LENGTH) : bytes;
  let text: string;
  try {
    text = fatalDecoder.decode(body);
  } catch {
    const offset = firstInvalidUtf8(bytes, bom ? BOM_LENGTH : 0);
    return { ok: false, line: lineNumberAt(bytes, offset), byteOffset: offset };
  }
  const ascii = text.length === body.length;
  if (text.length === 0) {
    return {
      ok: true,
      file: { lines: [], eols: new Uint8Array(0), bom, finalNewline: false, dominantEol: "\n", bytes, ascii, text },
    };
  }
  const split = !text.includes("\r")
    ? splitUniform(text, "\n")
    : STRAY_LF_OR_CR.test(text)
    ? splitMixed(text)
    : splitUniform(text, "\r\n");
  return {
    ok: true,
    file: {
      lines: split.lines,
      eols: split.eols,
      bom,
      finalNewline: split.eols[split.eols.length - 1] !== 0,
      dominantEol: split.dominant,
      bytes,
      ascii,
      text,
    },
  };
}

interface SplitLines {
  lines: string[];
  eols: Uint8Array;
  dominant: "\n" | "\r\n" | "\r";
}

// An LF not preceded by CR, or a CR not followed by LF: the file is not pure CRLF.
const STRAY_LF_OR_CR = /\r(?!\n)|(?<!\r)\n/;

// The common cases, all-LF or all-CRLF: one native split, no per-line work
// (the lines stay lazy substrings until someone reads them).
function splitUniform(text: string, eol: "\n" | "\r\n"): SplitLines {
  const lines = text.split(eol);
  let finalNewline = false;
  if (lines[lines.length - 1]!.length === 0) {
    lines.pop();
    finalNewline = true;
  }
  const eols = new Uint8Array(lines.length).fill(eol === "\n" ? 1 : 2);
  if (!finalNewline) eols[lines.length - 1] = 0;
  return { lines, eols, dominant: eol };
}

// Files holding a CR: split on LF first, then cut each piece at its CRs.
function splitMixed(text: string): SplitLines {
  const pieces = text.split("\n");
  const lines: string[] = [];
  let eols = new Uint8Array(pieces.length + 16);
  const counts = [0, 0, 0, 0];
  const push = (line: string, eol: EolCode): void => {
    if (lines.length === eols.length) {
      const grown = new Uint8Array(eols.length * 2);
      grown.set(eols);
      eols = grown;
    }
    eols[lines.length] = eol;
    lines.push(line);
    counts[eol]!++;
  };
  const last = pieces.length - 1;
  for (let p = 0; p <= last; p++) {
    const piece = pieces[p]!;
    const isLast = p === last;
    if (piece.indexOf("\r") < 0) {
      if (!isLast) push(piece, 1);
      else if (piece.length > 0) push(piece, 0);
      continue;
    }
    const parts = piece.split("\r");
    const endsWithCr = parts[parts.length - 1]!.length === 0;
    const count = endsWithCr ? parts.length - 1 : parts.length;
    for (let i = 0; i < count; i++) {
      const lastOfPiece = i === count - 1;
      if (!lastOfPiece) push(parts[i]!, 3);
      else if (endsWithCr) push(parts[i]!, isLast ? 3 : 2);
      else push(parts[i]!, isLast ? 0 : 1);
    }
  }
  const [, lf, crlf, cr] = counts as [number, number, number, number];
  const dominant = lf >= crlf && lf >= cr ? "\n" : crlf >= cr ? "\r\n" : "\r";
  return { lines, eols: eols.subarray(0, lines.length), dominant };
}

/**
 * Offset of the first byte of the first ill-formed UTF-8 sequence at or
 * after `start` (Unicode Table 3-7), or `bytes.length` if there is none.
 */
function firstInvalidUtf8(bytes: Uint8Array, start: number): number {
  const n = bytes.length;
  let i = start;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    if (i + need >= n) return i;
    const second = bytes[i + 1]!;
    if (second < lo || second > hi) return i;
    for (let k = 2; k <= need; k++) {
      const c = bytes[i + k]!;
      if (c < 0x80 || c > 0xbf) return i;
    }
    i += need + 1;
  }
  return n;
}

/** 1-based line of byte `offset`: line breaks before it (CRLF counts once). */
function lineNumberAt(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) {
    const b = bytes[i];
    if (b === LF) line++;
    else if (b === CR && bytes[i + 1] !== LF) line++;
  }
  return line;
}

/**
 * Walks byte offsets of line starts forward. ASCII files add lengths; other
 * files find each ending with a native byte search.
 */
class LineOffsets {
  #line = 0;
  #pos: number;
  readonly #file: TextFile;
  readonly #ascii: boolean;

  constructor(file: TextFile) {
    this.#file = file;
    this.#pos = file.bom ? BOM_LENGTH : 0;
    this.#ascii = file.ascii === true;
  }

  /** Byte offset where line `k` starts (`k === lines.length`: end of the bytes). `k` never decreases. */
  startOf(k: number): number {
    const { lines, eols, bytes } = this.#file;
    if (k >= lines.length) return bytes.length;
    let pos = this.#pos;
    if (this.#ascii) {
      for (let i = this.#line; i < k; i++) pos += lines[i]!.length + EOL_LENGTH[eols[i] as EolCode];
    } else {
      for (let i = this.#line; i < k; i++) {
        const eol = eols[i]!;
        pos = bytes.indexOf(eol === 3 ? CR : LF, pos) + 1;
      }
    }
    this.#line = k;
    this.#pos = pos;
    return pos;
  }
}

function checkEdits(file: TextFile, edits: readonly LineEdit[]): void {
  let previousEnd = 0;
  for (const edit of edits) {
    if (!(edit.start >= previousEnd && edit.end >= edit.start && edit.end <= file.lines.length)) {
      throw new RangeError(`renderText: edits must be sorted, non-overlapping and within the file (edit ${edit.start}-${edit.end})`);
    }
    let previousKeep = edit.start - 1;
    for (const out of edit.replacement) {
      if ("keep" in out) {
        if (!(out.keep > previousKeep && out.keep < edit.end)) {
          throw new RangeError(`renderText: keep ${out.keep} must be ascending within ${edit.start}-${edit.end}`);
        }
        previousKeep = out.keep;
      }
    }
    previousEnd = edit.end;
  }
}

/**
 * Apply sorted, non-overlapping line edits and re-encode, copying untouched
 * stretches as byte slices of the original. Kept lines keep their text and
 * ending; new lines take the dominant ending; the BOM and the final-newline
 * state are kept.
 *
 * @example
 * ```ts
 * const r = decodeText(new TextEncoder().encode("a\r\nb\r\n"));
 * if (r.ok) renderText(r.file, [{ start: 1, end: 2, replacement: [{ text: "B" }] }]); // "a\r\nB\r\n"
 * ```
 */
export function renderText(file: TextFile, edits: readonly LineEdit[]): Uint8Array {
  checkEdits(file, edits);
  const { bytes, eols } = file;
  const offsets = new LineOffsets(file);
  const dominant = encoder.encode(file.dominantEol);
  const parts: Uint8Array[] = [];
  let pendingText = "";
  // The last emitted line has no ending yet (it was the old last line).
  let pendingNoEnding = false;
  let lastEndingLength = 0;
  let emittedAny = false;

  const flushText = (): void => {
    if (pendingText.length > 0) parts.push(encoder.encode(pendingText));
    pendingText = "";
  };
  const emitOriginal = (from: number, to: number): void => {
    if (from >= to) return;
    flushText();
    if (pendingNoEnding) parts.push(dominant);
    const a = offsets.startOf(from);
    const b = offsets.startOf(to);
    parts.push(bytes.subarray(a, b));
    const eol = eols[to - 1] as EolCode;
    pendingNoEnding = eol === 0;
    lastEndingLength = EOL_LENGTH[eol];
    emittedAny = true;
  };
  const emitText = (text: string): void => {
    if (pendingNoEnding) {
      pendingText += file.dominantEol;
      pendingNoEnding = false;
    }
    pendingText += text + file.dominantEol;
    lastEndingLength = dominant.length;
    emittedAny = true;
  };

  if (file.bom) parts.push(bytes.subarray(0, BOM_LENGTH));
  let cursor = 0;
  for (const edit of edits) {
    emitOriginal(cursor, edit.start);
    let runStart = -1;
    let runEnd = -1;
    for (const out of edit.replacement) {
      if ("keep" in out) {
        if (out.keep === runEnd) runEnd++;
        else {
          emitOriginal(runStart, runEnd);
          runStart = out.keep;
          runEnd = out.keep + 1;
        }
      } else {
        emitOriginal(runStart, runEnd);
        runStart = runEnd = -1;
        emitText(out.text);
      }
    }
    emitOriginal(runStart, runEnd);
    cursor = edit.end;
  }
  emitOriginal(cursor, file.lines.length);
  flushText();

  const wantsFinalNewline = file.lines.length === 0 || file.finalNewline;
  if (emittedAny && !wantsFinalNewline && !pendingNoEnding) {
    const lastPart = parts[parts.length - 1]!;
    parts[parts.length - 1] = lastPart.subarray(0, lastPart.length - lastEndingLength);
  }
  let total = 0;
  for (const part of parts) total += part.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * The bytes of an added file: `\n` endings and a final newline; no lines
 * give an empty file.
 *
 * @example
 * ```ts
 * newFileBytes(["a", "b"]); // bytes of "a\nb\n"
 * ```
 */
export function newFileBytes(lines: readonly string[]): Uint8Array {
  if (lines.length === 0) return new Uint8Array(0);
  return encoder.encode(lines.join("\n") + "\n");
}

/**
 * The ending text of an {@linkcode EolCode}.
 *
 * @example
 * ```ts
 * eolText(2); // "\r\n"
 * ```
 */
export function eolText(code: EolCode): "" | "\n" | "\r\n" | "\r" {
  return EOL_TEXT[code];
}
