/**
 * Before/after figures for the matching families: `planPatch` of two
 * `lib/` trees (e.g. `git archive <commit> lib | tar -x -C /tmp/before`)
 * measured in ONE process, interleaved with the floor (A B B A rounds, the
 * heap collected before each sample, as `paired.ts`), so both trees see the
 * same background load. Prints per fixture the floor, each tree's median and
 * ratio, whether both plan the same (failure messages aside), and per
 * family the doubling ratio (file and patch doubled together).
 *
 * Run: `bun bench/compare_trees.ts <dirA> <dirB> anchors failing … [code]`
 * (`code`: the 1M-line code file's tier-3, failing and 100-chunk patches);
 * `ROUNDS=n` rounds (default 6). Fixtures come from the bench's cache.
 *
 * @module
 */
import { FAMILIES } from "./families.ts";
import { codeFixtures, familyFixtures, type PatchFixture } from "./fixtures.ts";
import { floor } from "./floor.ts";
import { parsedPatchOf, snapshotsOf } from "./ours.ts";
import { familySizes, FULL_SIZES, SEED } from "./suite.ts";
import type { Patch, PlanOptions, PlanResult, Snapshots } from "../lib/types.ts";

type Planner = (patch: Patch, snapshots: Snapshots, options?: PlanOptions) => PlanResult;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1]!;
}

function timed(fn: () => unknown, out: number[]): void {
  globalThis.Bun?.gc(true);
  const started = performance.now();
  fn();
  out.push(performance.now() - started);
}

/** A plan result as JSON without message texts (a budget note may change words by design). */
function shape(result: PlanResult): string {
  return JSON.stringify(result, (key, value) => (value instanceof Uint8Array ? value.length : key === "message" ? undefined : value));
}

/** The fixtures of one name: a family at both sizes, or the code file's patches. */
function fixturesOf(name: string): { label: string; fixture: PatchFixture }[] {
  if (name === "code") {
    const group = codeFixtures(1_000_000, SEED);
    return ["tier3", "fail", "c100"].map((p) => ({ label: `code-1000000-${p}`, fixture: group.patches.get(`code-1000000-${p}`)! }));
  }
  const family = FAMILIES.find((f) => f.name === name);
  if (!family) throw new Error(`no family ${name}`);
  return familySizes(family, FULL_SIZES).map((n) => {
    const [label, fixture] = [...familyFixtures(family, n, SEED).patches][0]!;
    return { label, fixture };
  });
}

if (import.meta.main) {
  const [dirA, dirB, ...names] = process.argv.slice(2);
  if (!dirA || !dirB || names.length === 0) throw new Error("usage: bun bench/compare_trees.ts <dirA> <dirB> <family|code>…");
  const a: Planner = (await import(`${dirA}/lib/plan/plan.ts`)).planPatch;
  const b: Planner = (await import(`${dirB}/lib/plan/plan.ts`)).planPatch;
  const rounds = Number(process.env.ROUNDS ?? 6);
  for (const name of names) {
    const medians: [number, number][] = [];
    for (const { label, fixture } of fixturesOf(name)) {
      const patch = parsedPatchOf(fixture);
      const snapshots = snapshotsOf(fixture.file);
      const options = fixture.limits ? { limits: fixture.limits } : {};
      const same = shape(a(patch, snapshots, options)) === shape(b(patch, snapshots, options));
      const [tf, ta, tb]: number[][] = [[], [], []];
      for (let r = 0; r < rounds; r++) {
        timed(() => floor(fixture.file.bytes), tf);
        timed(() => a(patch, snapshots, options), ta);
        timed(() => b(patch, snapshots, options), tb);
        timed(() => b(patch, snapshots, options), tb);
        timed(() => a(patch, snapshots, options), ta);
        timed(() => floor(fixture.file.bytes), tf);
      }
      const [f, ma, mb] = [median(tf), median(ta), median(tb)];
      medians.push([ma, mb]);
      console.log(`${label}: floor ${f.toFixed(1)} ms | A ${ma.toFixed(1)} ms = ${(ma / f).toFixed(2)}× | B ${mb.toFixed(1)} ms = ${(mb / f).toFixed(2)}× | same plan (messages aside): ${same}`);
    }
    if (medians.length === 2) {
      console.log(`${name} doubling (file and patch): A ${(medians[1]![0] / medians[0]![0]).toFixed(2)}× B ${(medians[1]![1] / medians[0]![1]).toFixed(2)}×`);
    }
  }
}
