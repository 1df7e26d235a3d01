/**
 * The closest-region alignment (lib/match/closest.ts), counted: a chunk
 * that equals the file from where its window starts but for its last line
 * (the `alternating` family's near miss at the start of the file) costs the
 * band of its last rows only — the common prefix is taken without filling
 * its rows, the result is the one the full table gives (the prefix's pairs
 * weigh most, so the walk takes them anyway).
 */
import { describe, expect, test } from "bun:test";
import { closestAt } from "../../../lib/match/closest.ts";
import { newMatchStats } from "../../../lib/match/tier_index.ts";

const A = "    value = first(value);";
const B = "    value = second(value);";
const limits = { lines: 40, bytes: 4096 };

describe("closestAt: a common prefix costs no table rows", () => {
  for (const m of [100, 400]) {
    test(`${m}-line near miss at the file's start`, () => {
      const lines = Array.from({ length: 2000 }, (_, i) => (i % 2 === 0 ? A : B));
      // Equal to lines 1..m−1, then a line that is there one line later.
      const chunk = lines.slice(0, m - 1).concat([lines[m]!]);
      const stats = newMatchStats();
      const found = closestAt(lines, chunk, 0, limits, stats);
      expect(found).toBeDefined();
      expect(found!.region.startLine).toBe(1);
      expect(found!.region.score).toBe(1); // the last line aligns one line later
      expect(found!.end).toBe(m + 1);
      // Without the prefix: m rows × the band (about 2 × 16 + the slack). With it: the last rows only.
      expect(stats.lcsCells).toBeLessThan(100);
    });
  }

  test("a prefix that diverges: the rows after it are filled, the score counts every line", () => {
    const lines = ["a", "b", "c", "d", "e", "f", "g", "h"];
    const stats = newMatchStats();
    const found = closestAt(lines, ["a", "b", "x", "d", "e"], 0, limits, stats);
    expect(found!.region.score).toBe(0.8);
    expect(found!.region.difference).toBe("content");
    expect(stats.lcsCells).toBeGreaterThan(0);
  });
});
