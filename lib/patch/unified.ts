/**
 * Unified / `git diff` input converted to Codex sections (SPEC §3 round 2):
 * `--- a/x` + `+++ b/x` + `@@ -n,m +n,m @@` hunks become `*** Update File:
 * x` with one bare-`@@` chunk per hunk, located by context like any chunk
 * (the line numbers are never used for that); `--- /dev/null` is an Add,
 * `+++ /dev/null` a Delete, `rename from` / `rename to` (or differing old and
 * new paths) a Move. git's `a/` and `b/` prefixes are removed.
 *
 * When is a text a unified diff and not a Codex patch? Only where a Codex
 * file section header is expected — the start of a text without `*** Begin
 * Patch`, or between sections inside Begin/End — and only when the line is
 * `diff --git …`, or `--- …` immediately followed by `+++ …`. No valid Codex
 * patch has such a line there (it would be an error today), so no valid
 * patch changes meaning. Inside an `*** Update File:` section a line
 * starting with '-' or '+' stays a body line (Codex), so `--- a/x` there is
 * still "delete `-- a/x`": the planner diagnoses that case when the chunk
 * fails (lib/plan/refine.ts), it is never silently re-read.
 *
 * A hunk ends at the next `@@`, the next file header, a Codex marker or any
 * line that is not a hunk line (' ', '-', '+', '\', or empty = empty
 * context); its counts are not used to delimit it (hand-written diffs get
 * them wrong). They are used once: a diff that is not wrapped in
 * Begin/End has no end marker, so when its last hunk has fewer lines than
 * its header announces, the text may have been cut off, and it is refused.
 *
 * @module
 */
import { failure, warning } from "../failure.ts";
import { markerOf } from "./markers.ts";
import type { Chunk, ChunkLine, FileOp, PatchFailure, Warning } from "../types.ts";

/** One file of a unified diff as read. */
export interface UnifiedFile {
  op: FileOp;
  /** 1-based patch line of `rename to` / `+++` naming a Move destination. */
  moveLine?: number;
  /** Index of the first line after this file. */
  next: number;
  errors: PatchFailure[];
  /** What the conversion could not carry over (mode changes), for the warning. */
  notes: string[];
  /** The last hunk's announced and found line counts (for the cut-off check). */
  lastHunk?: { patchLine: number; header: string; oldWanted: number; newWanted: number; oldFound: number; newFound: number };
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;
const EXTENDED_HEADER = /^(old mode|new mode|deleted file mode|new file mode|similarity index|dissimilarity index|rename from|rename to|copy from|copy to|index) ?(.*)$/;

/**
 * Whether line `i` starts a unified-diff file: `diff --git`, or `--- `
 * followed by `+++ ` on the next line (at most `to`).
 *
 * @example
 * ```ts
 * isUnifiedStart(["--- a/x", "+++ b/x"], 0, 1); // true
 * ```
 */
export function isUnifiedStart(lines: readonly string[], i: number, to: number): boolean {
  const line = lines[i]!;
  if (line.startsWith("diff --git ")) return true;
  return line.startsWith("--- ") && i + 1 <= to && lines[i + 1]!.startsWith("+++ ");
}

/**
 * Read the unified-diff file starting at line `i` (see isUnifiedStart), up
 * to line `to`.
 *
 * @example
 * ```ts
 * const f = readUnifiedFile(["--- a/x", "+++ b/x", "@@ -1 +1 @@", "-a", "+b"], 0, 4);
 * f.op; // { type: "update", path: "x", chunks: [...], patchLine: 1 }
 * ```
 */
export function readUnifiedFile(lines: readonly string[], i: number, to: number): UnifiedFile {
  const start = i;
  const errors: PatchFailure[] = [];
  const notes: string[] = [];
  const error = (at: number, message: string, path?: string): void => {
    errors.push(failure("invalid_patch", `invalid_patch: line ${at + 1} ${quote(lines[at]!)} ${message}`, { patchLine: at + 1, ...(path !== undefined ? { path } : {}) }));
  };

  let gitOld: string | null | undefined;
  let gitNew: string | null | undefined;
  let renameFrom: string | undefined;
  let renameTo: string | undefined;
  let renameToLine: number | undefined;
  let newFile = false;
  let deletedFile = false;
  if (lines[i]!.startsWith("diff --git ")) {
    const paths = gitHeaderPaths(lines[i]!.slice("diff --git ".length));
    if (paths !== null) [gitOld, gitNew] = paths;
    i++;
    for (; i <= to; i++) {
      const m = EXTENDED_HEADER.exec(lines[i]!);
      if (m === null) break;
      const [, key, value] = m;
      if (key === "rename from") renameFrom = unquote(value!);
      else if (key === "rename to") {
        renameTo = unquote(value!);
        renameToLine = i + 1;
      } else if (key === "copy from" || key === "copy to") {
        error(i, "is a git copy, which a patch here cannot express: send '*** Add File: ' with the copy's whole content instead.");
      } else if (key === "new file mode") newFile = true;
      else if (key === "deleted file mode") deletedFile = true;
      else if (key === "old mode" || key === "new mode") notes.push(`the mode change (${lines[i]!.trim()}) was not applied: files keep their mode`);
    }
    if (i <= to && (lines[i]!.startsWith("Binary files ") || lines[i]!.startsWith("GIT binary patch"))) {
      error(i, "is a binary diff; this tool patches UTF-8 text only.");
      return { op: placeholder(gitNew ?? gitOld ?? "", start), next: skipFile(lines, i + 1, to), errors, notes };
    }
  }

  let oldPath: string | null | undefined = gitOld;
  let newPath: string | null | undefined = gitNew;
  let newPathLine = start + 1;
  if (i <= to && lines[i]!.startsWith("--- ") && i + 1 <= to && lines[i + 1]!.startsWith("+++ ")) {
    oldPath = headerPath(lines[i]!.slice(4));
    newPath = headerPath(lines[i + 1]!.slice(4));
    newPathLine = i + 2;
    i += 2;
  }
  if (renameFrom !== undefined) oldPath = renameFrom;
  if (renameTo !== undefined) {
    newPath = renameTo;
    newPathLine = renameToLine!;
  }
  if (newFile) oldPath = null;
  if (deletedFile) newPath = null;
  if (oldPath === undefined || newPath === undefined) {
    error(start, "starts a git diff whose file names could not be read: a file of a unified diff starts with '--- a/PATH' and '+++ b/PATH'.");
    return { op: placeholder("", start), next: skipFile(lines, i, to), errors, notes };
  }
  [oldPath, newPath] = stripPrefixes(oldPath, newPath);
  if (oldPath === null && newPath === null) {
    error(start, "names /dev/null on both sides, so it changes no file.");
    return { op: placeholder("", start), next: skipFile(lines, i, to), errors, notes };
  }
  const path = (oldPath ?? newPath)!;

  const chunks: Chunk[] = [];
  let lastHunk: UnifiedFile["lastHunk"];
  while (i <= to && lines[i]!.startsWith("@@")) {
    const header = HUNK_HEADER.exec(lines[i]!);
    if (header === null) {
      error(i, "is not a unified-diff hunk header: write '@@ -12,7 +12,8 @@' (the numbers are not used) or use the Codex format.", path);
      i = skipFile(lines, i + 1, to);
      break;
    }
    const chunk: Chunk = { anchors: [], lines: [], endOfFile: false, patchLine: i + 1 };
    const headerLine = i;
    let oldFound = 0;
    let newFound = 0;
    for (i++; i <= to; i++) {
      const line = lines[i]!;
      if (line.startsWith("@@") || isUnifiedStart(lines, i, to) || (markerOf(line) !== null && !/^[ +-]/.test(line))) break;
      const c = line.charCodeAt(0);
      let kind: ChunkLine["kind"];
      if (line.trim() === "") kind = "context";
      else if (c === 0x20) kind = "context";
      else if (c === 0x2d) kind = "delete";
      else if (c === 0x2b) kind = "insert";
      else if (c === 0x5c) continue; // "\ No newline at end of file": the file's own final-newline state is kept
      else break;
      chunk.lines.push({ kind, text: line.trim() === "" && c !== 0x20 ? "" : line.slice(1), patchLine: i + 1 });
      if (kind !== "insert") oldFound++;
      if (kind !== "delete") newFound++;
    }
    lastHunk = {
      patchLine: headerLine + 1,
      header: lines[headerLine]!,
      oldWanted: header[2] === undefined ? 1 : Number(header[2]),
      newWanted: header[4] === undefined ? 1 : Number(header[4]),
      oldFound,
      newFound,
    };
    if (chunk.lines.length === 0) {
      error(headerLine, "starts a hunk with no lines: after '@@ -a,b +c,d @@' come the ' ', '-' and '+' lines of the change.", path);
      continue;
    }
    chunks.push(chunk);
  }

  const result = (op: FileOp, moveLine?: number): UnifiedFile => ({ op, ...(moveLine !== undefined ? { moveLine } : {}), next: i, errors, notes, ...(lastHunk ? { lastHunk } : {}) });
  if (oldPath === null) {
    const bad = chunks.flatMap((c) => c.lines).find((l) => l.kind !== "insert");
    if (bad !== undefined) error(bad.patchLine - 1, `is not a '+' line, but a new file (--- /dev/null) has only '+' lines.`, path);
    return result({ type: "add", path, lines: chunks.flatMap((c) => c.lines).map((l) => l.text), patchLine: start + 1 });
  }
  if (newPath === null) {
    const bad = chunks.flatMap((c) => c.lines).find((l) => l.kind !== "delete");
    if (bad !== undefined) error(bad.patchLine - 1, `is not a '-' line, but a deleted file (+++ /dev/null) has only '-' lines.`, path);
    return result({ type: "delete", path, patchLine: start + 1 });
  }
  const moveTo = newPath !== oldPath ? newPath : undefined;
  if (chunks.length === 0 && errors.length === 0) {
    error(
      start,
      moveTo !== undefined
        ? `renames ${JSON.stringify(oldPath)} to ${JSON.stringify(moveTo)} without changing it; write it as '*** Update File: ${oldPath}', '*** Move to: ${moveTo}', '@@' and one ' ' line the file contains.`
        : "has no hunk: after '--- a/PATH' and '+++ b/PATH' come '@@ -a,b +c,d @@' lines, each followed by the ' ', '-' and '+' lines of the change.",
      path,
    );
  }
  for (const [k, chunk] of chunks.entries()) {
    if (moveTo === undefined && chunk.lines.every((l) => l.kind === "context")) {
      error(chunk.patchLine - 1, `starts hunk ${k + 1} of ${JSON.stringify(path)}, which changes nothing (only ' ' context lines): add the '-' and '+' lines of the change, or remove the hunk.`, path);
    }
  }
  return result({ type: "update", path, ...(moveTo !== undefined ? { moveTo } : {}), chunks, patchLine: start + 1 }, moveTo !== undefined ? newPathLine : undefined);
}

/**
 * The one warning of a converted diff: which sections it became, what was
 * not carried over, and the Codex form to send next time.
 *
 * @example
 * ```ts
 * unifiedWarning(files, 1);
 * ```
 */
export function unifiedWarning(files: readonly UnifiedFile[], firstLine: number): Warning {
  const described = files.map(({ op }) => {
    if (op.type === "add") return `*** Add File: ${op.path}`;
    if (op.type === "delete") return `*** Delete File: ${op.path}`;
    if (op.type === "replace") return `*** Replace File: ${op.path}`;
    const move = op.moveTo !== undefined ? ` + *** Move to: ${op.moveTo}` : "";
    return `*** Update File: ${op.path}${move} (${op.chunks.length} chunk${op.chunks.length === 1 ? "" : "s"})`;
  });
  const notes = files.flatMap((f) => f.notes);
  const first = files[0]?.op;
  const example = first?.type === "update" ? `'*** Update File: ${first.path}', '@@', then the ' ', '-' and '+' lines` : "'*** Update File: PATH', '@@', then the ' ', '-' and '+' lines";
  return warning(
    "unified_diff_converted",
    `The input (from line ${firstLine}) was a unified diff; it was read as ${described.join("; ")}. Its line numbers were not used: each hunk is located by its context lines, as a Codex chunk is.${
      notes.length > 0 ? ` Not carried over: ${notes.join("; ")}.` : ""
    } Next time send the Codex format: '*** Begin Patch', ${example}, '*** End Patch'.`,
    { patchLine: firstLine, ...(first ? { path: first.path } : {}) },
  );
}

/** A file a diff could not describe; its errors reject the patch, so the op is never planned. */
function placeholder(path: string, start: number): FileOp {
  return { type: "delete", path, patchLine: start + 1 };
}

/** The first line at or after `i` that starts another file (or ends the range). */
function skipFile(lines: readonly string[], i: number, to: number): number {
  while (i <= to && !isUnifiedStart(lines, i, to) && markerOf(lines[i]!) === null) i++;
  return i;
}

/** The path of a `---` / `+++` line: quoted, or up to a tab (timestamps follow one); `null` for /dev/null. */
function headerPath(rest: string): string | null {
  const text = rest.startsWith('"') ? unquote(rest) : rest.split("\t")[0]!.trimEnd();
  return text === "/dev/null" ? null : text;
}

/** `a/x b/y` of a `diff --git` line (quoted names allowed); null when it cannot be split. */
function gitHeaderPaths(rest: string): [string, string] | null {
  if (rest.startsWith('"')) {
    const end = closingQuote(rest, 0);
    if (end < 0) return null;
    const second = rest.slice(end + 2);
    return [unquote(rest.slice(0, end + 1)), second.startsWith('"') ? unquote(second) : second];
  }
  // Unquoted: split where " b/" starts the second name (git's default prefixes).
  const at = rest.indexOf(" b/");
  if (at > 0) return [rest.slice(0, at), rest.slice(at + 1)];
  const half = (rest.length - 1) / 2;
  return Number.isInteger(half) && rest[half] === " " ? [rest.slice(0, half), rest.slice(half + 1)] : null;
}

/** git's `a/` and `b/` prefixes, removed when both sides have theirs (or are /dev/null). */
function stripPrefixes(oldPath: string | null, newPath: string | null): [string | null, string | null] {
  const oldOk = oldPath === null || oldPath.startsWith("a/");
  const newOk = newPath === null || newPath.startsWith("b/");
  if (!oldOk || !newOk) return [oldPath, newPath];
  return [oldPath === null ? null : oldPath.slice(2), newPath === null ? null : newPath.slice(2)];
}

function closingQuote(text: string, open: number): number {
  for (let j = open + 1; j < text.length; j++) {
    if (text[j] === "\\") j++;
    else if (text[j] === '"') return j;
  }
  return -1;
}

/** A git C-style quoted name (`"a/\303\244 b.txt"`), or the text itself when unquoted. */
function unquote(text: string): string {
  const t = text.trim();
  if (!t.startsWith('"')) return t;
  const end = closingQuote(t, 0);
  const body = t.slice(1, end < 0 ? t.length : end);
  const bytes: number[] = [];
  const simple: Record<string, number> = { n: 10, t: 9, r: 13, '"': 34, "\\": 92, a: 7, b: 8, f: 12, v: 11 };
  const encoder = new TextEncoder();
  for (let j = 0; j < body.length; j++) {
    const ch = body[j]!;
    if (ch !== "\\") {
      bytes.push(...encoder.encode(ch)); // bounded spread: one character's bytes
      continue;
    }
    const next = body[j + 1] ?? "";
    if (/[0-7]/.test(next)) {
      const oct = /^[0-7]{1,3}/.exec(body.slice(j + 1))![0];
      bytes.push(parseInt(oct, 8) & 0xff);
      j += oct.length;
    } else {
      bytes.push(simple[next] ?? next.charCodeAt(0));
      j++;
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

function quote(text: string): string {
  return JSON.stringify(text.length > 120 ? text.slice(0, 120) + "…" : text);
}
