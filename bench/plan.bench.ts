/**
 * mitata benchmarks: the floor and `planPatch` on code-like files (1, 10
 * and 100 chunks on the small and large files, 100 chunks on the half-size
 * file for the doubling ratio, and the tier-3 and failing chunks on the
 * large file).
 *
 * Run alone: `bun bench/plan.bench.ts [--quick]`; `bun bench/run.ts` runs
 * it with the others and prints the verdict.
 *
 * @module
 */
import { floor } from "./floor.ts";
import { oursPlan, parsedPatchOf, snapshotsOf } from "./ours.ts";
import type { Registrar, Suite } from "./suite.ts";

/** Chunk counts planned on a code file of a given role. */
function chunkCounts(lines: number, suite: Suite): number[] {
  return lines === suite.sizes.half ? [100] : [1, 10, 100];
}

/**
 * Register `floor code-N` and `plan code-N-…` benchmarks.
 *
 * @example
 * ```ts
 * registerPlanBenches(loadSuite(FULL_SIZES), mitataRegistrar);
 * ```
 */
export function registerPlanBenches(suite: Suite, registrar: Registrar): void {
  const { small, half, large } = suite.sizes;
  for (const lines of [small, half, large]) {
    const file = suite.file(`code-${lines}`);
    const snapshots = snapshotsOf(file);
    registrar.group(`code file, ${lines} lines`, () => {
      registrar.bench(`floor code-${lines}`, () => floor(file.bytes));
      const names = chunkCounts(lines, suite).map((c) => `code-${lines}-c${c}`);
      if (lines === large) names.push(`code-${lines}-tier3`, `code-${lines}-fail`);
      for (const name of names) {
        const patch = parsedPatchOf(suite.patch(name));
        registrar.bench(`plan ${name}`, () => oursPlan(patch, snapshots));
      }
    });
  }
}

if (import.meta.main) {
  const { run } = await import("mitata");
  const { FULL_SIZES, QUICK_SIZES, loadSuite, mitataRegistrar } = await import("./suite.ts");
  const suite = loadSuite(process.argv.includes("--quick") ? QUICK_SIZES : FULL_SIZES);
  registerPlanBenches(suite, mitataRegistrar);
  await run();
}
