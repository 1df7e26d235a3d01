/**
 * MatchIndex.anchorTier: an `@@` anchor not found as sent is looked up at
 * tiers 2–4 keyed for the anchors alone (one pass that mostly trims lines),
 * not by keying every chunk line at those tiers over the whole file. Its
 * answers must be those of the full tiers; on random files and anchors
 * they are compared position by position (table-driven cases first).
 */
import { describe, expect, test } from "bun:test";
import { MatchIndex } from "../../../lib/match/index.ts";
import { locateChunks } from "../../../lib/match/locate.ts";
import { newMatchStats } from "../../../lib/match/tier_index.ts";
import type { LineTier } from "../../../lib/match/normalize.ts";
import { chunk, options } from "./chunk_builder.ts";

/** Every position of each anchor at each tier, from the anchor-only index and from the full one. */
function positions(lines: string[], anchors: string[], patterns: string[][]): { anchorOnly: number[][]; full: number[][]; builtFull: boolean } {
  const make = () => {
    const index = new MatchIndex(lines);
    for (const a of anchors) index.addAnchor(a);
    for (const p of patterns) index.addPattern(p);
    return index;
  };
  const a = make();
  const anchorOnly = ([2, 3, 4] as LineTier[]).flatMap((tier) => anchors.map((text) => [...a.anchorTier(tier).occurrences(a.anchorTier(tier).idOf(text))]));
  const builtFull = a.built(2) || a.built(3) || a.built(4);
  const b = make();
  const full = ([2, 3, 4] as LineTier[]).flatMap((tier) => anchors.map((text) => [...b.tier(tier).occurrences(b.tier(tier).idOf(text))]));
  return { anchorOnly, full, builtFull };
}

describe("anchorTier finds what the full tiers find, without building them", () => {
  const cases: { name: string; lines: string[]; anchors: string[]; patterns: string[][] }[] = [
    // A line tier 1 keyed (" b " is a chunk line) whose tier-3 form is the anchor though its tier-2 form is no anchor's.
    { name: "tier-1 keyed line, anchor at tier 3 only", lines: ["", " b ", " b ", "x"], anchors: ["b"], patterns: [[" b "]] },
    { name: "indented header, anchor without indentation", lines: ["class A:", "    def run(self):", "        pass"], anchors: ["def run(self):"], patterns: [["        pass"]] },
    { name: "trailing whitespace in the file", lines: ["def f():  ", "  return 1"], anchors: ["def f():"], patterns: [["  return 1"]] },
    { name: "folded dash (tier 4)", lines: ["a \u2013 b", "a - b"], anchors: ["a - b", "a \u2013 b"], patterns: [["c"]] },
    { name: "anchor found nowhere", lines: ["function f() {", "}"], anchors: ["function g() {"], patterns: [["}"]] },
    { name: "blank-line anchor", lines: ["a", "   ", ""], anchors: ["  "], patterns: [["a"]] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const r = positions(c.lines, c.anchors, c.patterns);
      expect(r.anchorOnly).toEqual(r.full);
      expect(r.builtFull).toBe(false);
    });
  }

  test("random files, anchors and chunk lines: the same positions at tiers 2–4", () => {
    let s = 7;
    const rand = (n: number) => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) % n);
    const vocabulary = ["a", "b", " b ", "b  ", "  a", "\tc", "c", "}", "", "  ", "a \u2013 b", "a - b", "x\u00a0y", "x y"];
    for (let round = 0; round < 400; round++) {
      const lines = Array.from({ length: 1 + rand(25) }, () => vocabulary[rand(vocabulary.length)]!);
      const anchors = Array.from({ length: 1 + rand(3) }, () => vocabulary[rand(vocabulary.length)]!);
      const patterns = Array.from({ length: rand(3) }, () => Array.from({ length: 1 + rand(3) }, () => vocabulary[rand(vocabulary.length)]!));
      const r = positions(lines, anchors, patterns);
      expect({ round, positions: r.anchorOnly }).toEqual({ round, positions: r.full });
    }
  });

  test("200 anchors found nowhere: one pass keyed for the anchors, the chunks' lines never keyed at tiers 2–4 (counted)", () => {
    const lines: string[] = [];
    for (let f = 0; f < 2000; f++) lines.push(`function handler${f}(request) {`, `  return lookup(request, ${f});`, "}");
    const chunks = Array.from({ length: 200 }, (_, k) => chunk([` return lookup(request, ${k * 10});`, "-}", "+};"], { anchors: [`function hnadler${k * 10}(request) {`], patchLine: 10 + 4 * k }));
    const stats = newMatchStats();
    const r = locateChunks(lines, chunks, { ...options(), stats, detail: 20 });
    expect([...new Set([...r.errors, ...r.undiagnosed].map((e) => e.code))]).toEqual(["anchor_not_found"]);
    // Tier 1, then the anchors' pass at tiers 2–4: two builds, each line visited once by each.
    expect(stats.indexBuilds).toBe(2);
    expect(stats.linesScanned).toBe(2 * lines.length);
    // Keyed for the anchors alone, the 2000 indented `return lookup(…)` lines (each chunk's context line at
    // tier 3) are not compared at tiers 2–4: measured 6000 comparisons in all (tier 1 included); 9800 when
    // the anchor made tiers 2–4 be keyed for every chunk line.
    expect(stats.linesKeyed).toBeLessThanOrEqual(lines.length);
  });
});
