/**
 * The bounds of every engine exec (SPEC §7 round 2): how long a program may
 * run when the caller gives no timeout, how much stdout its protocol allows,
 * how much stderr is kept — and the failure a reply past its bound becomes.
 *
 * Time. Every exec has a timeout; a timed-out program is killed on the host
 * (LocalShell and SshShell kill its process group). Defaults, when the
 * caller passes no `timeoutMs`:
 * - reading snapshots: {@linkcode DEFAULT_READ_TIMEOUT_MS} (5 min);
 * - commit and reconcile: {@linkcode writeTimeoutMs} — 5 min, plus the lock
 *   wait (the program itself waits for locks), plus 1 s per MiB sent (a
 *   1 MiB/s floor for the upload);
 * - listFiles / searchFiles: 60 s (lib/remote/discovery.ts).
 * The programs never wait on anything another user controls except through
 * these bounds (see lib/remote/programs/: no FIFO is ever opened); a file
 * system that hangs in the kernel (a stuck NFS mount) can block a program
 * in an uninterruptible read that even SIGKILL only ends when the mount
 * answers: the client's timeout still fires and reports, the process stays
 * until then.
 *
 * Size. What the protocol allows, and so what the client buffers at most:
 * - a commit or reconcile reply: {@linkcode MAX_REPLY_BYTES} (1 MiB; a
 *   100-file commit prints a few KiB);
 * - a snapshot: the requested paths' bytes (each at most `maxFileBytes`)
 *   plus {@linkcode SNAPSHOT_PER_PATH_BYTES} per path and a small constant
 *   ({@linkcode snapshotReplyBytes});
 * - stderr: the first {@linkcode MAX_STDERR_BYTES} (64 KiB) are kept, the
 *   rest dropped, for every program.
 * The adapter enforces them (`ExecOptions.maxStdoutBytes`: the program is
 * killed past it) and the engine checks again (an adapter may ignore the
 * option); output is then parsed one line at a time, never split into an
 * array of lines, and the first line that breaks the protocol ends the
 * parse. So a hostile host makes the client hold at most about twice what
 * was asked for (the adapter's chunks while they are joined).
 *
 * @module
 */
import { failure, reconcileHint } from "../failure.ts";
import type { PatchFailure, ReconcileTicket } from "../types.ts";
import { RemoteShellError } from "./shell.ts";

/** Most stdout a commit or reconcile program may write (SPEC §7 round 2). */
export const MAX_REPLY_BYTES: number = 1024 * 1024;

/** Most stderr kept from one engine program (its excerpt goes into messages). */
export const MAX_STDERR_BYTES: number = 64 * 1024;

/**
 * Per-path allowance of a snapshot reply beyond the file's bytes: its
 * header line, a trust or refusal line naming a directory (up to 4096 bytes
 * of path, hex-encoded, and three names), the end marker of its bytes.
 */
export const SNAPSHOT_PER_PATH_BYTES: number = 16 * 1024;

/** The snapshot reply's allowance for its begin, root and end lines. */
const SNAPSHOT_BASE_BYTES = 4096;

/** Default timeout of the snapshot program. */
export const DEFAULT_READ_TIMEOUT_MS: number = 300_000;

/** Base of the default timeout of commit and reconcile programs. */
export const DEFAULT_WRITE_TIMEOUT_MS: number = 300_000;

/** Upload rate the default write timeout allows for (bytes per second). */
const FLOOR_BYTES_PER_SECOND = 1024 * 1024;

/**
 * The most stdout a snapshot of `paths` paths may have.
 *
 * @example
 * ```ts
 * snapshotReplyBytes(2, 1024); // 2 * (1024 + 16384) + 4096
 * ```
 */
export function snapshotReplyBytes(paths: number, maxFileBytes: number): number {
  return paths * (maxFileBytes + SNAPSHOT_PER_PATH_BYTES) + SNAPSHOT_BASE_BYTES;
}

/**
 * The most stdout the snapshot's walk for names near missing paths adds
 * (programs/sh_near.ts): one record per entry looked at, each a path of
 * at most 4096 bytes with its `NF ` and NUL newline, and the `NEAR` line.
 *
 * @example
 * ```ts
 * nearReplyBytes(4000); // 4000 * 4101 + 64
 * ```
 */
export function nearReplyBytes(entries: number): number {
  return entries * (NEAR_RECORD_MAX_BYTES + 5) + 64;
}

/** Longest path a walk record carries (the path rules' limit). */
export const NEAR_RECORD_MAX_BYTES = 4096;

/**
 * The default timeout of a commit or reconcile that sends `stdinBytes` and
 * may wait `lockWaitMs` for locks.
 *
 * @example
 * ```ts
 * writeTimeoutMs(0, 10_000); // 310000
 * ```
 */
export function writeTimeoutMs(stdinBytes: number, lockWaitMs: number): number {
  return DEFAULT_WRITE_TIMEOUT_MS + Math.max(0, lockWaitMs) + Math.ceil(stdinBytes / FLOOR_BYTES_PER_SECOND) * 1000;
}

/**
 * Whether a rejected exec is the adapter stopping a program at
 * `maxStdoutBytes` (not its own overall output cap, nor anything else).
 *
 * @example
 * ```ts
 * if (stdoutOverflow(error)) return violation;
 * ```
 */
export function stdoutOverflow(error: unknown): boolean {
  return error instanceof RemoteShellError && error.failure.code === "limit_exceeded" && error.overflow === "stdout";
}

/**
 * The failure of a reply larger than its protocol allows: a program that is
 * not this library's answered, or a broken host. For the snapshot nothing
 * changed. A commit may have changed files before it went wrong: give its
 * reconcile `ticket` and the failure carries it and says to reconcile. A
 * reconcile (give its operation id as `again`) may have finished or undone
 * part of the operation: it says to reconcile again.
 *
 * @example
 * ```ts
 * replyTooLarge("commit", MAX_REPLY_BYTES, { ticket }).code; // "remote_error"
 * ```
 */
export function replyTooLarge(
  program: "snapshot" | "commit" | "reconcile",
  limit: number,
  after: { ticket?: ReconcileTicket; again?: string } = {},
): PatchFailure {
  const what =
    `protocol violation: the ${program} program's reply went past ${limit} bytes, more than the protocol ever needs` +
    (program === "snapshot" ? " (the requested files at their size limit, plus a little per file)" : "") +
    `; the client stopped reading and the program was killed. What answered is not this library's program as sent (a compromised or broken host, or something on it printing to stdout)`;
  const operationId = after.ticket?.operationId ?? after.again;
  if (operationId === undefined) {
    return failure("remote_error", `${what}. Nothing was changed; check the host before retrying.`, { retryable: false });
  }
  const settle = reconcileHint(operationId);
  const next = after.ticket !== undefined
    ? `It may have changed files before that: check the host, then ${settle.says} to learn what was applied.`
    : `It may have finished or undone part of the operation: check the host, then ${settle.says} again.`;
  return failure("remote_error", `${what}. ${next}`, {
    operationId,
    ...(after.ticket !== undefined ? { reconcile: after.ticket } : {}),
    retryable: false,
    hints: [settle],
  });
}
