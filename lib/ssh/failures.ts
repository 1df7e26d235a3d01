/**
 * The typed failures of {@linkcode SshShell.exec} around a program (not
 * connecting: see lib/ssh/connect.ts), each message a recovery instruction.
 *
 * @module
 */
import { failure } from "../failure.ts";
import { RemoteShellError } from "../remote/shell.ts";
import type { RemoteProcess } from "./command.ts";

/**
 * `close()` was called: a programmer's sequencing error, not retryable.
 * `by`: `"shell"` — the shell's own connection was closed by its close();
 * `"view"` — this `withSudo` view was closed by its own close() (the
 * connection stays open for the other shells on it); `"owner"` — a view
 * whose connection was closed by the shell it was made from.
 *
 * @example
 * ```ts
 * throw closedError("deploy@web1:22");
 * ```
 */
export function closedError(label: string, by: "shell" | "view" | "owner" = "shell"): RemoteShellError {
  const message = by === "view"
    ? `this withSudo view of the SSH connection to ${label} was closed by its close(); the connection is still ` +
      `open: make a new view with withSudo on a shell of it.`
    : by === "owner"
    ? `the SSH connection to ${label} was closed by close() of the shell connectSsh returned, which ends it for ` +
      `every withSudo view made from it; open a new one with connectSsh.`
    : `the SSH connection to ${label} was closed by close(); open a new one with connectSsh.`;
  return new RemoteShellError(failure("connect_failed", message, { retryable: false }), { started: false });
}

/**
 * A timeout or abort. `killed`: `null` before the program started (nothing
 * ran), the process when its group was killed, `false` when its pid was
 * never learned (it may still run).
 *
 * @example
 * ```ts
 * throw stoppedError("deploy@web1:22", "timeout", 30000, { pid: 4242, pgid: 4240 });
 * ```
 */
export function stoppedError(
  label: string,
  reason: "timeout" | "cancelled",
  timeoutMs: number | undefined,
  killed: RemoteProcess | null | false,
): RemoteShellError {
  const what = reason === "timeout" ? `did not finish within ${timeoutMs} ms` : "was cancelled";
  if (killed === null) {
    return new RemoteShellError(
      failure(
        reason,
        `the program on ${label} ${what} before it started (waiting for a connection, sudo or a free channel); ` +
          `nothing ran. Retry${reason === "timeout" ? " with a larger timeoutMs" : ""}.`,
      ),
      { started: false },
    );
  }
  const how = killed
    ? `it was killed (process group ${killed.pgid})`
    : "it could not be killed for sure (its process id was never reported)";
  return new RemoteShellError(
    failure(
      reason,
      `the program on ${label} ${what}; ${how}. It may have done part of its work: re-read the affected files ` +
        `before retrying.`,
    ),
    { started: true },
  );
}

/**
 * The connection dropped while the program may have been running.
 *
 * @example
 * ```ts
 * throw droppedError("deploy@web1:22", true);
 * ```
 */
export function droppedError(label: string, started: boolean): RemoteShellError {
  return new RemoteShellError(
    failure(
      "outcome_unknown",
      `the SSH connection to ${label} dropped while the program ${started ? "was running" : "may have been starting"}; ` +
        `it may or may not have completed. Do not assume either: re-read the affected files (or reconcile the ` +
        `operation) before retrying. The next call reconnects.`,
    ),
    // Even before the start marker the exec request may have reached sshd.
    { started: true },
  );
}

/**
 * The connection dropped before the program was sent: nothing ran.
 *
 * @example
 * ```ts
 * throw notSentError("deploy@web1:22");
 * ```
 */
export function notSentError(label: string): RemoteShellError {
  return new RemoteShellError(
    failure(
      "connect_failed",
      `the SSH connection to ${label} dropped before the program was sent; nothing ran. Retry: the next call reconnects.`,
    ),
    { started: false },
  );
}

/**
 * The server refused a session channel outright.
 *
 * @example
 * ```ts
 * throw channelRefusedError("deploy@web1:22", "Channel open failure");
 * ```
 */
export function channelRefusedError(label: string, reason: string): RemoteShellError {
  return new RemoteShellError(
    failure(
      "remote_error",
      `${label} refused to run a program (${reason}). Check the server's sshd settings (MaxSessions, ForceCommand, ` +
        `the account's shell); retry later if it is overloaded.`,
    ),
    { started: false },
  );
}

/**
 * The login shell exited without starting the program (no start marker).
 * `started` is `false` when all of stderr was searched for the marker,
 * `undefined` when the search gave up (the marker may have been missed).
 *
 * @example
 * ```ts
 * throw loginShellError("deploy@web1:22", 1, null, "This account is currently not available.");
 * ```
 */
export function loginShellError(
  label: string,
  exitCode: number | null,
  signal: string | null,
  stderr: string,
  started: false | undefined = false,
): RemoteShellError {
  const trimmed = stderr.trim();
  const shown = trimmed.length > 400 ? trimmed.slice(0, 400) + "…" : trimmed || "(no message)";
  return new RemoteShellError(
    failure(
      "remote_error",
      `the login shell of ${label} did not start the program (exit ${exitCode}${signal ? `, ${signal}` : ""}): ` +
        `${shown}. The account needs a POSIX login shell (sh, bash, dash, zsh, ksh) and /bin/sh.`,
    ),
    { started },
  );
}

/**
 * The longest command an SSH exec can carry: sshd hands it to the login
 * shell as ONE argument, and Linux caps one argument at 128 KiB
 * (MAX_ARG_STRLEN, including its NUL); bigger ones fail "Argument list too
 * long", and past ~256 KiB the server drops the connection.
 */
export const MAX_EXEC_COMMAND_BYTES: number = 128 * 1024 - 1;

/**
 * The wrapped program is too long to send as an exec command.
 *
 * @example
 * ```ts
 * throw commandTooLongError("deploy@web1:22", 200000);
 * ```
 */
export function commandTooLongError(label: string, bytes: number): RemoteShellError {
  return new RemoteShellError(
    failure(
      "limit_exceeded",
      `the program for ${label} is ${bytes} bytes once wrapped; an SSH exec command may be at most ` +
        `${MAX_EXEC_COMMAND_BYTES} bytes (it reaches the login shell as one argument). Nothing ran. Send bulk data ` +
        `on stdin instead of in the program text.`,
    ),
    { started: false },
  );
}

/**
 * The program wrote more output than allowed and was killed.
 *
 * @example
 * ```ts
 * throw outputTooLargeError("deploy@web1:22", 1 << 30);
 * throw outputTooLargeError("deploy@web1:22", 1 << 20, "stdout"); // past ExecOptions.maxStdoutBytes
 * ```
 */
export function outputTooLargeError(label: string, maxOutputBytes: number, what: "output" | "stdout" = "output"): RemoteShellError {
  const advice = what === "output"
    ? "read fewer or smaller files at once (or raise maxOutputBytes)"
    : "more than its caller allows for this program (maxStdoutBytes)";
  return new RemoteShellError(
    failure(
      "limit_exceeded",
      `the program on ${label} wrote more than ${maxOutputBytes} bytes of ${what} and was killed; ${advice}.`,
      { retryable: false },
    ),
    { started: true, overflow: what },
  );
}

/**
 * The same error, marked as "the program did not start": for failures
 * while connecting or validating sudo, before the program was sent (a
 * dropped sudo probe is the probe's outcome, not the program's).
 * Anything that is not a {@linkcode RemoteShellError} is returned as is.
 *
 * @example
 * ```ts
 * const mode = await elevation.prepare(run).catch((e) => { throw beforeStart(e); });
 * ```
 */
export function beforeStart(error: unknown): unknown {
  if (!(error instanceof RemoteShellError) || error.started === false) return error;
  return new RemoteShellError(error.failure, { started: false });
}
