/**
 * The stdio transport of the example server, in place of the SDK's
 * `StdioServerTransport`, because sizes must be coherent end to end
 * (SPEC §9 round 2):
 *
 * - The SDK's transport keeps at most 10 MiB of unread input and, past
 *   that, closes itself and pauses stdin: the server then never answers
 *   again and never sees EOF (a 12 MB patch wedged it for good). Here one
 *   message may be as large as `maxMessageBytes` (the entry sizes it from
 *   the largest root's maxPatchBytes, with room for JSON escaping), chunks
 *   are joined once per message (not re-concatenated per chunk), and a
 *   larger message is skipped as it streams in — only its top-level `id`
 *   and `method` are kept (oversize.ts) — and answered with a JSON-RPC
 *   error that states the limit. The next message is read normally.
 * - A line that is not JSON, or not JSON-RPC, gets the standard error
 *   answer (-32700, -32600) instead of being dropped.
 * - The end of the transport is reported once with its reason
 *   (`onclosed`): stdin ended, stdin or stdout failed (EPIPE when the
 *   client is gone), or `close()`. The entry logs it and exits with a code
 *   that says whether every request was answered. Only a broken stdout
 *   (nothing can be answered any more) or `close()` also fire `onclose`,
 *   which makes the SDK abort running handlers: after the end of stdin,
 *   running calls still finish and answer (a commit is never cut short
 *   because the client closed its side first).
 *
 * @module
 */
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { TopLevelScanner } from "./oversize.ts";

/** The streams the transport uses (process.stdin / process.stdout by default). */
export interface StdioStreams {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
}

/** Why the transport ended. */
export type CloseReason =
  | { kind: "stdin-ended" }
  | { kind: "stdin-error"; error: Error }
  | { kind: "stdout-error"; error: Error }
  | { kind: "closed" };

/** Options of {@linkcode BoundedStdioTransport}. */
export interface BoundedStdioOptions {
  /** Most bytes of one message (one line). */
  maxMessageBytes: number;
  /** What the limit means for a tool call, added to the oversize error (e.g. "patches up to 16777216 bytes"). */
  limitNote?: string;
  /** Problems worth a log line (oversize or malformed input). */
  log?: (line: string) => void;
}

const NEWLINE = 0x0a;

/**
 * Newline-delimited JSON-RPC over stdin/stdout with a per-message size
 * bound (see the module doc).
 *
 * @example
 * ```ts
 * const transport = new BoundedStdioTransport({ maxMessageBytes: 100 << 20 });
 * transport.onclosed = (why) => console.error(why.kind);
 * await server.connect(transport);
 * ```
 */
export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Called once, with the reason, when the transport ends. */
  onclosed?: (reason: CloseReason) => void;
  readonly #stdin: NodeJS.ReadableStream;
  readonly #stdout: NodeJS.WritableStream;
  readonly #max: number;
  readonly #note: string;
  readonly #log: (line: string) => void;
  #chunks: Uint8Array[] = [];
  #size = 0;
  /** Set while an oversize message is being skipped. */
  #skipping: { scanner: TopLevelScanner; bytes: number } | null = null;
  #ended: CloseReason | null = null;
  #writeFailed: Error | null = null;

  constructor(options: BoundedStdioOptions, streams: StdioStreams = { stdin: process.stdin, stdout: process.stdout }) {
    this.#stdin = streams.stdin;
    this.#stdout = streams.stdout;
    this.#max = options.maxMessageBytes;
    this.#note = options.limitNote ?? "";
    this.#log = options.log ?? (() => {});
  }

  /** The reason the transport ended, or null while it runs. */
  get ended(): CloseReason | null {
    return this.#ended;
  }

  start(): Promise<void> {
    this.#stdin.on("data", this.#onData);
    this.#stdin.on("end", this.#onEnd);
    this.#stdin.on("error", this.#onStdinError);
    this.#stdout.on("error", this.#onStdoutError);
    return Promise.resolve();
  }

  send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    if (this.#writeFailed !== null) return Promise.reject(this.#writeFailed);
    return new Promise((resolve, reject) => {
      const text = JSON.stringify(message) + "\n";
      const ok = this.#stdout.write(text, (error) => {
        if (error) reject(error);
      });
      if (ok) resolve();
      else this.#stdout.once("drain", () => resolve());
    });
  }

  close(): Promise<void> {
    this.#end({ kind: "closed" }, true);
    return Promise.resolve();
  }

  #onData = (chunk: Uint8Array | string): void => {
    let bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
    while (bytes.length > 0) {
      const newline = bytes.indexOf(NEWLINE);
      const part = newline < 0 ? bytes : bytes.subarray(0, newline);
      this.#take(part);
      if (newline < 0) return;
      this.#lineEnded();
      bytes = bytes.subarray(newline + 1);
    }
  };

  #take(part: Uint8Array): void {
    if (part.length === 0) return;
    if (this.#skipping !== null) {
      this.#skipping.scanner.push(part);
      this.#skipping.bytes += part.length;
      return;
    }
    if (this.#size + part.length > this.#max) {
      // Too large to keep: scan what we have and everything that follows, keep nothing.
      const scanner = new TopLevelScanner();
      for (const chunk of this.#chunks) scanner.push(chunk);
      scanner.push(part);
      this.#skipping = { scanner, bytes: this.#size + part.length };
      this.#chunks = [];
      this.#size = 0;
      return;
    }
    // Copy: the stream may reuse its buffer.
    this.#chunks.push(part.slice());
    this.#size += part.length;
  }

  #lineEnded(): void {
    if (this.#skipping !== null) {
      const { scanner, bytes } = this.#skipping;
      this.#skipping = null;
      this.#oversize(scanner, bytes);
      return;
    }
    const chunks = this.#chunks;
    this.#chunks = [];
    this.#size = 0;
    if (chunks.length === 0) return;
    const whole = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    let text = new TextDecoder().decode(whole);
    if (text.endsWith("\r")) text = text.slice(0, -1);
    if (text.trim() === "") return;
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      this.#log(`stdin: a line of ${whole.length} bytes is not JSON (${(error as Error).message}); answered with a parse error`);
      this.#reply(null, -32700, "Parse error: the message is not valid JSON");
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(data);
    if (!parsed.success) {
      const id = typeof data === "object" && data !== null && "id" in data ? (data as { id: unknown }).id : null;
      this.#log(`stdin: a JSON line that is not a JSON-RPC message; answered with invalid request`);
      if (typeof id === "string" || typeof id === "number") this.#reply(id, -32600, "Invalid Request: not a JSON-RPC 2.0 message");
      else if (!(typeof data === "object" && data !== null && !("id" in data) && "method" in data)) this.#reply(null, -32600, "Invalid Request: not a JSON-RPC 2.0 message");
      return;
    }
    this.onmessage?.(parsed.data);
  }

  #oversize(scanner: TopLevelScanner, bytes: number): void {
    const what = scanner.method !== undefined ? `${scanner.method} request` : "message";
    const message = `Request too large: this ${what} is ${bytes} bytes; this server accepts messages of at most ${this.#max} bytes${
      this.#note ? ` (${this.#note})` : ""
    }. Nothing was done. Send less in one call (e.g. split the patch into several patches).`;
    this.#log(`stdin: ${what} of ${bytes} bytes exceeds the limit of ${this.#max} bytes; answered with an error${scanner.id === undefined ? " without an id (none found)" : ""}`);
    // A notification (no id) gets no answer, as JSON-RPC says; an unknown id gets null.
    if (scanner.id === undefined && scanner.method !== undefined) return;
    this.#reply(scanner.id ?? null, -32600, message, { limit_bytes: this.#max, actual_bytes: bytes });
  }

  #reply(id: string | number | null, code: number, message: string, data?: Record<string, unknown>): void {
    const error = { code, message, ...(data ? { data } : {}) };
    // JSONRPCMessage has no id-null error shape in the SDK's types; the wire format allows it.
    this.send({ jsonrpc: "2.0", id, error } as unknown as JSONRPCMessage).catch(() => {});
  }

  #onEnd = (): void => this.#end({ kind: "stdin-ended" }, false);
  #onStdinError = (error: Error): void => this.#end({ kind: "stdin-error", error }, false);
  #onStdoutError = (error: Error): void => {
    this.#writeFailed = error;
    this.#end({ kind: "stdout-error", error }, true);
  };

  #closed = false;

  #end(reason: CloseReason, close: boolean): void {
    if (this.#ended === null) {
      this.#ended = reason;
      this.#stdin.off("data", this.#onData);
      this.#chunks = [];
      this.#skipping = null;
      this.onclosed?.(reason);
    }
    if (close && !this.#closed) {
      this.#closed = true;
      this.onclose?.();
    }
  }
}
