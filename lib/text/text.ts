/**
 * Layer `lib/text/` (pure, the bottom layer): bytes ⇄ lines, line endings,
 * BOM, UTF-8 validation, `N:hh` line ids, SHA-256, unified diffs and bounded
 * excerpts. It may import only its own files, `lib/types.ts`,
 * `lib/failure.ts`, and no `node:` module: the pure core runs in browsers
 * (checked by test/unit/layering.test.ts).
 *
 * This file: the text model (SPEC §5.3): bytes ⇄ logical lines, keeping every line's
 * own ending, the UTF-8 BOM and the final-newline state.
 *
 * Decisions where the spec is silent (also in docs/matching.md):
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
 * - A single-byte encoding (`latin1`, `windows-1252`; lib/text/encoding.ts)
 *   is asked for by the caller, never guessed. It has no BOM (bytes EF BB BF
 *   are three characters of the first line) and every byte is one
 *   character, so untouched stretches are still copied as byte slices and
 *   only new text is encoded, in the file's own encoding.
 *
 * @module
 */
import {
  EOL_CHARS,
  type EolCode,
  lfScanOf,
  scanLfLines,
  scanLines,
  type ScannedLines,
  scannedLine,
  splitScannedLines,
} from "./line_scan.ts";
import type { ContentPiece, LineEdit } from "../types.ts";
import type { LineSource } from "./excerpt.ts";
import { firstInvalidUtf8, lineNumberAt } from "./utf8_errors.ts";
import { decodeSingleByte, encodeSingleByte, isSingleByte, type TextEncodingName } from "./encoding.ts";

export type { EolCode } from "./line_scan.ts";

/** A decoded UTF-8 text file, split into logical lines. */
export interface TextFile {
  /**
   * Logical lines without endings; a file ending in a newline has no
   * trailing `""` line; empty file → `[]`. Made on first read (a million
   * line strings cost more than decoding): code that only needs a few lines
   * uses {@linkcode lineOf}, and the line count is `eols.length`.
   */
  readonly lines: string[];
  /** {@linkcode EolCode} per line (its length is the line count). */
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
  /** The encoding the bytes were decoded with (absent: UTF-8); new text is encoded in it. */
  readonly encoding?: TextEncodingName;
  /**
   * The decoded text (without the BOM). The matcher scans this one flat
   * string instead of reading every line.
   */
  readonly text: string;
  /**
   * Offset in `text` (UTF-16 code units) where each line starts, then
   * `text.length`: one entry more than there are lines.
   */
  readonly lineStarts: Int32Array;
}

/**
 * The result of {@linkcode decodeText}: the file, or why not — its bytes
 * are not UTF-8 (`invalid_utf8`: the first bad sequence's line and
 * offset), or they are, but their text is longer than this JavaScript
 * engine can hold in one string (`too_long`: V8 — Node, Deno — holds at
 * most 536,870,888 UTF-16 code units, about 512 MiB of ASCII; JSC — Bun —
 * 2,147,483,647). `maxChars` is the engine's bound when its error said it.
 */
export type DecodeResult =
  | { ok: true; file: TextFile }
  | { ok: false; reason: "invalid_utf8"; line: number; byteOffset: number }
  | { ok: false; reason: "too_long"; byteLength: number; maxChars?: number };

const BOM_LENGTH = 3;
const LF = 0x0a;
const CR = 0x0d;
const EOL_TEXT = ["", "\n", "\r\n", "\r"] as const;

const fatalDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

function hasBom(bytes: Uint8Array): boolean {
  return bytes.length >= BOM_LENGTH && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/**
 * A {@linkcode TextFile} whose lines are found on first use and whose
 * `lines` array is made on first read. A text without CR can hand its
 * scanning to a caller that reads every line anyway (the matcher), which
 * then gives the line starts back ({@linkcode adoptLfLineStarts}).
 */
class DecodedTextFile implements TextFile {
  readonly bom: boolean;
  readonly finalNewline: boolean;
  readonly dominantEol: "\n" | "\r\n" | "\r";
  readonly bytes: Uint8Array;
  readonly ascii: boolean;
  readonly text: string;
  readonly encoding: TextEncodingName;
  /** No CR anywhere: every line ends with LF (or, the last, with nothing). */
  readonly lfOnly: boolean;
  #scan: ScannedLines | undefined;
  #lines: string[] | undefined;

  constructor(bytes: Uint8Array, bom: boolean, ascii: boolean, text: string, encoding: TextEncodingName = "utf-8") {
    this.bom = bom;
    this.bytes = bytes;
    this.ascii = ascii;
    this.text = text;
    this.encoding = encoding;
    this.lfOnly = text.indexOf("\r") < 0;
    if (this.lfOnly) {
      // Known without finding the lines.
      this.dominantEol = "\n";
      this.finalNewline = text.length > 0 && text.charCodeAt(text.length - 1) === 0x0a;
    } else {
      const scan = scanLines(text);
      this.#scan = scan;
      this.dominantEol = scan.dominant;
      this.finalNewline = scan.eols.length > 0 && scan.eols[scan.eols.length - 1] !== 0;
    }
  }

  /** The `lines` array exists already. */
  get madeLines(): boolean {
    return this.#lines !== undefined;
  }

  /** The lines have been found. */
  get scanned(): boolean {
    return this.#scan !== undefined;
  }

  #scanned(): ScannedLines {
    this.#scan ??= scanLfLines(this.text);
    return this.#scan;
  }

  get eols(): Uint8Array {
    return this.#scanned().eols;
  }

  get lineStarts(): Int32Array {
    return this.#scanned().starts;
  }

  get lines(): string[] {
    this.#lines ??= splitScannedLines(this.text, this.#scanned());
    return this.#lines;
  }

  /** Line `i`, from the array when it exists, else sliced from the text. */
  line(i: number): string {
    return this.#lines !== undefined ? this.#lines[i]! : scannedLine(this.text, this.#scanned(), i);
  }

  /** Take the line starts a caller found in the text (LF-only texts, before they are scanned here). */
  adopt(starts: Int32Array): void {
    if (this.#scan !== undefined || !this.lfOnly) throw new Error("adoptLfLineStarts: the file's lines are already known or it holds a CR");
    if (starts.length === 0 || starts[starts.length - 1] !== this.text.length) {
      throw new RangeError("adoptLfLineStarts: the starts must end with the text length");
    }
    this.#scan = lfScanOf(this.text, starts);
  }
}

/**
 * Line `i` of a decoded file (0-based) without materialising `file.lines`.
 *
 * @example
 * ```ts
 * const r = decodeText(new TextEncoder().encode("a\r\nb"));
 * if (r.ok) lineOf(r.file, 1); // "b"
 * ```
 */
export function lineOf(file: TextFile, i: number): string {
  if (file instanceof DecodedTextFile) return file.line(i);
  return scannedLine(file.text, { starts: file.lineStarts, eols: file.eols }, i);
}

/**
 * The lines of a decoded file as a {@linkcode LineSource}: its `lines` when
 * they were made already, else a view that slices each line read.
 *
 * @example
 * ```ts
 * const r = decodeText(new TextEncoder().encode("a\nb\n"));
 * if (r.ok) lineSourceOf(r.file).at(1); // "b"
 * ```
 */
export function lineSourceOf(file: TextFile): LineSource {
  if (file instanceof DecodedTextFile && file.madeLines) return file.lines;
  const length = file.eols.length;
  return { length, at: (i: number) => (i >= 0 && i < length ? lineOf(file, i) : undefined) };
}

/**
 * The text of a decoded file whose lines all end with LF and have not been
 * found yet (`undefined` otherwise): a caller that reads every line anyway
 * can find their starts as it goes, in the same pass, and hand them over
 * with {@linkcode adoptLfLineStarts} instead of the file scanning again.
 *
 * @example
 * ```ts
 * const r = decodeText(new TextEncoder().encode("a\nb\n"));
 * if (r.ok) unscannedLfText(r.file); // "a\nb\n"
 * ```
 */
export function unscannedLfText(file: TextFile): string | undefined {
  return file instanceof DecodedTextFile && file.lfOnly && !file.scanned ? file.text : undefined;
}

/**
 * Give a file from {@linkcode unscannedLfText} the starts of its lines
 * (one entry per line, then the text length). Throws if its lines are
 * already known (a programmer error).
 *
 * @example
 * ```ts
 * const r = decodeText(new TextEncoder().encode("a\nb\n"));
 * if (r.ok) adoptLfLineStarts(r.file, new Int32Array([0, 2, 4]));
 * ```
 */
export function adoptLfLineStarts(file: TextFile, starts: Int32Array): void {
  if (!(file instanceof DecodedTextFile)) throw new TypeError("adoptLfLineStarts: not a file from decodeText");
  file.adopt(starts);
}

/**
 * Decode UTF-8 bytes into lines. Invalid UTF-8 gives the first bad
 * sequence's 1-based line and 0-based byte offset. With a single-byte
 * `encoding` (`latin1`, `windows-1252`) every byte is one character and
 * decoding never fails (lib/text/encoding.ts).
 *
 * @example
 * ```ts
 * const r = decodeText(new TextEncoder().encode("a\r\nb"));
 * if (r.ok) r.file.lines; // ["a", "b"], eols [2, 0], finalNewline false
 * decodeText(new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]), "latin1"); // ok, lines ["café"]
 * ```
 */
export function decodeText(bytes: Uint8Array, encoding: TextEncodingName = "utf-8"): DecodeResult {
  if (!(bytes instanceof Uint8Array)) throw new TypeError("decodeText: bytes must be a Uint8Array");
  if (isSingleByte(encoding)) return decodeSingleByteText(bytes, encoding);
  const bom = hasBom(bytes);
  const body = bom ? bytes.subarray(BOM_LENGTH) : bytes;
  let text: string;
  try {
    text = fatalDecoder.decode(body);
  } catch (error) {
    // A decoder that gives up on valid UTF-8 could not make the string (V8:
    // ERR_STRING_TOO_LONG "Cannot create a string longer than 0x1fffffe8
    // characters"; JSC: "Out of memory"): never report that as bad bytes.
    const said = error instanceof Error ? /longer than (0x[0-9a-f]+|\d+) characters/i.exec(error.message) : null;
    const offset = said === null ? firstInvalidUtf8(bytes, bom ? BOM_LENGTH : 0) : bytes.length;
    if (offset < bytes.length) return { ok: false, reason: "invalid_utf8", line: lineNumberAt(bytes, offset), byteOffset: offset };
    return { ok: false, reason: "too_long", byteLength: bytes.length, ...(said !== null ? { maxChars: Number(said[1]) } : {}) };
  }
  const ascii = text.length === body.length;
  return { ok: true, file: new DecodedTextFile(bytes, bom, ascii, text) };
}

function decodeSingleByteText(bytes: Uint8Array, encoding: "latin1" | "windows-1252"): DecodeResult {
  let text: string;
  try {
    text = decodeSingleByte(bytes, encoding);
  } catch (error) {
    // One character per byte: only the engine's longest string can stop it.
    if (error instanceof RangeError) return { ok: false, reason: "too_long", byteLength: bytes.length };
    throw error;
  }
  // `ascii` promises that the bytes are the text's code units in UTF-8 too
  // (the matcher then scans the bytes): only true when no byte is ≥ 0x80.
  let ascii = true;
  for (let i = 0; i < bytes.length && ascii; i++) if (bytes[i]! >= 0x80) ascii = false;
  return { ok: true, file: new DecodedTextFile(bytes, false, ascii, text, encoding) };
}

/** How new text of `file` becomes bytes: UTF-8, or the file's single-byte encoding. */
function encoderOf(file: TextFile): (text: string) => Uint8Array {
  const encoding = file.encoding;
  if (isSingleByte(encoding)) return (text) => encodeSingleByte(text, encoding);
  return (text) => encoder.encode(text);
}

/**
 * Byte offsets of line starts. In an ASCII file they are the character
 * offsets (after the BOM); other files walk forward from the last answer,
 * finding each ending with a native byte search.
 */
class LineOffsets {
  #line = 0;
  #pos: number;
  readonly #file: TextFile;
  readonly #base: number;
  readonly #ascii: boolean;

  constructor(file: TextFile) {
    this.#file = file;
    this.#base = file.bom ? BOM_LENGTH : 0;
    this.#pos = this.#base;
    // In a single-byte encoding every character is one byte (and there is no BOM).
    this.#ascii = file.ascii === true || isSingleByte(file.encoding);
  }

  /** Byte offset where line `k` starts (`k` = line count: end of the bytes). `k` never decreases. */
  startOf(k: number): number {
    const { eols, bytes } = this.#file;
    if (k >= eols.length) return bytes.length;
    if (this.#ascii) return this.#base + this.#file.lineStarts[k]!;
    let pos = this.#pos;
    for (let i = this.#line; i < k; i++) {
      const eol = eols[i]!;
      pos = bytes.indexOf(eol === 3 ? CR : LF, pos) + 1;
    }
    this.#line = k;
    this.#pos = pos;
    return pos;
  }
}

function checkEdits(file: TextFile, edits: readonly LineEdit[]): void {
  let previousEnd = 0;
  for (const edit of edits) {
    if (!(edit.start >= previousEnd && edit.end >= edit.start && edit.end <= file.eols.length)) {
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
  return renderTextPieces(file, edits).bytes;
}

/** The result of {@linkcode renderTextPieces}. */
export interface RenderedText {
  /** The new content. */
  bytes: Uint8Array;
  /**
   * How `bytes` is made: byte ranges of `file.bytes` and of `bytes` itself,
   * in order, adjacent ranges of the same kind merged.
   */
  pieces: ContentPiece[];
}

/**
 * {@linkcode renderText}, also telling which stretches of the result are
 * byte ranges of the old file and which are new. The slices renderText
 * copies are those ranges already, so recording them costs one entry per
 * slice and no pass over the bytes.
 *
 * @example
 * ```ts
 * const r = decodeText(new TextEncoder().encode("a\nb\nc\n"));
 * if (r.ok) renderTextPieces(r.file, [{ start: 1, end: 2, replacement: [{ text: "B" }] }]).pieces;
 * // [{ source: [0, 2] }, { fresh: [2, 4] }, { source: [4, 6] }]
 * ```
 */
export function renderTextPieces(file: TextFile, edits: readonly LineEdit[]): RenderedText {
  const { parts, length, pieces } = renderTextParts(file, edits);
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return { bytes: out, pieces };
}

/** The result of {@linkcode renderTextParts}. */
export interface RenderedParts {
  /** The new content in order: views of `file.bytes` and small new arrays; they concatenate to it. */
  parts: Uint8Array[];
  /** Total bytes of the parts. */
  length: number;
  /** As in {@linkcode RenderedText}. */
  pieces: ContentPiece[];
}

/**
 * {@linkcode renderTextPieces} without the join: the new content as the
 * parts it is made of (mostly views of the old bytes), so a caller that
 * needs only its SHA-256 and a few new stretches (a delta commit) never
 * holds a second full-size copy of a large file.
 *
 * @example
 * ```ts
 * const r = decodeText(new TextEncoder().encode("a\nb\nc\n"));
 * if (r.ok) renderTextParts(r.file, [{ start: 1, end: 2, replacement: [{ text: "B" }] }]).length; // 6
 * ```
 */
export function renderTextParts(file: TextFile, edits: readonly LineEdit[]): RenderedParts {
  checkEdits(file, edits);
  const { bytes, eols } = file;
  const offsets = new LineOffsets(file);
  const encode = encoderOf(file);
  const dominant = encode(file.dominantEol);
  const parts: Uint8Array[] = [];
  // Per part: where it starts in the old bytes, or -1 for new bytes.
  const origins: number[] = [];
  let pendingText = "";
  // The last emitted line has no ending yet (it was the old last line).
  let pendingNoEnding = false;
  let lastEndingLength = 0;
  let emittedAny = false;

  const flushText = (): void => {
    if (pendingText.length > 0) {
      parts.push(encode(pendingText));
      origins.push(-1);
    }
    pendingText = "";
  };
  const emitOriginal = (from: number, to: number): void => {
    if (from >= to) return;
    flushText();
    if (pendingNoEnding) {
      parts.push(dominant);
      origins.push(-1);
    }
    const a = offsets.startOf(from);
    const b = offsets.startOf(to);
    parts.push(bytes.subarray(a, b));
    origins.push(a);
    const eol = eols[to - 1] as EolCode;
    pendingNoEnding = eol === 0;
    lastEndingLength = EOL_CHARS[eol];
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

  if (file.bom) {
    parts.push(bytes.subarray(0, BOM_LENGTH));
    origins.push(0);
  }
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
  emitOriginal(cursor, file.eols.length);
  flushText();

  const wantsFinalNewline = file.eols.length === 0 || file.finalNewline;
  if (emittedAny && !wantsFinalNewline && !pendingNoEnding) {
    const lastPart = parts[parts.length - 1]!;
    parts[parts.length - 1] = lastPart.subarray(0, lastPart.length - lastEndingLength);
  }
  const pieces: ContentPiece[] = [];
  let last: [number, number] | null = null;
  let lastIsSource = false;
  let at = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.length > 0) {
      const origin = origins[i]!;
      const isSource = origin >= 0;
      // Merge with the previous piece when it continues it: new bytes
      // always do (they are contiguous in the output), old bytes only when
      // they follow on in the old file (a BOM and the first lines).
      if (last !== null && lastIsSource === isSource && (!isSource || last[1] === origin)) {
        last[1] += part.length;
      } else {
        last = isSource ? [origin, origin + part.length] : [at, at + part.length];
        lastIsSource = isSource;
        pieces.push(isSource ? { source: last } : { fresh: last });
      }
    }
    at += part.length;
  }
  return { parts, length: at, pieces };
}

/**
 * The bytes of an added file: `\n` endings and a final newline; no lines
 * give an empty file. UTF-8 unless a single-byte `encoding` is named (its
 * characters checked by the caller: see lib/text/encoding.ts).
 *
 * @example
 * ```ts
 * newFileBytes(["a", "b"]); // bytes of "a\nb\n"
 * newFileBytes(["café"], "latin1"); // 63 61 66 e9 0a
 * ```
 */
export function newFileBytes(lines: readonly string[], encoding: TextEncodingName = "utf-8"): Uint8Array {
  if (lines.length === 0) return new Uint8Array(0);
  const text = lines.join("\n") + "\n";
  return isSingleByte(encoding) ? encodeSingleByte(text, encoding) : encoder.encode(text);
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
