/**
 * One host's `applyPatch` report as a fleet result: its state, and the
 * failure, operation id and reconcile ticket that state needs.
 *
 * The one judgement made here: a host whose plan failed only because every
 * file section of the patch is already there ("looks already applied") is
 * `skipped`, not `failed` — that is what re-running a partly applied
 * rollout looks like on the hosts that had their turn, and they must not
 * stop the re-run. It takes every file section: one section applied and
 * another not (a host edited by hand, another patch in between) is a
 * failure like any other. A Delete is never "already applied" (a missing
 * file says nothing about whether it was ever there).
 *
 * @module
 */
import { reconcileTicketOf } from "../remote/plan_shas.ts";
import type { Patch, PatchFailure } from "../types.ts";
import { errorsOf, isDryRun, MAY_HAVE_CHANGED, operationIdOf, saysAlreadyApplied, whereOf } from "./report_fields.ts";
import type { FleetHost, FleetHostRun } from "./types.ts";

/**
 * The fleet result of one host that ran.
 *
 * @example
 * ```ts
 * const host = hostResult({ name: "web1", phase: "rollout", ms: 120, report }, patch);
 * host.state; // "applied"
 * ```
 */
export function hostResult(run: FleetHostRun, patch: Patch | null): FleetHost {
  const { report } = run;
  if (report.ok) return { ...run, state: isDryRun(report) ? "planned" : "applied" };
  const errors = errorsOf(report);
  const error = errors[0] ?? { code: "remote_error", message: "remote_error: the report failed without saying why", retryable: false };
  if (errors.some((e) => MAY_HAVE_CHANGED.has(e.code))) {
    const ticket = reconcileTicketOf(report);
    const unknown = errors.find((e) => MAY_HAVE_CHANGED.has(e.code))!;
    // Both codes carry a ticket (lib/remote/commit.ts); without one there is
    // nothing to reconcile with, and the honest state is still "unknown".
    if (ticket !== null) return { ...run, state: "outcome_unknown", error: unknown, operationId: operationIdOf(report), reconcile: ticket };
    return { ...run, state: "failed", error: unknown };
  }
  if (errors.some((e) => e.code === "cancelled")) return { ...run, state: "cancelled" };
  if (patch !== null && alreadyApplied(patch, errors)) return { ...run, state: "skipped", reason: "already_applied" };
  return { ...run, state: "failed", error };
}

/**
 * Whether `errors` (a failed plan's) say that every file section of `patch`
 * is already applied: each failure is marked already applied, and each
 * section is covered — an Update by a whole-file failure or one per chunk,
 * an Add or an Update + Move by one on its path.
 *
 * @example
 * ```ts
 * alreadyApplied(parsed.patch, report.errors!); // true on a host the rollout already did
 * ```
 */
export function alreadyApplied(patch: Patch, errors: readonly PatchFailure[]): boolean {
  if (errors.length === 0 || patch.ops.length === 0 || !errors.every(saysAlreadyApplied)) return false;
  const byPath = new Map<string, (number | undefined)[]>();
  for (const e of errors) {
    const { path, hunk } = whereOf(e);
    if (path === undefined) return false;
    let hunks = byPath.get(path);
    if (hunks === undefined) byPath.set(path, (hunks = []));
    hunks.push(hunk);
  }
  return patch.ops.every((op) => {
    const hunks = byPath.get(op.path);
    if (hunks === undefined || op.type === "delete" || op.type === "replace") return false;
    if (op.type === "add" || op.moveTo !== undefined || hunks.includes(undefined)) return true;
    const covered = new Set(hunks);
    return op.chunks.every((_, k) => covered.has(k + 1));
  });
}

/**
 * Whether a host's result stops a rollout (counts toward `maxFailures`,
 * stops it as a canary): failed, or of unknown outcome.
 *
 * @example
 * ```ts
 * countsAsFailure({ name: "web1", state: "skipped", reason: "already_applied", phase: "rollout", ms: 80, report }); // false
 * ```
 */
export function countsAsFailure(host: FleetHost): boolean {
  return host.state === "failed" || host.state === "outcome_unknown";
}

/**
 * Whether a host ended well: applied, planned (dry run) or already applied.
 *
 * @example
 * ```ts
 * endedWell(host); // true for "applied", "planned", "skipped"
 * ```
 */
export function endedWell(host: FleetHost): boolean {
  return host.state === "applied" || host.state === "planned" || host.state === "skipped";
}
