/**
 * A FIFO counting semaphore for SSH session channels.
 *
 * OpenSSH allows `MaxSessions` (default 10) session channels per connection
 * and ssh2 does not queue beyond that: an extra open just fails. The adapter
 * keeps at most `limit` programs running and queues the rest. When a server
 * turns out to allow fewer than `limit`, {@linkcode ChannelLimiter.shrinkTo}
 * lowers the limit, and a call whose open was refused gives its slot back
 * and waits in line again ({@linkcode ChannelSlot.requeue}): it is let go
 * only when a program ends under the lower limit, one at a time — never all
 * refused calls at once on every close (issue 28: 34,927 refused opens in
 * 15 s).
 *
 * @module
 */

/** A granted slot; call `release` exactly once. */
export interface ChannelSlot {
  release(): void;
  /**
   * Give the slot back and wait for it again, ahead of the calls that never
   * had one (they came later). Resolves once the slot is held again under
   * the current limit; rejects with the signal's reason when `signal`
   * aborts first — the slot is then not held, and `release` is a no-op.
   */
  requeue(signal?: AbortSignal): Promise<void>;
}

interface Waiter {
  grant: () => void;
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
  /** Waiters that held a slot and gave it back (they go first). */
  readonly #requeued = new WeakSet<Waiter>();

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
    return this.#wait(signal, false).then(() => this.#slot());
  }

  /** Lower the limit to `limit` (at least 1), e.g. after a server refused a channel. */
  shrinkTo(limit: number): void {
    this.#limit = Math.max(1, Math.min(this.#limit, limit));
  }

  /** Raise the limit to `limit` and let waiting calls go under it (the caller bounds it). */
  raiseTo(limit: number): void {
    if (limit <= this.#limit) return;
    this.#limit = limit;
    this.#drain();
  }

  /** Queue a waiter (at the front when it held a slot before); resolves when it holds one (counted in `active`). */
  #wait(signal: AbortSignal | undefined, first: boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        reject,
      };
      const onAbort = (): void => {
        const index = this.#queue.indexOf(waiter);
        if (index >= 0) this.#queue.splice(index, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      if (first) {
        // Behind the other calls given back before it, ahead of those that never held a slot.
        let at = 0;
        while (at < this.#queue.length && this.#requeued.has(this.#queue[at]!)) at++;
        this.#queue.splice(at, 0, waiter);
        this.#requeued.add(waiter);
      } else {
        this.#queue.push(waiter);
      }
    });
  }

  /** Reject every queued waiter (e.g. the shell is closing). */
  rejectAll(reason: unknown): void {
    for (const waiter of this.#queue.splice(0)) waiter.reject(reason);
  }

  #slot(): ChannelSlot {
    let held = true;
    let released = false;
    const give = (): void => {
      held = false;
      this.#active--;
    };
    return {
      release: () => {
        if (released) return;
        released = true;
        if (!held) return;
        give();
        this.#drain();
      },
      requeue: async (signal?: AbortSignal) => {
        if (released || !held) throw new Error("ChannelLimiter: requeue of a slot not held");
        if (signal?.aborted) throw signal.reason;
        give();
        const waiting = this.#wait(signal, true);
        this.#drain();
        await waiting;
        held = true;
      },
    };
  }

  #drain(): void {
    while (this.#active < this.#limit && this.#queue.length > 0) {
      this.#active++;
      this.#queue.shift()!.grant();
    }
  }
}
