/**
 * A seeded pseudo-random source for the hardening campaigns, so every
 * trial can be replayed from its seed.
 *
 * @module
 */

/** A seeded random source: floats in [0, 1) plus a few helpers. */
export interface Rng {
  /** A float in [0, 1). */
  (): number;
  /** An integer in [min, max] (inclusive). */
  int(min: number, max: number): number;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** True with probability `p`. */
  chance(p: number): boolean;
}

/**
 * mulberry32: a tiny, well-distributed 32-bit generator.
 *
 * @example
 * ```ts
 * const rng = seeded(7);
 * rng.int(1, 6); // the same number on every run
 * ```
 */
export function seeded(seed: number): Rng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const rng = next as Rng;
  rng.int = (min, max) => min + Math.floor(next() * (max - min + 1));
  rng.pick = (items) => {
    if (items.length === 0) throw new RangeError("pick from an empty array");
    return items[Math.floor(next() * items.length)]!;
  };
  rng.chance = (p) => next() < p;
  return rng;
}
