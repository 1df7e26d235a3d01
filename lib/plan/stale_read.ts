/**
 * A stale read that still applies (issue 29.3): the caller's
 * `expectedSha256` is not the current file's, but every chunk of the
 * Update locates uniquely and exactly (tier 1) in the current text —
 * usually another writer changed a different part of the file. The
 * `precondition_failed` then carries `currentSha256` and gives the
 * one-call path: resend the same patch with that SHA-256 (which applies it
 * to the current text), or read the lines that changed first. It is never
 * applied silently: the caller asked for that version, and only the caller
 * can judge whether the other change matters to theirs.
 *
 * What changed is shown as a bounded diff when the caller's version is
 * known (PlanOptions.contentOf: applyPatch passes its snapshot cache, which
 * holds what the caller last read through it): the old and the current
 * text differ only between their common first and last lines, found in one
 * linear pass, and that one region is shown (cut to the excerpt's bounds).
 * Otherwise the message says which lines the chunks touch.
 *
 * One more exact locate of the chunks, on this failure path only.
 *
 * @module
 */
import { failure, readHint, shaHint } from "../failure.ts";
import { locateChunks } from "../match/locate.ts";
import { isIndentationSensitive } from "../match/normalize.ts";
import { unifiedDiff } from "../text/diff.ts";
import { boundedBlock, lineRange } from "../text/excerpt.ts";
import { sha256Hex } from "../text/sha256.ts";
import { decodeText } from "../text/text.ts";
import type { FileSnapshot, PatchFailure, UpdateFileOp } from "../types.ts";
import type { PlanContext } from "./checks.ts";

/** Most chunk locations named in the message. */
const SHOWN_CHUNKS = 5;

/**
 * The `precondition_failed` of an Update whose chunks all still apply
 * exactly to the current file, or null when some chunk does not (then the
 * plain "the file changed: read it again" failure stands).
 *
 * @example
 * ```ts
 * const f = staleButApplies(ctx, op, snap, checkCallerSha(ctx, snap)!) ?? shaFailure;
 * ```
 */
export function staleButApplies(ctx: PlanContext, op: UpdateFileOp, snap: FileSnapshot, shaFailure: PatchFailure): PatchFailure | null {
  if (op.chunks.length === 0 || snap.bytes === undefined || shaFailure.code !== "precondition_failed") return null;
  const expected = shaFailure.expectedSha256;
  if (typeof expected !== "string") return null;
  const decoded = decodeText(snap.bytes, ctx.encoding);
  if (!decoded.ok) return null;
  const located = locateChunks(decoded.file, op.chunks, {
    matching: "exact",
    path: op.path,
    indentationSensitive: isIndentationSensitive(op.moveTo ?? op.path),
    excerptLines: ctx.excerptLines,
    excerptBytes: ctx.excerptBytes,
    detail: 0,
  });
  if (located.errors.length > 0 || located.undiagnosed.length > 0 || located.placements.length !== op.chunks.length) return null;
  if (located.placements.some((p) => p.tier !== 1)) return null;
  const current = snap.sha256 ?? sha256Hex(snap.bytes);
  const limits = { lines: ctx.excerptLines, bytes: ctx.excerptBytes };
  const places = located.placements
    .slice(0, SHOWN_CHUNKS)
    .map((p) => `chunk ${p.index} at ${p.end > p.start ? lineRange(p.start, p.end) : `line ${p.start + 1} (an insertion)`}`)
    .join(", ") + (located.placements.length > SHOWN_CHUNKS ? `, and ${located.placements.length - SHOWN_CHUNKS} more` : "");
  const resend = shaHint(op.path, current);
  const n = decoded.file.lines.length;
  const changed = changedRegion(ctx, expected, decoded.file.lines, decoded.file.finalNewline);
  let where: string;
  let read;
  let shown = "";
  if (changed !== null) {
    // 1-based lines of the current file the other change left (at least one line to read)
    const from = Math.min(changed.start, Math.max(0, n - 1));
    const to = Math.max(changed.end, from + 1);
    read = readHint(op.path, from + 1, Math.min(n, to));
    where = changed.end > changed.start ? `at ${lineRange(changed.start, changed.end)}` : `just before line ${changed.start + 1} (lines were removed there)`;
    shown = `\nWhat changed since your read (- your version, + the current file):\n${boundedBlock(changed.diff, limits)}`;
  } else {
    const first = located.placements[0]!;
    const last = located.placements[located.placements.length - 1]!;
    read = readHint(op.path, first.start + 1, Math.max(first.start + 1, Math.min(n, last.end)));
    where = "(where is not known here: this client did not keep the version you read)";
  }
  return failure(
    "precondition_failed",
    `${op.path}: the file changed since your read ${where}: the expected SHA-256 ${expected} is not the current file's (${current}). Your chunks still apply to its current text, each exactly and in one place only (${places}).${shown}\nNext step: to apply your chunks to the current text, send the same patch again with this SHA-256 (${resend.says}); or ${read.says} ${changed !== null ? "to see what changed" : "(the lines your chunks touch) to check them"} first. Nothing was applied.`,
    {
      path: op.path,
      patchLine: op.patchLine,
      expectedSha256: expected,
      actualSha256: current,
      currentSha256: current,
      actualState: "file",
      hints: [resend, read],
    },
  );
}

/**
 * Where the caller's version (by SHA-256, from `contentOf`) and the current
 * lines differ: the region between their common first and last lines, as
 * 0-based current lines `[start, end)` and its diff lines, or null when the
 * caller's version is not known (or is not text).
 */
function changedRegion(ctx: PlanContext, sha: string, now: readonly string[], nowFinal: boolean): { start: number; end: number; diff: string[] } | null {
  const bytes = ctx.options.contentOf?.(sha);
  if (bytes === undefined || sha256Hex(bytes) !== sha) return null;
  const old = decodeText(bytes, ctx.encoding);
  if (!old.ok) return null;
  const was = old.file.lines;
  let prefix = 0;
  while (prefix < was.length && prefix < now.length && was[prefix] === now[prefix]) prefix++;
  let suffix = 0;
  while (suffix < was.length - prefix && suffix < now.length - prefix && was[was.length - 1 - suffix] === now[now.length - 1 - suffix]) suffix++;
  const edit = { start: prefix, end: was.length - suffix, replacement: now.slice(prefix, now.length - suffix).map((text) => ({ text })) };
  const text = unifiedDiff({ oldPath: "a", newPath: "a", oldLines: was, oldFinalNewline: old.file.finalNewline, edits: [edit], newFinalNewline: nowFinal, context: 1 });
  // the hunk lines only (the header names a/a)
  const diff = text.split("\n").filter((line, i) => i > 2 && line !== "");
  return { start: prefix, end: now.length - suffix, diff };
}
