/**
 * How the bench judges a timed target (bench/target.ts, issue 31): the
 * median of at least five per-run ratios, a required target 10 % inside its
 * bound, a goal at its bound; and the busy neighbour (bench/neighbour.ts)
 * really spins and is really gone after stop.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { startNeighbour } from "../bench/neighbour.ts";
import { judgeRatio, roundRatios, spreadOf } from "../bench/target.ts";

describe("judgeRatio", () => {
  test.each([
    // ratios, max, options, pass, why
    [[1.5, 1.6, 1.7, 1.6, 1.6], 2.0, {}, true, "median 1.6 inside 1.8"],
    [[1.7, 1.8, 1.8, 1.9, 5.0], 2.0, {}, true, "median exactly at 1.8 holds (floating point 2.0 × 0.9)"],
    [[1.7, 1.81, 1.85, 1.9, 1.9], 2.0, {}, false, "median 1.85: met, under 10 % margin"],
    [[0.7, 0.72, 0.72, 0.75, 0.79], 0.8, {}, true, "≤ 0.8× needs ≤ 0.72×"],
    [[0.7, 0.73, 0.73, 0.75, 0.79], 0.8, {}, false, "0.73 > 0.72"],
    [[0.89, 0.9, 0.9, 0.9, 0.9], 1.0, { strict: true }, false, "< 1.0× needs < 0.9×"],
    [[0.8, 0.85, 0.89, 0.9, 0.9], 1.0, { strict: true }, true, "0.89 < 0.9"],
    [[0.95, 0.98, 0.99, 1.0, 1.0], 1.0, { kind: "goal" }, true, "a goal has no margin"],
    [[1.0, 1.0, 1.0, 1.0], 2.0, {}, false, "four runs are too few"],
    [[], 2.0, {}, false, "nothing measured"],
  ] as const)("%j against %d %j → %s (%s)", (ratios, max, options, pass) => {
    expect(judgeRatio(ratios, max, options).pass).toBe(pass);
  });

  test("prints the median, the spread, the margin and what the median needs", () => {
    expect(judgeRatio([0.66, 0.71, 0.79, 0.7, 0.75], 0.8).text).toBe("median 0.71× (min 0.66×, max 0.79×, 5 runs), margin 11 % of ≤ 0.80× (needs ≤ 0.72×)");
    expect(judgeRatio([1, 1, 1], 2).text).toEndWith("— only 3 runs, 5 needed");
    expect(judgeRatio([3.2, 3.3, 3.4, 3.5, 3.6], 1.0, { kind: "goal" }).text).toBe("median 3.40× (min 3.20×, max 3.60×, 5 runs), margin -240 % of ≤ 1.00×");
  });

  test("spreadOf and roundRatios drop what is not a measurement", () => {
    expect(spreadOf([2, Number.NaN, 1, 3])).toEqual({ min: 1, median: 2, max: 3, runs: 3 });
    expect(spreadOf([])).toBeNull();
    expect(roundRatios([2, 4, 6], [1, 0, 3, 9])).toEqual([2, 2]);
  });
});

function cpuTicks(pid: number): number {
  // /proc/PID/stat: utime and stime are fields 14 and 15, after the ")" of the command name.
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

describe("the busy neighbour", () => {
  test("spins (uses CPU) while it runs and is gone, with its process group, after stop", async () => {
    const neighbour = await startNeighbour();
    const pid = neighbour.pid;
    const before = cpuTicks(pid);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(cpuTicks(pid)).toBeGreaterThan(before);
    await neighbour.stop();
    expect(() => process.kill(-pid, 0)).toThrow();
    await neighbour.stop(); // idempotent
  });
});
