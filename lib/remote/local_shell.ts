/**
 * `LocalShell`: the {@linkcode RemoteShell} adapter that runs the remote
 * programs on this machine with a local POSIX shell (the embedded default,
 * and how the tests run the very same programs under dash, bash and BusyBox).
 *
 * No startup files. A program must behave the same whoever runs it, so the
 * shell reads none of the user's rc files. `bash -c` reads none unless
 * (a) `BASH_ENV` names one, or (b) its stdin is a socket and `SHLVL` is
 * below 1 when it starts — bash's rshd/sshd heuristic (Debian's bash then
 * sources /etc/bash.bashrc and ~/.bashrc), and the stdio pipes of Node,
 * Bun and Deno children are socketpairs. So the environment every program
 * gets has `BASH_ENV` removed and `SHLVL` raised to at least 1 (bash then
 * counts itself at level 2 and skips the rc files). This is done on the
 * environment rather than with `--norc` so that it also holds when the
 * shell is reached through a wrapper (`["setpriv", …, "bash"]`,
 * `["env", "bash"]`). Seen here: a stale lock in root's .bashrc (pyenv)
 * made every bash program wait 60 s. dash and BusyBox sh read `ENV` only
 * when interactive, never for `-c`.
 *
 * @module
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { failure } from "../failure.ts";
import { localReadsSupported, readVerifiedFile } from "./local_read.ts";
import { OutputBuffer } from "./output_buffer.ts";
import { GATE_STOP_GRACE_MS, RemoteShellError } from "./shell.ts";
import type { ExecOptions, ExecResult, LocalFileAccess, RemoteShell } from "./shell.ts";
import { GateAnswer } from "./stdin_gate.ts";

/**
 * Options of {@linkcode LocalShell}.
 *
 * @example
 * ```ts
 * const shell = new LocalShell({ shell: ["/usr/bin/busybox", "sh"], cwd: "/srv/app", localReads: false });
 * ```
 */
export interface LocalShellOptions {
  /**
   * The shell and its leading arguments; the adapter appends `-c <command>`.
   * Default `["/bin/sh"]`. Examples: `["dash"]`, `["bash"]`,
   * `["/usr/bin/busybox", "sh"]`.
   */
  shell?: string[];
  /**
   * The environment of the program (default: this process's environment),
   * always without `BASH_ENV` and with `SHLVL` at least 1 (see the module
   * doc: no startup file runs).
   */
  env?: Record<string, string>;
  /** Working directory of the program (default: this process's). */
  cwd?: string;
  /**
   * Most stdout + stderr bytes one program may produce before it is killed
   * and the call rejects `limit_exceeded`. Default 1 GiB: a snapshot of many
   * large files legitimately produces a lot.
   */
  maxOutputBytes?: number;
  /**
   * Let a snapshot read large files (64 KiB and more) from this process
   * instead of through the program's stdout, where the program allows it
   * (lib/remote/local_read.ts; default true). Turn it off when `shell`
   * runs the programs where this process's files are not the same (a
   * container, a chroot, another host): it would still be correct — every
   * file is checked to be the inode the program measured, and read through
   * the program otherwise — only slower.
   */
  localReads?: boolean;
}

const DEFAULT_MAX_OUTPUT = 1024 * 1024 * 1024;
const STDIN_CHUNK = 64 * 1024;

/**
 * Runs each program as `[...shell, "-c", command]` in a new process group,
 * so that cancelling or timing out kills the shell and every child it
 * started (killing only `sh` would leave its children holding the pipes).
 *
 * @example
 * ```ts
 * const shell = new LocalShell({ shell: ["dash"] });
 * const { stdout, exitCode } = await shell.exec("printf '%s' hello");
 * new TextDecoder().decode(stdout); // "hello"
 * ```
 */
export class LocalShell implements RemoteShell {
  /** Always `"local"`. */
  readonly label: string = "local";
  /** The local shell never elevates. */
  readonly elevated: boolean = false;
  /** A pipe, not a network: compression would cost more than it saves. */
  readonly link: "local" = "local";
  /** Honours {@linkcode ExecOptions.stdinGate}. */
  readonly stdinGate: boolean = true;
  /** Direct reads of files the snapshot program measured (see {@linkcode LocalShellOptions.localReads}). */
  readonly localFiles?: LocalFileAccess;
  readonly #shell: string[];
  readonly #env: Readonly<Record<string, string | undefined>> | undefined;
  readonly #cwd: string | undefined;
  readonly #maxOutput: number;

  /** A shell for this machine; throws `TypeError` for a malformed option. */
  constructor(options: LocalShellOptions = {}) {
    const shell = options.shell ?? ["/bin/sh"];
    if (!Array.isArray(shell) || shell.length === 0 || !shell.every((s) => typeof s === "string" && s !== "")) {
      throw new TypeError("LocalShell: shell must be a non-empty array of non-empty strings");
    }
    const max = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
    if (!Number.isSafeInteger(max) || max <= 0) {
      throw new TypeError("LocalShell: maxOutputBytes must be a positive integer");
    }
    this.#shell = [...shell];
    this.#env = options.env;
    this.#cwd = options.cwd;
    this.#maxOutput = max;
    const euid = process.geteuid?.();
    if (options.localReads !== false && euid !== undefined && localReadsSupported()) this.localFiles = { euid, read: readVerifiedFile };
  }

  /** Run `command` with the configured shell (see {@linkcode RemoteShell.exec}). */
  exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    if (typeof command !== "string") throw new TypeError("LocalShell.exec: command must be a string");
    const { signal, timeoutMs, stdin, onStdinProgress } = options;
    if (timeoutMs !== undefined && (!Number.isFinite(timeoutMs) || timeoutMs <= 0)) {
      throw new TypeError("LocalShell.exec: timeoutMs must be a positive number");
    }
    // Checked before the spawn: a bad signal found afterwards left the program running, never stopped.
    if (signal !== undefined && (signal === null || typeof signal.addEventListener !== "function")) throw new TypeError("LocalShell.exec: signal must be an AbortSignal");
    const maxStdout = byteLimit("maxStdoutBytes", options.maxStdoutBytes);
    const maxStderr = byteLimit("maxStderrBytes", options.maxStderrBytes);
    if (signal?.aborted) {
      return Promise.reject(new RemoteShellError(failure("cancelled", "the operation was cancelled before the local program started; nothing ran"), { started: false }));
    }
    return new Promise<ExecResult>((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(this.#shell[0]!, [...this.#shell.slice(1), "-c", command], {
          detached: true,
          stdio: ["pipe", "pipe", "pipe"],
          env: programEnvironment(this.#env ?? process.env),
          cwd: this.#cwd,
        });
      } catch (error) {
        reject(startFailure(this.#shell[0]!, error));
        return;
      }
      // One buffer that grows in place (output_buffer.ts): a snapshot's
      // reply is the files' bytes, never held twice.
      const stdout = new OutputBuffer(Math.min(maxStdout, this.#maxOutput));
      const stderr: Uint8Array[] = [];
      let outputBytes = 0;
      let stdoutBytes = 0;
      let stderrKept = 0;
      let stderrDropped = 0;
      let settled = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const sink = child.stdin!;
      const gate = options.stdinGate === undefined
        ? undefined
        : new GateAnswer(options.stdinGate, (bytes) => sink.write(bytes), () => sink.end());

      const killGroup = (): void => {
        const pid = child.pid;
        if (pid === undefined) return;
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          try {
            child.kill("SIGKILL");
          } catch {
            // already gone
          }
        }
      };
      const finish = (): void => {
        settled = true;
        if (timer !== undefined) clearTimeout(timer);
        if (grace !== undefined) clearTimeout(grace);
        signal?.removeEventListener("abort", onAbort);
      };
      const fail = (error: RemoteShellError): void => {
        if (settled) return;
        finish();
        killGroup();
        reject(error);
      };
      const cancelled = (): RemoteShellError =>
        new RemoteShellError(failure("cancelled", "the operation was cancelled; the local program was killed"), { started: true });
      const timedOut = (): RemoteShellError =>
        new RemoteShellError(failure("timeout", `the local program did not finish within ${timeoutMs} ms and was killed; retry with a longer timeout`), { started: true });
      // A gated program (ExecOptions.stdinGate) is stopped with SIGTERM and
      // given time to clean up; SIGKILL only if it does not end.
      let stopped: "cancelled" | "timeout" | undefined;
      let grace: ReturnType<typeof setTimeout> | undefined;
      const stop = (why: "cancelled" | "timeout"): void => {
        if (settled || stopped !== undefined) return;
        if (gate === undefined) return fail(why === "cancelled" ? cancelled() : timedOut());
        // past the go-ahead a cancel is too late: the program runs to its end
        if (why === "cancelled" && gate.gaveBytes) return;
        stopped = why;
        gate.close();
        const pid = child.pid;
        try {
          // the shell alone: a fork of it that has not reset its traps yet
          // would run them too (commit_gate.ts)
          if (pid !== undefined) process.kill(pid, "SIGTERM");
        } catch {
          // already gone: its close settles the call
        }
        grace = setTimeout(() => fail(why === "cancelled" ? cancelled() : timedOut()), GATE_STOP_GRACE_MS);
      };
      const onAbort = (): void => stop("cancelled");
      signal?.addEventListener("abort", onAbort, { once: true });
      if (timeoutMs !== undefined) timer = setTimeout(() => stop("timeout"), timeoutMs);

      const tooMuch = (what: "stdout" | "output", limit: number): void => {
        const advice = what === "output" ? "read fewer or smaller files at once" : "more than its caller allows for this program (maxStdoutBytes)";
        fail(new RemoteShellError(failure("limit_exceeded", `the local program wrote more than ${limit} bytes of ${what} and was killed; ${advice}`, { retryable: false }), { started: true, overflow: what }));
      };
      const total = (bytes: number): boolean => {
        outputBytes += bytes;
        if (outputBytes <= this.#maxOutput) return true;
        tooMuch("output", this.#maxOutput);
        return false;
      };
      child.stdout!.on("data", (chunk: Uint8Array): void => {
        if (settled) return;
        stdoutBytes += chunk.length;
        // Killed before the chunk is kept: never more than the limit in memory.
        if (stdoutBytes > maxStdout) return tooMuch("stdout", maxStdout);
        if (total(chunk.length)) stdout.append(chunk);
        gate?.push(chunk);
      });
      child.stderr!.on("data", (chunk: Uint8Array): void => {
        if (settled) return;
        const keep = Math.min(chunk.length, Math.max(0, maxStderr - stderrKept));
        stderrDropped += chunk.length - keep;
        if (keep === 0 || !total(keep)) return;
        stderrKept += keep;
        stderr.push(keep === chunk.length ? chunk : chunk.subarray(0, keep));
      });
      child.on("error", (error) => fail(startFailure(this.#shell[0]!, error)));
      child.on("close", (code, sig) => {
        if (settled) return;
        finish();
        resolve({
          stdout: stdout.bytes(),
          stderr: concat(stderr),
          exitCode: code,
          signal: sig,
          ...(stderrDropped > 0 ? { stderrDropped } : {}),
          ...(stopped !== undefined ? { stopped } : {}),
        });
      });
      writeStdin(child, stdin ?? new Uint8Array(0), onStdinProgress, gate);
    });
  }

  /** Nothing to release: every exec is its own process. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * Feed stdin in chunks, honouring back-pressure so progress reports mean
 * "handed to the program", then close it. A program that exits without
 * reading everything makes the pipe fail with EPIPE: that is its business
 * (its exit status and output tell what happened), not a transport error.
 */
function writeStdin(
  child: ChildProcess,
  bytes: Uint8Array,
  onProgress: ((sent: number, total: number) => void) | undefined,
  gate: GateAnswer | undefined,
): void {
  const sink = child.stdin!;
  sink.on("error", () => {});
  const total = bytes.length;
  let offset = 0;
  // with a gate, stdin stays open for the answer (GateAnswer ends it)
  const done = (): void => {
    if (gate === undefined) sink.end();
    else gate.stdinDone();
  };
  const pump = (): void => {
    while (offset < total) {
      if (gate?.ended) return;
      const end = Math.min(offset + STDIN_CHUNK, total);
      const ok = sink.write(bytes.subarray(offset, end));
      offset = end;
      onProgress?.(offset, total);
      if (!ok) {
        sink.once("drain", pump);
        return;
      }
    }
    done();
  };
  if (total === 0) {
    onProgress?.(0, 0);
    done();
  } else {
    pump();
  }
}

/** A per-exec byte limit: the option if set (a non-negative integer), else none (the overall cap still holds). */
function byteLimit(name: string, value: number | undefined): number {
  if (value === undefined) return Infinity;
  if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`LocalShell.exec: ${name} must be a non-negative integer`);
  return value;
}

/**
 * The environment a program runs with: the given one without `BASH_ENV`,
 * with `SHLVL` at least 1 (see the module doc: no rc file may run).
 */
function programEnvironment(base: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined && name !== "BASH_ENV") env[name] = value;
  }
  const level = Number(env.SHLVL);
  if (!(Number.isInteger(level) && level >= 1)) env.SHLVL = "1";
  return env;
}

function startFailure(binary: string, error: unknown): RemoteShellError {
  const detail = error instanceof Error ? error.message : String(error);
  return new RemoteShellError(
    failure("connect_failed", `the local shell ${JSON.stringify(binary)} could not be started (${detail}); configure an installed POSIX shell`, {
      retryable: false,
    }),
    { started: false }, // the shell binary itself could not be started
  );
}

function concat(chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return new Uint8Array(chunks[0]!);
  let size = 0;
  for (const c of chunks) size += c.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
