/**
 * Without --root, the tool descriptions name the client's roots (issue 29
 * item 5): the first tools/list already does (it waits briefly for the
 * roots), and a change of roots sends one notifications/tools/list_changed
 * — through the real SDK client and the example server over stdio.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { rmSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { makeTree } from "./helpers.ts";
import { REPO } from "./stdio_helpers.ts";

interface Wired {
  client: Client;
  /** notifications/tools/list_changed received so far. */
  changed(): number;
  /** The Roots line of read_file's description in a fresh tools/list. */
  rootsLine(): Promise<string>;
  stderr(): string;
}

const open: Client[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const client of open.splice(0)) await client.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function start(roots: () => Promise<{ uri: string; name?: string }[]>): Promise<Wired> {
  const transport = new StdioClientTransport({ command: process.execPath, args: ["examples/mcp_server.ts"], cwd: REPO, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => (stderr += String(chunk)));
  const client = new Client({ name: "roots-listing", version: "1" }, { capabilities: { roots: { listChanged: true } } });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: await roots() }));
  let changed = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
  await client.connect(transport);
  open.push(client);
  return {
    client,
    changed: () => changed,
    rootsLine: async () => {
      const { tools } = await client.listTools();
      return tools.find((t) => t.name === "read_file")!.description!.split("\n").find((l) => /^Roots?:/.test(l))!;
    },
    stderr: () => stderr,
  };
}

async function until(what: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await Bun.sleep(10);
  }
}

const folder = (): string => {
  const dir = makeTree({ "a.txt": "a\n" });
  dirs.push(dir);
  return dir;
};

describe("client roots in the tool descriptions (stdio, no --root)", () => {
  test("the first tools/list, sent at once after connecting, names the client's root", async () => {
    const dir = folder();
    // The client answers roots/list a little late, as a busy client does.
    const w = await start(async () => (await Bun.sleep(300), [{ uri: pathToFileURL(dir).href, name: "proj" }]));
    expect(await w.rootsLine()).toStartWith(`Root: proj (local directory); "root" may be omitted.`);
  }, 15_000);

  test("new roots: one tools/list_changed for all the tools, and the next listing names them; the same roots again: none", async () => {
    const one = folder();
    const two = folder();
    let current = [{ uri: pathToFileURL(one).href, name: "first" }];
    const w = await start(() => Promise.resolve(current));
    expect(await w.rootsLine()).toStartWith(`Root: first (local directory); "root" may be omitted.`);
    await until(() => w.changed() > 0 || /client roots \(initialized\)/.test(w.stderr()));
    await Bun.sleep(100);
    const before = w.changed();
    current = [{ uri: pathToFileURL(one).href, name: "first" }, { uri: pathToFileURL(two).href, name: "second" }];
    await w.client.sendRootsListChanged();
    await until(() => w.changed() > before);
    await until(() => /client roots \(list_changed\): first=.*second=/.test(w.stderr()));
    await Bun.sleep(200); // any further notification would have come by now
    expect(w.changed()).toBe(before + 1);
    expect(await w.rootsLine()).toStartWith(`Roots: first (local directory), second (local directory). Pass "root" with one of these names.`);

    const lines = (w.stderr().match(/client roots \(list_changed\)/g) ?? []).length;
    await w.client.sendRootsListChanged();
    await until(() => (w.stderr().match(/client roots \(list_changed\)/g) ?? []).length > lines);
    await Bun.sleep(200);
    expect(w.changed()).toBe(before + 1);
  }, 15_000);

  test("a client that never answers roots/list still gets its tools/list, within the wait, saying none yet", async () => {
    const w = await start(() => new Promise(() => {}));
    const started = Date.now();
    expect(await w.rootsLine()).toStartWith(`Roots: the folders the client shares with this server (none yet); "root" is a folder's name.`);
    expect(Date.now() - started).toBeLessThan(8_000);
  }, 20_000);
});
