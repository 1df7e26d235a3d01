/**
 * The data shapes shared by the pure core and the remote layer.
 *
 * Everything here is plain, JSON-serialisable data (a `Uint8Array` serialises
 * as an object of bytes; reports never carry one). Every field name is
 * camelCase, plans, reports and failures alike: one style for the whole
 * TypeScript API (issue 32). Snake_case exists only on the wire: the MCP
 * server's `structuredContent` and the CLI's `--json` output convert these
 * shapes in one place (examples/wire/convert.ts). Values keep their
 * spelling (`code: "precondition_failed"`, `state: "not_applied"`).
 *
 * @module
 */

// ---------------------------------------------------------------------------
// Failures and warnings
// ---------------------------------------------------------------------------

/**
 * The stable failure codes (SPEC §2, §8). A program switches on these; the
 * message is for the model.
  *
  * @example
  * ```ts
  * if (!report.ok) for (const e of report.errors) if ((e.code satisfies FailureCode) === "conflict") retry();
  * ```
 */
export type FailureCode =
  | "invalid_patch"
  | "invalid_path"
  | "path_outside_root"
  | "symlink_rejected"
  | "not_found"
  | "already_exists"
  | "not_regular_file"
  | "invalid_utf8"
  | "unencodable_character"
  | "duplicate_path"
  | "anchor_not_found"
  | "context_mismatch"
  | "ambiguous_hunk"
  | "out_of_order_hunk"
  | "anchor_after_change"
  | "overlapping_hunks"
  | "precondition_failed"
  | "conflict"
  | "locked"
  | "permission_denied"
  | "no_space"
  | "read_only_filesystem"
  | "unsafe_directory"
  | "limit_exceeded"
  | "remote_unsupported"
  | "remote_error"
  | "outcome_unknown"
  | "partial_apply"
  | "timeout"
  | "cancelled"
  | "invalid_argument"
  | "invalid_request"
  | "connect_failed"
  | "auth_failed"
  | "auth_unsupported"
  | "host_key_unknown"
  | "host_key_mismatch";

/**
 * One line of a file, as shown to a model: number, `N:hh` id and text.
 *
 * @example
 * ```ts
 * const ref: LineRef = { line: 12, id: "12:5e", text: "    listen 80;" };
 * ```
 */
export interface LineRef {
  /** 1-based line number in the file. */
  line: number;
  /** The `N:hh` line id (SPEC §5.6). */
  id: string;
  /** The line's text without its ending, cut to a bounded length. */
  text: string;
  /**
   * For an `ambiguous_hunk` candidate: the block it is in, i.e. the nearest
   * non-blank line above it with less indentation (a `def`, a `server {`),
   * when there is one.
   */
  enclosing?: LineRef;
}

/**
 * What kind of difference separates a chunk from the closest file region.
 *
 * @example
 * ```ts
 * if (failure.closest?.difference === ("indentation" satisfies DifferenceKind)) reindentChunk();
 * ```
 */
export type DifferenceKind = "whitespace" | "indentation" | "content";

/**
 * The best-scoring file window for a chunk that did not match (SPEC §5.4).
 *
 * @example
 * ```ts
 * const c = failure.closest;
 * if (c) console.log(`lines ${c.startLine}-${c.endLine} (score ${c.score}):\n${c.diff}`);
 * ```
 */
export interface ClosestRegion {
  /** 1-based first line of the window. */
  startLine: number;
  /** 1-based last line of the window (inclusive). */
  endLine: number;
  /** Similarity in [0, 1]: the share of the chunk's old lines found aligned there. */
  score: number;
  /** What differs between the expected lines and the file there. */
  difference: DifferenceKind;
  /** The file's lines of the window (bounded excerpt). */
  lines: LineRef[];
  /** A compact diff, `-` expected (from the patch), `+` actual (in the file). */
  diff: string;
}

/**
 * The state of one path as a failure reports it.
 *
 * @example
 * ```ts
 * if (failure.actualState === ("symlink" satisfies PathState)) console.error("symlinks are never followed");
 * ```
 */
export type PathState =
  | "missing"
  | "file"
  | "directory"
  | "symlink"
  | "other";

/**
 * Per-path state after a commit that could not restore everything.
 *
 * @example
 * ```ts
 * for (const o of failure.outcomes ?? []) console.error(`${o.path}: ${o.state} ${o.sha256 ?? ""}`); // PathOutcome
 * ```
 */
export interface PathOutcome {
  /** Root-relative path. */
  path: string;
  /** What the path holds now: the old version, the new one, nothing, or not known. */
  state: "old" | "new" | "missing" | "unknown";
  /** SHA-256 of what it holds now (`null`: missing or not known). */
  sha256: string | null;
}

/**
 * A next step of a failure or warning, as data, so that each front end can
 * say it in its own vocabulary (SPEC §5.4 round 2): the library names its
 * options (`hostKeyPolicy "accept-new"`), the CLI its flags
 * (`--accept-new-host-key`), the MCP server its tools and arguments
 * (`read_file`, `expected_sha256`). `says` is the exact text of the step in
 * the `message` as the library wrote it; a front end replaces that span
 * (see `rewordFailure`) and keeps the rest of the message.
 *
 * - `read`: look at the file (or lines `startLine`–`endLine`) again;
 * - `expectedSha256`: send this SHA-256 (`null`: the one a fresh read gives)
 *   as the file's revision precondition;
 * - `option`: a caller option and the value that would change the outcome;
 * - `reconcile`: settle operation `operationId` before anything else;
 * - `list`: list the directory `path` (`""`: the root) to find the right name;
 * - `path`: send the patch again with the section header `header` (the
 *   existing path `suggested` in place of `path`).
  *
  * @example
  * ```ts
  * for (const hint of failure.hints ?? []) if (hint.kind === "read") reread(hint.path, hint.startLine, hint.endLine);
  * ```
 */
export type FailureHint =
  | { kind: "read"; path: string; startLine?: number; endLine?: number; says: string }
  | { kind: "expectedSha256"; path: string; sha256: string | null; says: string }
  | { kind: "option"; option: HintOption; value?: string | number | boolean; says: string }
  | { kind: "reconcile"; operationId: string; says: string }
  | { kind: "list"; path: string; says: string }
  | { kind: "path"; path: string; suggested: string; header: string; says: string };

/**
 * The caller options a hint can name (library spelling).
 *
 * @example
 * ```ts
 * const raise = failure.hints?.find((h) => h.kind === "option" && h.option === ("maxFileBytes" satisfies HintOption));
 * ```
 */
export type HintOption =
  | "matching"
  | "createParents"
  | "requireShaForDelete"
  | "maxFileBytes"
  | "maxPatchBytes"
  | "maxFiles"
  | "maxChunksPerFile"
  | "timeoutMs"
  | "lockWaitMs"
  | "hostKeyPolicy"
  | "sharedDirectories"
  | "trustRootAncestors"
  | "sudo"
  | "encoding";

/**
 * Every field a failure may carry, all but `code`, `message` and
 * `retryable` optional. {@linkcode PatchFailure} is the union keyed by
 * `code` in which each member makes required the fields its code always
 * has ({@linkcode FailureCodeFields}); this flat shape is what a failure of
 * a code not known in advance can be read as, field by field.
 *
 * @example
 * ```ts
 * const flat: FailureFields = failure("not_found", "src/a.ts does not exist. Use *** Add File: to create it.", { path: "src/a.ts" });
 * flat.path; // string | undefined: narrow PatchFailure by code to know more
 * ```
 */
export interface FailureFields {
  /** The stable code a program switches on. */
  code: FailureCode;
  /** The recovery instruction: starts with the code, ends with the next step. */
  message: string;
  /** True when the same request, sent again unchanged, may succeed. */
  retryable: boolean;
  /** Root-relative path the failure is about. */
  path?: string;
  /** 1-based index of the chunk within its `*** Update File` section. */
  hunk?: number;
  /** 1-based file line the failure points at. */
  line?: number;
  /** 1-based line of the patch text the failure points at. */
  patchLine?: number;
  /** Every matching position of an ambiguous chunk (capped), or near misses. */
  candidates?: LineRef[];
  /** The closest region of a chunk that did not match. */
  closest?: ClosestRegion;
  /**
   * Where the change is already there, when it looks applied (usually a
   * resend of a call that succeeded): the 1-based line where the chunk's
   * new side is, or where the file section's result starts (an Update sent
   * with its original SHA-256, an Update + Move's destination; 1 for an
   * Add whose file exists with exactly its content).
   */
  alreadyAppliedAt?: number;
  /**
   * For a failure standing for several chunks of one file with the same
   * code, not diagnosed one by one (planPatch shows the first 20 failures
   * of a patch in full and folds later chunk failures per file and code):
   * how many, and every chunk number and patch line, ascending.
   */
  chunks?: { count: number; hunks: number[]; patchLines: number[] };
  /** The SHA-256 the caller or the plan expected (`null`: expected missing). */
  expectedSha256?: string | null;
  /** The SHA-256 found (`null`: not a regular file, or missing). */
  actualSha256?: string | null;
  /**
   * For a `precondition_failed` whose every chunk still locates uniquely and
   * exactly in the current file: that file's SHA-256 (the same as
   * `actualSha256`), present only then — resending the same patch with it as
   * `expectedSha256` applies it to the current text (never done silently).
   */
  currentSha256?: string;
  /** What the path was expected to be: missing, or a file with `expectedSha256`. */
  expectedState?: "missing" | "sha256";
  /** What the path is now. */
  actualState?: PathState;
  /** For `limit_exceeded`: which limit, its value and what was asked for. */
  limit?: { name: keyof Limits; max: number; actual: number };
  /** For `outcome_unknown`, `partial_apply`, `conflict`: the operation id. */
  operationId?: string;
  /** For `partial_apply`: the real state of each path after rollback. */
  outcomes?: PathOutcome[];
  /** For `outcome_unknown`: the SHA-256 each path would have if applied. */
  planned?: { path: string; sha256: string | null }[];
  /**
   * For failures that ask for `reconcile` (`outcome_unknown`, `partial_apply`,
   * a commit that left temporary files): everything reconcile needs, as plain
   * JSON, so a caller that kept only this report can still settle the operation.
   */
  reconcile?: ReconcileTicket;
  /** For `remote_unsupported`: the missing tool. */
  tool?: string;
  /** For `unsafe_directory`: the directory others can write, and who. */
  unsafeDirectory?: UnsafeDirectory;
  /** For `locked`: the lock that is held, and whose it is. */
  lock?: LockHolder;
  /** For `locked` answered by a front end's apply queue (the MCP server's): the path's queue, and when to retry. */
  queue?: ApplyQueueState;
  /** For `no_space`: where the space ran out, what was needed and what is free. */
  noSpace?: NoSpace;
  /** For `unencodable_character`: the character of new text the file's encoding has no byte for. */
  unencodable?: Unencodable;
  /** For host-key failures: `SHA256:…` fingerprint and the known_hosts line. */
  fingerprint?: string;
  /** For host-key failures: the exact known_hosts line to add once the fingerprint is confirmed. */
  knownHostsLine?: string;
  /** For an absolute path inside the root: the root-relative path to write instead. */
  suggestedPath?: string;
  /**
   * For `invalid_argument` from a front end with named roots (the MCP
   * server), when the call named no configured root: the one root that
   * holds the call's paths (checked in the same call).
   */
  suggestedRoot?: string;
  /**
   * For `not_found`: the existing files closest to the missing path, best
   * first (the message leads with the first: "did you mean …?"). Empty when
   * none is close, or when none was looked for (only applyPatch's Update and
   * Delete sources are).
   */
  closestPaths?: string[];
  /** For chunk lines without a ' ', '-' or '+' marker: their 1-based patch lines. */
  unmarkedLines?: number[];
  /** For `invalid_request`: the keys the request or options object had that no one reads, each with the closest known key. */
  unknown?: UnknownKey[];
  /** The next steps as data, for front ends that say them in their own words. */
  hints?: FailureHint[];
}

/**
 * The fields each failure code always carries, beyond `code`, `message`
 * and `retryable` (a code not listed here guarantees none). "Always" is
 * what every place that builds a failure of that code sets (the failure()
 * calls of lib/, checked by the type checker through {@linkcode failure});
 * a field only some of them set stays optional, and the comment says when
 * it is missing.
 *
 * @example
 * ```ts
 * const needs: FailureCodeFields["partial_apply"] = { operationId: "op1", outcomes: [], reconcile: { operationId: "op1", files: [] } };
 * ```
 */
export interface FailureCodeFields {
  /** A path that breaks the path rules (as written, or on the host). */
  invalid_path: { path: string };
  /** A path whose directory resolves outside the root. */
  path_outside_root: { path: string };
  /** The existing paths closest to the missing one (empty when none is close or none was looked for). */
  not_found: { closestPaths: string[] };
  /** The symlinked path (`actualState` is `"symlink"` when the path itself is the link). */
  symlink_rejected: { path: string };
  /** The path an Add or a move would overwrite. */
  already_exists: { path: string };
  /** The path that is a directory, FIFO, socket or device. */
  not_regular_file: { path: string };
  /** The path two sections of the patch name. */
  duplicate_path: { path: string };
  /** The file, the patch line of the new text and the character its encoding cannot represent. */
  unencodable_character: { path: string; patchLine: number; unencodable: Unencodable };
  /** The file and chunk (a compact or folded failure has no `closest` or similar lines). */
  anchor_not_found: { path: string; hunk: number };
  /** The file and chunk (`closest` only when the chunk was diagnosed in full). */
  context_mismatch: { path: string; hunk: number };
  /** The file and chunk; `candidates` only when diagnosed in full (not for a compact or folded one). */
  ambiguous_hunk: { path: string; hunk: number };
  /** The file and chunk. */
  out_of_order_hunk: { path: string; hunk: number };
  /** The file and chunk. */
  anchor_after_change: { path: string; hunk: number };
  /** The file and chunk. */
  overlapping_hunks: { path: string; hunk: number };
  /** The file; `expectedSha256` / `actualSha256` when both versions are known (not for a malformed or unused precondition). */
  precondition_failed: { path: string };
  /**
   * The operation that waited (nothing of it was applied); `lock` only when
   * the host reported the holder, `queue` only when a front end's apply
   * queue answered (full, or the wait ran out before this patch's turn).
   */
  locked: { operationId: string };
  /** Where the space ran out, what was needed and what is free. */
  no_space: { noSpace: NoSpace };
  /** The missing tool. */
  remote_unsupported: { tool: string };
  /** The operation, the real state of each path, and the ticket to settle it. */
  partial_apply: { operationId: string; outcomes: PathOutcome[]; reconcile: ReconcileTicket };
  /** The key's fingerprint and the known_hosts line that would trust it. */
  host_key_unknown: { fingerprint: string; knownHostsLine: string };
  /** The key's fingerprint (`knownHostsLine` too, except for a revoked key: it must not be added). */
  host_key_mismatch: { fingerprint: string };
  /** The keys nobody reads, each with the closest known one. */
  invalid_request: { unknown: UnknownKey[] };
}

/**
 * The fields a failure of code `C` always carries ({} for a code that guarantees none).
 *
 * @example
 * ```ts
 * const lock: RequiredFailureFields<"locked"> = { operationId: "op1" };
 * ```
 */
export type RequiredFailureFields<C extends FailureCode> = C extends keyof FailureCodeFields ? FailureCodeFields[C] : {};

/**
 * The fields every code in `C` always carries, together: what a failure
 * whose code is only known to be one of `C` must have to be any of them
 * (for one code, its {@linkcode RequiredFailureFields}).
 *
 * @example
 * ```ts
 * const both: RequiredFieldsOfEvery<"locked" | "remote_unsupported"> = { operationId: "op1", tool: "sha256sum" };
 * ```
 */
export type RequiredFieldsOfEvery<C extends FailureCode> = (C extends FailureCode ? (fields: RequiredFailureFields<C>) => void : never) extends (fields: infer All) => void ? All : never;

/**
 * A typed failure. `message` is a recovery instruction for a model: what was
 * expected, what is there now (bounded), and the concrete next step; it
 * starts with the code, so the text alone says which failure it is.
 *
 * A union keyed by `code`: after `if (f.code === "no_space")` the field
 * `f.noSpace` is a {@linkcode NoSpace}, not possibly undefined (see
 * {@linkcode FailureCodeFields} for what each code guarantees).
 *
 * @example
 * ```ts
 * function describe(f: PatchFailure): string {
 *   switch (f.code) {
 *     case "no_space": return `${f.noSpace.directory}: ${f.noSpace.bytesFree ?? "?"} bytes free`;
 *     case "partial_apply": return `${f.outcomes.length} paths; settle with reconcile(shell, root, f.reconcile)`;
 *     case "context_mismatch": return `chunk ${f.hunk} of ${f.path}`;
 *     default: return f.message;
 *   }
 * }
 * ```
 */
export type PatchFailure = { [C in FailureCode]: FailureOf<C> }[FailureCode];

/**
 * The failure of code `C`: its guaranteed fields required, the others
 * optional (for a union of codes, the union of their failures).
 *
 * @example
 * ```ts
 * const f: FailureOf<"remote_unsupported"> = failure("remote_unsupported", "no sha256sum on the host", { tool: "sha256sum" });
 * f.tool; // string
 * ```
 */
export type FailureOf<C extends FailureCode> = C extends FailureCode
  ? Omit<FailureFields, "code" | keyof RequiredFailureFields<C>> & { code: C } & RequiredFailureFields<C>
  : never;

/**
 * The codes of failures about one chunk: they always name its file and chunk number.
 *
 * @example
 * ```ts
 * const chunkFailure = (f: FailureOf<ChunkFailureCode>): string => `${f.path} chunk ${f.hunk}`;
 * ```
 */
export type ChunkFailureCode = "anchor_not_found" | "context_mismatch" | "ambiguous_hunk" | "out_of_order_hunk" | "anchor_after_change" | "overlapping_hunks";

/**
 * One or more failures: a report that failed has at least one.
 *
 * @example
 * ```ts
 * const report = await applyPatch(shell, { root, patch });
 * if (!report.ok) { const errors: Failures = report.errors; console.error(errors[0].message); }
 * ```
 */
export type Failures = [PatchFailure, ...PatchFailure[]];

/**
 * A key (request field, tool argument, flag) that nobody reads, as an
 * `invalid_request` failure reports it, with the known one it most likely meant.
 *
 * @example
 * ```ts
 * const report = await applyPatch(shell, { root, patch, dryrun: true } as ApplyRequest);
 * report.errors?.[0]?.unknown; // [{ name: "dryrun", closest: "dryRun" }]
 * ```
 */
export interface UnknownKey {
  /** The key as given. */
  name: string;
  /** The closest known key, spelt as the front end spells it, or null when none is close. */
  closest: string | null;
}

/**
 * A front end's per-path apply queue, as a `locked` failure reports it: the
 * MCP server runs applies to one path one after the other, each planned
 * against the file as the ones before it left it, and answers `locked`
 * with this when the queue of a path is full or this patch's wait ran out.
 *
 * @example
 * ```ts
 * if (failure.code === "locked" && failure.queue) await sleep(failure.queue.retryAfterMs);
 * ```
 */
export interface ApplyQueueState {
  /** Root-relative path whose queue was full or too slow. */
  path: string;
  /** `full`: the queue held `maxWaiting` applies, this one was not queued; `wait`: it was queued, and its wait ran out before its turn. */
  reason: "full" | "wait";
  /** Applies in that path's queue (running and waiting) when this one was answered. */
  waiting: number;
  /** The most applies one path's queue holds. */
  maxWaiting: number;
  /** How long this patch waited in the queue, in milliseconds (0 when full). */
  waitedMs: number;
  /** A suggested wait before sending the patch again: about the time the queue ahead needs, in milliseconds. */
  retryAfterMs: number;
}

/**
 * The lock a `locked` failure waited for. The owner record (pid, host,
 * operation) is read only from a lock of the remote user's own: another
 * user's lock is never opened (it could be a FIFO), so for it only the uid
 * is known.
  *
  * @example
  * ```ts
  * if (failure.code === "locked" && failure.lock) console.error(`held ${failure.lock.ageSeconds} s by pid ${failure.lock.pid} on ${failure.lock.host}`);
  * ```
 */
export interface LockHolder {
  /**
   * `path`: the lock of the failure's path; `operation`: the operation's own
   * lock (`.sap-lock-op-<id>` in the root), held by another run of the same
   * operation id (a commit or reconcile that is still running).
   */
  kind: "path" | "operation";
  /** Root-relative path of the lock directory on the host. */
  name: string;
  /** How long the lock has been held, in seconds. */
  ageSeconds: number;
  /** Owner of the lock directory, when it could be seen. */
  uid: number | null;
  /** Process id of the holder, from its owner record (`null`: another user's lock, or unreadable). */
  pid: number | null;
  /** Host name of the holder, from its owner record. */
  host: string | null;
  /** The operation holding it; the failure's own `operationId` when it is this operation's. */
  operationId: string | null;
}

/**
 * How a request's files are decoded and its new text encoded: strict UTF-8
 * (the default), or an opt-in single-byte legacy encoding in which every
 * byte round-trips (lib/text/encoding.ts).
 *
 * @example
 * ```ts
 * const encoding: TextEncodingName = "latin1";
 * await applyPatch(shell, { root, patch, encoding });
 * ```
 */
export type TextEncodingName = "utf-8" | "latin1" | "windows-1252";

/**
 * A character of a patch's new text that the request's single-byte
 * `encoding` has no byte for (`unencodable_character`): nothing is applied,
 * since writing it would need another encoding than the file's.
 *
 * @example
 * ```ts
 * if (f.code === "unencodable_character") console.error(`U+${f.unencodable.codePoint.toString(16)} cannot be written in ${f.unencodable.encoding}`);
 * ```
 */
export interface Unencodable {
  /** The character as text (a whole surrogate pair when it is one). */
  character: string;
  /** Its Unicode code point. */
  codePoint: number;
  /** The encoding that cannot represent it. */
  encoding: "latin1" | "windows-1252";
  /** 1-based column (UTF-16) of the character in the new line's text (after its `+`). */
  column: number;
}

/**
 * Where a write ran out of space (`no_space`).
 *
 * @example
 * ```ts
 * if (failure.noSpace) console.error(`${failure.noSpace.directory}: ${failure.noSpace.bytesFree} bytes free, ${failure.noSpace.bytesNeeded} needed`);
 * ```
 */
export interface NoSpace {
  /** The directory on the host (root joined with the path's directory). */
  directory: string;
  /**
   * About what this commit writes there at once (the uploaded contents and
   * the new files), in bytes; null for reconcile (it writes only locks).
   */
  bytesNeeded: number | null;
  /** Free bytes the host reported right after the failure (`df`), or null. */
  bytesFree: number | null;
}

/**
 * A directory that users other than the remote user and root can write
 * (SPEC §6.1), as an `unsafe_directory` failure reports it.
  *
  * @example
  * ```ts
  * const d = failure.unsafeDirectory;
  * if (d) console.error(`${d.path} (mode ${d.mode}) is writable by ${d.writers} (${d.reason})`);
  * ```
 */
export interface UnsafeDirectory {
  /** Physical path on the host. */
  path: string;
  /** Permission bits, octal (`"2775"`). */
  mode: string;
  /** Owner's uid. */
  uid: number;
  /** Group's gid. */
  gid: number;
  /**
   * Why others can write it: `owner` (it belongs to another user), `group`
   * (group-writable, the group has other members or unknown ones), `other`
   * (world-writable), `acl` (an ACL may grant write), `unpinnable` (shared,
   * accepted with `sharedDirectories: "allow"`, but a file there cannot be
   * pinned for a safe read).
   */
  reason: "owner" | "group" | "other" | "acl" | "unpinnable";
  /** Who else can write it, as the host names them (`www-data`, `group staff: alice,bob`, `everyone`). */
  writers: string;
}

/**
 * What the programs do with a directory that others can write (SPEC §6.1):
 * `"refuse"` (the default) fails `unsafe_directory` before anything is read
 * or written there; `"allow"` works there anyway, relying on the defence in
 * depth (private directories, pinned reads, renames that never follow).
  *
  * @example
  * ```ts
  * await applyPatch(shell, { root: "/var/www/uploads", patch, sharedDirectories: "allow" satisfies SharedDirectories });
  * ```
 */
export type SharedDirectories = "refuse" | "allow";

/**
 * Whether every directory a file's path goes through can be written only by the remote user and root.
 *
 * @example
 * ```ts
 * for (const f of report.files) if (f.directoryTrust === ("shared" satisfies DirectoryTrust)) console.warn(`${f.path}: others can write its directory`);
 * ```
 */
export type DirectoryTrust = "trusted" | "shared";

/**
 * Warning codes: a changed meaning or a weaker guarantee that still succeeded.
 *
 * @example
 * ```ts
 * const fuzzy = report.warnings.filter((w) => w.code === ("fuzzy_match" satisfies WarningCode));
 * ```
 */
export type WarningCode =
  | "patch_trimmed"
  | "heredoc_stripped"
  | "carriage_return_stripped"
  | "unified_header_ignored"
  | "markdown_fence_stripped"
  | "unified_diff_converted"
  | "line_ids_stripped"
  | "first_chunk_without_anchor"
  | "fuzzy_match"
  | "escaped_literals_recovered"
  | "indentation_adjusted"
  | "indentation_not_adjusted"
  | "trailing_blank_context_dropped"
  | "appended_at_eof"
  | "parents_created"
  | "mode_not_preserved"
  | "owner_not_preserved"
  | "acl_or_xattr_not_preserved"
  | "hard_link_broken"
  | "stale_lock_broken"
  | "leftovers_removed"
  | "insecure_host_key"
  | "agent_unavailable"
  | "channel_limit_lowered"
  | "cleanup_incomplete"
  | "cancel_too_late";

/**
 * A warning attached to a parse, a plan or a commit.
 *
 * @example
 * ```ts
 * const w: Warning = warning("fuzzy_match", "chunk 2 matched ignoring trailing whitespace", { path: "a.py", hunk: 2 });
 * ```
 */
export interface Warning {
  /** The stable warning code. */
  code: WarningCode;
  /** What changed meaning or which guarantee is weaker, in words. */
  message: string;
  /** Root-relative path it is about. */
  path?: string;
  /** 1-based chunk within its Update section. */
  hunk?: number;
  /** 1-based file line. */
  line?: number;
  /** 1-based line of the patch text. */
  patchLine?: number;
  /** Next steps as data (see {@linkcode FailureHint}). */
  hints?: FailureHint[];
}

// ---------------------------------------------------------------------------
// The parsed patch (SPEC §3)
// ---------------------------------------------------------------------------

/**
 * One body line of a chunk.
 *
 * @example
 * ```ts
 * const line: ChunkLine = { kind: "delete", text: "    listen 80;", patchLine: 4 };
 * ```
 */
export interface ChunkLine {
  /** `' '` context, `'-'` delete, `'+'` insert. */
  kind: "context" | "delete" | "insert";
  /** Text without the leading marker and without any line ending. */
  text: string;
  /** 1-based patch line. */
  patchLine: number;
}

/**
 * One `@@` chunk of an Update section.
 *
 * @example
 * ```ts
 * const chunk: Chunk = { anchors: ["server {"], lines: [{ kind: "delete", text: "listen 80;", patchLine: 4 }, { kind: "insert", text: "listen 8080;", patchLine: 5 }], endOfFile: false, patchLine: 3 };
 * ```
 */
export interface Chunk {
  /** `@@ text` anchors in order, each narrowing the search; empty for a bare `@@`. */
  anchors: string[];
  /** Context, delete and insert lines in patch order. */
  lines: ChunkLine[];
  /** `*** End of File` followed the chunk: it must match the file's last lines. */
  endOfFile: boolean;
  /** 1-based patch line where the chunk starts (its first `@@` or first body line). */
  patchLine: number;
}

/**
 * `*** Add File: path` with its `+` lines.
 *
 * @example
 * ```ts
 * const op: AddFileOp = { type: "add", path: "docs/notes.md", lines: ["# Notes"], patchLine: 2 };
 * ```
 */
export interface AddFileOp {
  /** Discriminant. */
  type: "add";
  /** Root-relative path of the new file. */
  path: string;
  /** The new file's lines (without the `+`); the file is written with `\n` endings and a final newline. */
  lines: string[];
  /** 1-based patch line of the section header. */
  patchLine: number;
}

/**
 * `*** Delete File: path`.
 *
 * @example
 * ```ts
 * const op: DeleteFileOp = { type: "delete", path: "old.txt", patchLine: 2 };
 * ```
 */
export interface DeleteFileOp {
  /** Discriminant. */
  type: "delete";
  /** Root-relative path of the file to delete. */
  path: string;
  /** 1-based patch line of the section header. */
  patchLine: number;
}

/**
 * `*** Update File: path`, optionally `*** Move to: moveTo`, with its chunks.
 *
 * @example
 * ```ts
 * const op: UpdateFileOp = { type: "update", path: "src/app.py", moveTo: "src/main.py", chunks: [], patchLine: 2 };
 * ```
 */
export interface UpdateFileOp {
  /** Discriminant. */
  type: "update";
  /** Root-relative path of the file to change. */
  path: string;
  /** Root-relative destination of `*** Move to:`. */
  moveTo?: string;
  /** The `@@` chunks in patch order (empty only for a pure move). */
  chunks: Chunk[];
  /** 1-based patch line of the section header. */
  patchLine: number;
}

/**
 * A whole-file replace: `*** Replace File: path` with its `+` lines, or a
 * `*** Delete File: path` followed later in the same patch by
 * `*** Add File: path` (the parser joins the two). The file must exist; the
 * commit renames the new content over it in one step, keeping its mode and
 * owner as an Update does, so no reader ever sees it missing.
 *
 * @example
 * ```ts
 * const op: ReplaceFileOp = { type: "replace", path: "config.ini", lines: ["[main]", "debug = 0"], patchLine: 2 };
 * ```
 */
export interface ReplaceFileOp {
  /** Discriminant. */
  type: "replace";
  /** Root-relative path of the existing file to rewrite. */
  path: string;
  /**
   * The new content's lines (without the `+`). They take the old file's
   * dominant line ending, its BOM and its final-newline state, as an Update
   * replacing every line would.
   */
  lines: string[];
  /** 1-based patch line of the section header (the `*** Delete File:` line of a Delete + Add). */
  patchLine: number;
  /** For a Delete + Add: 1-based patch line of the `*** Add File:` header. */
  addLine?: number;
}

/**
 * One file section of a patch.
 *
 * @example
 * ```ts
 * for (const op of patch.ops) if (op.type === "update") console.log(op.path, op.chunks.length); // FileOp narrows on type
 * ```
 */
export type FileOp = AddFileOp | DeleteFileOp | UpdateFileOp | ReplaceFileOp;

/**
 * A parsed patch: its file sections in patch order.
 *
 * @example
 * ```ts
 * const parsed = parsePatch(text);
 * if (parsed.ok) parsed.patch.ops.map((op) => op.path); // Patch
 * ```
 */
export interface Patch {
  /** The file sections in patch order. */
  ops: FileOp[];
}

/**
 * Options of {@linkcode parsePatch}.
 *
 * @example
 * ```ts
 * parsePatch(text, { limits: { maxPatchBytes: 1024 * 1024, maxFiles: 10 } } satisfies ParseOptions);
 * ```
 */
export interface ParseOptions {
  /** Limits; only `maxPatchBytes`, `maxFiles` and `maxChunksPerFile` apply to parsing. */
  limits?: Partial<Limits>;
}

/**
 * The result of {@linkcode parsePatch}.
 *
 * @example
 * ```ts
 * const r: ParseResult = parsePatch(text);
 * if (!r.ok) for (const e of r.errors) console.error(e.message);
 * ```
 */
export type ParseResult =
  | { ok: true; patch: Patch; warnings: Warning[] }
  | { ok: false; errors: Failures; warnings: Warning[] };

// ---------------------------------------------------------------------------
// Snapshots (SPEC §2)
// ---------------------------------------------------------------------------

/**
 * What a path is on the remote side.
 *
 * @example
 * ```ts
 * const snap = snapshots.get("a.txt");
 * if (snap?.kind === ("missing" satisfies FileKind)) console.log("an Add would create it");
 * ```
 */
export type FileKind = "missing" | "file" | "directory" | "symlink" | "other";

/**
 * The state of one root-relative path as read in one `exec` (readSnapshots).
 * `bytes` and `sha256` are present for regular files.
  *
  * @example
  * ```ts
  * const snapshots = await readSnapshots(new LocalShell(), "/srv/app", ["config.yml"]);
  * const s: FileSnapshot | undefined = snapshots.get("config.yml");
  * if (s?.kind === "file") console.log(s.size, s.sha256, s.mode?.toString(8));
  * ```
 */
export interface FileSnapshot {
  /** Root-relative path. */
  path: string;
  /** What the path is on the host. */
  kind: FileKind;
  /** The file's content (regular files). */
  bytes?: Uint8Array;
  /** Lowercase hex SHA-256 of `bytes`. */
  sha256?: string;
  /** Size in bytes. */
  size?: number;
  /** Permission bits including setuid/setgid/sticky (`mode & 0o7777`). */
  mode?: number;
  /** Owner's uid. */
  uid?: number;
  /** Group's gid. */
  gid?: number;
  /** Hard-link count (more than 1: the commit warns `hard_link_broken`). */
  nlink?: number;
  /** For a missing path: whether its parent directory exists. */
  parentExists?: boolean;
  /**
   * For a missing path the caller needs to exist (readSnapshots'
   * `closestFor`): the existing files closest to it, best first (at most 5;
   * the same path but for letter case or Unicode normalisation, the same
   * file name elsewhere in the root, a near spelling in its directory),
   * found by a bounded walk in the same exec. Empty when none is close.
   */
  closestPaths?: string[];
  /**
   * `true` when that walk stopped at one of its bounds (entries, depth,
   * time) before it had seen every name: an empty `closestPaths` then does
   * not mean that no similar file exists.
   */
  closestSearchCut?: boolean;
  /**
   * `"shared"` when a directory on the path can be written by users other
   * than the remote user and root (read with `sharedDirectories: "allow"`:
   * the bytes come from a pinned inode); absent when trusted.
   */
  directoryTrust?: DirectoryTrust;
  /**
   * How the bytes reached the client (readSnapshots): `"cached"` — the
   * host proved by SHA-256 that the file holds content this client already
   * had (a `SnapshotCache`), nothing was sent; `"downloaded"` — sent as
   * they are; `"compressed"` — sent compressed, then decompressed and
   * checked against the host's SHA-256. Absent when no bytes were read.
   */
  transfer?: SnapshotTransfer;
  /**
   * Set when the remote side refused the path (§6): a symlinked component,
   * a parent resolving outside the root, a non-directory component, no
   * permission. planPatch turns it into this failure for any op on the path.
   */
  rejected?: PatchFailure;
  /**
   * What reading it did besides: `leftovers_removed` when the program,
   * making its private directory in this path's directory, removed there
   * the private directories of killed snapshot or search programs.
   * applyPatch carries these into its report's `warnings`.
   */
  warnings?: Warning[];
}

/**
 * How a snapshot's bytes reached the client (see `FileSnapshot.transfer`).
 *
 * @example
 * ```ts
 * for (const f of report.files) if (f.snapshot === ("cached" satisfies SnapshotTransfer)) console.log(`${f.path}: proved by hash, not downloaded`);
 * ```
 */
export type SnapshotTransfer = "cached" | "downloaded" | "compressed";

/**
 * All snapshots of a patch, keyed by root-relative path.
 *
 * @example
 * ```ts
 * const snapshots: Snapshots = new Map([["a.txt", { path: "a.txt", kind: "missing" }]]);
 * planPatch(patch, snapshots);
 * ```
 */
export type Snapshots = ReadonlyMap<string, FileSnapshot>;

// ---------------------------------------------------------------------------
// Plans (SPEC §2, §4, §5)
// ---------------------------------------------------------------------------

/**
 * Matching strictness: where the tier ladder stops (SPEC §5.2).
 *
 * @example
 * ```ts
 * planPatch(patch, snapshots, { matching: "exact" satisfies MatchingMode });
 * ```
 */
export type MatchingMode = "exact" | "whitespace" | "lenient";

/**
 * Tier of the ladder that matched: 1 exact … 5 escaped-literal recovery.
 *
 * @example
 * ```ts
 * const fuzzy = plan.files.flatMap((f) => f.hunks).filter((h) => h.tier > (1 satisfies MatchTier));
 * ```
 */
export type MatchTier = 1 | 2 | 3 | 4 | 5;

/**
 * The configurable limits (all in bytes or counts).
 *
 * @example
 * ```ts
 * const limits: Limits = { ...DEFAULT_LIMITS, maxFileBytes: 512 * 1024 * 1024 };
 * await applyPatch(shell, { root, patch, limits });
 * ```
 */
export interface Limits {
  /** Largest accepted patch text, in UTF-8 bytes. */
  maxPatchBytes: number;
  /** Most file sections in one patch. */
  maxFiles: number;
  /** Most chunks in one Update section. */
  maxChunksPerFile: number;
  /** Largest file that may be read, planned or written. */
  maxFileBytes: number;
}

/**
 * The expected state of a path at commit time: an enum, never a sentinel hash.
 *
 * @example
 * ```ts
 * const expected: ExpectedState = { state: "sha256", sha256: "c3f9c8c283a2b1f2f1896f27a01cbe3cddc0c9d93f752e4639035a0f5b36f6e8" };
 * ```
 */
export type ExpectedState =
  | { state: "missing" }
  | { state: "sha256"; sha256: string };

/**
 * Where one chunk landed.
 *
 * @example
 * ```ts
 * for (const h of plannedFile.hunks) console.log(`chunk ${h.index} at line ${h.line}, tier ${h.tier}`); // HunkPlacement
 * ```
 */
export interface HunkPlacement {
  /** 1-based chunk index within the Update section. */
  index: number;
  /** 1-based first line of the replaced region in the old file (for a pure insertion: the line it goes before). */
  line: number;
  /** Tier of the ladder that matched. */
  tier: MatchTier;
}

/**
 * A byte range `[start, end)` of the source file as the plan read it (the
 * snapshot whose SHA-256 is the file's `expected.sha256`).
  *
  * @example
  * ```ts
  * const kept: SourcePiece = { source: [0, 2] }; // the first two bytes of the old file
  * ```
 */
export interface SourcePiece {
  /** Byte range of the source snapshot. */
  source: [start: number, end: number];
}

/**
 * A byte range `[start, end)` of the new content itself (`newBytes`): bytes the old file does not supply.
 *
 * @example
 * ```ts
 * const added: FreshPiece = { fresh: [2, 4] }; // bytes 2-4 of the new content are new
 * ```
 */
export interface FreshPiece {
  /** Byte range of `newBytes`. */
  fresh: [start: number, end: number];
}

/**
 * One stretch of a planned file's new content. The pieces of a file, in
 * order, concatenate exactly to its `newBytes`: a fresh piece's range starts
 * where the pieces before it end, source ranges ascend and never overlap.
 *
 * @example
 * ```ts
 * // old "a\nb\nc\n", new "a\nB\nc\n":
 * const pieces: ContentPiece[] = [{ source: [0, 2] }, { fresh: [2, 4] }, { source: [4, 6] }];
 * ```
 */
export type ContentPiece = SourcePiece | FreshPiece;

/**
 * One planned file change.
 *
 * @example
 * ```ts
 * const planned = planPatch(patch, snapshots);
 * if (planned.ok) for (const f of planned.plan.files) console.log(f.op, f.path, f.newSha256, f.diff); // PlannedFile
 * ```
 */
export interface PlannedFile {
  /**
   * What the commit does to the file. `replace` (a whole-file rewrite,
   * {@linkcode ReplaceFileOp}) commits exactly as an `update` does.
   */
  op: "add" | "update" | "delete" | "move" | "replace";
  /** Root-relative source path (the new path for `add`). */
  path: string;
  /** Destination of a move. */
  moveTo?: string;
  /** Expected state of `path` at commit time. */
  expected: ExpectedState;
  /** Expected state of `moveTo` (always missing). */
  expectedDestination?: ExpectedState;
  /** The new content, for add / update / move. */
  newBytes?: Uint8Array;
  /** Lowercase hex SHA-256 of `newBytes`. */
  newSha256?: string;
  /**
   * For update and move: how `newBytes` is made of byte ranges of the
   * source's snapshot and new stretches (planPatch records them while it
   * renders, at no extra pass over the file). commitRemote uses them to
   * upload only the new stretches and rebuild the rest on the host from the
   * current source, accepting the result only when its SHA-256 is
   * `newSha256`. Optional: without it the whole content is uploaded.
   */
  pieces?: ContentPiece[];
  /** Unified diff of the change (git-style `a/` `b/` headers). */
  diff: string;
  /** Where each chunk landed. */
  hunks: HunkPlacement[];
  /** Warnings of this file's plan (fuzzy matches, indentation, …). */
  warnings: Warning[];
}

/**
 * The full plan of a patch: checked completely before anything is written.
 *
 * @example
 * ```ts
 * const planned = planPatch(patch, snapshots);
 * if (planned.ok) await commitRemote(shell, root, planned.plan satisfies Plan);
 * ```
 */
export interface Plan {
  /** One entry per file section, in patch order. */
  files: PlannedFile[];
  /** Warnings of the whole patch (parse leniencies). */
  warnings: Warning[];
  /** Create missing parent directories of added / moved-to files. */
  createParents: boolean;
}

/**
 * Options of {@linkcode planPatch}.
 *
 * @example
 * ```ts
 * planPatch(patch, snapshots, { matching: "whitespace", expectedSha256: { "a.txt": sha }, requireShaForDelete: true } satisfies PlanOptions);
 * ```
 */
export interface PlanOptions {
  /** Default `"lenient"` (all five tiers). */
  matching?: MatchingMode;
  /** Caller's revision preconditions: root-relative path → SHA-256 of the whole file. */
  expectedSha256?: Readonly<Record<string, string>>;
  /** Reject a Delete without an `expectedSha256` entry for its path. Default false. */
  requireShaForDelete?: boolean;
  /** Create missing parents of added files. Default true. */
  createParents?: boolean;
  /** Bounds on the patch and the files (defaults `DEFAULT_LIMITS`). */
  limits?: Partial<Limits>;
  /**
   * How the files are decoded and new text encoded: strict UTF-8 (the
   * default; other bytes fail `invalid_utf8`), or a single-byte legacy
   * encoding, `"latin1"` (ISO-8859-1) or `"windows-1252"`, in which every
   * byte round-trips exactly. One encoding for every file of the patch;
   * new text with a character it cannot represent fails
   * `unencodable_character`, nothing applied. SHA-256s stay over the bytes.
   */
  encoding?: TextEncodingName;
  /** Longest excerpt in a failure, in lines (default 40) and bytes (default 4096). */
  excerptLines?: number;
  /** Longest excerpt in a failure, in bytes (default 4096). */
  excerptBytes?: number;
  /**
   * Contents the caller has seen, by SHA-256 (applyPatch passes its
   * `cache`'s): when an Update's `expectedSha256` is stale but its chunks
   * still apply exactly to the current file, the `precondition_failed` shows
   * what changed since that version (a bounded diff) instead of only which
   * lines the chunks touch. Bytes that do not hash to the SHA-256 asked for
   * are ignored.
   */
  contentOf?: (sha256: string) => Uint8Array | undefined;
}

/**
 * The result of {@linkcode planPatch}: all failures of the patch together.
 *
 * @example
 * ```ts
 * const r: PlanResult = planPatch(patch, snapshots);
 * if (!r.ok) console.error(r.errors.map((e) => e.message).join("\n\n"));
 * ```
 */
export type PlanResult =
  | { ok: true; plan: Plan }
  | { ok: false; errors: Failures; warnings: Warning[] };

// ---------------------------------------------------------------------------
// Edits: how a plan rebuilds a file from slices (SPEC §5.3, §5.5)
// ---------------------------------------------------------------------------

/**
 * One line of an edit's replacement: either a line of the old file kept
 * with its own text and ending (context lines keep the file's text, never the
 * patch's), or new text that takes the file's dominant ending.
  *
  * @example
  * ```ts
  * const replacement: OutputLine[] = [{ keep: 3 }, { text: "new line" }]; // old line 3 kept as it is, then a new line
  * ```
 */
export type OutputLine = { keep: number } | { text: string };

/**
 * Replace old lines `[start, end)` (0-based) by `replacement`. `keep` indices
 * inside a replacement are ascending and lie within `[start, end)`. Edits of
 * one file are sorted and do not overlap; `start === end` is a pure insertion
 * before line `start` (`start === lines.length`: at end of file).
  *
  * @example
  * ```ts
  * const edit: LineEdit = { start: 1, end: 2, replacement: [{ text: "TWO" }] }; // replace the second line
  * ```
 */
export interface LineEdit {
  /** 0-based first old line replaced. */
  start: number;
  /** 0-based old line after the last one replaced (`start` for a pure insertion). */
  end: number;
  /** The lines that take their place. */
  replacement: OutputLine[];
}

// ---------------------------------------------------------------------------
// Reports (SPEC §2, §7)
// ---------------------------------------------------------------------------

/**
 * What was kept of the replaced file's metadata.
 *
 * @example
 * ```ts
 * for (const f of report.files) if (f.metadataPreserved && !f.metadataPreserved.owner) console.warn(`${f.path}: owner not kept`);
 * ```
 */
export interface MetadataPreserved {
  /** The permission bits were kept. */
  mode: boolean;
  /** Owner and group were kept. */
  owner: boolean;
}

/**
 * The outcome of one file of a commit (or of a dry run, or of reconcile).
 *
 * @example
 * ```ts
 * for (const f of report.files) console.log(f.op, f.path, f.previousSha256?.slice(0, 12), "→", f.newSha256?.slice(0, 12)); // FileReport
 * ```
 */
export interface FileReport {
  /** What was done to the file. */
  op: PlannedFile["op"];
  /** Root-relative path (the source of a move). */
  path: string;
  /** Destination of a move. */
  moveTo?: string;
  /** SHA-256 before the change (`null`: did not exist). */
  previousSha256: string | null;
  /** SHA-256 after the change (`null`: deleted). */
  newSha256: string | null;
  /** Bytes of the new content (0 for a delete). */
  bytesWritten: number;
  /** `null` when nothing was replaced (add, delete, dry run). */
  metadataPreserved: MetadataPreserved | null;
  /**
   * Bytes of this file's content sent to the host by a commit: the whole
   * content, or with a delta upload only the new stretches and the lines
   * describing the pieces rebuilt from the current file (see
   * `CommitOptions.delta`). Absent in dry-run and reconcile reports.
   */
  bytesUploaded?: number;
  /**
   * How the content this change was planned on reached the client
   * (`FileSnapshot.transfer` of its source): from the `SnapshotCache` after
   * the host proved its SHA-256, downloaded, or downloaded compressed.
   * Absent for an Add (nothing was read) and in reconcile reports.
   */
  snapshot?: SnapshotTransfer;
  /** Unified diff of the change (cut for very large ones by front ends). */
  diff: string;
  /** Warnings about this file. */
  warnings: Warning[];
  /**
   * `"trusted"`: every directory of the file's path(s), and the root's
   * ancestors, can be written only by the remote user and root; `"shared"`:
   * some can be written by others (only with `sharedDirectories: "allow"`).
   * Absent in reconcile reports and reports built without a host.
   */
  directoryTrust?: DirectoryTrust;
  /** Set by reconcile: what the disk shows now. */
  state?: "applied" | "not_applied" | "diverged";
}

/**
 * The honest atomicity guarantee (SPEC §7).
 *
 * @example
 * ```ts
 * report.atomicity satisfies Atomicity; // "batch_preflight_per_file_commit"
 * ```
 */
export type Atomicity = "batch_preflight_per_file_commit";

/**
 * What every commit, reconcile and apply report carries, whatever its outcome.
 *
 * @example
 * ```ts
 * const fields: CommitReportFields = await commitRemote(shell, root, plan); // ok or not
 * console.log(fields.operationId, fields.files.length);
 * ```
 */
export interface CommitReportFields {
  /** The operation's id: what a reconcile ticket carries. */
  operationId: string;
  /** The atomicity guarantee that applied. */
  atomicity: Atomicity;
  /** The remote programs ran under sudo. */
  elevated: boolean;
  /** One report per planned file, in plan order. */
  files: FileReport[];
  /** Warnings of the operation (stale locks broken, leftovers removed, …). */
  warnings: Warning[];
}

/**
 * A commit (or reconcile) that finished: see each file's report.
 *
 * @example
 * ```ts
 * const committed = await commitRemote(shell, root, plan);
 * if (committed.ok) committed satisfies CommitSucceeded;
 * ```
 */
export interface CommitSucceeded extends CommitReportFields {
  /** Every file was committed (for reconcile: settled; see each file's `state`). */
  ok: true;
  /** Never set on a report that is ok. */
  errors?: undefined;
  /**
   * For a commit that reported `ok`: whether every new content and every
   * changed directory was flushed to stable storage before (`sync FILE` /
   * `sync DIR`, Linux hosts where the userland has them, probed): true
   * means a crash of the host right after `ok` keeps the new files. False:
   * the host could not (another OS, an old userland) — the files are
   * written, but may be lost or empty after a power cut. Absent in
   * reconcile reports.
   */
  durable?: boolean;
}

/**
 * A commit (or reconcile) that did not: `errors` holds at least one failure.
 *
 * @example
 * ```ts
 * const committed = await commitRemote(shell, root, plan);
 * if (!committed.ok) console.error(committed.errors[0].message);
 * ```
 */
export interface CommitFailed extends CommitReportFields {
  /** The operation failed; `errors` says why and what to do. */
  ok: false;
  /** Every failure, at least one. */
  errors: Failures;
  /** Only a commit that is ok says whether it is durable. */
  durable?: undefined;
}

/**
 * The result of commitRemote / reconcile: `ok` narrows it, so after
 * `if (!report.ok)` the first failure is `report.errors[0]`.
 *
 * @example
 * ```ts
 * const report = await commitRemote(shell, "/srv/app", plan);
 * if (!report.ok) console.error(report.errors[0].message);
 * ```
 */
export type CommitReport = CommitSucceeded | CommitFailed;

/**
 * What `reconcile` needs to settle one operation, without the plan's
 * contents: per file its op, path(s), the SHA-256 it was planned from and
 * the one it gets. Plain JSON: it travels in failures, log lines, files and
 * tool results, and `reconcile` accepts it in place of the plan.
  *
  * @example
  * ```ts
  * const ticket: ReconcileTicket | null = reconcileTicketOf(report);
  * if (ticket) await reconcile(shell, root, ticket);
  * ```
 */
export interface ReconcileTicket {
  /** The operation to settle. */
  operationId: string;
  /** Its planned files, in plan order. */
  files: ReconcileTicketFile[];
}

/**
 * One planned file of a {@linkcode ReconcileTicket}.
 *
 * @example
 * ```ts
 * const file: ReconcileTicketFile = { op: "update", path: "a.txt", previousSha256: "c3f9…", newSha256: "b628…", newSize: 14 };
 * ```
 */
export interface ReconcileTicketFile {
  /** What the plan did to the file. */
  op: PlannedFile["op"];
  /** Root-relative path (the source of a move). */
  path: string;
  /** Destination of a move. */
  moveTo?: string;
  /** SHA-256 the plan was built on (`null`: an Add, the path was missing). */
  previousSha256: string | null;
  /** SHA-256 once applied (`null`: a Delete). */
  newSha256: string | null;
  /** Bytes of the new content (`null`: a Delete). */
  newSize: number | null;
}

/**
 * An applyPatch that applied the patch (or, with `dryRun`, planned it).
 *
 * @example
 * ```ts
 * const report = await applyPatch(shell, { root: "/srv/app", patch, dryRun: true });
 * if (report.ok && report.dryRun) for (const f of report.files) console.log(f.diff);
 * ```
 */
export interface ApplySucceeded extends CommitSucceeded {
  /** True when nothing was committed (`dryRun`): the diffs and SHAs are what a commit would do. */
  dryRun: boolean;
}

/**
 * An applyPatch that did not: `errors` holds at least one failure.
 *
 * @example
 * ```ts
 * const report = await applyPatch(shell, { root: "/srv/app", patch });
 * if (!report.ok) for (const e of report.errors) console.error(e.message);
 * ```
 */
export interface ApplyFailed extends CommitFailed {
  /** The request's `dryRun`. */
  dryRun: boolean;
}

/**
 * The result of applyPatch: `ok` narrows it.
 *
 * @example
 * ```ts
 * const report = await applyPatch(shell, { root: "/srv/app", patch });
 * if (report.ok) console.log(report.files.map((f) => f.newSha256));
 * else for (const e of report.errors) console.error(e.message);
 * ```
 */
export type ApplyReport = ApplySucceeded | ApplyFailed;
