/**
 * Compact failures (SPEC §5.4, issue 16): a chunk that fails after the
 * caller's budget of fully diagnosed failures is spent gets its code and
 * where it is, but no closest region, candidates or similar lines — the
 * diagnostics that cost a pass over the file and kilobytes of message.
 * `planPatch` folds these into one failure per file and code.
 *
 * @module
 */
import { isRetryable } from "../failure.ts";
import { type ChunkPlacement, overlappedPlacement } from "./placement.ts";
import type { ChunkFailureCode, FailureOf } from "../types.ts";

const WHAT: Record<ChunkFailureCode, string> = {
  context_mismatch: "does not match the file",
  ambiguous_hunk: "matches more than one place",
  anchor_not_found: "has an @@ anchor that was not found",
  out_of_order_hunk: "matches only before where its search started",
  anchor_after_change: "matches only before its @@ anchor: the anchor is after the change",
  overlapping_hunks: "overlaps an earlier chunk",
};

/**
 * A compact failure of chunk `hunk` of `path`, not diagnosed in full.
 *
 * @example
 * ```ts
 * briefFailure("context_mismatch", "a.ts", { hunk: 30, patchLine: 400 }).message;
 * // "context_mismatch: chunk 30 of a.ts (patch line 400) does not match the file (not diagnosed in full: …)"
 * ```
 */
export function briefFailure(code: ChunkFailureCode, path: string, ref: { hunk: number; patchLine: number }, line?: number): FailureOf<ChunkFailureCode> {
  let message: string | undefined;
  // The same fields, in the same order, as `failure` gives; the message is
  // built when first read: planPatch folds compact failures into one per
  // file and code (fold_failures.ts), so most are never read one by one —
  // 10,000 failing chunks spent 4% of their plan on messages nobody read.
  const out: FailureOf<ChunkFailureCode> = {
    code,
    get message(): string {
      return (message ??= `${code}: chunk ${ref.hunk} of ${path} (patch line ${ref.patchLine}) ${WHAT[code]} (not diagnosed in full: earlier failures used up the budget of detailed ones).`);
    },
    set message(text: string) {
      message = text;
    },
    retryable: isRetryable(code),
    path,
    hunk: ref.hunk,
    patchLine: ref.patchLine,
    ...(line !== undefined ? { line } : {}),
  };
  return out;
}

/**
 * The code {@linkcode outOfOrderFailure} gives a chunk found only before its
 * search start: `overlapping_hunks` when its one match shares lines with an
 * accepted chunk; `anchor_after_change` when its one match lies between
 * where the search would start without the chunk's @@ anchors and the
 * anchor (the model put the anchor after the lines it should precede);
 * else `out_of_order_hunk`.
 *
 * @example
 * ```ts
 * outOfOrderCode([0], 2, []); // "out_of_order_hunk"
 * outOfOrderCode([3], 1, [], { byAnchor: true, unanchoredFrom: 0 }); // "anchor_after_change"
 * ```
 */
export function outOfOrderCode(
  positions: readonly number[],
  m: number,
  placements: readonly ChunkPlacement[],
  start?: { byAnchor: boolean; unanchoredFrom?: number },
): "overlapping_hunks" | "out_of_order_hunk" | "anchor_after_change" {
  if (positions.length !== 1) return "out_of_order_hunk";
  if (overlappedPlacement(positions[0]!, m, placements)) return "overlapping_hunks";
  return anchoredAfter(positions[0]!, start) ? "anchor_after_change" : "out_of_order_hunk";
}

/**
 * Whether a chunk found only at `s`, before its search start, is there
 * because of its own @@ anchor: it is at or after where the search would
 * have started without the anchor.
 *
 * @example
 * ```ts
 * anchoredAfter(3, { byAnchor: true, unanchoredFrom: 0 }); // true
 * ```
 */
export function anchoredAfter(s: number, start?: { byAnchor: boolean; unanchoredFrom?: number }): boolean {
  return start?.byAnchor === true && start.unanchoredFrom !== undefined && s >= start.unanchoredFrom;
}
