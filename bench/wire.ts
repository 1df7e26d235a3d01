/**
 * The wire bench (SPEC §11.1, issue 17): time and bytes in each direction
 * of a remote edit over a throttled link, ours against what an agent would
 * otherwise run, all through the very same sshd and the very same link.
 *
 * The link: bench/throttle_proxy.ts, a process on 127.0.0.1 that gives each
 * direction 4 MiB/s and the path 20 ms of round trip (a TCP proxy: tc netem
 * is not available in this project's containers), and counts the bytes it
 * delivered each way — SSH framing and encryption included, the same
 * counter for every contender. The "loopback" link is the same proxy
 * without limits (it only counts).
 *
 * Contenders, per scenario, interleaved round by round (each round runs
 * every one once, in a rotated order; medians are printed):
 * - ours, as a session uses it (the MCP server, a framework): one
 *   connection, already open, with a {@linkcode SnapshotCache} —
 *   cold (nothing cached: zstd-compressed download; also with `compress:
 *   false`, and with `delta: false` too), and cached (the file was read
 *   in this session before: the host proves its hash; also `delta: false`);
 *   the same cold apply on a fresh connection is shown for reference;
 * - `ssh host sed -i …` (a fresh `ssh` process, as an agent runs it; also
 *   over an already open OpenSSH ControlMaster connection, for reference);
 * - `scp` of the whole new file;
 * - `scp` down, `sed -i` here, `scp` up (three fresh processes).
 *
 * Targets (required): for the 10 MB file and a 1-line change at 4 MiB/s —
 * cached: ≤ 64 KiB on the wire in each direction and ≤ 1.5× `ssh host sed
 * -i`; cold: ≤ `scp` down + edit + up; on loopback, 50 files × 1 chunk ≤ 2×
 * one `ssh` session running the 50 `sed -i`.
 *
 * Usage: `bun bench/wire.ts [--quick] [--rounds=N] [--only=10mb|50files]`
 * (also run by `bun bench/run.ts`; `--only` runs one scenario, and only its
 * targets are judged). Needs sshd, ssh and scp (openssh-server,
 * openssh-client); prints why and fails the targets when they are absent.
 *
 * @module
 */
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { applyPatch } from "../lib/apply.ts";
import { readSnapshots } from "../lib/remote/snapshot.ts";
import { SnapshotCache } from "../lib/remote/snapshot_cache.ts";
import type { RemoteShell } from "../lib/remote/shell.ts";
import type { ApplyReport } from "../lib/types.ts";
import { connectSsh } from "../lib/ssh/shell.ts";
import { type Sshd, sshdAvailable, startSshd, writeKnownHosts } from "../test/support/sshd.ts";
import { sha256Hex } from "./fixtures.ts";
import { type ChunkSpec, expectedText, formatCodexPatchFiles, generateCodeLines, LineIndex, linesToBytes, uniqueChunks } from "./gen.ts";
import { judgeRatio, MIN_RUNS, roundRatios } from "./target.ts";

const REPO = resolve(import.meta.dir, "..");
const MiB = 1024 * 1024;

/** The throttled link of the targets. */
export const LINK: { readonly rate: number; readonly rttMs: number } = { rate: 4 * MiB, rttMs: 20 };

/** One file of a scenario: before, after, and the one line that changes. */
export interface WireFile {
  path: string;
  bytes: Uint8Array;
  newBytes: Uint8Array;
  expectedSha256: string;
  /** 1-based line number and the new text of the changed line (for sed). */
  line: number;
  newLine: string;
}

export interface WireScenario {
  name: string;
  files: WireFile[];
  patch: string;
}

function oneLineFiles(specs: { path: string; lines: number; seed: number }[]): WireScenario["files"] {
  return specs.map((spec) => {
    const lines = generateCodeLines(spec.lines, spec.seed);
    const [chunk] = uniqueChunks(lines, 1, spec.seed, new LineIndex(lines, (s) => s), [0]) as [ChunkSpec];
    const at = chunk.body.findIndex((l) => l.marker === "-");
    const newLine = chunk.body[at + 1]!.text;
    const after = expectedText(lines, [chunk]);
    return {
      path: spec.path,
      bytes: linesToBytes(lines),
      newBytes: new TextEncoder().encode(after),
      expectedSha256: sha256Hex(after),
      line: chunk.start + at + 1,
      newLine,
      chunk,
    };
  }).map(({ chunk: _chunk, ...file }) => file);
}

export function scenarioOf(name: string, specs: { path: string; lines: number; seed: number }[]): WireScenario {
  const files = oneLineFiles(specs);
  const chunks = specs.map((spec) => {
    const lines = generateCodeLines(spec.lines, spec.seed);
    return { path: spec.path, chunks: uniqueChunks(lines, 1, spec.seed, new LineIndex(lines, (s) => s), [0]) };
  });
  return { name, files, patch: formatCodexPatchFiles(chunks) };
}

/** sed's `s` replacement text for a literal line. */
function sedReplacement(text: string): string {
  return text.replace(/[\\/&]/g, (c) => `\\${c}`);
}

/** The `sed -i` program that makes the same change to one file. */
export function sedCommand(file: WireFile, path: string): string {
  return `sed -i '${file.line}s/.*/${sedReplacement(file.newLine).replaceAll("'", "'\\''")}/' '${path}'`;
}

/** The proxy process and its counters. */
export interface Link {
  port: number;
  reset(): Promise<void>;
  stats(): Promise<{ up: number; down: number }>;
  close(): Promise<void>;
}

export async function startLink(targetPort: number, rate: number, rttMs: number): Promise<Link> {
  const child: ChildProcess = spawn(process.execPath, [join(REPO, "bench/throttle_proxy.ts"), "--target", String(targetPort), "--rate", String(rate), "--rtt", String(rttMs)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout! });
  const waiting: ((line: string) => void)[] = [];
  lines.on("line", (line) => waiting.shift()?.(line));
  const next = (): Promise<string> => new Promise((resolve) => waiting.push(resolve));
  const listen = await next();
  const port = Number(listen.split(" ")[1]);
  if (!listen.startsWith("LISTEN ") || !Number.isInteger(port)) throw new Error(`throttle proxy: ${listen}`);
  const ask = async (command: string): Promise<string> => {
    const answer = next();
    child.stdin!.write(`${command}\n`);
    return await answer;
  };
  return {
    port,
    async reset() {
      await ask("reset");
    },
    async stats() {
      const [, up, down] = (await ask("stats")).split(" ");
      return { up: Number(up), down: Number(down) };
    },
    close() {
      return new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.stdin!.end();
      });
    },
  };
}

/** One measured run of a contender. */
interface Sample {
  ms: number;
  up: number;
  down: number;
  ok: boolean;
  note?: string;
}

/** A contender: prepares (untimed), then runs (timed) and says whether the result is right. */
interface Contender {
  name: string;
  /** Shown but not a peer of any target. */
  reference?: boolean;
  prepare?: () => Promise<void>;
  run: () => Promise<boolean | string>;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The host side of a scenario: its root, owned by the login user. */
interface HostTree {
  root: string;
  write(files: readonly WireFile[]): void;
  isNew(files: readonly WireFile[]): boolean;
}

function hostTree(owner: string): HostTree {
  const root = mkdtempSync(join(tmpdir(), "sap-wire-"));
  const id = spawnSync("id", ["-u", owner], { encoding: "utf8" });
  const gid = spawnSync("id", ["-g", owner], { encoding: "utf8" });
  const uid = Number(id.stdout.trim());
  const group = Number(gid.stdout.trim());
  const own = (path: string): void => {
    if (process.getuid?.() === 0 && Number.isInteger(uid)) chownSync(path, uid, group);
  };
  own(root);
  return {
    root,
    write(files) {
      for (const f of files) {
        const full = join(root, f.path);
        mkdirSync(dirname(full), { recursive: true });
        own(dirname(full));
        writeFileSync(full, f.bytes);
        own(full);
      }
    },
    isNew(files) {
      return files.every((f) => sha256Hex(readFileSync(join(root, f.path))) === f.expectedSha256);
    },
  };
}

/** OpenSSH client arguments for the bench sshd through `port`. */
function sshArgs(sshd: Sshd, knownHosts: string, extra: string[] = []): string[] {
  return [
    "-F", "/dev/null",
    "-i", sshd.userKeyPath,
    "-o", "IdentitiesOnly=yes",
    "-o", `UserKnownHostsFile=${knownHosts}`,
    "-o", "GlobalKnownHostsFile=/dev/null",
    "-o", "StrictHostKeyChecking=yes",
    "-o", "BatchMode=yes",
    ...extra,
  ];
}

function runProcess(argv: string[], input?: Uint8Array): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += String(d)));
    child.on("close", (status) => resolve({ status, stderr }));
    child.stdin!.end(input ?? new Uint8Array());
  });
}

/** What one scenario's run produced: per contender its samples. */
export interface WireResult {
  scenario: string;
  link: string;
  rows: { name: string; reference: boolean; samples: Sample[] }[];
}

async function measure(link: Link, contenders: readonly Contender[], rounds: number, scenario: string, linkName: string): Promise<WireResult> {
  const rows = contenders.map((c) => ({ name: c.name, reference: c.reference === true, samples: [] as Sample[] }));
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const i = (k + round) % contenders.length;
      const c = contenders[i]!;
      await c.prepare?.();
      await link.reset();
      const started = performance.now();
      let verdict: boolean | string;
      try {
        verdict = await c.run();
      } catch (error) {
        verdict = (error as Error).message;
      }
      const ms = performance.now() - started;
      const { up, down } = await link.stats();
      rows[i]!.samples.push({ ms, up, down, ok: verdict === true, ...(typeof verdict === "string" ? { note: verdict } : {}) });
    }
  }
  return { scenario, link: linkName, rows };
}

function reportNote(report: ApplyReport): string | true {
  if (report.ok) return true;
  return JSON.stringify(report.errors?.map((e) => `${e.code}: ${e.message.slice(0, 200)}`));
}

/** Everything the bench needs around the sshd. */
interface Rig {
  sshd: Sshd;
  user: string;
  knownHosts: string;
  open(port: number): Promise<RemoteShell>;
}

async function oneFileScenario(rig: Rig, link: Link, linkName: string, rounds: number, s: WireScenario): Promise<WireResult> {
  const tree = hostTree(rig.user);
  const file = s.files[0]!;
  const remote = join(tree.root, file.path);
  const local = mkdtempSync(join(tmpdir(), "sap-wire-local-"));
  const localFile = join(local, "file");
  const dest = `${rig.user}@127.0.0.1`;
  const ssh = ["ssh", ...sshArgs(rig.sshd, rig.knownHosts, ["-p", String(link.port)])];
  const scp = ["scp", "-q", ...sshArgs(rig.sshd, rig.knownHosts, ["-P", String(link.port)])];
  const control = join(local, "mux");
  const muxArgs = ["-o", `ControlPath=${control}`];
  // One session for ours, one ControlMaster for the OpenSSH reference.
  const session = await rig.open(link.port);
  const master = spawn("ssh", [...sshArgs(rig.sshd, rig.knownHosts, ["-p", String(link.port), ...muxArgs, "-M", "-N"]), dest], { stdio: "ignore" });
  for (let i = 0; i < 100 && spawnSync("ssh", [...sshArgs(rig.sshd, rig.knownHosts, muxArgs), "-O", "check", dest], { stdio: "ignore" }).status !== 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const restore = async (): Promise<void> => tree.write(s.files);
  const ours = (name: string, options: { compress?: boolean; delta?: boolean; cached: boolean; fresh?: boolean }): Contender => {
    let cache = new SnapshotCache();
    return {
      name,
      ...(options.fresh ? { reference: true } : {}),
      async prepare() {
        await restore();
        cache = new SnapshotCache();
        // "Already read in this session": a snapshot through the same cache, untimed.
        if (options.cached) await readSnapshots(session, tree.root, [file.path], { cache, compress: options.compress });
      },
      async run() {
        const shell = options.fresh ? await rig.open(link.port) : session;
        try {
          const report = await applyPatch(shell, {
            root: tree.root,
            patch: s.patch,
            cache,
            ...(options.compress !== undefined ? { compress: options.compress } : {}),
            ...(options.delta !== undefined ? { delta: options.delta } : {}),
          });
          const verdict = reportNote(report);
          return verdict === true && !tree.isNew(s.files) ? "wrong result on the host" : verdict;
        } finally {
          if (options.fresh) await shell.close?.();
        }
      },
    };
  };
  const processes = (argvs: string[][], check = true): Contender["run"] => async () => {
    for (const argv of argvs) {
      const result = await runProcess(argv);
      if (result.status !== 0) return `${argv[0]} exited ${result.status}: ${result.stderr.slice(0, 200)}`;
    }
    return !check || tree.isNew(s.files) ? true : "wrong result on the host";
  };
  const contenders: Contender[] = [
    ours("ours, cached (already read in this session)", { cached: true }),
    ours("ours, cached, delta off", { cached: true, delta: false }),
    ours("ours, cold (compressed download)", { cached: false }),
    ours("ours, cold, compress off", { cached: false, compress: false }),
    ours("ours, cold, compress off, delta off", { cached: false, compress: false, delta: false }),
    ours("ours, cold, on a fresh connection", { cached: false, fresh: true }),
    { name: "ssh host sed -i", prepare: restore, run: processes([[...ssh, dest, sedCommand(file, remote)]]) },
    { name: "ssh host sed -i (open ControlMaster)", reference: true, prepare: restore, run: processes([[...ssh, ...muxArgs, dest, sedCommand(file, remote)]]) },
    {
      name: "scp of the whole new file",
      async prepare() {
        await restore();
        writeFileSync(localFile, file.newBytes);
      },
      run: processes([[...scp, localFile, `${dest}:${remote}`]]),
    },
    {
      name: "scp down + sed -i + scp up",
      async prepare() {
        await restore();
        rmSync(localFile, { force: true });
      },
      run: processes([[...scp, `${dest}:${remote}`, localFile], ["sh", "-c", sedCommand(file, localFile)], [...scp, localFile, `${dest}:${remote}`]]),
    },
  ];
  try {
    return await measure(link, contenders, rounds, s.name, linkName);
  } finally {
    await session.close?.();
    spawnSync("ssh", [...sshArgs(rig.sshd, rig.knownHosts, muxArgs), "-O", "exit", dest], { stdio: "ignore" });
    master.kill();
    rmSync(local, { recursive: true, force: true });
    rmSync(tree.root, { recursive: true, force: true });
  }
}

async function manyFilesScenario(rig: Rig, link: Link, linkName: string, rounds: number, s: WireScenario): Promise<WireResult> {
  const tree = hostTree(rig.user);
  const dest = `${rig.user}@127.0.0.1`;
  const ssh = ["ssh", ...sshArgs(rig.sshd, rig.knownHosts, ["-p", String(link.port)])];
  const session = await rig.open(link.port);
  const restore = async (): Promise<void> => tree.write(s.files);
  const seds = s.files.map((f) => sedCommand(f, join(tree.root, f.path))).join(" && ");
  const ours = (name: string, fresh: boolean): Contender => ({
    name,
    ...(fresh ? { reference: true } : {}),
    prepare: restore,
    async run() {
      const shell = fresh ? await rig.open(link.port) : session;
      try {
        const verdict = reportNote(await applyPatch(shell, { root: tree.root, patch: s.patch }));
        return verdict === true && !tree.isNew(s.files) ? "wrong result on the host" : verdict;
      } finally {
        if (fresh) await shell.close?.();
      }
    },
  });
  const contenders: Contender[] = [
    ours("ours (open connection)", false),
    ours("ours, on a fresh connection", true),
    {
      name: `one ssh session running ${s.files.length} sed -i`,
      prepare: restore,
      async run() {
        const result = await runProcess([...ssh, dest, seds]);
        if (result.status !== 0) return `ssh exited ${result.status}: ${result.stderr.slice(0, 200)}`;
        return tree.isNew(s.files) ? true : "wrong result on the host";
      },
    },
  ];
  try {
    return await measure(link, contenders, rounds, s.name, linkName);
  } finally {
    await session.close?.();
    rmSync(tree.root, { recursive: true, force: true });
  }
}

/** The report of the wire bench. */
export interface WireReport {
  results: WireResult[];
  targets: { label: string; pass: boolean }[];
  markdown: string;
}

function formatBytes(n: number): string {
  return n >= MiB ? `${(n / MiB).toFixed(2)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`;
}

function summary(row: WireResult["rows"][number]): { ms: number; up: number; down: number; ok: boolean; note: string } {
  const ok = row.samples.every((s) => s.ok);
  return {
    ms: median(row.samples.map((s) => s.ms)),
    up: median(row.samples.map((s) => s.up)),
    down: median(row.samples.map((s) => s.down)),
    ok,
    note: row.samples.find((s) => !s.ok)?.note ?? "",
  };
}

function targetsOf(results: readonly WireResult[], only?: "10mb" | "50files"): WireReport["targets"] {
  const targets: WireReport["targets"] = [];
  if (only !== "50files") targets.push(...bigFileTargets(results));
  if (only !== "10mb") targets.push(manyFilesTarget(results));
  for (const result of results) {
    for (const row of result.rows) {
      const s = summary(row);
      if (!s.ok) targets.push({ label: `${result.scenario}: ${row.name} produced the right file (${s.note})`, pass: false });
    }
  }
  return targets;
}

type Row = WireResult["rows"][number];

/** Judged per round (bench/target.ts): ours ÷ the peer of the same interleaved round. */
function judged(label: string, ours: Row | undefined, peer: Row | undefined, max: number): WireReport["targets"][number] {
  if (!ours || !peer || !summary(ours).ok || !summary(peer).ok) return { label: `${label} (not measured)`, pass: false };
  const j = judgeRatio(roundRatios(ours.samples.map((s) => s.ms), peer.samples.map((s) => s.ms)), max);
  return { label: `${label} (${j.text})`, pass: j.pass };
}

function bigFileTargets(results: readonly WireResult[]): WireReport["targets"] {
  const targets: WireReport["targets"] = [];
  const find = (scenario: string, name: string) => results.find((r) => r.scenario === scenario)?.rows.find((r) => r.name === name);
  const big = "1-line change, 10 MB file";
  const cachedRow = find(big, "ours, cached (already read in this session)");
  const cached = cachedRow ? summary(cachedRow) : null;
  const limit = 64 * 1024;
  targets.push({
    label: `cached 1-line change, 10 MB, 4 MiB/s: ≤ 64 KiB on the wire each way (up ${cached ? formatBytes(cached.up) : "?"}, down ${cached ? formatBytes(cached.down) : "?"})`,
    pass: cached !== null && cached.ok && cached.up <= limit && cached.down <= limit,
  });
  targets.push(judged("cached 1-line change, 10 MB, 4 MiB/s: ours ÷ ssh host sed -i ≤ 1.5×", cachedRow, find(big, "ssh host sed -i"), 1.5));
  targets.push(judged("cold 1-line change, 10 MB, 4 MiB/s: ours ÷ scp down + edit + up ≤ 1.0×", find(big, "ours, cold (compressed download)"), find(big, "scp down + sed -i + scp up"), 1.0));
  return targets;
}

function manyFilesTarget(results: readonly WireResult[]): WireReport["targets"][number] {
  const many = results.find((r) => r.scenario.startsWith("50 files"));
  return judged("50 files × 1 chunk, loopback: ours ÷ one ssh session of 50 sed -i ≤ 2.0×", many?.rows[0], many?.rows.find((r) => r.name.startsWith("one ssh session")), 2.0);
}

function markdownOf(results: readonly WireResult[], targets: WireReport["targets"], rounds: number): string {
  const md: string[] = [];
  for (const result of results) {
    const peer = result.rows.find((r) => r.name.startsWith("ssh host sed -i") || r.name.startsWith("one ssh session"));
    const base = peer ? summary(peer).ms : null;
    md.push(`**${result.scenario}** — ${result.link}, median of ${rounds}`, "");
    md.push("| contender | ms | ÷ sed | up | down | |", "|---|---:|---:|---:|---:|---|");
    for (const row of result.rows) {
      const s = summary(row);
      md.push(`| ${row.name} | ${s.ms.toFixed(0)} | ${base ? `${(s.ms / base).toFixed(2)}×` : ""} | ${formatBytes(s.up)} | ${formatBytes(s.down)} | ${s.ok ? "" : `WRONG: ${s.note}`} |`);
    }
    md.push("");
  }
  md.push("| wire target | verdict |", "|---|---|");
  for (const t of targets) md.push(`| ${t.label} | ${t.pass ? "PASS" : "FAIL"} |`);
  return md.join("\n");
}

/**
 * Run the wire bench: the 10 MB scenario through the throttled link, the
 * 50-file scenario on loopback.
 *
 * @example
 * ```ts
 * const report = await runWireBench({ rounds: 3 });
 * console.log(report.markdown);
 * ```
 */
export async function runWireBench(options: { rounds?: number; quick?: boolean; only?: "10mb" | "50files" } = {}): Promise<WireReport> {
  const rounds = options.rounds ?? MIN_RUNS; // each target is judged from at least MIN_RUNS rounds (bench/target.ts)
  const missing = ["ssh", "scp"].filter((tool) => spawnSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" }).status !== 0);
  if (!sshdAvailable() || missing.length > 0) {
    const why = !sshdAvailable() ? "no runnable /usr/sbin/sshd (install openssh-server)" : `missing ${missing.join(", ")} (install openssh-client)`;
    const targets = [{ label: `wire bench not measured: ${why}`, pass: false }];
    return { results: [], targets, markdown: `not measured: ${why}` };
  }
  // internal-sftp: OpenSSH 9's scp speaks SFTP, and needs no helper binary this way.
  const sshd = await startSshd({ extraConfig: ["Subsystem sftp internal-sftp"] });
  const links: Link[] = [];
  try {
    const throttled = await startLink(sshd.port, LINK.rate, LINK.rttMs);
    const loopback = await startLink(sshd.port, 0, 0);
    links.push(throttled, loopback);
    const keyOf = sshd.hostKeyLine.slice(sshd.hostKeyLine.indexOf(" ") + 1);
    const knownHosts = writeKnownHosts(sshd.dir, [throttled.port, loopback.port].map((p) => `[127.0.0.1]:${p} ${keyOf}`), "known_hosts_wire");
    const rig: Rig = {
      sshd,
      user: sshd.user,
      knownHosts,
      open: (port) =>
        connectSsh({ host: "127.0.0.1", port, username: sshd.user, identityFile: sshd.userKeyPath, knownHostsFile: knownHosts, sshConfigFile: false, agent: false }),
    };
    const tenMegabytes = Math.ceil((options.quick ? 1 : 10) * MiB / 38.5);
    const big = scenarioOf("1-line change, 10 MB file", [{ path: "data/big.ts", lines: tenMegabytes, seed: 303 }]);
    const many = scenarioOf(
      "50 files × 1 chunk",
      Array.from({ length: 50 }, (_, i) => ({ path: `src/m${i % 5}/file${i}.ts`, lines: 200, seed: 500 + i })),
    );
    const results: WireResult[] = [];
    if (options.only !== "50files") results.push(await oneFileScenario(rig, throttled, `${LINK.rate / MiB} MiB/s, ${LINK.rttMs} ms RTT`, rounds, big));
    if (options.only !== "10mb") results.push(await manyFilesScenario(rig, loopback, "loopback (127.0.0.1, unthrottled)", rounds, many));
    const targets = targetsOf(results, options.only);
    return { results, targets, markdown: markdownOf(results, targets, rounds) };
  } finally {
    for (const link of links) await link.close();
    await sshd.stop();
  }
}

if (import.meta.main) {
  const roundsArg = process.argv.find((a) => a.startsWith("--rounds="));
  const onlyArg = process.argv.find((a) => a.startsWith("--only="))?.slice(7);
  if (onlyArg !== undefined && onlyArg !== "10mb" && onlyArg !== "50files") throw new Error(`--only=${onlyArg}: expected 10mb or 50files`);
  const report = await runWireBench({
    quick: process.argv.includes("--quick"),
    ...(roundsArg ? { rounds: Number(roundsArg.slice(9)) } : {}),
    ...(onlyArg ? { only: onlyArg } : {}),
  });
  console.log(report.markdown);
  process.exit(report.targets.every((t) => t.pass) ? 0 : 1);
}
