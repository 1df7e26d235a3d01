/**
 * Whole-process comparison (SPEC §11, §11.1): the same file and change
 * applied by fresh processes, each on a fresh copy of the file —
 *
 * - ours: `bun dist/bun/ssh-apply-patch.js --root DIR < patch` — the CLI
 *   bundled with its bytecode (scripts/bun_cli.ts), built here from the
 *   sources being measured — through LocalShell: snapshot, plan, commit
 *   with locks, backups and SHA checks; `bun examples/apply.ts` (the same
 *   CLI unbundled) is a reference row;
 * - GNU `patch` and `git apply` on the change as a unified diff;
 * - Codex's native `apply_patch` (npm `@openai/codex`, installed at bench
 *   time into the bench cache: bench/codex.ts) on the Codex patch;
 * - references, not peers: a plain Bun script that applies the chunks with
 *   one `indexOf` each (bench/indexof_apply.ts), and Bun's start-up alone.
 *
 * Every process runs under `/usr/bin/time -f "%M %U %S"`, which gives its
 * peak RSS and its CPU time (user + system, children included): on a
 * shared machine the CPU column moves far less than the wall clock, so it
 * tells a loaded run from a slow program (the targets still judge wall
 * time).
 * Rounds are interleaved (each round runs every contender once, in an order
 * rotated per round), so a burst of background load hits all of them; the
 * copy is made before the clock starts and the output is checked against
 * the generator's oracle after it stops.
 *
 * Targets, on the 1M-line (38.5 MB) file with 3 chunks, each judged by the
 * median of its per-round ratios with a 10 % margin (bench/target.ts):
 * with no neighbour, ours ≤ 2.5× GNU patch and a peak RSS ≤ 4× the file
 * size (required), ours ≤ 1.0× GNU patch (the goal of SPEC §11.1); then the
 * same rounds again **with the busy neighbour** (bench/neighbour.ts: a
 * process spinning on one core), ours ≤ 0.8× Codex's `apply_patch` and
 * ≤ 2.0× GNU patch (required, issue 31). Codex is native and GNU patch
 * single-threaded: a neighbour costs them little, while ours shares the
 * remaining core between Bun's JIT and GC threads and the commit program's
 * processes — which is what a busy CI runner does to it.
 *
 * Usage: `bun bench/peers_process.ts [--quick] [--rounds=N] [--no-busy]`
 * (default 11 rounds; `--no-busy` skips the busy pass and its targets).
 * Installs GNU patch and GNU time with apt-get when they are absent (as
 * root, or through `sudo -n`). Exit code 1 when a contender produced wrong
 * output or a required target was missed.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { buildBunCli } from "../scripts/bun_cli.ts";
import { CODEX_VERSION, ensureCodex, toolsCacheDir } from "./codex.ts";
import { type PatchFixture, sha256Hex } from "./fixtures.ts";
import { toUnifiedDiff } from "./peers.ts";
import { startNeighbour } from "./neighbour.ts";
import type { TargetResult } from "./report.ts";
import { judgeRatio, median, roundRatios, spreadOf } from "./target.ts";
import { FULL_SIZES, loadSuite, QUICK_SIZES, type Suite } from "./suite.ts";

const repoRoot = resolve(import.meta.dir, "..");
const TIME = "/usr/bin/time";

function have(command: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
}

/** Install a Debian package when `probe` says it is absent; false when that is not possible here. */
function ensurePackage(pkg: string, probe: () => boolean): boolean {
  if (probe()) return true;
  const prefix = process.getuid?.() === 0 ? "" : "sudo -n ";
  console.error(`${pkg} is absent: installing it with apt-get …`);
  const result = spawnSync(
    "sh",
    ["-c", `${prefix}apt-get update -qq && DEBIAN_FRONTEND=noninteractive ${prefix}apt-get install -y -qq ${pkg}`],
    { stdio: "inherit" },
  );
  return result.status === 0 && probe();
}

interface Contender {
  name: string;
  /** A reference row: no ratio, no target. */
  reference?: boolean;
  /** Command and arguments, run with `cwd` = the work dir. */
  argv: (workDir: string) => string[];
  stdin: Uint8Array;
  /** SHA-256 the file must have afterwards. */
  expectedSha: string;
}

interface Measured {
  name: string;
  reference: boolean;
  times: number[];
  rssKiB: number[];
  cpuMs: number[];
  correct: boolean;
  note: string;
}

/** Busy neighbour: ours ≤ this × Codex's apply_patch (issue 31; required, with bench/target.ts's 10 % margin). */
export const CODEX_TARGET = 0.8;
/** Busy neighbour: ours ≤ this × GNU patch (issue 31; required). */
export const PATCH_TARGET_BUSY = 2.0;
/** No neighbour: ours ≤ this × GNU patch (issue 31; required). ≤ 1.0× stays the goal of SPEC §11.1. */
export const PATCH_TARGET_QUIET = 2.5;

/** Run one contender once on a fresh copy: wall time, peak RSS, correctness. */
function runOnce(c: Contender, m: Measured, master: string, relPath: string, withTime: boolean): void {
  const workDir = mkdtempSync(join(tmpdir(), "sap-proc-"));
  try {
    mkdirSync(join(workDir, dirname(relPath)), { recursive: true });
    copyFileSync(master, join(workDir, relPath));
    const rssFile = join(workDir, ".rss");
    const argv = c.argv(workDir);
    const command = withTime ? [TIME, "-f", "%M %U %S", "-o", rssFile, ...argv] : argv;
    const started = performance.now();
    const result = spawnSync(command[0]!, command.slice(1), { cwd: workDir, input: c.stdin, maxBuffer: 256 * 1024 * 1024 });
    m.times.push(performance.now() - started);
    if (withTime && existsSync(rssFile)) {
      const [kib, user, system] = (readFileSync(rssFile, "utf8").trim().split("\n").pop() ?? "").split(" ").map(Number);
      if (Number.isFinite(kib)) m.rssKiB.push(kib!);
      if (Number.isFinite(user) && Number.isFinite(system)) m.cpuMs.push((user! + system!) * 1000);
    }
    const output = readFileSync(join(workDir, relPath));
    if (result.status !== 0 || sha256Hex(output) !== c.expectedSha) {
      m.correct = false;
      m.note = `exit ${result.status}; ${String(result.stderr).slice(0, 200).trim()}`;
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** The whole-process comparison as Markdown, its targets, and whether every output was right. */
export interface ProcessPeersReport {
  markdown: string;
  correct: boolean;
  targets: TargetResult[];
}

function mib(kib: number): string {
  return `${(kib / 1024).toFixed(0)}`;
}

/**
 * Measure every contender on the large code file with the 3-chunk patch
 * (`rounds` interleaved rounds; the targets) and the 100-chunk patch
 * (three rounds, informational).
 *
 * @example
 * ```ts
 * console.log(runProcessPeers(loadSuite(FULL_SIZES), 11).markdown);
 * ```
 */
export async function runProcessPeers(suite: Suite, rounds: number, cacheDir: string = toolsCacheDir(), options: { busy?: boolean } = {}): Promise<ProcessPeersReport> {
  const sizes = suite.sizes;
  const scratch = mkdtempSync(join(tmpdir(), "sap-peers-"));
  const oursCli = await buildBunCli(join(scratch, "cli"), repoRoot);
  const unbundledCli = join(repoRoot, "examples", "apply.ts");
  const patchAvailable = ensurePackage("patch", () => have("patch"));
  const timeAvailable = ensurePackage("time", () => existsSync(TIME));
  const codex = ensureCodex(cacheDir);
  let allCorrect = true;
  const targets: TargetResult[] = [];
  const report: string[] = [`## Whole processes — ${cpus()[0]?.model ?? "cpu"}, ${cpus().length} cores, bun ${Bun.version}`, ""];
  if (!patchAvailable) report.push("GNU patch: absent and could not be installed (not measured)", "");
  if (!timeAvailable) report.push("GNU time: absent and could not be installed (peak RSS not measured)", "");
  if (!codex.ok) report.push(`Codex apply_patch: not measured — ${codex.reason}`, "");
  // The 3-chunk change decides, quiet and then with the busy neighbour; the
  // 100-chunk one is shown (quiet, three rounds).
  const passes: { name: string; count: number; busy: boolean }[] = [
    { name: `code-${sizes.large}-c3`, count: rounds, busy: false },
    { name: `code-${sizes.large}-c100`, count: 3, busy: false },
    ...(options.busy === false ? [] : [{ name: `code-${sizes.large}-c3`, count: rounds, busy: true }]),
  ];
  try {
    for (const { name, count, busy } of passes) {
      const fixture: PatchFixture = suite.patch(name);
      if (!fixture.expect.ok) continue;
      const master = join(scratch, `${name}.orig`);
      writeFileSync(master, fixture.file.bytes);
      const codexPatch = new TextEncoder().encode(fixture.text);
      const unified = new TextEncoder().encode(toUnifiedDiff(new TextDecoder().decode(fixture.file.bytes), fixture.text));
      const newSha = fixture.expect.newSha256;
      const path = fixture.file.path;
      const contenders: Contender[] = [
        { name: "ours (bun dist/bun/ssh-apply-patch.js, LocalShell)", argv: (d) => [process.execPath, oursCli, "--root", d], stdin: codexPatch, expectedSha: newSha },
        ...(patchAvailable ? [{ name: "GNU patch", argv: () => ["patch", "-p1", "--batch", "--silent"], stdin: unified, expectedSha: newSha }] : []),
        { name: "git apply", argv: () => ["git", "apply", "-"], stdin: unified, expectedSha: newSha },
        ...(codex.ok ? [{ name: `Codex apply_patch ${codex.version} (native)`, argv: () => [codex.applyPatch], stdin: codexPatch, expectedSha: newSha }] : []),
        { name: "reference: ours unbundled (bun examples/apply.ts)", reference: true, argv: (d: string) => [process.execPath, unbundledCli, "--root", d], stdin: codexPatch, expectedSha: newSha },
        { name: "reference: plain Bun indexOf script", reference: true, argv: (d: string) => [process.execPath, join(repoRoot, "bench", "indexof_apply.ts"), join(d, path)], stdin: codexPatch, expectedSha: newSha },
        { name: "reference: bun start-up (bun -e 0)", reference: true, argv: () => [process.execPath, "-e", "0"], stdin: new Uint8Array(), expectedSha: fixture.file.sha256 },
      ];
      const neighbour = busy ? await startNeighbour() : null;
      const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");
      const loadBefore = load();
      console.error(`${name}: ${fixture.file.bytes.length} bytes, ${fixture.chunks} chunk(s), ${count} interleaved rounds${neighbour ? `, busy neighbour: ${neighbour.description}` : ""} (load ${loadBefore})`);
      const measured: Measured[] = contenders.map((c) => ({ name: c.name, reference: c.reference === true, times: [], rssKiB: [], cpuMs: [], correct: true, note: "" }));
      try {
        for (let round = 0; round < count; round++) {
          for (let k = 0; k < contenders.length; k++) {
            const i = (k + round) % contenders.length;
            runOnce(contenders[i]!, measured[i]!, master, path, timeAvailable);
          }
        }
      } finally {
        await neighbour?.stop();
      }
      const fileBytes = fixture.file.bytes.length;
      const ours = measured[0]!;
      const oursMs = median(ours.times);
      const where = neighbour ? `**with the busy neighbour** (${neighbour.description})` : "no neighbour";
      report.push(`### ${name} (${fixture.file.lineCount} lines, ${(fileBytes / 1e6).toFixed(1)} MB, ${fixture.chunks} chunk(s)), ${where}, ${count} interleaved rounds, load average ${loadBefore} before → ${load()} after`, "");
      report.push("| process | median (ms) | min (ms) | CPU, median (ms) | peak RSS (MiB) | RSS ÷ file | output | ours ÷ this, per round: median (min–max) |", "|---|---:|---:|---:|---:|---:|---|---:|");
      for (const m of measured) {
        allCorrect &&= m.correct;
        const ms = median(m.times);
        const rss = median(m.rssKiB);
        const perRound = spreadOf(roundRatios(ours.times, m.times));
        const ratio = m === ours || m.reference || perRound === null ? "" : `${perRound.median.toFixed(2)}× (${perRound.min.toFixed(2)}–${perRound.max.toFixed(2)})`;
        const rssCells = Number.isFinite(rss) ? `${mib(rss)} | ${((rss * 1024) / fileBytes).toFixed(1)}×` : "— | —";
        const cpu = median(m.cpuMs);
        report.push(`| ${m.name} | ${ms.toFixed(1)} | ${Math.min(...m.times).toFixed(1)} | ${Number.isFinite(cpu) ? cpu.toFixed(0) : "—"} | ${rssCells} | ${m.correct ? "= oracle" : `WRONG (${m.note})`} | ${ratio} |`);
      }
      report.push("");
      if (count !== rounds) continue;
      const at = `whole process, ${(fileBytes / 1e6).toFixed(1)} MB, ${fixture.chunks} chunks${neighbour ? ", busy neighbour" : ", no neighbour"}`;
      const codexRow = measured.find((m) => m.name.startsWith("Codex"));
      const patchRow = measured.find((m) => m.name === "GNU patch");
      // Judged per round (bench/target.ts): each round ran every contender once, so load hits both sides.
      const judged = (row: Measured | undefined, peer: string, max: number, kind: "required" | "goal"): TargetResult => {
        const label = `${at}: ours ≤ ${max.toFixed(1)}× ${peer}`;
        if (!row) return { label: `${label} (${peer} not measured)`, kind, pass: false };
        const j = judgeRatio(roundRatios(ours.times, row.times), max, { kind });
        return { label: `${label} (${oursMs.toFixed(0)} vs ${median(row.times).toFixed(0)} ms; ${j.text})`, kind, pass: ours.correct && row.correct && j.pass };
      };
      if (neighbour) {
        targets.push(judged(codexRow, "Codex apply_patch", CODEX_TARGET, "required"));
        targets.push(judged(patchRow, "GNU patch", PATCH_TARGET_BUSY, "required"));
        continue;
      }
      targets.push(judged(patchRow, "GNU patch", PATCH_TARGET_QUIET, "required"));
      targets.push(judged(patchRow, "GNU patch", 1.0, "goal"));
      const rss = median(ours.rssKiB);
      targets.push(Number.isFinite(rss)
        ? { label: `${at}: peak RSS of ours ≤ 4× the file size (${mib(rss)} MiB: ${((rss * 1024) / fileBytes).toFixed(1)}×)`, kind: "required", pass: rss * 1024 <= 4 * fileBytes }
        : { label: `${at}: peak RSS of ours ≤ 4× the file size (not measured)`, kind: "required", pass: false });
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  report.push(`Codex: npm \`@openai/codex@${CODEX_VERSION}\`, installed into ${cacheDir} at bench time. Peak RSS and CPU (user + system, children included, 10 ms steps): GNU time \`%M %U %S\`. "ours ÷ this" is the median of the per-round ratios (each round runs every contender once, in a rotated order).`);
  return { markdown: report.join("\n"), correct: allCorrect, targets };
}

if (import.meta.main) {
  const roundsArg = process.argv.find((a) => a.startsWith("--rounds="));
  const rounds = roundsArg ? Math.max(1, Number(roundsArg.slice("--rounds=".length))) : 11;
  const sizes = process.argv.includes("--quick") ? QUICK_SIZES : FULL_SIZES;
  const result = await runProcessPeers(loadSuite(sizes, undefined, (m) => console.error(`  ${m}`)), rounds, undefined, { busy: !process.argv.includes("--no-busy") });
  console.log(result.markdown);
  for (const t of result.targets) console.log(`${t.pass ? "PASS" : "FAIL"} (${t.kind}) ${t.label}`);
  process.exit(result.correct && result.targets.every((t) => t.pass || t.kind === "goal") ? 0 : 1);
}
