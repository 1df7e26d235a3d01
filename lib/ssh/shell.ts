/**
 * Layer `lib/ssh/` (the top layer): `connectSsh` and everything it needs —
 * the ssh2 connection, auth, known_hosts, ssh_config, sudo, the channel
 * limiter. It may import every layer below it (in practice `lib/remote/`'s
 * `RemoteShell` contract and the shared files), `node:` modules and `ssh2`.
 *
 * This file: the SSH adapter (SPEC §8): a {@linkcode RemoteShell} over one pooled ssh2
 * connection, with host keys verified before authentication, a channel
 * limiter below OpenSSH's MaxSessions, reconnect on the next call after a
 * drop, process-group kill on timeout/cancel, and optional sudo.
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
import { ChannelLimiter } from "./channel_limiter.ts";
import type { ChannelSlot } from "./channel_limiter.ts";
import { RemoteShellError } from "../remote/shell.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../remote/shell.ts";
import { openExecChannel, runChannel } from "./channel.ts";
import type { ChannelHooks, ChannelOutcome } from "./channel.ts";
import { buildExecCommand, buildKillCommand, MARKER_SEARCH_BYTES, PidMarkerScanner } from "./command.ts";
import type { RemoteProcess } from "./command.ts";
import { connectChain } from "./connect.ts";
import { channelDone, endConnection, sleep, untilAborted } from "./connection.ts";
import type { Connection } from "./connection.ts";
import {
  beforeStart,
  channelRefusedError,
  closedError,
  commandTooLongError,
  droppedError,
  loginShellError,
  MAX_EXEC_COMMAND_BYTES,
  notSentError,
  outputTooLargeError,
  stoppedError,
} from "./failures.ts";
import type { AddedHostKey, HostKeyPolicy } from "./connect.ts";
import { resolveSshTarget } from "./options.ts";
import type { ResolvedSshTarget, SshOptions } from "./options.ts";
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

/** Most output kept from a sudo probe or a kill command (they print a few lines). */
const RAW_OUTPUT_BYTES = 1024 * 1024;

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


/**
 * Open an SSH connection and return the adapter. Connects eagerly, so host-key
 * and authentication problems surface here as a rejected
 * {@linkcode RemoteShellError}.
 *
 * @example
 * ```ts
 * const shell = await connectSsh({ host: "web1", sudo: true });
 * const { stdout } = await shell.exec("id -u");
 * await shell.close();
 * ```
 */
export async function connectSsh(options: SshOptions): Promise<SshShell> {
  const target = await resolveSshTarget(options);
  const shell = new SshShell(
    target,
    options.hostKeyPolicy ?? "strict",
    options.maxChannels ?? 8,
    options.sudo,
    options.maxOutputBytes,
  );
  await shell.connect();
  return shell;
}

/**
 * A {@linkcode RemoteShell} over SSH. Create it with {@linkcode connectSsh}.
 *
 * @example
 * ```ts
 * const shell = await connectSsh({ host: "127.0.0.1", port: 2222, identityFile: "/tmp/key" });
 * await shell.exec("cat > /tmp/x", { stdin: new TextEncoder().encode("hi") });
 * ```
 */
export class SshShell implements RemoteShell {
  /** `user@host:port` (plus ` via …` for jump hosts). */
  readonly label: string;
  /** True when programs run through sudo. */
  readonly elevated: boolean;
  /** `insecure_host_key` (hostKeyPolicy "insecure-accept-any") and `agent_unavailable` warnings. */
  readonly warnings: Warning[] = [];
  /** ssh_config notes: settings not applied (Match exec, …), a ProxyCommand run, certificates not presented. */
  readonly configWarnings: string[];
  /** Host keys appended to known_hosts under accept-new. */
  readonly addedHostKeys: AddedHostKey[] = [];
  readonly #target: ResolvedSshTarget;
  readonly #policy: HostKeyPolicy;
  readonly #limiter: ChannelLimiter;
  readonly #sudoOption: SudoOption | undefined;
  readonly #maxOutputBytes: number;
  #connecting: Promise<Connection> | null = null;
  #closed = false;

  /** Prefer {@linkcode connectSsh}; this does not connect. */
  constructor(
    target: ResolvedSshTarget,
    policy: HostKeyPolicy,
    maxChannels: number,
    sudo?: SudoOption,
    maxOutputBytes: number = DEFAULT_MAX_OUTPUT_BYTES,
  ) {
    this.#maxOutputBytes = maxOutputBytes;
    this.#target = target;
    this.#policy = policy;
    this.#limiter = new ChannelLimiter(maxChannels);
    this.#sudoOption = sudo;
    this.elevated = sudo !== undefined && sudo !== false;
    this.label = target.label;
    this.configWarnings = [...target.configWarnings];
  }

  /** Connect now (connectSsh calls it); later calls reconnect lazily. */
  async connect(): Promise<void> {
    await this.#connection();
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
    if (this.#closed) throw closedError(this.label);
    const controller = new AbortController();
    let reason: "timeout" | "cancelled" | null = null;
    const stop = (why: "timeout" | "cancelled"): void => {
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
        slot = await this.#limiter.acquire(controller.signal);
      } catch (error) {
        if (reason !== null) throw stoppedError(this.label, reason, options.timeoutMs, null);
        throw error;
      }
      try {
        return await this.#execInSlot(command, options, controller.signal, () => reason);
      } finally {
        slot.release();
      }
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Close the connection (and jump connections). The shell cannot be used afterwards. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#limiter.rejectAll(closedError(this.label));
    const pending = this.#connecting;
    this.#connecting = null;
    const connection = await pending?.catch(() => null);
    if (connection) await endConnection(connection);
  }

  async #execInSlot(
    command: string,
    options: ExecOptions,
    signal: AbortSignal,
    reason: () => "timeout" | "cancelled" | null,
  ): Promise<ExecResult> {
    const notStarted = (): RemoteShellError => stoppedError(this.label, reason()!, options.timeoutMs, null);
    // Failures up to here happen before the program is sent: nothing ran.
    const connection = await untilAborted(this.#connection(), signal, notStarted).catch(rethrowBeforeStart);
    const mode = await untilAborted(
      connection.sudo.prepare((raw, stdin) => this.#rawRun(connection, raw, stdin)),
      signal,
      notStarted,
    ).catch(rethrowBeforeStart);
    const nonce = randomBytes(8).toString("hex");
    const wrapped = buildExecCommand(command, nonce, mode);
    const size = Buffer.byteLength(wrapped);
    if (size > MAX_EXEC_COMMAND_BYTES) throw commandTooLongError(this.label, size);
    // Not abortable: once the open is sent the program may start, so an
    // abort from here on goes through the kill path below.
    const channel = await this.#openChannel(connection, wrapped);
    const scanner = new PidMarkerScanner(nonce);
    let processKnown: () => void = () => {};
    const started = new Promise<void>((resolve) => (processKnown = resolve));
    const stdin = sudoStdin(mode, options.stdin);
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
    };
    const running = runChannel(channel, stdin, hooks).finally(() => channelDone(connection));
    const aborted = new Promise<"aborted">((resolve) => {
      if (signal.aborted) resolve("aborted");
      signal.addEventListener("abort", () => resolve("aborted"), { once: true });
    });
    const first = await Promise.race([running, aborted, overflowed]);
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
      const target = { user: this.#target.hops.at(-1)!.username, host: this.#target.hops.at(-1)!.hostName };
      const sudoFailure = this.elevated ? classifySudoFailure(stderr, outcome.exitCode, target) : null;
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
          this.#rawRun(connection, buildKillCommand(process, mode), sudoStdin(mode, undefined), false),
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

  /**
   * Open a channel; when the server refuses (MaxSessions lower than
   * maxChannels), shrink the limit and wait for a channel to close — unless
   * `waitIfRefused` is false (kills: a late kill could hit a reused pgid).
   */
  async #openChannel(connection: Connection, command: string, waitIfRefused = true): Promise<ClientChannel> {
    for (;;) {
      if (connection.dropped) throw notSentError(this.label);
      // Channels already open when this one was asked for: a refusal then
      // may be the server's MaxSessions, not a refusal of the program.
      const openBefore = connection.openChannels;
      // Counted from the request on: ssh2 may deliver several open replies
      // in one read, before any continuation runs.
      connection.openChannels++;
      try {
        return await openExecChannel(connection.target, command);
      } catch (error) {
        channelDone(connection);
        const message = (error as Error).message;
        if (connection.dropped) throw droppedError(this.label, false);
        if (waitIfRefused && /open failure/i.test(message) && openBefore > 0) {
          // Those channels may all have closed while the refusal travelled back: then retry at once
          // (a refusal with nothing else open is final, so this cannot loop).
          if (connection.openChannels > 0) {
            this.#limiter.shrinkTo(connection.openChannels);
            await new Promise<void>((resolve) => connection.channelClosed.push(resolve));
          }
          continue;
        }
        throw channelRefusedError(this.label, message);
      }
    }
  }

  /** Run a command string as is (no wrapper, no limiter): sudo probes and kills. */
  async #rawRun(connection: Connection, command: string, stdin?: Uint8Array, waitIfRefused = true): Promise<ExecResult> {
    const channel = await this.#openChannel(connection, command, waitIfRefused);
    // Probes and kills print a few lines: keep at most RAW_OUTPUT_BYTES of whatever comes.
    const outcome = await runChannel(channel, stdin, { maxOutputBytes: RAW_OUTPUT_BYTES }).finally(() => channelDone(connection));
    if (!outcome.gotExit && connection.dropped) throw droppedError(this.label, true);
    return { stdout: outcome.stdout, stderr: outcome.stderr, exitCode: outcome.exitCode, signal: outcome.signal };
  }

  #connection(): Promise<Connection> {
    if (this.#closed) return Promise.reject(closedError(this.label));
    if (this.#connecting === null) {
      const attempt = this.#open();
      this.#connecting = attempt;
      attempt.catch(() => {
        if (this.#connecting === attempt) this.#connecting = null;
      });
    }
    return this.#connecting;
  }

  async #open(): Promise<Connection> {
    // A configuration OpenSSH would refuse, or a ProxyCommand not allowed: never connect around it.
    if (this.#target.refusal !== null) throw new RemoteShellError(this.#target.refusal, { started: false });
    const { clients } = await connectChain(this.#target.hops, {
      policy: this.#policy,
      warnings: this.warnings,
      addedHostKeys: this.addedHostKeys,
    });
    const last = this.#target.hops.at(-1)!;
    const connection: Connection = {
      clients,
      target: clients.at(-1)!,
      dropped: false,
      sudo: new SudoElevation(this.#sudoOption, { user: last.username, host: last.hostName }),
      openChannels: 0,
      channelClosed: [],
    };
    const current = this.#connecting;
    const onDrop = (): void => {
      if (connection.dropped) return;
      connection.dropped = true;
      if (this.#connecting === current) this.#connecting = null;
      for (const client of clients) client.end();
      for (const wake of connection.channelClosed.splice(0)) wake();
    };
    for (const client of clients) {
      client.on("close", onDrop);
      client.on("error", () => onDrop()); // keepalive timeouts and protocol errors end the connection
    }
    if (this.#closed) {
      await endConnection(connection);
      throw closedError(this.label);
    }
    return connection;
  }
}
