/**
 * mitata benchmarks: the adversarial inputs of SPEC §5.5 at two sizes (for
 * the doubling ratio), each with the floor measured on the same file.
 *
 * - `braces-N-everywhere`: N lines of `}`, a 100-line all-`}` chunk that
 *   matches at every position: must fail `ambiguous_hunk`, fast;
 * - `braces-N-nearmiss`: the same file, 99 `}` then one other line: nearly
 *   matches everywhere, matches nowhere (`context_mismatch`, diagnostics);
 * - `braces-odd-N-nearmiss`: the same chunk where the other line exists once;
 * - `repeated-N-everywhere`: a file of one repeated 37-byte line.
 *
 * Run alone: `bun bench/adversarial.bench.ts [--quick]`.
 *
 * @module
 */
import { floor } from "./floor.ts";
import { oursPlan, parsedPatchOf, snapshotsOf } from "./ours.ts";
import type { Registrar, Suite } from "./suite.ts";

/** The adversarial patch names at `lines`, with the file each runs on. */
export function adversarialCases(lines: number): { patch: string; file: string }[] {
  return [
    { patch: `braces-${lines}-everywhere`, file: `braces-${lines}` },
    { patch: `braces-${lines}-nearmiss`, file: `braces-${lines}` },
    { patch: `braces-odd-${lines}-nearmiss`, file: `braces-odd-${lines}` },
    { patch: `repeated-${lines}-everywhere`, file: `repeated-${lines}` },
  ];
}

/**
 * Register `floor <file>` and `plan <patch>` for every adversarial case at
 * both sizes.
 *
 * @example
 * ```ts
 * registerAdversarialBenches(loadSuite(FULL_SIZES), mitataRegistrar);
 * ```
 */
export function registerAdversarialBenches(suite: Suite, registrar: Registrar): void {
  for (const lines of [suite.sizes.adversarial, suite.sizes.adversarialDouble]) {
    registrar.group(`adversarial, ${lines} lines`, () => {
      const seen = new Set<string>();
      for (const c of adversarialCases(lines)) {
        const file = suite.file(c.file);
        if (!seen.has(c.file)) {
          seen.add(c.file);
          registrar.bench(`floor ${c.file}`, () => floor(file.bytes));
        }
        const patch = parsedPatchOf(suite.patch(c.patch));
        const snapshots = snapshotsOf(file);
        registrar.bench(`plan ${c.patch}`, () => oursPlan(patch, snapshots));
      }
    });
  }
}

if (import.meta.main) {
  const { run } = await import("mitata");
  const { FULL_SIZES, QUICK_SIZES, loadSuite, mitataRegistrar } = await import("./suite.ts");
  const suite = loadSuite(process.argv.includes("--quick") ? QUICK_SIZES : FULL_SIZES);
  registerAdversarialBenches(suite, mitataRegistrar);
  await run();
}
