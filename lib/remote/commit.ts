/**
 * `commitRemote`: apply a checked plan on the remote side in one exec,
 * following SPEC §7's seven steps (the program is lib/remote/programs/commit_program.ts).
 *
 * @module
 */
import { randomBytes, randomUUID } from "node:crypto";
import { asFailures, failure, hasFailures, quotedFailure, reconcileHint } from "../failure.ts";
import { newContentLength } from "../plan/new_content.ts";
import { commitProgram } from "./programs/programs.ts";
import { afterCommit } from "../plan/after_commit.ts";
import { transactionInput, transactionLayout, uploadedBytes } from "./manifest.ts";
import type { TransactionLayout } from "./manifest.ts";
import { parseProgramOutput } from "./protocol.ts";
import { reconcileTicket, shasOf } from "./plan_shas.ts";
import type { ProgramOutput } from "./protocol.ts";
import { conflict, defaultAcl, locked, outcomeUnknown, partialApply, pathRefusal, remoteError, remoteWarning, rootFailure, unpinnable, unsafeDirectory, unsupported } from "./failures.ts";
import { MAX_REPLY_BYTES, MAX_STDERR_BYTES, replyTooLarge, stdoutOverflow, writeTimeoutMs } from "./exec_bounds.ts";
import { isWriteRefusal, lockedFailure, lockHolder, writeRefused } from "./host_refusals.ts";
import type { WriteRefusalContext } from "./host_refusals.ts";
import { execProgram } from "./host_wire.ts";
import type { CompressMode } from "./host_wire.ts";
import { unknownKeysFailure } from "./request_keys.ts";
import { badValueFailure, PROGRAM_VALUE_RULES } from "./request_values.ts";
import type { ValueRule } from "./request_values.ts";
import type { NamesEveryKey } from "./request_keys.ts";
import { programMayHaveRun, RemoteShellError } from "./shell.ts";
import type { ExecResult, RemoteShell } from "./shell.ts";
import type { CommitReport, Failures, FileReport, PatchFailure, PathOutcome, Plan, SharedDirectories, Warning } from "../types.ts";
import { appendAll } from "../text/append_all.ts";

/**
 * Default bounded wait for busy locks.
 *
 * @example
 * ```ts
 * await commitRemote(shell, root, plan, { lockWaitMs: 3 * DEFAULT_LOCK_WAIT_MS }); // wait up to 30 s for busy locks
 * ```
 */
export const DEFAULT_LOCK_WAIT_MS = 10_000;
/**
 * Default of {@linkcode CommitOptions.clientGoneMs}: how long the host
 * program waits for the client's go-ahead, or for upload progress, before
 * it concludes the client is gone and removes everything it made.
 *
 * @example
 * ```ts
 * await commitRemote(shell, root, plan, { clientGoneMs: 3 * DEFAULT_CLIENT_GONE_MS }); // a slow, bursty link
 * ```
 */
export const DEFAULT_CLIENT_GONE_MS = 10_000;

/**
 * Options of {@linkcode commitRemote}.
 *
 * @example
 * ```ts
 * const operationId = newOperationId();
 * const report = await commitRemote(shell, "/srv/app", plan, { operationId, lockWaitMs: 5_000, onProgress: (sent, total) => console.error(`${sent}/${total}`) });
 * ```
 */
export interface CommitOptions {
  /** Operation id (`[A-Za-z0-9_]{1,64}`); default a fresh random one. Keep it for reconcile. */
  operationId?: string;
  /** Longest total wait for locks held by others, default 10 s; then `locked`. */
  lockWaitMs?: number;
  /**
   * Cancel (README "Guarantees": cancel). Through an adapter that honours
   * the go-ahead handshake (`shell.stdinGate`: LocalShell, SshShell), an
   * abort before the host program reached its point of no return — every
   * file staged, locked and checked, nothing renamed — stops it there: the
   * program removes its stages, private directories and locks, and the
   * report fails `cancelled` with the operation id, nothing applied. An
   * abort after the go-ahead was sent is too late: the commit finishes (or
   * rolls back) by itself, never half-way, and the report says what it did,
   * with the warning `cancel_too_late`. Through another adapter the program
   * is killed and the report is `outcome_unknown` (reconcile settles it).
   */
  signal?: AbortSignal;
  /**
   * How long the host program waits for the go-ahead after asking, and how
   * long an upload may make no progress, before it concludes the client is
   * gone (a dropped or stalled link) and stops before its first rename,
   * removing everything it made and releasing its locks. Default 10 s;
   * whole seconds (at least 1) on the host.
   */
  clientGoneMs?: number;
  /**
   * Kill the program and report after this long. Default: 5 min + the lock
   * wait + 1 s per MiB uploaded (lib/remote/exec_bounds.ts). A commit that
   * times out after it started is `outcome_unknown`.
   */
  timeoutMs?: number;
  /** Upload progress (bytes of stdin handed to the transport). */
  onProgress?: (sent: number, total: number) => void;
  /**
   * Delta upload, default true: for an update or move of 64 KiB or more
   * whose plan records its pieces (planPatch does), send only the new
   * stretches and let the host copy the rest from the current source file
   * (lib/remote/delta.ts decides per file; `bytesUploaded` in each file's
   * report shows what was sent). The rebuilt content must have the plan's
   * SHA-256, so the result is the same as a whole upload; a source that
   * changed since the snapshot is a `conflict`. `false` uploads every
   * content whole.
   */
  delta?: boolean;
  /**
   * A directory on the way to a file (or above the root) that users other
   * than the remote user and root can write: `"refuse"` (default) fails
   * `unsafe_directory` before anything is written; `"allow"` commits there
   * anyway with the defence in depth of SPEC §6.1 (reports say
   * `directoryTrust: "shared"`).
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
   * The root's `device:inode` from {@linkcode snapshotRootId}: a root
   * directory replaced since the snapshots were read (by someone who can
   * write above it) is refused `conflict` before anything is written.
   * applyPatch passes it.
   */
  expectRootId?: string;
  /**
   * Send the program's text packed (gzip + base64, unpacked on the host)
   * once a snapshot of this shell has shown the host can unpack it:
   * `"auto"` (default: when `shell.link` is `"network"`), `true`, `false`
   * (lib/remote/host_wire.ts). The content itself is sent as it is (a
   * delta upload already sends only what changed).
   */
  compress?: CompressMode;
}

/** From this many bytes of new content on, the host hashes with OpenSSL where it can (lib/remote/programs/sh_common.ts). */
const LARGE_CONTENT_BYTES = 4 * 1024 * 1024;

function writtenBytes(plan: Plan): number {
  let total = 0;
  for (const file of plan.files ?? []) total += newContentLength(file) ?? 0;
  return total;
}

/**
 * A fresh operation id: 16 lowercase hex digits from `crypto.randomUUID`.
 *
 * @example
 * ```ts
 * newOperationId(); // "3f2a9c01d4e5b6a7"
 * ```
 */
export function newOperationId(): string {
  return randomUUID().replaceAll("-", "").slice(0, 16);
}

/** Every field of {@linkcode CommitOptions}: any other key is refused (`invalid_request`). */
const COMMIT_OPTION_KEYS = [
  "operationId", "lockWaitMs", "clientGoneMs", "signal", "timeoutMs", "onProgress", "delta", "sharedDirectories", "trustRootAncestors", "expectRootId", "compress",
] as const satisfies readonly (keyof CommitOptions)[];
const everyCommitKey: NamesEveryKey<CommitOptions, (typeof COMMIT_OPTION_KEYS)[number]> = true;
void everyCommitKey;
/** What each option's value must be (a mistyped one is refused like an unknown key). */
const COMMIT_VALUES: Readonly<Record<keyof CommitOptions, ValueRule>> = {
  ...PROGRAM_VALUE_RULES,
  operationId: "string", // its form is checked where the program is built: a TypeError, as documented
  clientGoneMs: "positive",
  onProgress: "function",
  delta: "boolean",
  expectRootId: "string",
};

/**
 * Commit a plan: stage every new content (SHA-checked), lock all paths in
 * sorted order, re-check every expected state, copy mode and owner, then
 * finalize file by file with backups, rolling back on failure (SPEC §7).
 * One exec, contents framed on stdin.
 *
 * The report is a value in every expected case: `ok: true` with per-file
 * SHAs, bytes and kept metadata; or `ok: false` with `errors` — `conflict`
 * (one per changed path; nothing written), `locked`, a §6 refusal,
 * `permission_denied`, `remote_unsupported`, `remote_error` (nothing
 * written), `partial_apply` (restore failed: real state per path), or
 * `outcome_unknown` when the channel died or the program was killed after
 * it may have begun changing files — then call {@linkcode reconcile} with
 * the report's `operationId`. A transport failure before the program
 * started (the adapter's `RemoteShellError.started === false`: refused
 * connection or sudo, timeout while waiting for a channel, …) is reported
 * as itself, since nothing ran. Only programmer errors throw (an invalid
 * plan, root or operation id).
 *
 * @example
 * ```ts
 * const report = await commitRemote(new LocalShell(), "/srv/app", plan.plan);
 * if (!report.ok && report.errors[0].code === "outcome_unknown") {
 *   await reconcile(shell, "/srv/app", reconcileTicket(plan.plan, report.operationId));
 * }
 * ```
 */
export async function commitRemote(
  shell: RemoteShell,
  root: string,
  plan: Plan,
  options: CommitOptions = {},
): Promise<CommitReport> {
  if (!shell || typeof shell.exec !== "function") throw new TypeError("commitRemote: shell must be a RemoteShell");
  const operationId = options.operationId ?? newOperationId();
  const strange = unknownKeysFailure("commitRemote options", options, COMMIT_OPTION_KEYS, "nothing was committed") ??
    badValueFailure("commitRemote options", options, COMMIT_VALUES, "nothing was committed");
  if (strange !== null) {
    return { ok: false, operationId, atomicity: "batch_preflight_per_file_commit", elevated: shell.elevated ?? false, files: [], warnings: [], errors: [strange] };
  }
  const lockWaitMs = options.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS;
  const clientGoneMs = options.clientGoneMs ?? DEFAULT_CLIENT_GONE_MS;
  if (!(Number.isFinite(clientGoneMs) && clientGoneMs > 0)) throw new TypeError("commitRemote: clientGoneMs must be a positive number");
  // the go-ahead handshake, where the adapter can answer it
  const gated = shell.stdinGate === true;
  const gateSeconds = gated ? Math.max(1, Math.ceil(clientGoneMs / 1000)) : 0;
  const layout = transactionLayout(plan, { delta: options.delta !== false });
  const command = commitProgram(
    root,
    operationId,
    lockWaitMs,
    gateSeconds,
    plan.createParents !== false,
    writtenBytes(plan) >= LARGE_CONTENT_BYTES,
    options.sharedDirectories ?? "refuse",
    options.expectRootId,
    options.trustRootAncestors === true,
  );
  const base = {
    operationId,
    atomicity: "batch_preflight_per_file_commit" as const,
    elevated: shell.elevated ?? false,
  };
  const fail = (errors: Failures, warnings: Warning[] = []): CommitReport => ({
    ok: false,
    ...base,
    files: [],
    warnings: [...plan.warnings, ...warnings],
    errors,
  });
  if (plan.files.length === 0) return { ok: true, ...base, files: [], warnings: [...plan.warnings] };
  if (options.signal?.aborted) {
    return fail([failure("cancelled", "the commit was cancelled before it started; nothing was changed", { operationId })]);
  }

  let result: ExecResult;
  const stdin = transactionInput(plan, layout, "SAP-COMMIT-2", true, randomBytes(16).toString("hex"));
  const tooLarge = (): CommitReport => fail([replyTooLarge("commit", MAX_REPLY_BYTES, { ticket: reconcileTicket(plan, operationId) })]);
  // Whether the go-ahead went out: until it does, the host cannot have
  // renamed anything, whatever happens to the link.
  let goSent = false;
  const gate = gated
    ? {
      prompt: "GATE",
      reply: (): Uint8Array | null => {
        if (options.signal?.aborted) return null;
        goSent = true;
        return GO;
      },
    }
    : undefined;
  try {
    result = await execProgram(shell, command, {
      stdin,
      signal: options.signal,
      timeoutMs: options.timeoutMs ?? writeTimeoutMs(stdin.length, lockWaitMs) + (gated ? clientGoneMs : 0),
      onStdinProgress: options.onProgress ? reportedProgress(plan, layout, options.onProgress) : undefined,
      maxStdoutBytes: MAX_REPLY_BYTES,
      maxStderrBytes: MAX_STDERR_BYTES,
      ...(gate !== undefined ? { stdinGate: gate } : {}),
    }, options.compress);
  } catch (error) {
    if (!(error instanceof RemoteShellError)) throw error;
    if (stdoutOverflow(error)) return tooLarge();
    // Nothing ran (the adapter says so, or the code cannot happen after a
    // start): that failure is the answer, and retrying is safe.
    if (!programMayHaveRun(error)) return fail([{ ...error.failure, operationId }]);
    // Stopped before the go-ahead: nothing can have been renamed, but the
    // program may not have been seen to end (a stalled link).
    if (gated && !goSent) return fail([stoppedBeforeGo(error.failure.code === "timeout" ? "timeout" : error.failure.code === "cancelled" ? "cancelled" : "transport", operationId, plan, quotedFailure(error.failure), false, clientGoneMs)]);
    return fail([outcomeUnknown(reconcileTicket(plan, operationId), `the transport failed (${quotedFailure(error.failure)})`)]);
  }
  // An adapter that does not honour maxStdoutBytes: the same bound, checked here.
  if (result.stdout.length > MAX_REPLY_BYTES) return tooLarge();
  const out = parseProgramOutput(result.stdout, layout.paths.length, plan.files.length);
  const stderr = new TextDecoder().decode(result.stderr.subarray(0, MAX_STDERR_BYTES));
  const ctx: Context = { plan, layout, out, operationId, root, host: shell.label ?? "the host", stderr, lockWaitMs };
  const warnings = collectWarnings(ctx);
  // A cancel or timeout that stopped the program before the go-ahead:
  // nothing was renamed, and the program says whether it cleaned up.
  const stop = result.stopped ?? (options.signal?.aborted ? "cancelled" : undefined);
  if (gated && !goSent && stop !== undefined && !out.steps.has(5)) {
    const clean = out.end !== null && !warnings.all.some((w) => w.code === "cleanup_incomplete");
    return fail([stoppedBeforeGo(stop, operationId, plan, null, clean, clientGoneMs)], warnings.all);
  }
  if (goSent && options.signal?.aborted) {
    warnings.general.push(cancelTooLate(operationId));
    warnings.all.push(cancelTooLate(operationId));
  }

  if (out.end === null) return fail([unfinished(ctx, result)], warnings.all);
  switch (out.end) {
    case "ok":
      return {
        ok: true,
        ...base,
        files: fileReports(ctx, warnings.byPath),
        warnings: [...plan.warnings, ...warnings.general],
        durable: out.durable === true,
      };
    case "refused":
      return fail(refusals(ctx), warnings.all);
    case "unsafe":
      return fail(unsafeFailures(ctx), warnings.all);
    case "locked": {
      const k = out.locked?.k;
      if (out.locked === null || k === undefined) return fail([locked(plan.files[0]!.path, 0, lockWaitMs, operationId)], warnings.all);
      const path = k === "op" ? undefined : layout.paths[k]!;
      return fail([lockedFailure(lockHolder(out.locked, path ?? "", operationId), path, lockWaitMs, operationId, "commit")], warnings.all);
    }
    case "rolled_back":
      return fail([rolledBack(ctx)], warnings.all);
    case "partial":
      return fail([partialApply(reconcileTicket(plan, operationId), outcomes(ctx), finalizeCause(ctx).cause)], warnings.all);
    case "unsupported":
      return fail([unsupported(out.unsupported ?? "a required tool", ctx.host)], warnings.all);
    case "root":
      return fail([{ ...rootFailure(out.root ?? "missing", root, ctx.host), operationId }], warnings.all);
    case "failed":
      return fail(asFailures(programFailures(ctx)), warnings.all);
    case "cancelled":
      // the host stopped by itself before the go-ahead came (no cancel of ours)
      return fail([clientGone(out.cancelled, operationId, clientGoneMs, stderr)], warnings.all);
    case "interrupted":
      return fail([remoteError(`the commit program was interrupted (${out.interrupted ?? "signal"}) before it changed any file; nothing was changed: retry`, stderr, operationId)], warnings.all);
    default:
      return fail([remoteError(`the commit program stopped (${out.end}${out.badInput ? `: ${out.badInput}` : ""}) before changing any file; nothing was changed`, stderr, operationId)], warnings.all);
  }
}

const GO = new TextEncoder().encode("GO\n");

/**
 * A commit stopped before its go-ahead (by a cancel, the call's timeout, or
 * a transport failure while it waited): nothing was renamed. `clean`: the
 * program reported its end, its temporaries removed.
 */
function stoppedBeforeGo(
  why: "cancelled" | "timeout" | "transport",
  operationId: string,
  plan: Plan,
  transport: string | null,
  clean: boolean,
  clientGoneMs: number,
): PatchFailure {
  const settle = reconcileHint(operationId);
  const what = why === "cancelled"
    ? "the commit was cancelled before it changed any file"
    : why === "timeout"
    ? "the commit did not finish in time and was stopped before it changed any file"
    : `the connection failed (${transport}) before the commit was told to go ahead`;
  const left = clean
    ? "its temporary files and locks were removed"
    : `the host program removes its temporary files and locks itself once it sees the client gone (within ${Math.ceil(clientGoneMs / 1000)} s); ${settle.says} to check`;
  const message = `${what}: nothing was applied and ${left} (operation ${operationId})`;
  const code = why === "cancelled" ? "cancelled" : why === "timeout" ? "timeout" : "remote_error";
  // nothing was applied: safe to send again, unless the caller asked to stop
  const base = failure(code, message, { operationId, retryable: code !== "cancelled" });
  return clean ? base : { ...base, reconcile: reconcileTicket(plan, operationId), hints: [settle] };
}

/** The host stopped before its first rename because the client did not answer (it never asked us to cancel). */
function clientGone(why: string | null, operationId: string, clientGoneMs: number, stderr: string): PatchFailure {
  const s = Math.ceil(clientGoneMs / 1000);
  const what = why === "stalled"
    ? `the upload made no progress for ${s} s`
    : why === "timeout"
    ? `the client's go-ahead did not arrive within ${s} s`
    : "the client's input ended before its go-ahead";
  return remoteError(`the host stopped the commit before changing any file (${what}); nothing was changed and its temporary files were removed: retry (a slow link: raise clientGoneMs)`, stderr, operationId);
}

function cancelTooLate(operationId: string): Warning {
  return {
    code: "cancel_too_late",
    message: `the cancel arrived after operation ${operationId} had been told to go ahead (every file staged, locked and checked); it was let finish so that no file is left half-written: this report says what it did`,
  };
}

interface Context {
  plan: Plan;
  layout: TransactionLayout;
  out: ProgramOutput;
  operationId: string;
  root: string;
  host: string;
  stderr: string;
  lockWaitMs: number;
}

/** No `SAP-END`: decide between "certainly nothing changed" and "unknown". */
function unfinished(ctx: Context, result: ExecResult): PatchFailure {
  const { out, operationId, plan, stderr } = ctx;
  const channelDied = result.exitCode === null && result.signal === null;
  const how = result.signal ? `was killed (${result.signal})` : `exited with status ${result.exitCode}`;
  if (channelDied) {
    return outcomeUnknown(reconcileTicket(plan, operationId), "the connection closed before the commit reported its result");
  }
  if (out.malformed === null && !out.steps.has(5)) {
    // Output is printed unbuffered, one write per line: a program that died
    // before announcing step 5 had not touched any file.
    if (!out.begun) return remoteError(`the commit program could not start (it ${how}); nothing was changed`, stderr, operationId);
    const settle = reconcileHint(operationId);
    return {
      ...remoteError(
        `the commit program ${how} before changing any file; nothing was changed. Temporary files may remain: ${settle.says} to remove them, then retry`,
        stderr,
        operationId,
      ),
      reconcile: reconcileTicket(plan, operationId),
      hints: [settle],
    };
  }
  return outcomeUnknown(
    reconcileTicket(plan, operationId),
    out.malformed !== null ? "the commit program's report was unreadable" : `the commit program ${how}`,
  );
}

function refusals(ctx: Context): Failures {
  const { out, layout, plan, operationId, root } = ctx;
  const errors: PatchFailure[] = [];
  for (const c of out.conflicts) {
    const path = layout.paths[c.k]!;
    errors.push(conflict(path, expectedOf(plan, layout, c.k), c.kind, c.sha, operationId));
  }
  for (const r of out.rejects) {
    errors.push({ ...pathRefusal(r.code, layout.paths[r.k]!, r.depth, root), operationId });
  }
  appendAll(errors, programFailures(ctx, false));
  return hasFailures(errors) ? errors : [remoteError("the commit was refused without a reason; nothing was changed", ctx.stderr, operationId)];
}

function unsafeFailures(ctx: Context): Failures {
  const { out, layout, operationId, root } = ctx;
  // one failure per directory, naming the first path through it
  const seen = new Set<string>();
  const errors = out.unsafe.filter((u) => !seen.has(u.dir.path) && seen.add(u.dir.path))
    .map((u) => ({ ...unsafeDirectory(layout.paths[u.k], u.dir, u.ownerName, u.groupName, root), operationId }));
  return hasFailures(errors) ? errors : [remoteError("the commit refused a directory without saying which; nothing was changed", ctx.stderr, operationId)];
}

function programFailures(ctx: Context, fallback = true): PatchFailure[] {
  const { out, layout, operationId, stderr } = ctx;
  const errors = out.fails.map((f) => {
    const path = f.k === null ? undefined : layout.paths[f.k];
    const where = path ? ` for ${path}` : "";
    if (f.code === "unsafe_directory" && path && f.detail === "acl") {
      const u = out.unsafe.find((x) => x.k === f.k);
      if (u) return { ...defaultAcl(path, u.dir, u.ownerName, u.groupName), operationId };
    }
    if (f.code === "unsafe_directory" && path) return { ...unpinnable(path), operationId };
    if (f.detail === "private") {
      return remoteError(
        `a private directory this commit had just made${path ? ` next to ${path}` : ""} was renamed or replaced by someone else before it was used (another user can write that directory); nothing was changed: retry, and find out who else writes there`,
        stderr,
        operationId,
      );
    }
    if (isWriteRefusal(f.code)) {
      return writeRefused(f.code, { ...refusalContext(ctx, f.detail), ...(path !== undefined ? { path } : {}) });
    }
    if (f.detail === "delta" && path) {
      return remoteError(
        `the new content of ${path}, rebuilt on the host from the current file and the uploaded changes, did not have the planned SHA-256, although the file has its expected content again: it changed while it was being read; nothing was changed: retry (commit with delta: false if it keeps happening)`,
        stderr,
        operationId,
      );
    }
    const what = f.detail === "truncated"
      ? "the new contents arrived incomplete"
      : f.detail === "stage_sha"
      ? `the uploaded content${where} did not match its SHA-256`
      : `the commit failed${where} (${f.detail})`;
    return remoteError(`${what}; nothing was changed: retry`, stderr, operationId);
  });
  if (errors.length === 0 && fallback) {
    errors.push(remoteError("the commit failed before changing any file; nothing was changed: retry", stderr, operationId));
  }
  return errors;
}

const WHY_WORDS: Record<string, string> = {
  no_space: "no space left on the file system",
  read_only_filesystem: "a read-only file system",
  permission_denied: "permission denied",
};

/** What went wrong in step 5, in a few words ("writing b.txt failed (rename)"). */
function finalizeCause(ctx: Context): { cause: string; target: string | null; exists: boolean } {
  const { out, plan } = ctx;
  if (out.failed) {
    const file = plan.files[out.failed.i]!;
    const target = file.moveTo ?? file.path;
    const detail = out.failed.detail;
    const cause = detail === "changed"
      ? `${file.path} was replaced by another file after it was checked, just before it was to be written (someone else writes that directory)`
      : detail === "replaced"
      ? `${target} was replaced or moved by someone else right after this commit wrote it`
      : detail === "private"
      ? `a private directory of this commit next to ${target} was renamed or replaced by someone else`
      : out.why !== null && out.why.i === out.failed.i
      ? `writing ${target} failed (${detail}: ${WHY_WORDS[out.why.code] ?? out.why.code})`
      : `writing ${target} failed (${detail})`;
    return { cause, target, exists: detail === "exists" };
  }
  return { cause: `the commit was interrupted (${out.interrupted ?? "signal"}) while writing`, target: null, exists: false };
}

/** What a write refusal of this commit is about (sizes from the plan, free space from the host). */
function refusalContext(ctx: Context, what: string): Omit<WriteRefusalContext, "path"> {
  const { plan, layout, out, operationId, root } = ctx;
  let uploaded = 0;
  for (let i = 0; i < plan.files.length; i++) uploaded += uploadedBytes(plan, layout, i) ?? 0;
  return {
    root,
    what,
    // the contents are written once as received, then once more per file
    bytesNeeded: uploaded + writtenBytes(plan),
    bytesFree: out.space?.free ?? null,
    operationId,
  };
}

/** The failure behind a clean rollback: nothing was changed. */
function rolledBack(ctx: Context): PatchFailure {
  const { operationId, stderr } = ctx;
  const { cause, target, exists } = finalizeCause(ctx);
  const failed = ctx.out.failed;
  const why = ctx.out.why;
  if (failed && why && why.i === failed.i && isWriteRefusal(why.code)) {
    const file = ctx.plan.files[failed.i]!;
    const where = failed.detail === "rename" ? file.path : file.moveTo ?? file.path;
    return writeRefused(why.code, {
      ...refusalContext(ctx, failed.detail),
      path: where,
      sticky: why.note === "sticky",
      undone: "every file already changed was restored, so nothing was changed",
    });
  }
  if (failed?.detail === "changed") {
    const file = ctx.plan.files[failed.i]!;
    return {
      ...conflict(file.path, file.expected, "file", null, operationId),
      message: `conflict: ${cause}; every file already changed was restored, so nothing was changed. Read it again and rebuild the patch against its current content.`,
    };
  }
  if (exists && target !== null) {
    return {
      ...conflict(target, { state: "missing" }, "file", null, operationId),
      message: `${target} was created by someone else just before this commit wrote it; every file already changed was restored, so nothing was changed. Read it and rebuild the patch.`,
    };
  }
  return remoteError(`${cause}; every file already changed was restored, so nothing was changed: retry`, stderr, operationId);
}

function outcomes(ctx: Context): PathOutcome[] {
  const { out, layout, plan } = ctx;
  return layout.paths.map((path, k) => {
    const state = out.states.get(k);
    if (!state) return { path, state: "unknown", sha256: null };
    if (state.kind === "missing") return { path, state: "missing", sha256: null };
    if (state.kind !== "file" || state.sha === null) return { path, state: "unknown", sha256: null };
    const { oldSha, newSha } = shasOf(plan, layout, k);
    const s = state.sha === newSha ? "new" : state.sha === oldSha ? "old" : "unknown";
    return { path, state: s, sha256: state.sha };
  });
}

function expectedOf(plan: Plan, layout: TransactionLayout, k: number): Plan["files"][number]["expected"] {
  const { oldSha } = shasOf(plan, layout, k);
  return oldSha === null ? { state: "missing" } : { state: "sha256", sha256: oldSha };
}

/**
 * Upload progress in the bytes the report counts (the sum of the files'
 * `bytesUploaded`: contents, and for a delta its piece lines), not in
 * stdin bytes, which include the manifest: the last call's total is what
 * the report then says was uploaded. The manifest (where a delta's piece
 * lines are) goes first, so its bytes count as those lines pro rata.
 */
function reportedProgress(plan: Plan, layout: TransactionLayout, onProgress: (sent: number, total: number) => void): (sent: number, total: number) => void {
  const total = plan.files.reduce((sum, _, i) => sum + uploadedBytes(plan, layout, i), 0);
  const lines = total - layout.contentBytes;
  return (sent, stdinTotal) => {
    const head = stdinTotal - layout.contentBytes;
    const done = sent <= head ? (head > 0 ? Math.floor((lines * sent) / head) : 0) : lines + (sent - head);
    onProgress(Math.min(total, Math.max(0, done)), total);
  };
}

function collectWarnings(ctx: Context): { byPath: Map<number, Warning[]>; general: Warning[]; all: Warning[] } {
  const byPath = new Map<number, Warning[]>();
  const general: Warning[] = [];
  const all: Warning[] = [];
  for (const w of ctx.out.warns) {
    const path = w.k === null ? null : ctx.layout.paths[w.k]!;
    const value = remoteWarning(w.code, path, w.detail, ctx.operationId);
    if (!value) continue;
    all.push(value);
    if (w.k === null || value.code === "stale_lock_broken") general.push(value);
    else byPath.set(w.k, [...(byPath.get(w.k) ?? []), value]);
  }
  return { byPath, general, all };
}

function fileReports(ctx: Context, byPath: Map<number, Warning[]>): FileReport[] {
  const { plan, layout, out } = ctx;
  return plan.files.map((file, i): FileReport => {
    const { src, dst } = layout.files[i]!;
    const meta = out.meta.get(i);
    return {
      op: file.op,
      path: file.path,
      ...(file.moveTo !== undefined ? { moveTo: file.moveTo } : {}),
      previousSha256: file.expected.state === "sha256" ? file.expected.sha256 : null,
      newSha256: file.op === "delete" ? null : file.newSha256 ?? null,
      bytesWritten: newContentLength(file) ?? 0,
      bytesUploaded: uploadedBytes(plan, layout, i),
      metadataPreserved: (file.op === "update" || file.op === "move" || file.op === "replace") && meta ? { mode: meta.mode, owner: meta.owner } : null,
      diff: file.diff,
      warnings: [...afterCommit(file.warnings, "committed"), ...(byPath.get(src) ?? []), ...(dst === null ? [] : byPath.get(dst) ?? [])],
      directoryTrust: out.shared.has(src) || (dst !== null && out.shared.has(dst)) ? "shared" : "trusted",
    };
  });
}
