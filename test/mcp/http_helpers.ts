/**
 * Spawning the example server with --http on 127.0.0.1 and connecting the
 * SDK's Streamable HTTP client to it. The server makes its own bearer
 * token (the default): the helper reads it from the file the server names
 * on stderr, as a user would.
 *
 * @module
 */
import { expect } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import type { ChildProcess } from "node:child_process";
import { REPO } from "./stdio_helpers.ts";

/** A spawned HTTP server. */
export interface Running {
  url: URL;
  child: ChildProcess;
  /** The bearer token (from the file the server named, or the one it was given); null with --no-auth. */
  token: string | null;
  /** The token file the server named on stderr, if any. */
  tokenFile: string | null;
  /** `{ authorization: "Bearer …" }`, or `{}` without a token. */
  auth: Record<string, string>;
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Start the server with --http 127.0.0.1:0 and read its URL from the ready line. */
export async function startHttpServer(args: string[], env: Record<string, string> = {}, runtime: string = process.execPath): Promise<Running> {
  const child = spawn(runtime, ["examples/mcp_server.ts", ...args, "--http", "127.0.0.1:0"], { cwd: REPO, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  let stdout = "";
  child.stderr!.on("data", (c) => (stderr += String(c)));
  child.stdout!.on("data", (c) => (stdout += String(c)));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const deadline = Date.now() + 15_000;
  while (!/Streamable HTTP at (http:\/\/\S+\/mcp)/.test(stderr)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the server did not start: ${stderr}`);
    await Bun.sleep(20);
  }
  const url = new URL(/Streamable HTTP at (http:\/\/\S+\/mcp)/.exec(stderr)![1]!);
  const tokenFile = /it is in the file (\S+) \(mode 0600/.exec(stderr)?.[1] ?? null;
  const token = tokenFile !== null ? readFileSync(tokenFile, "utf8").trim() : /from SAP_MCP_TOKEN/.test(stderr) ? env.SAP_MCP_TOKEN! : null;
  return {
    url,
    child,
    token,
    tokenFile,
    auth: token === null ? {} : { authorization: `Bearer ${token}` },
    stderr: () => stderr,
    stop: async (signal = "SIGTERM") => {
      child.kill(signal);
      const code = await exited;
      expect(stdout).toBe(""); // HTTP mode never writes to stdout
      return code;
    },
  };
}

/** An SDK client connected over Streamable HTTP. */
export async function httpClient(url: URL, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "http-test", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
}

