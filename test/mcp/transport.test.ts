import { afterEach, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { rmSync } from "node:fs";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { createServer } from "../../examples/mcp/tools.ts";
import { ServerTransport } from "../../examples/mcp/transport.ts";
import { FaultShell, localRoots, makeTree, sourceOf } from "./helpers.ts";

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A server whose first exec waits for `release()`; `entered` resolves when it is waiting. */
async function gatedSession() {
  dir = makeTree({ "a.txt": "a\n" });
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  let entered: () => void = () => {};
  const waiting = new Promise<void>((resolve) => (entered = resolve));
  const shell = new FaultShell(new LocalShell(), {
    before: async (n) => {
      if (n !== 1) return;
      entered();
      await gate;
    },
  });
  const server = createServer({ roots: localRoots({ site: dir }), shells: sourceOf(shell) });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const transport = new ServerTransport(serverSide);
  const client = new Client({ name: "t", version: "1" });
  await Promise.all([server.connect(transport), client.connect(clientSide)]);
  return { client, server, transport, release, waiting };
}

const settledWithin = async (promise: Promise<unknown>, ms: number): Promise<boolean> =>
  await Promise.race([promise.then(() => true), Bun.sleep(ms).then(() => false)]);

describe("ServerTransport.idle: shutdown waits until every request is answered", () => {
  test("idle waits for a running call and resolves once its response was sent", async () => {
    const { client, server, transport, release, waiting } = await gatedSession();
    const call = client.callTool({ name: "read_file", arguments: { path: "a.txt" } });
    await waiting;
    const idle = transport.idle();
    expect(await settledWithin(idle, 100)).toBe(false);
    release();
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(await settledWithin(idle, 1000)).toBe(true);
    await client.close();
    await server.close();
  });

  test("a call the client cancelled counts as answered (the SDK sends no response to it)", async () => {
    const { client, server, transport, release, waiting } = await gatedSession();
    const controller = new AbortController();
    const call = client.callTool({ name: "read_file", arguments: { path: "a.txt" } }, undefined, { signal: controller.signal });
    await waiting;
    controller.abort();
    await expect(call).rejects.toThrow();
    expect(await settledWithin(transport.idle(), 1000)).toBe(true);
    release();
    await client.close();
    await server.close();
  });

  test("idle is immediate with nothing running", async () => {
    const { client, server, transport, release } = await gatedSession();
    expect(await settledWithin(transport.idle(), 50)).toBe(true);
    release();
    await client.close();
    await server.close();
  });
});
