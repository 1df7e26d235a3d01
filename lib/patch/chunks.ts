/**
 * The chunks of one `*** Update File` section: `@@` lines (several in a row
 * narrow the search, a unified-diff header counts as a bare `@@`), the
 * ' ' / '-' / '+' body lines, empty lines as empty context, and
 * `*** End of File` (SPEC §3).
 *
 * @module
 */
import { warning } from "../failure.ts";
import { lineIdPrefix, stripChunkLineIds } from "./line_ids.ts";
import { markerOf, SECTION_HEADERS } from "./markers.ts";
import type { Chunk, ChunkLine, PatchFailure, UpdateFileOp, Warning } from "../types.ts";

/** What the chunk reader needs from the section parser that owns the cursor. */
export interface ChunkHost {
  readonly lines: readonly string[];
  /** Index of the last line the sections may use. */
  readonly to: number;
  cursor(): number;
  advance(): void;
  reportAt(i: number, message: string, path: string, hunk?: number, fields?: Partial<PatchFailure>): void;
  warn(w: Warning): void;
  noteMarker(i: number): void;
}

const CHUNK_LINES = "every line of a chunk starts with ' ', '+' or '-'";

/** A unified-diff hunk header; its numbers are never trusted. */
const UNIFIED_HEADER = /^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@/;

/**
 * Read the chunks of `op` from the host's cursor, up to (not including) the
 * first line that ends the section: another section marker, `*** End Patch`
 * or an unknown `***` marker. Errors and warnings go to the host.
 *
 * @example
 * ```ts
 * // Used by parseSections; see test/unit/patch/parse.test.ts for behaviour.
 * ```
 */
export function readChunks(host: ChunkHost, op: UpdateFileOp): void {
  new ChunkReader(host, op).read();
}

/** Reads the chunks of one Update File section. */
class ChunkReader {
  private chunk: Chunk | null = null;
  /** The chunk has at least one body line (so `@@` after it starts a new chunk). */
  private hasBody = false;
  /** Line index of the `*** End of File` that closed the previous chunk, until the next `@@`. */
  private afterEndOfFile = -1;
  private reportedAfterEndOfFile = false;
  private unifiedHeaders = 0;
  private firstUnifiedLine = 0;
  private sectionErrors = 0;
  /** 1-based patch lines of the open chunk that had no marker (unmarkedLine). */
  private unmarked: number[] = [];
  /** `N:hh|` prefixes removed (line_ids.ts), the first one's patch line and text. */
  private idsStripped = 0;
  private firstIdLine = 0;
  private firstId = "";

  private readonly parser: ChunkHost;
  private readonly op: UpdateFileOp;

  // Plain fields, not parameter properties: Node's type stripping accepts only erasable syntax (SPEC §1.1).
  constructor(parser: ChunkHost, op: UpdateFileOp) {
    this.parser = parser;
    this.op = op;
  }

  read(): void {
    const p = this.parser;
    const lines = p.lines;
    for (; p.cursor() <= p.to; p.advance()) {
      const i = p.cursor();
      const line = lines[i]!;
      const first = line.charCodeAt(0);
      if (first === 0x20 || first === 0x2b || first === 0x2d) { // ' ' '+' '-'
        this.bodyLine(i, first === 0x20 ? "context" : first === 0x2b ? "insert" : "delete", line.slice(1));
      } else if (line.trim() === "") {
        // An empty line inside a chunk is an empty context line (Codex); between
        // chunks it separates them. A whitespace-only line without the ' ' prefix
        // (a stray tab) counts as empty: the matcher ignores trailing whitespace.
        if (this.chunk !== null && this.afterEndOfFile < 0) this.bodyLine(i, "context", "");
      } else if (line.startsWith("@@")) {
        this.anchorLine(i, line);
      } else {
        const marker = markerOf(line);
        if (marker === null && line.startsWith("diff --git ")) {
          break; // a unified-diff file starts: the section parser reads it (unified.ts)
        } else if (marker === null) {
          this.unmarkedLine(i, line);
        } else if (marker.kind === "eof") {
          p.noteMarker(i);
          this.endOfFile(i);
        } else {
          break; // the next section, `*** End Patch`, or an unknown marker for the caller
        }
      }
    }
    this.closeChunk(p.cursor());
    if (this.idsStripped > 0) {
      p.warn(warning(
        "line_ids_stripped",
        `${this.idsStripped} line${this.idsStripped === 1 ? "" : "s"} of ${JSON.stringify(this.op.path)} (first: patch line ${this.firstIdLine}) started with an 'N:hh|' line id such as ${
          JSON.stringify(this.firstId)
        }, as a read with line ids shows them; every id matched its line's text, so the prefixes were removed. The ids are not part of the file: never copy them into a patch.`,
        { path: this.op.path, patchLine: this.firstIdLine },
      ));
    }
    if (this.unifiedHeaders > 0) {
      p.warn(warning(
        "unified_header_ignored",
        `${this.unifiedHeaders} unified-diff hunk header${
          this.unifiedHeaders === 1 ? "" : "s"
        } ('@@ -a,b +c,d @@', first on line ${this.firstUnifiedLine}) in ${JSON.stringify(this.op.path)} ${
          this.unifiedHeaders === 1 ? "was" : "were"
        } read as a bare '@@': the line numbers are not used (chunks are located by their context), and any text after the second '@@' is not used either, since git's function context may lie before an earlier chunk. Use '@@' or '@@ <a line of the file above the change>' next time.`,
        { path: this.op.path, patchLine: this.firstUnifiedLine },
      ));
    }
  }

  private bodyLine(i: number, kind: ChunkLine["kind"], text: string): void {
    if (this.afterEndOfFile >= 0) {
      if (!this.reportedAfterEndOfFile) {
        this.reportedAfterEndOfFile = true;
        this.report(
          i,
          `follows '*** End of File' (line ${this.afterEndOfFile + 1}), which ends its chunk; start a new chunk with '@@', or move '*** End of File' after the chunk's last line.`,
        );
      }
      return;
    }
    if (this.chunk === null) {
      this.chunk = this.newChunk(i);
      if (this.op.chunks.length === 0) {
        this.parser.warn(warning(
          "first_chunk_without_anchor",
          `The first chunk of ${JSON.stringify(this.op.path)} (line ${i + 1}) has no '@@' line; it was read as if it started with a bare '@@'.`,
          { path: this.op.path, hunk: 1, patchLine: i + 1 },
        ));
      }
    }
    this.chunk.lines.push({ kind, text, patchLine: i + 1 });
    this.hasBody = true;
  }

  private anchorLine(i: number, line: string): void {
    if (this.chunk !== null && this.hasBody) this.closeChunk(i);
    this.afterEndOfFile = -1;
    this.reportedAfterEndOfFile = false;
    let anchor: string | null;
    if (UNIFIED_HEADER.test(line)) {
      if (this.unifiedHeaders++ === 0) this.firstUnifiedLine = i + 1;
      anchor = null;
    } else {
      const rest = line.slice(2);
      if (rest.trim() === "") anchor = null;
      else if (rest.startsWith(" ") || rest.startsWith("\t")) {
        anchor = rest.slice(1).trim() === "" ? null : rest.slice(1);
      } else {
        this.report(
          i,
          `is not a valid chunk header: write '@@' alone, or '@@ ' (with a space) followed by a line of the file above the change, such as '@@ ${
            rest.replace(/^@+/, "").trim().slice(0, 40) || "def main():"
          }'.`,
        );
        return;
      }
    }
    if (this.chunk === null) this.chunk = this.newChunk(i);
    if (anchor !== null) this.chunk.anchors.push(anchor);
  }

  private endOfFile(i: number): void {
    if (this.chunk === null || !this.hasBody) {
      this.report(
        i,
        `is in the wrong place: '*** End of File' ends a chunk, on the line right after the chunk's last ' ', '-' or '+' line.`,
      );
      return;
    }
    this.chunk.endOfFile = true;
    this.closeChunk(i);
    this.afterEndOfFile = i;
  }

  /**
   * A line with no ' ', '-' or '+' marker. Usually a context line whose
   * leading ' ' was lost, so it is kept in its chunk (as context, with its
   * whole text) and every such line of the chunk is reported together when
   * the chunk closes, with the indented context lines that may have lost it
   * too (they were read one space short). applyPatch then tries both
   * readings against the file (lib/plan/refine.ts).
   */
  private unmarkedLine(i: number, line: string): void {
    if (this.afterEndOfFile >= 0) {
      this.bodyLine(i, "context", line); // reported as following *** End of File
      return;
    }
    this.bodyLine(i, "context", line);
    this.unmarked.push(i + 1);
  }

  /** The one error of a chunk with unmarked lines (see unmarkedLine). */
  private reportUnmarked(chunk: Chunk, index: number): void {
    const lines = this.unmarked;
    this.unmarked = [];
    const set = new Set(lines);
    const indented = chunk.lines.filter((l) => l.kind === "context" && !set.has(l.patchLine) && /^[ \t]/.test(l.text)).map((l) => l.patchLine);
    const tab = lines.some((n) => this.parser.lines[n - 1]!.startsWith("\t")) ? " (a line that starts with a tab needs ' ' before the file's own indentation, the tab)" : "";
    const maybe = indented.length > 0
      ? ` The indented context ${plural(indented.length, "line")} ${lineList(indented)} may have lost ${indented.length === 1 ? "its" : "their"} ' ' too: as sent, ${indented.length === 1 ? "it was" : "they were"} read as context one space shorter than written.`
      : "";
    const others = lines.slice(1);
    const alsoShown = others.slice(0, 5).map((n) => `${n} ${quoteText(this.parser.lines[n - 1]!)}`).join(", ");
    const also = others.length === 0
      ? ""
      : ` ${others.length === 1 ? "Line" : "Lines"} ${alsoShown}${others.length > 5 ? ` and ${others.length - 5} more` : ""} of the same chunk ${others.length === 1 ? "has" : "have"} none either.`;
    this.sectionErrors++;
    this.parser.reportAt(
      lines[0]! - 1,
      `(chunk ${index} of ${JSON.stringify(this.op.path)}) has no marker: ${CHUNK_LINES} (context, delete, insert); a context line is ' ' and then the file's text with its indentation${tab}.${also}${maybe} Next step: add the missing markers; a new chunk starts with '@@'; ${SECTION_HEADERS}.`,
      this.op.path,
      index,
      { unmarkedLines: lines },
    );
  }

  private newChunk(i: number): Chunk {
    this.unmarked = [];
    return { anchors: [], lines: [], endOfFile: false, patchLine: i + 1 };
  }

  /** Finish the open chunk; `i` is the line that ended it (for messages). */
  private closeChunk(i: number): void {
    const chunk = this.chunk;
    if (chunk === null) return;
    this.chunk = null;
    const hadBody = this.hasBody;
    this.hasBody = false;
    const index = this.op.chunks.length + 1;
    // Reported even after an earlier error of the section: every unmarked
    // line of the patch is named in one reply.
    if (this.unmarked.length > 0) this.reportUnmarked(chunk, index);
    if (this.sectionErrors > 0) {
      // The section is already rejected; a half-read chunk would only add noise.
      this.op.chunks.push(chunk);
      return;
    }
    if (!hadBody) {
      this.report(
        chunk.patchLine - 1,
        `starts chunk ${index} of ${JSON.stringify(this.op.path)}, which has no lines before ${
          i <= this.parser.to ? `line ${i + 1}` : "the end of the patch"
        }: after '@@' come the ' ' (context), '-' (delete) and '+' (insert) lines of the change.`,
        index,
      );
      return;
    }
    const changes = chunk.lines.some((l) => l.kind !== "context");
    if (!changes && this.op.moveTo === undefined) {
      this.report(
        chunk.patchLine - 1,
        `starts chunk ${index} of ${JSON.stringify(this.op.path)}, which changes nothing (only ' ' context lines): add the '-' and '+' lines of the change, or remove the chunk.`,
        index,
      );
    }
    this.stripLineIds(chunk);
    this.op.chunks.push(chunk);
  }

  private stripLineIds(chunk: Chunk): void {
    const first = chunk.lines.find((l) => lineIdPrefix(l.text) !== null);
    if (first === undefined) return;
    const prefix = first.text.slice(0, lineIdPrefix(first.text)!.length);
    const stripped = stripChunkLineIds(chunk);
    if (stripped === 0) return;
    if (this.idsStripped === 0) {
      this.firstIdLine = first.patchLine;
      this.firstId = prefix;
    }
    this.idsStripped += stripped;
  }

  private report(i: number, message: string, hunk?: number): void {
    this.sectionErrors++;
    this.parser.reportAt(i, message, this.op.path, hunk);
  }
}

function plural(n: number, word: string): string {
  return n === 1 ? word : `${word}s`;
}

/** `4`, `4 and 6`, `4, 5 and 9`. */
function lineList(lines: readonly number[]): string {
  if (lines.length <= 1) return lines.join("");
  return `${lines.slice(0, -1).join(", ")} and ${lines.at(-1)}`;
}

function quoteText(text: string): string {
  return JSON.stringify(text.length > 60 ? text.slice(0, 60) + "…" : text);
}
