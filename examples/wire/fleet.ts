/**
 * A fleet report (lib/fleet/types.ts) on the wire of the CLI's `--json`
 * and the MCP tool `apply_patch_fleet`, and back: the same shape-directed
 * conversion as every other report (examples/wire/convert.ts), with the
 * fleet's own tables here. Each host's `report`, `error` and `reconcile`
 * ticket go through the library tables (`applyReport`, `failure`,
 * `ticket`); `counts` is keyed by state names and travels as it is.
 *
 * @example
 * ```ts
 * process.stdout.write(JSON.stringify(wireFleetReport(report), null, 2)); // { ok, dry_run, hosts: [{ operation_id, … }], summary: { next_step, … } }
 * const back = fleetReportFromWire(JSON.parse(saved)); // the library's spelling again
 * ```
 *
 * @module
 */
import type { FleetHost, FleetReconciledHost, FleetReport, FleetStopped, FleetSummary } from "../../mod.ts";
import { convertByShape } from "./convert.ts";
import { WIRE_SHAPES } from "./shapes.ts";
import type { ShapeOf, WireKeysMatch } from "./shapes.ts";
import type { WireApplyReport, WireCommitReport, WirePatchFailure, WireTicket } from "./types.ts";

/** A fleet's stop on the wire. */
export type WireFleetStopped = { reason: FleetStopped["reason"]; after: string | null; failures: number };

/** One host of a `reconcileFleet` on the wire. */
export type WireFleetReconciledHost = { name: string; operation_id: string; state: FleetReconciledHost["state"]; report: WireCommitReport };

/** One host of a fleet report on the wire (every field of every state; those of its state present). */
export type WireFleetHost = {
  name: string;
  state: FleetHost["state"];
  phase?: "canary" | "rollout";
  ms?: number;
  order?: number;
  report?: WireApplyReport;
  reason?: "already_applied";
  error?: WirePatchFailure;
  operation_id?: string;
  reconcile?: WireTicket;
  reconciled?: WireFleetReconciledHost;
};

/** A fleet summary on the wire. */
export type WireFleetSummary = {
  total: number;
  counts: Record<string, number>;
  first_failure: { host: string | null; code: string; message: string } | null;
  reconcile: { host: string; operation_id: string }[];
  rerun: string[];
  next_step: string;
  headline: string;
  text: string;
};

/** A fleet report on the wire. */
export type WireFleetReport = {
  ok: boolean;
  dry_run: boolean;
  hosts: WireFleetHost[];
  stopped?: WireFleetStopped;
  refused?: WirePatchFailure;
  summary: WireFleetSummary;
};

const stopped: ShapeOf<FleetStopped> = { reason: true, after: true, failures: true };
const reconciledHost: ShapeOf<FleetReconciledHost> = { name: true, operationId: true, state: true, report: WIRE_SHAPES.commitReport };
const host: ShapeOf<FleetHost> = {
  name: true,
  state: true,
  phase: true,
  ms: true,
  order: true,
  report: WIRE_SHAPES.applyReport,
  reason: true,
  error: WIRE_SHAPES.failure,
  operationId: true,
  reconcile: WIRE_SHAPES.ticket,
  reconciled: reconciledHost,
};
const summary: ShapeOf<FleetSummary> = {
  total: true,
  counts: true,
  firstFailure: { host: true, code: true, message: true },
  reconcile: { host: true, operationId: true },
  rerun: true,
  nextStep: true,
  headline: true,
  text: true,
};
const report: ShapeOf<FleetReport> = { ok: true, dryRun: true, hosts: host, stopped, refused: WIRE_SHAPES.failure, summary };

// A field renamed or added on one side only fails the type check here.
const keysMatch: [
  WireKeysMatch<FleetStopped, WireFleetStopped>,
  WireKeysMatch<FleetReconciledHost, WireFleetReconciledHost>,
  WireKeysMatch<FleetHost, WireFleetHost>,
  WireKeysMatch<FleetSummary, WireFleetSummary>,
  WireKeysMatch<FleetReport, WireFleetReport>,
] = [true, true, true, true, true];
void keysMatch;

/**
 * A fleet report on the wire.
 *
 * @example
 * ```ts
 * wireFleetReport(report).summary.next_step;
 * ```
 */
export function wireFleetReport(value: FleetReport): WireFleetReport {
  return convertByShape(value, report, true) as WireFleetReport;
}

/**
 * `reconcileFleet`'s hosts on the wire.
 *
 * @example
 * ```ts
 * wireFleetReconciled(settled.hosts)[0]?.operation_id;
 * ```
 */
export function wireFleetReconciled(hosts: readonly FleetReconciledHost[]): WireFleetReconciledHost[] {
  return convertByShape(hosts, reconciledHost, true) as WireFleetReconciledHost[];
}

/**
 * A fleet report read back from the wire (a saved `--json` output) in the
 * library's spelling, as `reconcileFleet` reads it. Nothing is checked
 * here: `reconcileFleet` treats the report as untrusted.
 *
 * @example
 * ```ts
 * await reconcileFleet(fleetReportFromWire(JSON.parse(text)), targets);
 * ```
 */
export function fleetReportFromWire(value: unknown): FleetReport {
  return convertByShape(value, report, false) as FleetReport;
}
