/**
 * Example MCP server: `read_file`, `apply_patch`, `list_files` and `search`
 * over configured local and SSH roots (or the folders the client shares),
 * and `apply_patch_fleet` over host groups of them (`--group`), on stdio or
 * Streamable HTTP.
 *
 * ```sh
 * bun examples/mcp_server.ts --root site=./examples/site
 * bun examples/mcp_server.ts --root app=ssh://deploy@web1:2222/srv/app?matching=exact
 * bun examples/mcp_server.ts --config roots.json
 * bun examples/mcp_server.ts --root site=./examples/site --http 8080     # http://127.0.0.1:8080/mcp, bearer token
 * bun examples/mcp_server.ts --root site=./examples/site --socket "$XDG_RUNTIME_DIR/sap.sock"
 * bun examples/mcp_server.ts --root web1=ssh://web1/etc/nginx --root web2=ssh://web2/etc/nginx --group web=web1,web2
 * ```
 *
 * Runs under Bun, Node ≥ 22.18 and Deno 2 (no Bun-only API). stdout carries
 * only the protocol; every log line goes to stderr, escaped. The pieces live
 * in examples/mcp/: args.ts and roots.ts (command line, config file),
 * pool.ts (one SSH connection per host), tools.ts and tool_*.ts (the tools),
 * context.ts (per-connection state), stdio_transport.ts and http.ts (the
 * transports; auth.ts, sessions.ts, event_store.ts and unix_socket.ts for
 * HTTP), transport.ts (hidden alias apply-patch, request tracking),
 * bounds.ts (result sizes), log.ts.
 *
 * Memory has one bound whatever the number of clients: one snapshot cache
 * (`--cache-bytes`) and one read_file hash memory for all sessions, at most
 * `--max-sessions` sessions, and one SSE replay buffer (`--replay-bytes`).
 *
 * SIGINT/SIGTERM cancel the running calls (a commit before its go-ahead
 * stops with nothing applied and nothing left; one past it finishes) and
 * wait for them, at most a minute. Exit codes: 0 after SIGINT/SIGTERM or
 * the end of stdin once every request was answered; 1 when the transport failed (stdout closed: the client is
 * gone), a request stayed unanswered, or calls were still running a minute
 * after shutdown began; 2 for a configuration error.
 *
 * @module
 */
import { DEFAULT_LIMITS, SnapshotCache } from "../mod.ts";
import { ApplyQueue } from "./mcp/apply_queue.ts";
import { parseServerArgs } from "./mcp/args.ts";
import { TOKEN_ENV, writeGeneratedToken } from "./mcp/auth.ts";
import type { WrittenToken } from "./mcp/auth.ts";
import type { ServerArgs } from "./mcp/args.ts";
import { startHttp } from "./mcp/http.ts";
import type { HttpHandle } from "./mcp/http.ts";
import { lineWriter } from "./mcp/log.ts";
import { ShellPool } from "./mcp/pool.ts";
import { ReadMemory } from "./mcp/read_memory.ts";
import { ConfigError, USAGE } from "./mcp/roots.ts";
import { BoundedStdioTransport } from "./mcp/stdio_transport.ts";
import type { CloseReason } from "./mcp/stdio_transport.ts";
import { createSession } from "./mcp/tools.ts";
import { ServerTransport } from "./mcp/transport.ts";

const log = lineWriter((text) => void process.stderr.write(text));

let args: ServerArgs | "help";
try {
  args = parseServerArgs(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`ssh-apply-patch MCP server: ${error.message}\n`);
  process.exit(2);
}
if (args === "help") {
  process.stderr.write(`${USAGE}\n`);
  process.exit(0);
}
const { roots, groups, http } = args;
// Read once; no program the server starts (sh, ssh, a ProxyCommand) inherits it.
delete process.env[TOKEN_ENV];

// One message may carry a patch of the largest root's maxPatchBytes: JSON
// escaping can make it up to 6 times larger (\u00XX for control bytes), plus
// the rest of the request.
// (Client roots, when no root is configured, have the default limits.)
const maxPatchBytes = roots.length === 0
  ? DEFAULT_LIMITS.maxPatchBytes
  : roots.reduce((most, r) => Math.max(most, r.options.limits?.maxPatchBytes ?? DEFAULT_LIMITS.maxPatchBytes), 0);
const maxMessageBytes = maxPatchBytes * 6 + 1024 * 1024;
const limitNote = `patches up to ${maxPatchBytes} bytes`;
const rootsText = roots.length > 0 ? roots.map((r) => `${r.name}=${r.label}`).join(", ") : "none configured: serving the client's roots";

const pool = new ShellPool(log);
const snapshots = new SnapshotCache({ maxBytes: args.cacheBytes });
const reads = new ReadMemory();
const applyQueue = new ApplyQueue({ maxWaiting: args.queueLength });
let stopping = false;

/** Let running calls finish (a commit cut part-way ends as outcome_unknown), then exit. */
async function stop(why: string, running: () => number, idle: () => Promise<unknown>, close: () => Promise<unknown>, code: () => number, cancel?: () => void): Promise<void> {
  if (stopping) {
    log(`${why} again: exiting at once`);
    process.exit(1);
  }
  stopping = true;
  const calls = `${running()} running call${running() === 1 ? "" : "s"}`;
  log(`stopping (${why}); ${cancel ? `cancelling ${calls} (a commit past its go-ahead finishes) and waiting for them` : `waiting for ${calls}`}`);
  cancel?.();
  const deadline = setTimeout(() => {
    log("calls still running a minute after shutdown began: exiting without their answers");
    process.exit(1);
  }, 60_000);
  await idle();
  await Promise.allSettled([pool.close(), close()]);
  clearTimeout(deadline);
  const exit = code();
  if (exit !== 0) log(`exit ${exit}: ${why}`);
  process.exit(exit);
}

if (http !== null) {
  let handle: HttpHandle | undefined;
  let written: WrittenToken | null = null;
  const closeAll = async (): Promise<void> => {
    await handle?.close(60_000);
    written?.remove();
  };
  const fatal = (error: Error): void => void stop(`the HTTP listener failed: ${error.message}`, () => 0, () => Promise.resolve(), closeAll, () => 1);
  const where = http.listen.kind === "tcp" ? `${http.listen.host}:${http.listen.port}` : `the Unix socket ${http.listen.path}`;
  try {
    handle = await startHttp({ ...http, server: { roots, groups, shells: pool, snapshots, reads, applyQueue }, maxMessageBytes, limitNote, log, onFatal: fatal });
  } catch (error) {
    log(`cannot listen on ${where}: ${(error as Error).message}`);
    process.exit(error instanceof ConfigError ? 2 : 1);
  }
  const h = handle;
  // closeAll (h.close) cancels the running calls and waits for them
  const onSignal = (signal: string): void => void stop(signal, () => h.running(), () => Promise.resolve(), closeAll, () => 0, () => {});
  process.on("SIGINT", () => onSignal("SIGINT"));
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  const auth = http.auth;
  let authText: string;
  if (auth.kind === "none") {
    // On a socket the 0600 mode is the guard whether or not --no-auth was said: the wide warning would be untrue there.
    const onSocket = http.listen.kind === "socket";
    authText = onSocket ? `none beyond the socket's mode 0600 (only this user and root can connect)${auth.reason === "no-auth" ? "; --no-auth changes nothing on a socket" : ""}` : "NONE (--no-auth)";
    if (auth.reason === "no-auth" && !onSocket) {
      log(`WARNING: --no-auth: no bearer token is required, so every process of every local user that can reach ${h.url} can read and patch the roots (${rootsText}). Use the default token, or --socket, unless this machine has no other users or processes you do not trust.`);
    }
  } else {
    let file = auth.bearer.file;
    if (auth.bearer.origin === "generated") {
      written = writeGeneratedToken(auth.bearer.token, h.port === null ? "socket" : String(h.port));
      // Also on the paths that exit at once (a second signal, the shutdown deadline).
      process.on("exit", () => written?.remove());
      file = written.file;
      if (written.note !== null) log(`${written.note}: the token file goes to a private directory made for it instead`);
    }
    const from = auth.bearer.origin === "environment" ? `from ${TOKEN_ENV}` : `it is in the file ${file} (mode 0600, only this user can read it${auth.bearer.origin === "created-token-file" ? "; created now with a new token" : ""})`;
    log(`bearer token required: ${from}; clients send the header "Authorization: Bearer <token>"`);
    authText = "bearer token";
  }
  const at = http.listen.kind === "tcp" ? `Streamable HTTP at ${h.url}` : `Streamable HTTP on the Unix socket ${http.listen.path} (endpoint /mcp)`;
  log(`ready; ${at}; auth: ${authText}; at most ${http.maxSessions} sessions; roots: ${rootsText}`);
} else {
  const { server, connection } = createSession({ roots, groups, shells: pool, log, snapshots, reads, applyQueue });
  const stdio = new BoundedStdioTransport({ maxMessageBytes, limitNote, log });
  const transport = new ServerTransport(stdio);
  const describe = (reason: CloseReason): string => {
    switch (reason.kind) {
      case "stdin-ended":
        return "stdin closed";
      case "stdin-error":
        return `stdin failed: ${reason.error.message}`;
      case "stdout-error":
        return `stdout failed (${(reason.error as NodeJS.ErrnoException).code ?? reason.error.message}): the client is gone, answers cannot be delivered`;
      case "closed":
        return "transport closed";
    }
  };
  const finish = (why: string, clean: boolean): void =>
    void stop(
      why,
      () => connection.calls.running,
      () => connection.calls.idle(),
      () => server.close(),
      () => (clean && transport.unanswered === 0 && transport.undelivered === 0 ? 0 : 1),
      // a signal cancels what runs; the end of stdin lets it finish
      why.startsWith("SIG") ? () => connection.cancelCalls() : undefined,
    );
  // Our own close() during shutdown ends the transport too: not a new reason to stop.
  stdio.onclosed = (reason) => {
    if (!stopping) finish(describe(reason), reason.kind === "stdin-ended");
  };
  process.on("SIGINT", () => finish("SIGINT", true));
  process.on("SIGTERM", () => finish("SIGTERM", true));
  await server.connect(transport);
  log(`ready; roots: ${rootsText}`);
}
