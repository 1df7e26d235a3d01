/**
 * Campaign 1 — connection faults over a real sshd: a TCP proxy between the
 * client and sshd cuts the connection after N bytes of client→server
 * traffic, or (separately) of server→client traffic, at cut points spread
 * over a clean run of a 3-file commit. Each trial is judged by
 * verdict.ts; reconcile runs over a fresh connection, immediately (as a
 * client would), again on `locked`, and its report is compared with the
 * disk only once no orphaned commit program can still change it.
 *
 * @module
 */
import { rmSync } from "node:fs";
import { commitRemote } from "../../lib/remote/commit.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import { connectSsh } from "../../lib/ssh/shell.ts";
import type { SshShell } from "../../lib/ssh/shell.ts";
import type { CommitReport } from "../../lib/types.ts";
import type { Sshd } from "../support/sshd.ts";
import { writeKnownHosts } from "../support/sshd.ts";
import { startTcpProxy } from "../support/tcp_proxy.ts";
import type { TcpProxy } from "../support/tcp_proxy.ts";
import { threeFileFixture, writeBefore } from "./fixture.ts";
import type { Owner, TxFixture } from "./fixture.ts";
import { waitForNoProcess } from "./orphans.ts";
import { checkCommit, checkReconcile, classify, resultLabel, strayDirectories } from "./verdict.ts";

/** Parameters of {@linkcode runCutSweep}. */
export interface CutSweepOptions {
  sshd: Sshd;
  /** A directory for known_hosts files. */
  workDir: string;
  /** Number of cut points in each direction. */
  pointsPerDirection: number;
  /** A fresh empty root directory (the fixture is written into it). */
  makeRoot: () => string;
  /** Owner to give the trees (the sshd login user, when it is not us). */
  owner?: Owner;
  fixture?: TxFixture;
  onTrial?: (i: number, total: number) => void;
}

/** One cut point and what came of it. */
export interface CutTrial {
  direction: "up" | "down";
  /** Bytes forwarded in that direction before the cut (from the connection's start). */
  at: number;
  result: string;
  settled: string;
  orphan: boolean;
}

/** What a cut sweep measured. */
export interface CutFigures {
  cuts: number;
  survived: number;
  violations: string[];
  trials: CutTrial[];
  /** Bytes of a clean run: handshake, and handshake + commit, per direction. */
  clean: { handshakeUp: number; handshakeDown: number; totalUp: number; totalDown: number };
  results: Record<string, number>;
  settled: Record<string, number>;
  /** Trials whose commit program was still running after the client had given up. */
  orphans: number;
  /** Trials where reconcile answered `locked` first (commit still running) and was called again. */
  reconcileRetries: number;
  strayDirectoryTrials: number;
}

function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

/**
 * `n` cut points in (from, to]: half spread evenly over the whole range,
 * the other half over its last quarter (where the renames and the final
 * report travel), always including the very end.
 *
 * @example
 * ```ts
 * cutPoints(1000, 3000, 6); // [1500, 2000, 2500, 2667, 2833, 3000]
 * ```
 */
export function cutPoints(from: number, to: number, n: number): number[] {
  const points = new Set<number>();
  const even = Math.ceil(n / 2);
  for (let i = 1; i <= even; i++) points.add(Math.round(from + ((to - from) * i) / (even + 1)));
  const late = n - even;
  const start = to - (to - from) / 4;
  for (let i = 1; i <= late; i++) points.add(Math.round(start + ((to - start) * i) / late));
  return [...points].filter((p) => p > from && p <= to).sort((a, b) => a - b);
}

/**
 * Run the sweep: measure a clean run, then cut at `pointsPerDirection`
 * points in each direction.
 *
 * @example
 * ```ts
 * const figures = await runCutSweep({ sshd, workDir, pointsPerDirection: 20, makeRoot });
 * ```
 */
export async function runCutSweep(options: CutSweepOptions): Promise<CutFigures> {
  const fx = options.fixture ?? threeFileFixture();
  const { sshd } = options;
  const proxy = await startTcpProxy({ targetPort: sshd.port });
  const proxyLine = sshd.hostKeyLine.replace(`]:${sshd.port} `, `]:${proxy.port} `);
  const knownHostsFile = writeKnownHosts(options.workDir, [sshd.hostKeyLine, proxyLine], `kh-cuts-${proxy.port}`);
  const connect = (port: number): Promise<SshShell> =>
    connectSsh({
      host: "127.0.0.1",
      port,
      username: sshd.user,
      identityFile: sshd.userKeyPath,
      knownHostsFile,
      sshConfigFile: false,
      agent: false,
      keepaliveIntervalMs: 0, // nothing but the commit on the wire: byte counts repeat run to run
      readyTimeoutMs: 5000,
    });
  const figures: CutFigures = {
    cuts: 0,
    survived: 0,
    violations: [],
    trials: [],
    clean: { handshakeUp: 0, handshakeDown: 0, totalUp: 0, totalDown: 0 },
    results: {},
    settled: {},
    orphans: 0,
    reconcileRetries: 0,
    strayDirectoryTrials: 0,
  };
  try {
    figures.clean = await measureClean(proxy, connect, options, fx);
    const { handshakeUp, handshakeDown, totalUp, totalDown } = figures.clean;
    const plan: { direction: "up" | "down"; at: number }[] = [
      ...cutPoints(handshakeUp, totalUp, options.pointsPerDirection).map((at) => ({ direction: "up" as const, at })),
      ...cutPoints(handshakeDown, totalDown, options.pointsPerDirection).map((at) => ({ direction: "down" as const, at })),
    ];
    for (const [i, point] of plan.entries()) {
      figures.cuts++;
      const problems = await cutTrial(proxy, connect, options, fx, point, figures);
      if (problems.length === 0) figures.survived++;
      else figures.violations.push(...problems.map((p) => `cut ${point.direction} after ${point.at} bytes: ${p}`));
      options.onTrial?.(i, plan.length);
    }
  } finally {
    await proxy.close();
  }
  return figures;
}

async function measureClean(
  proxy: TcpProxy,
  connect: (port: number) => Promise<SshShell>,
  options: CutSweepOptions,
  fx: TxFixture,
): Promise<CutFigures["clean"]> {
  const root = options.makeRoot();
  writeBefore(root, fx, options.owner);
  proxy.setCutAfterBytes(undefined);
  const up0 = proxy.bytesUp;
  const down0 = proxy.bytesDown;
  const shell = await connect(proxy.port);
  const handshakeUp = proxy.bytesUp - up0;
  const handshakeDown = proxy.bytesDown - down0;
  const report = await commitRemote(shell, root, fx.plan);
  await Bun.sleep(50); // the channel close that follows the exit status
  const totalUp = proxy.bytesUp - up0;
  const totalDown = proxy.bytesDown - down0;
  await shell.close();
  rmSync(root, { recursive: true, force: true });
  if (!report.ok) throw new Error(`the clean run failed: ${report.errors?.[0]?.message}`);
  return { handshakeUp, handshakeDown, totalUp, totalDown };
}

async function cutTrial(
  proxy: TcpProxy,
  connect: (port: number) => Promise<SshShell>,
  options: CutSweepOptions,
  fx: TxFixture,
  point: { direction: "up" | "down"; at: number },
  figures: CutFigures,
): Promise<string[]> {
  const root = options.makeRoot();
  writeBefore(root, fx, options.owner);
  const op = `cut_${point.direction}_${point.at}_${Math.random().toString(36).slice(2, 8)}`;
  const problems: string[] = [];
  proxy.setCutAfterBytes({ [point.direction]: point.at });
  let report: CommitReport;
  let shell: SshShell | null = null;
  try {
    shell = await connect(proxy.port);
    report = await commitRemote(shell, root, fx.plan, { operationId: op, timeoutMs: 20_000 });
  } catch (error) {
    // a cut inside the handshake: connectSsh rejects, nothing ran
    report = { ok: false, operationId: op, atomicity: "batch_preflight_per_file_commit", elevated: false, files: [], warnings: [], errors: [{ code: "connect_failed", message: String(error), retryable: true }] };
  } finally {
    proxy.setCutAfterBytes(undefined);
    await shell?.close();
  }
  bump(figures.results, resultLabel(report));
  problems.push(...checkCommit(root, fx, report));

  // Reconcile over a fresh connection right away, as a client would; on
  // `locked` (the orphaned commit still holds its locks) call it again.
  const fresh = await connect(proxy.port);
  let rec: CommitReport;
  try {
    rec = await reconcile(fresh, root, reconcileTicket(fx.plan, op));
    for (let again = 0; !rec.ok && rec.errors?.[0]?.code === "locked" && again < 5; again++) {
      figures.reconcileRetries++;
      rec = await reconcile(fresh, root, reconcileTicket(fx.plan, op));
    }
  } finally {
    await fresh.close();
  }
  // Judge the disk only once nothing of this operation can change it.
  const waited = await waitForNoProcess(`'${op}'`);
  if (waited.orphan) figures.orphans++;
  if (waited.stillRunning) problems.push("a program of the operation was still running 15 s after reconcile");
  const { violations, settled } = checkReconcile(root, fx, rec);
  problems.push(...violations);
  if (classify(report) === "ok" && settled !== "applied") problems.push(`the commit reported ok but reconcile settled ${settled}`);
  bump(figures.settled, settled);
  if (settled !== "mixed" && strayDirectories(root, fx, settled).length > 0) figures.strayDirectoryTrials++;
  figures.trials.push({ direction: point.direction, at: point.at, result: resultLabel(report), settled, orphan: waited.orphan });
  rmSync(root, { recursive: true, force: true });
  return problems;
}
