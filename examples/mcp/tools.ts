/**
 * The MCP server of one connection: `read_file`, `apply_patch`,
 * `list_files` and `search` over the roots, with `instructions`, the
 * `logging` capability and, when no root is configured, the client's
 * roots. Transport-agnostic: the entry connects it to stdio or to one
 * Streamable HTTP session, tests to an in-memory pair.
 *
 * The tools live one per file (tool_read_file.ts, tool_apply_patch.ts,
 * tool_discovery.ts) and share a per-connection context (context.ts).
 *
 * @module
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SnapshotCache } from "../../mod.ts";
import { ListRootsResultSchema, RootsListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { DEFAULT_DIFF_BUDGET_BYTES } from "./bounds.ts";
import { rootsFromClient } from "./client_roots.ts";
import { Connection } from "./context.ts";
import type { Extra, ToolContext } from "./context.ts";
import { applyPatchDescription, fleetInstructions, listFilesDescription, readFileDescription, searchDescription, serverInstructions } from "./descriptions.ts";
import type { GroupConfig } from "./groups.ts";
import type { ShellSource } from "./pool.ts";
import { ApplyQueue } from "./apply_queue.ts";
import { ReadMemory } from "./read_memory.ts";
import type { RootConfig } from "./roots.ts";
import { registerApplyFleet } from "./tool_apply_fleet.ts";
import { registerApplyPatch } from "./tool_apply_patch.ts";
import { registerDiscovery } from "./tool_discovery.ts";
import { registerReadFile } from "./tool_read_file.ts";

/** What {@linkcode createServer} needs. */
export interface ServerOptions {
  /** The configured roots; none: serve the roots the client offers (roots/list). */
  roots: readonly RootConfig[];
  shells: ShellSource;
  /** One line per tool call and per problem (the entry writes them, escaped, to stderr). */
  log?: (line: string) => void;
  /** Most bytes of text one read_file returns (default 128 KiB; whole lines, a longer line is cut). */
  readMaxBytes?: number;
  /** Most diff bytes in a result's text, and again in its structuredContent (default 256 KiB). */
  diffBudgetBytes?: number;
  /** Most bytes of file contents the connection's own snapshot cache keeps (default 128 MiB; 0: no cache), when `snapshots` is not given. */
  snapshotCacheBytes?: number;
  /**
   * The snapshot cache to use; pass one to share it between connections
   * (the HTTP transport shares one among all its sessions, so the cache
   * memory is bounded once, whatever the number of sessions). Default: a
   * cache of this connection's own.
   */
  snapshots?: SnapshotCache;
  /** read_file's hash memory, likewise shared by the HTTP sessions (default: this connection's own). */
  reads?: ReadMemory;
  /** The per-path apply queue, likewise shared by the HTTP sessions (default: this connection's own). */
  applyQueue?: ApplyQueue;
  /** Host groups of configured roots: with any, apply_patch_fleet is offered. */
  groups?: readonly GroupConfig[];
}

/** A server and the state of its connection. */
export interface Session {
  server: McpServer;
  connection: Connection;
}

const NO_ROOTS = "the client does not offer roots (no roots capability)";

/** The tools registered below: failure messages name only these (examples/mcp/hint_words.ts). */
export const TOOL_NAMES: ReadonlySet<string> = new Set(["read_file", "apply_patch", "list_files", "search"]);

/**
 * Build the server of one connection with every tool registered.
 *
 * @example
 * ```ts
 * const { server, connection } = createSession({ roots, shells: new ShellPool() });
 * await server.connect(transport);
 * await connection.calls.idle(); // on shutdown
 * ```
 */
export function createSession(options: ServerOptions): Session {
  const snapshots = options.snapshots ?? new SnapshotCache(options.snapshotCacheBytes === undefined ? {} : { maxBytes: options.snapshotCacheBytes });
  const connection = new Connection(options.roots, options.log ?? (() => {}), snapshots);
  const server = new McpServer(
    { name: "ssh-apply-patch", version: "0.1.0" },
    { instructions: serverInstructions() + fleetInstructions(options.groups ?? []), capabilities: { logging: {} } },
  );
  connection.server = server;
  const ctx: ToolContext = {
    connection,
    shells: options.shells,
    readMaxBytes: options.readMaxBytes ?? 128 * 1024,
    diffBudgetBytes: options.diffBudgetBytes ?? DEFAULT_DIFF_BUDGET_BYTES,
    tools: (options.groups ?? []).length > 0 ? new Set([...TOOL_NAMES, "apply_patch_fleet"]) : TOOL_NAMES,
    reads: options.reads ?? new ReadMemory(),
    applyQueue: options.applyQueue ?? new ApplyQueue(),
  };
  const read = registerReadFile(server, ctx);
  const apply = registerApplyPatch(server, ctx);
  const [list, search] = registerDiscovery(server, ctx);
  if ((options.groups ?? []).length > 0) registerApplyFleet(server, ctx, options.groups!);

  /**
   * The descriptions name the roots: once the client's roots are known
   * (or change), rewrite them and send one notifications/tools/list_changed
   * — one for all four tools (RegisteredTool.update would send one each),
   * none when nothing changed (a list_changed with the same roots).
   */
  const describe = (): void => {
    const roots = connection.roots;
    let changed = false;
    for (const [tool, description] of [[read, readFileDescription(roots)], [apply, applyPatchDescription(roots)], [list, listFilesDescription(roots)], [search, searchDescription(roots)]] as const) {
      if (tool.description === description) continue;
      tool.description = description;
      changed = true;
    }
    if (changed) server.sendToolListChanged();
  };

  /**
   * Ask the client for its roots (client-roots mode): on the server's own
   * initiative (`extra` absent: after initialized or list_changed) or within
   * a tool call. A client without the roots capability is told once.
   */
  const refreshRoots = (why: string, extra?: Extra): Promise<void> => {
    const capable = server.server.getClientCapabilities()?.roots !== undefined;
    if (!capable) {
      if (connection.rootsProblem !== NO_ROOTS) {
        connection.rootsProblem = NO_ROOTS;
        connection.event({ level: "warning", event: "roots", message: `no --root configured and the client offers no roots: the tools have nothing to work on` }, extra);
      }
      connection.rootsFresh = true;
      return Promise.resolve();
    }
    const asked = extra !== undefined
      ? extra.sendRequest({ method: "roots/list" }, ListRootsResultSchema, { timeout: 10_000 })
      : server.server.listRoots(undefined, { timeout: 10_000 });
    return asked.then(
      ({ roots: listed }) => {
        const { roots, ignored } = rootsFromClient(listed);
        connection.roots = roots;
        connection.rootsFresh = true;
        connection.rootsProblem = roots.length === 0 ? `the client's roots are not local directories${ignored.length ? ` (${ignored.join("; ")})` : ""}` : null;
        connection.event({
          level: "info",
          event: "roots",
          message: `client roots (${why}): ${roots.map((r) => `${r.name}=${r.path}`).join(", ") || "none usable"}${ignored.length ? `; ignored: ${ignored.join("; ")}` : ""}`,
          data: { roots: roots.map((r) => ({ name: r.name, path: r.path })), ignored },
        }, extra);
        describe();
      },
      (error: Error) => {
        if (connection.rootsFresh) return;
        connection.rootsProblem = `the client did not answer roots/list (${error.message})`;
        if (extra !== undefined) connection.event({ level: "warning", event: "roots", message: `roots/list failed: ${error.message}` }, extra);
      },
    );
  };
  if (connection.origin === "client") connection.fetchRoots = (extra) => refreshRoots("tool call", extra);

  // Deferred: a client that pipelines `initialized` right after `initialize`
  // would otherwise get this before the initialize result.
  server.server.oninitialized = () => void setTimeout(onInitialized, 0);
  const onInitialized = (): void => {
    const client = server.server.getClientVersion();
    connection.event({
      level: "info",
      event: "connection",
      message: `client connected: ${client?.name ?? "?"} ${client?.version ?? ""}`.trim(),
      data: { client: client ?? null, roots: connection.origin },
    });
    if (connection.origin === "client") connection.rootsPending = refreshRoots("initialized");
  };
  if (connection.origin === "client") {
    holdListingForRoots(server, connection);
    server.server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
      connection.rootsFresh = false;
      connection.rootsPending = refreshRoots("list_changed");
    });
  }
  return { server, connection };
}

/** How long a tools/list waits for the client's roots (the answer names them). */
export const LIST_WAITS_FOR_ROOTS_MS = 2_000;

/**
 * In client-roots mode, a tools/list that comes before the client's roots
 * are known waits for them (at most {@linkcode LIST_WAITS_FOR_ROOTS_MS};
 * asking within the request when the server has not asked yet), so the
 * first listing already names the roots: a client that ignores
 * notifications/tools/list_changed, as some do, would otherwise keep
 * "(none yet)" for the whole session (issue 29 item 5). The SDK has no
 * hook around its tools/list handler, so the registered one is wrapped in
 * place; test/mcp/roots_listing.test.ts fails if an SDK update moves it.
 */
function holdListingForRoots(server: McpServer, connection: Connection): void {
  type Handler = (request: unknown, extra: Extra) => Promise<unknown>;
  const handlers = (server.server as unknown as { _requestHandlers?: Map<string, Handler> })._requestHandlers;
  const listTools = handlers?.get("tools/list");
  if (handlers === undefined || listTools === undefined) return;
  handlers.set("tools/list", async (request, extra) => {
    if (!connection.rootsFresh) {
      const fetching = connection.rootsPending ?? connection.fetchRoots?.(extra) ?? Promise.resolve();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([fetching, new Promise((resolve) => (timer = setTimeout(resolve, LIST_WAITS_FOR_ROOTS_MS)))]);
      clearTimeout(timer);
    }
    return await listTools(request, extra);
  });
}

/**
 * Build the server with every tool registered (see {@linkcode createSession}).
 *
 * @example
 * ```ts
 * const server = createServer({ roots, shells: new ShellPool() });
 * await server.connect(new ServerTransport(transport));
 * ```
 */
export function createServer(options: ServerOptions): McpServer {
  return createSession(options).server;
}
