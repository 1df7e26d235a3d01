/**
 * A transport wrapper with two jobs the SDK has no hook for:
 *
 * - hidden tool aliases: the SDK lists every enabled tool and refuses calls
 *   to disabled ones, so an alias cannot be a registered tool; instead a
 *   `tools/call` for an alias is renamed to the real tool before the server
 *   sees it, and `tools/list` shows only the real name;
 * - knowing when every request has been answered, so that shutdown can let
 *   a running commit finish and its response be written (closing the server
 *   aborts running handlers, and a commit cut part-way ends as
 *   outcome_unknown).
 *
 * @module
 */
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from "@modelcontextprotocol/sdk/types.js";

/** Aliases accepted by the example server (SPEC §9): some models spell the tool with a dash. */
export const TOOL_ALIASES: Readonly<Record<string, string>> = Object.freeze({ "apply-patch": "apply_patch" });

/**
 * Wraps the real transport (stdio, in-memory, …); pass it to `server.connect`.
 *
 * @example
 * ```ts
 * const transport = new ServerTransport(new StdioServerTransport(), TOOL_ALIASES);
 * await server.connect(transport);
 * // on shutdown:
 * await transport.idle();
 * ```
 */
export class ServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  readonly #inner: Transport;
  readonly #aliases: Readonly<Record<string, string>>;
  readonly #pending = new Set<RequestId>();
  #undelivered = 0;
  #wake: (() => void)[] = [];

  constructor(inner: Transport, aliases: Readonly<Record<string, string>> = TOOL_ALIASES) {
    this.#inner = inner;
    this.#aliases = aliases;
    inner.onmessage = (message, extra) => {
      if ("method" in message && "id" in message) this.#pending.add(message.id);
      // The SDK sends no response to a request the client cancelled.
      if ("method" in message && message.method === "notifications/cancelled") this.#answered(message.params?.requestId as RequestId);
      this.onmessage?.(this.#renamed(message), extra);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    try {
      await this.#inner.send(message, options);
    } catch (error) {
      this.#undelivered++;
      throw error;
    } finally {
      // A handler that finished counts as done even when its answer could
      // not be written (the client is gone): idle() must not wait for it.
      if (!("method" in message) && "id" in message && message.id !== undefined) this.#answered(message.id);
    }
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  setProtocolVersion(version: string): void {
    this.#inner.setProtocolVersion?.(version);
  }

  /** Requests received and not answered yet. */
  get unanswered(): number {
    return this.#pending.size;
  }

  /** Messages that could not be written (the client is gone). */
  get undelivered(): number {
    return this.#undelivered;
  }

  /** Resolves once every request received so far has been answered or cancelled by the client. */
  idle(): Promise<void> {
    if (this.#pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#wake.push(resolve));
  }

  #answered(id: RequestId): void {
    if (this.#pending.delete(id) && this.#pending.size === 0) for (const wake of this.#wake.splice(0)) wake();
  }

  #renamed(message: JSONRPCMessage): JSONRPCMessage {
    if (!("method" in message) || message.method !== "tools/call" || !("id" in message)) return message;
    const name = message.params?.name;
    if (typeof name !== "string" || !Object.hasOwn(this.#aliases, name)) return message;
    return { ...message, params: { ...message.params, name: this.#aliases[name] } };
  }
}
