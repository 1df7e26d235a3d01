/**
 * Bookkeeping of one pooled SSH connection (open channels, waiters for a
 * free session, ending it) and the small waiting helpers the adapter uses.
 *
 * @module
 */
import type { Client, ClientChannel } from "ssh2";

/**
 * One live SSH connection (the target client, plus jump clients before it).
 * Shared by every shell of one link (a shell and its `withSudo` views); each
 * keeps its own sudo elevation per connection (a new one validates again).
 */
export interface Connection {
  clients: Client[];
  target: Client;
  dropped: boolean;
  /** Opens sent and not refused, plus open channels (counted from the request on). */
  openChannels: number;
  /** Channels of this connection that were open and have closed (failed opens not counted). */
  channelsClosed: number;
  /** Woken when a channel of this connection closes, and when it drops. */
  channelClosed: (() => void)[];
  /** Number of the next open sent: sshd answers opens in the order they were sent. */
  nextOpen: number;
  /** The numbers of the opens sent and not refused, and of the channels still open. */
  alive: Set<number>;
  /** Each open channel's number in `alive`. */
  openNumber: WeakMap<ClientChannel, number>;
}

/**
 * A channel of `connection` closed (or its open was refused: `channel`
 * null): count it and, for a channel that was open, wake the calls waiting
 * for a free session. A refused open frees nothing on the server: waking
 * every waiter on it made each refusal cause the next ones (issue 28).
 *
 * @example
 * ```ts
 * runChannel(channel, stdin, {}).finally(() => channelDone(connection, channel));
 * ```
 */
export function channelDone(connection: Connection, channel: ClientChannel | null): void {
  connection.openChannels--;
  if (channel === null) return;
  const number = connection.openNumber.get(channel);
  if (number !== undefined) connection.alive.delete(number);
  connection.channelsClosed++;
  for (const wake of connection.channelClosed.splice(0)) wake();
}

/**
 * How many opens sent before open `number` were accepted and are still
 * open: when sshd refuses `number`, all of those were confirmed (it answers
 * in order), so this is what it held of ours when it refused.
 *
 * @example
 * ```ts
 * const accepted = acceptedBefore(connection, number);
 * ```
 */
export function acceptedBefore(connection: Connection, number: number): number {
  let count = 0;
  for (const n of connection.alive) if (n < number) count++;
  return count;
}

/**
 * End every client of a connection (target first) and wait briefly for the
 * target's close.
 *
 * @example
 * ```ts
 * await endConnection(connection);
 * ```
 */
export async function endConnection(connection: Connection): Promise<void> {
  if (connection.dropped) {
    for (const client of connection.clients) client.end();
    return;
  }
  connection.dropped = true;
  const closed = new Promise<void>((resolve) => connection.target.once("close", () => resolve()));
  for (const client of [...connection.clients].reverse()) client.end();
  await Promise.race([closed, sleep(2000)]);
}

/**
 * `promise`, unless `signal` aborts first: then reject with `onAbort()`
 * (the promise keeps running; its later rejection is absorbed).
 *
 * @example
 * ```ts
 * const connection = await untilAborted(connect(), signal, () => new Error("stopped"));
 * ```
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, onAbort: () => Error): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(onAbort());
  }
  return new Promise((resolve, reject) => {
    const abort = (): void => reject(onAbort());
    signal.addEventListener("abort", abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}

/**
 * Resolve after `ms` without keeping the process alive.
 *
 * @example
 * ```ts
 * await Promise.race([work, sleep(3000)]);
 * ```
 */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref?.();
  });
}
