/**
 * Whole-process comparison (SPEC §11): the same file and change applied by
 * `bun examples/apply.ts --root DIR < patch` (ours, through LocalShell),
 * `git apply` and GNU `patch`, each as a fresh process on a fresh copy of
 * the file. The copy is made before the clock starts; the output is checked
 * against the generator's oracle after it stops.
 *
 * Usage: `bun bench/peers_process.ts [--quick] [--reps=N]` (default 7 reps).
 * Installs GNU `patch` with apt-get when it is absent (as root, or through
 * `sudo -n`). Prints medians and ratios; exit code 1 when a contender
 * produced wrong output, 0 otherwise (this script has no targets).
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { sha256Hex } from "./fixtures.ts";
import { toUnifiedDiff } from "./peers.ts";
import { FULL_SIZES, loadSuite, QUICK_SIZES, type Suite } from "./suite.ts";

const repoRoot = resolve(import.meta.dir, "..");
/** The start-up reference row: its output is the unchanged file. */
const STARTUP = "bun start-up (bun -e 0)";

function have(command: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
}

/** Install GNU patch when absent; false when that is not possible here. */
function ensurePatch(): boolean {
  if (have("patch")) return true;
  const root = process.getuid?.() === 0;
  const prefix = root ? "" : "sudo -n ";
  console.error("GNU patch is absent: installing it with apt-get …");
  const result = spawnSync(
    "sh",
    ["-c", `${prefix}apt-get update -qq && DEBIAN_FRONTEND=noninteractive ${prefix}apt-get install -y -qq patch`],
    { stdio: "inherit" },
  );
  return result.status === 0 && have("patch");
}

interface Contender {
  name: string;
  /** Command and arguments, run with `cwd` = the work dir. */
  argv: (workDir: string) => string[];
  /** Bytes on stdin. */
  stdin: Uint8Array;
}

interface Measured {
  name: string;
  medianMs: number;
  minMs: number;
  correct: boolean;
  note: string;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function measure(contender: Contender, master: string, relPath: string, expectedSha: string, reps: number): Measured {
  const times: number[] = [];
  let correct = true;
  let note = "";
  for (let i = 0; i < reps; i++) {
    const workDir = mkdtempSync(join(tmpdir(), "sap-proc-"));
    try {
      mkdirSync(join(workDir, dirname(relPath)), { recursive: true });
      copyFileSync(master, join(workDir, relPath));
      const started = performance.now();
      const result = spawnSync(contender.argv(workDir)[0]!, contender.argv(workDir).slice(1), {
        cwd: workDir,
        input: contender.stdin,
        maxBuffer: 256 * 1024 * 1024,
      });
      times.push(performance.now() - started);
      const output = readFileSync(join(workDir, relPath));
      if (result.status !== 0 || sha256Hex(output) !== expectedSha) {
        correct = false;
        note = `exit ${result.status}; ${String(result.stderr).slice(0, 200).trim()}`;
      }
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
  }
  return { name: contender.name, medianMs: median(times), minMs: Math.min(...times), correct, note };
}

/** The whole-process comparison as Markdown, and whether every output was right. */
export interface ProcessPeersReport {
  markdown: string;
  correct: boolean;
}

/**
 * Measure ours (when `examples/apply.ts` exists), `git apply` and GNU
 * `patch` on the large code file with the 1-chunk and 100-chunk patches.
 *
 * @example
 * ```ts
 * console.log(runProcessPeers(loadSuite(FULL_SIZES), 7).markdown);
 * ```
 */
export function runProcessPeers(suite: Suite, reps: number): ProcessPeersReport {
  const sizes = suite.sizes;
  const scratch = mkdtempSync(join(tmpdir(), "sap-peers-"));
  const oursCli = join(repoRoot, "examples", "apply.ts");
  const patchAvailable = ensurePatch();
  let allCorrect = true;
  const report: string[] = [`## Whole-process peers — ${cpus()[0]?.model ?? "cpu"}, ${cpus().length} cores, bun ${Bun.version}`, ""];
  if (!existsSync(oursCli)) report.push("ours: examples/apply.ts not present (only the peers were measured)", "");
  if (!patchAvailable) report.push("GNU patch: absent and could not be installed (skipped)", "");
  try {
    for (const name of [`code-${sizes.large}-c1`, `code-${sizes.large}-c100`]) {
      const fixture = suite.patch(name);
      if (!fixture.expect.ok) continue;
      const master = join(scratch, `${name}.orig`);
      writeFileSync(master, fixture.file.bytes);
      const codex = new TextEncoder().encode(fixture.text);
      const unified = new TextEncoder().encode(
        toUnifiedDiff(new TextDecoder().decode(fixture.file.bytes), fixture.text),
      );
      const contenders: Contender[] = [];
      if (existsSync(oursCli)) {
        contenders.push({ name: "ours (bun examples/apply.ts)", argv: (d) => [process.execPath, oursCli, "--root", d], stdin: codex });
      }
      contenders.push({ name: "git apply", argv: () => ["git", "apply", "-"], stdin: unified });
      if (patchAvailable) {
        contenders.push({ name: "GNU patch", argv: () => ["patch", "-p1", "--batch", "--silent"], stdin: unified });
      }
      // Process start-up alone, for reading the others.
      contenders.push({ name: STARTUP, argv: () => [process.execPath, "-e", "0"], stdin: new Uint8Array() });
      console.error(`${name}: ${fixture.file.bytes.length} bytes, ${fixture.chunks} chunk(s), ${reps} reps each`);
      const newSha256 = fixture.expect.newSha256;
      const results = contenders.map((c) =>
        measure(c, master, fixture.file.path, c.name === STARTUP ? fixture.file.sha256 : newSha256, reps)
      );
      const ours = results.find((r) => r.name.startsWith("ours"));
      report.push(`### ${name} (${fixture.file.lineCount} lines, ${fixture.chunks} chunk(s)), median of ${reps}`, "");
      report.push("| process | median (ms) | min (ms) | output | ours ÷ this |", "|---|---:|---:|---|---:|");
      for (const r of results) {
        allCorrect &&= r.correct;
        const ratio = ours && r !== ours && r.name !== STARTUP ? `${(ours.medianMs / r.medianMs).toFixed(2)}×` : "";
        report.push(
          `| ${r.name} | ${r.medianMs.toFixed(1)} | ${r.minMs.toFixed(1)} | ${r.correct ? "= oracle" : `WRONG (${r.note})`} | ${ratio} |`,
        );
      }
      report.push("");
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return { markdown: report.join("\n"), correct: allCorrect };
}

if (import.meta.main) {
  const repsArg = process.argv.find((a) => a.startsWith("--reps="));
  const reps = repsArg ? Math.max(1, Number(repsArg.slice("--reps=".length))) : 7;
  const sizes = process.argv.includes("--quick") ? QUICK_SIZES : FULL_SIZES;
  const result = runProcessPeers(loadSuite(sizes, undefined, (m) => console.error(`  ${m}`)), reps);
  console.log(result.markdown);
  process.exit(result.correct ? 0 : 1);
}
