/**
 * The load bench (issue 28 item 6): the example MCP server over Streamable
 * HTTP on 127.0.0.1 (spawned as a user runs it, a local root), driven by the
 * real MCP SDK client:
 *
 * - **distinct**: N clients (one session each) at once, each inserting its
 *   own lines into its own file, `rounds` times;
 * - **shared**: N clients at once on one file, each inserting its own line,
 *   `rounds` times — every patch still applies after the others (it inserts
 *   below a header line), so every one must succeed (the server's per-path
 *   apply queue, examples/mcp/apply_queue.ts);
 * - **session**: one client, `sessionCalls` calls alternating apply_patch
 *   (a 1-line change) and read_file on one file, the server's RSS read
 *   after every call;
 * - **big**: one apply_patch of a 1-line change to a 1 GiB file (`--no-big`
 *   skips it: it needs about 2 GiB of disk and a few GiB of RAM).
 *
 * Each phase runs on a fresh server, whose RSS (VmRSS of /proc/PID/status)
 * is sampled every 100 ms and after every session call; the peak is the
 * kernel's VmHWM. Lost updates are counted from the files themselves: every
 * line a successful apply inserted must be there, and every patch that
 * succeeded must be in the file exactly once.
 *
 * Targets (required): 0 lost updates in every phase; on the shared file
 * every client's patch applied; the session's RSS levels off — the median
 * RSS of the last 100 calls is at most 5% above the median of the 100 calls
 * before the last 1,000 (windows scale down for a short session); the 1 GiB
 * change applied with the new content. p50/p99 apply latency (as the client
 * sees it) and RSS start/max/end are printed, not judged.
 *
 * Usage: `bun bench/load.ts [--clients=N] [--rounds=N] [--session-calls=N]
 * [--no-big] [--write-docs]`, or `npm run bench -- --load [same flags]`.
 * `--write-docs` writes the run into the `load` section of
 * docs/performance.md (full sizes only).
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { BENCH_DOC_PATH, replaceMarkedSections } from "./docs_markers.ts";
import type { TargetResult } from "./report.ts";

const REPO = join(import.meta.dir, "..");
const MIB = 1024 * 1024;

/** The session target: RSS growth over the last 1,000 calls at most this. */
export const LOAD_RSS_GROWTH_MAX = 0.05;

/** What {@linkcode runLoadBench} takes. */
export interface LoadBenchOptions {
  /** Concurrent clients of the distinct and shared phases (default 100). */
  clients?: number;
  /** Applies per client in those phases (default 2). */
  rounds?: number;
  /** Calls of the long session, apply and read alternating (default 2,500). */
  sessionCalls?: number;
  /** Run the 1 GiB phase (default true). */
  big?: boolean;
  /** Size of the big file (default 1 GiB). */
  bigBytes?: number;
  /** Progress lines (default stderr). */
  log?: (line: string) => void;
}

/** One phase's figures. */
export interface LoadPhase {
  name: string;
  calls: number;
  ok: number;
  /** Failure codes of the calls that failed, counted. */
  failed: Record<string, number>;
  lost: number;
  p50Ms: number;
  p99Ms: number;
  seconds: number;
  rss: { startMib: number; maxMib: number; endMib: number };
  note?: string;
}

/** What the load bench measured. */
export interface LoadBenchReport {
  phases: LoadPhase[];
  /** Session RSS growth over its last 1,000 calls (fraction), null when not measured. */
  rssGrowth: number | null;
  targets: TargetResult[];
  markdown: string;
}

interface Server {
  url: URL;
  auth: Record<string, string>;
  pid: number;
  child: ChildProcess;
  stderr(): string;
  stop(): Promise<void>;
}

function status(pid: number, field: "VmRSS" | "VmHWM"): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

async function startServer(root: string, rootOptions = ""): Promise<Server> {
  const args = ["examples/mcp_server.ts", "--root", `site=${root}${rootOptions}`, "--http", "127.0.0.1:0", "--max-sessions", "1000", "--queue-length", "1000"];
  const child = spawn(process.execPath, args, { cwd: REPO, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (c) => (stderr = (stderr + String(c)).slice(-200_000)));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const deadline = Date.now() + 30_000;
  const ready = /Streamable HTTP at (http:\/\/\S+\/mcp)/;
  while (!ready.test(stderr)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the server did not start: ${stderr}`);
    await Bun.sleep(20);
  }
  const tokenFile = /it is in the file (\S+) \(mode 0600/.exec(stderr)?.[1];
  const token = tokenFile === undefined ? null : readFileSync(tokenFile, "utf8").trim();
  return {
    url: new URL(ready.exec(stderr)![1]!),
    auth: token === null ? {} : { authorization: `Bearer ${token}` },
    pid: child.pid!,
    child,
    stderr: () => stderr,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

async function connect(server: Server): Promise<Client> {
  const client = new Client({ name: "load-bench", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(server.url, { requestInit: { headers: server.auth } }));
  return client;
}

/** One apply_patch: ok, or its first failure code; and how long the client waited. */
async function apply(client: Client, patch: string): Promise<{ ok: boolean; code: string; ms: number }> {
  const started = performance.now();
  try {
    const result = await client.callTool({ name: "apply_patch", arguments: { patch } }, undefined, { timeout: 600_000 });
    const out = result.structuredContent as { ok: boolean; errors?: { code: string }[] } | undefined;
    return { ok: out?.ok === true, code: out?.ok === true ? "ok" : out?.errors?.[0]?.code ?? "no_result", ms: performance.now() - started };
  } catch (error) {
    return { ok: false, code: `threw: ${(error as Error).message.slice(0, 80)}`, ms: performance.now() - started };
  }
}

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** RSS sampled every 100 ms while `fn` runs (plus VmHWM for the peak). */
async function sampled<T>(server: Server, fn: (sample: () => number) => Promise<T>): Promise<{ value: T; rss: LoadPhase["rss"] }> {
  const startMib = status(server.pid, "VmRSS") / MIB;
  let max = startMib;
  const sample = (): number => {
    const now = status(server.pid, "VmRSS") / MIB;
    if (now > max) max = now;
    return now;
  };
  const timer = setInterval(sample, 100);
  try {
    const value = await fn(sample);
    const endMib = sample();
    return { value, rss: { startMib, maxMib: Math.max(max, status(server.pid, "VmHWM") / MIB), endMib } };
  } finally {
    clearInterval(timer);
  }
}

const insertBelowHeader = (path: string, line: string): string => `*** Begin Patch\n*** Update File: ${path}\n@@\n header\n+${line}\n*** End Patch\n`;

/** N clients at once, each inserting `rounds` lines of its own into the file `fileOf(i)`. */
async function concurrentPhase(name: string, base: string, clients: number, rounds: number, fileOf: (i: number) => string, log: (line: string) => void): Promise<LoadPhase> {
  const root = join(base, name);
  mkdirSync(root, { recursive: true });
  const files = new Set(Array.from({ length: clients }, (_, i) => fileOf(i)));
  for (const file of files) writeFileSync(join(root, file), "header\nfooter\n");
  const server = await startServer(root);
  try {
    const all: Client[] = [];
    for (let i = 0; i < clients; i++) all.push(await connect(server));
    log(`load bench: ${name}: ${clients} clients × ${rounds} applies …`);
    const started = performance.now();
    const { value: results, rss } = await sampled(server, () =>
      Promise.all(all.map(async (client, i) => {
        const out: { ok: boolean; code: string; ms: number; line: string; file: string }[] = [];
        for (let r = 0; r < rounds; r++) {
          const line = `client ${i} round ${r}`;
          out.push({ ...(await apply(client, insertBelowHeader(fileOf(i), line))), line, file: fileOf(i) });
        }
        return out;
      })).then((rows) => rows.flat()));
    const seconds = (performance.now() - started) / 1000;
    await Promise.all(all.map((c) => c.close().catch(() => {})));
    // Lost: a success whose line is not in its file exactly once, or a file missing a line at all.
    const contents = new Map([...files].map((f) => [f, readFileSync(join(root, f), "utf8").split("\n")]));
    const lost = results.filter((r) => r.ok && contents.get(r.file)!.filter((l) => l === r.line).length !== 1).length;
    const failed: Record<string, number> = {};
    for (const r of results) if (!r.ok) failed[r.code] = (failed[r.code] ?? 0) + 1;
    const ms = results.map((r) => r.ms);
    return { name, calls: results.length, ok: results.filter((r) => r.ok).length, failed, lost, p50Ms: median(ms), p99Ms: percentile(ms, 99), seconds, rss };
  } finally {
    await server.stop();
  }
}

/** One client, `calls` calls alternating a 1-line apply and a read of the same file; RSS after each call. */
async function sessionPhase(base: string, calls: number, log: (line: string) => void): Promise<{ phase: LoadPhase; growth: number | null; window: number }> {
  const root = join(base, "session");
  mkdirSync(root, { recursive: true });
  const body = Array.from({ length: 200 }, (_, i) => `  line ${i}: some code-like text, ${"x".repeat(i % 40)}`).join("\n");
  writeFileSync(join(root, "s.txt"), `header\nvalue 0\n${body}\n`);
  const server = await startServer(root);
  try {
    const client = await connect(server);
    log(`load bench: session: ${calls} calls on one session …`);
    const started = performance.now();
    const after: number[] = [];
    let value = 0;
    let lost = 0;
    const failed: Record<string, number> = {};
    const ms: number[] = [];
    let ok = 0;
    const { rss } = await sampled(server, async (sample) => {
      for (let call = 0; call < calls; call++) {
        if (call % 2 === 0) {
          const r = await apply(client, `*** Begin Patch\n*** Update File: s.txt\n@@\n header\n-value ${value}\n+value ${value + 1}\n*** End Patch\n`);
          ms.push(r.ms);
          if (r.ok) {
            ok++;
            value++;
          } else failed[r.code] = (failed[r.code] ?? 0) + 1;
        } else {
          const result = await client.callTool({ name: "read_file", arguments: { path: "s.txt" } }, undefined, { timeout: 600_000 }).catch(() => null);
          const text = result?.structuredContent === undefined ? "" : JSON.stringify(result.structuredContent);
          if (text.includes(`value ${value}`)) ok++;
          else {
            failed.read_mismatch = (failed.read_mismatch ?? 0) + 1;
          }
        }
        after.push(sample());
        if ((call + 1) % 500 === 0) log(`  ${call + 1} calls, server RSS ${after.at(-1)!.toFixed(1)} MiB`);
      }
    });
    await client.close().catch(() => {});
    if (!readFileSync(join(root, "s.txt"), "utf8").includes(`\nvalue ${value}\n`)) lost = 1;
    // Windows: the last 1,000 calls (or 40% of a short session), each end measured over 10% of it (at most 100 calls).
    const span = Math.min(1000, Math.floor(calls * 0.4));
    const window = Math.max(1, Math.min(100, Math.floor(span / 10)));
    const growth = calls >= 20 ? median(after.slice(calls - window)) / median(after.slice(calls - span - window, calls - span)) - 1 : null;
    const phase: LoadPhase = { name: "session", calls, ok, failed, lost, p50Ms: median(ms), p99Ms: percentile(ms, 99), seconds: (performance.now() - started) / 1000, rss };
    return { phase, growth, window: span };
  } finally {
    await server.stop();
  }
}

/** A 1-line change to a file of `bytes` bytes, through the server. */
async function bigPhase(base: string, bytes: number, log: (line: string) => void): Promise<LoadPhase> {
  const root = join(base, "big");
  mkdirSync(root, { recursive: true });
  const path = join(root, "big.txt");
  log(`load bench: big: writing a ${(bytes / MIB).toFixed(0)} MiB file …`);
  const fd = openSync(path, "w");
  const line = "0123456789 abcdefghij klmnopqrstuvwxyz ABCDEFGHIJ KLMNOPQRSTUVWXYZ 0123456789 abcd\n"; // 84 bytes
  const chunk = Buffer.from(line.repeat(Math.floor(MIB / line.length)));
  writeSync(fd, "header\ntarget line\n");
  for (let written = 0; written < bytes; written += chunk.length) writeSync(fd, chunk);
  closeSync(fd);
  // The default maxFileBytes is 128 MiB: the root allows this file (and the patch stays tiny).
  const server = await startServer(root, `?maxFileBytes=${bytes + 2 * MIB}`);
  try {
    const client = await connect(server);
    log("load bench: big: one apply_patch …");
    const started = performance.now();
    const { value: r, rss } = await sampled(server, () => apply(client, "*** Begin Patch\n*** Update File: big.txt\n@@\n header\n-target line\n+changed line\n*** End Patch\n"));
    await client.close().catch(() => {});
    const headBytes = Buffer.alloc(40);
    const headFd = openSync(path, "r");
    readSync(headFd, headBytes, 0, 40, 0);
    closeSync(headFd);
    const head = headBytes.toString("utf8");
    const lost = r.ok && !head.startsWith("header\nchanged line\n") ? 1 : 0;
    return { name: `big (${(bytes / MIB).toFixed(0)} MiB, 1-line change)`, calls: 1, ok: r.ok ? 1 : 0, failed: r.ok ? {} : { [r.code]: 1 }, lost, p50Ms: r.ms, p99Ms: r.ms, seconds: (performance.now() - started) / 1000, rss };
  } finally {
    await server.stop();
    rmSync(path, { force: true });
  }
}

/**
 * Run the load bench.
 *
 * @example
 * ```ts
 * const report = await runLoadBench({ clients: 100, big: false });
 * console.log(report.markdown);
 * ```
 */
export async function runLoadBench(options: LoadBenchOptions = {}): Promise<LoadBenchReport> {
  const clients = options.clients ?? 100;
  const rounds = options.rounds ?? 2;
  const calls = options.sessionCalls ?? 2500;
  const big = options.big ?? true;
  const bigBytes = options.bigBytes ?? 1024 * MIB;
  const log = options.log ?? ((line: string) => console.error(line));
  const base = mkdtempSync(join(tmpdir(), "sap-load-bench-"));
  try {
    const phases: LoadPhase[] = [];
    phases.push(await concurrentPhase("distinct", base, clients, rounds, (i) => `f${i}.txt`, log));
    phases.push(await concurrentPhase("shared", base, clients, rounds, () => "shared.txt", log));
    const session = await sessionPhase(base, calls, log);
    phases.push(session.phase);
    if (big) phases.push(await bigPhase(base, bigBytes, log));
    const lost = phases.reduce((n, p) => n + p.lost, 0);
    const shared = phases[1]!;
    const bigRow = big ? phases[3]! : null;
    const growth = session.growth;
    const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
    const targets: TargetResult[] = [
      { label: `load: lost updates in every phase = 0 (${lost})`, kind: "required", pass: lost === 0 },
      { label: `load: ${clients} clients × ${rounds} on one file, every patch applied (${shared.ok}/${shared.calls}; p99 ${(shared.p99Ms / 1000).toFixed(2)} s)`, kind: "required", pass: shared.ok === shared.calls },
      {
        label: `load: server RSS over the last ${Math.min(1000, session.window)} of ${calls} session calls grows ≤ ${pct(LOAD_RSS_GROWTH_MAX)} (${growth === null ? "not measured" : pct(growth)})`,
        kind: "required",
        pass: growth !== null && growth <= LOAD_RSS_GROWTH_MAX,
      },
      ...(bigRow === null ? [] : [{ label: `load: a 1-line change to the ${(bigBytes / MIB).toFixed(0)} MiB file applied (${bigRow.ok === 1 && bigRow.lost === 0 ? `${bigRow.seconds.toFixed(1)} s, server peak RSS ${bigRow.rss.maxMib.toFixed(0)} MiB` : "failed"})`, kind: "required" as const, pass: bigRow.ok === 1 && bigRow.lost === 0 }]),
    ];
    const failedText = (p: LoadPhase): string => Object.entries(p.failed).map(([code, n]) => `${code} ${n}`).join(", ") || "none";
    const markdown = [
      `**${clients} concurrent MCP clients** (one Streamable HTTP session each, the SDK client, 127.0.0.1) × ${rounds} applies, on distinct files and on one shared file; a ${calls}-call session (apply_patch and read_file alternating); ${big ? `a ${(bigBytes / MIB).toFixed(0)} MiB file` : "no big file (--no-big)"}. A fresh server per phase; latency as the client sees it.`,
      "",
      "| phase | calls | ok | failed | lost | apply p50 (ms) | apply p99 (ms) | wall (s) | server RSS start / max / end (MiB) |",
      "|---|---:|---:|---|---:|---:|---:|---:|---|",
      ...phases.map((p) => `| ${p.name} | ${p.calls} | ${p.ok} | ${failedText(p)} | ${p.lost} | ${p.p50Ms.toFixed(0)} | ${p.p99Ms.toFixed(0)} | ${p.seconds.toFixed(1)} | ${p.rss.startMib.toFixed(0)} / ${p.rss.maxMib.toFixed(0)} / ${p.rss.endMib.toFixed(0)} |`),
      "",
      "| load target | verdict |",
      "|---|---|",
      ...targets.map((t) => `| ${t.label} | ${t.pass ? "PASS" : "FAIL"} |`),
    ].join("\n");
    return { phases, rssGrowth: growth, targets, markdown };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

/** `bun bench/load.ts [flags]` and `npm run bench -- --load [flags]`: run, print, exit 0 when every target holds. */
export async function loadBenchMain(argv: readonly string[]): Promise<never> {
  const flag = (name: string): number | undefined => {
    const arg = argv.find((a) => a.startsWith(`--${name}=`));
    return arg === undefined ? undefined : Number(arg.slice(name.length + 3));
  };
  const sized = ["clients", "rounds", "session-calls"].filter((n) => flag(n) !== undefined);
  const writeDocs = argv.includes("--write-docs");
  if (writeDocs && (sized.length > 0 || argv.includes("--no-big"))) {
    console.error(`--write-docs takes the bench as it is (100 clients, 2 rounds, 2,500 calls, the 1 GiB file): drop ${[...sized.map((n) => `--${n}`), ...(argv.includes("--no-big") ? ["--no-big"] : [])].join(", ")}`);
    process.exit(2);
  }
  const started = performance.now();
  const load = loadavg()[0]!;
  const report = await runLoadBench({
    ...(flag("clients") !== undefined ? { clients: flag("clients") } : {}),
    ...(flag("rounds") !== undefined ? { rounds: flag("rounds") } : {}),
    ...(flag("session-calls") !== undefined ? { sessionCalls: flag("session-calls") } : {}),
    big: !argv.includes("--no-big"),
  });
  const loadText = `load average ${load.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end`;
  console.log(report.markdown);
  console.log("");
  for (const t of report.targets) console.log(`${t.pass ? "PASS" : "FAIL"} (${t.kind}) ${t.label}`);
  console.log(`(load bench took ${((performance.now() - started) / 60_000).toFixed(1)} min; ${loadText})`);
  if (writeDocs) {
    const git = (...args: string[]) => spawnSync("git", args, { cwd: REPO, encoding: "utf8" }).stdout.trim();
    const commit = git("rev-parse", "--short", "HEAD") || "an unknown commit";
    const dirty = git("status", "--porcelain", "--untracked-files=no") !== "";
    const machine = `${cpus()[0]?.model.trim() ?? "unknown cpu"}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, bun ${Bun.version}, ${loadText}`;
    const header = `\`npx bun bench/load.ts --write-docs\` at \`${commit}\`${dirty ? " (+ local changes)" : ""}, finished ${new Date().toISOString().replace(/\.\d+Z$/, "Z")} after ${((performance.now() - started) / 60_000).toFixed(1)} min, on ${machine}.`;
    const doc = join(REPO, BENCH_DOC_PATH);
    writeFileSync(doc, replaceMarkedSections(readFileSync(doc, "utf8"), { load: `${header}\n\n${report.markdown}` }));
    console.log(`wrote the load section of ${BENCH_DOC_PATH}`);
  }
  process.exit(report.targets.every((t) => t.pass) ? 0 : 1);
}

if (import.meta.main) await loadBenchMain(process.argv.slice(2));
