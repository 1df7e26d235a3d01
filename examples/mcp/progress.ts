/**
 * apply_patch's MCP progress notifications, when the client sent a
 * progressToken: one as planning begins on a large input (matching chunks
 * against megabytes takes a while, and nothing else would be heard from
 * the server meanwhile; issue 29 item 5), then the upload's bytes, at most
 * about one per 5% so a 40 MB upload does not flood the client, and
 * always the last one.
 *
 * MCP wants `progress` to increase with each notification: the planning
 * one is 0 (no total: nothing is counted yet), the upload's count its
 * bytes from there.
 *
 * @module
 */
import type { ApplyPhase, ApplyRequest } from "../../mod.ts";
import type { Extra } from "./context.ts";

/** Planning input (patch and files read) from which planning gets its own notification. */
export const PLAN_PROGRESS_MIN_BYTES: number = 1 << 20;

/**
 * The `onProgress` and `onPhase` of applyPatch for one call (none without a progressToken).
 *
 * @example
 * ```ts
 * await applyPatch(shell, { root, patch, ...applyProgress(extra) });
 * ```
 */
export function applyProgress(extra: Extra): Pick<ApplyRequest, "onProgress" | "onPhase"> {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return {};
  let last = -1;
  let lastStep = -1;
  const send = (progress: number, total: number | undefined, message: string): void => {
    last = progress;
    extra.sendNotification({
      method: "notifications/progress",
      params: { progressToken, progress, ...(total !== undefined ? { total } : {}), message },
    }).catch(() => {});
  };
  return {
    onPhase: (phase: ApplyPhase) => {
      if (phase.phase !== "plan" || phase.bytes < PLAN_PROGRESS_MIN_BYTES || last >= 0) return;
      const files = `${phase.files} file${phase.files === 1 ? "" : "s"}`;
      send(0, undefined, `planning: matching ${phase.chunks} chunk${phase.chunks === 1 ? "" : "s"} of ${files} against ${megabytes(phase.bytes)} (nothing is written until every chunk matches)`);
    },
    onProgress: (sent, total) => {
      if (total === 0 || sent <= last) return;
      const step = Math.floor((sent * 20) / total);
      if (sent < total && step === lastStep) return;
      lastStep = step;
      send(sent, total, `uploading the new contents: ${sent} of ${total} bytes`);
    },
  };
}

function megabytes(bytes: number): string {
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}
