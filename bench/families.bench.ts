/**
 * mitata benchmarks: the adversarial families of SPEC §11.1
 * (bench/families.ts) — anchors found nowhere, low entropy, thousands of
 * failing chunks, signature chains, alternating near misses, crowded
 * signatures, ambiguous everywhere, and the fuzzy tiers on real-looking
 * code — each at its base size and twice that (file and patch doubled
 * together), with the floor of each file.
 *
 * Run alone: `bun bench/families.bench.ts [--quick]`.
 *
 * @module
 */
import { floor } from "./floor.ts";
import { oursPlan, parsedPatchOf, snapshotsOf } from "./ours.ts";
import type { Registrar, Suite } from "./suite.ts";

/**
 * Register `floor <family>-<n>` and `plan <family>-<n>` for every family at
 * both sizes.
 *
 * @example
 * ```ts
 * registerFamilyBenches(loadSuite(FULL_SIZES), mitataRegistrar);
 * ```
 */
export function registerFamilyBenches(suite: Suite, registrar: Registrar): void {
  for (const { family, base, double } of suite.families) {
    registrar.group(`family ${family.name}: ${family.what}`, () => {
      for (const name of [base, double]) {
        const fixture = suite.patch(name);
        const patch = parsedPatchOf(fixture);
        const snapshots = snapshotsOf(fixture.file);
        registrar.bench(`floor ${name}`, () => floor(fixture.file.bytes));
        registrar.bench(`plan ${name}`, () => oursPlan(patch, snapshots, fixture.limits));
      }
    });
  }
}

if (import.meta.main) {
  const { run } = await import("mitata");
  const { FULL_SIZES, QUICK_SIZES, loadSuite, mitataRegistrar } = await import("./suite.ts");
  const suite = loadSuite(process.argv.includes("--quick") ? QUICK_SIZES : FULL_SIZES);
  registerFamilyBenches(suite, mitataRegistrar);
  await run();
}
