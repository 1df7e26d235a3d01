/**
 * Campaign 5, short version (`npm run hardening` runs 100k+ inputs and
 * prints the slowest): generated inputs through parsePatch and planPatch
 * never throw and always give a typed result.
 */
import { describe, expect, test } from "bun:test";
import { runFuzz } from "./fuzz.ts";

describe("fuzzing the pure core", () => {
  test("4000 generated inputs (mutated scenarios, random bytes, huge lines, deep @@, hostile files): zero crashes", () => {
    const f = runFuzz({ inputs: 4000, seed: 51, bigEvery: 1000 });
    expect(f.violations).toEqual([]);
    expect(f.crashes).toBe(0);
    // both outcomes are exercised, or the run proves little
    expect(f.plannedOk).toBeGreaterThan(50);
    expect(f.planFailed).toBeGreaterThan(50);
  }, 60_000);
});
