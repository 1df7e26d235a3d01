/**
 * `npm run bench` (`bun bench/run.ts [--quick]`): the benchmark suite of
 * SPEC §11 in one run.
 *
 * 1. generates (or loads from the temp-dir cache) the fixtures;
 * 2. checks correctness once: ours and the peers against the generator's
 *    oracle, and the peers' output against ours byte for byte;
 * 3. runs every `*.bench.ts` under mitata (its own output is shown);
 * 4. prints the medians and the ratios with PASS/FAIL per target.
 *
 * Exit code: 0 when every target holds and every check passes, 1 otherwise,
 * so the verdict cannot be missed by a script or a CI log. `--quick` runs a
 * tenth of the sizes for a fast look (the targets are about the full sizes;
 * a quick run's verdict is indicative only).
 *
 * @module
 */
import { cpus, totalmem } from "node:os";
import { run } from "mitata";
import { registerAdversarialBenches } from "./adversarial.bench.ts";
import { checkOurs, checkPeers } from "./checks.ts";
import { defaultCacheDir } from "./fixtures.ts";
import { registerPeerBenches } from "./peers.bench.ts";
import { registerPlanBenches } from "./plan.bench.ts";
import { evaluateRatios, formatMedians, formatRatios, ratioSpecs } from "./report.ts";
import { FULL_SIZES, loadSuite, mitataRegistrar, QUICK_SIZES } from "./suite.ts";

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

registerPlanBenches(suite, mitataRegistrar);
registerAdversarialBenches(suite, mitataRegistrar);
registerPeerBenches(suite, mitataRegistrar);
const result = await run({ format: { mitata: { name: "longest" } } });

const medians = new Map<string, number>();
for (const trial of result.benchmarks) {
  for (const r of trial.runs) {
    if (r.stats) medians.set(r.name, r.stats.p50);
    else console.error(`BENCH ERROR ${r.name}: ${String((r.error as { message?: string })?.message ?? r.error)}`);
  }
}

const rows = evaluateRatios(ratioSpecs(sizes), medians);
const failedTargets = rows.filter((r) => r.max !== undefined && r.verdict !== "PASS");

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
process.exit(verdict ? 0 : 1);
