/**
 * Example MCP server (stdio): `read_file` and `apply_patch` over configured
 * local and SSH roots.
 *
 * ```sh
 * bun examples/mcp_server.ts --root site=./examples/site
 * bun examples/mcp_server.ts --root app=ssh://deploy@web1:2222/srv/app?matching=exact
 * bun examples/mcp_server.ts --config roots.json
 * ```
 *
 * stdout carries only the protocol; every log line goes to stderr. The
 * pieces live in examples/mcp/: roots.ts (flags and config file), pool.ts
 * (one SSH connection per host), tools.ts (the tools), schemas.ts,
 * descriptions.ts, render.ts, transport.ts (hidden alias apply-patch, clean shutdown).
 *
 * @module
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ShellPool } from "./mcp/pool.ts";
import { ConfigError, loadRoots, USAGE } from "./mcp/roots.ts";
import type { RootConfig } from "./mcp/roots.ts";
import { createServer } from "./mcp/tools.ts";
import { ServerTransport } from "./mcp/transport.ts";

const log = (line: string): void => {
  process.stderr.write(`[ssh-apply-patch] ${line}\n`);
};

let roots: RootConfig[] | "help";
try {
  roots = loadRoots(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`ssh-apply-patch MCP server: ${error.message}\n`);
  process.exit(2);
}
if (roots === "help") {
  process.stderr.write(`${USAGE}\n`);
  process.exit(0);
}

const pool = new ShellPool(log);
const server = createServer({ roots, shells: pool, log });
const transport = new ServerTransport(new StdioServerTransport());

// Shutdown lets running calls finish and answer first: closing the server
// aborts them, and a commit cut part-way ends as outcome_unknown. A second
// signal, or a call still running after a minute, ends the process at once.
let stopping = false;
async function shutdown(why: string): Promise<void> {
  if (stopping) process.exit(1);
  stopping = true;
  log(`stopping (${why}); waiting for running calls`);
  const deadline = setTimeout(() => process.exit(1), 60_000);
  await transport.idle();
  await Promise.allSettled([pool.close(), server.close()]);
  clearTimeout(deadline);
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.stdin.on("end", () => void shutdown("stdin closed"));

await server.connect(transport);
log(`ready; roots: ${roots.map((r) => `${r.name}=${r.label}`).join(", ")}`);
