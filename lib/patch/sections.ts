/**
 * The grammar of a Codex patch between its `*** Begin Patch` and
 * `*** End Patch` lines (SPEC §3): file sections, chunks and body lines.
 *
 * Where a marker is recognised:
 * - between sections and inside an Add File section, a line is compared to
 *   the markers after trimming (`  *** Update File: a` starts a section);
 * - inside an Update File section, a line starting with ' ', '+' or '-' is
 *   ALWAYS a body line, as in Codex. That keeps marker-like file content
 *   editable: a README that shows `*** End Patch` at column 0 has the
 *   context line ` *** End Patch`. Only lines without a body prefix are
 *   compared to the markers there (after trimming).
 *
 * The parser keeps going after an error where the structure still makes
 * sense (a bad body line, a bad Add line), so one reply can fix every
 * mistake; after an unknown line where a section header was expected it
 * skips to the next section header instead of reporting every line of the
 * unrecognised section.
 *
 * @module
 */
import { failure, warning } from "../failure.ts";
import { type ChunkHost, readChunks } from "./chunks.ts";
import { stripAddedLineIds } from "./line_ids.ts";
import { isUnifiedStart, readUnifiedFile, type UnifiedFile, unifiedWarning } from "./unified.ts";
import { quoteLine } from "./envelope.ts";
import {
  type Marker,
  markerOf,
  misspelledMarker,
  SECTION_HEADERS,
  startsWithBodyPrefix,
} from "./markers.ts";
import type { FileOp, PatchFailure, UpdateFileOp, Warning } from "../types.ts";
import { appendAll } from "../text/append_all.ts";

/** A file section as parsed, with what the later checks need to name its lines. */
export interface ParsedSection {
  op: FileOp;
  /** 1-based patch line of `*** Move to:`, when there is one. */
  moveLine?: number;
}

/** The sections of a patch, every structural error and the warnings. */
export interface SectionsResult {
  sections: ParsedSection[];
  errors: PatchFailure[];
  warnings: Warning[];
  /** An `*** End Patch` line was found inside `[from, to]` (text after it is reported). */
  sawEnd: boolean;
  /** 1-based lines of markers that were recognised only after trimming whitespace. */
  paddedMarkers: number[];
  /** The files read from unified-diff input (unified.ts), in order. */
  unified: UnifiedFile[];
}

/**
 * Parse the sections of `lines[from..to]` (inclusive indices; index `i` is
 * patch line `i + 1`). `from` is the line after `*** Begin Patch`, `to` the
 * line before `*** End Patch` (or the last line when it is missing); `last`
 * is the last line of the patch text, for text after an early End Patch.
 *
 * @example
 * ```ts
 * const r = parseSections(["*** Begin Patch", "*** Delete File: a", "*** End Patch"], 1, 1, 2);
 * r.sections[0]?.op.type; // "delete"
 * ```
 */
export function parseSections(
  lines: readonly string[],
  from: number,
  to: number,
  last: number,
): SectionsResult {
  return new SectionParser(lines, from, to, last).run();
}

class SectionParser implements ChunkHost {
  readonly sections: ParsedSection[] = [];
  readonly errors: PatchFailure[] = [];
  readonly warnings: Warning[] = [];
  private i: number;
  private sawEnd = false;
  readonly paddedMarkers: number[] = [];
  readonly unified: UnifiedFile[] = [];

  readonly lines: readonly string[];
  readonly to: number;
  private readonly last: number;

  // Plain fields, not parameter properties: Node's type stripping accepts only erasable syntax (SPEC §1.1).
  constructor(lines: readonly string[], from: number, to: number, last: number) {
    this.lines = lines;
    this.to = to;
    this.last = last;
    this.i = from;
  }

  run(): SectionsResult {
    while (this.i <= this.to) {
      const line = this.lines[this.i]!;
      if (line.trim() === "") {
        this.i++;
        continue;
      }
      const marker = markerOf(line);
      if (marker !== null) this.noteMarker(this.i);
      switch (marker?.kind) {
        case "add":
        case "replace":
          this.parseAdd(marker.rest, marker.kind);
          break;
        case "delete":
          this.sections.push({ op: { type: "delete", path: marker.rest, patchLine: this.i + 1 } });
          this.i++;
          break;
        case "update":
          this.parseUpdate(marker.rest);
          break;
        case "end":
          this.sawEnd = true;
          this.reportTextAfterEnd();
          return this.result();
        default:
          if (marker === null && isUnifiedStart(this.lines, this.i, this.to)) {
            this.parseUnified();
            break;
          }
          this.reportBadHeader(line, marker);
          this.skipToNextSection();
      }
    }
    return this.result();
  }

  private result(): SectionsResult {
    if (this.unified.length > 0) this.warnings.push(unifiedWarning(this.unified, this.unified[0]!.op.patchLine));
    return {
      sections: this.sections,
      errors: this.errors,
      warnings: this.warnings,
      sawEnd: this.sawEnd,
      paddedMarkers: this.paddedMarkers,
      unified: this.unified,
    };
  }

  /** A file of unified-diff input where a section header was expected (unified.ts). */
  private parseUnified(): void {
    const file = readUnifiedFile(this.lines, this.i, this.to);
    this.unified.push(file);
    appendAll(this.errors, file.errors);
    this.sections.push({ op: file.op, ...(file.moveLine !== undefined ? { moveLine: file.moveLine } : {}) });
    this.i = file.next;
  }

  /** Record a marker line that needed trimming to be recognised. */
  noteMarker(i: number): void {
    const line = this.lines[i]!;
    if (line.length !== line.trim().length) this.paddedMarkers.push(i + 1);
  }

  private error(message: string, line: number, fields: Partial<PatchFailure> = {}): void {
    this.errors.push(failure("invalid_patch", `invalid_patch: ${message}`, { patchLine: line, ...fields }));
  }

  private at(i: number): string {
    return `line ${i + 1} ${quoteLine(this.lines[i]!)}`;
  }

  /** An Add File section, or a Replace File section (the same body: `+` lines). */
  private parseAdd(path: string, kind: "add" | "replace"): void {
    const header = this.i;
    const added: string[] = [];
    this.i++;
    for (; this.i <= this.to; this.i++) {
      const line = this.lines[this.i]!;
      if (line.startsWith("+")) {
        added.push(line.slice(1));
        continue;
      }
      if (markerOf(line) !== null) break;
      const section = kind === "add" ? "an Add File" : "a Replace File";
      const what = line.trim() === ""
        ? `is empty, but every line of ${section} section starts with '+' (write a lone '+' for an empty line of the new file)`
        : `does not start with '+', but every line of ${section} section does (the '+' is removed)`;
      this.error(`${this.at(this.i)} ${what}; ${SECTION_HEADERS}.`, this.i + 1, { path });
    }
    const ids = stripAddedLineIds(added);
    if (ids > 0) {
      this.warnings.push(warning(
        "line_ids_stripped",
        `All ${ids} lines of the new file ${JSON.stringify(path)} (patch lines ${header + 2}–${header + 1 + ids}) started with an 'N:hh|' line id (1, 2, 3, … each matching its text), as a read with line ids shows them; the prefixes were removed. The ids are not part of a file: never copy them into a patch.`,
        { path, patchLine: header + 2 },
      ));
    }
    this.sections.push({ op: { type: kind, path, lines: added, patchLine: header + 1 } });
  }

  private parseUpdate(path: string): void {
    const header = this.i;
    const op: UpdateFileOp = { type: "update", path, chunks: [], patchLine: header + 1 };
    const section: ParsedSection = { op };
    this.i++;
    const next = this.i <= this.to ? this.lines[this.i]! : "";
    if (!startsWithBodyPrefix(next) && markerOf(next)?.kind === "move") {
      op.moveTo = markerOf(next)!.rest;
      section.moveLine = this.i + 1;
      this.noteMarker(this.i);
      this.i++;
    }
    const errorsBefore = this.errors.length;
    readChunks(this, op);
    if (op.chunks.length === 0 && this.errors.length === errorsBefore) {
      const fix = op.moveTo !== undefined
        ? ` To move a file unchanged, add a chunk of context lines that the file contains, e.g. '@@' and ' ' + its first line.`
        : ` To delete the file use '*** Delete File: ${JSON.stringify(path).slice(1, -1)}'.`;
      this.error(
        `${this.at(header)}: the Update File section has no chunk; after it come '@@' (optionally '@@ anchor') and the ' ', '-' and '+' lines of the change.${fix}`,
        header + 1,
        { path },
      );
    }
    this.sections.push(section);
  }

  /** Lines after an early `*** End Patch` are not part of any patch. */
  private reportTextAfterEnd(): void {
    const end = this.i;
    for (let j = end + 1; j <= this.last; j++) {
      if (this.lines[j]!.trim() !== "") {
        this.error(
          `${this.at(j)} comes after '*** End Patch' on line ${end + 1}; the patch must end with '*** End Patch'. Remove the text after it, or the earlier '*** End Patch' if the rest belongs to the patch.`,
          j + 1,
        );
        return;
      }
    }
  }

  private reportBadHeader(line: string, marker: Marker | null): void {
    const where = this.at(this.i);
    let why: string;
    switch (marker?.kind) {
      case "begin":
        why = "is a second '*** Begin Patch'; one call takes one patch. Remove it";
        break;
      case "move":
        why = "is misplaced: '*** Move to: ' goes on the line right after the '*** Update File: ' line of the file it renames";
        break;
      case "eof":
        why = "is misplaced: '*** End of File' ends a chunk, so it goes on the line right after the chunk's last ' ', '-' or '+' line";
        break;
      default: {
        const hint = misspelledMarker(line);
        why = hint !== null
          ? `is not a known marker (markers are case-sensitive: did you mean '${hint}'?)`
          : `is not a file section header where one was expected; ${SECTION_HEADERS}, and the patch ends with '*** End Patch'`;
      }
    }
    this.error(`${where} ${why}.`, this.i + 1);
  }

  private skipToNextSection(): void {
    this.i++;
    while (this.i <= this.to) {
      const kind = markerOf(this.lines[this.i]!)?.kind;
      if (kind === "add" || kind === "delete" || kind === "update" || kind === "replace" || kind === "end") return;
      if (kind === undefined && isUnifiedStart(this.lines, this.i, this.to)) return;
      this.i++;
    }
  }

  // ChunkHost: the chunk reader shares the cursor, the errors and the warnings.
  cursor(): number {
    return this.i;
  }

  advance(): void {
    this.i++;
  }

  reportAt(i: number, message: string, path: string, hunk?: number, fields: Partial<PatchFailure> = {}): void {
    this.error(`${this.at(i)} ${message}`, i + 1, hunk === undefined ? { path, ...fields } : { path, hunk, ...fields });
  }

  warn(w: Warning): void {
    this.warnings.push(w);
  }
}
