/**
 * The one place where the library's camelCase shapes become the snake_case
 * wire format (examples/wire/types.ts) of the MCP server's
 * `structuredContent` and the CLI's `--json` output, and where a ticket
 * read back from that JSON becomes a library `ReconcileTicket` again.
 *
 * The conversion is shape-directed, never a blind rewrite of every key: a
 * table per library type (examples/wire/shapes.ts) names each of its
 * fields with the rule for its value, and only those fields are renamed
 * (to their snake_case). A value whose rule is `true` travels as it is,
 * keys and all, so a map keyed by file paths or user text
 * (`{"a_b/c_d.txt": …}`, `{"newSha256": …}`) is never touched; a field the
 * table does not know keeps its name and value.
 *
 * @example
 * ```ts
 * const wire = wireApplyReport(report); // { ok, operation_id, dry_run, files: [{ new_sha256, … }], … }
 * process.stdout.write(JSON.stringify(wire, null, 2));
 * ```
 *
 * @module
 */
import type {
  ApplyReport,
  CommitReport,
  FileReport,
  ListFilesResult,
  PatchFailure,
  ReadWindowResult,
  ReconcileTicket,
  SearchFilesResult,
  Warning,
} from "../../mod.ts";
import type {
  ApplyOutcome,
  WireApplyOutcome,
  WireApplyReport,
  WireCommitReport,
  WireFileReport,
  WireListResult,
  WirePatchFailure,
  WireReadWindow,
  WireSearchResult,
  WireTicket,
  WireWarning,
} from "./types.ts";
import { snakeCase, WIRE_SHAPES, WireValues } from "./shapes.ts";
import type { WireRule, WireShape } from "./shapes.ts";

const { applyOutcome, applyReport, commitReport, failure, fileReport, listResult, readWindow, searchResult, ticket, warning } = WIRE_SHAPES;

// ---------------------------------------------------------------------------
// The walk
// ---------------------------------------------------------------------------

function isShape(rule: WireRule): rule is WireShape {
  return rule !== true && !(rule instanceof WireValues);
}

/**
 * `value` converted by `rule`, towards the wire (`toWire`) or back. Only
 * fields the shape names are renamed; everything else keeps its key.
 *
 * @example
 * ```ts
 * convertByShape({ newSha256: null, extra: { "a_b/c_d.txt": 1 } }, { newSha256: true }, true);
 * // { new_sha256: null, extra: { "a_b/c_d.txt": 1 } }
 * ```
 */
export function convertByShape(value: unknown, rule: WireRule, toWire: boolean): unknown {
  if (rule instanceof WireValues) {
    if (typeof value !== "string") return value;
    return (toWire ? rule.toWire : rule.fromWire).get(value) ?? value;
  }
  if (rule === true || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => convertByShape(item, rule, toWire));
  const byWireName = toWire ? undefined : wireNames(rule);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // Back from the wire, a key may come in either spelling (a library
    // caller's own JSON is camelCase).
    const field = Object.hasOwn(rule, key) ? key : byWireName?.get(key);
    if (field === undefined) {
      out[key] = item;
      continue;
    }
    const sub = rule[field]!;
    out[toWire ? snakeCase(field) : field] = isShape(sub) || sub instanceof WireValues ? convertByShape(item, sub, toWire) : item;
  }
  return out;
}

const wireNameCache = new WeakMap<WireShape, ReadonlyMap<string, string>>();

function wireNames(shape: WireShape): ReadonlyMap<string, string> {
  let names = wireNameCache.get(shape);
  if (names === undefined) {
    names = new Map(Object.keys(shape).map((field) => [snakeCase(field), field]));
    wireNameCache.set(shape, names);
  }
  return names;
}

// ---------------------------------------------------------------------------
// Typed entry points
// ---------------------------------------------------------------------------

/**
 * A failure on the wire.
 *
 * @example
 * ```ts
 * wireFailure(failure("locked", "…", { operationId: "op1" })).operation_id; // "op1"
 * ```
 */
export function wireFailure(f: PatchFailure): WirePatchFailure {
  return convertByShape(f, failure, true) as WirePatchFailure;
}

/**
 * Failures on the wire.
 *
 * @example
 * ```ts
 * const errors = wireFailures(report.errors ?? []);
 * ```
 */
export function wireFailures(errors: readonly PatchFailure[]): WirePatchFailure[] {
  return errors.map(wireFailure);
}

/**
 * Warnings on the wire.
 *
 * @example
 * ```ts
 * const warnings = wireWarnings(report.warnings);
 * ```
 */
export function wireWarnings(warnings: readonly Warning[]): WireWarning[] {
  return convertByShape(warnings, warning, true) as WireWarning[];
}

/**
 * File reports on the wire.
 *
 * @example
 * ```ts
 * const files = wireFileReports(report.files);
 * ```
 */
export function wireFileReports(files: readonly FileReport[]): WireFileReport[] {
  return convertByShape(files, fileReport, true) as WireFileReport[];
}

/**
 * A commit or reconcile report on the wire.
 *
 * @example
 * ```ts
 * JSON.stringify(wireCommitReport(settled));
 * ```
 */
export function wireCommitReport(report: CommitReport): WireCommitReport {
  return convertByShape(report, commitReport, true) as WireCommitReport;
}

/**
 * An apply report on the wire.
 *
 * @example
 * ```ts
 * JSON.stringify(wireApplyReport(report));
 * ```
 */
export function wireApplyReport(report: ApplyReport): WireApplyReport {
  return convertByShape(report, applyReport, true) as WireApplyReport;
}

/**
 * What a front end answers for one apply on the wire: the report (without
 * operation fields when it failed before any operation) and the reconcile
 * the front end ran after an unknown outcome.
 *
 * @example
 * ```ts
 * JSON.stringify(wireApplyOutcome({ ...report, reconciled: settled }));
 * ```
 */
export function wireApplyOutcome(outcome: ApplyOutcome): WireApplyOutcome {
  return convertByShape(outcome, applyOutcome, true) as WireApplyOutcome;
}

/**
 * A reconcile ticket on the wire.
 *
 * @example
 * ```ts
 * JSON.stringify(wireTicket(reconcileTicket(plan, operationId)));
 * ```
 */
export function wireTicket(t: ReconcileTicket): WireTicket {
  return convertByShape(t, ticket, true) as WireTicket;
}

/**
 * A ticket read back from JSON (wire or library spelling) in the library's
 * spelling; `reconcile` itself checks its fields.
 *
 * @example
 * ```ts
 * const t = ticketFromWire(JSON.parse('{"operation_id":"op1","files":[]}')); // { operationId: "op1", files: [] }
 * ```
 */
export function ticketFromWire(value: unknown): ReconcileTicket {
  return convertByShape(value, ticket, false) as ReconcileTicket;
}

/**
 * A report read back from `--json` output (wire spelling) in the library's
 * spelling: its failures, and so the ticket one of them carries.
 *
 * @example
 * ```ts
 * const report = applyReportFromWire(JSON.parse(stdout));
 * reconcileTicketOf(report);
 * ```
 */
export function applyReportFromWire(value: unknown): ApplyReport {
  return convertByShape(value, applyReport, false) as ApplyReport;
}

/**
 * A failure read back from the wire in the library's spelling.
 *
 * @example
 * ```ts
 * failureFromWire({ code: "locked", message: "…", retryable: true, operation_id: "op1" }).operationId; // "op1"
 * ```
 */
export function failureFromWire(value: unknown): PatchFailure {
  return convertByShape(value, failure, false) as PatchFailure;
}

/**
 * A warning read back from the wire in the library's spelling.
 *
 * @example
 * ```ts
 * warningFromWire({ code: "fuzzy_match", message: "…", patch_line: 3 }).patchLine; // 3
 * ```
 */
export function warningFromWire(value: unknown): Warning {
  return convertByShape(value, warning, false) as Warning;
}

/**
 * A read window on the wire.
 *
 * @example
 * ```ts
 * wireReadWindow(readWindow(bytes)).file_sha256;
 * ```
 */
export function wireReadWindow(w: ReadWindowResult): WireReadWindow {
  return convertByShape(w, readWindow, true) as WireReadWindow;
}

/**
 * A listing on the wire.
 *
 * @example
 * ```ts
 * wireListResult(await listFiles(shell, root)).unreadable_count;
 * ```
 */
export function wireListResult(r: ListFilesResult): WireListResult {
  return convertByShape(r, listResult, true) as WireListResult;
}

/**
 * A search result on the wire.
 *
 * @example
 * ```ts
 * wireSearchResult(await searchFiles(shell, root, "TODO")).files_searched;
 * ```
 */
export function wireSearchResult(r: SearchFilesResult): WireSearchResult {
  return convertByShape(r, searchResult, true) as WireSearchResult;
}
