/**
 * Layer `lib/ssh/` (the top layer): `connectSsh` and everything it needs —
 * the ssh2 connection, auth, known_hosts, ssh_config, sudo, the channel
 * limiter. It may import every layer below it (in practice `lib/remote/`'s
 * `RemoteShell` contract and the shared files), `node:` modules and `ssh2`.
 *
 * This file: the SSH adapter (SPEC §8): a {@linkcode RemoteShell} over one pooled ssh2
 * connection, with host keys verified before authentication, a channel
 * limiter below OpenSSH's MaxSessions, reconnect on the next call after a
 * drop, process-group kill on timeout/cancel, and optional sudo. The
 * connection itself lives in {@linkcode SshLink} (lib/ssh/link.ts), so that
 * `withSudo` views can share it.
 *
 * Outcome rules of `exec` (see also lib/remote/shell.ts):
 * - the program ran and exited → resolves with its exit code / signal;
 * - the connection dropped while the program may have been running →
 *   rejects `outcome_unknown` (the next call reconnects);
 * - the channel closed without an exit status on a live connection →
 *   resolves `exitCode: null, signal: null` (outcome unknown, per contract);
 * - timeout / abort → the remote process group is killed, then rejects
 *   `timeout` / `cancelled`.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import type { ClientChannel } from "ssh2";
import type { ChannelSlot } from "./channel_limiter.ts";
import { unknownKeysFailure } from "../remote/request_keys.ts";
import type { NamesEveryKey } from "../remote/request_keys.ts";
import { GATE_STOP_GRACE_MS, RemoteShellError } from "../remote/shell.ts";
import { GateAnswer } from "../remote/stdin_gate.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../remote/shell.ts";
import { runChannel } from "./channel.ts";
import type { ChannelHooks, ChannelOutcome } from "./channel.ts";
import { buildExecCommand, buildKillCommand, MARKER_SEARCH_BYTES, PidMarkerScanner } from "./command.ts";
import type { RemoteProcess } from "./command.ts";
import { channelDone, sleep, untilAborted } from "./connection.ts";
import type { Connection } from "./connection.ts";
import {
  beforeStart,
  closedError,
  commandTooLongError,
  droppedError,
  loginShellError,
  MAX_EXEC_COMMAND_BYTES,
  outputTooLargeError,
  stoppedError,
} from "./failures.ts";
import type { AddedHostKey } from "./connect.ts";
import { SshLink } from "./link.ts";
import { resolveSshTarget } from "./options.ts";
import type { SshOptions } from "./options.ts";
import { classifySudoFailure, SudoElevation, sudoStdin } from "./sudo.ts";
import type { SudoMode, SudoOption } from "./sudo.ts";
import type { Warning } from "../types.ts";

export type { SshOptions } from "./options.ts";

function rethrowBeforeStart(error: unknown): never {
  throw beforeStart(error);
}
export type { HostKeyPolicy } from "./connect.ts";

/** Default output cap per program (as LocalShell): big snapshots are legitimate. */
const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024 * 1024;

/** How long a kill may take before the call gives up waiting for the channel. */
const KILL_GRACE_MS = 3000;

/** The result with at most `max` bytes of stderr (the rest counted as dropped). */
function boundStderr(result: ExecResult, max: number | undefined, droppedBefore: number): ExecResult {
  let dropped = droppedBefore;
  let stderr = result.stderr;
  if (max !== undefined && stderr.length > max) {
    dropped += stderr.length - max;
    stderr = stderr.slice(0, max);
  }
  return dropped > 0 ? { ...result, stderr, stderrDropped: dropped } : { ...result, stderr };
}


/** Every field of {@linkcode SshOptions}: any other key is refused (`invalid_request`). */
const SSH_OPTION_KEYS = [
  "host", "port", "username", "identityFile", "privateKey", "passphrase", "password", "agent", "knownHostsFile", "hostKeyPolicy",
  "sshConfigFile", "systemSshConfigFile", "proxyJump", "allowProxyCommand", "keepaliveIntervalMs", "keepaliveCountMax",
  "readyTimeoutMs", "maxChannels", "sudo", "maxOutputBytes", "onWarning",
] as const satisfies readonly (keyof SshOptions)[];
const everySshKey: NamesEveryKey<SshOptions, (typeof SSH_OPTION_KEYS)[number]> = true;
void everySshKey;

/**
 * Open an SSH connection and return the adapter. Connects eagerly, so host-key
 * and authentication problems surface here.
 *
 * Rejects only with {@linkcode RemoteShellError} for whatever stops the
 * connection — `connect_failed` (unreachable, refused, DNS, an invalid
 * ssh_config, a jump host), `auth_failed`, `auth_unsupported`,
 * `host_key_unknown`, `host_key_mismatch` — with its `code`, `retryable`
 * and the typed `failure` (whose message says the next step), and for an
 * option key this function does not know (`invalid_request`, naming the
 * closest option; nothing is contacted); with a TypeError for invalid
 * option values (a programmer error).
 *
 * @example
 * ```ts
 * const shell = await connectSsh({ host: "web1", sudo: true });
 * const { stdout } = await shell.exec("id -u");
 * await shell.close();
 * ```
 */
export async function connectSsh(options: SshOptions): Promise<SshShell> {
  const strange = unknownKeysFailure("connectSsh options", options, SSH_OPTION_KEYS, "nothing was connected");
  if (strange !== null) throw new RemoteShellError(strange, { started: false });
  const target = await resolveSshTarget(options);
  const link = new SshLink(target, options.hostKeyPolicy ?? "strict", options.maxChannels ?? 8, options.onWarning ? { onWarning: options.onWarning } : {});
  const shell = new SshShell(link, {
    ...(options.sudo !== undefined ? { sudo: options.sudo } : {}),
    ...(options.maxOutputBytes !== undefined ? { maxOutputBytes: options.maxOutputBytes } : {}),
  });
  await shell.connect();
  return shell;
}

/** Options of the {@linkcode SshShell} constructor. */
export interface SshShellOptions {
  /** Elevation of this shell's programs (see {@linkcode SudoOption}). */
  sudo?: SudoOption;
  /** Output cap per program (default 1 GiB). */
  maxOutputBytes?: number;
  /**
   * False for a view made by {@linkcode SshShell.withSudo}: its close() leaves
   * the connection open. Default true: close() ends the connection.
   */
  ownsConnection?: boolean;
}

/**
 * A {@linkcode RemoteShell} over SSH. Create it with {@linkcode connectSsh};
 * {@linkcode SshShell.withSudo} makes views of the same connection with
 * another elevation.
 *
 * @example
 * ```ts
 * const shell = await connectSsh({ host: "127.0.0.1", port: 2222, identityFile: "/tmp/key" });
 * await shell.exec("cat > /tmp/x", { stdin: new TextEncoder().encode("hi") });
 * ```
 */
export class SshShell implements RemoteShell {
  /** `user@host:port` (plus ` via …` for jump hosts); the same for every view of the connection. */
  readonly label: string;
  /** True when programs run through sudo. */
  readonly elevated: boolean;
  /** Programs cross a network: `compress: "auto"` compresses large snapshots and packs the programs. */
  readonly link: "network" = "network";
  /** Honours {@linkcode ExecOptions.stdinGate} (a SIGTERM from a second exec stops a gated program). */
  readonly stdinGate: boolean = true;
  /**
   * `insecure_host_key` (hostKeyPolicy "insecure-accept-any"), `agent_unavailable` and
   * `channel_limit_lowered` warnings of the connection (the same array in every view of it). Each is
   * also handed to `onWarning` as it comes.
   */
  readonly warnings: Warning[];
  /** ssh_config notes: settings not applied (Match exec, …), a ProxyCommand run, certificates not presented. */
  readonly configWarnings: string[];
  /** Host keys appended to known_hosts under accept-new. */
  readonly addedHostKeys: AddedHostKey[];
  readonly #link: SshLink;
  readonly #ownsConnection: boolean;
  readonly #sudoOption: SudoOption | undefined;
  readonly #maxOutputBytes: number;
  /** This shell's sudo validation, per connection: a reconnect validates again. */
  readonly #elevations = new WeakMap<Connection, SudoElevation>();
  /** Aborted by a view's close(): its calls still waiting for a channel slot reject. */
  readonly #closing = new AbortController();
  #closed = false;

  /** Prefer {@linkcode connectSsh} and {@linkcode SshShell.withSudo}; this does not connect. */
  constructor(link: SshLink, options: SshShellOptions = {}) {
    this.#link = link;
    this.#ownsConnection = options.ownsConnection ?? true;
    this.#maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    this.#sudoOption = options.sudo;
    this.elevated = options.sudo !== undefined && options.sudo !== false;
    this.label = link.label;
    this.warnings = link.warnings;
    this.configWarnings = link.configWarnings;
    this.addedHostKeys = link.addedHostKeys;
  }

  /**
   * A view of this shell's SSH connection whose programs run with another
   * elevation: `withSudo(true)` (`sudo -n`), `withSudo({ password })`
   * (`sudo -S`, the password on stdin only) or `withSudo(false)` (as the login
   * user). The view shares the connection, its reconnects and its channel
   * limit (`maxChannels` counts the programs of all views together) with
   * this shell, and keeps its own sudo check: made once per connection on
   * its first program and again after a reconnect; a failure there (e.g.
   * `auth_failed` for a wrong password) is the view's only.
   *
   * Closing: the view's `close()` refuses its new calls (and those still
   * queued for a channel), lets its running programs finish and leaves the
   * connection open for the other shells. `close()` of the shell
   * {@linkcode connectSsh} returned ends the connection for every view:
   * their running programs see the drop (`outcome_unknown`) and their later
   * calls fail `connect_failed` (not retryable). A view may itself make
   * views; they all belong to the same connection.
   *
   * @example
   * ```ts
   * const shell = await connectSsh({ host: "web1" }); // programs run as the login user
   * const root = shell.withSudo(true); // same connection, programs run through sudo -n
   * await Promise.all([shell.exec("id -u"), root.exec("id -u")]); // "1000\n", "0\n"
   * await shell.close(); // ends the connection for both
   * ```
   */
  withSudo(option: SudoOption): SshShell {
    if (typeof option !== "boolean" && typeof option?.password !== "function") {
      throw new TypeError("withSudo: the option must be true/false or { password: () => Promise<string> }");
    }
    return new SshShell(this.#link, { sudo: option, maxOutputBytes: this.#maxOutputBytes, ownsConnection: false });
  }

  /**
   * Programs that may run at once on the connection: `maxChannels`, or
   * lower once the server refused a channel for lack of sessions
   * (MaxSessions; see `channel_limit_lowered`).
   */
  get maxChannels(): number {
    return this.#link.limiter.limit;
  }

  /** Connect now (connectSsh calls it); later calls reconnect lazily. */
  async connect(): Promise<void> {
    const closed = this.#closedError();
    if (closed) throw closed;
    await this.#link.connection();
  }

  /** Run `command` with `sh` on the host; see the module doc for outcomes. */
  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    if (typeof command !== "string") throw new TypeError("exec: command must be a string");
    if (options.stdin !== undefined && !(options.stdin instanceof Uint8Array)) {
      throw new TypeError("exec: stdin must be a Uint8Array");
    }
    if (options.timeoutMs !== undefined && !(options.timeoutMs >= 0)) {
      throw new TypeError("exec: timeoutMs must be a number >= 0");
    }
    for (const name of ["maxStdoutBytes", "maxStderrBytes"] as const) {
      const value = options[name];
      if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) throw new TypeError(`exec: ${name} must be a non-negative integer`);
    }
    const closed = this.#closedError();
    if (closed) throw closed;
    const controller = new AbortController();
    let reason: "timeout" | "cancelled" | null = null;
    // the go-ahead handshake's state (#execInSlot makes it)
    const gated: { answer?: GateAnswer } = {};
    const stop = (why: "timeout" | "cancelled"): void => {
      // past a gated program's go-ahead a cancel is too late: it runs to its end
      if (why === "cancelled" && gated.answer?.gaveBytes) return;
      reason ??= why;
      controller.abort();
    };
    const onAbort = (): void => stop("cancelled");
    if (options.signal?.aborted) throw stoppedError(this.label, "cancelled", options.timeoutMs, null);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const timer = options.timeoutMs !== undefined ? setTimeout(() => stop("timeout"), options.timeoutMs) : undefined;
    try {
      let slot: ChannelSlot;
      try {
        // A view's close() ends only its own waits; the owner's close() rejects every queued call.
        const waitSignal = this.#ownsConnection ? controller.signal : AbortSignal.any([controller.signal, this.#closing.signal]);
        slot = await this.#link.limiter.acquire(waitSignal);
      } catch (error) {
        if (reason !== null) throw stoppedError(this.label, reason, options.timeoutMs, null);
        throw this.#closedError() ?? error;
      }
      try {
        return await this.#execInSlot(command, options, controller.signal, () => reason, gated, slot);
      } finally {
        slot.release();
      }
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  /**
   * The shell connectSsh returned: close the connection (and jump
   * connections) for it and every view of it. A view: close only the view
   * (see {@linkcode SshShell.withSudo}). Neither can be used afterwards.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsConnection) await this.#link.close();
    else this.#closing.abort(closedError(this.label, "view"));
  }

  /** Why this shell takes no new call, or null. */
  #closedError(): RemoteShellError | null {
    if (this.#closed) return closedError(this.label, this.#ownsConnection ? "shell" : "view");
    if (this.#link.closed) return closedError(this.label, this.#ownsConnection ? "shell" : "owner");
    return null;
  }

  /** This shell's elevation on `connection` (validated on first use there). */
  #elevation(connection: Connection): SudoElevation {
    let elevation = this.#elevations.get(connection);
    if (elevation === undefined) {
      elevation = new SudoElevation(this.#sudoOption, this.#link.sudoTarget);
      this.#elevations.set(connection, elevation);
    }
    return elevation;
  }

  async #execInSlot(
    command: string,
    options: ExecOptions,
    signal: AbortSignal,
    reason: () => "timeout" | "cancelled" | null,
    gated: { answer?: GateAnswer },
    slot: ChannelSlot,
  ): Promise<ExecResult> {
    const notStarted = (): RemoteShellError => stoppedError(this.label, reason()!, options.timeoutMs, null);
    // Failures up to here happen before the program is sent: nothing ran.
    const connection = await untilAborted(this.#link.connection(), signal, notStarted).catch((error) => {
      throw beforeStart(this.#closedError() ?? error);
    });
    const mode = await untilAborted(
      this.#elevation(connection).prepare((raw, stdin) => this.#link.rawRun(connection, raw, stdin)),
      signal,
      notStarted,
    ).catch(rethrowBeforeStart);
    const nonce = randomBytes(8).toString("hex");
    const wrapped = buildExecCommand(command, nonce, mode);
    const size = Buffer.byteLength(wrapped);
    if (size > MAX_EXEC_COMMAND_BYTES) throw commandTooLongError(this.label, size);
    // Not abortable once the open is sent: the program may start, so an
    // abort from here on goes through the kill path below. Only a wait
    // between refused opens (nothing started) ends on the signal.
    const channel = await this.#link.openChannel(connection, wrapped, { slot, signal }).catch((error) => {
      if (signal.aborted && !(error instanceof RemoteShellError)) throw notStarted();
      throw error;
    });
    const scanner = new PidMarkerScanner(nonce);
    let processKnown: () => void = () => {};
    const started = new Promise<void>((resolve) => (processKnown = resolve));
    const stdin = sudoStdin(mode, options.stdin);
    const gate = options.stdinGate === undefined
      ? undefined
      : new GateAnswer(options.stdinGate, (bytes) => channel.write(Buffer.from(bytes)), () => channel.end());
    gated.answer = gate;
    let overflow: () => void = () => {};
    const overflowWhat: { what: "output" | "stdout" } = { what: "output" };
    const overflowed = new Promise<"overflow">((resolve) => (overflow = () => resolve("overflow")));
    const hooks: ChannelHooks = {
      stdinOffset: (stdin?.length ?? 0) - (options.stdin?.length ?? 0),
      ...(options.onStdinProgress ? { onStdinProgress: options.onStdinProgress } : {}),
      onStderr: (chunk: Uint8Array) => {
        if (scanner.push(chunk)) processKnown();
      },
      maxOutputBytes: this.#maxOutputBytes,
      ...(options.maxStdoutBytes !== undefined ? { maxStdoutBytes: options.maxStdoutBytes } : {}),
      // Room for what the scanner may have to strip (login-shell noise and
      // the marker line come first); the caller's limit is applied after.
      ...(options.maxStderrBytes !== undefined ? { maxStderrBytes: options.maxStderrBytes + MARKER_SEARCH_BYTES + 256 } : {}),
      onOverflow: (what) => {
        overflowWhat.what = what;
        overflow();
      },
      ...(gate !== undefined ? { gate } : {}),
    };
    const running = runChannel(channel, stdin, hooks).finally(() => channelDone(connection, channel));
    const aborted = new Promise<"aborted">((resolve) => {
      if (signal.aborted) resolve("aborted");
      signal.addEventListener("abort", () => resolve("aborted"), { once: true });
    });
    const first = await Promise.race([running, aborted, overflowed]);
    if (first === "aborted" && gate !== undefined) {
      // A gated program is asked to stop (SIGTERM) and given time to clean
      // up or roll back; its own report then says what it did.
      gate.close();
      const ended = await this.#askToStop(connection, scanner, started, mode, running);
      if (ended !== null) {
        return { ...boundStderr(await this.#finish(ended, scanner, connection), options.maxStderrBytes, ended.stderrDropped), stopped: reason()! };
      }
    }
    if (first === "aborted" || first === "overflow") {
      const killed = await this.#killProgram(connection, channel, scanner, started, mode, running);
      if (first === "overflow") {
        const { what } = overflowWhat;
        throw outputTooLargeError(this.label, what === "stdout" ? options.maxStdoutBytes! : this.#maxOutputBytes, what);
      }
      throw stoppedError(this.label, reason()!, options.timeoutMs, killed);
    }
    return boundStderr(await this.#finish(first, scanner, connection), options.maxStderrBytes, first.stderrDropped);
  }

  async #finish(outcome: ChannelOutcome, scanner: PidMarkerScanner, connection: Connection): Promise<ExecResult> {
    if (!outcome.gotExit) {
      // ssh2 reports the client's close before its channels' close; give it
      // one turn in case the order differs.
      await new Promise((resolve) => setImmediate(resolve));
      if (connection.dropped) throw droppedError(this.label, scanner.started);
      return { stdout: outcome.stdout, stderr: scanner.strip(outcome.stderr), exitCode: null, signal: null };
    }
    if (!scanner.started && outcome.exitCode !== 0) {
      const stderr = new TextDecoder().decode(outcome.stderr);
      const sudoFailure = this.elevated ? classifySudoFailure(stderr, outcome.exitCode, this.#link.sudoTarget) : null;
      // No start marker: nothing ran — unless the scanner gave up before the
      // end of stderr (a login shell flooding it), then it is unknown.
      const started = scanner.searchedAll ? false : undefined;
      if (sudoFailure) throw new RemoteShellError(sudoFailure, { started });
      throw loginShellError(this.label, outcome.exitCode, outcome.signal, stderr, started);
    }
    return {
      stdout: outcome.stdout,
      stderr: scanner.strip(outcome.stderr),
      exitCode: outcome.exitCode,
      signal: outcome.signal,
    };
  }

  /** SIGTERM to a started program's shell from a second exec; its outcome if it ends within the grace period, else null. */
  async #askToStop(
    connection: Connection,
    scanner: PidMarkerScanner,
    started: Promise<void>,
    mode: SudoMode,
    running: Promise<ChannelOutcome>,
  ): Promise<ChannelOutcome | null> {
    const deadline = sleep(GATE_STOP_GRACE_MS).then(() => null);
    if (scanner.process === null) await Promise.race([started, running, deadline]);
    const process = scanner.process;
    if (process !== null && !connection.dropped) {
      // not awaited alone: over a stalled link the kill exec never answers
      void this.#link.rawRun(connection, buildKillCommand(process, mode, "TERM"), sudoStdin(mode, undefined), false).catch(() => {});
    }
    return await Promise.race([running, deadline]);
  }

  /** Kill the program's process group from a second exec; resolves what was killed. */
  async #killProgram(
    connection: Connection,
    channel: ClientChannel,
    scanner: PidMarkerScanner,
    started: Promise<void>,
    mode: SudoMode,
    running: Promise<ChannelOutcome>,
  ): Promise<RemoteProcess | false> {
    try {
      channel.signal("KILL"); // honoured by some servers; the group kill below is what counts
    } catch {
      // ignore: best effort
    }
    if (scanner.process === null) {
      await Promise.race([started, running, sleep(KILL_GRACE_MS)]);
    }
    const process = scanner.process;
    if (process !== null && !connection.dropped) {
      try {
        await Promise.race([
          this.#link.rawRun(connection, buildKillCommand(process, mode), sudoStdin(mode, undefined), false),
          sleep(KILL_GRACE_MS),
        ]);
      } catch {
        // the channel close below still frees our slot
      }
    }
    await Promise.race([running, sleep(KILL_GRACE_MS)]);
    try {
      channel.close();
    } catch {
      // already closed
    }
    return process ?? false;
  }
}
