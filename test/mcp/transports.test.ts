/**
 * The round-2 conventions over both real transports, spawned as users run
 * them (stdio, Streamable HTTP), with the SDK client: instructions, the
 * discovery tools, log notifications of a commit, and (over stdio) client
 * roots when the server is started without --root — over HTTP that is a
 * configuration error (http.test.ts), since client roots are never trusted
 * there.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ListRootsRequestSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult, LoggingMessageNotification } from "@modelcontextprotocol/sdk/types.js";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ListFilesOutput, SearchOutput } from "../../examples/mcp/schemas_discovery.ts";
import { startHttpServer } from "./http_helpers.ts";
import type { Running } from "./http_helpers.ts";
import { REPO } from "./stdio_helpers.ts";

interface Wired {
  client: Client;
  messages: LoggingMessageNotification["params"][];
  close(): Promise<void>;
}

/** A client (optionally offering `roots`) connected to a server started with `args`. */
const transports: { name: string; wire(args: string[], roots?: string[]): Promise<Wired> }[] = [
  {
    name: "stdio",
    wire: async (args, roots) => {
      const client = newClient(roots);
      const messages = collect(client);
      await client.connect(new StdioClientTransport({ command: process.execPath, args: ["examples/mcp_server.ts", ...args], cwd: REPO, stderr: "pipe" }));
      return { client, messages, close: () => client.close() };
    },
  },
  {
    name: "Streamable HTTP",
    wire: async (args, roots) => {
      const server: Running = await startHttpServer(args);
      const client = newClient(roots);
      const messages = collect(client);
      await client.connect(new StreamableHTTPClientTransport(server.url, { requestInit: { headers: server.auth } }));
      return {
        client,
        messages,
        close: async () => {
          await client.close();
          expect(await server.stop()).toBe(0);
        },
      };
    },
  },
];

function newClient(roots?: string[]): Client {
  const client = new Client({ name: "transport-test", version: "2" }, { capabilities: roots ? { roots: { listChanged: true } } : {} });
  if (roots) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: roots.map((dir) => ({ uri: pathToFileURL(dir).href })) }));
  return client;
}

function collect(client: Client): LoggingMessageNotification["params"][] {
  const messages: LoggingMessageNotification["params"][] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void messages.push(n.params));
  return messages;
}

async function until(what: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await Bun.sleep(10);
  }
}

const callOn = async (client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> => await client.callTool({ name, arguments: args }) as CallToolResult;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "sap-mcp-transports-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

for (const t of transports) {
  describe(`conventions over ${t.name}`, () => {
    test("instructions; list_files and search; a commit logged as notifications/message", async () => {
      const site = mkdtempSync(join(dir, "site-"));
      writeFileSync(join(site, "app.conf"), "port 80\n");
      const w = await t.wire(["--root", `site=${site}`]);
      try {
        expect(w.client.getInstructions()).toContain("list_files");
        expect(w.client.getServerCapabilities()).toHaveProperty("logging");
        const listed = (await callOn(w.client, "list_files", {})).structuredContent as ListFilesOutput;
        expect(listed.entries.map((e) => e.path)).toEqual(["app.conf"]);
        const found = (await callOn(w.client, "search", { pattern: "port [0-9]+" })).structuredContent as SearchOutput;
        expect(found.matches.map((m) => m.id)).toEqual([found.matches[0]!.id]);
        await callOn(w.client, "apply_patch", { patch: "*** Begin Patch\n*** Update File: app.conf\n@@\n-port 80\n+port 8080\n*** End Patch" });
        expect(readFileSync(join(site, "app.conf"), "utf8")).toBe("port 8080\n");
        await until(() => w.messages.some((m) => (m.data as { event?: string }).event === "commit"));
        // Over HTTP the connection event may precede the client's standalone stream (the SDK then drops it); stdio always has it.
        if (t.name === "stdio") expect(w.messages.map((m) => (m.data as { event: string }).event)).toContain("connection");
      } finally {
        await w.close();
      }
    }, 30_000);

    if (t.name === "stdio") test("started without --root: the client's roots are served", async () => {
      const shared = mkdtempSync(join(dir, "shared-"));
      writeFileSync(join(shared, "notes.md"), "# notes\n");
      const w = await t.wire([], [shared]);
      try {
        const read = await callOn(w.client, "read_file", { path: "notes.md" });
        expect(read.isError).toBeFalsy();
        expect((read.structuredContent as { root: string; text: string })).toMatchObject({ text: "# notes\n" });
        await until(() => w.messages.some((m) => (m.data as { event?: string }).event === "roots"));
      } finally {
        await w.close();
      }
    }, 30_000);
  });
}
