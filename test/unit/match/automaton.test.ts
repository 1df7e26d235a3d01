/**
 * The Aho–Corasick pass over line ids (lib/match/automaton.ts) against a
 * naive scan, on both of its transition forms: the dense table (few
 * distinct ids: a low-entropy file) and the edge hash with failure links
 * (many ids: the table would not fit its budget). Same occurrences, same
 * order, the same cap per pattern, forward and backward; and the dense
 * table's cells stay within `denseCells` (counted, not timed).
 */
import { describe, expect, test } from "bun:test";
import { denseCells, IdAutomaton, type ScanWork } from "../../../lib/match/automaton.ts";

/** A tiny deterministic generator (xorshift32). */
function rng(seed: number): (k: number) => number {
  let x = seed >>> 0 || 1;
  return (k) => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x % k;
  };
}

/** The first `cap` starts of `p` in scan order, by brute force. */
function naive(ids: Int32Array, p: Int32Array, reverse: boolean, cap: number): number[] {
  const starts: number[] = [];
  for (let s = 0; s + p.length <= ids.length; s++) {
    let k = 0;
    while (k < p.length && ids[s + k] === p[k]) k++;
    if (k === p.length) starts.push(s);
  }
  if (reverse) starts.reverse();
  return starts.slice(0, cap);
}

interface Case {
  name: string;
  /** Distinct ids in the file (1..alphabet) and in the patterns. */
  alphabet: number;
  n: number;
  patterns: number;
  maxLength: number;
  dense: boolean;
}

const CASES: Case[] = [
  { name: "3 ids, short patterns (dense)", alphabet: 3, n: 4000, patterns: 60, maxLength: 6, dense: true },
  { name: "8 ids, 7-line patterns (dense, the lowentropy family)", alphabet: 8, n: 6000, patterns: 200, maxLength: 7, dense: true },
  { name: "1 id, runs of every length (dense, saturating chains)", alphabet: 1, n: 3000, patterns: 40, maxLength: 40, dense: true },
  { name: "2000 ids (edge hash)", alphabet: 2000, n: 3000, patterns: 300, maxLength: 12, dense: false },
];

describe("IdAutomaton.scan equals a naive scan on both transition forms", () => {
  for (const c of CASES) {
    for (const seed of [1, 7, 42]) {
      test(`${c.name}, seed ${seed}`, () => {
        const r = rng(seed);
        const ids = Int32Array.from({ length: c.n }, () => 1 + r(c.alphabet));
        // Patterns cut from the file (so they occur) plus random ones; distinct.
        const seen = new Set<string>();
        const patterns: Int32Array[] = [];
        while (patterns.length < c.patterns) {
          const m = 1 + r(c.maxLength);
          let p: Int32Array;
          if (r(3) === 0) p = Int32Array.from({ length: m }, () => 1 + r(c.alphabet));
          else {
            const s = r(c.n - m);
            p = ids.slice(s, s + m);
          }
          const key = p.join(",");
          if (seen.has(key)) continue;
          seen.add(key);
          patterns.push(p);
        }
        for (const reverse of [false, true]) {
          for (const cap of [1, 3, 32]) {
            const automaton = new IdAutomaton(reverse ? patterns.map((p) => p.slice().reverse()) : patterns, c.alphabet + 1, c.n);
            const work: ScanWork = { steps: 0, reports: 0, cells: 0 };
            const got = automaton.scan(ids, reverse, cap, work).map((h) => [...h]);
            const want = patterns.map((p) => naive(ids, p, reverse, cap));
            expect(got).toEqual(want);
            expect(work.cells > 0).toBe(c.dense);
            const total = patterns.reduce((k, p) => k + p.length, 0);
            expect(work.cells).toBeLessThanOrEqual(denseCells(c.n, total));
            expect(work.reports).toBe(want.reduce((k, w) => k + w.length, 0));
            // Dense: one step per id read; hash: plus failure links, at most one per id read.
            expect(work.steps).toBeLessThanOrEqual(c.dense ? c.n : 2 * c.n);
          }
        }
      });
    }
  }
});

describe("IdAutomaton: the documented example", () => {
  test("two patterns", () => {
    const a = new IdAutomaton([Int32Array.of(1, 2), Int32Array.of(2)], 3);
    expect(a.scan(Int32Array.of(1, 2, 2, 1, 2), false, 10).map((h) => [...h])).toEqual([[0, 3], [1, 2, 4]]);
  });
});
