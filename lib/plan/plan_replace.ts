/**
 * Planning a whole-file replace ({@linkcode ReplaceFileOp}: `*** Replace
 * File: X`, or `*** Delete File: X` + `*** Add File: X`).
 *
 * It plans as an Update that replaces every line: the file must exist as a
 * regular file, the caller's `expectedSha256` for X is checked against its
 * snapshot, and the commit renames the new content over it in one step,
 * keeping mode and owner (the commit program treats it as an update).
 *
 * Decisions:
 * - The new lines take the old file's dominant line ending, its BOM and its
 *   final-newline state, as an Update replacing every line would: a model
 *   rewriting a CRLF file whole must not turn it into LF (docs/patch-format.md).
 *   A file that is not text (not valid in the request's encoding) gets the
 *   new lines as an Add writes them (`\n`, final newline).
 * - `requireShaForDelete` covers a replace too: it throws away the old
 *   content as surely as a Delete does.
 *
 * @module
 */
import { failure, listHint, readHint, shaHint } from "../failure.ts";
import { unifiedDiffOfLines } from "../text/diff.ts";
import { decodeText, lineOf, newFileBytes, renderTextParts } from "../text/text.ts";
import { sha256Hex } from "../text/sha256.ts";
import { parentOf } from "../patch/paths.ts";
import { textTooLong } from "./text_too_long.ts";
import { checkCallerSha, fileTooLarge, notARegularFile, type PlanContext, requireSha, snapshotOf } from "./checks.ts";
import { missingFileFailure } from "./not_found.ts";
import type { PatchFailure, PlannedFile, ReplaceFileOp } from "../types.ts";

type OpResult = { ok: true; file: PlannedFile } | { ok: false; errors: PatchFailure[] };

/** How the model wrote the replace, for messages. */
export function replaceHeader(op: ReplaceFileOp): string {
  return op.addLine === undefined
    ? `*** Replace File: ${op.path}`
    : `*** Delete File: ${op.path} followed by *** Add File: ${op.path} (a whole-file replace)`;
}

/**
 * Plan a replace: the new bytes, the expected SHA-256 of the file it
 * replaces, and the diff.
 *
 * @example
 * ```ts
 * const r = planReplace({ type: "replace", path: "a.ini", lines: ["x = 1"], patchLine: 2 }, ctx);
 * if (r.ok) r.file.op; // "replace"
 * ```
 */
export function planReplace(op: ReplaceFileOp, ctx: PlanContext): OpResult {
  const snap = snapshotOf(ctx, op.path);
  if (snap.kind === "missing" && !snap.rejected) {
    // an existing file close to the path (case, NFC/NFD, moved): "did you mean" first (issue 29.1)
    if ((snap.closestPaths ?? []).length > 0) return { ok: false, errors: [{ ...missingFileFailure(snap, "Replace"), patchLine: op.patchLine }] };
    const list = listHint(parentOf(op.path));
    return {
      ok: false,
      errors: [failure(
        "not_found",
        `${replaceHeader(op)} — no such file under the root, and a replace rewrites an existing file. To create it, use "*** Add File: ${op.path}" with the same "+" lines; otherwise check the path (${list.says}).`,
        { path: op.path, patchLine: op.patchLine, actualState: "missing", hints: [list], closestPaths: [] },
      )],
    };
  }
  if (snap.kind !== "file" || snap.rejected) return { ok: false, errors: [{ ...notARegularFile(snap, "Replace"), patchLine: op.patchLine }] };
  const shaFailure = checkCallerSha(ctx, snap);
  if (shaFailure) return { ok: false, errors: [{ ...shaFailure, patchLine: op.patchLine }] };
  if (ctx.options.requireShaForDelete && !ctx.expectedSha.has(op.path)) {
    const read = readHint(op.path);
    const sha = shaHint(op.path, null);
    return {
      ok: false,
      errors: [failure(
        "precondition_failed",
        `${replaceHeader(op)} — here a whole-file replace, like a Delete, must name the exact version it throws away by its expected SHA-256, and this one names none. Next step: ${read.says} and ${sha.says}.`,
        { path: op.path, patchLine: op.patchLine, expectedSha256: null, hints: [read, sha] },
      )],
    };
  }
  const sha = requireSha(snap);
  const bytes = snap.bytes;
  if (!bytes) throw new TypeError(`planPatch: snapshot of ${op.path} has no bytes; a replace needs the file content for its diff and line endings`);
  const tooLarge = fileTooLarge(ctx, op.path, bytes.length, "the file");
  if (tooLarge) return { ok: false, errors: [tooLarge] };

  const decoded = decodeText(bytes, ctx.encoding);
  if (!decoded.ok && decoded.reason === "too_long") return { ok: false, errors: [textTooLong(op.path, decoded.byteLength, decoded.maxChars, op.patchLine)] };
  let newBytes: Uint8Array;
  let diff: string;
  if (decoded.ok) {
    const file = decoded.file;
    const edits = [{ start: 0, end: file.eols.length, replacement: op.lines.map((text) => ({ text })) }];
    const { parts, length } = renderTextParts(file, edits);
    newBytes = new Uint8Array(length);
    let at = 0;
    for (const part of parts) {
      newBytes.set(part, at);
      at += part.length;
    }
    diff = unifiedDiffOfLines({
      oldPath: op.path,
      newPath: op.path,
      oldLines: { length: file.eols.length, at: (i: number) => lineOf(file, i) },
      oldFinalNewline: file.finalNewline,
      edits,
      newFinalNewline: length > (file.bom ? 3 : 0) && (newBytes[length - 1] === 0x0a || newBytes[length - 1] === 0x0d),
    });
  } else {
    newBytes = newFileBytes(op.lines, ctx.encoding);
    diff = `diff --git a/${op.path} b/${op.path}\n--- a/${op.path}\n+++ b/${op.path}\n(the old content is ${bytes.length} bytes that are not text; replaced by ${newBytes.length} bytes of new text)\n`;
  }
  const newTooLarge = fileTooLarge(ctx, op.path, newBytes.length, "the new content");
  if (newTooLarge) return { ok: false, errors: [newTooLarge] };
  return {
    ok: true,
    file: {
      op: "replace",
      path: op.path,
      expected: { state: "sha256", sha256: sha },
      newBytes,
      newSha256: sha256Hex(newBytes),
      diff,
      hunks: [],
      warnings: [],
    },
  };
}
