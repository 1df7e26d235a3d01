/**
 * Tool descriptions: purpose first, then the workflow, the patch format with
 * a tiny example, the matching rules and what each failure means. They are
 * what a model reads before its first call, so they stay tight.
 *
 * @module
 */
import type { RootConfig } from "./roots.ts";

function rootList(roots: readonly RootConfig[]): string {
  const listed = roots.map((r) => `${r.name} (${r.kind === "local" ? "local directory" : r.label})`).join(", ");
  return roots.length === 1
    ? `Root: ${listed}; "root" may be omitted.`
    : `Roots: ${listed}. Pass "root" with one of these names.`;
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

Returns up to "limit" lines (default 800, whole lines, about 128 KiB at most) from line "offset" (default 1): start_line, end_line, total_lines; when truncated is true, call again with offset = end_line + 1.
file_sha256 is the SHA-256 of the whole file: pass it to apply_patch as expected_sha256 {"<path>": file_sha256} so the patch applies only to the version you read. content_sha256 hashes only the returned lines' bytes. eol, bom and final_newline describe the file; apply_patch keeps them, so write patch lines without "\\r".
line_ids: true prefixes each line with "N:hh|" (line number and content hash, as in failure messages); never copy that prefix into a patch.

Failures (isError; the text says what to do): not_found (no such file: check the path, or create it with *** Add File), not_regular_file (a directory or device), symlink_rejected (use the real path), invalid_utf8 (binary or another encoding: not editable here), invalid_argument (offset past the end, or unknown root: the message gives the valid range or roots), permission_denied, limit_exceeded (file too large), connect_failed / auth_failed / host_key_unknown / host_key_mismatch (SSH setup: tell the user; connect_failed may be retried).`;
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

Workflow: read_file first, and copy context and "-" lines exactly as read. Send expected_sha256 {"<path>": file_sha256} for every file you update or delete. Use dry_run: true to see the diff without changing anything. After success, each file's new_sha256 is its new file_sha256.

Format (paths relative to the root):
${EXAMPLE_PATCH}

In an Update, chunk lines start with " " (context, unchanged), "-" (remove) or "+" (add). Give about 3 context lines around each change; "@@ <a line above the change>" (e.g. the def/class line) narrows where the chunk may match, and several @@ lines in a row narrow further. Chunks go in file order. "*** End of File" after a chunk means it must match the end of the file. Add never overwrites an existing file; Move needs a missing destination.

Matching: exact first; only if nothing matches exactly, ignoring trailing then surrounding whitespace, then Unicode punctuation folding (reported as fuzzy_match warnings; the file's own text is kept for context lines). A chunk matching in several places is never applied to the first one.

Failures (isError: true; the first text block says what to do; structuredContent.errors has code, path, hunk, line, candidates):
- context_mismatch, anchor_not_found: those lines are not in the file; the message shows the closest region with line numbers. read_file and fix the chunk. If it says the change looks already applied, do not resend it.
- ambiguous_hunk: several places match (candidates listed): add context lines or an @@ anchor.
- out_of_order_hunk, overlapping_hunks: put chunks in file order, merge overlapping ones.
- precondition_failed: the file is not the version of your expected_sha256: read_file again, rebuild the patch.
- conflict: the file changed while the patch was applied; nothing was written: read again, retry.
- locked: another writer holds the file: retry in a few seconds.
- invalid_patch: the format is wrong at the given patch line.
- invalid_path, path_outside_root, symlink_rejected, not_found, already_exists, not_regular_file, duplicate_path: fix the path or the operation.
- outcome_unknown, partial_apply: the connection or the host failed during the commit. The server reconciles at once and the first text block says the result (structuredContent.reconciled): applied (do not resend), not applied (send again), or diverged / unfinished (read_file the files before anything else).
- invalid_argument: unknown or missing root.
- anything else (timeout, remote_error, permission_denied, limit_exceeded, SSH codes): follow the message; retryable: true means the same call may succeed later.`;
}
