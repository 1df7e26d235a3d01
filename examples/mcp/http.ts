/**
 * The Streamable HTTP transport of the example server (`--http`): the
 * endpoint `/mcp`, one MCP session (and one {@linkcode createSession}
 * connection) per client, the same tools as over stdio, the shell pool
 * shared by all sessions.
 *
 * In front of the SDK's transport, each request is checked, in order:
 * 1. the path is `/mcp` (else 404);
 * 2. DNS rebinding: bound to a loopback address, the `Host` header must
 *    name a loopback host (localhost, 127.0.0.1, [::1]) — a page on
 *    evil.example resolving to 127.0.0.1 is refused (403);
 * 3. `Origin`, when a browser sends one, must be a loopback origin or one
 *    given with `--allow-origin` (403);
 * 4. with a token, `Authorization: Bearer <token>` (compared in constant
 *    time; 401 with `WWW-Authenticate: Bearer` otherwise);
 * 5. a declared body larger than the message limit is refused at once with
 *    413 and a JSON-RPC error stating the limit (the SDK refuses a larger
 *    streamed body the same way).
 * Sessions idle for 30 minutes with no call running are closed, and at most
 * 64 are kept: a new one closes the least recently used idle session
 * (clients that never send DELETE must not grow the server without bound).
 *
 * @module
 */
import { randomUUID, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { HttpSettings } from "./args.ts";
import { isLoopback } from "./args.ts";
import { createSession } from "./tools.ts";
import type { ServerOptions, Session } from "./tools.ts";
import { ServerTransport } from "./transport.ts";

/** Options of {@linkcode startHttp}. */
export interface HttpOptions extends HttpSettings {
  /** How each session's server is built (roots, shells, budgets). */
  server: Omit<ServerOptions, "log">;
  /** Most bytes of one request body. */
  maxMessageBytes: number;
  /** Added to the oversize error, e.g. "patches up to 16777216 bytes". */
  limitNote?: string;
  log: (line: string) => void;
  /** Close sessions idle this long (default 30 minutes). */
  idleMs?: number;
  /** The listener failed after it started (the entry logs it and exits non-zero). */
  onFatal?: (error: Error) => void;
}

/** A running HTTP transport. */
export interface HttpHandle {
  /** `http://host:port/mcp` */
  url: string;
  /** Sessions open now. */
  sessions(): number;
  /** Stop accepting, let running calls finish (at most `graceMs`), close every session. */
  close(graceMs?: number): Promise<void>;
}

interface Entry {
  transport: StreamableHTTPServerTransport;
  session: Session;
  lastSeen: number;
}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);
const MAX_SESSIONS = 64;

/**
 * Listen for MCP over Streamable HTTP.
 *
 * @example
 * ```ts
 * const http = await startHttp({ host: "127.0.0.1", port: 0, token: null, allowedOrigins: [], server: { roots, shells }, maxMessageBytes: 100 << 20, log });
 * console.log(http.url);
 * ```
 */
export async function startHttp(options: HttpOptions): Promise<HttpHandle> {
  const sessions = new Map<string, Entry>();
  const idleMs = options.idleMs ?? 30 * 60_000;
  const loopbackBind = isLoopback(options.host);
  const tokenBytes = options.token === null ? null : Buffer.from(`Bearer ${options.token}`);
  let closing = false;

  const refuse = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
  };

  const hostAllowed = (req: IncomingMessage): boolean => {
    if (!loopbackBind) return true; // a token is required there; rebinding attacks target loopback services
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

  const authorized = (req: IncomingMessage): boolean => {
    if (tokenBytes === null) return true;
    const given = Buffer.from(req.headers.authorization ?? "");
    return given.length === tokenBytes.length && timingSafeEqual(given, tokenBytes);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/mcp") return refuse(res, 404, "Not found: the MCP endpoint is /mcp");
    if (!hostAllowed(req)) {
      options.log(`http: refused a request for Host ${JSON.stringify(req.headers.host ?? "")} (DNS rebinding protection)`);
      return refuse(res, 403, "Forbidden: this server only answers requests addressed to localhost");
    }
    if (!originAllowed(req.headers.origin)) {
      options.log(`http: refused a request from Origin ${JSON.stringify(req.headers.origin)}`);
      return refuse(res, 403, "Forbidden: this Origin is not allowed (see --allow-origin)");
    }
    if (!authorized(req)) {
      options.log("http: refused a request without the bearer token");
      return refuse(res, 401, "Unauthorized: send Authorization: Bearer <token>", { "www-authenticate": 'Bearer realm="ssh-apply-patch"' });
    }
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > options.maxMessageBytes) {
      options.log(`http: refused a body of ${declared} bytes (limit ${options.maxMessageBytes})`);
      return refuse(
        res,
        413,
        `Request too large: ${declared} bytes; this server accepts messages of at most ${options.maxMessageBytes} bytes${options.limitNote ? ` (${options.limitNote})` : ""}. Nothing was done. Send less in one call (e.g. split the patch into several patches).`,
      );
    }
    const id = req.headers["mcp-session-id"];
    if (typeof id === "string") {
      const entry = sessions.get(id);
      if (entry === undefined) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found: initialize a new session" }, id: null }));
        return;
      }
      entry.lastSeen = Date.now();
      await entry.transport.handleRequest(req, res);
      return;
    }
    if (req.method !== "POST" || closing) {
      return refuse(res, 400, closing ? "The server is shutting down" : "Bad Request: no Mcp-Session-Id; start with an initialize POST");
    }
    // A new session: its own MCP server and connection state.
    const session = createSession({ ...options.server, log: (line) => options.log(line) });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: options.maxMessageBytes,
      onsessioninitialized: (sessionId) => {
        if (sessions.size >= MAX_SESSIONS) {
          const idle = [...sessions.entries()].filter(([, e]) => e.session.connection.calls.running === 0).sort((a, b) => a[1].lastSeen - b[1].lastSeen)[0];
          if (idle !== undefined) {
            options.log(`http: ${MAX_SESSIONS} sessions open: closing the least recently used, ${idle[0].slice(0, 8)}`);
            void idle[1].session.server.close().catch(() => {});
          }
        }
        sessions.set(sessionId, { transport, session, lastSeen: Date.now() });
        options.log(`http: session ${sessionId.slice(0, 8)} opened`);
      },
    });
    transport.onclose = () => {
      const sessionId = transport.sessionId;
      if (sessionId !== undefined && sessions.delete(sessionId)) options.log(`http: session ${sessionId.slice(0, 8)} closed`);
    };
    await session.server.connect(new ServerTransport(transport));
    await transport.handleRequest(req, res);
    // Anything but a successful initialize leaves no session behind.
    if (transport.sessionId === undefined) await session.server.close().catch(() => {});
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      options.log(`http: ${error.stack ?? error.message}`);
      if (!res.headersSent) refuse(res, 500, "Internal error");
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", (error: Error) => {
    options.log(`http: the listener failed: ${error.message}`);
    options.onFatal?.(error);
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${shownHost}:${address.port}/mcp`;

  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const [sessionId, entry] of sessions) {
      if (now - entry.lastSeen > idleMs && entry.session.connection.calls.running === 0) {
        options.log(`http: session ${sessionId.slice(0, 8)} idle for ${Math.round(idleMs / 60_000)} min: closing it`);
        void entry.session.server.close().catch(() => {});
      }
    }
  }, Math.min(60_000, idleMs));
  sweeper.unref?.();

  return {
    url,
    sessions: () => sessions.size,
    close: async (graceMs = 60_000) => {
      closing = true;
      clearInterval(sweeper);
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      const idle = Promise.all([...sessions.values()].map((e) => e.session.connection.calls.idle()));
      await Promise.race([idle, new Promise((resolve) => setTimeout(resolve, graceMs))]);
      await Promise.allSettled([...sessions.values()].map((e) => e.session.server.close()));
      server.closeAllConnections?.();
      await stopped;
    },
  };
}
