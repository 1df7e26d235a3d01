/**
 * Git-style unified diffs built directly from the plan's edits.
 *
 * The edits already say which old lines go, which stay and what is new, so
 * there is nothing to search for: no LCS over whole files. The work is linear
 * in the number of edits plus the lines they touch plus the output; the
 * unchanged stretches between edits are never visited, however long the file.
 *
 * Output format (what `git diff` prints, minus `index` and mode lines):
 * `diff --git a/x b/y`, `rename from` / `rename to` for a move, `--- a/x`
 * (`/dev/null` for an add) and `+++ b/y` (`/dev/null` for a delete), then
 * hunks `@@ -l,s +l,s @@` (`,s` left out when it is 1, the start one less
 * when it is 0) with `context` lines around each change, hunks merged when
 * their context would touch, and `\ No newline at end of file` after a last
 * line without one. A line whose only change is gaining or losing its final
 * newline is shown as `-` and `+`, as git does. Paths are printed as they
 * are (§6 paths hold no control characters or backslashes, so git's
 * quoting is never needed; non-ASCII is printed as UTF-8, like git with
 * `core.quotePath=false`). A diff with no hunks keeps its header lines
 * (and `---`/`+++` for an add or delete), so an empty file's add or a
 * pure move is still visible.
 *
 * @module
 */
import type { LineEdit } from "../types.ts";
import { appendAll } from "./append_all.ts";

/**
 * The input of {@linkcode unifiedDiff}.
 *
 * @example
 * ```ts
 * const input: UnifiedDiffInput = { oldPath: "a.txt", newPath: "a.txt", oldLines: ["x"], oldFinalNewline: true, edits: [{ start: 0, end: 1, replacement: [{ text: "y" }] }], newFinalNewline: true };
 * unifiedDiff(input);
 * ```
 */
export interface UnifiedDiffInput {
  /** Root-relative old path; `null` for an added file. */
  oldPath: string | null;
  /** Root-relative new path; `null` for a deleted file. */
  newPath: string | null;
  /** The old file's lines, without their endings. */
  oldLines: readonly string[];
  /** The old file ends with a line ending. */
  oldFinalNewline: boolean;
  /** Sorted, non-overlapping edits of `oldLines` (see {@linkcode LineEdit}). */
  edits: readonly LineEdit[];
  /** The new file ends with a line ending. */
  newFinalNewline: boolean;
  /** Context lines around each change; default 3. */
  context?: number;
}

/**
 * A read-only list of lines; every string array is one. Only the lines
 * near the edits are read, so a large file's lines need not all exist as
 * strings.
 */
export interface OldLines {
  readonly length: number;
  /** Line `index` (0-based, within range). */
  at(index: number): string | undefined;
}

/** {@linkcode UnifiedDiffInput} whose old lines may be any {@linkcode OldLines} list. */
export type UnifiedDiffLinesInput = Omit<UnifiedDiffInput, "oldLines"> & { oldLines: OldLines };

/** Plain strings, not an enum: the file stays valid for type-stripping runtimes. */
type Kind = "same" | "delete" | "insert";

/**
 * One row of the diff: "same" rows stand for `count` unchanged lines from
 * `old`/`new`; "delete" and "insert" rows are one line each. `old` and `new`
 * are the 0-based positions in the old and new file where the row starts.
 */
interface Row {
  kind: Kind;
  old: number;
  new: number;
  count: number;
  /** The inserted text (insert rows only). */
  text: string;
}

/**
 * Build the git-style unified diff of applying `edits` to `oldLines`.
 *
 * Throws `RangeError` for edits that break the {@linkcode LineEdit} contract
 * (unsorted, overlapping, out of range, `keep` not ascending) and
 * `TypeError` when both paths are null: those are programmer errors.
 *
 * @example
 * ```ts
 * unifiedDiff({
 *   oldPath: "a.txt", newPath: "a.txt",
 *   oldLines: ["one", "two", "three"], oldFinalNewline: true,
 *   edits: [{ start: 1, end: 2, replacement: [{ text: "TWO" }] }],
 *   newFinalNewline: true,
 * });
 * // diff --git a/a.txt b/a.txt
 * // --- a/a.txt
 * // +++ b/a.txt
 * // @@ -1,3 +1,3 @@
 * //  one
 * // -two
 * // +TWO
 * //  three
 * ```
 */
export function unifiedDiff(input: UnifiedDiffInput): string {
  return unifiedDiffOfLines(input);
}

/**
 * {@linkcode unifiedDiff} over any {@linkcode OldLines} list (the planner
 * passes a view of the decoded file, so only the lines near the edits
 * become strings). Internal: `mod.ts` exports `unifiedDiff`.
 *
 * @example
 * ```ts
 * const lines = ["one", "two"];
 * unifiedDiffOfLines({ oldPath: "a", newPath: "a", oldLines: { length: 2, at: (i) => lines[i] }, oldFinalNewline: true, edits: [{ start: 1, end: 2, replacement: [] }], newFinalNewline: true });
 * ```
 */
export function unifiedDiffOfLines(input: UnifiedDiffLinesInput): string {
  const { oldPath, newPath, oldLines } = input;
  const context = input.context ?? 3;
  if (oldPath === null && newPath === null) {
    throw new TypeError("unifiedDiff: oldPath and newPath cannot both be null");
  }
  if (!Number.isInteger(context) || context < 0) {
    throw new RangeError(`unifiedDiff: context must be a non-negative integer, got ${context}`);
  }
  const { rows, newCount } = buildRows(oldLines, input.edits);
  if (oldPath === null && oldLines.length > 0) {
    throw new RangeError("unifiedDiff: an added file (oldPath null) has no old lines");
  }
  if (newPath === null && newCount > 0) {
    throw new RangeError("unifiedDiff: a deleted file (newPath null) must have edits that remove every line");
  }
  const oldOpenEnd = !input.oldFinalNewline && oldLines.length > 0 ? oldLines.length - 1 : -1;
  const newOpenEnd = !input.newFinalNewline && newCount > 0 ? newCount - 1 : -1;
  const finalRows = deletesBeforeInserts(splitNewlineChange(rows, oldLines, oldOpenEnd, newOpenEnd));

  const out: string[] = [];
  const a = oldPath ?? newPath!;
  const b = newPath ?? oldPath!;
  out.push(`diff --git a/${a} b/${b}`);
  if (oldPath !== null && newPath !== null && oldPath !== newPath) {
    out.push(`rename from ${oldPath}`, `rename to ${newPath}`);
  }
  const hunks = hunkRanges(finalRows, context);
  if (hunks.length > 0 || oldPath === null || newPath === null) {
    out.push(oldPath === null ? "--- /dev/null" : `--- a/${oldPath}`);
    out.push(newPath === null ? "+++ /dev/null" : `+++ b/${newPath}`);
  }
  for (const [from, to] of hunks) {
    emitHunk(out, finalRows, from, to, context, oldLines, oldOpenEnd, newOpenEnd);
  }
  return out.join("\n") + "\n";
}

/** Turn the edits into rows, checking the LineEdit contract as it goes. */
function buildRows(oldLines: OldLines, edits: readonly LineEdit[]): { rows: Row[]; newCount: number } {
  const rows: Row[] = [];
  let oldPos = 0;
  let newPos = 0;
  const same = (count: number): void => {
    if (count <= 0) return;
    const last = rows[rows.length - 1];
    if (last !== undefined && last.kind === "same" && last.old + last.count === oldPos) {
      last.count += count;
    } else {
      rows.push({ kind: "same", old: oldPos, new: newPos, count, text: "" });
    }
    oldPos += count;
    newPos += count;
  };
  const remove = (upTo: number): void => {
    for (; oldPos < upTo; oldPos++) rows.push({ kind: "delete", old: oldPos, new: newPos, count: 1, text: "" });
  };
  const insert = (texts: readonly string[]): void => {
    for (const text of texts) rows.push({ kind: "insert", old: oldPos, new: newPos++, count: 1, text });
  };

  for (let e = 0; e < edits.length; e++) {
    const { start, end, replacement } = edits[e]!;
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < oldPos || end < start || end > oldLines.length) {
      throw new RangeError(
        `unifiedDiff: edit ${e} [${start}, ${end}) is out of order, overlapping or outside the ${oldLines.length} old lines`,
      );
    }
    same(start - oldPos);
    let pending: string[] = [];
    for (const item of replacement) {
      if ("keep" in item) {
        const k = item.keep;
        if (!Number.isInteger(k) || k < oldPos || k >= end) {
          throw new RangeError(`unifiedDiff: edit ${e} keeps line ${k}, outside [${oldPos}, ${end}) or not ascending`);
        }
        remove(k);
        insert(pending);
        pending = [];
        same(1);
      } else {
        pending.push(item.text);
      }
    }
    remove(end);
    insert(pending);
  }
  same(oldLines.length - oldPos);
  return { rows, newCount: newPos };
}

/**
 * A line that stays but gains or loses its final newline has changed: show
 * it as a delete and an insert. Only the last unchanged line can be
 * affected (it is the only one that can be the last line of either file).
 */
function splitNewlineChange(
  rows: Row[],
  oldLines: OldLines,
  oldOpenEnd: number,
  newOpenEnd: number,
): Row[] {
  let r = rows.length - 1;
  while (r >= 0 && rows[r]!.kind !== "same") r--;
  if (r < 0) return rows;
  const row = rows[r]!;
  const oldLast = row.old + row.count - 1;
  const newLast = row.new + row.count - 1;
  if ((oldLast === oldOpenEnd) === (newLast === newOpenEnd)) return rows;
  const split: Row[] = [];
  if (row.count > 1) split.push({ ...row, count: row.count - 1 });
  split.push({ kind: "delete", old: oldLast, new: newLast, count: 1, text: "" });
  split.push({ kind: "insert", old: oldLast + 1, new: newLast, count: 1, text: oldLines.at(oldLast)! });
  rows.splice(r, 1, ...split); // at most three rows: a bounded spread
  return rows;
}

/** Within every run of changes, all deletes come before all inserts (stable). */
function deletesBeforeInserts(rows: Row[]): Row[] {
  const out: Row[] = [];
  let inserts: Row[] = [];
  for (const row of rows) {
    if (row.kind === "insert") {
      inserts.push(row);
      continue;
    }
    if (row.kind === "same" && inserts.length > 0) {
      appendAll(out, inserts);
      inserts = [];
    }
    out.push(row);
  }
  appendAll(out, inserts);
  return out;
}

/**
 * Hunks as inclusive row ranges of changes `[firstChangeRow, lastChangeRow]`,
 * merged when the unchanged stretch between them is at most `2 * context`
 * lines (their contexts would touch or overlap).
 */
function hunkRanges(rows: readonly Row[], context: number): [number, number][] {
  const hunks: [number, number][] = [];
  for (let r = 0; r < rows.length; r++) {
    if (rows[r]!.kind === "same") continue;
    const last = hunks[hunks.length - 1];
    if (last !== undefined) {
      let gap = 0;
      for (let g = last[1] + 1; g < r; g++) gap += rows[g]!.count;
      if (gap <= 2 * context) {
        last[1] = r;
        continue;
      }
    }
    hunks.push([r, r]);
  }
  return hunks;
}

function emitHunk(
  out: string[],
  rows: readonly Row[],
  from: number,
  to: number,
  context: number,
  oldLines: OldLines,
  oldOpenEnd: number,
  newOpenEnd: number,
): void {
  const before = from > 0 && rows[from - 1]!.kind === "same" ? rows[from - 1]! : null;
  const after = to + 1 < rows.length && rows[to + 1]!.kind === "same" ? rows[to + 1]! : null;
  const lead = before === null ? 0 : Math.min(context, before.count);
  const trail = after === null ? 0 : Math.min(context, after.count);
  // Runs of changes are maximal, so a hunk without an unchanged row before it
  // starts the file. (The positions stored on change rows are not used for
  // the header: deletesBeforeInserts may have moved them.)
  const oldStart = before === null ? 0 : before.old + before.count - lead;
  const newStart = before === null ? 0 : before.new + before.count - lead;

  const body: string[] = [];
  let oldCount = 0;
  let newCount = 0;
  const sameLines = (oldAt: number, newAt: number, count: number): void => {
    for (let i = 0; i < count; i++) {
      body.push(" " + oldLines.at(oldAt + i)!);
      if (oldAt + i === oldOpenEnd || newAt + i === newOpenEnd) body.push(NO_NEWLINE);
    }
    oldCount += count;
    newCount += count;
  };
  if (before !== null) sameLines(before.old + before.count - lead, before.new + before.count - lead, lead);
  for (let r = from; r <= to; r++) {
    const row = rows[r]!;
    if (row.kind === "same") {
      sameLines(row.old, row.new, row.count);
    } else if (row.kind === "delete") {
      body.push("-" + oldLines.at(row.old)!);
      if (row.old === oldOpenEnd) body.push(NO_NEWLINE);
      oldCount++;
    } else {
      body.push("+" + row.text);
      if (row.new === newOpenEnd) body.push(NO_NEWLINE);
      newCount++;
    }
  }
  if (after !== null) sameLines(after.old, after.new, trail);
  out.push(`@@ -${range(oldStart, oldCount)} +${range(newStart, newCount)} @@`);
  for (const line of body) out.push(line);
}

const NO_NEWLINE = "\\ No newline at end of file";

/** `start,count` in unified-diff form from a 0-based start. */
function range(start0: number, count: number): string {
  if (count === 0) return `${start0},0`;
  return count === 1 ? `${start0 + 1}` : `${start0 + 1},${count}`;
}
