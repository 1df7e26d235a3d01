/**
 * Layer `lib/remote/` (above the pure layers): the remote transaction —
 * `RemoteShell` (this file), `LocalShell`, `readSnapshots`, `commitRemote`,
 * `reconcile`, the manifest and the output protocol, with the POSIX `sh`
 * programs they send in `programs/`. It may import the pure layers,
 * `lib/types.ts`, `lib/failure.ts` and `node:` modules; never `lib/ssh/`
 * or `ssh2`: an adapter is whatever implements `RemoteShell`.
 *
 * This file: the `RemoteShell` adapter: everything remote goes through one `exec`.
 *
 * An adapter runs a POSIX `sh` program (the `command` string) on the target
 * host with the given bytes on stdin and returns the raw stdout/stderr bytes,
 * the exit code and the signal. It knows nothing about patches.
 *
 * @module
 */
import { failure } from "../failure.ts";
import type { FailureCode, PatchFailure } from "../types.ts";

/**
 * Options of one {@linkcode RemoteShell.exec} call.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * const options: ExecOptions = { stdin: new TextEncoder().encode("data"), timeoutMs: 30_000, signal: controller.signal, maxStdoutBytes: 1 << 20 };
 * await new LocalShell().exec("cat", options);
 * ```
 */
export interface ExecOptions {
  /** Bytes written to the program's stdin, then stdin is closed. */
  stdin?: Uint8Array;
  /** Abort the call: the adapter kills the remote program (best effort) and rejects. */
  signal?: AbortSignal;
  /** Kill the program after this many milliseconds and reject with `timeout`. */
  timeoutMs?: number;
  /** Called as stdin bytes are handed to the transport (for progress reports). */
  onStdinProgress?: (sent: number, total: number) => void;
  /**
   * Most stdout bytes this one program may write. Past it the adapter kills
   * the program (its process group) and rejects `limit_exceeded` with
   * `started: true`, having kept no more than this many bytes. The engine
   * sets it from what its protocol allows (SPEC §7: a commit's reply is at
   * most 1 MiB), so a hostile host cannot make the client buffer more.
   * Default: the adapter's own output cap.
   */
  maxStdoutBytes?: number;
  /**
   * Most stderr bytes kept: the first this many are returned, the rest is
   * read and dropped (the program is not stopped for it). Default: the
   * adapter's own output cap.
   */
  maxStderrBytes?: number;
  /**
   * A go-ahead handshake (needs {@linkcode RemoteShell.stdinGate}): stdin is
   * NOT closed after `stdin`; once the program writes the line `prompt` on
   * stdout, the adapter calls `reply()` and writes what it returns, then
   * closes stdin (`null`: closes it without writing). Stopping the call
   * (`signal`, `timeoutMs`) while the prompt is unanswered — or on a timeout
   * even after — closes stdin and sends the program SIGTERM instead of
   * SIGKILL, so that it can clean up (or roll back); the call then resolves
   * with what the program reported and {@linkcode ExecResult.stopped} set,
   * and falls back to SIGKILL (rejecting as usual) only when the program
   * has not ended within a few seconds. An abort after `reply()` gave bytes
   * does not stop the program: it runs to its end and the call resolves.
   */
  stdinGate?: StdinGate;
}

/**
 * See {@linkcode ExecOptions.stdinGate}.
 *
 * @example
 * ```ts
 * const gate: StdinGate = { prompt: "GATE", reply: () => new TextEncoder().encode("GO\n") };
 * await shell.exec(program, { stdin, stdinGate: gate });
 * ```
 */
export interface StdinGate {
  /** The stdout line (without its newline) that asks for the reply. */
  prompt: string;
  /** The bytes that end stdin, or null to end it without any. Called at most once. */
  reply: () => Uint8Array | null;
}

/**
 * How long an adapter waits for a program it sent SIGTERM (a gated stop) before it kills it.
 *
 * @example
 * ```ts
 * setTimeout(() => process.kill(-pid, "SIGKILL"), GATE_STOP_GRACE_MS);
 * ```
 */
export const GATE_STOP_GRACE_MS = 5000;

/**
 * What one program run produced.
 *
 * @example
 * ```ts
 * const r: ExecResult = await new LocalShell().exec("echo hi; exit 3");
 * r.exitCode; // 3
 * new TextDecoder().decode(r.stdout); // "hi\n"
 * ```
 */
export interface ExecResult {
  /** Everything the program wrote to stdout (up to {@linkcode ExecOptions.maxStdoutBytes}). */
  stdout: Uint8Array;
  /** The first {@linkcode ExecOptions.maxStderrBytes} bytes the program wrote to stderr. */
  stderr: Uint8Array;
  /**
   * The exit code; `null` when the program was killed by a signal or, for a
   * network transport, when the channel closed without an exit status (the
   * program may or may not have finished: callers treat it as outcome unknown).
   */
  exitCode: number | null;
  /** The signal that ended the program (`"SIGKILL"`), or `null`. */
  signal: string | null;
  /** Bytes of stderr dropped beyond {@linkcode ExecOptions.maxStderrBytes} (absent or 0: none). */
  stderrDropped?: number;
  /** Set when the adapter stopped the program with SIGTERM (a gated stop, see {@linkcode ExecOptions.stdinGate}) and it then ended by itself. */
  stopped?: "cancelled" | "timeout";
}

/**
 * The small adapter every remote operation goes through (SPEC §2).
 *
 * Contract: `exec` runs `command` with a POSIX `sh` (never the login shell's
 * own syntax) and resolves with its result. It rejects only with a
 * {@linkcode RemoteShellError} whose `failure` says what went wrong before or
 * around the program (`connect_failed`, `auth_failed`, `host_key_*`,
 * `timeout`, `cancelled`, `outcome_unknown`, `limit_exceeded` for an output
 * cap).
 *
 * Bounds an adapter must honour (SPEC §7 round 2): `timeoutMs` and `signal`
 * kill the program on the host, not only the client's wait; past
 * `maxStdoutBytes` the program is killed and no more stdout is kept; stderr
 * beyond `maxStderrBytes` is dropped. The engine passes all three on every
 * exec (lib/remote/exec_bounds.ts), and checks sizes again itself, so an
 * adapter that ignores them costs memory, never a wrong report.
 *
 * Outcome unknown comes in two shapes, and callers handle both alike:
 * - the transport died while the program may have been running (a dropped
 *   SSH connection) → the call REJECTS with `outcome_unknown`;
 * - the transport stayed up but the program's channel ended without an exit
 *   status → the call RESOLVES with `exitCode: null, signal: null`.
 * A rejection tells whether the program may have run through
 * {@linkcode RemoteShellError.started} (`false`: nothing ran; `true`: it may
 * have run, e.g. `timeout` / `cancelled` after it started — killed part-way;
 * unset: unknown). Adapters set it wherever they know; callers decide with
 * {@linkcode programMayHaveRun}.
 *
 * @example
 * ```ts
 * const shell: RemoteShell = new LocalShell();
 * const { stdout } = await shell.exec("printf '%s' \"$HOME\"");
 * ```
 */
export interface RemoteShell {
  /** Run the POSIX `sh` program `command` on the host; see the contract above. */
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  /** Release the transport (an SSH connection); later calls fail `connect_failed`. */
  close?(): Promise<void>;
  /** True when every program runs elevated (sudo); reports carry it. */
  readonly elevated?: boolean;
  /** A short label for messages, e.g. `local` or `deploy@web1:22`. */
  readonly label?: string;
  /**
   * What the programs cross: `"network"` (SshShell) or `"local"` (LocalShell).
   * With the default `compress: "auto"`, only a `"network"` shell gets
   * compressed snapshots and packed programs; an adapter that does not say
   * is treated as local. A wrapper around another shell should forward it.
   */
  readonly link?: "local" | "network";
  /**
   * True when `exec` honours {@linkcode ExecOptions.stdinGate} (LocalShell,
   * SshShell). A commit through an adapter without it cannot be stopped
   * cleanly by a cancel once its program started. A wrapper should forward
   * it only if it forwards the option.
   */
  readonly stdinGate?: boolean;
  /**
   * Only for an adapter whose programs run on this machine, under this
   * process's view of the file system (LocalShell): lets the snapshot read
   * a large file's bytes itself instead of receiving them through the
   * program's stdout (SPEC §11.1). The program still resolves the path,
   * checks every directory and measures the file; it hands over only a
   * file read by name in a trusted directory, and only when its effective
   * uid is `euid`. A wrapper around another shell must not forward it
   * unless its programs see the same files as this process.
   */
  readonly localFiles?: LocalFileAccess;
}

/**
 * The identity of a regular file as the snapshot program measured it (`stat`).
 *
 * @example
 * ```ts
 * const id: LocalFileIdentity = { size: 9, inode: 12, mtime: 1700000000, mode: 0o644, uid: 0, gid: 0, nlink: 1 };
 * ```
 */
export interface LocalFileIdentity {
  /** Size in bytes. */
  size: number;
  /** Inode number. */
  inode: number;
  /** Whole seconds. */
  mtime: number;
  /** Permission bits (`& 0o7777`). */
  mode: number;
  /** Owner's uid. */
  uid: number;
  /** Owner's gid. */
  gid: number;
  /** Hard-link count. */
  nlink: number;
}

/**
 * Reading files of this machine directly (see {@linkcode RemoteShell.localFiles}).
 *
 * @example
 * ```ts
 * const access = new LocalShell().localFiles;
 * access?.read("/srv/app/big.json", { size: 9, inode: 12, mtime: 1700000000, mode: 0o644, uid: 0, gid: 0, nlink: 1 });
 * ```
 */
export interface LocalFileAccess {
  /** The effective uid this process reads files as. */
  readonly euid: number;
  /**
   * The bytes of the regular file at the absolute `path` — opened without
   * following a final symlink, never blocking on a FIFO — if it is exactly
   * the file `expect` describes and stays unchanged while it is read;
   * `null` otherwise (the caller then reads it through the program).
   */
  read(path: string, expect: LocalFileIdentity): Uint8Array | null;
}

/**
 * Options of {@linkcode RemoteShellError}.
 *
 * @example
 * ```ts
 * new RemoteShellError(failure("limit_exceeded", "the program wrote more than 1 MiB"), { started: true, overflow: "stdout" });
 * ```
 */
export interface RemoteShellErrorOptions {
  /** Whether the program may have started; see {@linkcode RemoteShellError.started}. */
  started?: boolean;
  /** With `limit_exceeded`: which limit stopped the program; see {@linkcode RemoteShellError.overflow}. */
  overflow?: "stdout" | "output";
}

/**
 * Failure codes that by their nature are decided before any program can
 * start (no connection, no login): an error with one of them and no
 * `started` flag is treated as "nothing ran".
  *
  * @example
  * ```ts
  * NEVER_STARTED_CODES.has("auth_failed"); // true: no program can run before login
  * NEVER_STARTED_CODES.has("timeout"); // false
  * ```
 */
export const NEVER_STARTED_CODES: ReadonlySet<string> = new Set([
  "connect_failed",
  "auth_failed",
  "host_key_unknown",
  "host_key_mismatch",
]);

/**
 * The one error class of this library (its error model, README
 * "Failures"): what `connectSsh`, `readSnapshots` and every
 * {@linkcode RemoteShell.exec} reject with when something went wrong
 * around the program — the connection, authentication, host keys, sudo,
 * a timeout or cancel, an output cap, the host's tools or its output. It
 * carries the same typed failure a report would (`failure`, and its `code`
 * and `retryable` for a quick switch); `message` is the failure's message.
 * The functions that change or search files (`applyPatch`,
 * `commitRemote`, `reconcile`, `listFiles`, `searchFiles`) never reject
 * with it: they turn it into a report. Anything else thrown is a
 * programmer error (a TypeError or RangeError for a wrong argument).
 *
 * @example
 * ```ts
 * try {
 *   await connectSsh({ host: "web1" });
 * } catch (error) {
 *   if (!(error instanceof RemoteShellError)) throw error;
 *   if (error.code === "host_key_unknown") console.error(error.message); // says how to confirm and trust the key
 * }
 * throw new RemoteShellError(failure("timeout", "the remote program did not finish within 30 s; retry"), { started: true });
 * ```
 */
export class RemoteShellError extends Error {
  /** The typed failure. */
  readonly failure: PatchFailure;
  /** `failure.code`. */
  readonly code: FailureCode;
  /** `failure.retryable`: the same call, made again unchanged, may succeed. */
  readonly retryable: boolean;
  /**
   * Whether the program may have run — what a caller needs to decide between
   * "report this failure, nothing changed" and "outcome unknown":
   * - `false`: guaranteed nothing ran (refused before the program was sent
   *   or before it could start: not connected, not authenticated, sudo
   *   refused, channel refused, command too long, timed out or cancelled
   *   while waiting). Retrying is safe.
   * - `true`: the program may have run, wholly or in part (killed on
   *   timeout, cancel or output cap; the connection dropped while it ran).
   * - `undefined`: the adapter does not know. Treat it as "may have run"
   *   unless the code is one of {@linkcode NEVER_STARTED_CODES} — use
   *   {@linkcode programMayHaveRun} rather than reading this field alone.
   */
  readonly started?: boolean;
  /**
   * With `limit_exceeded`: `"stdout"` when the program was stopped at the
   * caller's {@linkcode ExecOptions.maxStdoutBytes} (its protocol was
   * broken), `"output"` at the adapter's own output cap (a configuration
   * too small for a legitimate reply). Unset: not said.
   */
  readonly overflow?: "stdout" | "output";
  /** Wrap `failure`; `options.started` says whether the program may have run. */
  constructor(failure: PatchFailure, options: RemoteShellErrorOptions = {}) {
    super(failure.message);
    this.name = "RemoteShellError";
    this.failure = failure;
    this.code = failure.code;
    this.retryable = failure.retryable;
    if (options.started !== undefined) this.started = options.started;
    if (options.overflow !== undefined) this.overflow = options.overflow;
  }
}

/**
 * Whether the program behind a rejected {@linkcode RemoteShell.exec} may
 * have run: the error's `started` flag when the adapter set it, otherwise
 * true for every code except {@linkcode NEVER_STARTED_CODES} (unknown is
 * treated as "may have run", the safe side for a commit).
 *
 * @example
 * ```ts
 * programMayHaveRun(new RemoteShellError(failure("timeout", "…nothing ran"), { started: false })); // false
 * programMayHaveRun(new RemoteShellError(failure("timeout", "…killed"))); // true
 * programMayHaveRun(new RemoteShellError(failure("auth_failed", "…"))); // false
 * ```
 */
export function programMayHaveRun(error: RemoteShellError): boolean {
  if (error.started !== undefined) return error.started;
  return !NEVER_STARTED_CODES.has(error.failure.code);
}

/**
 * `shell.exec(command, options)`, holding the adapter to its contract: a
 * rejection that is not a {@linkcode RemoteShellError} (a bug, or an
 * adapter written without this contract in mind) becomes one with
 * `remote_error` and no `started` flag, i.e. "the program may have run".
 * So no foreign error escapes the engine's reports, and a commit whose
 * adapter failed that way is reported `outcome_unknown`, the safe side.
 *
 * @example
 * ```ts
 * const result = await execChecked(shell, "id -u", {});
 * ```
 */
export async function execChecked(shell: RemoteShell, command: string, options: ExecOptions): Promise<ExecResult> {
  try {
    return await shell.exec(command, options);
  } catch (error) {
    if (error instanceof RemoteShellError) throw error;
    const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    throw new RemoteShellError(failure(
      "remote_error",
      `the shell adapter${shell.label ? ` for ${shell.label}` : ""} failed with ${what.slice(0, 300)} instead of a RemoteShellError, so whether its program ran is unknown. Retry; if it persists, fix the adapter (RemoteShell.exec must reject with RemoteShellError).`,
    ));
  }
}

/**
 * Quote a string as one POSIX `sh` word: single quotes, with each `'`
 * written as `'\''`. Inside single quotes nothing is special, so any data
 * (including `$`, backticks, `\`, newlines) stays literal.
 *
 * @example
 * ```ts
 * shQuote("it's $HOME"); // "'it'\\''s $HOME'"
 * ```
 */
export function shQuote(value: string): string {
  if (value.includes("\0")) {
    throw new TypeError("shQuote: a shell word cannot contain NUL");
  }
  return "'" + value.replaceAll("'", "'\\''") + "'";
}
