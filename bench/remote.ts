/**
 * Remote figures (SPEC §11): `exec` calls and bytes each way for
 * `applyPatch`, `readSnapshots` and `commitRemote` over `LocalShell` and
 * over a throwaway OpenSSH `sshd` on 127.0.0.1, for a 1-file patch, a
 * 20-file patch and a 1-line change in a 10 MB file, counted by a
 * {@linkcode CountingShell} around the real adapter. The 10 MB commit is
 * measured twice: as it runs (a delta upload: only the changed line and
 * the description of the ranges the host copies from the old file are
 * sent) and with `delta: false` (the whole content, as before).
 *
 * Per transport and scenario: a cold `applyPatch` on a fresh connection
 * (what a caller sees, capability probing included), then — files restored —
 * `readSnapshots` and `commitRemote` separately on the now-warm shell. The
 * target: each of the two is exactly one `exec`, whatever the file count.
 *
 * Usage: `bun bench/remote.ts` (also run by `bun bench/run.ts`).
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { applyPatch } from "../lib/apply.ts";
import { commitRemote } from "../lib/remote/commit.ts";
import { LocalShell } from "../lib/remote/local_shell.ts";
import { parsePatch } from "../lib/patch/parse.ts";
import { planPatch } from "../lib/plan/plan.ts";
import type { RemoteShell } from "../lib/remote/shell.ts";
import type { FileReport } from "../lib/types.ts";
import { readSnapshots } from "../lib/remote/snapshot.ts";
import { connectSsh } from "../lib/ssh/shell.ts";
import { sshdAvailable, startSshd, writeKnownHosts } from "../test/support/sshd.ts";
import { type ExecCounts, CountingShell } from "./counting_shell.ts";
import { sha256Hex } from "./fixtures.ts";
import { expectedText, formatCodexPatchFiles, generateCodeLines, LineIndex, linesToBytes, uniqueChunks } from "./gen.ts";

/** Files before, the patch, and each file's SHA-256 after. */
interface Scenario {
  name: string;
  files: { path: string; bytes: Uint8Array; expectedSha256: string }[];
  patch: string;
  /** Also measure the commit with `delta: false` (whole uploads). */
  compareDeltaOff?: boolean;
}

/** "content uploaded: N" from a commit's per-file `bytesUploaded`. */
function uploadNote(files: readonly FileReport[]): string {
  const uploaded = files.reduce((n, f) => n + (f.bytesUploaded ?? 0), 0);
  const written = files.reduce((n, f) => n + f.bytesWritten, 0);
  return `content uploaded ${formatBytes(uploaded)} of ${formatBytes(written)} written`;
}

function scenario(name: string, specs: { path: string; lines: number; seed: number; chunks: number; oneLine?: boolean }[]): Scenario {
  const files: Scenario["files"] = [];
  const sections = [];
  for (const spec of specs) {
    const lines = generateCodeLines(spec.lines, spec.seed);
    const chunks = uniqueChunks(lines, spec.chunks, spec.seed, new LineIndex(lines, (s) => s), spec.oneLine ? [0] : undefined);
    files.push({ path: spec.path, bytes: linesToBytes(lines), expectedSha256: sha256Hex(expectedText(lines, chunks)) });
    sections.push({ path: spec.path, chunks });
  }
  return { name, files, patch: formatCodexPatchFiles(sections) };
}

/** The three scenarios of the issue. */
export function remoteScenarios(): Scenario[] {
  const tenMegabytes = Math.ceil((10 * 1024 * 1024) / 38.5);
  return [
    scenario("1 file, 3 chunks", [{ path: "src/app.ts", lines: 2000, seed: 101, chunks: 3 }]),
    scenario(
      "20 files, 1 chunk each",
      Array.from({ length: 20 }, (_, i) => ({ path: `src/mod${i}/file${i}.ts`, lines: 500, seed: 200 + i, chunks: 1 })),
    ),
    { ...scenario("1-line change, 10 MB file", [{ path: "data/big.ts", lines: tenMegabytes, seed: 303, chunks: 1, oneLine: true }]), compareDeltaOff: true },
  ];
}

/** One measured step. */
export interface RemoteRow extends ExecCounts {
  transport: string;
  scenario: string;
  step: "applyPatch (cold)" | "readSnapshots" | "commitRemote" | "commitRemote (delta off)";
  ms: number;
  ok: boolean;
  note: string;
}

function writeTree(root: string, s: Scenario): void {
  for (const f of s.files) {
    mkdirSync(join(root, dirname(f.path)), { recursive: true });
    writeFileSync(join(root, f.path), f.bytes);
  }
}

function treeIsNew(root: string, s: Scenario): boolean {
  return s.files.every((f) => sha256Hex(readFileSync(join(root, f.path))) === f.expectedSha256);
}

async function timed<T>(shell: CountingShell, work: () => Promise<T>): Promise<{ value: T; counts: ExecCounts; ms: number }> {
  shell.take();
  const started = performance.now();
  const value = await work();
  return { value, counts: shell.take(), ms: performance.now() - started };
}

async function measureScenario(
  transport: string,
  open: () => Promise<RemoteShell>,
  s: Scenario,
  owner?: string,
): Promise<RemoteRow[]> {
  const root = mkdtempSync(join(tmpdir(), "sap-remote-bench-"));
  writeTree(root, s);
  // The sshd harness logs in as a non-root test user when we are root: the
  // tree must be theirs to read and replace.
  if (owner !== undefined && process.getuid?.() === 0 && owner !== "root") {
    const chown = spawnSync("chown", ["-R", owner, root]);
    if (chown.status !== 0) throw new Error(`chown -R ${owner} ${root} failed: ${String(chown.stderr)}`);
  }
  const shell = new CountingShell(await open());
  const rows: RemoteRow[] = [];
  const row = (step: RemoteRow["step"], m: { counts: ExecCounts; ms: number }, ok: boolean, note: string) =>
    rows.push({ transport, scenario: s.name, step, ...m.counts, ms: m.ms, ok, note });
  try {
    const applied = await timed(shell, () => applyPatch(shell, { root, patch: s.patch }));
    const appliedOk = applied.value.ok && treeIsNew(root, s);
    row("applyPatch (cold)", applied, appliedOk, appliedOk ? "" : JSON.stringify(applied.value.errors ?? []).slice(0, 300));

    writeTree(root, s);
    const parsed = parsePatch(s.patch);
    if (!parsed.ok) throw new Error(`remote bench patch does not parse: ${parsed.errors[0]?.message}`);
    const paths = s.files.map((f) => f.path);
    const read = await timed(shell, () => readSnapshots(shell, root, paths));
    const readOk = paths.every((p) => read.value.get(p)?.kind === "file");
    row("readSnapshots", read, readOk, readOk ? "" : "a snapshot is not a regular file");
    const planned = planPatch(parsed.patch, read.value);
    if (!planned.ok) throw new Error(`remote bench patch does not plan: ${planned.errors[0]?.message}`);
    const committed = await timed(shell, () => commitRemote(shell, root, planned.plan));
    const committedOk = committed.value.ok && treeIsNew(root, s);
    row("commitRemote", committed, committedOk, committedOk ? uploadNote(committed.value.files) : JSON.stringify(committed.value.errors ?? []).slice(0, 300));
    if (s.compareDeltaOff) {
      // The same commit uploading every content whole, as before delta uploads.
      writeTree(root, s);
      const whole = await timed(shell, () => commitRemote(shell, root, planned.plan, { delta: false }));
      const wholeOk = whole.value.ok && treeIsNew(root, s);
      row("commitRemote (delta off)", whole, wholeOk, wholeOk ? uploadNote(whole.value.files) : JSON.stringify(whole.value.errors ?? []).slice(0, 300));
    }
  } finally {
    await shell.close();
    rmSync(root, { recursive: true, force: true });
  }
  return rows;
}

/** Result of the remote figures: rows, the verdict rows and a Markdown report. */
export interface RemoteReport {
  rows: RemoteRow[];
  targets: { label: string; pass: boolean }[];
  markdown: string;
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(2)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`;
}

/**
 * Measure every scenario over LocalShell and, when sshd can run here, over a
 * throwaway sshd (skipped with a note otherwise — never faked).
 *
 * @example
 * ```ts
 * const report = await runRemoteBench();
 * console.log(report.markdown);
 * ```
 */
export async function runRemoteBench(): Promise<RemoteReport> {
  const scenarios = remoteScenarios();
  const rows: RemoteRow[] = [];
  const notes: string[] = [];
  for (const s of scenarios) rows.push(...(await measureScenario("LocalShell", async () => new LocalShell(), s)));
  if (sshdAvailable()) {
    const sshd = await startSshd();
    try {
      const knownHostsFile = writeKnownHosts(sshd.dir, [sshd.hostKeyLine]);
      const open = () =>
        connectSsh({
          host: sshd.host,
          port: sshd.port,
          username: sshd.user,
          identityFile: sshd.userKeyPath,
          knownHostsFile,
          sshConfigFile: false,
          agent: false,
        });
      for (const s of scenarios) rows.push(...(await measureScenario(`ssh (127.0.0.1 sshd, ${sshd.user})`, open, s, sshd.user)));
    } finally {
      await sshd.stop();
    }
  } else {
    notes.push("ssh: skipped — no runnable /usr/sbin/sshd here (install openssh-server to measure it)");
  }
  const targets: RemoteReport["targets"] = [];
  for (const r of rows) {
    if (r.step === "applyPatch (cold)") continue;
    if (r.scenario.startsWith("1-line")) continue;
    targets.push({ label: `${r.step}: one exec — ${r.transport}, ${r.scenario} (${r.execs})`, pass: r.execs === 1 && r.ok });
  }
  for (const r of rows) {
    if (!r.ok) targets.push({ label: `${r.step} correct — ${r.transport}, ${r.scenario}: ${r.note}`, pass: false });
  }
  for (const r of rows) {
    if (r.step !== "commitRemote" || !r.scenario.startsWith("1-line")) continue;
    const file = scenarios.find((s) => s.name === r.scenario)!.files[0]!.bytes.length;
    targets.push({ label: `commitRemote sends < 1% of the file for a 1-line change (delta upload) — ${r.transport} (${formatBytes(r.sentBytes)} of ${formatBytes(file)})`, pass: r.ok && r.sentBytes < file / 100 });
  }
  const md = ["| transport | scenario | step | execs | sent | received | ms | note |", "|---|---|---|---:|---:|---:|---:|---|"];
  for (const r of rows) {
    md.push(
      `| ${r.transport} | ${r.scenario} | ${r.step} | ${r.execs} | ${formatBytes(r.sentBytes)} | ${formatBytes(r.receivedBytes)} | ${r.ms.toFixed(0)} | ${r.ok ? r.note : ""} |`,
    );
  }
  md.push("", "| remote target | verdict |", "|---|---|");
  for (const t of targets) md.push(`| ${t.label} | ${t.pass ? "PASS" : "FAIL"} |`);
  if (notes.length) md.push("", ...notes);
  return { rows, targets, markdown: md.join("\n") };
}

if (import.meta.main) {
  const report = await runRemoteBench();
  console.log(report.markdown);
  process.exit(report.targets.every((t) => t.pass) ? 0 : 1);
}
