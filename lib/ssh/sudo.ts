/**
 * Elevation through `sudo`, shared by adapters (SPEC §7 "Optional elevation").
 *
 * `sudo: true` runs every program as `sudo -n -- sh -c …` (never prompts).
 * `sudo: { password }` runs `sudo -S -k -p '' -- sh -c …` with the password
 * as the first line of stdin, ahead of the program's own stdin: never on a
 * command line, never logged, never in a message.
 *
 * Why a validation step: with a wrong password `sudo -S` keeps reading lines
 * from stdin as further attempts, i.e. it would eat the program's framed
 * stdin. So before the first program of a connection, {@linkcode SudoElevation}
 * validates once with a tiny exec whose stdin is only the password line, and
 * caches the result. It also first tries `sudo -n -k`: when a NOPASSWD rule
 * already allows the user, no password line is sent (sudo would not read it
 * and it would reach the program's stdin instead).
 *
 * @module
 */
import { failure } from "../failure.ts";
import { RemoteShellError, shQuote } from "../remote/shell.ts";
import type { ExecResult } from "../remote/shell.ts";
import type { PatchFailure } from "../types.ts";

/**
 * The `sudo` option of an adapter.
 *
 * @example
 * ```ts
 * await connectSsh({ host: "web1", sudo: true }); // sudo -n: needs a NOPASSWD rule
 * await connectSsh({ host: "web1", sudo: { password: async () => process.env.SUDO_PW ?? "" } }); // sudo -S, the password on stdin
 * ```
 */
export type SudoOption =
  | boolean
  | {
    /** Called once per connection when a password is needed; the value is never logged. */
    password: () => Promise<string>;
  };

/** How programs are elevated on one connection, once validated. */
export type SudoMode =
  | { kind: "none" }
  | { kind: "nopasswd" }
  | { kind: "password"; password: string };

/** Who and where, for messages. */
export interface SudoTarget {
  user: string;
  host: string;
}

/**
 * Runs a command string as given (through the remote login shell), with
 * optional stdin. Used for the validation probes.
 */
export type RawRun = (command: string, stdin?: Uint8Array) => Promise<ExecResult>;

/** A program that only proves sudo let us run `sh` (same command form as real runs). */
const PROBE_PROGRAM = "exit 0";

/**
 * The command prefix for a mode: `sudo -n --`, `sudo -S -k -p '' --` or `""`.
 *
 * @example
 * ```ts
 * sudoPrefix({ kind: "nopasswd" }); // "sudo -n --"
 * ```
 */
export function sudoPrefix(mode: SudoMode): string {
  switch (mode.kind) {
    case "none":
      return "";
    case "nopasswd":
      return "sudo -n --";
    case "password":
      // -k: never use a cached timestamp, so sudo ALWAYS reads exactly one
      // password line; -p '': no prompt text mixed into stderr.
      return "sudo -S -k -p '' --";
  }
}

/**
 * Wrap `sh -c <program>`-style argument words in sudo for `mode`.
 * `shArgs` are already-quoted words following `sh -c`.
 *
 * @example
 * ```ts
 * wrapWithSudo(shQuote("id -u"), { kind: "nopasswd" }); // "sudo -n -- sh -c 'id -u'"
 * ```
 */
export function wrapWithSudo(shArgs: string, mode: SudoMode): string {
  const prefix = sudoPrefix(mode);
  return prefix === "" ? `sh -c ${shArgs}` : `${prefix} sh -c ${shArgs}`;
}

/**
 * The stdin to send for `mode`: the password line first (password mode),
 * then the program's stdin.
 *
 * @example
 * ```ts
 * sudoStdin({ kind: "nopasswd" }, bytes) === bytes; // true
 * ```
 */
export function sudoStdin(mode: SudoMode, stdin: Uint8Array | undefined): Uint8Array | undefined {
  if (mode.kind !== "password") return stdin;
  const line = new TextEncoder().encode(mode.password + "\n");
  if (stdin === undefined || stdin.length === 0) return line;
  const joined = new Uint8Array(line.length + stdin.length);
  joined.set(line, 0);
  joined.set(stdin, line.length);
  return joined;
}

/**
 * Turn sudo's own complaint (the program never started) into a typed
 * failure with the recovery step. `null` when stderr does not look like
 * a sudo failure.
 *
 * @example
 * ```ts
 * classifySudoFailure("sudo: a password is required\n", 1, { user: "deploy", host: "web1" })?.code; // "auth_failed"
 * ```
 */
export function classifySudoFailure(stderr: string, exitCode: number | null, target: SudoTarget): PatchFailure | null {
  const who = `user ${target.user} on host ${target.host}`;
  if (/a password is required|a terminal is required/.test(stderr)) {
    return failure(
      "auth_failed",
      `sudo needs a password for ${who}, but sudo: true runs "sudo -n" (it never prompts). ` +
        `Next step: add a NOPASSWD sudoers rule for ${target.user}, or pass sudo: { password: () => … }.`,
    );
  }
  if (/incorrect password|Sorry, try again|no password was provided/.test(stderr)) {
    return failure(
      "auth_failed",
      `sudo rejected the password for ${who}; check the password callback (it must return ${target.user}'s ` +
        `password on ${target.host}, without a newline).`,
    );
  }
  if (/is not in the sudoers file|not allowed to execute|may not run sudo|is not allowed to run sudo/.test(stderr)) {
    return failure(
      "permission_denied",
      `sudo refuses to let ${who} run /bin/sh as root. Next step: add a sudoers rule allowing ${target.user} to run ` +
        `sh (e.g. "${target.user} ALL=(root) NOPASSWD: /bin/sh"), or connect as a user who may.`,
    );
  }
  if (/must have a tty|requiretty/.test(stderr)) {
    return failure(
      "permission_denied",
      `sudoers on ${target.host} requires a terminal (Defaults requiretty), which a program run over SSH does not ` +
        `have. Next step: add "Defaults:${target.user} !requiretty" to sudoers there.`,
    );
  }
  if (exitCode === 127 || /sudo: (command )?not found|sudo: No such file/.test(stderr)) {
    return failure(
      "remote_unsupported",
      `sudo is not installed on ${target.host} (or not on PATH for ${target.user}). Install sudo there, or ` +
        `connect as root without the sudo option.`,
      { tool: "sudo" },
    );
  }
  return null;
}

/**
 * One shell's elevation state on one connection: validates once (lazily, on
 * the first program), caches the mode. An `SshShell` keeps one per
 * connection, so a reconnect validates again, and each `withSudo` view of a
 * connection has its own (a wrong password fails only that view).
 *
 * @example
 * ```ts
 * const elevation = new SudoElevation({ password: async () => secret }, { user: "deploy", host: "web1" });
 * const mode = await elevation.prepare(rawRun); // throws RemoteShellError(auth_failed) on a wrong password
 * ```
 */
export class SudoElevation {
  /** Whether programs run elevated. */
  readonly enabled: boolean;
  readonly #option: SudoOption;
  readonly #target: SudoTarget;
  #pending: Promise<SudoMode> | null = null;

  constructor(option: SudoOption | undefined, target: SudoTarget) {
    this.#option = option ?? false;
    this.enabled = this.#option !== false;
    this.#target = target;
  }

  /** The validated mode for the current connection (validated once, then cached). */
  prepare(run: RawRun): Promise<SudoMode> {
    if (!this.enabled) return Promise.resolve({ kind: "none" });
    if (this.#pending === null) {
      const pending = this.#validate(run);
      this.#pending = pending;
      // A failed validation is not cached: the next call (maybe after a
      // fixed sudoers rule) validates again.
      pending.catch(() => {
        if (this.#pending === pending) this.#pending = null;
      });
    }
    return this.#pending;
  }

  /** Forget the validation (a new connection validates again). */
  reset(): void {
    this.#pending = null;
  }

  async #validate(run: RawRun): Promise<SudoMode> {
    const probe = (mode: SudoMode): string => wrapWithSudo(shQuote(PROBE_PROGRAM), mode);
    const quiet = await run(probe({ kind: "nopasswd" }));
    if (quiet.exitCode === 0) return { kind: "nopasswd" };
    const quietErr = new TextDecoder().decode(quiet.stderr);
    const needsPassword = /a password is required|a terminal is required/.test(quietErr);
    if (!needsPassword || this.#option === true) {
      throw new RemoteShellError(
        classifySudoFailure(quietErr, quiet.exitCode, this.#target) ??
          failure(
            "remote_error",
            `sudo -n on ${this.#target.host} failed (exit ${quiet.exitCode}): ${excerpt(quietErr)}. ` +
              `Check that sudo works for ${this.#target.user} there.`,
          ),
      );
    }
    const option = this.#option as Exclude<SudoOption, boolean>;
    let password: string;
    try {
      password = await option.password();
    } catch (error) {
      // The caller's callback, not this library, failed: a typed failure
      // like a wrong password, and nothing ran (sudo was only probed).
      throw new RemoteShellError(
        failure(
          "auth_failed",
          `the sudo password callback for user ${this.#target.user} on host ${this.#target.host} failed ` +
            `(${error instanceof Error ? error.message : String(error)}); nothing ran. Fix the callback and retry.`,
        ),
        { started: false },
      );
    }
    if (typeof password !== "string") {
      throw new TypeError("sudo.password() must resolve to a string");
    }
    if (/[\n\r\0]/.test(password)) {
      throw new RemoteShellError(
        failure(
          "auth_failed",
          `the sudo password for user ${this.#target.user} on host ${this.#target.host} contains a newline, CR or ` +
            `NUL, which sudo -S cannot read; check the password callback.`,
        ),
      );
    }
    const mode: SudoMode = { kind: "password", password };
    const checked = await run(probe(mode), sudoStdin(mode, undefined));
    if (checked.exitCode === 0) return mode;
    const checkedErr = new TextDecoder().decode(checked.stderr);
    throw new RemoteShellError(
      classifySudoFailure(checkedErr, checked.exitCode, this.#target) ??
        failure(
          "auth_failed",
          `sudo rejected the password for user ${this.#target.user} on host ${this.#target.host}; check the ` +
            `password callback.`,
        ),
    );
  }
}

function excerpt(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > 300 ? trimmed.slice(0, 300) + "…" : trimmed || "(no message)";
}
