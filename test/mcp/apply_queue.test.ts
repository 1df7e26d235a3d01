/**
 * The per-path apply queue (issue 28 item 4), through the real MCP SDK
 * client over Streamable HTTP against the spawned server: concurrent
 * clients on one file all succeed, in turn, each planned against the file
 * the ones before it left; a patch that no longer applies gets a true
 * context_mismatch showing the new text; a full queue answers `locked`
 * with its queue data; a cancel while queued removes the patch (not
 * applied); two patches naming the same two files in opposite orders both
 * apply (slots taken in one fixed order). A planted live lock on the host
 * holds the first apply at the head of the queue where a test needs the
 * others to wait behind it. The class itself is checked below without I/O.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ApplyQueue } from "../../examples/mcp/apply_queue.ts";
import { ownerRecord, plantLock } from "../support/lock_records.ts";
import { httpClient, startHttpServer } from "./http_helpers.ts";
import type { Running } from "./http_helpers.ts";
import { makeTree } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const dir = makeTree(files);
  made.push(dir);
  return dir;
}

/** Insert `line` right below the file's first line `header` (applies again and again). */
function insert(path: string, line: string): string {
  return `*** Begin Patch\n*** Update File: ${path}\n@@\n header\n+${line}\n*** End Patch\n`;
}

interface Outcome {
  ok: boolean;
  errors?: { code: string; message: string; queue?: Record<string, unknown> }[];
}

async function apply(client: Client, patch: string, signal?: AbortSignal): Promise<Outcome> {
  const result = await client.callTool({ name: "apply_patch", arguments: { patch } }, undefined, signal === undefined ? { timeout: 120_000 } : { signal, timeout: 120_000 });
  return result.structuredContent as unknown as Outcome;
}

async function logged(server: Running, pattern: RegExp, count = 1, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((server.stderr().match(new RegExp(pattern.source, "g")) ?? []).length < count) {
    if (Date.now() > deadline) throw new Error(`not logged ${count}×: ${pattern}\n${server.stderr()}`);
    await Bun.sleep(25);
  }
}

async function clients(server: Running, n: number): Promise<Client[]> {
  const out: Client[] = [];
  for (let i = 0; i < n; i++) out.push(await httpClient(server.url, server.auth));
  return out;
}

describe("MCP apply queue over HTTP", () => {
  test("20 clients, one file, each inserting its own line: all ok, none lost, they queued", async () => {
    const dir = tree({ "shared.txt": "header\nend\n" });
    const server = await startHttpServer(["--root", `site=${dir}`]);
    try {
      const all = await clients(server, 20);
      const results = await Promise.all(all.map((c, i) => apply(c, insert("shared.txt", `client ${i}`))));
      expect(results.map((r) => r.ok ? "ok" : r.errors?.[0]?.code)).toEqual(all.map(() => "ok"));
      const lines = readFileSync(join(dir, "shared.txt"), "utf8").split("\n");
      expect(lines.filter((l) => l.startsWith("client ")).sort()).toEqual(all.map((_, i) => `client ${i}`).sort());
      expect(server.stderr()).toMatch(/apply_patch site: queued behind \d+ (apply|applies) to shared\.txt/);
      await Promise.all(all.map((c) => c.close()));
    } finally {
      await server.stop();
    }
  }, 120_000);

  test("a patch that no longer applies after the one ahead of it: a true context_mismatch with the new text", async () => {
    const dir = tree({ "a.txt": "header\nx\n" });
    const lock = plantLock(dir, "a.txt", ownerRecord(), "holder_op");
    const server = await startHttpServer(["--root", `site=${dir}`]);
    try {
      const [one, two] = await clients(server, 2);
      const first = apply(one!, "*** Begin Patch\n*** Update File: a.txt\n@@\n header\n-x\n+from one\n*** End Patch\n");
      await Bun.sleep(500);
      const second = apply(two!, "*** Begin Patch\n*** Update File: a.txt\n@@\n header\n-x\n+from two\n*** End Patch\n");
      await logged(server, /queued behind 1 apply to a\.txt/);
      rmSync(lock, { recursive: true, force: true });
      const results = await Promise.all([first, second]);
      // Whichever reached the queue first wins; the other is planned against its result.
      const winner = results.findIndex((r) => r.ok);
      expect(results.filter((r) => r.ok).length).toBe(1);
      const loser = results[1 - winner]!;
      expect(loser.errors?.map((e) => e.code)).toEqual(["context_mismatch"]);
      const content = readFileSync(join(dir, "a.txt"), "utf8");
      const won = winner === 0 ? "from one" : "from two";
      expect(content).toBe(`header\n${won}\n`);
      expect(loser.errors![0]!.message).toContain(won);
      await Promise.all([one!.close(), two!.close()]);
    } finally {
      await server.stop();
    }
  }, 60_000);

  test("a full queue: locked with the queue's data and retry advice, nothing applied", async () => {
    const dir = tree({ "shared.txt": "header\n" });
    const lock = plantLock(dir, "shared.txt", ownerRecord(), "holder_op");
    const server = await startHttpServer(["--root", `site=${dir}`, "--queue-length", "2"]);
    try {
      const [a, b, c] = await clients(server, 3);
      const first = apply(a!, insert("shared.txt", "A"));
      await Bun.sleep(300);
      const second = apply(b!, insert("shared.txt", "B"));
      await logged(server, /queued behind 1 apply to shared\.txt/);
      const third = await apply(c!, insert("shared.txt", "C"));
      expect(third.ok).toBe(false);
      expect(third.errors?.[0]?.code).toBe("locked");
      expect(third.errors?.[0]?.queue).toMatchObject({ path: "shared.txt", reason: "full", waiting: 2, max_waiting: 2, waited_ms: 0 });
      expect(third.errors![0]!.queue!.retry_after_ms as number).toBeGreaterThan(0);
      expect(third.errors![0]!.message).toMatch(/^locked: shared\.txt already has 2 applies queued .* Send the same patch again in about/);
      rmSync(lock, { recursive: true, force: true });
      expect((await Promise.all([first, second])).map((r) => r.ok)).toEqual([true, true]);
      expect(readFileSync(join(dir, "shared.txt"), "utf8").split("\n").sort()).toEqual(["", "A", "B", "header"]);
      await Promise.all([a!.close(), b!.close(), c!.close()]);
    } finally {
      await server.stop();
    }
  }, 60_000);

  test("a cancel while queued: removed from the queue, not applied, its slot free for the next", async () => {
    const dir = tree({ "shared.txt": "header\n" });
    const lock = plantLock(dir, "shared.txt", ownerRecord(), "holder_op");
    const server = await startHttpServer(["--root", `site=${dir}`, "--queue-length", "2"]);
    try {
      const [a, b, c] = await clients(server, 3);
      const first = apply(a!, insert("shared.txt", "A"));
      await Bun.sleep(300);
      const controller = new AbortController();
      const second = apply(b!, insert("shared.txt", "B"), controller.signal);
      await logged(server, /queued behind 1 apply to shared\.txt/);
      controller.abort();
      await expect(second).rejects.toThrow();
      await logged(server, /apply_patch site cancelled while queued: not applied \(shared\.txt\)/);
      // With B gone the queue (length 2) has room: C is queued, not refused.
      const third = apply(c!, insert("shared.txt", "C"));
      await logged(server, /queued behind 1 apply to shared\.txt/, 2);
      rmSync(lock, { recursive: true, force: true });
      expect((await Promise.all([first, third])).map((r) => r.ok)).toEqual([true, true]);
      expect(readFileSync(join(dir, "shared.txt"), "utf8").split("\n").sort()).toEqual(["", "A", "C", "header"]);
      await Promise.all([a!.close(), b!.close(), c!.close()]);
    } finally {
      await server.stop();
    }
  }, 60_000);

  test("two patches naming the same two files in opposite orders, both ways at once: both apply, no deadlock", async () => {
    const dir = tree({ "a.txt": "header\n", "b.txt": "header\n" });
    const lock = plantLock(dir, "a.txt", ownerRecord(), "holder_op");
    const server = await startHttpServer(["--root", `site=${dir}`]);
    const both = (first: string, second: string, line: string): string =>
      `*** Begin Patch\n*** Update File: ${first}\n@@\n header\n+${line}\n*** Update File: ${second}\n@@\n header\n+${line}\n*** End Patch\n`;
    try {
      const all = await clients(server, 6);
      // Three each way, all while a.txt is held on the host: they pile up in both queues.
      const calls = all.map((c, i) => apply(c, i % 2 === 0 ? both("a.txt", "b.txt", `ab ${i}`) : both("b.txt", "a.txt", `ba ${i}`)));
      await logged(server, /queued behind \d+ (apply|applies) to [ab]\.txt/, 5);
      rmSync(lock, { recursive: true, force: true });
      const results = await Promise.all(calls);
      expect(results.map((r) => r.ok ? "ok" : r.errors?.[0]?.code)).toEqual(all.map(() => "ok"));
      const expected = all.map((_, i) => i % 2 === 0 ? `ab ${i}` : `ba ${i}`).sort();
      for (const file of ["a.txt", "b.txt"]) {
        expect(readFileSync(join(dir, file), "utf8").split("\n").filter((l) => /^(ab|ba) /.test(l)).sort()).toEqual(expected);
      }
      await Promise.all(all.map((c) => c.close()));
    } finally {
      await server.stop();
    }
  }, 90_000);
});

describe("ApplyQueue (no I/O)", () => {
  test("slots are granted in arrival order across overlapping key sets, whatever order the keys are given in", async () => {
    const queue = new ApplyQueue({ maxWaiting: 10 });
    const order: string[] = [];
    const first = await queue.enter(["a", "b"], { waitMs: 1000 });
    if (!first.ok) throw new Error("first not granted");
    const second = queue.enter(["b", "a"], { waitMs: 1000 }).then((e) => (order.push("second"), e));
    const third = queue.enter(["a"], { waitMs: 1000 }).then((e) => (order.push("third"), e));
    const fourth = queue.enter(["c"], { waitMs: 1000 }).then((e) => (order.push("fourth"), e));
    expect(queue.length("a")).toBe(3);
    expect(queue.length("b")).toBe(2);
    const fourthEntry = await fourth; // an unrelated key does not wait
    expect(fourthEntry.ok).toBe(true);
    first.release();
    const s = await second;
    expect(s.ok && s.ahead).toBe(1);
    if (s.ok) s.release();
    const t = await third;
    if (t.ok) t.release();
    if (fourthEntry.ok) fourthEntry.release();
    expect(order).toEqual(["fourth", "second", "third"]);
    expect(queue.keys).toBe(0);
  });

  test.each([
    { name: "the wait runs out", reason: "wait" as const, act: (_: AbortController) => {} },
    { name: "the call is cancelled", reason: "cancelled" as const, act: (c: AbortController) => c.abort() },
  ])("$name while queued: refused, removed, the next one moves up", async ({ reason, act }) => {
    const queue = new ApplyQueue({ maxWaiting: 10 });
    const head = await queue.enter(["k"], { waitMs: 1000 });
    const controller = new AbortController();
    const waiting = queue.enter(["k"], { waitMs: 50, signal: controller.signal });
    const behind = queue.enter(["k"], { waitMs: 5000 });
    act(controller);
    const refused = await waiting;
    expect(refused).toMatchObject({ ok: false, reason, key: "k", waiting: 2 });
    expect(queue.length("k")).toBe(2);
    if (head.ok) head.release();
    const next = await behind;
    expect(next.ok).toBe(true);
    if (next.ok) next.release();
    expect(queue.keys).toBe(0);
  });

  test("a full queue refuses at once and takes no slot in any of the patch's queues", async () => {
    const queue = new ApplyQueue({ maxWaiting: 1 });
    const head = await queue.enter(["b"], { waitMs: 1000 });
    const refused = await queue.enter(["a", "b"], { waitMs: 1000 });
    expect(refused).toMatchObject({ ok: false, reason: "full", key: "b", waiting: 1, waitedMs: 0 });
    expect(queue.length("a")).toBe(0);
    if (head.ok) head.release();
    expect(queue.keys).toBe(0);
  });
});
