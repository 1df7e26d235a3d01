/**
 * Cancel over MCP (issue 26 item 4), stdio and Streamable HTTP: a client's
 * `notifications/cancelled` for an apply_patch whose commit is running
 * (here: waiting for a lock a live process holds) stops it before its
 * go-ahead — not applied, nothing of ours left in the root — and, since a
 * cancelled request gets no answer, the server's log says so with the
 * operation id. SIGTERM to the server does the same for every running
 * call, and the server exits within a few seconds.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ownerRecord, plantLock } from "../support/lock_records.ts";
import { httpClient, startHttpServer } from "./http_helpers.ts";
import { makeTree } from "./helpers.ts";
import { startStdio } from "./stdio_helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a1\n+a2\n*** End Patch\n";

/** A root whose a.txt is locked by this (live) test process: the commit waits for it. */
function lockedRoot(): { root: string; lock: string } {
  const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
  made.push(root);
  return { root, lock: plantLock(root, "a.txt", ownerRecord(), "holder_op") };
}

/** Entries of ours (`.sap-…`) under root, but the planted lock. */
function ours(root: string, lock: string): string[] {
  return readdirSync(root, { recursive: true, encoding: "utf8" })
    .filter((p) => p.split("/").some((c) => c.startsWith(".sap-")))
    .filter((p) => !join(root, p).startsWith(lock));
}

async function logged(log: () => string, pattern: RegExp, timeoutMs = 8000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(log())) {
    if (Date.now() > deadline) throw new Error(`not logged: ${pattern}\n${log()}`);
    await Bun.sleep(25);
  }
  return pattern.exec(log())![0];
}

const CANCELLED_LOG = /apply_patch site cancelled before any file changed: not applied \(operation ([0-9a-f]{16})\)/;

describe("MCP: a cancel means not applied, nothing left, and the log says so", () => {
  test("stdio: notifications/cancelled while the commit waits for a lock", async () => {
    const { root, lock } = lockedRoot();
    const session = await startStdio(process.execPath, ["examples/mcp_server.ts", "--root", `site=${root}`]);
    try {
      const controller = new AbortController();
      const call = session.client.callTool({ name: "apply_patch", arguments: { patch: PATCH } }, undefined, { signal: controller.signal });
      await Bun.sleep(800);
      controller.abort();
      await expect(call).rejects.toThrow();
      await logged(session.stderr, CANCELLED_LOG);
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a1\n");
      expect(ours(root, lock)).toEqual([]);
    } finally {
      await session.close();
    }
  }, 30_000);

  test("HTTP: notifications/cancelled while the commit waits for a lock", async () => {
    const { root, lock } = lockedRoot();
    const server = await startHttpServer(["--root", `site=${root}`]);
    try {
      const client = await httpClient(server.url, server.auth);
      const controller = new AbortController();
      const call = client.callTool({ name: "apply_patch", arguments: { patch: PATCH } }, undefined, { signal: controller.signal });
      await Bun.sleep(800);
      controller.abort();
      await expect(call).rejects.toThrow();
      await logged(server.stderr, CANCELLED_LOG);
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a1\n");
      expect(ours(root, lock)).toEqual([]);
      await client.close();
    } finally {
      await server.stop();
    }
  }, 30_000);

  for (const transport of ["stdio", "HTTP"] as const) {
    test(`${transport}: SIGTERM to the server cancels the running commit cleanly and the server exits soon`, async () => {
      const { root, lock } = lockedRoot();
      if (transport === "stdio") {
        const session = await startStdio(process.execPath, ["examples/mcp_server.ts", "--root", `site=${root}`]);
        const call = session.call("apply_patch", { patch: PATCH }).catch((e: unknown) => e);
        await Bun.sleep(800);
        const pid = (session.client.transport as unknown as { pid: number | null }).pid;
        expect(pid).toBeGreaterThan(1);
        const started = performance.now();
        process.kill(pid!, "SIGTERM");
        await logged(session.stderr, CANCELLED_LOG);
        await call;
        await logged(session.stderr, /stopping \(SIGTERM\)/);
        expect(performance.now() - started).toBeLessThan(8000);
        await session.close();
      } else {
        const server = await startHttpServer(["--root", `site=${root}`]);
        const client = await httpClient(server.url, server.auth);
        // its answer may never come: the server is going away
        void client.callTool({ name: "apply_patch", arguments: { patch: PATCH } }).catch(() => {});
        await Bun.sleep(800);
        const started = performance.now();
        const code = await server.stop("SIGTERM");
        expect(performance.now() - started).toBeLessThan(8000);
        expect(code).toBe(0);
        expect(server.stderr()).toMatch(CANCELLED_LOG);
      }
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a1\n");
      expect(ours(root, lock)).toEqual([]);
    }, 30_000);
  }
});
