/**
 * Near-linear in the file AND the patch (SPEC §5.5, §11.1; issue 16 item 1),
 * counted, not timed: for every adversarial family of the bench
 * (bench/families.ts) the matcher's work counters stay within a constant
 * per file line plus patch line, and doubling the file and the patch
 * together at most about doubles them. These are the inputs that used to
 * cost file × patch: anchors found nowhere (a similarity scan per anchor),
 * chunks of frequent lines (a KMP scan of the rest of the file per chunk),
 * thousands of failing chunks (a diagnosis each), keys alike at every
 * sampled character (a comparison per key per line).
 */
import { describe, expect, test } from "bun:test";
import { FAMILIES } from "../../../bench/families.ts";
import { formatCodexPatch, linesToBytes } from "../../../bench/gen.ts";
import { locateChunks } from "../../../lib/match/locate.ts";
import { type MatchStats, newMatchStats } from "../../../lib/match/tier_index.ts";
import { parsePatch } from "../../../lib/patch/parse.ts";
import { decodeText } from "../../../lib/text/text.ts";
import type { Chunk } from "../../../lib/types.ts";

function work(s: MatchStats): number {
  return s.linesScanned + s.linesKeyed + s.candidatesVerified + s.idComparisons + s.scanSteps + s.scanReports + s.votes + s.lcsCells +
    s.diagnosticLines + s.textProbes + s.similarSetup;
}

interface Run {
  stats: MatchStats;
  size: number;
  codes: string[];
  expected: string[];
}

function run(family: string, n: number): Run {
  const input = FAMILIES.find((f) => f.name === family)!.generate(n, 42);
  const parsed = parsePatch(formatCodexPatch("src/f.ts", input.chunks), { limits: { maxChunksPerFile: 1_000_000 } });
  if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
  const chunks = (parsed.patch.ops[0] as { chunks: Chunk[] }).chunks;
  const decoded = decodeText(linesToBytes(input.lines));
  if (!decoded.ok) throw new Error("not UTF-8");
  const stats = newMatchStats();
  // As planPatch calls it: 20 failures diagnosed in full, the rest compact.
  const r = locateChunks(decoded.file, chunks, { matching: "lenient", path: "src/f.ts", indentationSensitive: false, excerptLines: 40, excerptBytes: 4096, stats, detail: 20 });
  const patchLines = chunks.reduce((k, c) => k + c.lines.length + c.anchors.length, 0);
  const codes = [...new Set([...r.errors, ...r.undiagnosed].map((e) => e.code))];
  return { stats, size: input.lines.length + patchLines, codes, expected: input.expect.ok ? [] : [input.expect.code] };
}

/**
 * Work allowed per file line plus patch line (measured: 1–6.4; the old
 * engine did thousands on the same inputs: a scan of the rest of the file
 * per chunk or per anchor).
 */
const WORK_PER_UNIT = 8;

describe("every adversarial family: work linear in file + patch, doubling both at most doubles it", () => {
  for (const family of FAMILIES) {
    test(family.name, () => {
      const base = Math.max(10_000, Math.floor(family.baseLines / 25));
      const small = run(family.name, base);
      const large = run(family.name, 2 * base);
      for (const r of [small, large]) {
        expect(r.codes).toEqual(r.expected);
        expect(work(r.stats)).toBeLessThanOrEqual(WORK_PER_UNIT * r.size);
        // At most two multi-pattern passes per tier, none for an unregistered pattern.
        expect(r.stats.scanPasses).toBeLessThanOrEqual(8);
        expect(r.stats.extraPasses).toBe(0);
      }
      if (process.env.SCALING_DEBUG) console.log(family.name, small.size, large.size, JSON.stringify(small.stats), JSON.stringify(large.stats));
      expect(work(large.stats) / work(small.stats)).toBeLessThanOrEqual(2.2 * (large.size / small.size) / 2);
    });
  }
});

describe("thousands of failing chunks: the fuzzy tiers are keyed for their selectors only", () => {
  test("1000 chunks, each with a line found nowhere: tiers 2–4 are never keyed in full", () => {
    const r = run("failing", 100_000);
    expect(r.codes).toEqual(["context_mismatch"]);
    // Tier 1, then one pass keying each pattern's rarest line at tiers 2–4: no full pass there.
    expect(r.stats.indexBuilds).toBe(2);
    expect(r.stats.linesScanned).toBe(2 * 100_000);
  });
});
