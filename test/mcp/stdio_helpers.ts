/**
 * Spawning the example server as a newcomer would, over stdio.
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { spawn } from "node:child_process";
import { join } from "node:path";

/** The repository root (the server is started from there, as `npm run mcp` does). */
export const REPO: string = join(import.meta.dir, "..", "..");

/** A client connected to a spawned server; `stderr()` is everything the server logged so far. */
export interface StdioSession {
  client: Client;
  stderr(): string;
  /** Non-JSON-RPC lines the client saw on the server's stdout. */
  protocolErrors: Error[];
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/**
 * Spawn `command args` in the repository and connect an SDK client to it.
 *
 * @example
 * ```ts
 * const s = await startStdio(process.execPath, ["examples/mcp_server.ts", "--root", "site=/tmp/site"]);
 * ```
 */
export async function startStdio(command: string, args: string[], env?: Record<string, string>): Promise<StdioSession> {
  // `env` is added to the SDK's default minimal environment (HOME, PATH, …).
  const transport = new StdioClientTransport({ command, args, cwd: REPO, stderr: "pipe", ...(env ? { env } : {}) });
  let logged = "";
  transport.stderr?.on("data", (chunk) => (logged += String(chunk)));
  const client = new Client({ name: "stdio-test", version: "1.0.0" });
  const protocolErrors: Error[] = [];
  client.onerror = (error) => protocolErrors.push(error);
  await client.connect(transport);
  await client.listTools(); // so callTool validates structuredContent against the listed output schemas
  return {
    client,
    stderr: () => logged,
    protocolErrors,
    call: async (name, args) => await client.callTool({ name, arguments: args }) as CallToolResult,
    close: () => client.close(),
  };
}

/** A line written to the server as it is (not JSON-encoded) by {@linkcode rawRun}. */
export class RawLine {
  readonly line: string;
  constructor(line: string) {
    this.line = line;
  }
}

/** What a raw spawn wrote and how it ended. */
export interface RawRun {
  stdout: string;
  stderr: string;
  code: number | null;
  signal: string | null;
}

/**
 * Spawn the server without any SDK, write `messages` as JSON-RPC lines,
 * once `expectedResponses` responses arrived close stdin (or send `stop`,
 * a signal), and collect everything until it exits.
 */
export function rawRun(
  command: string,
  args: string[],
  messages: unknown[],
  expectedResponses: number,
  stop: "stdin" | NodeJS.Signals = "stdin",
  timeoutMs = 15_000,
): Promise<RawRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the server did not answer and exit within ${timeoutMs} ms; stdout:\n${stdout}\nstderr:\n${stderr}`));
    }, timeoutMs);
    child.stdout.on("data", (chunk) => {
      stdout += String(chunk);
      const responses = stdout.split("\n").filter((line) => /"id":/.test(line) && /"(result|error)":/.test(line)).length;
      if (responses < expectedResponses) return;
      if (stop === "stdin") child.stdin.end();
      else child.kill(stop);
    });
    child.stderr.on("data", (chunk) => (stderr += String(chunk)));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code, signal });
    });
    for (const message of messages) child.stdin.write((message instanceof RawLine ? message.line : JSON.stringify(message)) + "\n");
  });
}

/** The MCP handshake as the first two messages of a raw run. */
export const HANDSHAKE: unknown[] = [
  { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } },
  { jsonrpc: "2.0", method: "notifications/initialized" },
];
