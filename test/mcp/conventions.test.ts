/**
 * MCP conventions of the example server, in-process through the SDK
 * client: instructions, the logging capability and its events (connection,
 * commit, reconcile), and client roots when no root is configured.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ListRootsRequestSchema, LoggingMessageNotificationSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult, LoggingMessageNotification } from "@modelcontextprotocol/sdk/types.js";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import type { ExecOptions, ExecResult } from "../../lib/remote/shell.ts";
import { createSession } from "../../examples/mcp/tools.ts";
import { ServerTransport } from "../../examples/mcp/transport.ts";
import type { ListFilesOutput } from "../../examples/mcp/schemas_discovery.ts";
import type { RootConfig } from "../../examples/mcp/roots.ts";
import { localRoots, makeTree, sourceOf, textOf } from "./helpers.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tree = (files: Record<string, string>): string => {
  const d = makeTree(files);
  dirs.push(d);
  return d;
};

interface Wired {
  client: Client;
  messages: LoggingMessageNotification["params"][];
  logs: string[];
  close(): Promise<void>;
}

async function wire(roots: readonly RootConfig[], options: { clientRoots?: () => { uri: string; name?: string }[]; shells?: ReturnType<typeof sourceOf> } = {}): Promise<Wired> {
  const logs: string[] = [];
  const { server } = createSession({ roots, shells: options.shells ?? sourceOf(new LocalShell()), log: (l) => logs.push(l) });
  const client = new Client({ name: "conventions-test", version: "3.1" }, { capabilities: options.clientRoots ? { roots: { listChanged: true } } : {} });
  if (options.clientRoots) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: options.clientRoots!() }));
  const messages: LoggingMessageNotification["params"][] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void messages.push(n.params));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(new ServerTransport(b)), client.connect(a)]);
  await client.listTools();
  return { client, messages, logs, close: async () => void (await Promise.all([client.close(), server.close()])) };
}

async function until(what: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await Bun.sleep(10);
  }
}

const call = async (w: Wired, name: string, args: Record<string, unknown>): Promise<CallToolResult> => await w.client.callTool({ name, arguments: args }) as CallToolResult;

describe("initialize: instructions and capabilities", () => {
  test("the workflow in a few lines, naming the discovery tools; logging and tools capabilities", async () => {
    const w = await wire(localRoots({ site: tree({ "a.txt": "a\n" }) }));
    const instructions = w.client.getInstructions()!;
    for (const word of ["list_files", "search", "read_file", "apply_patch", "expected_sha256", "dry_run"]) expect(instructions).toContain(word);
    expect(instructions.split("\n").length).toBeLessThanOrEqual(8);
    expect(w.client.getServerCapabilities()).toMatchObject({ logging: {}, tools: { listChanged: true } });
    await w.close();
  });
});

describe("logging: connection, commit and reconcile events as notifications/message", () => {
  test("connection and commit events arrive; logging/setLevel filters them", async () => {
    const dir = tree({ "a.txt": "old\n" });
    const w = await wire(localRoots({ site: dir }));
    await until(() => w.messages.some((m) => (m.data as { event: string }).event === "connection"));
    expect(w.messages[0]).toMatchObject({ level: "info", logger: "ssh-apply-patch", data: { event: "connection", message: "client connected: conventions-test 3.1" } });
    const patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+new\n*** End Patch";
    await call(w, "apply_patch", { patch });
    await until(() => w.messages.some((m) => (m.data as { event: string }).event === "commit"));
    const commit = w.messages.find((m) => (m.data as { event: string }).event === "commit")!;
    expect(commit).toMatchObject({ level: "info", data: { ok: true, dry_run: false, files: [{ op: "update", path: "a.txt" }] } });
    expect((commit.data as { message: string }).message).toMatch(/^apply_patch site applied: update a\.txt \(operation \w+\)$/);
    await w.client.setLoggingLevel("warning");
    const before = w.messages.length;
    await call(w, "apply_patch", { patch: patch.replace("-old\n+new", "-new\n+newer") });
    await Bun.sleep(50);
    expect(w.messages.length).toBe(before); // an info event, filtered out
    await w.close();
  });

  test("FAULT INJECTION (the commit's result is lost): a warning for the commit, then the reconcile verdict", async () => {
    const dir = tree({ "a.txt": "old\n" });
    const inner = new LocalShell();
    let n = 0;
    const shell = {
      label: "local",
      elevated: false,
      async exec(command: string, options?: ExecOptions): Promise<ExecResult> {
        const result = await inner.exec(command, options);
        if (++n !== 2) return result;
        const text = new TextDecoder().decode(result.stdout);
        return { stdout: new TextEncoder().encode(text.slice(0, text.indexOf("DONE"))), stderr: result.stderr, exitCode: null, signal: null };
      },
    };
    const w = await wire(localRoots({ site: dir }), { shells: sourceOf(shell) });
    await call(w, "apply_patch", { patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+new\n*** End Patch" });
    await until(() => w.messages.some((m) => (m.data as { event: string }).event === "reconcile"));
    const events = w.messages.map((m) => [m.level, (m.data as { event: string }).event]);
    expect(events).toContainEqual(["warning", "commit"]);
    expect(events).toContainEqual(["notice", "reconcile"]);
    const reconcile = w.messages.find((m) => (m.data as { event: string }).event === "reconcile")!;
    expect(reconcile.data).toMatchObject({ ok: true, files: [{ path: "a.txt", state: "applied" }] });
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("new\n");
    await w.close();
  });
});

describe("client roots (no --root)", () => {
  test("the client's local folders are served; list_changed re-reads them and the tool descriptions follow", async () => {
    const one = tree({ "one.txt": "1\n" });
    const two = tree({ "two.txt": "2\n" });
    let current = [{ uri: pathToFileURL(one).href, name: "first" }, { uri: pathToFileURL(join(one, "missing")).href }];
    const w = await wire([], { clientRoots: () => current });
    const listed = await call(w, "list_files", {});
    expect(listed.isError).toBeFalsy();
    expect((listed.structuredContent as ListFilesOutput).entries.map((e) => e.path)).toEqual(["one.txt"]);
    expect((listed.structuredContent as ListFilesOutput).root).toBe("first");
    let changed = 0;
    w.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    current = [{ uri: pathToFileURL(one).href, name: "first" }, { uri: pathToFileURL(two).href, name: "second" }];
    await w.client.sendRootsListChanged();
    await until(() => changed > 0);
    const { tools } = await w.client.listTools();
    expect(tools.find((t) => t.name === "read_file")!.description).toContain("first (local directory), second (local directory)");
    const read = await call(w, "read_file", { root: "second", path: "two.txt" });
    expect((read.structuredContent as { text: string }).text).toBe("2\n");
    const ambiguous = await call(w, "read_file", { path: "two.txt" });
    expect(textOf(ambiguous)).toContain("several roots are configured (first, second)");
    expect(w.logs.some((l) => l.includes("client roots (list_changed): first="))).toBe(true);
    expect(w.logs.some((l) => /client roots \((initialized|tool call)\): first=.*; ignored: file:.*missing: not an existing local directory/.test(l))).toBe(true);
    await w.close();
  });

  test("a client root of / or /root is refused (issue 26 item 2): nothing under it is read, and the model is told why", async () => {
    const w = await wire([], { clientRoots: () => [{ uri: "file:///", name: "everything" }, { uri: "file:///root" }] });
    const read = await call(w, "read_file", { path: "etc/passwd" });
    expect(read.isError).toBe(true);
    expect(textOf(read)).toContain("this server has no roots");
    expect(textOf(read)).toContain("refused: / holds the whole machine");
    expect(textOf(read)).not.toContain("root:x:0:0");
    const listed = await call(w, "list_files", { root: "everything" });
    expect(listed.isError).toBe(true);
    expect(w.logs.some((l) => l.includes("file:///root: refused: /root is root's home /root"))).toBe(true);
    await w.close();
  });

  test("a client without the roots capability: every tool says there is nothing to work on, and why", async () => {
    const w = await wire([]);
    const result = await call(w, "list_files", {});
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("this server has no roots: none were configured (--root) and the client does not offer roots");
    await w.close();
  });

  test("tool calls that arrive while roots/list is pending wait for it", async () => {
    const dir = tree({ "a.txt": "a\n" });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const logs: string[] = [];
    const { server } = createSession({ roots: [], shells: sourceOf(new LocalShell()), log: (l) => logs.push(l) });
    const client = new Client({ name: "slow-roots", version: "1" }, { capabilities: { roots: {} } });
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      await gate;
      return { roots: [{ uri: pathToFileURL(dir).href }] };
    });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(new ServerTransport(b)), client.connect(a)]);
    await until(() => logs.some((l) => l.startsWith("client connected")));
    const pending = client.callTool({ name: "read_file", arguments: { path: "a.txt" } });
    await Bun.sleep(50);
    release();
    const result = await pending as CallToolResult;
    expect(result.isError).toBeFalsy();
    await Promise.all([client.close(), server.close()]);
  });
});
