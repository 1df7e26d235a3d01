/**
 * What every tool handler of one MCP connection shares: the connection's
 * roots (configured, or offered by the client), its log, the calls still
 * running, and the helpers that turn a root name into a root and a shell.
 *
 * One {@linkcode Connection} exists per MCP connection (the stdio client,
 * or one Streamable HTTP session); the shell pool is shared by all of them.
 * Per-connection state belongs here — e.g. the snapshot cache: what
 * `read_file` read (and what `apply_patch` wrote) stays in
 * `connection.snapshots`, so the next `apply_patch` on those files only has
 * the host prove their SHA-256 instead of downloading them again. One cache
 * per connection by default; the HTTP transport shares one cache among
 * all its sessions instead, so that its memory has one bound however many
 * sessions there are (issue 28 item 5b): one session's reads may then
 * evict another's, which costs a download, never a wrong plan — a cached
 * content is only used after the host proved its SHA-256.
 *
 * @module
 */
import type { ApplyQueue } from "./apply_queue.ts";
import type { ReadMemory } from "./read_memory.ts";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { RemoteShellError, SnapshotCache, failure } from "../../mod.ts";
import type { PatchFailure, RemoteShell } from "../../mod.ts";
import { escapeForLog } from "./log.ts";
import type { LogEvent } from "./log.ts";
import type { ShellSource } from "./pool.ts";
import type { RootConfig } from "./roots.ts";

/** The handler's `extra` argument. */
export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * Counts the tool calls still running, so shutdown can let them finish.
 *
 * @example
 * ```ts
 * const calls = new CallTracker();
 * void calls.track(() => longCall());
 * await calls.idle();
 * ```
 */
export class CallTracker {
  #running = 0;
  #wake: (() => void)[] = [];

  /** Calls running now. */
  get running(): number {
    return this.#running;
  }

  /**
   * Run `fn` as one call.
   *
   * @example
   * ```ts
   * await tracker.track(() => handler(args));
   * ```
   */
  async track<T>(fn: () => Promise<T>): Promise<T> {
    this.#running++;
    try {
      return await fn();
    } finally {
      if (--this.#running === 0) for (const wake of this.#wake.splice(0)) wake();
    }
  }

  /** Resolves when no call is running. */
  idle(): Promise<void> {
    return this.#running === 0 ? Promise.resolve() : new Promise((resolve) => this.#wake.push(resolve));
  }
}

/** Where a connection's roots come from. */
export type RootsOrigin = "configured" | "client";

/**
 * The state of one MCP connection.
 *
 * @example
 * ```ts
 * const connection = new Connection(roots, (line) => console.error(line));
 * await connection.run(() => tool(args), extra);
 * connection.event({ level: "info", event: "commit", message: "applied" }, extra);
 * ```
 */
export class Connection {
  readonly calls: CallTracker = new CallTracker();
  readonly origin: RootsOrigin;
  /** The roots tools may use now (client roots change on notifications/roots/list_changed). */
  roots: readonly RootConfig[];
  /** Why there are no client roots (shown in failures), when there are none. */
  rootsProblem: string | null = null;
  /** Client roots: false until a roots/list answer was applied, and again after list_changed. */
  rootsFresh = false;
  /** The roots/list the server asked for on its own (after initialized, after list_changed), while it runs. */
  rootsPending: Promise<void> | null = null;
  /** Ask the client for its roots within a call (set by createSession in client-roots mode). */
  fetchRoots: ((extra: Extra) => Promise<void>) | null = null;
  /** The MCP server of this connection, once built (for log notifications). */
  server: McpServer | null = null;
  /**
   * File contents this connection has seen (read_file, apply_patch's
   * snapshots and new contents), keyed by SHA-256: passed as `cache` to
   * readSnapshots and applyPatch.
   */
  readonly snapshots: SnapshotCache;
  readonly #line: (line: string) => void;
  /** Aborted when the server shuts down: every running commit is cancelled (README "Guarantees": cancel). */
  readonly #stopping = new AbortController();

  constructor(roots: readonly RootConfig[], line: (line: string) => void, snapshots: SnapshotCache = new SnapshotCache()) {
    this.snapshots = snapshots;
    this.origin = roots.length > 0 ? "configured" : "client";
    this.roots = roots;
    this.#line = line;
    if (this.origin === "client") this.rootsProblem = "the client has not offered any roots yet";
  }

  /**
   * Run one tool call: counted (shutdown waits for it). In client-roots
   * mode, first make sure the roots are known: wait briefly for a roots/list
   * the server already asked for, and otherwise ask within this call — over
   * Streamable HTTP a request of the server's own goes to the client's
   * standalone stream, which may not be open yet, while one sent within a
   * call travels on that call's stream.
   */
  run<T>(fn: () => Promise<T>, extra?: Extra): Promise<T> {
    return this.calls.track(async () => {
      if (this.origin === "client" && !this.rootsFresh) {
        if (this.rootsPending !== null) await Promise.race([this.rootsPending, new Promise((resolve) => setTimeout(resolve, 2_000))]);
        if (!this.rootsFresh && this.fetchRoots !== null && extra !== undefined) await this.fetchRoots(extra);
      }
      return await fn();
    });
  }

  /**
   * The signal a call's work runs under: the client's cancel
   * (`notifications/cancelled`) or the server shutting down.
   *
   * @example
   * ```ts
   * await applyPatch(shell, { root, patch, signal: connection.signalOf(extra) });
   * ```
   */
  signalOf(extra: Extra): AbortSignal {
    return extra.signal === undefined ? this.#stopping.signal : AbortSignal.any([extra.signal, this.#stopping.signal]);
  }

  /**
   * Cancel every running call (SIGINT/SIGTERM): a commit before its
   * go-ahead stops with nothing applied and nothing left, one past it
   * finishes; shutdown then waits for them (bounded).
   *
   * @example
   * ```ts
   * connection.cancelCalls();
   * await connection.calls.idle();
   * ```
   */
  cancelCalls(): void {
    this.#stopping.abort();
  }

  /** A log line on stderr only. */
  line(text: string): void {
    this.#line(text);
  }

  /**
   * An event: a line on stderr and, when the client is connected, an MCP
   * log notification (filtered by the level it set with logging/setLevel);
   * pass the call's `extra` when the event belongs to a tool call.
   */
  event(event: LogEvent, extra?: Extra): void {
    this.#line(event.message);
    const server = this.server;
    if (server === null || !server.isConnected()) return;
    // The message is escaped as on stderr: a client may print it to a terminal.
    const params = { level: event.level, logger: "ssh-apply-patch", data: { event: event.event, message: escapeForLog(event.message), ...event.data } };
    const sessionId = server.server.transport?.sessionId;
    if (extra === undefined) {
      server.server.sendLoggingMessage(params, sessionId).catch(() => {});
      return;
    }
    // During a call, the notification goes with the call (over Streamable
    // HTTP: on that request's stream, which the client is reading), filtered
    // by the level the client set as sendLoggingMessage would.
    const ignored = (server.server as unknown as { isMessageIgnored?: (level: string, sessionId?: string) => boolean }).isMessageIgnored;
    if (ignored?.(event.level, sessionId) === true) return;
    extra.sendNotification({ method: "notifications/message", params }).catch(() => {});
  }
}

/** What the tool registrations get. */
export interface ToolContext {
  connection: Connection;
  shells: ShellSource;
  /** Most bytes of text one read_file returns (whole lines; a longer line is cut). */
  readMaxBytes: number;
  /** Most bytes of diff in a result's text, and again in its structuredContent. */
  diffBudgetBytes: number;
  /** The tools of this server (failure messages name only these). */
  tools: ReadonlySet<string>;
  /** read_file's window hashes, so apply_patch recognises a content_sha256 sent as expected_sha256. */
  reads?: ReadMemory;
  /** The per-path apply queue, shared by every session of the server (apply_queue.ts); none: applies race at the host's locks. */
  applyQueue?: ApplyQueue;
}

/**
 * The named root, or the only one; otherwise a failure naming the roots.
 *
 * @example
 * ```ts
 * const root = pickRoot(ctx, args.root);
 * if ("code" in root) return failed(root);
 * ```
 */
export function pickRoot(ctx: ToolContext, name: string | undefined): RootConfig | PatchFailure {
  const roots = ctx.connection.roots;
  if (roots.length === 0) {
    return failure(
      "invalid_argument",
      `this server has no roots: none were configured (--root) and ${ctx.connection.rootsProblem ?? "the client offered none"}. Tell the user to configure a root or to share a folder with this server.`,
    );
  }
  const names = roots.map((r) => r.name).join(", ");
  if (name === undefined) {
    if (roots.length === 1) return roots[0]!;
    return failure("invalid_argument", `several roots are configured (${names}): pass "root" with one of these names.`);
  }
  return roots.find((r) => r.name === name) ??
    failure(
      "invalid_argument",
      `there is no root named ${JSON.stringify(name)}; the ${ctx.connection.origin === "configured" ? "configured" : "client's"} roots are: ${names}. Pass one of these as "root".`,
    );
}

/**
 * The shell of a root, or the typed reason there is none (SSH connect, auth, host key).
 *
 * @example
 * ```ts
 * const shell = await shellOf(ctx, root);
 * ```
 */
export async function shellOf(ctx: ToolContext, root: RootConfig): Promise<RemoteShell | PatchFailure> {
  try {
    return await ctx.shells.shellFor(root);
  } catch (error) {
    return error instanceof RemoteShellError ? error.failure : unexpected(error, ctx);
  }
}

/**
 * A bug or an unforeseen error: logged with its stack, reported as a typed failure.
 *
 * @example
 * ```ts
 * return failed(unexpected(error, ctx));
 * ```
 */
export function unexpected(error: unknown, ctx: ToolContext): PatchFailure {
  ctx.connection.line(`unexpected error: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
  const what = error instanceof Error ? error.message : String(error);
  return failure(
    "remote_error",
    `the server hit an unexpected error (${what}). After apply_patch, read_file the patch's files to see their state before retrying; if it persists, tell the user.`,
    { retryable: false },
  );
}
