/**
 * `npm run bench` (`bun bench/run.ts [--quick]`): the benchmark suite of
 * SPEC §11 in one run.
 *
 * 1. generates (or loads from the temp-dir cache) the fixtures;
 * 2. checks correctness once: ours and the peers against the generator's
 *    oracle, and the peers' output against ours byte for byte;
 * 3. runs every `*.bench.ts` under mitata (its own output is shown);
 * 4. runs the whole-process peers (`bench/peers_process.ts`, 7 reps) and the
 *    remote figures (`bench/remote.ts`: exec calls and bytes, LocalShell and
 *    a throwaway sshd);
 * 5. measures each target ratio again, interleaved (A B B A rounds, see
 *    `paired.ts`), so both sides of a ratio see the same background load;
 * 6. prints the medians and the ratios — mitata's and the interleaved ones —
 *    with PASS/FAIL per target, decided by the interleaved ratio.
 *
 * Exit code: 0 when every target holds and every check passes, 1 otherwise,
 * so the verdict cannot be missed by a script or a CI log. `--quick` runs a
 * tenth of the sizes for a fast look (the targets are about the full sizes;
 * a quick run's verdict is indicative only); `--no-process` and
 * `--no-remote` skip steps 4 (their targets then show as missing → FAIL).
 *
 * @module
 */
import { cpus, totalmem } from "node:os";
import { run } from "mitata";
import { registerAdversarialBenches } from "./adversarial.bench.ts";
import { checkOurs, checkPeers } from "./checks.ts";
import { defaultCacheDir } from "./fixtures.ts";
import { registerPeerBenches } from "./peers.bench.ts";
import { runProcessPeers } from "./peers_process.ts";
import { registerPlanBenches } from "./plan.bench.ts";
import { evaluateRatios, formatMedians, formatRatios, ratioSpecs } from "./report.ts";
import { measurePaired, type PairedResult } from "./paired.ts";
import { FULL_SIZES, loadSuite, mitataRegistrar, QUICK_SIZES, type Registrar } from "./suite.ts";

const quick = process.argv.includes("--quick");
const sizes = quick ? QUICK_SIZES : FULL_SIZES;
const cacheDir = defaultCacheDir();

console.error(`fixtures: ${cacheDir}${quick ? " (quick sizes)" : ""}`);
const suite = loadSuite(sizes, cacheDir, (message) => console.error(`  ${message}`));

console.error("checking correctness once …");
const checks = [...checkPeers(suite), ...checkOurs(suite)];
const failedChecks = checks.filter((c) => !c.ok);
for (const c of failedChecks) console.error(`CHECK FAIL ${c.name}: ${c.detail}`);
console.error(`${checks.length - failedChecks.length}/${checks.length} checks passed`);

// Keep every benchmark function by name for the interleaved target ratios.
const functions = new Map<string, () => unknown>();
const registrar: Registrar = {
  ...mitataRegistrar,
  bench: (name, fn) => {
    functions.set(name, fn);
    mitataRegistrar.bench(name, fn);
  },
};
registerPlanBenches(suite, registrar);
registerAdversarialBenches(suite, registrar);
registerPeerBenches(suite, registrar);
const result = await run({ colors: Boolean(process.stdout.isTTY), format: { mitata: { name: "longest" } } });

console.error("interleaved paired measurement of the target ratios …");
const specs = ratioSpecs(sizes);
const paired = new Map<string, PairedResult>();
for (const spec of specs) {
  const a = functions.get(spec.denominator);
  const b = functions.get(spec.numerator);
  if (spec.max === undefined || !a || !b) continue;
  const measured = measurePaired(a, b);
  paired.set(spec.label, measured);
  console.error(`  ${spec.label}: ${measured.ratio.toFixed(2)}×`);
}

let processMarkdown = "whole-process peers: skipped (--no-process)";
let processCorrect = true;
if (!process.argv.includes("--no-process")) {
  const peers = runProcessPeers(suite, 7);
  processMarkdown = peers.markdown;
  processCorrect = peers.correct;
}

// Imported lazily so the planning benchmarks still run (and say why) when
// the remote layer cannot load.
let remoteMarkdown = "## Remote figures\n\nskipped (--no-remote)";
const remoteTargets: { label: string; pass: boolean }[] = [];
if (!process.argv.includes("--no-remote")) {
  try {
    const { runRemoteBench } = await import("./remote.ts");
    const remote = await runRemoteBench();
    remoteMarkdown = `## Remote figures (exec calls and bytes through a counting RemoteShell)\n\n${remote.markdown}`;
    remoteTargets.push(...remote.targets);
  } catch (error) {
    remoteMarkdown = `## Remote figures\n\nnot measured: ${(error as Error).message}`;
  }
}
if (remoteTargets.length === 0) {
  remoteTargets.push({ label: "readSnapshots and commitRemote: one exec each (not measured)", pass: false });
}

const medians = new Map<string, number>();
for (const trial of result.benchmarks) {
  for (const r of trial.runs) {
    if (r.stats) medians.set(r.name, r.stats.p50);
    else console.error(`BENCH ERROR ${r.name}: ${String((r.error as { message?: string })?.message ?? r.error)}`);
  }
}

const rows = evaluateRatios(specs, medians, paired);
const failedTargets = [
  ...rows.filter((r) => r.max !== undefined && r.verdict !== "PASS").map((r) => r.label),
  ...remoteTargets.filter((t) => !t.pass).map((t) => t.label),
  ...(processCorrect ? [] : ["whole-process peers: an output differed from the oracle"]),
];

console.log("");
console.log(
  `## ssh-apply-patch benchmark — ${result.context.cpu.name ?? "unknown cpu"}, ${cpus().length} cores, ` +
    `${Math.round(totalmem() / 2 ** 30)} GiB, ${result.context.runtime ?? "bun"} ${Bun.version}` +
    `${quick ? " (QUICK sizes: indicative only)" : ""}`,
);
console.log("");
console.log(formatMedians(medians));
console.log("");
console.log(formatRatios(rows));
console.log("");
console.log(processMarkdown);
console.log("");
console.log(remoteMarkdown);
console.log("");
console.log(
  `correctness checks: ${checks.length - failedChecks.length}/${checks.length} passed` +
    (failedChecks.length ? ` — FAIL: ${failedChecks.map((c) => c.name).join("; ")}` : ""),
);
const verdict = failedTargets.length === 0 && failedChecks.length === 0;
console.log(
  verdict
    ? "VERDICT: PASS (every target held, every check passed)"
    : `VERDICT: FAIL (${failedTargets.length} target(s) missed, ${failedChecks.length} check(s) failed)`,
);
for (const label of failedTargets) console.log(`  missed: ${label}`);
process.exit(verdict ? 0 : 1);
