/**
 * The one place where the library's camelCase shapes become the snake_case
 * wire format (examples/wire/types.ts) of the MCP server's
 * `structuredContent` and the CLI's `--json` output, and where a ticket
 * read back from that JSON becomes a library `ReconcileTicket` again.
 *
 * The conversion is shape-directed, never a blind rewrite of every key: a
 * table per library type names each of its fields with the rule for its
 * value, and only those fields are renamed (to their snake_case). A value
 * whose rule is `true` travels as it is, keys and all, so a map keyed by
 * file paths or user text (`{"a_b/c_d.txt": …}`, `{"newSha256": …}`) is
 * never touched; a field the table does not know keeps its name and value.
 * The tables are typed against the library types (a new field fails the
 * type check until it has a rule) and their wire names against the wire
 * types (`Snake<field>` must be exactly the wire type's keys).
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
  ClosestRegion,
  CommitReport,
  FailureHint,
  FileReport,
  LineRef,
  ListedEntry,
  ListFilesResult,
  LockHolder,
  NoSpace,
  PatchFailure,
  PathOutcome,
  ReadWindowResult,
  ReconcileTicket,
  ReconcileTicketFile,
  SearchFilesResult,
  SearchMatch,
  SkippedExample,
  UnsafeDirectory,
  Warning,
} from "../../mod.ts";
import type {
  ApplyOutcome,
  WireApplyOutcome,
  WireApplyReport,
  WireClosestRegion,
  WireCommitReport,
  WireFileReport,
  WireHint,
  WireLineRef,
  WireListResult,
  WireLockHolder,
  WireNoSpace,
  WirePatchFailure,
  WirePathOutcome,
  WireReadWindow,
  WireSearchResult,
  WireTicket,
  WireTicketFile,
  WireWarning,
} from "./types.ts";

/** String values that differ on the wire (library value → wire value). */
export class WireValues {
  readonly toWire: ReadonlyMap<string, string>;
  readonly fromWire: ReadonlyMap<string, string>;
  constructor(pairs: Readonly<Record<string, string>>) {
    this.toWire = new Map(Object.entries(pairs));
    this.fromWire = new Map(Object.entries(pairs).map(([lib, wire]) => [wire, lib]));
  }
}

/**
 * How one field's value travels: `true` as it is (data: nothing inside is
 * renamed), a {@linkcode WireShape} (an object, or each object of an array,
 * converted field by field), or {@linkcode WireValues} (a string value
 * mapped, e.g. a hint's `kind`).
 */
export type WireRule = true | WireShape | WireValues;

/** Per field of a library object: the rule for its value. Its wire name is the field's snake_case. */
export type WireShape = { readonly [field: string]: WireRule };

/** The keys of every member of a union. */
type KeysOf<T> = T extends unknown ? keyof T & string : never;

/** A shape naming every field of every member of `T`, and nothing else. */
type ShapeOf<T> = { readonly [K in KeysOf<T>]-?: WireRule };

/** `newSha256` → `new_sha256`, at the type level. */
type Snake<S extends string> = S extends `${infer Head}${infer Rest}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${Snake<Rest>}`
  : S;

/** True when the wire type's keys are exactly the library type's keys in snake_case. */
type WireKeysMatch<Lib, Wire> = [Snake<KeysOf<Lib>>] extends [KeysOf<Wire>] ? [KeysOf<Wire>] extends [Snake<KeysOf<Lib>>] ? true : false : false;

/** `newSha256` → `new_sha256`. */
export function snakeCase(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

// ---------------------------------------------------------------------------
// The tables
// ---------------------------------------------------------------------------

const lineRefFields = { line: true, id: true, text: true } as const;
const lineRef: ShapeOf<LineRef> = { ...lineRefFields, enclosing: { ...lineRefFields, enclosing: true } };

const closestRegion: ShapeOf<ClosestRegion> = { startLine: true, endLine: true, score: true, difference: true, lines: lineRef, diff: true };

const pathOutcome: ShapeOf<PathOutcome> = { path: true, state: true, sha256: true };

const hint: ShapeOf<FailureHint> = {
  kind: new WireValues({ expectedSha256: "expected_sha256" }),
  path: true,
  startLine: true,
  endLine: true,
  sha256: true,
  option: true,
  value: true,
  operationId: true,
  says: true,
};

const lockHolder: ShapeOf<LockHolder> = { kind: true, name: true, ageSeconds: true, uid: true, pid: true, host: true, operationId: true };

const noSpace: ShapeOf<NoSpace> = { directory: true, bytesNeeded: true, bytesFree: true };

const unsafeDirectory: ShapeOf<UnsafeDirectory> = { path: true, mode: true, uid: true, gid: true, reason: true, writers: true };

const ticketFile: ShapeOf<ReconcileTicketFile> = { op: true, path: true, moveTo: true, previousSha256: true, newSha256: true, newSize: true };

const ticket: ShapeOf<ReconcileTicket> = { operationId: true, files: ticketFile };

const failure: ShapeOf<PatchFailure> = {
  code: true,
  message: true,
  retryable: true,
  path: true,
  hunk: true,
  line: true,
  patchLine: true,
  candidates: lineRef,
  closest: closestRegion,
  alreadyAppliedAt: true,
  chunks: { count: true, hunks: true, patchLines: true },
  expectedSha256: true,
  actualSha256: true,
  expectedState: true,
  actualState: true,
  limit: true,
  operationId: true,
  outcomes: pathOutcome,
  planned: { path: true, sha256: true },
  reconcile: ticket,
  tool: true,
  unsafeDirectory,
  lock: lockHolder,
  noSpace,
  fingerprint: true,
  knownHostsLine: true,
  suggestedPath: true,
  unmarkedLines: true,
  hints: hint,
};

const warning: ShapeOf<Warning> = { code: true, message: true, path: true, hunk: true, line: true, patchLine: true, hints: hint };

const fileReport: ShapeOf<FileReport> = {
  op: true,
  path: true,
  moveTo: true,
  previousSha256: true,
  newSha256: true,
  bytesWritten: true,
  metadataPreserved: true,
  bytesUploaded: true,
  snapshot: true,
  diff: true,
  warnings: warning,
  directoryTrust: true,
  state: true,
};

const commitReport: ShapeOf<CommitReport> = {
  ok: true,
  operationId: true,
  atomicity: true,
  elevated: true,
  files: fileReport,
  warnings: warning,
  errors: failure,
  durable: true,
};

const applyReport: ShapeOf<ApplyReport> = { ...commitReport, dryRun: true };

const applyOutcome: ShapeOf<ApplyOutcome> = { ...applyReport, reconciled: commitReport };

const readWindow: ShapeOf<ReadWindowResult> = {
  text: true,
  fileSha256: true,
  contentSha256: true,
  startLine: true,
  endLine: true,
  totalLines: true,
  truncated: true,
  eol: true,
  bom: true,
  finalNewline: true,
};

const listedEntry: ShapeOf<ListedEntry> = { path: true, kind: true, depth: true, size: true, mode: true, mtime: true, addressable: true };

const listResult: ShapeOf<ListFilesResult> = {
  ok: true,
  path: true,
  entries: listedEntry,
  truncated: true,
  unreadable: true,
  unreadableCount: true,
  errors: failure,
};

const searchMatch: ShapeOf<SearchMatch> = { path: true, line: true, id: true, text: true, cut: true, addressable: true };
const skippedExample: ShapeOf<SkippedExample> = { path: true, reason: true, cause: true };

const searchResult: ShapeOf<SearchFilesResult> = {
  ok: true,
  path: true,
  pattern: true,
  matches: searchMatch,
  truncated: true,
  filesSearched: true,
  directoriesSearched: true,
  skipped: { binary: true, unreadable: true, changed: true, unpinnable: true, examples: skippedExample },
  warnings: warning,
  errors: failure,
};

/** Every table, by the library type it converts. */
export const WIRE_SHAPES: Readonly<Record<string, WireShape>> = {
  lineRef,
  closestRegion,
  pathOutcome,
  hint,
  lockHolder,
  noSpace,
  unsafeDirectory,
  ticketFile,
  ticket,
  failure,
  warning,
  fileReport,
  commitReport,
  applyReport,
  applyOutcome,
  readWindow,
  listResult,
  searchResult,
};

// The wire types must be the library types with snake_case keys: a field
// renamed or added on one side only fails the type check here.
const keysMatch: [
  WireKeysMatch<LineRef, WireLineRef>,
  WireKeysMatch<ClosestRegion, WireClosestRegion>,
  WireKeysMatch<PathOutcome, WirePathOutcome>,
  WireKeysMatch<FailureHint, WireHint>,
  WireKeysMatch<LockHolder, WireLockHolder>,
  WireKeysMatch<NoSpace, WireNoSpace>,
  WireKeysMatch<ReconcileTicketFile, WireTicketFile>,
  WireKeysMatch<ReconcileTicket, WireTicket>,
  WireKeysMatch<PatchFailure, WirePatchFailure>,
  WireKeysMatch<Warning, WireWarning>,
  WireKeysMatch<FileReport, WireFileReport>,
  WireKeysMatch<CommitReport, WireCommitReport>,
  WireKeysMatch<ApplyReport, WireApplyReport>,
  WireKeysMatch<ApplyOutcome, WireApplyOutcome>,
  WireKeysMatch<ReadWindowResult, WireReadWindow>,
  WireKeysMatch<ListFilesResult, WireListResult>,
  WireKeysMatch<SearchFilesResult, WireSearchResult>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true];
void keysMatch;

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
