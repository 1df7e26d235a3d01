/**
 * The Streamable HTTP transport (`--http`), spawned as a user would, with
 * the SDK's HTTP client and raw requests: the same tools, DNS rebinding and
 * Origin checks, the bearer token (made by the server by default, or given),
 * sizes (issue 14 item 3). Only 127.0.0.1. The attacks of another local
 * user are in http_auth.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ApplyPatchOutput, ReadFileOutput } from "../../examples/mcp/schemas.ts";
import type { ListFilesOutput, SearchOutput } from "../../examples/mcp/schemas_discovery.ts";
import { sha256 } from "./helpers.ts";
import { httpClient, startHttpServer } from "./http_helpers.ts";
import type { Running } from "./http_helpers.ts";
import { REPO } from "./stdio_helpers.ts";
import { PINNED_NODE } from "../support/runtimes.ts";

const MB = 1_000_000;
const TOKEN = "test-token-0123456789abcdef";

const callOn = async (client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> => await client.callTool({ name, arguments: args }) as CallToolResult;

/** A raw POST of an initialize request with the given headers. */
function rawPost(url: URL, headers: Record<string, string | string[]>, body?: string): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const payload = body ?? JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
  return new Promise((resolve, reject) => {
    const req = request({
      host: "127.0.0.1",
      port: Number(url.port),
      path: url.pathname,
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "content-length": Buffer.byteLength(payload), ...headers },
    }, (res) => {
      let text = "";
      res.on("data", (c) => (text += String(c)));
      res.on("end", () => resolve({ status: res.statusCode!, body: text, headers: res.headers }));
    });
    req.on("error", reject);
    req.end(payload);
  });
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "sap-mcp-http-"));
  writeFileSync(join(dir, "app.conf"), "listen 80;\ndebug on;\n");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("Streamable HTTP on 127.0.0.1 (the default: a token the server makes)", () => {
  let server: Running;
  beforeAll(async () => {
    server = await startHttpServer(["--root", `site=${dir}`]);
  }, 20_000);
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  }, 30_000);

  test("the same tools: list → search → read → patch → read, and a 12 MB patch", async () => {
    expect(server.url.pathname).toBe("/mcp");
    const client = await httpClient(server.url, server.auth);
    try {
      expect(client.getInstructions()).toContain("list_files");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["apply_patch", "list_files", "read_file", "search"]);
      const listed = await callOn(client, "list_files", {});
      expect((listed.structuredContent as ListFilesOutput).entries.map((e) => e.path)).toContain("app.conf");
      const found = await callOn(client, "search", { pattern: "debug on", fixed_string: true });
      expect((found.structuredContent as SearchOutput).matches.map((m) => `${m.path}:${m.line}`)).toEqual(["app.conf:2"]);
      const read = (await callOn(client, "read_file", { path: "app.conf" })).structuredContent as ReadFileOutput;
      const patch = "*** Begin Patch\n*** Update File: app.conf\n@@\n-debug on;\n+debug off;\n*** End Patch";
      const applied = await callOn(client, "apply_patch", { patch, expected_sha256: { "app.conf": read.file_sha256 } });
      expect(applied.isError).toBeFalsy();
      expect(readFileSync(join(dir, "app.conf"), "utf8")).toBe("listen 80;\ndebug off;\n");
      const lines = Array.from({ length: 200_000 }, (_, i) => `+line ${i} ${"abcdefghij".repeat(5)}`);
      const big = await callOn(client, "apply_patch", { patch: `*** Begin Patch\n*** Add File: big.txt\n${lines.join("\n")}\n*** End Patch` });
      expect(big.isError).toBeFalsy();
      expect((big.structuredContent as ApplyPatchOutput).files[0]!.new_sha256).toBe(sha256(readFileSync(join(dir, "big.txt"))));
      expect((await callOn(client, "read_file", { path: "big.txt", limit: 1 })).isError).toBeFalsy();
    } finally {
      await client.close();
    }
  }, 60_000);

  test("DNS rebinding: a Host that is not localhost is refused with 403; localhost names are accepted", async () => {
    const port = server.url.port;
    const evil = await rawPost(server.url, { host: "evil.example.com", origin: "http://evil.example.com", ...server.auth });
    expect(evil.status).toBe(403);
    expect(evil.body).toContain("only answers requests addressed to localhost");
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      const ok = await rawPost(server.url, { host, origin: `http://${host}`, ...server.auth });
      expect({ host, status: ok.status }).toEqual({ host, status: 200 });
    }
    expect(server.stderr()).toContain('refused a request for Host "evil.example.com"');
  });

  test("an Origin that is not local is refused (403) even with a local Host", async () => {
    const r = await rawPost(server.url, { host: `127.0.0.1:${server.url.port}`, origin: "https://attacker.example", ...server.auth });
    expect(r.status).toBe(403);
    expect(r.body).toContain("Origin is not allowed");
  });

  test("the endpoint is /mcp; an unknown session is 404; a declared body over the limit is 413 with the limit, before it is read", async () => {
    expect((await rawPost(new URL("/other", server.url), {})).status).toBe(404);
    const unknown = await rawPost(server.url, { "mcp-session-id": "nope", ...server.auth }, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }));
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body).error).toMatchObject({ code: -32001, message: expect.stringContaining("Start a new session with an initialize request") });
    const limit = 16 * 1024 * 1024 * 6 + 1024 * 1024;
    const huge = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: Number(server.url.port), path: "/mcp", method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "content-length": limit + 1, ...server.auth } }, (res) => {
        let text = "";
        res.on("data", (c) => (text += String(c)));
        res.on("end", () => resolve({ status: res.statusCode!, body: text }));
      });
      req.on("error", reject);
      req.write("{"); // the server answers from the header alone
    });
    expect(huge.status).toBe(413);
    expect(JSON.parse(huge.body).error.message).toContain(`this server accepts messages of at most ${limit} bytes (patches up to ${16 * 1024 * 1024} bytes)`);
  });
});

describe("Streamable HTTP: a client that vanishes mid-call", () => {
  test("the call's socket is destroyed while the host reads a big file: the server stays up and serves the next client", async () => {
    writeFileSync(join(dir, "big.bin.txt"), `${"x".repeat(1023)}\n`.repeat(40_000));
    const server = await startHttpServer(["--root", `site=${dir}`]);
    try {
      const init = await rawPost(server.url, server.auth);
      const session = init.headers["mcp-session-id"] as string;
      expect(init.status).toBe(200);
      const call = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "read_file", arguments: { path: "big.bin.txt" } } });
      await new Promise<void>((resolve) => {
        const req = request({ host: "127.0.0.1", port: Number(server.url.port), path: "/mcp", method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-06-18", "content-length": Buffer.byteLength(call), ...server.auth } });
        req.on("error", () => resolve());
        req.end(call, () => setTimeout(() => {
          req.destroy();
          resolve();
        }, 5));
      });
      const client = await httpClient(server.url, server.auth);
      try {
        const read = await callOn(client, "read_file", { path: "app.conf" });
        expect(read.isError).toBeFalsy();
      } finally {
        await client.close();
      }
      expect(server.child.exitCode).toBe(null);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 30_000);
});

describe("a client that trickles its headers is cut off (the server under Node)", () => {
  // Node's defaults (headersTimeout 60 s, checked every 30 s) kept 3000 such connections of
  // another uid open for over 75 s, each a file descriptor, before any token was seen.
  test("partial headers, one more line every 2 s: 408 and the connection closed (before: still open at 25 s)", async () => {
    const server = await startHttpServer(["--root", `site=${dir}`], { SAP_MCP_TOKEN: TOKEN }, PINNED_NODE);
    try {
      const got = await new Promise<string>((resolve) => {
        const socket = connect(Number(server.url.port), "127.0.0.1");
        let answer = "";
        socket.on("error", () => {});
        socket.write("POST /mcp HTTP/1.1\r\nHost: localhost\r\n");
        const drip = setInterval(() => socket.write("X-Drip: 1\r\n"), 2_000);
        const giveUp = setTimeout(() => socket.destroy(), 25_000);
        socket.on("data", (chunk) => (answer += String(chunk)));
        socket.on("close", () => {
          clearInterval(drip);
          clearTimeout(giveUp);
          resolve(answer.split("\r\n")[0] ?? "");
        });
      });
      expect(got).toBe("HTTP/1.1 408 Request Timeout");
    } finally {
      await server.stop();
    }
  }, 40_000);
});

describe("Streamable HTTP with a bearer token (SAP_MCP_TOKEN) and a small patch limit", () => {
  let server: Running;
  beforeAll(async () => {
    server = await startHttpServer(["--root", `site=${dir}?maxPatchBytes=1000000`], { SAP_MCP_TOKEN: TOKEN });
  }, 20_000);
  afterAll(async () => {
    expect(await server.stop("SIGINT")).toBe(0);
  }, 30_000);

  test("without the token: 401 with WWW-Authenticate; a wrong token: 401; with it: the tools", async () => {
    const none = await rawPost(server.url, {});
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toContain("Bearer");
    expect((await rawPost(server.url, { authorization: `Bearer ${TOKEN.slice(0, -1)}x` })).status).toBe(401);
    // Two Authorization lines, the right one first: the runtime would read the
    // first, a proxy in front might have judged the last. Refused either way.
    for (const lines of [[`Bearer ${TOKEN}`, "Bearer wrong-0123456789abcdef"], ["Bearer wrong-0123456789abcdef", `Bearer ${TOKEN}`], [`Bearer ${TOKEN}`, `Bearer ${TOKEN}`]]) {
      const two = await rawPost(server.url, { authorization: lines });
      expect([two.status, two.body]).toEqual([400, expect.stringContaining("more than one Authorization header")]);
    }
    await expect(httpClient(server.url)).rejects.toThrow();
    const client = await httpClient(server.url, { authorization: `Bearer ${TOKEN}` });
    try {
      expect((await callOn(client, "list_files", {})).isError).toBeFalsy();
      // Over the message limit (7 MiB): the call fails with the limit, the session goes on.
      const patch = `*** Begin Patch\n*** Add File: x.txt\n+${"y".repeat(8 * MB)}\n*** End Patch`;
      await expect(callOn(client, "apply_patch", { patch })).rejects.toThrow(/Request too large: \d+ bytes; this server accepts messages of at most 7048576 bytes \(patches up to 1000000 bytes\)/);
      expect((await callOn(client, "read_file", { path: "app.conf" })).isError).toBeFalsy();
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe("configuration errors (exit 2, before anything listens)", () => {
  const cases: { name: string; args: () => string[]; says: string }[] = [
    { name: "--no-auth on a non-loopback address", args: () => ["--root", `site=${dir}`, "--http", "0.0.0.0:0", "--no-auth"], says: "is not a loopback address" },
    { name: "HTTP without --root (client roots are never trusted over HTTP)", args: () => ["--http", "127.0.0.1:0"], says: "--http needs --root or --config" },
    { name: "a misspelt flag", args: () => ["--root", `site=${dir}`, "--http", "127.0.0.1:0", "--no-auht"], says: "unknown flag --no-auht: did you mean --no-auth?" },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const child = spawn(process.execPath, ["examples/mcp_server.ts", ...c.args()], { cwd: REPO, env: { ...process.env, SAP_MCP_TOKEN: "" } });
      let stderr = "";
      child.stderr.on("data", (chunk) => (stderr += String(chunk)));
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      expect(code).toBe(2);
      expect(stderr).toContain(c.says);
    }, 30_000);
  }
});
