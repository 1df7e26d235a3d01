/**
 * The server's per-path apply queue (issue 28 item 4): applies to the same
 * file run one after the other, in arrival order, instead of racing for
 * the host's lock — where all but one would answer `locked`, or plan
 * against a content that is gone by the time they commit and fail
 * `precondition_failed`. Each queued patch is planned only when its turn
 * comes, against the file as the applies before it left it (the snapshot
 * cache holds their new contents, so the host only proves the SHA-256), so
 * every patch that still applies succeeds and one that no longer does gets
 * a true `context_mismatch` / `conflict` showing the file's new text.
 *
 * Decisions (the issue left them open):
 * - The queue lives in the MCP server, not in `applyPatch`: it is a policy
 *   of a front end that many clients share (one queue for every session of
 *   the server), while the library's own guarantee for concurrent writers —
 *   in this process or any other, on any host — stays the host's path locks
 *   and SHA checks. A library user who runs many applies in one process can
 *   serialise them the same way; the remote locks keep them correct anyway.
 * - A key is the target (local, or the SSH destination as configured) and
 *   the absolute path on it, so two roots that overlap share the queue of
 *   their common files. Two spellings of one host (an alias and its
 *   HostName) get two queues: nothing is lost, they just race at the host's
 *   locks as before.
 * - A patch takes the slots of all its paths (sources and Move targets) in
 *   one synchronous step, in sorted key order, and runs when it is first in
 *   every one of them. Every two patches are thus in the same order in each
 *   queue they share, so no two ever wait for each other (no deadlock).
 * - Bounds: at most `maxWaiting` applies per path, running one included; a
 *   patch that would exceed it is not queued and gets `locked` with
 *   `queue.reason: "full"` and a `retryAfterMs` (about the time the queue
 *   ahead needs, from the measured apply times). A queued patch waits at
 *   most `waitMs` (the root's `timeoutMs`, else {@linkcode DEFAULT_QUEUE_WAIT_MS},
 *   under the SDK client's default 60 s request timeout) and then gets
 *   `locked` with `reason: "wait"`; a cancel while queued removes it: not
 *   applied, nothing written.
 * - Dry runs and apply_patch_fleet are not queued: a dry run writes
 *   nothing, and a fleet's host programs hold their locks for the fleet's
 *   own canary and go-ahead logic.
 *
 * @module
 */

/** Default most applies one path's queue holds (`--queue-length`). */
export const DEFAULT_QUEUE_LENGTH = 128;
/** Default longest wait for a turn when the root sets no `timeoutMs`. */
export const DEFAULT_QUEUE_WAIT_MS = 45_000;

/** What {@linkcode ApplyQueue.enter} answers. */
export type QueueEntry =
  | { ok: true; /** Free the slots (call once, when the apply and its reconcile are done). */ release: () => void; /** Applies that were ahead of this one when it was queued. */ ahead: number; waitedMs: number }
  | { ok: false; reason: "full" | "wait" | "cancelled"; /** The key that was full, or the first key this patch still waited for. */ key: string; waiting: number; waitedMs: number; retryAfterMs: number };

interface Waiter {
  keys: readonly string[];
  wake: (() => void) | null;
}

/**
 * Per-path FIFO slots shared by every session of a server.
 *
 * @example
 * ```ts
 * const queue = new ApplyQueue({ maxWaiting: 128 });
 * const entry = await queue.enter(["local\0/srv/app/a.txt"], { waitMs: 45_000, signal });
 * if (entry.ok) try { await applyPatch(shell, request); } finally { entry.release(); }
 * ```
 */
export class ApplyQueue {
  /** The most applies one path's queue holds, running one included. */
  readonly maxWaiting: number;
  /** Key → its waiters, the first one running. A key with no waiter is deleted (memory: only paths in use). */
  readonly #queues = new Map<string, Waiter[]>();
  /** A moving average of how long one apply holds its slots, for the retry advice. */
  #holdMs = 0;

  constructor(options: { maxWaiting?: number } = {}) {
    this.maxWaiting = options.maxWaiting ?? DEFAULT_QUEUE_LENGTH;
  }

  /**
   * Applies queued for `key` now, the running one included.
   *
   * @example
   * ```ts
   * queue.length("local\0/srv/app/a.txt"); // 0
   * ```
   */
  length(key: string): number {
    return this.#queues.get(key)?.length ?? 0;
  }

  /** Keys with at least one apply queued (a test checks nothing is left behind). */
  get keys(): number {
    return this.#queues.size;
  }

  /**
   * Take a slot in the queue of each key and wait for this patch's turn in
   * all of them, at most `waitMs`, or until `signal` aborts.
   */
  enter(keys: readonly string[], options: { waitMs: number; signal?: AbortSignal; onQueued?: (ahead: number, key: string) => void }): Promise<QueueEntry> {
    const sorted = [...new Set(keys)].sort();
    const started = Date.now();
    const refused = (reason: "full" | "wait" | "cancelled", key: string): QueueEntry => {
      const waiting = this.length(key);
      return { ok: false, reason, key, waiting, waitedMs: reason === "full" ? 0 : Date.now() - started, retryAfterMs: this.#retryAfter(waiting) };
    };
    if (options.signal?.aborted) return Promise.resolve(refused("cancelled", sorted[0] ?? ""));
    const full = sorted.find((key) => this.length(key) >= this.maxWaiting);
    if (full !== undefined) return Promise.resolve(refused("full", full));
    const waiter: Waiter = { keys: sorted, wake: null };
    let ahead = 0;
    let aheadKey = sorted[0] ?? "";
    for (const key of sorted) {
      const queue = this.#queues.get(key) ?? [];
      if (queue.length > ahead) [ahead, aheadKey] = [queue.length, key];
      queue.push(waiter);
      this.#queues.set(key, queue);
    }
    const granted = (): QueueEntry => {
      const got = Date.now();
      let released = false;
      return {
        ok: true,
        ahead,
        waitedMs: got - started,
        release: () => {
          if (released) return;
          released = true;
          const held = Date.now() - got;
          this.#holdMs = this.#holdMs === 0 ? held : this.#holdMs * 0.8 + held * 0.2;
          this.#remove(waiter);
        },
      };
    };
    if (this.#isFirst(waiter)) return Promise.resolve(granted());
    options.onQueued?.(ahead, aheadKey);
    return new Promise<QueueEntry>((resolve) => {
      const finish = (entry: QueueEntry): void => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
        waiter.wake = null;
        resolve(entry);
      };
      const leave = (reason: "wait" | "cancelled"): void => {
        const key = waiter.keys.find((k) => this.#queues.get(k)?.[0] !== waiter) ?? aheadKey;
        this.#remove(waiter);
        finish(refused(reason, key));
      };
      const onAbort = (): void => leave("cancelled");
      const timer = setTimeout(() => leave("wait"), Math.max(0, options.waitMs));
      options.signal?.addEventListener("abort", onAbort, { once: true });
      waiter.wake = () => finish(granted());
    });
  }

  #isFirst(waiter: Waiter): boolean {
    return waiter.keys.every((key) => this.#queues.get(key)?.[0] === waiter);
  }

  /** Take `waiter` out of every queue; wake each waiter that is now first in all of its own. */
  #remove(waiter: Waiter): void {
    const heads = new Set<Waiter>();
    for (const key of waiter.keys) {
      const queue = this.#queues.get(key);
      if (queue === undefined) continue;
      const at = queue.indexOf(waiter);
      if (at >= 0) queue.splice(at, 1);
      if (queue.length === 0) this.#queues.delete(key);
      else heads.add(queue[0]!);
    }
    for (const head of heads) if (head.wake !== null && this.#isFirst(head)) head.wake();
  }

  /** About the time the `waiting` applies ahead need, bounded to [100 ms, 60 s]. */
  #retryAfter(waiting: number): number {
    const each = this.#holdMs > 0 ? this.#holdMs : 250;
    return Math.min(60_000, Math.max(100, Math.ceil(each * Math.max(1, waiting))));
  }
}
