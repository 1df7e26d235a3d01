/**
 * The tables of the wire conversion (examples/wire/convert.ts): per
 * library type, each of its fields with the rule for its value. Only the
 * fields a table names are renamed on the wire (to their snake_case); a
 * value whose rule is `true` travels as it is, keys and all, so data keyed
 * by paths or user text is never touched. The tables are typed against the
 * library types (a field added there fails the type check until it has a
 * rule), and their wire names against the wire types of
 * examples/wire/types.ts (`Snake<field>` must be exactly their keys).
 *
 * @example
 * ```ts
 * WIRE_SHAPES.failure.noSpace; // { directory: true, bytesNeeded: true, bytesFree: true }: renamed inside too
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
  ApplyQueueState,
  NoSpace,
  Unencodable,
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
  WireApplyQueueState,
  WireNoSpace,
  WireUnencodable,
  WirePatchFailure,
  WirePathOutcome,
  WireReadWindow,
  WireSearchResult,
  WireTicket,
  WireTicketFile,
  WireWarning,
} from "./types.ts";

/**
 * String values that differ on the wire (library value → wire value);
 * any other value travels as it is.
 *
 * @example
 * ```ts
 * const kind = new WireValues({ expectedSha256: "expected_sha256" });
 * kind.toWire.get("expectedSha256"); // "expected_sha256"
 * ```
 */
export class WireValues {
  /** Library value → wire value. */
  readonly toWire: ReadonlyMap<string, string>;
  /** Wire value → library value. */
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
 *
 * @example
 * ```ts
 * const rule: WireRule = { directory: true, bytesNeeded: true, bytesFree: true }; // NoSpace
 * ```
 */
export type WireRule = true | WireShape | WireValues;

/**
 * Per field of a library object: the rule for its value. Its wire name is the field's snake_case.
 *
 * @example
 * ```ts
 * const shape: WireShape = { operationId: true, files: WIRE_SHAPES.ticketFile }; // ReconcileTicket
 * ```
 */
export type WireShape = { readonly [field: string]: WireRule };

/** The keys of every member of a union. */
export type KeysOf<T> = T extends unknown ? keyof T & string : never;

/** A shape naming every field of every member of `T`, and nothing else. */
export type ShapeOf<T> = { readonly [K in KeysOf<T>]-?: WireRule };

/** `newSha256` → `new_sha256`, at the type level. */
export type Snake<S extends string> = S extends `${infer Head}${infer Rest}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${Snake<Rest>}`
  : S;

/** True when the wire type's keys are exactly the library type's keys in snake_case. */
export type WireKeysMatch<Lib, Wire> = [Snake<KeysOf<Lib>>] extends [KeysOf<Wire>] ? [KeysOf<Wire>] extends [Snake<KeysOf<Lib>>] ? true : false : false;

/**
 * A field's wire name.
 *
 * @example
 * ```ts
 * snakeCase("newSha256"); // "new_sha256"
 * ```
 */
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
  suggested: true,
  header: true,
  says: true,
};

const lockHolder: ShapeOf<LockHolder> = { kind: true, name: true, ageSeconds: true, uid: true, pid: true, host: true, operationId: true };

const applyQueue: ShapeOf<ApplyQueueState> = { path: true, reason: true, waiting: true, maxWaiting: true, waitedMs: true, retryAfterMs: true };

const noSpace: ShapeOf<NoSpace> = { directory: true, bytesNeeded: true, bytesFree: true };

const unencodable: ShapeOf<Unencodable> = { character: true, codePoint: true, encoding: true, column: true };

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
  currentSha256: true,
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
  queue: applyQueue,
  noSpace,
  unencodable,
  fingerprint: true,
  knownHostsLine: true,
  suggestedPath: true,
  suggestedRoot: true,
  closestPaths: true,
  unmarkedLines: true,
  unknown: { name: true, closest: true },
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

/**
 * The tables by the library type they convert.
 *
 * @example
 * ```ts
 * const shapes: WireShapes = WIRE_SHAPES;
 * ```
 */
export interface WireShapes {
  readonly lineRef: WireShape;
  readonly closestRegion: WireShape;
  readonly pathOutcome: WireShape;
  readonly hint: WireShape;
  readonly lockHolder: WireShape;
  readonly noSpace: WireShape;
  readonly unsafeDirectory: WireShape;
  readonly ticketFile: WireShape;
  readonly ticket: WireShape;
  readonly failure: WireShape;
  readonly warning: WireShape;
  readonly fileReport: WireShape;
  readonly commitReport: WireShape;
  readonly applyReport: WireShape;
  readonly applyOutcome: WireShape;
  readonly readWindow: WireShape;
  readonly listResult: WireShape;
  readonly searchResult: WireShape;
}

/**
 * Every table, by the library type it converts.
 *
 * @example
 * ```ts
 * Object.keys(WIRE_SHAPES.failure); // every field of PatchFailure
 * ```
 */
export const WIRE_SHAPES: WireShapes = {
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
  WireKeysMatch<ApplyQueueState, WireApplyQueueState>,
  WireKeysMatch<NoSpace, WireNoSpace>,
  WireKeysMatch<Unencodable, WireUnencodable>,
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
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true];
void keysMatch;
