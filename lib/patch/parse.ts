/**
 * Layer `lib/patch/` (pure, above `lib/text/`): patch text → a typed `Patch`
 * (envelope, sections, chunks, markers), the path rules of SPEC §6 and the
 * size limits, which parsing already enforces (they live here, not in
 * `lib/plan/`, so the layers form a line: plan imports them from below). It
 * may import `lib/text/`, `lib/types.ts` and `lib/failure.ts` (no `node:` module).
 *
 * This file: parsePatch: Codex `apply_patch` text → a typed {@linkcode Patch}, or every
 * error of the patch with its patch line (SPEC §3, §6).
 *
 * Decisions where SPEC §3 leaves room (all tested in test/unit/patch/parse.test.ts):
 * - A missing `*** End Patch` is rejected, unlike Codex's streaming mode: a
 *   missing end marker is the usual sign of a patch cut off in transit or by
 *   an output limit, and applying a truncated Add would write half a file.
 * - `*** Begin Patch` with no file section is rejected ("changes nothing"),
 *   as Codex reports "No files were modified".
 * - A chunk of context lines only is rejected as a no-op, except under
 *   `*** Move to:`, where it is how a file is moved unchanged while stating
 *   what it must contain (an Update with no chunk is rejected, SPEC §3).
 * - Unified / git diff input is converted (unified.ts) only where a file
 *   section header is expected: at the start of a text without `*** Begin
 *   Patch`, or between sections inside Begin/End, when the line is `diff
 *   --git …` or `--- …` directly followed by `+++ …`. No valid Codex patch
 *   has such a line there. Inside an `*** Update File:` section `--- a/x` /
 *   `+++ b/x` are NOT converted: they are valid Codex body lines (delete
 *   "-- a/x", insert "++ b/x") of a first chunk without `@@`, so reading
 *   them as headers would change the meaning of a valid patch. They stay
 *   body lines; when that chunk does not match, the planner says the lines
 *   look like diff headers (lib/plan/refine.ts). A bare diff (no Begin/End)
 *   whose last hunk is shorter than its header announces is refused as
 *   possibly cut off, as a missing End Patch is.
 * - In a unified-diff header `@@ -1,3 +1,4 @@ def foo():` the text after the
 *   second `@@` (git's function context) is ignored, not used as an anchor:
 *   git takes it from any line above the hunk, often above an earlier hunk
 *   of the same function, where an anchor search from the cursor would fail.
 * - Paths are taken after the marker with surrounding whitespace trimmed
 *   (Codex trims marker lines), so a name with leading or trailing spaces
 *   cannot be addressed by a patch.
 *
 * @module
 */
import { asFailures, failure, warning } from "../failure.ts";
import { resolveLimits } from "./limits.ts";
import { preparePatchLines, quoteLine } from "./envelope.ts";
import { markerOf } from "./markers.ts";
import { type ParsedSection, parseSections } from "./sections.ts";
import { pathProblem, utf8Length } from "./paths.ts";
import { isUnifiedStart, type UnifiedFile } from "./unified.ts";
import { duplicateMessage, joinReplaces, type Touch, touchesOf } from "./replace.ts";
import type { Limits, ParseOptions, ParseResult, PatchFailure, Warning } from "../types.ts";
import { appendAll } from "../text/append_all.ts";

/** At most this many errors are returned; the rest are summarised in one more. */
export const MAX_PARSE_ERRORS = 50;

/**
 * Parse a patch in the Codex `apply_patch` format (SPEC §3).
 *
 * Never throws for a string (only for a non-string, a programmer error);
 * linear in the text length. Every line number (`patchLine`,
 * `patchLine`) is 1-based in the text exactly as given, counting any
 * stripped heredoc or blank lines. On failure, `errors` lists every error
 * that could be found, in patch order.
 *
 * @example
 * ```ts
 * const r = parsePatch("*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    pass\n+    return 1\n*** End Patch");
 * if (r.ok) r.patch.ops[0]; // { type: "update", path: "a.py", chunks: [...], patchLine: 2 }
 * ```
 */
export function parsePatch(text: string, options: ParseOptions = {}): ParseResult {
  if (typeof text !== "string") {
    throw new TypeError(`parsePatch: text must be a string, got ${typeof text}`);
  }
  const limits = resolveLimits(options.limits);
  const bytes = utf8Length(text);
  if (bytes > limits.maxPatchBytes) {
    return {
      ok: false,
      errors: [failure(
        "limit_exceeded",
        `limit_exceeded: the patch is ${bytes} bytes; at most ${limits.maxPatchBytes} are accepted. Split it into several smaller patches (fewer files or chunks each).`,
        { limit: { name: "maxPatchBytes", max: limits.maxPatchBytes, actual: bytes } },
      )],
      warnings: [],
    };
  }

  const { lines, first, last, warnings } = preparePatchLines(text);
  const errors: PatchFailure[] = [];
  const invalid = (message: string, line?: number): void => {
    errors.push(failure("invalid_patch", `invalid_patch: ${message}`, line === undefined ? {} : { patchLine: line }));
  };
  if (first > last) {
    invalid("the patch is empty: send a patch that starts with '*** Begin Patch', has one section per file and ends with '*** End Patch'.");
    return { ok: false, errors: asFailures(errors), warnings };
  }

  const begin = findBegin(lines, first, last);
  // A unified / git diff without Begin/End (unified.ts): its sections run to
  // the end of the text, and its last hunk's counts stand in for End Patch.
  const bareDiff = begin < 0 && isUnifiedStart(lines, first, last);
  if (begin !== first && !bareDiff) {
    if (begin >= 0) {
      invalid(
        `line ${first + 1} ${quoteLine(lines[first]!)}${
          begin > first + 1 ? ` and the lines up to line ${begin} come` : " comes"
        } before '*** Begin Patch' (line ${begin + 1}): the patch must start with '*** Begin Patch'. Send the patch text alone.`,
        first + 1,
      );
    } else {
      invalid(
        `line ${first + 1} ${quoteLine(lines[first]!)}: the first line of the patch must be '*** Begin Patch'.`,
        first + 1,
      );
    }
  }
  const kindAtFirst = markerOf(lines[first]!)?.kind;
  const from = begin >= 0
    ? begin + 1
    : bareDiff || kindAtFirst === "add" || kindAtFirst === "update" || kindAtFirst === "delete" || kindAtFirst === "replace"
    ? first
    : first + 1;
  const endAtLast = last !== begin && markerOf(lines[last]!)?.kind === "end";
  const to = endAtLast ? last - 1 : last;

  const parsed = parseSections(lines, from, to, last);
  appendAll(errors, parsed.errors);
  appendAll(warnings, parsed.warnings);
  if (bareDiff && !endAtLast) {
    const cut = cutOffHunk(parsed.unified, lines, last);
    if (cut !== null) errors.push(cut);
  } else if (!endAtLast && !parsed.sawEnd) {
    invalid(
      `the patch ends at line ${last + 1} ${
        quoteLine(lines[last]!)
      } without '*** End Patch'. If the patch was cut off, send it again complete; otherwise add '*** End Patch' as its last line.`,
      last + 1,
    );
  }
  // Delete X + later Add X: one whole-file replace (replace.ts).
  const sections = joinReplaces(parsed.sections);
  appendAll(errors, checkSections(sections, lines, limits));
  if (sections.length === 0 && errors.length === 0) {
    invalid(
      "the patch has no file section, so it changes nothing: between '*** Begin Patch' and '*** End Patch' put '*** Add File: ', '*** Update File: ' or '*** Delete File: ' sections.",
      Math.max(begin, first) + 1,
    );
  }
  const padded = [...parsed.paddedMarkers];
  if (begin >= 0 && isPadded(lines[begin]!)) padded.unshift(begin + 1);
  if (endAtLast && isPadded(lines[last]!)) padded.push(last + 1);
  if (padded.length > 0) warnings.push(trimmedMarkerWarning(padded));

  if (errors.length > 0) return { ok: false, errors: asFailures(capErrors(sortByLine(errors))), warnings };
  return { ok: true, patch: { ops: sections.map((s) => s.op) }, warnings };
}

/**
 * A bare unified diff has no end marker: when its last hunk has fewer lines
 * than its header announces, the text may have been cut off (blank lines
 * trimmed from the end of the text count as empty context lines).
 */
function cutOffHunk(files: readonly UnifiedFile[], lines: readonly string[], last: number): PatchFailure | null {
  const hunk = files.at(-1)?.lastHunk;
  if (hunk === undefined) return null;
  let blank = 0;
  let j = last + 1;
  while (j < lines.length && lines[j]!.trim() === "") j++, blank++;
  if (j === lines.length && lines[lines.length - 1] === "") blank--;
  const oldFound = hunk.oldFound + Math.max(0, blank);
  const newFound = hunk.newFound + Math.max(0, blank);
  if (oldFound >= hunk.oldWanted && newFound >= hunk.newWanted) return null;
  const file = files.at(-1)!.op;
  const numbers = /^@@ -(\d+)(?:,\d+)? \+(\d+)/.exec(hunk.header)!;
  const fixed = `@@ -${numbers[1]},${hunk.oldFound} +${numbers[2]},${hunk.newFound} @@`;
  const codex = file.type === "update" ? `'*** Update File: ${file.path}', '@@', the same ' ', '-' and '+' lines` : "one section per file";
  return failure(
    "invalid_patch",
    `invalid_patch: the unified diff ends inside its last hunk: line ${hunk.patchLine} ${quoteLine(hunk.header)} announces ${hunk.oldWanted} old and ${hunk.newWanted} new lines, but ${hunk.oldFound} and ${hunk.newFound} follow, so the text may have been cut off (a bare diff has no end marker). If it was, send it again complete. If only the counts are wrong, write the header as ${quoteLine(fixed)}, or wrap the diff in '*** Begin Patch' … '*** End Patch' (the counts are not checked there), or send the Codex format: '*** Begin Patch', ${codex}, '*** End Patch'.`,
    { patchLine: hunk.patchLine, ...(file.path !== "" ? { path: file.path } : {}) },
  );
}

/** Index of the `*** Begin Patch` line: `first` when it is there, a later line, or -1. */
function findBegin(lines: readonly string[], first: number, last: number): number {
  if (markerOf(lines[first]!)?.kind === "begin") return first;
  for (let i = first + 1; i <= last; i++) {
    const line = lines[i]!;
    // Test for the marker text before trimming, so no line is copied needlessly.
    if (line.includes("*** Begin Patch") && line.trim() === "*** Begin Patch") return i;
  }
  return -1;
}

/** Paths (§6), Move onto itself, duplicate paths and the count limits. */
function checkSections(
  sections: readonly ParsedSection[],
  lines: readonly string[],
  limits: Limits,
): PatchFailure[] {
  const errors: PatchFailure[] = [];
  const at = (line: number): string => `line ${line} ${quoteLine(lines[line - 1]!)}`;
  /** path → every way the patch touches it (for the messages) */
  const all = new Map<string, Set<Touch>>();
  for (const { op } of sections) {
    for (const t of touchesOf(op)) {
      const set = all.get(t.path);
      if (set === undefined) all.set(t.path, new Set([t.touch]));
      else set.add(t.touch);
    }
  }
  /** path → the first patch line that touched it, and how */
  const seen = new Map<string, { line: number; touch: Touch }>();
  const touch = (path: string, line: number, how: Touch): void => {
    const earlier = seen.get(path);
    if (earlier === undefined) {
      seen.set(path, { line, touch: how });
      return;
    }
    errors.push(failure("duplicate_path", duplicateMessage(path, earlier.touch, at(earlier.line), how, at(line), all.get(path)!), { path, patchLine: line }));
  };
  const checkPath = (path: string, line: number): boolean => {
    const problem = pathProblem(path);
    if (problem === null) return true;
    errors.push(failure("invalid_path", `invalid_path: ${at(line)}: ${problem}.`, { path, patchLine: line }));
    return false;
  };

  for (const { op, moveLine } of sections) {
    const how: Touch = op.type === "update" && op.moveTo !== undefined ? "move_from" : op.type;
    // A joined Delete + Add (replace.ts) is one section: its Add line is not a second touch.
    if (checkPath(op.path, op.patchLine)) touch(op.path, op.patchLine, how);
    if (op.type !== "update") continue;
    if (op.moveTo !== undefined && moveLine !== undefined) {
      if (op.moveTo === op.path) {
        errors.push(failure(
          "invalid_patch",
          `invalid_patch: ${at(moveLine)} moves ${
            JSON.stringify(op.path)
          } onto itself, which would delete the file (Codex does). Remove the '*** Move to:' line to edit it in place.`,
          { path: op.path, patchLine: moveLine },
        ));
      } else if (checkPath(op.moveTo, moveLine)) {
        touch(op.moveTo, moveLine, "move_to");
      }
    }
    if (op.chunks.length > limits.maxChunksPerFile) {
      errors.push(failure(
        "limit_exceeded",
        `limit_exceeded: ${at(op.patchLine)} has ${op.chunks.length} chunks; at most ${limits.maxChunksPerFile} are accepted per file. Merge neighbouring chunks, or split the change into several patches.`,
        {
          path: op.path,
          patchLine: op.patchLine,
          limit: { name: "maxChunksPerFile", max: limits.maxChunksPerFile, actual: op.chunks.length },
        },
      ));
    }
  }
  if (sections.length > limits.maxFiles) {
    errors.push(failure(
      "limit_exceeded",
      `limit_exceeded: the patch has ${sections.length} file sections; at most ${limits.maxFiles} are accepted per patch. Split it into patches of at most ${limits.maxFiles} files each.`,
      { limit: { name: "maxFiles", max: limits.maxFiles, actual: sections.length } },
    ));
  }
  return errors;
}

function isPadded(line: string): boolean {
  return line.length !== line.trim().length;
}

/**
 * Marker lines recognised only after trimming would otherwise have been
 * errors (or, for a path, had different names): say so once.
 */
function trimmedMarkerWarning(padded: readonly number[]): Warning {
  const count = padded.length;
  return warning(
    "patch_trimmed",
    `${count} marker line${count === 1 ? "" : "s"} (first: line ${padded[0]}) had leading or trailing whitespace and ${
      count === 1 ? "was" : "were"
    } read with it trimmed; a path after a marker is trimmed too.`,
    { patchLine: padded[0] },
  );
}

function sortByLine(errors: PatchFailure[]): PatchFailure[] {
  return errors
    .map((e, i) => ({ e, i }))
    .sort((a, b) => (a.e.patchLine ?? 0) - (b.e.patchLine ?? 0) || a.i - b.i)
    .map(({ e }) => e);
}

function capErrors(errors: PatchFailure[]): PatchFailure[] {
  if (errors.length <= MAX_PARSE_ERRORS) return errors;
  const shown = errors.slice(0, MAX_PARSE_ERRORS);
  shown.push(failure(
    "invalid_patch",
    `invalid_patch: ${errors.length - MAX_PARSE_ERRORS} more errors are not shown. Fix the errors above and send the patch again.`,
  ));
  return shown;
}
