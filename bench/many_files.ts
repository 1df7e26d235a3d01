/**
 * Many small files (issue 28 item 1): `readSnapshots` of 10,000 small files
 * against `tar c` of the same files through the same shell (LocalShell
 * under dash, the common /bin/sh), timed in one run, interleaved (tar,
 * snapshot, snapshot, tar, …) and compared as a ratio of medians. The
 * target: the snapshot within 3× of tar. The snapshot does what tar does
 * not — the §6 walk of every path, the trust verdict of every directory,
 * two `stat`s, and the SHA-256 of every file (host and client) — so the
 * ratio says what that costs per file.
 *
 * Run alone: `bun bench/many_files.ts [files]`.
 *
 * @module
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalShell } from "../lib/remote/local_shell.ts";
import { readSnapshots } from "../lib/remote/snapshot.ts";
import { judgeRatio, MIN_RUNS, roundRatios } from "./target.ts";

/** The figures and the target of one run. */
export interface ManyFilesReport {
  files: number;
  tarMs: number;
  snapshotMs: number;
  ratio: number;
  targets: { label: string; pass: boolean }[];
  markdown: string;
}

/** The most the snapshot may take, in multiples of tar's time. */
export const MANY_FILES_TARGET = 3;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/**
 * Measure `files` small files in 100 directories, `rounds` interleaved rounds.
 *
 * @example
 * ```ts
 * const report = await runManyFilesBench(10_000);
 * console.log(report.markdown);
 * ```
 */
export async function runManyFilesBench(files = 10_000, rounds: number = MIN_RUNS): Promise<ManyFilesReport> {
  const root = join(tmpdir(), `sap-many-${process.pid}`);
  rmSync(root, { recursive: true, force: true });
  const paths: string[] = [];
  for (let i = 0; i < files; i++) {
    const dir = `d${i % 100}`;
    if (i < 100) mkdirSync(join(root, dir), { recursive: true });
    const path = `${dir}/f${i}.txt`;
    writeFileSync(join(root, path), `line ${i}\nsome more text of the file\n`);
    paths.push(path);
  }
  const shell = new LocalShell({ shell: ["dash"] });
  const list = new TextEncoder().encode(paths.join("\n") + "\n");
  const tar = async (): Promise<number> => {
    const t0 = performance.now();
    const r = await shell.exec(`cd '${root}' && tar cf - -T -`, { stdin: list, maxStdoutBytes: 1 << 30 });
    if (r.exitCode !== 0) throw new Error(`tar failed: ${new TextDecoder().decode(r.stderr)}`);
    return performance.now() - t0;
  };
  let read = 0;
  const snapshot = async (): Promise<number> => {
    const t0 = performance.now();
    const snaps = await readSnapshots(shell, root, paths, { timeoutMs: 600_000 });
    const ms = performance.now() - t0;
    read = [...snaps.values()].filter((s) => s.rejected === undefined && s.bytes !== undefined).length;
    return ms;
  };
  const tars: number[] = [];
  const snaps: number[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) { tars.push(await tar()); snaps.push(await snapshot()); }
      else { snaps.push(await snapshot()); tars.push(await tar()); }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const tarMs = median(tars);
  const snapshotMs = median(snaps);
  const ratio = snapshotMs / tarMs;
  // Judged per interleaved round (bench/target.ts: median of ≥ 5, 10 % inside the bound).
  const judged = judgeRatio(roundRatios(snaps, tars), MANY_FILES_TARGET);
  const targets = [
    { label: `readSnapshots of ${files} small files ≤ ${MANY_FILES_TARGET}× tar c of the same files, same shell (${judged.text})`, pass: judged.pass && read === files },
  ];
  const markdown = [
    "| files | tar c (dash, ms) | readSnapshots (dash, ms) | ratio | per file (µs) |",
    "|---:|---:|---:|---:|---:|",
    `| ${files} | ${tarMs.toFixed(0)} | ${snapshotMs.toFixed(0)} | ${ratio.toFixed(1)}× | ${((snapshotMs * 1000) / files).toFixed(0)} |`,
    ...(read === files ? [] : [`only ${read} of ${files} files were read`]),
  ].join("\n");
  return { files, tarMs, snapshotMs, ratio, targets, markdown };
}

if (import.meta.main) {
  const files = Number(process.argv[2] ?? 10_000);
  const report = await runManyFilesBench(files);
  console.log(report.markdown);
  for (const t of report.targets) console.log(`${t.pass ? "PASS" : "FAIL"} ${t.label}`);
  process.exit(report.targets.every((t) => t.pass) ? 0 : 1);
}
