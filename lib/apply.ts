/**
 * applyPatch: the whole job in one call — parse, read snapshots (one exec),
 * plan, then report (dry run) or commit (one exec).
 *
 * @module
 */
import { commitRemote, newOperationId } from "./remote/commit.ts";
import { asFailures, failure } from "./failure.ts";
import { resolveLimits } from "./patch/limits.ts";
import { parsePatch } from "./patch/parse.ts";
import { planPatch } from "./plan/plan.ts";
import { parseFailurePaths, refineParseFailures } from "./plan/refine.ts";
import { afterCommit } from "./plan/after_commit.ts";
import { RemoteShellError } from "./remote/shell.ts";
import type { RemoteShell } from "./remote/shell.ts";
import { unknownKeysFailure } from "./remote/request_keys.ts";
import { badValueFailure } from "./remote/request_values.ts";
import type { ValueRule } from "./remote/request_values.ts";
import type { NamesEveryKey } from "./remote/request_keys.ts";
import { readSnapshots, snapshotRootId } from "./remote/snapshot.ts";
import type { ReadSnapshotsOptions } from "./remote/snapshot.ts";
import type { CompressMode } from "./remote/host_wire.ts";
import type { SnapshotCache } from "./remote/snapshot_cache.ts";
import { cacheScope, rememberCommitted } from "./remote/snapshot_wire.ts";
import type { ApplyReport, Failures, FileReport, Limits, MatchingMode, Patch, PatchFailure, Plan, SharedDirectories, Snapshots, TextEncodingName, Warning } from "./types.ts";
import { appendAll } from "./text/append_all.ts";
import { TEXT_ENCODINGS } from "./text/encoding.ts";

/**
 * One `applyPatch` request. Only `root` and `patch` are required.
 *
 * @example
 * ```ts
 * const request: ApplyRequest = {
 *   root: "/srv/app",
 *   patch,
 *   dryRun: true,
 *   expectedSha256: { "config.yml": "<file_sha256 from the last read>" },
 *   matching: "whitespace",
 *   limits: { maxFiles: 20 },
 * };
 * const report = await applyPatch(shell, request);
 * ```
 */
export interface ApplyRequest {
  /** Absolute root directory on the target host; patch paths are relative to it. Chosen by configuration, never by the model. */
  root: string;
  /** The patch text in the Codex `apply_patch` format. */
  patch: string;
  /** Plan and report diffs and base SHAs, upload and change nothing. */
  dryRun?: boolean;
  /** Revision preconditions: root-relative path → SHA-256 of the whole file as last read. */
  expectedSha256?: Readonly<Record<string, string>>;
  /** Where the tier ladder stops (default `"lenient"`). */
  matching?: MatchingMode;
  /**
   * How the files are decoded and new text encoded: strict UTF-8 by default,
   * or `"latin1"` / `"windows-1252"` for legacy single-byte files (every
   * byte kept exactly; see `PlanOptions.encoding`). Another value fails
   * `invalid_argument` before anything is read.
   */
  encoding?: TextEncodingName;
  /** A Delete must name the SHA-256 of the version it removes. */
  requireShaForDelete?: boolean;
  /** Create missing parent directories of added and moved-to files (default true). */
  createParents?: boolean;
  /** Bounds on the patch and the files (defaults {@linkcode DEFAULT_LIMITS}); past one, `limit_exceeded`. */
  limits?: Partial<Limits>;
  /** Operation id for the commit (default random); needed by `reconcile` after `outcome_unknown`. */
  operationId?: string;
  /** Bounded wait for locks held by other writers (default 10 s). */
  lockWaitMs?: number;
  /**
   * Cancel. Before the commit's point of no return (every file staged,
   * locked and checked, nothing renamed: the host asks for the go-ahead)
   * it stops the commit: nothing is applied, nothing is left in the root,
   * and the report fails `cancelled`. After it, the commit finishes (never
   * half-way) and reports what it did, with the warning `cancel_too_late`.
   * See `CommitOptions.signal`.
   */
  signal?: AbortSignal;
  /** How long the host waits for this client's go-ahead, or for upload progress, before it concludes the client is gone (default 10 s; `CommitOptions.clientGoneMs`). */
  clientGoneMs?: number;
  /** Timeout of each remote program. */
  timeoutMs?: number;
  /** Upload progress of the commit's contents. */
  onProgress?: (sent: number, total: number) => void;
  /**
   * Called as each stage begins (read the files, plan, commit), with what
   * it works on. Planning is synchronous and takes a while on large files,
   * so after this call applyPatch yields to the event loop once (a
   * macrotask): what the callback sent (a progress notification) goes out
   * before the stage runs.
   */
  onPhase?: (phase: ApplyPhase) => void;
  /** Upload only the new stretches of large updated files (default true; see `CommitOptions.delta`). */
  delta?: boolean;
  /**
   * Directories (on the way to a file, or above the root) that users other
   * than the remote user and root can write: `"refuse"` (default) fails
   * `unsafe_directory` before anything is read or written; `"allow"` accepts
   * the risk for this root (SPEC §6.1: the engine still never follows or
   * opens anything there but the patched files, and reports each file's
   * `directoryTrust`).
   */
  sharedDirectories?: SharedDirectories;
  /**
   * Accept a root below a directory that another user can write (no
   * sticky bit protecting the root's name). Default false: such a root is
   * refused `unsafe_directory` (naming that directory, its owner and mode)
   * in every policy, because that user can put another directory at the
   * root's path at any moment. With true, every directory is handled as
   * shared (so `sharedDirectories: "allow"` is needed too) and each
   * program checks, at every directory it enters, that the root is still
   * the very directory (device:inode) it pinned at its start; the commit
   * also checks it against the snapshot's (`expectRootId`).
   */
  trustRootAncestors?: boolean;
  /**
   * Contents seen before (SPEC §11.1): a file whose content the cache holds
   * is not downloaded again — the host only proves its SHA-256 — and after
   * a successful commit the new contents go into the cache, so the next
   * patch of the same files downloads nothing. Each file's report says
   * where its snapshot came from (`snapshot`). Share one per session.
   */
  cache?: SnapshotCache;
  /**
   * Compress large snapshots on the host and send the programs packed:
   * `"auto"` (default: when `shell.link` is `"network"`), `true`, `false`.
   */
  compress?: CompressMode;
}

/** Every field of {@linkcode ApplyRequest}: any other key is refused (`invalid_request`). */
const APPLY_REQUEST_KEYS = [
  "root", "patch", "dryRun", "expectedSha256", "matching", "encoding", "requireShaForDelete", "createParents", "limits",
  "operationId", "lockWaitMs", "clientGoneMs", "signal", "timeoutMs", "onProgress", "onPhase", "delta", "sharedDirectories",
  "trustRootAncestors", "cache", "compress",
] as const satisfies readonly (keyof ApplyRequest)[];
const LIMIT_KEYS = ["maxPatchBytes", "maxFiles", "maxChunksPerFile", "maxFileBytes"] as const satisfies readonly (keyof Limits)[];
/**
 * What each request field's value must be (`root` and `patch` are checked before: TypeError); the type makes the list name every field.
 * lib/fleet checks its hosts' options by the same table, so a rule is written once.
 *
 * @example
 * ```ts
 * APPLY_VALUE_RULES.dryRun; // "boolean"
 * ```
 */
export const APPLY_VALUE_RULES: Readonly<Record<Exclude<keyof ApplyRequest, "root" | "patch">, ValueRule>> = {
  dryRun: "boolean",
  expectedSha256: "string-map",
  matching: { oneOf: ["exact", "whitespace", "lenient"] },
  encoding: { oneOf: TEXT_ENCODINGS },
  requireShaForDelete: "boolean",
  createParents: "boolean",
  limits: "count-map",
  operationId: "operation-id",
  lockWaitMs: "count",
  signal: "signal",
  clientGoneMs: "positive",
  timeoutMs: "positive",
  onProgress: "function",
  onPhase: "function",
  delta: "boolean",
  sharedDirectories: { oneOf: ["refuse", "allow"] },
  trustRootAncestors: "boolean",
  cache: { has: ["hint", "get", "put"], what: "a SnapshotCache" },
  compress: { oneOf: ["auto", true, false] },
};
const everyRequestKey: NamesEveryKey<ApplyRequest, (typeof APPLY_REQUEST_KEYS)[number]> = true;
const everyLimitKey: NamesEveryKey<Limits, (typeof LIMIT_KEYS)[number]> = true;
void everyRequestKey, everyLimitKey;

/**
 * Apply a Codex-format patch to files under `root` through a
 * {@linkcode RemoteShell}: parse → readSnapshots → planPatch → commitRemote
 * (or, with `dryRun`, a report of the diffs and base SHAs).
 *
 * Never rejects for a failure of the patch, the files, the host or the
 * connection: every outcome is an {@linkcode ApplyReport}, narrowed by
 * `ok`; when not ok, `errors` holds at least one failure whose message is
 * a recovery instruction (a RemoteShellError of the adapter becomes one of
 * them). A request key (or `limits` key) this function does not know —
 * `dryrun`, `expected_sha256` — is an `invalid_request` failure naming the
 * closest known field, before anything is read or written; so is a known
 * key whose value has the wrong type (`dryRun: "true"`, an
 * `expectedSha256` Map). It rejects only
 * for a programmer error: no shell, or a request without string `root` and
 * `patch` (TypeError). Warnings of every stage (parse leniencies, fuzzy
 * matches, metadata) are merged into `warnings`.
 *
 * @example
 * ```ts
 * const report = await applyPatch(new LocalShell(), {
 *   root: "/srv/site",
 *   patch: "*** Begin Patch\n*** Update File: index.html\n@@\n-<h1>Old</h1>\n+<h1>New</h1>\n*** End Patch",
 * });
 * if (!report.ok) console.error(report.errors.map((e) => e.message).join("\n\n"));
 * ```
 */
export async function applyPatch(shell: RemoteShell, request: ApplyRequest): Promise<ApplyReport> {
  if (!shell || typeof shell.exec !== "function") throw new TypeError("applyPatch: shell must be a RemoteShell");
  if (!request || typeof request.root !== "string" || typeof request.patch !== "string") {
    throw new TypeError("applyPatch: request needs string root and patch");
  }
  const operationId = request.operationId ?? newOperationId();
  const dryRun = request.dryRun === true;
  const strange = unknownKeysFailure("applyPatch request", request, APPLY_REQUEST_KEYS, "nothing was applied") ??
    badValueFailure("applyPatch request", request, APPLY_VALUE_RULES, "nothing was applied") ??
    unknownKeysFailure("applyPatch limits", request.limits, LIMIT_KEYS, "nothing was applied");
  const base = {
    operationId,
    atomicity: "batch_preflight_per_file_commit" as const,
    elevated: shell.elevated ?? false,
    dryRun,
  };
  const failed = (errors: Failures, warnings: Warning[]): ApplyReport => ({ ok: false, ...base, files: [], warnings, errors });
  if (strange !== null) return failed([strange], []);
  const limits = resolveLimits(request.limits);

  const parsed = parsePatch(request.patch, { limits });
  if (!parsed.ok) return failed(await refinedParseErrors(shell, request, parsed.errors, limits), parsed.warnings);
  const warnings = [...parsed.warnings];

  if (request.signal?.aborted) return failed([cancelledBeforeCommit(operationId)], warnings);
  await phase(request, { phase: "read", files: patchPaths(parsed.patch).length });
  let snapshots: Snapshots;
  try {
    // Update and Delete sources must exist: a missing one gets the names closest to it, in the same exec.
    const closestFor = parsed.patch.ops.filter((op) => op.type !== "add").map((op) => op.path);
    snapshots = await readSnapshots(shell, request.root, patchPaths(parsed.patch), { ...snapshotOptions(request, limits), closestFor });
  } catch (error) {
    if (error instanceof RemoteShellError) return failed([{ ...error.failure, operationId }], warnings);
    throw error;
  }

  // what the read did besides (leftovers of killed programs removed)
  for (const snap of snapshots.values()) if (snap.warnings !== undefined) appendAll(warnings, snap.warnings);

  if (request.onPhase !== undefined) {
    let bytes = request.patch.length;
    for (const snap of snapshots.values()) bytes += snap.size ?? 0;
    const chunks = parsed.patch.ops.reduce((n, op) => n + (op.type === "update" ? op.chunks.length : 0), 0);
    await phase(request, { phase: "plan", files: parsed.patch.ops.length, bytes, chunks });
  }
  const planned = planPatch(parsed.patch, snapshots, {
    matching: request.matching,
    ...(request.encoding !== undefined ? { encoding: request.encoding } : {}),
    expectedSha256: request.expectedSha256,
    requireShaForDelete: request.requireShaForDelete,
    createParents: request.createParents,
    limits,
    // what this caller read through the cache: a stale expectedSha256 then shows what changed (stale_read.ts)
    // (the cache keeps a path's last superseded versions for this: snapshot_cache.ts)
    ...(request.cache !== undefined ? { contentOf: (sha: string) => request.cache!.get(sha) } : {}),
  });
  if (!planned.ok) return failed(planned.errors, [...warnings, ...planned.warnings]);
  const plan = planned.plan;

  if (dryRun) {
    // As in a commit report: operation-level warnings on top, per-file ones in `files`.
    return { ok: true, ...base, files: dryRunFiles(plan, snapshots), warnings: [...warnings, ...plan.warnings] };
  }
  // The last moment a cancel can stop the change cleanly: after this the
  // commit program owns the outcome (SPEC §7).
  if (request.signal?.aborted) return failed([cancelledBeforeCommit(operationId)], [...warnings, ...plan.warnings]);

  await phase(request, { phase: "commit", files: plan.files.length });
  const committed = await commitRemote(shell, request.root, plan, {
    operationId,
    lockWaitMs: request.lockWaitMs,
    signal: request.signal,
    clientGoneMs: request.clientGoneMs,
    timeoutMs: request.timeoutMs,
    onProgress: request.onProgress,
    delta: request.delta,
    sharedDirectories: request.sharedDirectories,
    trustRootAncestors: request.trustRootAncestors,
    expectRootId: snapshotRootId(snapshots),
    compress: request.compress,
  });
  if (committed.ok && request.cache !== undefined) rememberCommitted(request.cache, cacheScope(shell, request.root), plan);
  // A failed commit has no per-file reports, so the plan's per-file warnings
  // (fuzzy matches, …) move up rather than vanish.
  const outcome = (committed.errors ?? []).some((e) => e.code === "outcome_unknown" || e.code === "partial_apply") ? "unknown" : "not_committed";
  const fileWarnings = committed.ok ? [] : plan.files.flatMap((f) => afterCommit(f.warnings, outcome));
  const files = committed.files.map((f) => withTransfer(f, snapshots));
  return { ...committed, files, dryRun: false, warnings: [...warnings, ...fileWarnings, ...committed.warnings] };
}

/**
 * A stage of {@linkcode applyPatch} as it begins (`onPhase`): reading the
 * patch's files, planning (matching every chunk; synchronous, the long one
 * on large files), committing (the upload's bytes go to `onProgress`).
 *
 * @example
 * ```ts
 * const onPhase = (p: ApplyPhase): void => {
 *   if (p.phase === "plan") console.error(`planning ${p.chunks} chunks against ${p.bytes} bytes`);
 * };
 * ```
 */
export type ApplyPhase =
  | { phase: "read"; files: number }
  /** `bytes`: the patch's and the read files' together; `chunks`: of every Update. */
  | { phase: "plan"; files: number; bytes: number; chunks: number }
  | { phase: "commit"; files: number };

/** Tell the caller a stage begins, then let its I/O out before the stage runs. */
async function phase(request: ApplyRequest, value: ApplyPhase): Promise<void> {
  if (request.onPhase === undefined) return;
  request.onPhase(value);
  await new Promise<void>((resolve) => setTimeout(resolve, 0));
}

/** A file report with how its source's snapshot reached the client (none for an Add). */
function withTransfer(file: FileReport, snapshots: Snapshots): FileReport {
  const transfer = file.op === "add" ? undefined : snapshots.get(file.path)?.transfer;
  return transfer === undefined ? file : { ...file, snapshot: transfer };
}

/** The snapshot options of a request: both reads (the plan's and a failed parse's) are the same read. */
function snapshotOptions(request: ApplyRequest, limits: Limits): ReadSnapshotsOptions {
  return {
    signal: request.signal,
    timeoutMs: request.timeoutMs,
    maxFileBytes: limits.maxFileBytes,
    sharedDirectories: request.sharedDirectories,
    trustRootAncestors: request.trustRootAncestors,
    cache: request.cache,
    compress: request.compress,
  };
}

/**
 * Parse failures made precise with the root and, when a failure can use
 * them (chunk lines without a marker), the files they name: one snapshot
 * exec, on this failure path only; if it fails, the parse failures stand
 * as they are (lib/plan/refine.ts).
 */
async function refinedParseErrors(shell: RemoteShell, request: ApplyRequest, errors: Failures, limits: Limits): Promise<Failures> {
  const paths = parseFailurePaths(request.patch, errors);
  let snapshots: Snapshots | undefined;
  if (paths.length > 0 && !request.signal?.aborted) {
    try {
      snapshots = await readSnapshots(shell, request.root, paths, snapshotOptions(request, limits));
    } catch (error) {
      if (!(error instanceof RemoteShellError)) throw error;
    }
  }
  return asFailures(refineParseFailures(request.patch, errors, { root: request.root, ...(snapshots ? { snapshots } : {}), ...(request.encoding !== undefined ? { encoding: request.encoding } : {}) }));
}

/**
 * Every path the patch names: sources and Move destinations, in patch order.
 *
 * @example
 * ```ts
 * const parsed = parsePatch("*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-x\n+y\n*** End Patch");
 * if (parsed.ok) patchPaths(parsed.patch); // ["a.txt", "b.txt"]
 * ```
 */
export function patchPaths(patch: Patch): string[] {
  const paths: string[] = [];
  for (const op of patch.ops) {
    paths.push(op.path);
    if (op.type === "update" && op.moveTo !== undefined) paths.push(op.moveTo);
  }
  return paths;
}

/** The per-file report of a dry run: what would change, nothing written. */
function dryRunFiles(plan: Plan, snapshots: Snapshots): FileReport[] {
  const shared = (path: string | undefined): boolean => path !== undefined && snapshots.get(path)?.directoryTrust === "shared";
  return plan.files.map((file) => withTransfer({
    op: file.op,
    path: file.path,
    ...(file.moveTo !== undefined ? { moveTo: file.moveTo } : {}),
    previousSha256: file.expected.state === "sha256" ? file.expected.sha256 : null,
    newSha256: file.newSha256 ?? null,
    bytesWritten: 0,
    metadataPreserved: null,
    diff: file.diff,
    warnings: file.warnings,
    directoryTrust: shared(file.path) || shared(file.moveTo) ? "shared" as const : "trusted" as const,
  }, snapshots));
}

function cancelledBeforeCommit(operationId: string): PatchFailure {
  return failure("cancelled", "The request was cancelled before the commit started; nothing was changed. Send it again if you still want the change.", {
    operationId,
  });
}
