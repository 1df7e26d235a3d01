/**
 * Every field of the library's reports and failures that the fleet reads or
 * writes, in one place: the fleet is built on `applyPatch` and `reconcile`
 * reports and on their failures, and this file is the only one that knows
 * how those spell their fields (the rest of `lib/fleet/` speaks through
 * these functions).
 *
 * @module
 */
import type { ApplyReport, CommitReport, FailureCode, PatchFailure, ReconcileTicket } from "../types.ts";

/**
 * The operation id a report carries.
 *
 * @example
 * ```ts
 * operationIdOf(report); // "3f2a9c01d4e5b6a7"
 * ```
 */
export function operationIdOf(report: ApplyReport | CommitReport): string {
  return report.operationId;
}

/**
 * Whether a report is a dry run's.
 *
 * @example
 * ```ts
 * isDryRun(report); // true: planned, nothing written
 * ```
 */
export function isDryRun(report: ApplyReport): boolean {
  return report.dryRun;
}

/**
 * The failures of a report (none when it is ok).
 *
 * @example
 * ```ts
 * errorsOf(report)[0]?.code; // "context_mismatch"
 * ```
 */
export function errorsOf(report: ApplyReport | CommitReport): readonly PatchFailure[] {
  return report.ok ? [] : report.errors ?? [];
}

/**
 * Whether a failure says its part of the patch is already applied: the
 * planner found the chunk's result (context and `+` lines) where its old
 * side should be, the current file already holds the whole result of an
 * Update sent with its original SHA-256, an Update + Move's destination holds
 * it, or an Add's file exists with exactly its content.
 *
 * @example
 * ```ts
 * saysAlreadyApplied({ code: "context_mismatch", message: "…", retryable: false, alreadyAppliedAt: 12 }); // true
 * ```
 */
export function saysAlreadyApplied(failure: PatchFailure): boolean {
  return failure.alreadyAppliedAt !== undefined;
}

/**
 * The root-relative path and chunk number a failure is about.
 *
 * @example
 * ```ts
 * whereOf(failure); // { path: "nginx.conf", hunk: 2 }
 * ```
 */
export function whereOf(failure: PatchFailure): { path: string | undefined; hunk: number | undefined } {
  return { path: failure.path, hunk: failure.hunk };
}

/**
 * Per file of a reconcile report, what the disk shows.
 *
 * @example
 * ```ts
 * reconciledStates(settled); // ["applied", "applied"]
 * ```
 */
export function reconciledStates(report: CommitReport): ("applied" | "not_applied" | "diverged" | undefined)[] {
  return report.files.map((f) => f.state);
}

/**
 * The operation a reconcile ticket names.
 *
 * @example
 * ```ts
 * ticketOperation(ticket); // "3f2a9c01d4e5b6a7"
 * ```
 */
export function ticketOperation(ticket: ReconcileTicket): string {
  return ticket.operationId;
}

/**
 * The report of a host the fleet could not run `applyPatch` on (its
 * connection failed, or something unforeseen happened): nothing was read
 * or changed there, and `failure` says why.
 *
 * @example
 * ```ts
 * notRunReport(failure("connect_failed", "…"), "3f2a9c01d4e5b6a7", false);
 * ```
 */
export function notRunReport(cause: PatchFailure, operationId: string, dryRun: boolean): ApplyReport {
  return {
    ok: false,
    operationId,
    atomicity: "batch_preflight_per_file_commit",
    elevated: false,
    dryRun,
    files: [],
    warnings: [],
    errors: [{ ...cause, operationId }],
  };
}

/**
 * The report of a reconcile the fleet could not run (no target of that
 * name, the connection failed): the operation is still unsettled.
 *
 * @example
 * ```ts
 * notReconciledReport(failure("connect_failed", "…"), "3f2a9c01d4e5b6a7");
 * ```
 */
export function notReconciledReport(cause: PatchFailure, operationId: string): CommitReport {
  return {
    ok: false,
    operationId,
    atomicity: "batch_preflight_per_file_commit",
    elevated: false,
    files: [],
    warnings: [],
    errors: [{ ...cause, operationId }],
  };
}

/** The failure codes after which files may have changed: the host needs a reconcile. */
export const MAY_HAVE_CHANGED: ReadonlySet<FailureCode> = new Set<FailureCode>(["outcome_unknown", "partial_apply"]);
