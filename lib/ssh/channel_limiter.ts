/**
 * A FIFO counting semaphore for SSH session channels.
 *
 * OpenSSH allows `MaxSessions` (default 10) session channels per connection
 * and ssh2 does not queue beyond that: an extra open just fails. The adapter
 * keeps at most `limit` programs running and queues the rest. When a server
 * turns out to allow fewer than `limit`, {@linkcode ChannelLimiter.shrinkTo}
 * lowers the limit to what was actually open.
 *
 * @module
 */

/** A granted slot; call `release` exactly once. */
export interface ChannelSlot {
  release(): void;
}

interface Waiter {
  grant: (slot: ChannelSlot) => void;
  reject: (reason: unknown) => void;
}

/**
 * FIFO semaphore with abortable waits.
 *
 * @example
 * ```ts
 * const limiter = new ChannelLimiter(8);
 * const slot = await limiter.acquire(signal);
 * try { await run(); } finally { slot.release(); }
 * ```
 */
export class ChannelLimiter {
  #limit: number;
  #active = 0;
  readonly #queue: Waiter[] = [];

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new TypeError("maxChannels must be an integer >= 1");
    this.#limit = limit;
  }

  /** The current limit (may have shrunk). */
  get limit(): number {
    return this.#limit;
  }

  /** Slots in use. */
  get active(): number {
    return this.#active;
  }

  /** Calls waiting for a slot. */
  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Wait for a slot. Rejects with `abortReason()` (or the signal's reason)
   * when `signal` aborts first; the waiter then leaves the queue.
   */
  acquire(signal?: AbortSignal): Promise<ChannelSlot> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#active < this.#limit && this.#queue.length === 0) {
      this.#active++;
      return Promise.resolve(this.#slot());
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: (slot) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(slot);
        },
        reject,
      };
      const onAbort = (): void => {
        const index = this.#queue.indexOf(waiter);
        if (index >= 0) this.#queue.splice(index, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  /** Lower the limit to `limit` (at least 1), e.g. after a server refused a channel. */
  shrinkTo(limit: number): void {
    this.#limit = Math.max(1, Math.min(this.#limit, limit));
  }

  /** Reject every queued waiter (e.g. the shell is closing). */
  rejectAll(reason: unknown): void {
    for (const waiter of this.#queue.splice(0)) waiter.reject(reason);
  }

  #slot(): ChannelSlot {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#active--;
        this.#drain();
      },
    };
  }

  #drain(): void {
    while (this.#active < this.#limit && this.#queue.length > 0) {
      this.#active++;
      this.#queue.shift()!.grant(this.#slot());
    }
  }
}
