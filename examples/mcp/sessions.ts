/**
 * The HTTP transport's sessions, with a hard cap (issue 26 item 7, issue
 * 28 item 5b): at most `max` sessions exist at any moment — those open and
 * those being opened. A new session takes a free place; with none free,
 * the least recently used session with no call running is closed for it;
 * when every session has a call running, the new one is refused (the
 * caller answers 503 with `Retry-After`). A session leaves the table the
 * moment it is chosen for eviction or closes, so it can never be chosen
 * twice, and clients that never send DELETE cannot grow the server.
 *
 * @module
 */

/** What the table needs to know of a session. */
export interface SessionLike {
  /** Calls running now (a busy session is never evicted). */
  busy(): boolean;
  /** Close it (its transport, its streams); the table has already let it go. */
  close(): Promise<void>;
}

/** A place for a new session, or why there is none. */
export type Reservation<S> =
  | { ok: true; evicted: { id: string; session: S } | null; commit(id: string, session: S): void; release(): void }
  | { ok: false };

/**
 * Sessions by id, bounded.
 *
 * @example
 * ```ts
 * const table = new SessionTable<Entry>(64);
 * const place = table.reserve();
 * if (!place.ok) return refuse(503);
 * // … once the initialize succeeded:
 * place.commit(sessionId, entry); // or place.release() when it failed
 * ```
 */
export class SessionTable<S extends SessionLike> {
  readonly max: number;
  readonly #open = new Map<string, { session: S; lastSeen: number }>();
  #opening = 0;

  constructor(max: number) {
    this.max = max;
  }

  /** Sessions open now. */
  get size(): number {
    return this.#open.size;
  }

  /** Open and being opened: never more than `max`. */
  get live(): number {
    return this.#open.size + this.#opening;
  }

  /**
   * The session with this id (and mark it used now), or undefined.
   *
   * @example
   * ```ts
   * const entry = table.get(req.headers["mcp-session-id"]);
   * ```
   */
  get(id: string): S | undefined {
    const held = this.#open.get(id);
    if (held === undefined) return undefined;
    held.lastSeen = Date.now();
    // Map order is use order: the first entry is the least recently used.
    this.#open.delete(id);
    this.#open.set(id, held);
    return held.session;
  }

  /**
   * A place for one new session: free, or made by evicting the least
   * recently used idle session (closed in the background); `{ ok: false }`
   * when every place is held by a busy session or one being opened.
   *
   * @example
   * ```ts
   * const place = table.reserve();
   * ```
   */
  reserve(): Reservation<S> {
    let evicted: { id: string; session: S } | null = null;
    if (this.live >= this.max) {
      for (const [id, held] of this.#open) {
        if (held.session.busy()) continue;
        this.#open.delete(id);
        evicted = { id, session: held.session };
        void held.session.close().catch(() => {});
        break;
      }
      if (evicted === null) return { ok: false };
    }
    this.#opening++;
    let settled = false;
    const settle = (): void => {
      if (settled) throw new Error("SessionTable: a reservation is settled once");
      settled = true;
      this.#opening--;
    };
    return {
      ok: true,
      evicted,
      commit: (id, session) => {
        settle();
        this.#open.set(id, { session, lastSeen: Date.now() });
      },
      release: settle,
    };
  }

  /**
   * Let a session go (it closed); false when it was not in the table.
   *
   * @example
   * ```ts
   * table.remove(sessionId);
   * ```
   */
  remove(id: string): boolean {
    return this.#open.delete(id);
  }

  /**
   * Sessions idle (not busy) and unused for at least `ms`, removed from the table.
   *
   * @example
   * ```ts
   * for (const [id, s] of table.takeIdle(30 * 60_000)) void s.close();
   * ```
   */
  takeIdle(ms: number, now: number = Date.now()): [string, S][] {
    const out: [string, S][] = [];
    for (const [id, held] of this.#open) {
      if (now - held.lastSeen < ms || held.session.busy()) continue;
      this.#open.delete(id);
      out.push([id, held.session]);
    }
    return out;
  }

  /** Every open session (for shutdown). */
  all(): S[] {
    return [...this.#open.values()].map((h) => h.session);
  }
}
