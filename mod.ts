/**
 * ssh-apply-patch: apply Codex-format patches to files on remote hosts over
 * SSH, safely.
 *
 * The pure core turns patch text and file snapshots into a plan
 * (`parsePatch`, `planPatch`); the remote layer reads snapshots and commits
 * plans through a small `RemoteShell` adapter (`readSnapshots`,
 * `commitRemote`, `reconcile`), with `LocalShell` for this machine and
 * `connectSsh` for OpenSSH servers. `applyPatch` does the whole job;
 * `listFiles` and `searchFiles` find what to patch (read-only, bounded).
 * `applyFleet` sends one patch to many hosts (canary first, bounded
 * concurrency, stop after failures, every host's truth in one report) and
 * `reconcileFleet` settles the hosts whose outcome is unknown.
 *
 * @example
 * ```ts
 * import { applyPatch, connectSsh } from "./mod.ts";
 *
 * const shell = await connectSsh({ host: "web1" });
 * const report = await applyPatch(shell, {
 *   root: "/srv/app",
 *   patch: "*** Begin Patch\n*** Update File: config.yml\n@@\n-debug: true\n+debug: false\n*** End Patch",
 * });
 * console.log(report.ok ? report.files.map((f) => f.diff).join("") : report.errors[0].message);
 * await shell.close();
 * ```
 *
 * @module
 */

// Pure core: no I/O.
export { parsePatch } from "./lib/patch/parse.ts";
export { planPatch } from "./lib/plan/plan.ts";
export { formatLineId, lineHash } from "./lib/text/line_id.ts";
export { canonicalPathKey, validatePath } from "./lib/patch/paths.ts";
export { unifiedDiff } from "./lib/text/diff.ts";
export type { UnifiedDiffInput } from "./lib/text/diff.ts";
export { DEFAULT_LIMITS, resolveLimits } from "./lib/patch/limits.ts";
export { failure, isRetryable, listHint, optionHint, pathHint, readHint, reconcileHint, rewordFailure, shaHint, warning } from "./lib/failure.ts";
export type { FailureInput, FailureInputArgs, HintWords } from "./lib/failure.ts";
export { sha256Hex } from "./lib/text/sha256.ts";
export { closestName, foldName, unknownNames, unknownNamesText } from "./lib/text/closest_name.ts";
export { closestPaths, foldPath } from "./lib/text/closest_path.ts";
export type { ClosestPath, ClosestPathKind } from "./lib/text/closest_path.ts";
export { readWindow } from "./lib/plan/read_window.ts";
export { parseFailurePaths, refineParseFailures } from "./lib/plan/refine.ts";
export type { RefineContext } from "./lib/plan/refine.ts";
export type { EolStyle, ReadWindowOptions, ReadWindowResult } from "./lib/plan/read_window.ts";
export type * from "./lib/types.ts";

// Remote layer.
export { NEVER_STARTED_CODES, programMayHaveRun, RemoteShellError, shQuote } from "./lib/remote/shell.ts";
export type { ExecOptions, ExecResult, LocalFileAccess, LocalFileIdentity, RemoteShell, RemoteShellErrorOptions, StdinGate } from "./lib/remote/shell.ts";
export { LocalShell } from "./lib/remote/local_shell.ts";
export type { LocalShellOptions } from "./lib/remote/local_shell.ts";
export { readSnapshots, snapshotRootId } from "./lib/remote/snapshot.ts";
export type { ReadSnapshotsOptions } from "./lib/remote/snapshot.ts";
export { SnapshotCache } from "./lib/remote/snapshot_cache.ts";
export type { CacheHint, SnapshotCacheOptions, SnapshotCacheStats } from "./lib/remote/snapshot_cache.ts";
export type { CompressMode } from "./lib/remote/host_wire.ts";
export { commitRemote, DEFAULT_LOCK_WAIT_MS, DEFAULT_CLIENT_GONE_MS, newOperationId } from "./lib/remote/commit.ts";
export type { CommitOptions } from "./lib/remote/commit.ts";
export { reconcile } from "./lib/remote/reconcile.ts";
export { reconcileTicket, reconcileTicketOf } from "./lib/remote/plan_shas.ts";
export type { ReconcileOptions } from "./lib/remote/reconcile.ts";
export { listFiles } from "./lib/remote/list_files.ts";
export type { ListedEntry, ListedKind, ListFilesFields, ListFilesOptions, ListFilesResult } from "./lib/remote/list_files.ts";
export { searchFiles } from "./lib/remote/search_files.ts";
export type { SearchFilesFields, SearchFilesOptions, SearchFilesResult, SearchMatch, SkipCause, SkippedExample, SkipReason } from "./lib/remote/search_files.ts";
export { applyPatch, patchPaths } from "./lib/apply.ts";
export type { ApplyPhase, ApplyRequest } from "./lib/apply.ts";

// Many hosts.
export { applyFleet, DEFAULT_FLEET_CONCURRENCY } from "./lib/fleet/fleet.ts";
export { reconcileFleet } from "./lib/fleet/reconcile_fleet.ts";
export { LIBRARY_FLEET_WORDS, listHosts, summarizeFleet } from "./lib/fleet/summary.ts";
export { alreadyApplied } from "./lib/fleet/host_state.ts";
export { FLEET_HOST_STATES } from "./lib/fleet/types.ts";
export type {
  FleetHost,
  FleetHostOptions,
  FleetHostRun,
  FleetHostState,
  FleetOptions,
  FleetPhase,
  FleetProgress,
  FleetReconciledHost,
  FleetReconcileReport,
  FleetReport,
  FleetRequest,
  FleetStopped,
  FleetSummary,
  FleetTarget,
  FleetTargetCommon,
  FleetWords,
  ReconcileFleetOptions,
} from "./lib/fleet/types.ts";

// SSH adapter.
export { connectSsh, SshShell } from "./lib/ssh/shell.ts";
export type { HostKeyPolicy, SshOptions } from "./lib/ssh/shell.ts";
export type { SudoOption } from "./lib/ssh/sudo.ts";
export type { PassphraseSource, PasswordRequest, PasswordSource } from "./lib/ssh/auth.ts";
export type { AddedHostKey } from "./lib/ssh/connect.ts";
export { parseSshDestination } from "./lib/ssh/destination.ts";
export type { SshDestination } from "./lib/ssh/destination.ts";
export { fingerprintSha256, formatKnownHostsLine, knownKeyTypes, parseKnownHosts, verifyHostKey } from "./lib/ssh/known_hosts.ts";
export type { HostKeyVerdict, KnownHostEntry, KnownHosts, KnownHostsProblem } from "./lib/ssh/known_hosts.ts";
export { resolveSshConfig } from "./lib/ssh/config.ts";
export type { ResolvedSshHost, SshConfigGiven, SshConfigSource } from "./lib/ssh/config.ts";
