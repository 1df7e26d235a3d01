/**
 * zod schemas of the tools' inputs and outputs. Outputs mirror the library's
 * report and failure shapes (lib/types.ts) field by field; report objects
 * are declared loose because SPEC §2 lets those shapes grow (a client
 * validating against an older schema keeps working).
 *
 * Each output schema is one object for success and failure alike (MCP
 * requires an object schema): `ok` tells which, and `errors` holds the
 * typed failures when it is false.
 *
 * @module
 */
import { z } from "zod";
import type { FailureCode, HintOption, WarningCode } from "../../mod.ts";
import type { BoundedDiffFields } from "./bounds.ts";
import type { WireApplyOutcome, WireFileReport, WirePatchFailure, WireReadWindow, WireWarning } from "../wire/types.ts";
import { strictObject, strictRecord } from "./strict.ts";

const FAILURE_CODES = [
  "invalid_patch", "invalid_path", "path_outside_root", "symlink_rejected", "not_found", "already_exists",
  "not_regular_file", "invalid_utf8", "unencodable_character", "duplicate_path", "anchor_not_found", "context_mismatch", "ambiguous_hunk",
  "out_of_order_hunk", "anchor_after_change", "overlapping_hunks", "precondition_failed", "conflict", "locked", "permission_denied", "no_space", "read_only_filesystem", "unsafe_directory",
  "limit_exceeded", "remote_unsupported", "remote_error", "outcome_unknown", "partial_apply", "timeout", "cancelled",
  "invalid_argument", "invalid_request", "connect_failed", "auth_failed", "auth_unsupported", "host_key_unknown", "host_key_mismatch",
] as const satisfies readonly FailureCode[];

const WARNING_CODES = [
  "patch_trimmed", "heredoc_stripped", "carriage_return_stripped", "unified_header_ignored",
  "markdown_fence_stripped", "unified_diff_converted", "line_ids_stripped",
  "first_chunk_without_anchor", "fuzzy_match", "escaped_literals_recovered", "indentation_adjusted",
  "indentation_not_adjusted", "trailing_blank_context_dropped", "appended_at_eof", "parents_created",
  "mode_not_preserved", "owner_not_preserved", "acl_or_xattr_not_preserved", "hard_link_broken",
  "stale_lock_broken", "leftovers_removed", "insecure_host_key", "agent_unavailable", "channel_limit_lowered",
  "cleanup_incomplete", "cancel_too_late",
] as const satisfies readonly WarningCode[];

const HINT_OPTIONS = [
  "matching", "createParents", "requireShaForDelete", "maxFileBytes", "maxPatchBytes", "maxFiles", "maxChunksPerFile",
  "timeoutMs", "lockWaitMs", "hostKeyPolicy", "sharedDirectories", "trustRootAncestors", "sudo", "encoding",
] as const satisfies readonly HintOption[];

// The lists above must name every code of the library: a new code fails the type check here.
const everyFailureCode: [Exclude<FailureCode, (typeof FAILURE_CODES)[number]>] extends [never] ? true : never = true;
const everyWarningCode: [Exclude<WarningCode, (typeof WARNING_CODES)[number]>] extends [never] ? true : never = true;
const everyHintOption: [Exclude<HintOption, (typeof HINT_OPTIONS)[number]>] extends [never] ? true : never = true;
void everyFailureCode, everyWarningCode, everyHintOption;

const sha256 = z.string().describe("lowercase hex SHA-256");
// Plain numbers in outputs: zod's integer adds ±2^53 bounds to every field of the listed JSON Schema.
const lineNumber = z.number();

const plainLineRef = z.looseObject({ line: lineNumber, id: z.string().describe("N:hh line id"), text: z.string() });
const lineRef = plainLineRef.extend({
  enclosing: plainLineRef.optional().describe("the block the line is in: the nearest less-indented line above it"),
});

/** A next step as data (lib/types.ts FailureHint); the message already says it in this server's words. */
const says = z.string().describe("the library's words for this step");
const hintSchema = z.discriminatedUnion("kind", [
  z.looseObject({ kind: z.literal("read"), path: z.string(), start_line: lineNumber.optional(), end_line: lineNumber.optional(), says }),
  z.looseObject({ kind: z.literal("expected_sha256"), path: z.string(), sha256: sha256.nullable(), says }),
  z.looseObject({
    kind: z.literal("option"),
    option: z.enum(HINT_OPTIONS),
    value: z.union([z.string(), z.number(), z.boolean()]).optional(),
    says,
  }),
  z.looseObject({ kind: z.literal("reconcile"), operation_id: z.string(), says }),
  z.looseObject({ kind: z.literal("list"), path: z.string(), says }),
  z.looseObject({ kind: z.literal("path"), path: z.string(), suggested: z.string(), header: z.string(), says }),
]);

const closestRegion = z.looseObject({
  start_line: lineNumber,
  end_line: lineNumber,
  score: z.number(),
  difference: z.enum(["whitespace", "indentation", "content"]),
  lines: z.array(lineRef),
  diff: z.string(),
});

const pathState = z.enum(["missing", "file", "directory", "symlink", "other"]);

/** A typed failure (lib/types.ts PatchFailure). */
export const failureSchema: z.ZodType<WirePatchFailure> = z.looseObject({
  code: z.enum(FAILURE_CODES),
  message: z.string().describe("what was expected, what is there, what to do next"),
  retryable: z.boolean().describe("the same request, unchanged, may succeed later"),
  path: z.string().optional(),
  hunk: z.number().optional().describe("1-based chunk of the file's Update section"),
  line: lineNumber.optional().describe("1-based file line"),
  patch_line: lineNumber.optional().describe("1-based line of the patch text"),
  candidates: z.array(lineRef).optional(),
  closest: closestRegion.optional(),
  already_applied_at: lineNumber.optional(),
  expected_sha256: sha256.nullable().optional(),
  actual_sha256: sha256.nullable().optional(),
  current_sha256: sha256.optional().describe("the file changed since the read, but every chunk still applies exactly to this version: resend with it as expected_sha256"),
  expected_state: z.enum(["missing", "sha256"]).optional(),
  actual_state: pathState.optional(),
  limit: z.looseObject({
    name: z.enum(["maxPatchBytes", "maxFiles", "maxChunksPerFile", "maxFileBytes"]),
    max: z.number(),
    actual: z.number(),
  }).optional(),
  operation_id: z.string().optional(),
  outcomes: z.array(z.looseObject({
    path: z.string(),
    state: z.enum(["old", "new", "missing", "unknown"]),
    sha256: sha256.nullable(),
  })).optional(),
  planned: z.array(z.looseObject({ path: z.string(), sha256: sha256.nullable() })).optional(),
  reconcile: z.looseObject({
    operation_id: z.string(),
    files: z.array(z.looseObject({
      op: z.enum(["add", "update", "delete", "move", "replace"]),
      path: z.string(),
      move_to: z.string().optional(),
      previous_sha256: sha256.nullable(),
      new_sha256: sha256.nullable(),
      new_size: z.number().nullable(),
    })),
  }).optional().describe("what reconcile needs to settle this operation (the server already ran it: see reconciled)"),
  tool: z.string().optional(),
  unsafe_directory: z.looseObject({
    path: z.string(),
    mode: z.string(),
    uid: z.number(),
    gid: z.number(),
    reason: z.enum(["owner", "group", "other", "acl", "unpinnable"]),
    writers: z.string(),
  }).optional().describe("the directory other users can write, and who (only the user can allow it, in the root's configuration)"),
  lock: z.looseObject({
    kind: z.enum(["path", "operation"]),
    name: z.string(),
    age_seconds: z.number(),
    uid: z.number().nullable(),
    pid: z.number().nullable(),
    host: z.string().nullable(),
    operation_id: z.string().nullable(),
  }).optional().describe("for locked: the lock that is held and whose it is"),
  queue: z.looseObject({
    path: z.string(),
    reason: z.enum(["full", "wait"]),
    waiting: z.number(),
    max_waiting: z.number(),
    waited_ms: z.number(),
    retry_after_ms: z.number(),
  }).optional().describe("for locked by this server's apply queue: the path's queue (full, or this patch's wait ran out) and how long to wait before sending the patch again"),
  no_space: z.looseObject({
    directory: z.string(),
    bytes_needed: z.number().nullable(),
    bytes_free: z.number().nullable(),
  }).optional().describe("for no_space: where the host's file system is full, what was needed and what is free"),
  unencodable: z.looseObject({
    character: z.string(),
    code_point: z.number(),
    encoding: z.enum(["latin1", "windows-1252"]),
    column: z.number(),
  }).optional().describe("for unencodable_character: the character of a + line the requested encoding cannot write (nothing was applied)"),
  fingerprint: z.string().optional(),
  known_hosts_line: z.string().optional(),
  suggested_path: z.string().optional().describe("the root-relative path to write instead of an absolute one"),
  suggested_root: z.string().optional().describe("the configured root that holds the call's paths, when the call named none that exists"),
  closest_paths: z.array(z.string()).optional().describe("for not_found: existing files closest to the missing path, best first"),
  unmarked_lines: z.array(lineNumber).optional().describe("patch lines of a chunk that lack their ' ', '-' or '+' marker"),
  unknown: z.array(z.looseObject({ name: z.string(), closest: z.string().nullable() })).optional()
    .describe("for invalid_request: the keys no one reads, each with the closest known one"),
  hints: z.array(hintSchema).optional(),
});

/** A warning (lib/types.ts Warning). */
export const warningSchema: z.ZodType<WireWarning> = z.looseObject({
  code: z.enum(WARNING_CODES),
  message: z.string(),
  path: z.string().optional(),
  hunk: z.number().optional(),
  line: lineNumber.optional(),
  patch_line: lineNumber.optional(),
  hints: z.array(hintSchema).optional(),
});

const snapshotTransfer = z.enum(["cached", "downloaded", "compressed"]).describe(
  "how the content the change was planned on reached the server: cached (the host proved by SHA-256 it is what this connection already read; nothing was downloaded), downloaded, or compressed",
);

const fileReport = z.looseObject({
  op: z.enum(["add", "update", "delete", "move", "replace"]),
  path: z.string(),
  move_to: z.string().optional(),
  previous_sha256: sha256.nullable().describe("null: the file did not exist"),
  new_sha256: sha256.nullable().describe("null: deleted; otherwise the file_sha256 of the new version"),
  bytes_written: z.number(),
  bytes_uploaded: z.number().optional().describe("bytes of this file's content sent to the host (a delta upload sends only the changed stretches)"),
  snapshot: snapshotTransfer.optional(),
  metadata_preserved: z.looseObject({ mode: z.boolean(), owner: z.boolean() }).nullable(),
  diff: z.string().describe("unified diff of the change (bounded: see diff_truncated)"),
  diff_truncated: z.literal(true).optional().describe("the diff is cut to the result's budget; diff_bytes is its full size"),
  diff_bytes: z.number().optional(),
  warnings: z.array(warningSchema),
  directory_trust: z.enum(["trusted", "shared"]).optional().describe("shared: other users can write a directory of this file's path (allowed for this root)"),
  state: z.enum(["applied", "not_applied", "diverged"]).optional(),
});

/**
 * A tool's input object, strict (issue 26 item 3): listed with
 * `additionalProperties: false`, and an argument the tool does not know is
 * refused by name with the closest known one — "unknown argument `dryrun`:
 * did you mean `dry_run`? nothing was applied" — before the handler runs,
 * instead of being dropped while the call goes ahead without it.
 *
 * @example
 * ```ts
 * const input = strictInput({ path: z.string() }, "nothing was read");
 * ```
 */
export function strictInput<T extends z.ZodRawShape>(shape: T, nothing: string): z.ZodObject<T, z.core.$strict> {
  return strictObject(shape, "argument", nothing);
}

/** The encoding argument of apply_patch and read_file (PlanOptions.encoding). */
const encodingArgument = z.enum(["utf-8", "latin1", "windows-1252"]).optional().describe(
  "how the files are read and written: utf-8 (default; other bytes fail invalid_utf8), or latin1 / windows-1252 for legacy single-byte files (every byte kept exactly; a + line with a character the encoding lacks fails unencodable_character)",
);

/** apply_patch input. */
export const applyPatchInput: z.ZodType<ApplyPatchArgs> = strictInput({
  patch: z.string().min(1).describe("the patch text, from *** Begin Patch to *** End Patch"),
  root: z.string().optional().describe("the root name; may be omitted when the server has a single root"),
  dry_run: z.boolean().optional().describe("check the patch and return the diff without changing anything"),
  expected_sha256: strictRecord(z.string(), z.string(), "expected_sha256", "nothing was applied").optional().describe(
    "path → file_sha256 from read_file, for files the patch updates or deletes: the patch applies only to that exact version",
  ),
  encoding: encodingArgument,
}, "nothing was applied");

/** apply_patch output: the library's ApplyReport (operation fields absent when no operation started). */
export const applyPatchOutput: z.ZodType<ApplyPatchOutput> = z.looseObject({
  ok: z.boolean(),
  operation_id: z.string().optional(),
  atomicity: z.literal("batch_preflight_per_file_commit").optional(),
  elevated: z.boolean().optional().describe("the programs ran under sudo"),
  durable: z.boolean().optional().describe("ok and flushed to stable storage on the host (false: written, but a host crash could lose it)"),
  dry_run: z.boolean(),
  files: z.array(fileReport),
  warnings: z.array(warningSchema),
  errors: z.array(failureSchema).optional(),
  reconciled: z.looseObject({
    ok: z.boolean().describe("reconcile itself finished; each file's state says what the host shows"),
    operation_id: z.string(),
    atomicity: z.literal("batch_preflight_per_file_commit"),
    elevated: z.boolean(),
    files: z.array(fileReport),
    warnings: z.array(warningSchema),
    errors: z.array(failureSchema).optional(),
  }).optional().describe("after outcome_unknown / partial_apply: the server's reconcile of the operation, run at once"),
});

/** read_file input. */
export const readFileInput: z.ZodType<ReadFileArgs> = strictInput({
  root: z.string().optional().describe("the root name; may be omitted when the server has a single root"),
  path: z.string().min(1).describe("file path relative to the root, e.g. src/app.py"),
  offset: z.number().int().min(1).optional().describe("1-based first line (default 1)"),
  limit: z.number().int().min(1).optional().describe("most lines (default 800)"),
  line_ids: z.boolean().optional().describe("prefix each line with its N:hh| id"),
  column: z.number().int().min(1).optional().describe("read only line offset, from this character on (to read the rest of a line cut by line_cut)"),
  encoding: encodingArgument,
}, "nothing was read");

/** read_file output: the window (lib/plan/read_window.ts) when ok, the failures otherwise. */
export const readFileOutput: z.ZodType<ReadFileOutput> = z.object({
  ok: z.boolean(),
  root: z.string().optional(),
  path: z.string(),
  text: z.string().optional().describe("the lines of the window, each ending in \\n"),
  file_sha256: sha256.optional().describe("of the whole file: send it as expected_sha256 when patching"),
  content_sha256: sha256.optional().describe("of the window's bytes exactly as in the file"),
  start_line: lineNumber.optional(),
  end_line: lineNumber.optional(),
  total_lines: z.number().optional(),
  truncated: z.boolean().optional().describe("more lines follow: read on with offset = end_line + 1"),
  eol: z.enum(["lf", "crlf", "cr", "mixed", "none"]).optional(),
  bom: z.boolean().optional(),
  final_newline: z.boolean().optional(),
  line_cut: z.object({
    line: lineNumber,
    line_chars: z.number().describe("characters (UTF-16 code units) in the whole line"),
    from_column: z.number(),
    to_column: z.number(),
    next_column: z.number().nullable().describe("read on with offset = line and column = next_column; null: the line ends here"),
  }).optional().describe("one line longer than the byte budget: only columns from_column..to_column are in text"),
  snapshot: snapshotTransfer.optional(),
  warnings: z.array(warningSchema).optional().describe("leftovers_removed: private directories of killed reads removed on the way"),
  errors: z.array(failureSchema).optional(),
});

/** apply_patch arguments. */
export type ApplyPatchArgs = {
  patch: string;
  root?: string;
  dry_run?: boolean;
  expected_sha256?: Record<string, string>;
  encoding?: "utf-8" | "latin1" | "windows-1252";
};

/** read_file arguments. */
export type ReadFileArgs = {
  root?: string;
  path: string;
  offset?: number;
  limit?: number;
  line_ids?: boolean;
  column?: number;
  encoding?: "utf-8" | "latin1" | "windows-1252";
};

/** A line cut to read_file's byte budget. */
export type LineCut = { line: number; line_chars: number; from_column: number; to_column: number; next_column: number | null };

/**
 * The structured result of apply_patch (wire format): an ApplyReport, or a
 * report-shaped failure from before any operation; diffs bounded.
 */
export type ApplyPatchOutput = Omit<WireApplyOutcome, "files"> & { files: (WireFileReport & BoundedDiffFields)[] };

/** The structured result of read_file (wire format): the window when ok, the failures otherwise. */
export type ReadFileOutput = Partial<WireReadWindow> & {
  ok: boolean;
  line_cut?: LineCut;
  /** How the file reached the server (FileSnapshot.transfer). */
  snapshot?: "cached" | "downloaded" | "compressed";
  /** What the read did besides (FileSnapshot.warnings: leftovers_removed). */
  warnings?: WireWarning[];
  root?: string;
  path: string;
  errors?: WirePatchFailure[];
};
