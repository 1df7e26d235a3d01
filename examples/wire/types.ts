/**
 * The wire format of the MCP server's `structuredContent` and of the CLI's
 * `--json` output: the library's reports, failures and results with
 * snake_case field names (the convention of MCP tool results and of the
 * JSON a shell script reads). These declarations are the published format:
 * the library's own types are camelCase, and `examples/wire/convert.ts`
 * maps one to the other in exactly one place. A field added to a library
 * type fails the type check of that converter until it is given a wire
 * name here. (Type aliases, not interfaces: a client's `Record<string, unknown>`
 * casts to them.)
 *
 * Values are the library's own (failure codes, warning codes, states);
 * only field names differ, plus one value: a hint of kind `expectedSha256`
 * travels as `expected_sha256`, the name of the tool argument it is about.
 *
 * @module
 */
import type { Atomicity, CommitReport, FileReport, PatchFailure, Warning, DifferenceKind, DirectoryTrust, EolStyle, FailureCode, HintOption, Limits, ListedEntry, MetadataPreserved, PathState, PlannedFile, SearchMatch, SkippedExample, SnapshotTransfer, UnsafeDirectory, WarningCode } from "../../mod.ts";

/** A file line in a failure (lib `LineRef`). */
export type WireLineRef = {
  line: number;
  id: string;
  text: string;
  enclosing?: WireLineRef;
};

/** The closest region of a chunk that did not match (lib `ClosestRegion`). */
export type WireClosestRegion = {
  start_line: number;
  end_line: number;
  score: number;
  difference: DifferenceKind;
  lines: WireLineRef[];
  diff: string;
};

/** Per-path state after a commit that could not restore everything (lib `PathOutcome`). */
export type WirePathOutcome = {
  path: string;
  state: "old" | "new" | "missing" | "unknown";
  sha256: string | null;
};

/** A next step as data (lib `FailureHint`). */
export type WireHint =
  | { kind: "read"; path: string; start_line?: number; end_line?: number; says: string }
  | { kind: "expected_sha256"; path: string; sha256: string | null; says: string }
  | { kind: "option"; option: HintOption; value?: string | number | boolean; says: string }
  | { kind: "reconcile"; operation_id: string; says: string }
  | { kind: "list"; path: string; says: string }
  | { kind: "path"; path: string; suggested: string; header: string; says: string };

/** The lock a `locked` failure waited for (lib `LockHolder`). */
export type WireLockHolder = {
  kind: "path" | "operation";
  name: string;
  age_seconds: number;
  uid: number | null;
  pid: number | null;
  host: string | null;
  operation_id: string | null;
};

/** A front end's apply queue that answered `locked` (lib `ApplyQueueState`). */
export type WireApplyQueueState = {
  path: string;
  reason: "full" | "wait";
  waiting: number;
  max_waiting: number;
  waited_ms: number;
  retry_after_ms: number;
};

/** Where a write ran out of space (lib `NoSpace`). */
/** Unencodable on the wire. */
export type WireUnencodable = { character: string; code_point: number; encoding: "latin1" | "windows-1252"; column: number };

export type WireNoSpace = {
  directory: string;
  bytes_needed: number | null;
  bytes_free: number | null;
};

/** One planned file of a reconcile ticket (lib `ReconcileTicketFile`). */
export type WireTicketFile = {
  op: PlannedFile["op"];
  path: string;
  move_to?: string;
  previous_sha256: string | null;
  new_sha256: string | null;
  new_size: number | null;
};

/** What reconcile needs to settle one operation (lib `ReconcileTicket`). */
export type WireTicket = {
  operation_id: string;
  files: WireTicketFile[];
};

/**
 * A typed failure (lib `PatchFailure`): one flat object whatever the code;
 * `code` says which of the optional fields are there.
 */
export type WirePatchFailure = {
  code: FailureCode;
  message: string;
  retryable: boolean;
  path?: string;
  hunk?: number;
  line?: number;
  patch_line?: number;
  candidates?: WireLineRef[];
  closest?: WireClosestRegion;
  already_applied_at?: number;
  chunks?: { count: number; hunks: number[]; patch_lines: number[] };
  expected_sha256?: string | null;
  actual_sha256?: string | null;
  current_sha256?: string;
  expected_state?: "missing" | "sha256";
  actual_state?: PathState;
  limit?: { name: keyof Limits; max: number; actual: number };
  operation_id?: string;
  outcomes?: WirePathOutcome[];
  planned?: { path: string; sha256: string | null }[];
  reconcile?: WireTicket;
  tool?: string;
  unsafe_directory?: UnsafeDirectory;
  lock?: WireLockHolder;
  queue?: WireApplyQueueState;
  no_space?: WireNoSpace;
  unencodable?: WireUnencodable;
  fingerprint?: string;
  known_hosts_line?: string;
  suggested_path?: string;
  suggested_root?: string;
  closest_paths?: string[];
  unmarked_lines?: number[];
  unknown?: { name: string; closest: string | null }[];
  hints?: WireHint[];
};

/** A warning (lib `Warning`). */
export type WireWarning = {
  code: WarningCode;
  message: string;
  path?: string;
  hunk?: number;
  line?: number;
  patch_line?: number;
  hints?: WireHint[];
};

/** The outcome of one file (lib `FileReport`). */
export type WireFileReport = {
  op: PlannedFile["op"];
  path: string;
  move_to?: string;
  previous_sha256: string | null;
  new_sha256: string | null;
  bytes_written: number;
  metadata_preserved: MetadataPreserved | null;
  bytes_uploaded?: number;
  snapshot?: SnapshotTransfer;
  diff: string;
  warnings: WireWarning[];
  directory_trust?: DirectoryTrust;
  state?: "applied" | "not_applied" | "diverged";
};

/** The result of a commit or reconcile (lib `CommitReport`). */
export type WireCommitReport = {
  ok: boolean;
  operation_id: string;
  atomicity: Atomicity;
  elevated: boolean;
  files: WireFileReport[];
  warnings: WireWarning[];
  errors?: WirePatchFailure[];
  durable?: boolean;
};

/** The result of applyPatch (lib `ApplyReport`). */
export type WireApplyReport = WireCommitReport & {
  dry_run: boolean;
};

/**
 * What a front end answers for one apply (library shapes): the report,
 * without operation fields when it failed before any operation started
 * (no root, no connection), and the reconcile the front end ran right
 * after an unknown outcome.
 */
export type ApplyOutcome = {
  ok: boolean;
  operationId?: string;
  atomicity?: Atomicity;
  elevated?: boolean;
  dryRun: boolean;
  files: FileReport[];
  warnings: Warning[];
  errors?: PatchFailure[];
  durable?: boolean;
  reconciled?: CommitReport;
};

/** {@linkcode ApplyOutcome} on the wire. */
export type WireApplyOutcome =
  & Omit<WireApplyReport, "operation_id" | "atomicity" | "elevated">
  & Partial<Pick<WireApplyReport, "operation_id" | "atomicity" | "elevated">>
  & { reconciled?: WireCommitReport };

/** A window of a file's lines (lib `ReadWindowResult`). */
export type WireReadWindow = {
  text: string;
  file_sha256: string;
  content_sha256: string;
  start_line: number;
  end_line: number;
  total_lines: number;
  truncated: boolean;
  eol: EolStyle;
  bom: boolean;
  final_newline: boolean;
};

/** What listFiles returns (lib `ListFilesResult`). */
export type WireListResult = {
  ok: boolean;
  path: string;
  entries: ListedEntry[];
  truncated: boolean;
  unreadable: string[];
  unreadable_count: number;
  errors?: WirePatchFailure[];
};

/** What searchFiles returns (lib `SearchFilesResult`). */
export type WireSearchResult = {
  ok: boolean;
  path: string;
  pattern: string;
  matches: SearchMatch[];
  truncated: boolean;
  files_searched: number;
  directories_searched: number;
  skipped: { binary: number; unreadable: number; changed: number; unpinnable: number; examples: SkippedExample[] };
  warnings?: WireWarning[];
  errors?: WirePatchFailure[];
};
