/**
 * The HTTP transport is bounded and resumable (issue 26 item 7, issue 28
 * item 5b), in-process (startHttp) with raw requests: a hard session cap
 * under 250 opens (the oldest idle session goes first, and when every
 * session is busy a new one gets 503 with Retry-After), the spec's 400 and
 * 404 with words that say what to do, SSE events with ids and a resume
 * with Last-Event-ID after the connection broke mid-call, a replay buffer
 * within its bytes, and one snapshot cache for all sessions.
 *
 * "Busy" needs calls that last: GatedShell (FAULT INJECTION) holds each
 * program until the test opens the gate; the programs themselves are real.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";
import { SnapshotCache } from "../../lib/remote/snapshot_cache.ts";
import { startHttp } from "../../examples/mcp/http.ts";
import type { HttpHandle, HttpOptions } from "../../examples/mcp/http.ts";
import { ShellPool } from "../../examples/mcp/pool.ts";
import { callBody, initializeBody, messages, raw, readUntil } from "./http_raw.ts";
import type { Target } from "./http_raw.ts";
import { localRoots, sourceOf } from "./helpers.ts";

const TOKEN = "sessions-test-token-0123456789";
const AUTH = { authorization: `Bearer ${TOKEN}` };

/** FAULT INJECTION: every exec waits for the gate, then runs for real. */
class GatedShell implements RemoteShell {
  readonly label = "local";
  readonly elevated = false;
  readonly #inner = new LocalShell();
  #open = false;
  #waiting: (() => void)[] = [];
  started = 0;
  exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    this.started++;
    if (this.#open) return this.#inner.exec(command, options);
    return new Promise<void>((resolve) => this.#waiting.push(resolve)).then(() => this.#inner.exec(command, options));
  }
  release(): void {
    this.#open = true;
    for (const go of this.#waiting.splice(0)) go();
  }
}

let dir: string;
let handle: HttpHandle | undefined;
let logs: string[] = [];
afterEach(async () => {
  await handle?.close(1000);
  handle = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function start(over: Partial<HttpOptions> & { shell?: RemoteShell; snapshots?: SnapshotCache } = {}): Promise<Target> {
  dir = mkdtempSync(join(tmpdir(), "sap-http-sessions-"));
  writeFileSync(join(dir, "a.txt"), "alpha\n");
  writeFileSync(join(dir, "b.txt"), "beta\n");
  writeFileSync(join(dir, "x.txt"), `${"x".repeat(599)}\n`);
  writeFileSync(join(dir, "y.txt"), `${"y".repeat(599)}\n`);
  logs = [];
  const { shell, snapshots, ...rest } = over;
  handle = await startHttp({
    listen: { kind: "tcp", host: "127.0.0.1", port: 0 },
    auth: { kind: "token", bearer: { token: TOKEN, origin: "environment", file: null } },
    allowedOrigins: [],
    maxSessions: 64,
    replayBytes: 16 * 1024 * 1024,
    server: { roots: localRoots({ site: dir }), shells: shell ? sourceOf(shell) : new ShellPool(), ...(snapshots ? { snapshots } : {}) },
    maxMessageBytes: 1024 * 1024,
    log: (line) => logs.push(line),
    ...rest,
  });
  return { url: new URL(handle.url) };
}

async function open(target: Target): Promise<string> {
  const r = await raw(target, "POST", initializeBody(), AUTH);
  expect(r.status).toBe(200);
  return r.headers["mcp-session-id"] as string;
}

const ping = (target: Target, session: string) => raw(target, "POST", JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" }), { ...AUTH, "mcp-session-id": session });

describe("a hard session cap", () => {
  test("250 opens against --max-sessions 16: never more than 16 alive; the least recently used idle one goes first", async () => {
    const target = await start({ maxSessions: 16 });
    const opened: string[] = [];
    let most = 0;
    for (let round = 0; round < 25; round++) {
      // ten at once, as a burst of clients would
      const ids = await Promise.all(Array.from({ length: 10 }, () => open(target)));
      opened.push(...ids);
      most = Math.max(most, handle!.live());
      expect(handle!.sessions()).toBeLessThanOrEqual(16);
      // keep the very first session in use: it must survive every eviction
      expect((await ping(target, opened[0]!)).status).toBe(200);
    }
    expect(opened).toHaveLength(250);
    expect(new Set(opened).size).toBe(250);
    expect(most).toBeLessThanOrEqual(16);
    expect(handle!.sessions()).toBe(16);
    expect((await ping(target, opened[0]!)).status).toBe(200);
    // an evicted session is 404 with what to do; the newest ones live
    const gone = await ping(target, opened[1]!);
    expect(gone.status).toBe(404);
    expect(JSON.parse(gone.body).error.message).toContain("Start a new session with an initialize request");
    expect((await ping(target, opened.at(-1)!)).status).toBe(200);
    const evictions = logs.filter((l) => l.includes("closed the least recently used idle one"));
    expect(evictions).toHaveLength(250 - 16);
    expect(new Set(evictions).size).toBe(evictions.length); // never the same session twice
  }, 60_000);

  test("every session busy: a new one gets 503 with Retry-After; once a call ends, it gets in", async () => {
    const shell = new GatedShell();
    const target = await start({ maxSessions: 2, shell, retryAfterSeconds: 7 });
    const a = await open(target);
    const b = await open(target);
    const calls = [a, b].map((s, i) => raw(target, "POST", callBody(10 + i, "read_file", { path: "a.txt" }), { ...AUTH, "mcp-session-id": s }));
    while (shell.started < 2) await Bun.sleep(5);
    const refused = await raw(target, "POST", initializeBody(), AUTH);
    expect(refused.status).toBe(503);
    expect(refused.headers["retry-after"]).toBe("7");
    expect(JSON.parse(refused.body).error.message).toContain("all 2 sessions of this server have a call running; try again in 7 s");
    expect(handle!.live()).toBe(2);
    shell.release();
    for (const r of await Promise.all(calls)) expect(messages(r.events).at(-1)!.result).toBeDefined();
    const c = await open(target);
    expect(handle!.sessions()).toBe(2);
    expect((await ping(target, c)).status).toBe(200);
    expect((await ping(target, a)).status).toBe(404); // the least recently used of the two made room
  }, 30_000);
});

describe("400 and 404 say what to do", () => {
  const cases: { name: string; method: string; body: string | null; session?: string; status: number; says: string }[] = [
    { name: "a request without a session that is not an initialize", method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), status: 400, says: "no Mcp-Session-Id header, and this is not an initialize request" },
    { name: "a GET without a session", method: "GET", body: null, status: 400, says: "a GET needs the Mcp-Session-Id header" },
    { name: "a DELETE without a session", method: "DELETE", body: null, status: 400, says: "a DELETE needs the Mcp-Session-Id header" },
    { name: "a body that is not JSON", method: "POST", body: "{nope", status: 400, says: "Parse error" },
    { name: "an unknown session", method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }), session: "no-such-session", status: 404, says: "Session not found: this Mcp-Session-Id is unknown here" },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const target = await start();
      const r = await raw(target, c.method, c.body, { ...AUTH, ...(c.session ? { "mcp-session-id": c.session } : {}) });
      expect(r.status).toBe(c.status);
      expect(JSON.parse(r.body).error.message).toContain(c.says);
      expect(JSON.parse(r.body).error.message).not.toContain("Server not initialized");
      expect(handle!.live()).toBe(0); // nothing was opened
    });
  }
});

test("a streamed body (no Content-Length) over the limit for a new session: 413 with the limit, nothing opened", async () => {
  const target = await start();
  const url = (target as { url: URL }).url;
  const { request } = await import("node:http");
  const status = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: Number(url.port), path: "/mcp", method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...AUTH } }, (res) => {
      let text = "";
      res.on("data", (c) => (text += String(c)));
      res.on("end", () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on("error", reject);
    const chunk = "x".repeat(64 * 1024);
    for (let i = 0; i < 20; i++) req.write(chunk); // 1.25 MiB against a 1 MiB limit
    req.end();
  });
  expect(status.status).toBe(413);
  expect(JSON.parse(status.body).error.message).toContain("this server accepts messages of at most 1048576 bytes");
  expect(handle!.live()).toBe(0);
});

describe("resumable SSE streams", () => {
  test("every event carries an id; a call whose stream broke is resumed with Last-Event-ID and its result replayed", async () => {
    const shell = new GatedShell();
    const target = await start({ shell });
    const session = await open(target);
    const headers = { ...AUTH, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
    // The call's stream: the priming event (an id, no data) arrives, then the connection breaks.
    const cut = await readUntil(target, "POST", callBody(2, "read_file", { path: "a.txt" }), headers, (e) => e.id !== null);
    expect(cut.status).toBe(200);
    const priming = cut.events[0]!;
    expect(priming.id).toMatch(/^\d+$/);
    shell.release(); // the call finishes with no one listening
    await Bun.sleep(300);
    const resumed = await readUntil(target, "GET", null, { ...headers, "last-event-id": priming.id! }, (e) => e.data.includes('"id":2'));
    expect(resumed.status).toBe(200);
    const result = messages(resumed.events).find((m) => m.id === 2) as { result: { structuredContent: { text: string } } };
    expect(result.result.structuredContent.text).toBe("alpha\n");
    expect(resumed.events.every((e) => e.id !== null)).toBe(true);
    // a plain call: its events carry ids too
    const plain = await raw(target, "POST", callBody(3, "read_file", { path: "b.txt" }), headers);
    expect(plain.events.length).toBeGreaterThan(0);
    expect(plain.events.every((e) => e.id !== null && /^\d+$/.test(e.id))).toBe(true);
  }, 30_000);

  test("a resume the buffer cannot serve whole is refused with the reason; another session's event ids are unknown", async () => {
    const target = await start({ replayBytes: 4096 });
    const a = await open(target);
    const b = await open(target);
    const headers = (s: string) => ({ ...AUTH, "mcp-session-id": s, "mcp-protocol-version": "2025-11-25" });
    const first = await raw(target, "POST", callBody(2, "read_file", { path: "a.txt" }), headers(a));
    const firstId = first.events[0]!.id!;
    // b's traffic pushes a's events out of the 4 KiB buffer
    const bFirst = await raw(target, "POST", callBody(3, "read_file", { path: "b.txt" }), headers(b));
    // each session numbers its own events: b's first id is a's first id, whatever a did (ids tell nothing of other sessions)
    expect(bFirst.events[0]!.id).toBe(firstId);
    for (let i = 1; i < 10; i++) await raw(target, "POST", callBody(3 + i, "read_file", { path: "b.txt" }), headers(b));
    expect(handle!.replay().bytes).toBeLessThanOrEqual(4096);
    const dropped = await raw(target, "GET", null, { ...headers(a), "last-event-id": firstId });
    expect(dropped.status).toBe(400);
    expect(JSON.parse(dropped.body).error.message).toContain("were dropped to keep the replay buffer within 4096 bytes (--replay-bytes)");
    const recent = await raw(target, "POST", callBody(20, "read_file", { path: "b.txt" }), headers(b));
    const foreign = await raw(target, "GET", null, { ...headers(a), "last-event-id": recent.events[0]!.id! });
    expect(foreign.status).toBe(400);
    expect(JSON.parse(foreign.body).error.message).toContain("is not an event of this session");
  }, 30_000);
});

describe("one memory bound for all sessions", () => {
  test("the sessions share one snapshot cache: another session's reads evict within its bytes", async () => {
    const cache = new SnapshotCache({ maxBytes: 1000 });
    const t = await start({ snapshots: cache });
    const [a, b] = [await open(t), await open(t)];
    expect((await raw(t, "POST", callBody(2, "read_file", { path: "x.txt" }), { ...AUTH, "mcp-session-id": a })).status).toBe(200);
    expect(cache.stats).toMatchObject({ entries: 1, bytes: 600 });
    expect((await raw(t, "POST", callBody(2, "read_file", { path: "y.txt" }), { ...AUTH, "mcp-session-id": b })).status).toBe(200);
    expect(cache.stats).toMatchObject({ entries: 1, bytes: 600, evictions: 1 });
  }, 30_000);
});
