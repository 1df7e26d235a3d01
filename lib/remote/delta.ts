/**
 * Delta uploads: which stretches of an updated file's new content the
 * commit sends, and which the host copies from the file it already has.
 *
 * planPatch records, per update and move, how the new content is made of
 * byte ranges of the source's snapshot and new stretches
 * (`PlannedFile.pieces`). A 1-line change in a 40 MB file is then two
 * ranges of the old file and one new line: the commit program rebuilds the
 * stage from ranges of the current source file plus the few uploaded
 * bytes, and accepts it only when its SHA-256 is the plan's `newSha256` —
 * exactly the check a whole upload gets (lib/remote/programs/commit_delta.ts has the
 * correctness argument).
 *
 * What a piece costs on the host decides what is worth reusing (measured on
 * a 2-core VM, dash and BusyBox): a range of the old file is cut out with
 * `dd | tail | head`, three processes, about 4 ms; a new stretch of up to
 * {@linkcode DELTA_INLINE_MAX} characters travels inside the manifest
 * (escaped for `printf '%b'`, a builtin: no process, ~0.5–1 µs a
 * character to read); a longer one goes into the uploaded blob and is cut
 * out like a range. Hence:
 * - files under {@linkcode DELTA_MIN_FILE_BYTES} are uploaded whole (the
 *   saving is a few ms at best);
 * - ranges of the old file shorter than {@linkcode DELTA_MIN_SOURCE_PIECE}
 *   are sent as new bytes instead (uploading them costs less than the
 *   processes that would copy them);
 * - at most {@linkcode DELTA_MAX_SOURCE_PIECES} ranges are reused, the
 *   largest ones, so a commit never spends more than about a second
 *   rebuilding one file (100 chunks spread over a 40 MB file: 101 ranges
 *   of ~380 KB each, all kept);
 * - when more than half of the content would still be uploaded, the file
 *   is uploaded whole.
 *
 * @module
 */
import { newContentLength, newContentSlice } from "../plan/new_content.ts";
import type { ContentPiece, PlannedFile } from "../types.ts";

/** Files smaller than this are always uploaded whole. */
export const DELTA_MIN_FILE_BYTES: number = 64 * 1024;
/** Ranges of the old file shorter than this are uploaded instead of copied on the host. */
export const DELTA_MIN_SOURCE_PIECE = 4096;
/** At most this many ranges of the old file are copied per file (the largest). */
export const DELTA_MAX_SOURCE_PIECES = 128;
/** New stretches whose escaped form is at most this long travel in the manifest. */
export const DELTA_INLINE_MAX = 4096;

/** One piece of a delta upload, in the order the stage is assembled. */
export type UploadPiece =
  /** Copy `length` bytes of the current source file from `offset`. */
  | { kind: "source"; offset: number; length: number }
  /** `newBytes[start, end)`, sent in the blob after the manifest. */
  | { kind: "blob"; start: number; end: number }
  /** `newBytes[start, end)`, sent inside the manifest line, escaped for `printf '%b'`. */
  | { kind: "inline"; start: number; end: number; escaped: string };

/** How one file's content is uploaded when delta is worth it. */
export interface DeltaUpload {
  pieces: UploadPiece[];
  /** Bytes of new content that go into the blob. */
  blobBytes: number;
  /** Bytes of the manifest lines describing the pieces (inline stretches included). */
  lineBytes: number;
}

/**
 * Why a plan file's `pieces` cannot describe its `newBytes`, or null. Only
 * the shape can be checked here (the old bytes are not part of the plan):
 * fresh ranges must be where they land, source ranges ascending and
 * disjoint, the lengths adding up to `newBytes.length`.
 *
 * @example
 * ```ts
 * piecesProblem(file); // null for every plan planPatch makes
 * ```
 */
export function piecesProblem(file: PlannedFile): string | null {
  const pieces = file.pieces;
  if (pieces === undefined) return null;
  if (file.op !== "update" && file.op !== "move") return "only an update or a move has pieces";
  if (!Array.isArray(pieces)) return "pieces must be an array";
  const total = newContentLength(file) ?? 0;
  let at = 0;
  let sourceEnd = 0;
  for (const piece of pieces) {
    const range = piece && typeof piece === "object" ? ("source" in piece ? piece.source : "fresh" in piece ? piece.fresh : null) : null;
    if (!Array.isArray(range) || range.length !== 2) return "a piece must be { source: [start, end] } or { fresh: [start, end] }";
    const [start, end] = range;
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end <= start) return `bad range [${start}, ${end}]`;
    if ("source" in piece) {
      if (start < sourceEnd) return `source range [${start}, ${end}] overlaps or precedes the one before`;
      sourceEnd = end;
      at += end - start;
    } else {
      if (start !== at) return `fresh range [${start}, ${end}] does not start where the pieces before it end (${at})`;
      at = end;
    }
  }
  return at === total ? null : `the pieces make ${at} bytes, newBytes has ${total}`;
}

/**
 * Escape bytes for the argument of `printf '%b'`: printable ASCII stays
 * (backslash doubled), every other byte becomes `\0ooo`. The result is one
 * line of printable ASCII, and `%b` never sees `\c` (which would stop it).
 *
 * @example
 * ```ts
 * escapeForPrintfB(new TextEncoder().encode("a\\b\n")); // "a\\\\b\\0012"
 * ```
 */
export function escapeForPrintfB(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) {
    if (byte === 0x5c) out += "\\\\";
    else if (byte >= 0x20 && byte <= 0x7e) out += String.fromCharCode(byte);
    else out += "\\0" + byte.toString(8).padStart(3, "0");
  }
  return out;
}

function lineLength(piece: UploadPiece): number {
  switch (piece.kind) {
    case "source":
      return `S ${piece.offset} ${piece.length}\n`.length;
    case "blob":
      return `B ${piece.end - piece.start}\n`.length;
    default:
      return 2 + piece.escaped.length + 1;
  }
}

/**
 * The delta upload of one planned file, or null when it is uploaded whole
 * (an add, no pieces, a small file, or too little of it reusable — see the
 * module notes for the rules).
 *
 * @example
 * ```ts
 * const upload = deltaUpload(plan.files[0]);
 * if (upload) upload.blobBytes; // bytes sent instead of newBytes.length
 * ```
 */
export function deltaUpload(file: PlannedFile): DeltaUpload | null {
  const pieces = file.pieces;
  const size = newContentLength(file);
  if ((file.op !== "update" && file.op !== "move") || pieces === undefined || size === undefined) return null;
  if (size < DELTA_MIN_FILE_BYTES) return null;
  const reused = chooseSourcePieces(pieces);
  let reusedBytes = 0;
  for (const p of reused) reusedBytes += p.source[1] - p.source[0];
  if (size - reusedBytes > size / 2) return null;

  const out: UploadPiece[] = [];
  let blobBytes = 0;
  const fresh = (start: number, end: number): void => {
    if (end <= start) return;
    if (end - start <= DELTA_INLINE_MAX) {
      const escaped = escapeForPrintfB(newContentSlice(file, start, end));
      if (escaped.length <= DELTA_INLINE_MAX) {
        out.push({ kind: "inline", start, end, escaped });
        return;
      }
    }
    out.push({ kind: "blob", start, end });
    blobBytes += end - start;
  };
  // Walk the pieces in output order: a kept source range is copied, every
  // output stretch between two kept ones is new (whatever it was made of).
  let at = 0;
  let freshFrom = 0;
  for (const piece of pieces) {
    const length = "source" in piece ? piece.source[1] - piece.source[0] : piece.fresh[1] - piece.fresh[0];
    if ("source" in piece && reused.has(piece)) {
      fresh(freshFrom, at);
      out.push({ kind: "source", offset: piece.source[0], length });
      freshFrom = at + length;
    }
    at += length;
  }
  fresh(freshFrom, at);
  let lineBytes = String(out.length).length + 1;
  for (const p of out) lineBytes += lineLength(p);
  return { pieces: out, blobBytes, lineBytes };
}

/** The source pieces worth copying: long enough, and the largest ones up to the cap. */
function chooseSourcePieces(pieces: readonly ContentPiece[]): Set<ContentPiece & { source: [number, number] }> {
  const candidates = pieces.filter((p): p is ContentPiece & { source: [number, number] } =>
    "source" in p && p.source[1] - p.source[0] >= DELTA_MIN_SOURCE_PIECE
  );
  if (candidates.length > DELTA_MAX_SOURCE_PIECES) {
    candidates.sort((a, b) => (b.source[1] - b.source[0]) - (a.source[1] - a.source[0]) || a.source[0] - b.source[0]);
    candidates.length = DELTA_MAX_SOURCE_PIECES;
  }
  return new Set(candidates);
}
