/**
 * The benchmark suite's sizes and fixtures, and the small registrar
 * interface the `*.bench.ts` files register through (mitata in a run, a
 * call-once registrar in the smoke test, which must not time anything).
 *
 * @module
 */
import { bench, do_not_optimize, group, summary } from "mitata";
import { type Family, FAMILIES } from "./families.ts";
import {
  adversarialFixtures,
  familyFixtures,
  type CacheDir,
  codeFixtures,
  defaultCacheDir,
  type FileFixture,
  type FixtureGroup,
  type PatchFixture,
} from "./fixtures.ts";

/** File sizes (in lines) of one suite. */
export interface SuiteSizes {
  /** The smaller code file (SPEC: 100k). */
  small: number;
  /** Half of `large`, for the doubling ratio. */
  half: number;
  /** The large code file (SPEC §11: 1M lines, ~40 MB). */
  large: number;
  /** The adversarial files (SPEC §5.5: 200k lines of `}`). */
  adversarial: number;
  /** Twice `adversarial`, for the doubling ratio. */
  adversarialDouble: number;
  /** Each adversarial family (bench/families.ts) runs at its base size × this, and twice that. */
  familyScale: number;
}

/** The sizes SPEC §11 names. */
export const FULL_SIZES: SuiteSizes = {
  small: 100_000,
  half: 500_000,
  large: 1_000_000,
  adversarial: 200_000,
  adversarialDouble: 400_000,
  familyScale: 1,
};

/** A tenth of the full sizes, for a quick look (`bun bench/run.ts --quick`). */
export const QUICK_SIZES: SuiteSizes = {
  small: 10_000,
  half: 50_000,
  large: 100_000,
  adversarial: 20_000,
  adversarialDouble: 40_000,
  familyScale: 0.1,
};

/** Tiny sizes for the smoke test. */
export const TINY_SIZES: SuiteSizes = {
  small: 2_000,
  half: 2_500,
  large: 5_000,
  adversarial: 300,
  adversarialDouble: 600,
  familyScale: 0.02,
};

/** The seed of every code file; fixed so runs compare. */
export const SEED = 42;

/** One adversarial family of the suite: its patch (and file) names at the two sizes. */
export interface SuiteFamily {
  family: Family;
  base: string;
  double: string;
}

/** The line counts a family runs at in a suite. */
export function familySizes(family: Family, sizes: SuiteSizes): [number, number] {
  const base = Math.max(2000, Math.round(family.baseLines * sizes.familyScale));
  return [base, 2 * base];
}

/** All fixtures of a suite, looked up by name. */
export interface Suite {
  sizes: SuiteSizes;
  file(name: string): FileFixture;
  patch(name: string): PatchFixture;
  patches(): PatchFixture[];
  families: SuiteFamily[];
}

/**
 * Generate (or load from the temp-dir cache) every fixture of a suite.
 * `onProgress` hears about each group as it is ready.
 *
 * @example
 * ```ts
 * const suite = loadSuite(TINY_SIZES, null);
 * suite.patch(`code-${TINY_SIZES.large}-c100`).chunks; // 100
 * ```
 */
export function loadSuite(
  sizes: SuiteSizes,
  cacheDir: CacheDir = defaultCacheDir(),
  onProgress: (message: string) => void = () => {},
): Suite {
  const groups: FixtureGroup[] = [];
  for (const lines of new Set([sizes.small, sizes.half, sizes.large])) {
    const started = performance.now();
    groups.push(codeFixtures(lines, SEED, cacheDir));
    onProgress(`code-${lines}: ${Math.round(performance.now() - started)} ms`);
  }
  for (const lines of [sizes.adversarial, sizes.adversarialDouble]) {
    groups.push(adversarialFixtures(lines, cacheDir));
  }
  const families: SuiteFamily[] = [];
  for (const family of FAMILIES) {
    const started = performance.now();
    const [base, double] = familySizes(family, sizes);
    for (const lines of [base, double]) groups.push(familyFixtures(family, lines, SEED, cacheDir));
    families.push({ family, base: `${family.name}-${base}`, double: `${family.name}-${double}` });
    onProgress(`${family.name}-${base}/${double}: ${Math.round(performance.now() - started)} ms`);
  }
  const files = new Map<string, FileFixture>();
  const patches = new Map<string, PatchFixture>();
  for (const g of groups) {
    for (const [name, f] of g.files) files.set(name, f);
    for (const [name, p] of g.patches) patches.set(name, p);
  }
  return {
    sizes,
    file(name) {
      const f = files.get(name);
      if (!f) throw new Error(`no fixture file ${name}`);
      return f;
    },
    patch(name) {
      const p = patches.get(name);
      if (!p) throw new Error(`no fixture patch ${name}`);
      return p;
    },
    patches: () => [...patches.values()],
    families,
  };
}

/** Where the bench files register their benchmarks. */
export interface Registrar {
  group(name: string, body: () => void): void;
  /** A group whose entries mitata compares with each other. */
  summary(body: () => void): void;
  bench(name: string, fn: () => unknown): void;
}

/**
 * Register into mitata; results are kept alive with `do_not_optimize`.
 *
 * @example
 * ```ts
 * registerPlanBenches(suite, mitataRegistrar);
 * await run();
 * ```
 */
export const mitataRegistrar: Registrar = {
  group: (name, body) => group(name, body),
  summary: (body) => summary(body),
  bench: (name, fn) => {
    bench(name, () => do_not_optimize(fn()));
  },
};

/**
 * Run every registered function once, untimed, collecting its result by
 * name: the smoke test's registrar.
 */
export function callOnceRegistrar(results: Map<string, unknown>): Registrar {
  return {
    group: (_name, body) => body(),
    summary: (body) => body(),
    bench: (name, fn) => {
      results.set(name, fn());
    },
  };
}
