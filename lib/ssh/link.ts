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
import { backoffDelay } from "./backoff.ts";
import type { Backoff } from "./backoff.ts";
import { ChannelLimiter } from "./channel_limiter.ts";
import type { ChannelSlot } from "./channel_limiter.ts";
import { openExecChannel, runChannel } from "./channel.ts";
import { connectChain } from "./connect.ts";
import type { AddedHostKey, HostKeyPolicy } from "./connect.ts";
import { acceptedBefore, channelDone, endConnection, sleep } from "./connection.ts";
import type { Connection } from "./connection.ts";
import { channelRefusedError, closedError, droppedError, notSentError } from "./failures.ts";
import type { ResolvedSshTarget } from "./options.ts";
import type { SudoTarget } from "./sudo.ts";
import { RemoteShellError } from "../remote/shell.ts";
import type { ExecResult } from "../remote/shell.ts";
import { warning } from "../failure.ts";
import type { Warning } from "../types.ts";

/** Most output kept from a sudo probe or a kill command (they print a few lines). */
const RAW_OUTPUT_BYTES = 1024 * 1024;

/**
 * Pauses before asking again when sshd refuses an open while nothing of
 * ours is open (see {@linkcode SshLink.openChannel}): 8 retries, about
 * 0.6–1.3 s in all, then the refusal is final.
 */
const UNFREED_SESSION_BACKOFF: Backoff = { baseMs: 5, capMs: 640 };
const UNFREED_SESSION_RETRIES = 8;

/**
 * Pauses before asking again when sshd refused an open because this
 * connection held all the sessions it allows (MaxSessions), after a channel
 * of ours closed: the session of a closed channel is freed a moment later
 * (see {@linkcode SshLink.openChannel}), so an open sent at once may be
 * refused again.
 */
const BUSY_BACKOFF: Backoff = { baseMs: 4, capMs: 500 };

/**
 * The limit for a server that holds `accepted` sessions of ours at once:
 * one fewer, so that one session stays free. A program handed the slot of
 * one that just ended opens while sshd may still count the ended one's
 * session (see {@linkcode SshLink.openChannel}) — with every session in
 * use that open is refused, one refusal per program; and a kill on timeout
 * or cancel needs a session of its own while the program still holds its
 * channel. The default maxChannels (8 below MaxSessions 10) keeps room for
 * the same reasons.
 */
function sparing(accepted: number): number {
  return accepted >= 2 ? accepted - 1 : 1;
}

/** Options of {@linkcode SshLink.openChannel}. */
export interface OpenChannelOptions {
  /** Ask again after a refusal (default true); false for kills: a late kill could hit a reused pgid. */
  waitIfRefused?: boolean;
  /** The caller's limiter slot: after a MaxSessions refusal it waits in line again under the lowered limit. */
  slot?: ChannelSlot;
  /** Ends that wait (nothing was started): the open rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Options of the {@linkcode SshLink} constructor. */
export interface SshLinkOptions {
  /** Sees each warning of the link as it is added to `warnings` (connects, a lowered channel limit). */
  onWarning?: (warning: Warning) => void;
}

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
  /** Warnings so far: of the connects (`insecure_host_key`, `agent_unavailable`), `channel_limit_lowered`. */
  readonly warnings: Warning[] = [];
  /** ssh_config notes of the target. */
  readonly configWarnings: string[];
  /** Host keys appended to known_hosts under accept-new. */
  readonly addedHostKeys: AddedHostKey[] = [];
  /** At most this many programs of all shells on this link run at once. */
  readonly limiter: ChannelLimiter;
  readonly #target: ResolvedSshTarget;
  readonly #policy: HostKeyPolicy;
  readonly #maxChannels: number;
  readonly #onWarning: ((warning: Warning) => void) | undefined;
  #connecting: Promise<Connection> | null = null;
  #closed = false;
  #limitWarned = false;
  /** The most channels of ours a server of this link was seen to hold at once: it accepts at least that many. */
  #peak = 0;

  constructor(target: ResolvedSshTarget, policy: HostKeyPolicy, maxChannels: number, options: SshLinkOptions = {}) {
    this.#target = target;
    this.#policy = policy;
    this.#maxChannels = maxChannels;
    this.#onWarning = options.onWarning;
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
   * Open a channel, asking again when sshd refuses it for lack of a free
   * session — unless `waitIfRefused` is false.
   *
   * - Refused while sshd held channels of ours (they were opened before this
   *   one and are still open: sshd answers opens in order, so they were
   *   accepted): MaxSessions. The connection's channel limit is lowered to
   *   one below that number, or below the most channels the server was seen
   *   to hold at once if more (see {@linkcode sparing}; raised with a later
   *   such figure, never above maxChannels; one `channel_limit_lowered`
   *   warning per link). The caller's slot waits in line again under the
   *   new limit — let go when one of our programs ends, one call at a time —
   *   and then pauses a little more (exponential backoff with jitter, at
   *   most 0.5 s) before asking again. A call without a slot (a sudo probe)
   *   waits for one of our channels to close instead.
   * - Refused while nothing of ours is open, after a channel of this
   *   connection closed: OpenSSH frees a session only when its main loop
   *   collects the closed channel, after dispatching every packet it read
   *   together with our CLOSE — so an open sent right after a close (as the
   *   next queued program's is), arriving in the same read on a busy host,
   *   is refused for a session we already saw end. Asked again a few times
   *   with growing, jittered pauses (about 1 s in all).
   * - On a connection that never closed a channel, with nothing of ours
   *   open, a refusal is final at once (a server that refuses sessions,
   *   MaxSessions 0).
   */
  async openChannel(connection: Connection, command: string, options: OpenChannelOptions = {}): Promise<ClientChannel> {
    const waitIfRefused = options.waitIfRefused ?? true;
    let unfreedRetries = 0;
    let busyRetries = 0;
    for (;;) {
      if (connection.dropped) throw notSentError(this.label);
      const closedBefore = connection.channelsClosed;
      // Counted from the request on: ssh2 may deliver several open replies
      // in one read, before any continuation runs.
      const number = connection.nextOpen++;
      connection.alive.add(number);
      connection.openChannels++;
      try {
        const channel = await openExecChannel(connection.target, command);
        connection.openNumber.set(channel, number);
        this.#sawHeld(acceptedBefore(connection, number) + 1);
        return channel;
      } catch (error) {
        connection.alive.delete(number);
        channelDone(connection, null);
        const message = (error as Error).message;
        if (connection.dropped) throw droppedError(this.label, false);
        const refused = waitIfRefused && /open failure/i.test(message);
        if (!refused) throw channelRefusedError(this.label, message);
        const accepted = acceptedBefore(connection, number);
        if (accepted > 0) {
          this.#lowerLimit(Math.max(accepted, this.#peak));
          busyRetries++;
          if (options.slot !== undefined) await options.slot.requeue(options.signal);
          else await this.#untilAChannelCloses(connection, options.signal);
          await sleep(backoffDelay(busyRetries, BUSY_BACKOFF));
          continue;
        }
        if (closedBefore > 0 && unfreedRetries < UNFREED_SESSION_RETRIES) {
          // Nothing of ours open, but sshd may not have freed a session we saw close (see above).
          await sleep(backoffDelay(++unfreedRetries, UNFREED_SESSION_BACKOFF));
          continue;
        }
        throw channelRefusedError(this.label, message);
      }
    }
  }

  /** Resolves when a channel of the connection closes or it drops (at once when none of ours is open). */
  #untilAChannelCloses(connection: Connection, signal: AbortSignal | undefined): Promise<void> {
    if (connection.alive.size === 0 || connection.dropped) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = (): void => reject(signal!.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      connection.channelClosed.push(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      });
    });
  }

  /**
   * sshd held `held` channels of ours at once. Once the limit was lowered,
   * a higher figure raises it back towards maxChannels: the number held
   * when a refusal came may be short of what the server accepts (a session
   * sshd had not yet freed counted against it), and this one is not.
   */
  #sawHeld(held: number): void {
    if (held <= this.#peak) return;
    this.#peak = held;
    if (this.#limitWarned) this.limiter.raiseTo(Math.min(this.#maxChannels, sparing(held)));
  }

  /** sshd refused an open while it accepts at least `accepted` of ours: run at most that many at once from now on. */
  #lowerLimit(accepted: number): void {
    const limit = sparing(accepted);
    if (limit >= this.limiter.limit) return;
    this.limiter.shrinkTo(limit);
    if (this.#limitWarned) return;
    this.#limitWarned = true;
    this.#warn(warning(
      "channel_limit_lowered",
      `${this.label} refused a session channel while it held ${accepted} of this connection's (its sshd MaxSessions, ` +
        `10 unless configured): at most ${this.limiter.limit} programs now run at once on this connection instead of ` +
        `maxChannels ${this.#maxChannels} (one session kept free), and the calls beyond that wait in line. Set maxChannels ` +
        `${this.limiter.limit} for this host, or raise MaxSessions on the server, to skip the refused opens.`,
    ));
  }

  /** Record a warning and hand it to `onWarning`. */
  #warn(w: Warning): void {
    this.warnings.push(w);
    try {
      this.#onWarning?.(w);
    } catch {
      // a throwing callback must not break the call that warned
    }
  }

  /** Run a command string as is (no wrapper, no limiter): sudo probes and kills. */
  async rawRun(connection: Connection, command: string, stdin?: Uint8Array, waitIfRefused = true): Promise<ExecResult> {
    const channel = await this.openChannel(connection, command, { waitIfRefused });
    // Probes and kills print a few lines: keep at most RAW_OUTPUT_BYTES of whatever comes.
    const outcome = await runChannel(channel, stdin, { maxOutputBytes: RAW_OUTPUT_BYTES }).finally(() => channelDone(connection, channel));
    if (!outcome.gotExit && connection.dropped) throw droppedError(this.label, true);
    return { stdout: outcome.stdout, stderr: outcome.stderr, exitCode: outcome.exitCode, signal: outcome.signal };
  }

  async #open(): Promise<Connection> {
    // A configuration OpenSSH would refuse, or a ProxyCommand not allowed: never connect around it.
    if (this.#target.refusal !== null) throw new RemoteShellError(this.#target.refusal, { started: false });
    const seen = this.warnings.length;
    const { clients } = await connectChain(this.#target.hops, {
      policy: this.#policy,
      warnings: this.warnings,
      addedHostKeys: this.addedHostKeys,
    }).finally(() => {
      // The connect pushed its warnings into the array itself: hand the new ones on.
      for (const w of this.warnings.slice(seen)) {
        try {
          this.#onWarning?.(w);
        } catch {
          // as in #warn
        }
      }
    });
    const connection: Connection = {
      clients,
      target: clients.at(-1)!,
      dropped: false,
      openChannels: 0,
      channelsClosed: 0,
      channelClosed: [],
      nextOpen: 0,
      alive: new Set(),
      openNumber: new WeakMap(),
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
