/**
 * `readWindow`: the read side of the tool pair — a window of a file's lines
 * with the hashes a model needs for its next patch (SPEC §9, §5.6).
 *
 * Pure: bytes in, a value out. A framework that reads files some other way
 * gets the same semantics as the example MCP server's `read_file`.
 *
 * Decisions (the spec is silent):
 * - `text` shows every line of the window followed by `\n`, whatever its
 *   ending in the file (`eol` tells the real endings), except the file's last
 *   line when the file has no final newline. The BOM is never part of `text`.
 * - `contentSha256` hashes the window's bytes exactly as they are in the
 *   file: from the first byte of `startLine` up to and including the ending
 *   of `endLine`, original endings included. A window starting at line 1
 *   starts at byte 0, so it includes a BOM; hence a window covering the whole
 *   file has `contentSha256 === fileSha256`.
 * - Lines are never cut: a patch must quote lines exactly, and a cut line
 *   cannot be quoted. `maxBytes` bounds the window by whole lines instead
 *   (it always holds at least one line, however long).
 * - An empty file has a valid empty window at offset 1 (`startLine` 1,
 *   `endLine` 0); any other offset past the last line is an
 *   `invalid_argument` failure naming the valid range.
 *
 * @module
 */
import { failure } from "../failure.ts";
import { formatLineId } from "../text/line_id.ts";
import { sha256Hex } from "../text/sha256.ts";
import { decodeText } from "../text/text.ts";
import { isSingleByte } from "../text/encoding.ts";
import { utf8Length } from "../patch/paths.ts";
import { checkedEncoding, notUtf8 } from "./not_utf8.ts";
import { textTooLong } from "./text_too_long.ts";
import type { PatchFailure, TextEncodingName } from "../types.ts";

/**
 * Options of {@linkcode readWindow}.
 *
 * @example
 * ```ts
 * readWindow(bytes, { offset: 40, limit: 20, lineIds: true, maxBytes: 128 * 1024, path: "app.py" });
 * ```
 */
export interface ReadWindowOptions {
  /** 1-based first line of the window. Default 1. */
  offset?: number;
  /** Most lines in the window. Default 800. */
  limit?: number;
  /** Prefix each line with its `N:hh|` line id (SPEC §5.6). */
  lineIds?: boolean;
  /**
   * Most UTF-8 bytes of `text` (prefixes included): the window stops before
   * the line that would go past it, but always holds at least one line.
   * Default: no bound.
   */
  maxBytes?: number;
  /** The file's name, for failure messages and `path` fields. */
  path?: string;
  /**
   * How the bytes are decoded: strict UTF-8 (default; other bytes fail
   * `invalid_utf8`), or `"latin1"` / `"windows-1252"` (every byte one
   * character; see `PlanOptions.encoding`). `text` is always a JS string;
   * the SHA-256s are of the bytes.
   */
  encoding?: TextEncodingName;
}

/**
 * How a file's lines end.
 *
 * @example
 * ```ts
 * const w = readWindow(new TextEncoder().encode("a\r\nb\r\n"));
 * if (!("code" in w)) w.eol; // "crlf"
 * ```
 */
export type EolStyle = "lf" | "crlf" | "cr" | "mixed" | "none";

/**
 * A window of a file's lines and the file's identity.
 *
 * @example
 * ```ts
 * const w = readWindow(new TextEncoder().encode("one\ntwo\nthree\n"), { offset: 2, limit: 1 });
 * if (!("code" in w)) console.log(w.text, w.startLine, w.endLine, w.fileSha256); // "two\n" 2 2 "…"
 * ```
 */
export interface ReadWindowResult {
  /** The window's lines, each followed by `\n` (see the module doc), optionally prefixed `N:hh|`. */
  text: string;
  /** Lowercase hex SHA-256 of the whole file: the `expectedSha256` of a patch built on this read. */
  fileSha256: string;
  /** Lowercase hex SHA-256 of the window's bytes exactly as in the file (see the module doc). */
  contentSha256: string;
  /** 1-based first line of the window. */
  startLine: number;
  /** 1-based last line of the window; `startLine - 1` for an empty window. */
  endLine: number;
  /** Lines in the whole file. */
  totalLines: number;
  /** The window stops before the end of the file: read on with `offset = endLine + 1`. */
  truncated: boolean;
  /** The file's line endings: one kind, `mixed`, or `none` (no line has an ending). */
  eol: EolStyle;
  /** The file starts with a UTF-8 byte order mark. */
  bom: boolean;
  /** The file's last line ends with a line ending. */
  finalNewline: boolean;
}

const DEFAULT_LIMIT = 800;
const BOM_LENGTH = 3;
const LF = 0x0a;
const CR = 0x0d;
const EOL_LENGTH = [0, 1, 2, 1] as const;

function checkCount(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`readWindow: ${name} must be an integer >= 1`);
  return value;
}

/** Byte offset just past the ending of the line that starts at `pos` and ends with `eol`. */
function endOfLine(bytes: Uint8Array, pos: number, eol: number): number {
  if (eol === 0) return bytes.length;
  return bytes.indexOf(eol === 3 ? CR : LF, pos) + 1;
}

function eolStyle(eols: Uint8Array): EolStyle {
  const seen = [false, false, false, false];
  for (const eol of eols) seen[eol] = true;
  const kinds = (seen[1] ? 1 : 0) + (seen[2] ? 1 : 0) + (seen[3] ? 1 : 0);
  if (kinds === 0) return "none";
  if (kinds > 1) return "mixed";
  return seen[1] ? "lf" : seen[2] ? "crlf" : "cr";
}

/**
 * A window of `bytes` (a UTF-8 text file) starting at line `offset`, at most
 * `limit` lines (and `maxBytes` bytes of text), with the whole file's
 * SHA-256, the window's SHA-256, the line range, and the file's ending style,
 * BOM and final-newline state.
 *
 * Failures are values: `invalid_utf8` (with the first bad line and byte
 * offset) and `invalid_argument` for an offset past the last line (its
 * message gives `totalLines` and the valid range). A non-integer or
 * non-positive `offset` / `limit` / `maxBytes` is a programmer error and
 * throws.
 *
 * @example
 * ```ts
 * const window = readWindow(new TextEncoder().encode("a\nb\nc\n"), { offset: 2, limit: 1, lineIds: true });
 * if (!("code" in window)) window.text; // "2:" + lineHash("b") + "|b\n"; truncated: true
 * ```
 */
export function readWindow(bytes: Uint8Array, options: ReadWindowOptions = {}): ReadWindowResult | PatchFailure {
  if (!(bytes instanceof Uint8Array)) throw new TypeError("readWindow: bytes must be a Uint8Array");
  const offset = checkCount("offset", options.offset, 1);
  const limit = checkCount("limit", options.limit, DEFAULT_LIMIT);
  const maxBytes = checkCount("maxBytes", options.maxBytes, Number.MAX_SAFE_INTEGER);
  const name = options.path ?? "the file";
  const pathField = options.path !== undefined ? { path: options.path } : {};

  const encoding = checkedEncoding(options.encoding);
  const singleByte = isSingleByte(encoding);
  const decoded = decodeText(bytes, encoding);
  if (!decoded.ok && decoded.reason === "too_long") return textTooLong(name, decoded.byteLength, decoded.maxChars);
  if (!decoded.ok) return { ...notUtf8(name, bytes, decoded.byteOffset, decoded.line), ...pathField };
  const file = decoded.file;
  const total = file.lines.length;
  if (offset > Math.max(total, 1)) {
    const tail = Math.max(1, total - limit + 1);
    return failure(
      "invalid_argument",
      total === 0
        ? `offset ${offset} is past the end of ${name}: the file is empty (0 lines). Read it with offset 1, or add content with a patch.`
        : `offset ${offset} is past the end of ${name}: total_lines is ${total}, so offset must be between 1 and ${total}. To see the end of the file, read with offset ${tail}.`,
      { ...pathField, line: offset },
    );
  }

  const { eols } = file;
  const bodyStart = file.bom ? BOM_LENGTH : 0;
  let pos = bodyStart;
  for (let i = 0; i < offset - 1; i++) pos = endOfLine(bytes, pos, eols[i]!);
  const windowStart = offset === 1 ? 0 : pos;

  const parts: string[] = [];
  let textBytes = 0;
  let end = offset - 1; // 0-based index past the last line taken
  const last = Math.min(total, offset - 1 + limit);
  while (end < last) {
    const eol = eols[end]!;
    const next = endOfLine(bytes, pos, eol);
    // The budget counts the UTF-8 of `text`: in a single-byte file a
    // character above U+007F is one byte there but two or three here.
    const lineBytes = singleByte && !file.ascii ? utf8Length(file.lines[end]!) : next - pos - EOL_LENGTH[eol as 0 | 1 | 2 | 3];
    const prefix = options.lineIds ? `${formatLineId(file.lines[end]!, end + 1)}|` : "";
    const cost = prefix.length + lineBytes + (eol === 0 ? 0 : 1);
    if (end >= offset && textBytes + cost > maxBytes) break;
    parts.push(prefix, file.lines[end]!, eol === 0 ? "" : "\n");
    textBytes += cost;
    pos = next;
    end++;
  }

  return {
    text: parts.join(""),
    fileSha256: sha256Hex(bytes),
    contentSha256: sha256Hex(bytes.subarray(windowStart, pos)),
    startLine: offset,
    endLine: end,
    totalLines: total,
    truncated: end < total,
    eol: eolStyle(eols),
    bom: file.bom,
    finalNewline: file.finalNewline,
  };
}
