/**
 * Tool descriptions: purpose first, then the workflow, the patch format with
 * a tiny example, the matching rules and what each failure means. They are
 * what a model reads before its first call, so they stay tight.
 *
 * @module
 */
import type { GroupConfig } from "./groups.ts";
import type { RootConfig } from "./roots.ts";

function rootList(roots: readonly RootConfig[]): string {
  if (roots.length === 0) return `Roots: the folders the client shares with this server (none yet); "root" is a folder's name.`;
  const listed = roots.map((r) => `${r.name} (${r.kind === "local" ? "local directory" : r.label})`).join(", ");
  return roots.length === 1
    ? `Root: ${listed}; "root" may be omitted.`
    : `Roots: ${listed}. Pass "root" with one of these names.`;
}

/**
 * The server's \`instructions\` (initialize result): the workflow in a few lines.
 *
 * @example
 * ```ts
 * new McpServer(info, { instructions: serverInstructions() });
 * ```
 */
export function serverInstructions(): string {
  return `Edit files under the configured roots (local directories or directories on SSH hosts) safely:
1. Find: list_files {path, depth, glob} lists a directory; search {pattern} greps the files (lines as path:N:hh).
2. Read: read_file {path, offset, limit} returns lines and file_sha256.
3. Patch: apply_patch {patch, expected_sha256: {path: file_sha256}} in the Codex apply_patch format; every chunk must match exactly one place, nothing is written unless the whole patch applies; dry_run: true previews the diff.
On a failure (isError) the first text block says what to do next. Paths are relative to the root; symlinks are never followed.`;
}

/**
 * The instructions' line about apply_patch_fleet, when host groups are configured.
 *
 * @example
 * ```ts
 * serverInstructions() + fleetInstructions(groups);
 * ```
 */
export function fleetInstructions(groups: readonly GroupConfig[]): string {
  if (groups.length === 0) return "";
  return `\nMany hosts: apply_patch_fleet {group, patch} sends one patch to every host of a group (${groups.map((g) => g.name).join(", ")}), canary first; its summary names the hosts to re-run.`;
}

/**
 * The list_files description for the roots.
 *
 * @example
 * ```ts
 * listFilesDescription(roots);
 * ```
 */
export function listFilesDescription(roots: readonly RootConfig[]): string {
  return `List the files and directories below a root (read-only), to find what to read or patch.

${rootList(roots)} "path" is a directory relative to the root (default the root itself).

depth 1 (default) lists the directory's own entries; up to 10 goes further down, breadth first. glob keeps entries whose name matches ("*.conf"), or, with a "/", whose path below "path" matches ("src/*.ts"). At most 1000 entries: truncated: true means narrow it down. Each entry: path (relative to the root, ready for read_file), kind (file, directory, symlink, other), size (files), mode, mtime. Symlinks are listed but never followed; directories that cannot be entered are reported in unreadable.

Failures (isError): not_found, not_regular_file (not a directory), symlink_rejected (a path through a link), invalid_path, permission_denied, and the SSH codes.`;
}

/**
 * The search description for the roots.
 *
 * @example
 * ```ts
 * searchDescription(roots);
 * ```
 */
export function searchDescription(roots: readonly RootConfig[]): string {
  return `Search the text of the files below a root for a pattern (grep on the host; read-only).

${rootList(roots)}

pattern is one line: a POSIX extended regular expression (grep -E: a|b, [0-9]+, ^start, end$; escape . ( ) [ ] * + ? { } | ^ $ \\ to match them literally), or a literal string with fixed_string: true. ignore_case folds ASCII letters. path limits the search to a directory, glob to file names ("*.py"). Binary files, symlinks and .git are skipped. At most max_results lines (default 100, up to 1000); truncated: true means more matched.

Each match is path:N:hh text — N the line number, hh the line's id as read_file's line_ids shows it — with the line cut to a few hundred characters. Then read_file {"path": path, "offset": N - 10, "limit": 30} to see the lines around it before patching.

Failures (isError): invalid_argument (an empty or multi-line pattern, or one grep rejects: the message has grep's words), not_found, not_regular_file, symlink_rejected, invalid_path, remote_unsupported (no grep on the host), and the SSH codes.`;
}

/**
 * The read_file description for the configured roots.
 *
 * @example
 * ```ts
 * readFileDescription(roots);
 * ```
 */
export function readFileDescription(roots: readonly RootConfig[]): string {
  return `Read lines of a UTF-8 text file under a configured root, with the SHA-256 needed to patch it safely with apply_patch.

${rootList(roots)} "path" is relative to the root (no leading "/", no "..").

Returns up to "limit" lines (default 800, whole lines, about 128 KiB at most) from line "offset" (default 1): start_line, end_line, total_lines; when truncated is true, call again with offset = end_line + 1. A single line longer than the budget is cut (line_cut says which characters are shown): read on with offset = that line and "column" = line_cut.next_column.
To find a file or a line first, use list_files and search.
file_sha256 is the SHA-256 of the whole file: pass it to apply_patch as expected_sha256 {"<path>": file_sha256} so the patch applies only to the version you read. content_sha256 hashes only the returned lines' bytes. eol, bom and final_newline describe the file; apply_patch keeps them, so write patch lines without "\\r".
line_ids: true prefixes each line with "N:hh|" (line number and content hash, as in failure messages); never copy that prefix into a patch.

Failures (isError; the text says what to do): not_found (no such file: check the path, or create it with *** Add File), not_regular_file (a directory or device), symlink_rejected (use the real path), invalid_utf8 (not UTF-8: a legacy single-byte text file reads with encoding "latin1" or "windows-1252" — send the same encoding to apply_patch; binary files are not editable here), invalid_argument (offset past the end, or unknown root: the message gives the valid range or roots), permission_denied, limit_exceeded (file too large), connect_failed / auth_failed / auth_unsupported / host_key_unknown / host_key_mismatch (SSH setup: tell the user; connect_failed may be retried).`;
}

/** The example patch of the apply_patch description (the tests parse it). */
export const EXAMPLE_PATCH = `*** Begin Patch
*** Add File: docs/notes.md
+# Notes
+First line.
*** Update File: src/app.py
@@ def main():
     setup()
-    run(debug=True)
+    run(debug=False)
*** Update File: old_name.py
*** Move to: new_name.py
@@
-VERSION = 1
+VERSION = 2
*** Delete File: tmp/scratch.txt
*** End Patch`;

/**
 * The apply_patch description for the configured roots.
 *
 * @example
 * ```ts
 * applyPatchDescription(roots);
 * ```
 */
export function applyPatchDescription(roots: readonly RootConfig[]): string {
  return `Apply a patch (Codex apply_patch format) to files under a configured root. Every chunk must match exactly one place; the whole patch is checked before any file is written; each file is replaced atomically, keeping its mode, owner, line endings, BOM and final newline.

${rootList(roots)}

Workflow: find the file with list_files or search, read_file it, and copy context and "-" lines exactly as read. Send expected_sha256 {"<path>": file_sha256} for every file you update or delete. Use dry_run: true to see the diff without changing anything. After success, each file's new_sha256 is its new file_sha256.

Format (paths relative to the root):
${EXAMPLE_PATCH}

In an Update, chunk lines start with " " (context, unchanged), "-" (remove) or "+" (add). Give about 3 context lines around each change; "@@ <a line above the change>" (e.g. the def/class line) narrows where the chunk may match, and several @@ lines in a row narrow further. Chunks go in file order. "*** End of File" after a chunk means it must match the end of the file. Add never overwrites an existing file: to rewrite one whole, use "*** Replace File: <path>" with "+" lines (or a Delete then an Add of the path), one atomic rename that keeps mode and owner. Move needs a missing destination. Files are UTF-8 unless you send encoding "latin1" or "windows-1252" (legacy files; every byte is kept). A unified / git diff (--- a/x, +++ b/x, @@ hunks) or a Markdown fence around the patch is accepted with a warning, but send the format above.

Matching: exact first; only if nothing matches exactly, ignoring trailing then surrounding whitespace, then Unicode punctuation folding (reported as fuzzy_match warnings; the file's own text is kept for context lines). A chunk matching in several places is never applied to the first one.

Failures (isError: true; the first text block says what to do; structuredContent.errors has code, path, hunk, line, candidates):
- context_mismatch, anchor_not_found: those lines are not in the file; the message shows the closest region with line numbers. read_file and fix the chunk. If it says the change looks already applied, do not resend it.
- ambiguous_hunk: several places match (candidates listed): add context lines or an @@ anchor.
- out_of_order_hunk, overlapping_hunks: put chunks in file order, merge overlapping ones.
- anchor_after_change: the @@ anchor is below the lines it should precede: move it above them, or drop it.
- precondition_failed: the file is not the version of your expected_sha256 (file_sha256, never content_sha256): read_file again, rebuild the patch — unless the message says the patch is already applied: then do not resend it.
- conflict: the file changed while the patch was applied; nothing was written: read again, retry.
- locked: another writer holds the file (structuredContent.errors[].lock says which lock and whose): retry in a few seconds.
- no_space, read_only_filesystem: the host's file system is full (no_space says where, bytes needed and free) or mounted read-only; nothing was changed. Tell the user; resend only once space is freed or the mount is writable.
- permission_denied: the remote user may not write there (or, in a sticky directory, replace another user's file); nothing was changed. Tell the user.
- invalid_patch: the format is wrong at the given patch line.
- invalid_utf8: the file is not UTF-8: if it is legacy text, send the call again with encoding "latin1" (or "windows-1252"). unencodable_character: a "+" line has a character that encoding cannot write (structuredContent.errors[].unencodable): write the line without it.
- invalid_path, path_outside_root, symlink_rejected, not_found, already_exists, not_regular_file, duplicate_path: fix the path or the operation (list_files and search find the right path).
- outcome_unknown, partial_apply: the connection or the host failed during the commit. The server reconciles at once and the first text block says the result (structuredContent.reconciled): applied (do not resend), not applied (send again), or diverged / unfinished (read_file the files before anything else).
- invalid_argument: unknown or missing root.
- anything else (timeout, remote_error, limit_exceeded, SSH codes): follow the message; retryable: true means the same call may succeed later.`;
}

/**
 * The apply_patch_fleet description for the configured host groups.
 *
 * @example
 * ```ts
 * applyPatchFleetDescription(groups);
 * ```
 */
export function applyPatchFleetDescription(groups: readonly GroupConfig[]): string {
  const listed = groups.map((g) => `${g.name} (${g.members.map((m) => m.name).join(", ")})`).join("; ");
  return `Apply one patch (the apply_patch format) to every host of a configured group: each host is planned on its own files (its own matches and preconditions, as apply_patch does), the canary hosts go first, one at a time, then the rest at most "concurrency" at once.

Groups (hosts in rollout order; each host is also a root of read_file and apply_patch): ${listed}.

Workflow: read_file the file on one host (root = a host's name) and write the patch from it; dry_run: true plans every host and shows each one's diff without changing anything; then send it for real, with expected_sha256 {"<host>": {"<path>": "<file_sha256>"}} for the hosts whose version you know.

Stopping: a canary that does not apply stops the rollout (nothing else starts); after the canaries, once more than max_failures hosts failed (default 0), no new host starts and the running ones finish. A dry run plans every host whatever fails.

Result: the first text block is the summary: hosts per state, why it stopped, the next step, then the first failure's message verbatim; structuredContent.hosts has each host's state and apply_patch report. States: applied; planned (dry run); skipped (the host already holds the change: sending the patch to every host again is safe); failed (nothing changed there; error says why, in apply_patch's codes, plus the SSH codes for a host that could not be reached); outcome_unknown (the commit was cut: the server reconciles at once, see reconciled); cancelled; not_started (the rollout stopped first). To go on after fixing the cause, call again with "hosts" set to summary.rerun.`;
}
