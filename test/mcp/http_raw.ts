/**
 * Raw Streamable HTTP for the transport tests: one request with chosen
 * headers (no SDK client, so every status and header is visible), SSE
 * events parsed with their ids, and a stream read up to a chosen event
 * then cut (a client whose connection broke).
 *
 * @module
 */
import { request } from "node:http";
import type { IncomingHttpHeaders } from "node:http";

/** Where the server listens: a TCP URL, or a Unix socket. */
export type Target = { url: URL } | { socketPath: string };

/** A finished response. */
export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The SSE events of the body (empty for JSON). */
  events: SseEvent[];
}

/** One SSE event. */
export interface SseEvent {
  id: string | null;
  data: string;
}

const JSON_SSE = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** An initialize request body. */
export function initializeBody(id: number | string = 1, protocolVersion = "2025-11-25"): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method: "initialize", params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
}

/** A tools/call request body. */
export function callBody(id: number, name: string, args: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
}

function options(target: Target, method: string, path: string | undefined, headers: Record<string, string | number>) {
  const where = "url" in target ? { host: "127.0.0.1", port: Number(target.url.port) } : { socketPath: target.socketPath };
  return { ...where, path: path ?? ("url" in target ? target.url.pathname + target.url.search : "/mcp"), method, headers };
}

/**
 * Send one request and read the whole response.
 *
 * @example
 * ```ts
 * const r = await raw({ url }, "POST", initializeBody(), { authorization: `Bearer ${token}` });
 * ```
 */
export function raw(target: Target, method: string, body: string | null, headers: Record<string, string> = {}, path?: string): Promise<RawResponse> {
  const all: Record<string, string | number> = { ...(body !== null ? JSON_SSE : { accept: "text/event-stream" }), ...headers };
  if (body !== null) all["content-length"] = Buffer.byteLength(body);
  return new Promise((resolve, reject) => {
    const req = request(options(target, method, path, all), (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: text, events: parseSse(text) }));
    });
    req.on("error", reject);
    req.end(body ?? undefined);
  });
}

/**
 * Send one request and read its SSE stream until `stop(event)` is true,
 * then cut the connection (the client vanished); resolves what arrived.
 *
 * @example
 * ```ts
 * const { events } = await readUntil(target, "POST", callBody(2, "read_file", { path }), headers, () => true); // cut after the first event
 * ```
 */
export function readUntil(
  target: Target,
  method: string,
  body: string | null,
  headers: Record<string, string>,
  stop: (event: SseEvent) => boolean,
): Promise<{ status: number; headers: IncomingHttpHeaders; events: SseEvent[] }> {
  const all: Record<string, string | number> = { ...(body !== null ? JSON_SSE : { accept: "text/event-stream" }), ...headers };
  if (body !== null) all["content-length"] = Buffer.byteLength(body);
  return new Promise((resolve, reject) => {
    const req = request(options(target, method, undefined, all), (res) => {
      let text = "";
      res.setEncoding("utf8");
      const done = (): void => {
        const events = parseSse(text.slice(0, text.lastIndexOf("\n\n") + 2));
        req.destroy();
        resolve({ status: res.statusCode!, headers: res.headers, events });
      };
      res.on("data", (c: string) => {
        text += c;
        if (parseSse(text.slice(0, text.lastIndexOf("\n\n") + 2)).some(stop)) done();
      });
      res.on("end", done);
    });
    req.on("error", (error) => (req.destroyed ? undefined : reject(error)));
    req.end(body ?? undefined);
  });
}

/** The events of an SSE text (comments and keep-alives skipped). */
export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split("\n\n")) {
    let id: string | null = null;
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("id:")) id = line.slice(3).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    }
    if (id !== null || data.length > 0) events.push({ id, data: data.join("\n") });
  }
  return events;
}

/** The JSON-RPC messages among the events (the priming event carries none). */
export function messages(events: readonly SseEvent[]): { id?: unknown; result?: unknown; error?: unknown; method?: string }[] {
  return events.filter((e) => e.data !== "").map((e) => JSON.parse(e.data));
}
