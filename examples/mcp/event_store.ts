/**
 * Resumable SSE streams for the HTTP transport (issue 26 item 7): the SDK
 * transport's `eventStore`, so every SSE event carries an `id:` and a GET
 * with `Last-Event-ID` replays what the client missed — a result whose
 * stream broke while the call ran is not lost.
 *
 * One {@linkcode ReplayBuffer} holds the events of every session, oldest
 * first out, within one byte budget (`--replay-bytes`) and an event count,
 * so its memory is bounded whatever the number of sessions. Each session
 * sees only its own events through {@linkcode ReplayBuffer.storeFor}, and
 * numbers them itself (1, 2, 3… per session): an id says nothing about
 * another session's traffic, and one session's ids mean nothing in another's
 * resume. A resume whose missed
 * events were dropped to stay within the budget is refused as such (a
 * partial replay would leave the client waiting for an answer that never
 * comes).
 *
 * @module
 */
import type { EventStore } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

interface Stored {
  session: string;
  /** The session's own sequence number: the id its client sees. */
  seq: number;
  stream: string;
  message: JSONRPCMessage;
  bytes: number;
}

/** Most events kept, whatever their size (each costs a little besides its bytes). */
export const MAX_REPLAY_EVENTS = 20_000;

/**
 * The events of all sessions, bounded.
 *
 * @example
 * ```ts
 * const buffer = new ReplayBuffer(16 * 1024 * 1024);
 * const transport = new StreamableHTTPServerTransport({ sessionIdGenerator, eventStore: buffer.storeFor(key) });
 * // when the session ends:
 * buffer.drop(key);
 * ```
 */
export class ReplayBuffer {
  readonly maxBytes: number;
  readonly maxEvents: number;
  /** Insertion order is age: the first entry is the oldest. Keys are {@linkcode keyOf} (session and its sequence number). */
  readonly #events = new Map<string, Stored>();
  /** Per session: the last sequence number it issued. */
  readonly #lastSeq = new Map<string, number>();
  /** Per session: the newest sequence number dropped for the budget (its events up to there are gone). */
  readonly #droppedUpTo = new Map<string, number>();
  #bytes = 0;

  constructor(maxBytes: number, maxEvents: number = MAX_REPLAY_EVENTS) {
    this.maxBytes = maxBytes;
    this.maxEvents = maxEvents;
  }

  /** Bytes and events held now (all sessions). */
  get stats(): { bytes: number; events: number } {
    return { bytes: this.#bytes, events: this.#events.size };
  }

  /**
   * The SDK `EventStore` of one session.
   *
   * @example
   * ```ts
   * const store = buffer.storeFor("3f2a…");
   * ```
   */
  storeFor(session: string): EventStore {
    return {
      storeEvent: (stream, message) => Promise.resolve(this.#store(session, stream, message)),
      getStreamIdForEventId: (eventId) => Promise.resolve(this.#own(session, eventId)?.stream),
      replayEventsAfter: async (lastEventId, { send }) => {
        const from = this.#own(session, lastEventId);
        if (from === undefined) throw new Error(`unknown event id ${lastEventId}`);
        // Collected first: sending awaits, and storing meanwhile may evict.
        const after: [string, JSONRPCMessage][] = [];
        for (const event of this.#events.values()) {
          if (event.session === session && event.stream === from.stream && event.seq > from.seq) after.push([String(event.seq), event.message]);
        }
        for (const [id, message] of after) await send(id, message);
        return from.stream;
      },
    };
  }

  /**
   * Why a resume from `lastEventId` cannot replay everything the session
   * missed, or null when it can.
   *
   * @example
   * ```ts
   * const problem = buffer.resumeProblem(key, req.headers["last-event-id"]);
   * ```
   */
  resumeProblem(session: string, lastEventId: string): string | null {
    const seq = /^\d{1,15}$/.test(lastEventId) ? Number(lastEventId) : NaN;
    if (Number.isNaN(seq)) return `Last-Event-ID ${JSON.stringify(lastEventId.slice(0, 40))} is not an event id of this server`;
    if (seq <= (this.#droppedUpTo.get(session) ?? 0)) {
      return `the events after Last-Event-ID ${seq} were dropped to keep the replay buffer within ${this.maxBytes} bytes (--replay-bytes): they cannot be replayed; send the requests again (read_file first: a patch may already be applied)`;
    }
    if (this.#own(session, lastEventId) === undefined) return `Last-Event-ID ${seq} is not an event of this session (its last is ${this.#lastSeq.get(session) ?? 0})`;
    return null;
  }

  /**
   * Forget a session's events (it closed).
   *
   * @example
   * ```ts
   * buffer.drop(key);
   * ```
   */
  drop(session: string): void {
    for (const [key, event] of this.#events) {
      if (event.session !== session) continue;
      this.#events.delete(key);
      this.#bytes -= event.bytes;
    }
    this.#droppedUpTo.delete(session);
    this.#lastSeq.delete(session);
  }

  #own(session: string, eventId: string): Stored | undefined {
    if (!/^\d{1,15}$/.test(eventId)) return undefined;
    return this.#events.get(keyOf(session, Number(eventId)));
  }

  #store(session: string, stream: string, message: JSONRPCMessage): string {
    const seq = (this.#lastSeq.get(session) ?? 0) + 1;
    this.#lastSeq.set(session, seq);
    // What the transport writes is this JSON (UTF-16 length: close enough to bound it).
    const bytes = JSON.stringify(message).length + stream.length + 64;
    this.#events.set(keyOf(session, seq), { session, seq, stream, message, bytes });
    this.#bytes += bytes;
    for (const [old, event] of this.#events) {
      if (this.#bytes <= this.maxBytes && this.#events.size <= this.maxEvents) break;
      this.#events.delete(old);
      this.#bytes -= event.bytes;
      this.#droppedUpTo.set(event.session, event.seq);
    }
    return String(seq);
  }
}

/** The map key of a session's event (session ids are the transport's UUIDs: no NUL in them). */
function keyOf(session: string, seq: number): string {
  return `${session}\0${seq}`;
}
