/**
 * A patch sent again after it succeeded (SPEC §5.4 round 2): the usual
 * cause of a retry loop. Without an expected SHA-256 the matcher already
 * says a chunk "looks already applied"; these say it where the first
 * failure would otherwise be a different one:
 *
 * - an Update with the original `expectedSha256`: `precondition_failed`,
 *   but the current file holds the result of every chunk — "already
 *   applied, do not resend" instead of "the file changed since you read it"
 *   (re-reading would return the same hash, and the model would loop);
 * - an Add of a file that exists with exactly the content the Add writes;
 * - an Update + Move whose source is gone and whose destination holds the
 *   result of every chunk.
 *
 * Each check runs only on a failure path, and is one more locate of the
 * patch's chunks in the current file.
 *
 * @module
 */
import { failure, readHint, shaHint } from "../failure.ts";
import { locateChunks } from "../match/locate.ts";
import { isIndentationSensitive } from "../match/normalize.ts";
import { sha256Hex } from "../text/sha256.ts";
import { decodeText, newFileBytes } from "../text/text.ts";
import type { AddFileOp, FileSnapshot, PatchFailure, TextEncodingName, UpdateFileOp } from "../types.ts";
import type { PlanContext } from "./checks.ts";

/**
 * Where each chunk's result already is in `bytes` (1-based lines), or
 * undefined when some chunk is not applied there.
 */
function appliedAt(ctx: PlanContext, op: UpdateFileOp, path: string, bytes: Uint8Array | undefined): number[] | undefined {
  if (bytes === undefined || op.chunks.length === 0) return undefined;
  const decoded = decodeText(bytes, ctx.encoding);
  if (!decoded.ok) return undefined;
  const located = locateChunks(decoded.file, op.chunks, {
    matching: ctx.matching,
    path,
    indentationSensitive: isIndentationSensitive(path),
    excerptLines: ctx.excerptLines,
    excerptBytes: ctx.excerptBytes,
  });
  // By chunk: looked up once per chunk, never searched (a resent patch of
  // thousands of chunks must not cost chunks × chunks).
  const errors = new Map<number | undefined, PatchFailure>();
  for (const f of located.errors) if (!errors.has(f.hunk)) errors.set(f.hunk, f);
  const placements = new Map(located.placements.map((p) => [p.index, p]));
  const at: number[] = [];
  for (const [k, chunk] of op.chunks.entries()) {
    const e = errors.get(k + 1);
    if (e !== undefined) {
      if (e.alreadyAppliedAt === undefined) return undefined;
      at.push(e.alreadyAppliedAt);
      continue;
    }
    // A chunk that still matches is applied only if it changes nothing
    // (context only: how a Move states what the file contains).
    const placed = placements.get(k + 1);
    if (placed === undefined || chunk.lines.some((l) => l.kind !== "context")) return undefined;
    at.push(placed.start + 1);
  }
  return at;
}

function where(at: readonly number[]): string {
  const shown = at.slice(0, 5).map((line, k) => `chunk ${k + 1} at line ${line}`).join(", ");
  return at.length > 5 ? `${shown}, …` : shown;
}

/**
 * The `precondition_failed` of an Update whose expected SHA-256 is not the
 * current file's, reworded when the current file already holds the
 * patch's result; `shaFailure` itself otherwise.
 *
 * @example
 * ```ts
 * const f = resentUpdate(ctx, op, snap, checkCallerSha(ctx, snap)!);
 * ```
 */
export function resentUpdate(ctx: PlanContext, op: UpdateFileOp, snap: FileSnapshot, shaFailure: PatchFailure): PatchFailure {
  if (op.moveTo !== undefined) return shaFailure;
  const at = appliedAt(ctx, op, op.path, snap.bytes);
  if (at === undefined) return shaFailure;
  const current = snap.sha256 ?? (snap.bytes ? sha256Hex(snap.bytes) : "");
  const next = shaHint(op.path, current);
  return {
    ...shaFailure,
    message: `precondition_failed: ${op.path}: the expected SHA-256 ${shaFailure.expectedSha256} is not the current file's (${current}), but the current file already holds this patch's result: ${where(at)} has its context and '+' lines, and none of its '-' lines are left. This is usually a call that succeeded being sent again. Next step: do not resend this patch: it is already applied. For a further change to ${op.path}, build it on the current file and ${next.says}.`,
    alreadyAppliedAt: at[0]!,
    hints: [next],
  };
}

/**
 * An Add of a path that exists with exactly the bytes the Add would write:
 * already applied (the `already_exists` failure reworded), or null.
 *
 * @example
 * ```ts
 * const f = resentAdd(op, snapshotOf(ctx, op.path), blocked);
 * ```
 */
export function resentAdd(op: AddFileOp, snap: FileSnapshot, blocked: PatchFailure, encoding: TextEncodingName = "utf-8"): PatchFailure {
  if (blocked.code !== "already_exists" || snap.kind !== "file" || snap.bytes === undefined) return blocked;
  const wanted = newFileBytes(op.lines, encoding);
  if (wanted.length !== snap.bytes.length || sha256Hex(wanted) !== (snap.sha256 ?? sha256Hex(snap.bytes))) return blocked;
  return {
    ...blocked,
    message: `already_exists: *** Add File: ${op.path} — the file already exists with exactly the content this section adds (SHA-256 ${snap.sha256 ?? sha256Hex(snap.bytes)}). This is usually a call that succeeded being sent again. Next step: do not resend this section: it is already applied.`,
    // The whole new file is there, from its first line: marked like the
    // other resends, so a caller (a fleet re-run) can tell "already applied"
    // from "a different file is in the way" without reading the message.
    alreadyAppliedAt: 1,
  };
}

/**
 * An Update + Move whose source is missing and whose destination already
 * holds the result of every chunk: one "already applied" failure instead of
 * the source's `not_found` and the destination's `already_exists`, or null.
 *
 * @example
 * ```ts
 * const f = resentMove(ctx, op, source, destination);
 * ```
 */
export function resentMove(ctx: PlanContext, op: UpdateFileOp, source: FileSnapshot, destination: FileSnapshot): PatchFailure | null {
  if (op.moveTo === undefined || source.kind !== "missing" || destination.kind !== "file") return null;
  const at = appliedAt(ctx, op, op.moveTo, destination.bytes);
  if (at === undefined) return null;
  const read = readHint(op.moveTo);
  return failure(
    "not_found",
    `*** Update File: ${op.path} with *** Move to: ${op.moveTo} — ${op.path} no longer exists, and ${op.moveTo} already holds this patch's result (${where(at)}): the move looks already applied, usually by a call that succeeded being sent again. Next step: do not resend this section (${read.says} if unsure).`,
    { path: op.path, patchLine: op.patchLine, actualState: "missing", alreadyAppliedAt: at[0]!, hints: [read], closestPaths: [] },
  );
}
