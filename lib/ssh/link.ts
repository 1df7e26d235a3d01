/**
 * The connection side of the SSH adapter, shared by an {@linkcode SshShell}
 * and the views made from it with `withSudo`: one ssh2 connection (plus its
 * jump connections) opened lazily and re-opened on the next call after a
 * drop, the channel limiter below the server's MaxSessions, and the raw
 * channel opens every shell of the connection goes through. Elevation is
 * not here: each shell keeps its own, per connection.
 *
 * @module
 */
import type { ClientChannel } from "ssh2";
import { ChannelLimiter } from "./channel_limiter.ts";
import { openExecChannel, runChannel } from "./channel.ts";
import { connectChain } from "./connect.ts";
import type { AddedHostKey, HostKeyPolicy } from "./connect.ts";
import { channelDone, endConnection, sleep } from "./connection.ts";
import type { Connection } from "./connection.ts";
import { channelRefusedError, closedError, droppedError, notSentError } from "./failures.ts";
import type { ResolvedSshTarget } from "./options.ts";
import type { SudoTarget } from "./sudo.ts";
import { RemoteShellError } from "../remote/shell.ts";
import type { ExecResult } from "../remote/shell.ts";
import type { Warning } from "../types.ts";

/** Most output kept from a sudo probe or a kill command (they print a few lines). */
const RAW_OUTPUT_BYTES = 1024 * 1024;

/**
 * Pauses before asking again when sshd refuses an open while nothing of
 * ours is open (see {@linkcode SshLink.openChannel}): about 1.3 s in all,
 * then the refusal is final.
 */
const UNFREED_SESSION_RETRY_MS = [5, 10, 20, 40, 80, 160, 320, 640];

/**
 * One SSH destination's connection, as the shells that share it see it.
 * Closed only by {@linkcode SshLink.close} (the shell `connectSsh` returned
 * calls it); after that every shell on it refuses new calls.
 *
 * @example
 * ```ts
 * const link = new SshLink(await resolveSshTarget({ host: "web1" }), "strict", 8);
 * const connection = await link.connection();
 * const { stdout } = await link.rawRun(connection, "sh -c 'id -u'");
 * await link.close();
 * ```
 */
export class SshLink {
  /** `user@host:port` (plus ` via …` for jump hosts). */
  readonly label: string;
  /** Warnings of the connects so far (`insecure_host_key`, `agent_unavailable`). */
  readonly warnings: Warning[] = [];
  /** ssh_config notes of the target. */
  readonly configWarnings: string[];
  /** Host keys appended to known_hosts under accept-new. */
  readonly addedHostKeys: AddedHostKey[] = [];
  /** At most this many programs of all shells on this link run at once. */
  readonly limiter: ChannelLimiter;
  readonly #target: ResolvedSshTarget;
  readonly #policy: HostKeyPolicy;
  #connecting: Promise<Connection> | null = null;
  #closed = false;

  constructor(target: ResolvedSshTarget, policy: HostKeyPolicy, maxChannels: number) {
    this.#target = target;
    this.#policy = policy;
    this.limiter = new ChannelLimiter(maxChannels);
    this.label = target.label;
    this.configWarnings = [...target.configWarnings];
  }

  /** Who logs in where (the last hop), for sudo's messages. Only asked once connected (a refused target has no hops). */
  get sudoTarget(): SudoTarget {
    const last = this.#target.hops.at(-1)!;
    return { user: last.username, host: last.hostName };
  }

  /** True once {@linkcode SshLink.close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The live connection: the current one, or a new one after a drop (one attempt at a time). */
  connection(): Promise<Connection> {
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

  /** End the connection for every shell on it; queued calls reject, running ones see the drop. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.limiter.rejectAll(closedError(this.label));
    const pending = this.#connecting;
    this.#connecting = null;
    const connection = await pending?.catch(() => null);
    if (connection) await endConnection(connection);
  }

  /**
   * Open a channel; when the server refuses (MaxSessions lower than
   * maxChannels), shrink the limit and wait for a channel to close — unless
   * `waitIfRefused` is false (kills: a late kill could hit a reused pgid).
   *
   * A refusal while nothing of ours is open is asked again too, a few times
   * with growing pauses, once a channel of this connection has closed:
   * OpenSSH frees a session only when its main loop collects the closed
   * channel, after dispatching every packet it read together with our CLOSE
   * — so an open sent right after a close (as the next queued program's
   * is), arriving in the same read on a busy host, is refused for a session
   * we already saw end. On a connection that never closed a channel a
   * refusal is final at once (a server that refuses sessions, MaxSessions 0).
   */
  async openChannel(connection: Connection, command: string, waitIfRefused = true): Promise<ClientChannel> {
    let unfreedRetries = 0;
    for (;;) {
      if (connection.dropped) throw notSentError(this.label);
      // Channels already open when this one was asked for: a refusal then
      // may be the server's MaxSessions, not a refusal of the program.
      const openBefore = connection.openChannels;
      const closedBefore = connection.channelsClosed;
      // Counted from the request on: ssh2 may deliver several open replies
      // in one read, before any continuation runs.
      connection.openChannels++;
      try {
        return await openExecChannel(connection.target, command);
      } catch (error) {
        channelDone(connection, false);
        const message = (error as Error).message;
        if (connection.dropped) throw droppedError(this.label, false);
        const refused = waitIfRefused && /open failure/i.test(message);
        if (refused && openBefore > 0) {
          // Those channels may all have closed while the refusal travelled back: then retry at once
          // (a later refusal with nothing open goes through the bounded branch below, so this cannot loop).
          if (connection.openChannels > 0) {
            this.limiter.shrinkTo(connection.openChannels);
            await new Promise<void>((resolve) => connection.channelClosed.push(resolve));
          }
          continue;
        }
        if (refused && closedBefore > 0 && unfreedRetries < UNFREED_SESSION_RETRY_MS.length) {
          // Nothing of ours open, but sshd may not have freed a session we saw close (see above).
          await sleep(UNFREED_SESSION_RETRY_MS[unfreedRetries++]!);
          continue;
        }
        throw channelRefusedError(this.label, message);
      }
    }
  }

  /** Run a command string as is (no wrapper, no limiter): sudo probes and kills. */
  async rawRun(connection: Connection, command: string, stdin?: Uint8Array, waitIfRefused = true): Promise<ExecResult> {
    const channel = await this.openChannel(connection, command, waitIfRefused);
    // Probes and kills print a few lines: keep at most RAW_OUTPUT_BYTES of whatever comes.
    const outcome = await runChannel(channel, stdin, { maxOutputBytes: RAW_OUTPUT_BYTES }).finally(() => channelDone(connection));
    if (!outcome.gotExit && connection.dropped) throw droppedError(this.label, true);
    return { stdout: outcome.stdout, stderr: outcome.stderr, exitCode: outcome.exitCode, signal: outcome.signal };
  }

  async #open(): Promise<Connection> {
    // A configuration OpenSSH would refuse, or a ProxyCommand not allowed: never connect around it.
    if (this.#target.refusal !== null) throw new RemoteShellError(this.#target.refusal, { started: false });
    const { clients } = await connectChain(this.#target.hops, {
      policy: this.#policy,
      warnings: this.warnings,
      addedHostKeys: this.addedHostKeys,
    });
    const connection: Connection = {
      clients,
      target: clients.at(-1)!,
      dropped: false,
      openChannels: 0,
      channelsClosed: 0,
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
