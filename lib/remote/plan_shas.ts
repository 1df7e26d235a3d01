/**
 * What each path of a plan holds before and after it is applied, by the
 * manifest's path index — shared by commit (outcomes, conflicts) and
 * reconcile (applied / not_applied / diverged) — and the same facts as a
 * reconcile ticket: plain JSON a failure carries so the operation can be
 * settled by whoever kept only the report.
 *
 * @module
 */
import { newContentLength } from "../plan/new_content.ts";
import type { TransactionLayout } from "./manifest.ts";
import type { PatchFailure, Plan, ReconcileTicket } from "../types.ts";

/**
 * The old and planned SHA-256 of path index `k` (`null` = missing).
 *
 * @example
 * ```ts
 * shasOf(plan, layout, 0); // { oldSha: "ab…", newSha: "cd…" }
 * ```
 */
export function shasOf(plan: Plan, layout: TransactionLayout, k: number): { oldSha: string | null; newSha: string | null } {
  for (let i = 0; i < plan.files.length; i++) {
    const file = plan.files[i]!;
    const { src, dst } = layout.files[i]!;
    if (src === k) {
      return {
        oldSha: file.expected.state === "sha256" ? file.expected.sha256 : null,
        newSha: file.op === "delete" || file.op === "move" ? null : file.newSha256 ?? null,
      };
    }
    if (dst === k) return { oldSha: null, newSha: file.newSha256 ?? null };
  }
  return { oldSha: null, newSha: null };
}

/**
 * Per path, the SHA-256 it holds once the operation is applied (`null`:
 * removed), as `outcome_unknown` failures report it.
 *
 * @example
 * ```ts
 * plannedShas(reconcileTicket(plan, "op1")); // [{ path: "a.txt", sha256: "cd…" }]
 * ```
 */
export function plannedShas(ticket: ReconcileTicket): { path: string; sha256: string | null }[] {
  return ticket.files.flatMap((file) =>
    file.op === "move"
      ? [{ path: file.path, sha256: null }, { path: file.moveTo!, sha256: file.newSha256 }]
      : [{ path: file.path, sha256: file.newSha256 }]
  );
}

/**
 * The reconcile ticket of `plan` committed as `operationId`: what
 * {@linkcode reconcile} needs, without the contents.
 *
 * @example
 * ```ts
 * const ticket = reconcileTicket(plan, "3f2a9c01d4e5b6a7");
 * JSON.stringify(ticket); // small: paths and SHA-256s only
 * ```
 */
export function reconcileTicket(plan: Plan, operationId: string): ReconcileTicket {
  return {
    operationId,
    files: plan.files.map((file) => ({
      op: file.op,
      path: file.path,
      ...(file.op === "move" ? { moveTo: file.moveTo! } : {}),
      previousSha256: file.expected.state === "sha256" ? file.expected.sha256 : null,
      newSha256: file.op === "delete" ? null : file.newSha256 ?? null,
      newSize: file.op === "delete" ? null : newContentLength(file) ?? null,
    })),
  };
}

/**
 * The reconcile ticket a report carries (in its `outcome_unknown`,
 * `partial_apply` or leftover-files failure), or `null` when the report asks
 * for no reconcile.
 *
 * @example
 * ```ts
 * const ticket = reconcileTicketOf(report);
 * if (ticket) await reconcile(shell, root, ticket);
 * ```
 */
export function reconcileTicketOf(report: { errors?: readonly PatchFailure[] }): ReconcileTicket | null {
  return report.errors?.find((e) => e.reconcile !== undefined)?.reconcile ?? null;
}
