/**
 * The Streamable HTTP transport of the example server (`--http`, or
 * `--socket` for a Unix socket): the endpoint `/mcp`, one MCP session (and
 * one {@linkcode createSession} connection) per client, the same tools as
 * over stdio, the shell pool, the snapshot cache and read_file's hash
 * memory shared by all sessions (one memory bound whatever their number).
 *
 * In front of the SDK's transport, each request is checked, in order:
 * 1. the path is `/mcp` (else 404);
 * 2. DNS rebinding: bound to a loopback address, the `Host` header must
 *    name a loopback host (localhost, 127.0.0.1, [::1]) — a page on
 *    evil.example resolving to 127.0.0.1 is refused (403); not on a Unix
 *    socket, which no browser can reach;
 * 3. `Origin`, when a browser sends one, must be a loopback origin or one
 *    given with `--allow-origin` (403);
 * 4. the bearer token (auth.ts), unless the operator chose none — exactly
 *    one `Authorization` header (400 for several: the runtime reads the
 *    first, a proxy in front may read the last) —: 401 with
 *    `WWW-Authenticate: Bearer realm=…` (`error="invalid_token"` for a
 *    wrong one) — also for a token in the URL, which is never accepted;
 * 5. a declared body larger than the message limit is refused at once with
 *    413 and a JSON-RPC error stating the limit (a larger streamed body is
 *    cut off the same way).
 * Then sessions, with the MCP spec's status codes and words that say what
 * to do: an unknown or expired `Mcp-Session-Id` is 404 (start a new session
 * with initialize); a request without one that is not an initialize is 400;
 * a new session beyond `--max-sessions` closes the least recently used idle
 * one, and when every session has a call running it is refused with 503 and
 * `Retry-After` (sessions.ts). Sessions idle for 30 minutes are closed.
 * SSE events carry ids and a GET with `Last-Event-ID` replays what the
 * client missed, within `--replay-bytes` for all sessions (event_store.ts);
 * a resume the buffer can no longer serve whole is 400 with the reason.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { HttpSettings } from "./args.ts";
import { isLoopback } from "./args.ts";
import { SnapshotCache } from "../../mod.ts";
import { bearerCheck } from "./auth.ts";
import { ReplayBuffer } from "./event_store.ts";
import { ApplyQueue } from "./apply_queue.ts";
import { ReadMemory } from "./read_memory.ts";
import { SessionTable } from "./sessions.ts";
import { createSession } from "./tools.ts";
import type { ServerOptions, Session } from "./tools.ts";
import { ServerTransport } from "./transport.ts";
import { listenOnSocket } from "./unix_socket.ts";

/** Options of {@linkcode startHttp}. */
export interface HttpOptions extends HttpSettings {
  /** How each session's server is built (roots, shells; the snapshot cache, read memory and apply queue, shared by all sessions, are made here when not given). */
  server: Omit<ServerOptions, "log">;
  /** Most bytes of one request body. */
  maxMessageBytes: number;
  /** Added to the oversize error, e.g. "patches up to 16777216 bytes". */
  limitNote?: string;
  log: (line: string) => void;
  /** Close sessions idle this long (default 30 minutes). */
  idleMs?: number;
  /** Seconds a refused new session is told to wait (`Retry-After`, default 5). */
  retryAfterSeconds?: number;
  /** The listener failed after it started (the entry logs it and exits non-zero). */
  onFatal?: (error: Error) => void;
}

/** A running HTTP transport. */
export interface HttpHandle {
  /** `http://host:port/mcp`, or `http://localhost/mcp` on a Unix socket. */
  url: string;
  /** The TCP port, or null on a Unix socket. */
  port: number | null;
  /** Sessions open now. */
  sessions(): number;
  /** Sessions open and being opened (never more than maxSessions). */
  live(): number;
  /** The replay buffer's size now, all sessions. */
  replay(): { bytes: number; events: number };
  /** Tool calls running now, all sessions. */
  running(): number;
  /** Stop accepting, cancel running calls and wait for them (at most `graceMs`), close every session. */
  close(graceMs?: number): Promise<void>;
}

interface Entry {
  transport: StreamableHTTPServerTransport;
  session: Session;
  busy(): boolean;
  close(): Promise<void>;
}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/**
 * Listen for MCP over Streamable HTTP.
 *
 * @example
 * ```ts
 * const http = await startHttp({ listen: { kind: "tcp", host: "127.0.0.1", port: 0 }, auth: { kind: "token", bearer }, allowedOrigins: [], maxSessions: 64, replayBytes: 16 << 20, server: { roots, shells }, maxMessageBytes: 100 << 20, log });
 * console.log(http.url);
 * ```
 */
export async function startHttp(options: HttpOptions): Promise<HttpHandle> {
  const table = new SessionTable<Entry>(options.maxSessions);
  // One cache and one read memory for every session (given, or made here): one memory bound.
  const serverOptions = { ...options.server, snapshots: options.server.snapshots ?? new SnapshotCache(), reads: options.server.reads ?? new ReadMemory(), applyQueue: options.server.applyQueue ?? new ApplyQueue() };
  const replay = new ReplayBuffer(options.replayBytes);
  const idleMs = options.idleMs ?? 30 * 60_000;
  const retryAfter = String(options.retryAfterSeconds ?? 5);
  const listen = options.listen;
  const checkHost = listen.kind === "tcp" && isLoopback(listen.host);
  const check = options.auth.kind === "token" ? bearerCheck(options.auth.bearer.token) : null;
  let closing = false;

  const refuse = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}, code = -32000): void => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
  };

  const hostAllowed = (req: IncomingMessage): boolean => {
    if (!checkHost) return true; // a token is required off loopback; rebinding attacks target loopback services
    const host = req.headers.host;
    if (host === undefined) return false;
    const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.split(":")[0]!;
    return LOOPBACK_NAMES.has(name.toLowerCase());
  };

  const originAllowed = (origin: string | undefined): boolean => {
    if (origin === undefined) return true;
    try {
      const url = new URL(origin);
      if ((url.protocol === "http:" || url.protocol === "https:") && LOOPBACK_NAMES.has(url.hostname.toLowerCase())) return true;
      return options.allowedOrigins.includes(url.origin);
    } catch {
      return false;
    }
  };

  const unauthorized = (res: ServerResponse, verdict: "missing" | "wrong" | "in_url"): void => {
    options.log(`http: refused a request ${verdict === "missing" ? "without a bearer token" : verdict === "in_url" ? "with a token in the URL" : "with a wrong bearer token"}`);
    const challenge = `Bearer realm="ssh-apply-patch"${verdict === "missing" ? "" : verdict === "in_url" ? ', error="invalid_request"' : ', error="invalid_token"'}`;
    const message = verdict === "in_url"
      ? "Unauthorized: a token in the URL is never accepted (URLs end up in logs and histories); send the header Authorization: Bearer <token> instead"
      : `Unauthorized: ${verdict === "missing" ? "send" : "the token is wrong; send"} the header Authorization: Bearer <token>, with the token from the file the server named at start (or your --token-file / SAP_MCP_TOKEN)`;
    refuse(res, 401, message, { "www-authenticate": challenge });
  };

  const newSession = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== "POST") {
      return refuse(res, 400, `Bad Request: a ${req.method} needs the Mcp-Session-Id header with the session id that the initialize response returned; start a session with an initialize POST`);
    }
    const body = await readBody(req, options.maxMessageBytes);
    if (body === "gone") return void res.destroy();
    if (body === "too_large") return refuse(res, 413, tooLarge(null));
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return refuse(res, 400, "Parse error: the body is not JSON", {}, -32700);
    }
    if (!isInitializeRequest(parsed)) {
      return refuse(
        res,
        400,
        "Bad Request: no Mcp-Session-Id header, and this is not an initialize request. Start a session with an initialize request, then send the Mcp-Session-Id it returns on every request.",
      );
    }
    const place = table.reserve();
    if (!place.ok) {
      options.log(`http: ${table.max} sessions open, every one with a call running: refused a new session (503)`);
      return refuse(res, 503, `Service Unavailable: all ${table.max} sessions of this server have a call running; try again in ${retryAfter} s (or end an idle session with DELETE)`, { "retry-after": retryAfter });
    }
    if (place.evicted !== null) {
      options.log(`http: ${table.max} sessions open: closed the least recently used idle one, ${place.evicted.id.slice(0, 8)}, for a new one`);
    }
    const key = randomUUID();
    const session = createSession({ ...serverOptions, log: (line) => options.log(line) });
    let committed = false;
    const entry: Entry = {
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => key,
        maxRequestBodySize: options.maxMessageBytes,
        eventStore: replay.storeFor(key),
        onsessioninitialized: (sessionId) => {
          committed = true;
          place.commit(sessionId, entry);
          options.log(`http: session ${sessionId.slice(0, 8)} opened (${table.size} open)`);
        },
      }),
      session,
      busy: () => session.connection.calls.running > 0,
      close: () => session.server.close(),
    };
    // Closed by DELETE, eviction, the idle sweep or shutdown: the table lets it go, its events go too.
    session.server.server.onclose = () => {
      replay.drop(key);
      if (table.remove(key)) options.log(`http: session ${key.slice(0, 8)} closed`);
    };
    try {
      await session.server.connect(new ServerTransport(entry.transport));
      await entry.transport.handleRequest(req, res, parsed);
    } finally {
      if (!committed) {
        place.release();
        // Anything but a successful initialize leaves no session behind.
        await session.server.close().catch(() => {});
      }
    }
  };

  const tooLarge = (declared: number | null): string =>
    `Request too large: ${declared === null ? "more than that" : `${declared} bytes`}; this server accepts messages of at most ${options.maxMessageBytes} bytes${
      options.limitNote ? ` (${options.limitNote})` : ""
    }. Nothing was done. Send less in one call (e.g. split the patch into several patches).`;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname !== "/mcp") return refuse(res, 404, "Not found: the MCP endpoint is /mcp");
    if (!hostAllowed(req)) {
      options.log(`http: refused a request for Host ${JSON.stringify(req.headers.host ?? "")} (DNS rebinding protection)`);
      return refuse(res, 403, "Forbidden: this server only answers requests addressed to localhost");
    }
    if (!originAllowed(req.headers.origin)) {
      options.log(`http: refused a request from Origin ${JSON.stringify(req.headers.origin)}`);
      return refuse(res, 403, "Forbidden: this Origin is not allowed (see --allow-origin)");
    }
    if (check !== null) {
      // The runtime keeps the first of several (Node and Bun both); a proxy in
      // front may judge the last. One request, one credential: refuse the rest.
      if (authorizationCount(req) > 1) {
        options.log("http: refused a request with more than one Authorization header");
        return refuse(res, 400, "Bad Request: more than one Authorization header; send exactly one: Authorization: Bearer <token>");
      }
      const verdict = check(req.headers.authorization, url);
      if (verdict !== "ok") return unauthorized(res, verdict);
    }
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > options.maxMessageBytes) {
      options.log(`http: refused a body of ${declared} bytes (limit ${options.maxMessageBytes})`);
      return refuse(res, 413, tooLarge(declared));
    }
    const id = req.headers["mcp-session-id"];
    if (typeof id !== "string") {
      if (closing) return refuse(res, 503, "Service Unavailable: the server is shutting down");
      return newSession(req, res);
    }
    const entry = table.get(id);
    if (entry === undefined) {
      return refuse(
        res,
        404,
        "Session not found: this Mcp-Session-Id is unknown here — the session expired (idle), was closed or evicted, or the server restarted. Start a new session with an initialize request (without Mcp-Session-Id).",
        {},
        -32001,
      );
    }
    const lastEventId = req.headers["last-event-id"];
    if (req.method === "GET" && typeof lastEventId === "string") {
      const problem = replay.resumeProblem(id, lastEventId);
      if (problem !== null) return refuse(res, 400, `Bad Request: cannot resume: ${problem}`);
    }
    await entry.transport.handleRequest(req, res);
  };

  // A client that trickles its headers holds a connection (a file descriptor) before any token is
  // seen: Node's defaults let 3000 such connections of another uid stay open for over 75 s (Bun
  // closed them within 20 s). Headers get HEADERS_TIMEOUT_MS, checked every second.
  const server: Server = createServer({ headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: 1_000 }, (req, res) => {
    handle(req, res).catch((error: Error) => {
      options.log(`http: ${error.stack ?? error.message}`);
      if (!res.headersSent) refuse(res, 500, "Internal error");
      else res.end();
    });
  });
  let unlinkSocket: (() => void) | null = null;
  if (listen.kind === "socket") {
    unlinkSocket = await listenOnSocket(server, listen.path);
  } else {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(listen.port, listen.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  }
  server.on("error", (error: Error) => {
    options.log(`http: the listener failed: ${error.message}`);
    options.onFatal?.(error);
  });
  let url = "http://localhost/mcp";
  let port: number | null = null;
  if (listen.kind === "tcp") {
    const address = server.address() as AddressInfo;
    const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
    port = address.port;
    url = `http://${shownHost}:${address.port}/mcp`;
  }

  const sweeper = setInterval(() => {
    for (const [sessionId, entry] of table.takeIdle(idleMs)) {
      options.log(`http: session ${sessionId.slice(0, 8)} idle for ${Math.round(idleMs / 60_000)} min: closing it`);
      void entry.close().catch(() => {});
    }
  }, Math.min(60_000, idleMs));
  sweeper.unref?.();

  return {
    url,
    port,
    sessions: () => table.size,
    live: () => table.live,
    replay: () => replay.stats,
    running: () => table.all().reduce((n, e) => n + e.session.connection.calls.running, 0),
    close: async (graceMs = 60_000) => {
      closing = true;
      clearInterval(sweeper);
      // running commits stop before their go-ahead (or finish past it)
      for (const entry of table.all()) entry.session.connection.cancelCalls();
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      const entries = table.all();
      const idle = Promise.all(entries.map((e) => e.session.connection.calls.idle()));
      await Promise.race([idle, new Promise((resolve) => setTimeout(resolve, graceMs))]);
      await Promise.allSettled(entries.map((e) => e.close()));
      server.closeAllConnections?.();
      await stopped;
      unlinkSocket?.();
    },
  };
}

/** How many `Authorization` header lines the request carried (any casing). */
function authorizationCount(req: IncomingMessage): number {
  let n = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === "authorization") n++;
  return n;
}

/** How long a request's headers may take to arrive, in full (then the connection is closed). */
export const HEADERS_TIMEOUT_MS = 10_000;

/** How long the body of a new session's initialize may take to arrive. */
const BODY_TIMEOUT_MS = 30_000;

/**
 * The request body as text; "too_large" past `max` bytes (reading stops
 * there), "gone" when the client went away or took longer than
 * {@linkcode BODY_TIMEOUT_MS} (a trickling client must not hold memory).
 */
function readBody(req: IncomingMessage, max: number): Promise<string | "too_large" | "gone"> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (value: string | "too_large" | "gone"): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(value);
    };
    const timer = setTimeout(() => {
      finish("gone");
      req.destroy();
    }, BODY_TIMEOUT_MS);
    req.on("data", (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > max) {
        finish("too_large");
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => finish(Buffer.concat(chunks).toString("utf8")));
    req.on("close", () => finish("gone"));
    req.on("error", () => finish("gone"));
  });
}
