/**
 * `reconcileFleet`: settle every host of a fleet report whose outcome is
 * unknown, and say per host what is true now.
 *
 * @module
 */
import { failure } from "../failure.ts";
import { reconcile } from "../remote/reconcile.ts";
import type { ReconcileOptions } from "../remote/reconcile.ts";
import type { CommitReport } from "../types.ts";
import { holdShell } from "./connections.ts";
import { reconcileKeysFailure } from "./fleet_keys.ts";
import { DEFAULT_FLEET_CONCURRENCY } from "./fleet.ts";
import { endedWell } from "./host_state.ts";
import { notReconciledReport, reconciledStates, ticketOperation } from "./report_fields.ts";
import { summarizeFleet } from "./summary.ts";
import type { FleetHost, FleetHostOptions, FleetReconciledHost, FleetReconcileReport, FleetReport, FleetTarget, ReconcileFleetOptions } from "./types.ts";

type UnknownHost = Extract<FleetHost, { state: "outcome_unknown" }>;

/**
 * Settle the hosts of `report` that are `outcome_unknown`: on each, through
 * the target of the same name (its root and shell come from `targets`, never
 * from the report, which may have travelled through a file or a model),
 * {@linkcode reconcile} with the host's ticket finishes or rolls back the
 * operation and reports each file. Each host's reconcile gets the options
 * given here and, over them, the target's own `options` that a reconcile
 * reads (`sharedDirectories`, `trustRootAncestors`, `timeoutMs`, lock
 * waits, `compress`): the same policy as the commit it settles. At most `concurrency` hosts at once;
 * shells the fleet opens are closed again, as in {@linkcode applyFleet}.
 *
 * Per host: `applied`, `not_applied` (nothing changed: send the patch
 * again), `diverged` (mixed or changed by someone else: look first) or
 * `unsettled` (reconcile could not finish — unreachable, still locked, no
 * target of that name: run it again later). The returned `fleet` is the
 * report with those states folded in and a new summary. Safe to call any
 * number of times. Never throws for a host's failure.
 *
 * @example
 * ```ts
 * const report = await applyFleet(targets, { patch });
 * if (report.summary.reconcile.length > 0) {
 *   const settled = await reconcileFleet(report, targets);
 *   console.log(settled.hosts.map((h) => `${h.name}: ${h.state}`).join("\n"));
 *   console.log(settled.fleet.summary.text);
 * }
 * ```
 */
export async function reconcileFleet(report: FleetReport, targets: readonly FleetTarget[], options: ReconcileFleetOptions = {}): Promise<FleetReconcileReport> {
  if (!report || !Array.isArray(report.hosts)) throw new TypeError("reconcileFleet: report must be an applyFleet report (with hosts)");
  if (!Array.isArray(targets)) throw new TypeError("reconcileFleet: targets must be an array");
  const concurrency = options.concurrency ?? DEFAULT_FLEET_CONCURRENCY;
  if (!(Number.isInteger(concurrency) && concurrency >= 1)) throw new TypeError("reconcileFleet: concurrency must be a whole number ≥ 1");
  const byName = new Map(targets.map((t) => [t.name, t]));
  const unknown = report.hosts.filter((h): h is UnknownHost => h?.state === "outcome_unknown");
  const signal = options.signal ?? new AbortController().signal;

  const refused = reconcileKeysFailure(options);
  if (refused !== null) {
    // Nothing is contacted: each host stays unknown, with the reason.
    const hosts = unknown.map((h): FleetReconciledHost => ({ name: h.name, operationId: String(h.operationId ?? ""), state: "unsettled", report: notReconciledReport(refused, String(h.operationId ?? "")) }));
    return { ok: false, hosts, fleet: { ...report, summary: summarizeFleet(report, options.words) } };
  }
  const settled: FleetReconciledHost[] = new Array(unknown.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < unknown.length) {
      const k = next++;
      settled[k] = await settleHost(unknown[k]!, byName.get(unknown[k]!.name), { ...options, signal });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, unknown.length) }, worker));

  const byHost = new Map(settled.map((s) => [s.name, s]));
  const hosts = report.hosts.map((host): FleetHost => {
    if (host.state !== "outcome_unknown") return host;
    const reconciled = byHost.get(host.name);
    if (reconciled === undefined) return host;
    if (reconciled.state === "unsettled") return { ...host, reconciled };
    const { operationId: _o, reconcile: _r, error, ...run } = host;
    if (reconciled.state === "applied") return { ...run, state: "applied", reconciled };
    return { ...run, state: "failed", error, reconciled };
  });
  const partial = {
    dryRun: report.dryRun === true,
    hosts,
    ...(report.stopped !== undefined ? { stopped: report.stopped } : {}),
    ...(report.refused !== undefined ? { refused: report.refused } : {}),
  };
  return {
    ok: settled.every((s) => s.state === "applied" || s.state === "not_applied"),
    hosts: settled,
    fleet: { ok: hosts.every(endedWell), ...partial, summary: summarizeFleet(partial, options.words) },
  };
}

/** Reconcile one host; every way it can fail is an `unsettled` result. */
async function settleHost(host: UnknownHost, target: FleetTarget | undefined, options: ReconcileFleetOptions & { signal: AbortSignal }): Promise<FleetReconciledHost> {
  const ticket = host.reconcile;
  // The report may have travelled through a file or a model: a host without
  // a ticket is a typed failure, found before anything is contacted.
  const hasTicket = ticket !== null && typeof ticket === "object" && typeof ticketOperation(ticket) === "string";
  const operationId = hasTicket ? ticketOperation(ticket) : String(host.operationId ?? "");
  const unsettled = (report: CommitReport): FleetReconciledHost => ({ name: host.name, operationId, state: "unsettled", report });
  if (!hasTicket) {
    return unsettled(notReconciledReport(failure("invalid_argument", `host ${JSON.stringify(host.name)} is outcome_unknown but carries no reconcile ticket: pass the report applyFleet returned (or its JSON) unchanged.`), operationId));
  }
  if (target === undefined) {
    return unsettled(notReconciledReport(failure("invalid_argument", `no target is named ${JSON.stringify(host.name)}: pass the same targets as to applyFleet (each reconcile runs on its own host and root).`), operationId));
  }
  const held = await holdShell(target, options.signal, options.connectTimeoutMs);
  if ("code" in held) return unsettled(notReconciledReport(held, operationId));
  try {
    const report = await reconcile(held.shell, target.root, ticket, { ...reconcileOptionsOf(options), ...reconcileOptionsOf(target.options ?? {}), signal: options.signal });
    if (!report.ok) return unsettled(report);
    const states = reconciledStates(report);
    const state = states.every((s) => s === "applied") ? "applied" : states.every((s) => s === "not_applied") ? "not_applied" : "diverged";
    return { name: host.name, operationId, state, report };
  } catch (error) {
    const what = error instanceof Error ? error.message : String(error);
    return unsettled(notReconciledReport(failure("remote_error", `reconciling ${host.name} hit an unexpected error (${what}); run reconcileFleet again.`, { retryable: false }), operationId));
  } finally {
    await held.release();
  }
}

/**
 * The reconcile options among `from` (the call's, or a target's own apply
 * options: the same directory policy, timeouts and lock waits must hold for
 * the reconcile as for the commit it settles).
 */
function reconcileOptionsOf(from: FleetHostOptions | ReconcileFleetOptions): ReconcileOptions {
  const { lockWaitMs, timeoutMs, sharedDirectories, trustRootAncestors, compress } = from;
  return {
    ...(lockWaitMs !== undefined ? { lockWaitMs } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(sharedDirectories !== undefined ? { sharedDirectories } : {}),
    ...(trustRootAncestors !== undefined ? { trustRootAncestors } : {}),
    ...(compress !== undefined ? { compress } : {}),
  };
}
