/**
 * The command line an SSH adapter sends for one program, and the one that
 * kills it.
 *
 * sshd runs the exec request through the user's login shell, so the program
 * goes inside `sh -c '<quoted>'` (POSIX single quotes, understood by every
 * Bourne-family login shell: sh, dash, bash, zsh, ksh, BusyBox ash). A
 * csh/tcsh/fish login shell is not supported.
 *
 * sshd ignores `signal` channel requests for many sessions, so cancelling
 * needs the program's process group: a tiny wrapper prints
 * `__sap_pid_<nonce> <pid> <pgid>` on stderr, then `exec`s the program. The
 * adapter strips that line from stderr, and a second exec kills the group.
 * The marker also proves the program started: no marker and a failure means
 * the wrapper (or sudo in front of it) never ran the program.
 *
 * @module
 */
import { shQuote } from "../remote/shell.ts";
import { wrapWithSudo } from "./sudo.ts";
import type { SudoMode } from "./sudo.ts";

/** How far into stderr the marker line is looked for (login shells may print first). */
export const MARKER_SEARCH_BYTES = 65536;

/** The process of a started program. */
export interface RemoteProcess {
  pid: number;
  pgid: number;
}

/**
 * The wrapper program. sshd makes the login shell a session and process
 * group leader; shells `exec` their last command, so the group usually is
 * the wrapper's own pid — but read it to be sure (Linux /proc, else `ps`).
 */
function wrapperProgram(nonce: string): string {
  return [
    "__sap_p=$1",
    "__sap_g=$$",
    "if [ -r /proc/$$/stat ]; then",
    "  read -r __sap_s < /proc/$$/stat",
    "  __sap_s=${__sap_s##*) }",
    "  set -- $__sap_s",
    "  __sap_g=${3:-$$}",
    "elif __sap_s=$(ps -o pgid= -p $$ 2>/dev/null); then",
    "  set -- $__sap_s",
    "  __sap_g=${1:-$$}",
    "fi",
    `printf '%s %s %s\\n' __sap_pid_${nonce} "$$" "$__sap_g" >&2`,
    'exec sh -c "$__sap_p" sh',
  ].join("\n");
}

/**
 * The full exec command for `program`: wrapper + program, behind sudo when
 * `mode` says so.
 *
 * @example
 * ```ts
 * buildExecCommand("cat", "0a1b2c3d", { kind: "none" });
 * // "sh -c '__sap_p=$1 …' sap 'cat'"
 * ```
 */
export function buildExecCommand(program: string, nonce: string, mode: SudoMode): string {
  if (!/^[0-9a-f]{8,64}$/.test(nonce)) throw new TypeError("nonce must be lowercase hex");
  return wrapWithSudo(`${shQuote(wrapperProgram(nonce))} sap ${shQuote(program)}`, mode);
}

/**
 * The command that kills a started program's process group (SIGKILL), and
 * the program itself should the group kill be refused; with `"TERM"`, the
 * one that asks the program's shell to stop (SIGTERM).
 *
 * @example
 * ```ts
 * buildKillCommand({ pid: 4242, pgid: 4240 }, { kind: "none" });
 * ```
 */
export function buildKillCommand(process: RemoteProcess, mode: SudoMode, signal: "KILL" | "TERM" = "KILL"): string {
  const { pid, pgid } = process;
  if (!Number.isInteger(pid) || !Number.isInteger(pgid) || pid < 2 || pgid < 2) {
    throw new TypeError("invalid remote pid/pgid");
  }
  // TERM goes to the program's shell alone (a gated stop, lib/remote/shell.ts
  // stdinGate): it cleans up itself, and a fork of it that has not reset
  // its traps would run them too (lib/remote/programs/commit_gate.ts)
  const program = signal === "TERM"
    ? `kill -TERM ${pid} 2>/dev/null; exit 0`
    : `kill -9 -${pgid} 2>/dev/null || kill -9 ${pid} 2>/dev/null; exit 0`;
  return wrapWithSudo(shQuote(program), mode);
}

/**
 * Finds the wrapper's marker line in the first bytes of stderr.
 *
 * @example
 * ```ts
 * const scanner = new PidMarkerScanner("0a1b2c3d");
 * scanner.push(chunk); scanner.process; // { pid, pgid } once seen
 * ```
 */
export class PidMarkerScanner {
  /** The process, once the marker line was seen. */
  process: RemoteProcess | null = null;
  readonly #marker: string;
  #seen = "";
  #done = false;
  /** Byte offset and length of the marker line within stderr. */
  #span: [number, number] | null = null;
  #offset = 0;

  constructor(nonce: string) {
    this.#marker = `__sap_pid_${nonce} `;
  }

  /** Feed the next stderr chunk; returns true when the marker was just found. */
  push(chunk: Uint8Array): boolean {
    if (this.#done) return false;
    // Login shells may print before our wrapper runs (e.g. a noisy .bashrc);
    // look through the first 64 KiB, latin1 so offsets are byte offsets.
    this.#offset += chunk.length;
    this.#seen += Buffer.from(chunk).toString("latin1");
    const at = this.#seen.indexOf(this.#marker);
    if (at >= 0) {
      const end = this.#seen.indexOf("\n", at);
      if (end < 0) return false;
      const fields = this.#seen.slice(at + this.#marker.length, end).split(" ");
      const pid = Number(fields[0]);
      const pgid = Number(fields[1]);
      this.#done = true;
      this.#span = [at, end + 1 - at];
      if (Number.isInteger(pid) && Number.isInteger(pgid) && pid > 1 && pgid > 1) {
        this.process = { pid, pgid };
        return true;
      }
      return false;
    }
    if (this.#offset > MARKER_SEARCH_BYTES) this.#done = true;
    return false;
  }

  /**
   * Whether every stderr byte so far was searched (false once the scanner
   * gave up after 64 KiB without a marker): only then does "no marker"
   * prove the program did not start.
   */
  get searchedAll(): boolean {
    return !this.#done || this.#span !== null;
  }

  /** Whether the wrapper reported that the program started. */
  get started(): boolean {
    return this.#span !== null;
  }

  /** stderr with the marker line removed. */
  strip(stderr: Uint8Array): Uint8Array {
    if (this.#span === null) return stderr;
    const [at, length] = this.#span;
    // stderr kept shorter than the marker's end (a bounded channel): cut before it
    if (at + length > stderr.length) return stderr.slice(0, Math.min(at, stderr.length));
    const out = new Uint8Array(stderr.length - length);
    out.set(stderr.subarray(0, at), 0);
    out.set(stderr.subarray(at + length), at);
    return out;
  }
}
