import { describe, expect, test } from "bun:test";
import { normalizeLine, type LineTier } from "../../../lib/match/normalize.ts";
import { scanLines } from "../../../lib/text/line_scan.ts";
import { signature, signatureSamples } from "../../../lib/match/tier_keyer.ts";
import { type FlatLines, flatLinesOf, passExact, passExactScanning, passLoosest, TierKeyer } from "../../../lib/match/tier_pass.ts";
import { passTrimmed } from "../../../lib/match/trimmed_pass.ts";

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** The ids a tier must give: each line's normalised form looked up among the normalised queries. */
function referenceIds(lines: readonly string[], queries: readonly string[], tier: LineTier): number[] {
  const dict = new Map<string, number>();
  for (const q of queries) {
    const key = normalizeLine(q, tier);
    if (!dict.has(key)) dict.set(key, dict.size + 1);
  }
  return lines.map((line) => dict.get(normalizeLine(line, tier)) ?? 0);
}

/**
 * Every tier's ids from the passes; `ascii`: the keyers are told the file
 * is ASCII (tier 4 then hashes lines unfolded). Tiers 2–4 are keyed on top
 * of tier 1, as `MatchIndex` does, and tier 4 once more alone by
 * `passLoosest` (the selectors' pass), whose counts must agree.
 */
function passAll(flat: FlatLines, queries: readonly string[], ascii = false): Map<LineTier, number[]> {
  const set = new Set(queries);
  const n = flat.eols.length;
  const k1 = new TierKeyer(1, set, n, ascii);
  const [k2, k3, k4] = [2, 3, 4].map((t) => new TierKeyer(t as LineTier, set, n, ascii)) as [TierKeyer, TierKeyer, TierKeyer];
  const loose = new TierKeyer(4, set, 0, ascii);
  passExact(flat, k1);
  const tier1 = k1.finish();
  passTrimmed(flat, k2, k3, k4, tier1);
  passLoosest(flat, loose, tier1);
  // passLoosest counts only: each key's count must be tier 4's.
  expect([...loose.counts]).toEqual([...k4.counts]);
  return new Map([k1, k2, k3, k4].map((k) => [k.tier, [...k.finish().ids]]));
}

describe("tier passes: in-place comparison gives exactly the dictionary's ids", () => {
  const cases: { name: string; lines: string[]; queries: string[] }[] = [
    { name: "exact and trimmed", lines: ["  x = 1  ", "x = 1", "y", "", "   "], queries: ["x = 1", "  x = 1", ""] },
    { name: "punctuation folds only at tier 4", lines: ["a \u2014 “b”", "a - \"b\"", "\u00a0a - \"b\"\u00a0"], queries: ["a - \"b\""] },
    { name: "long lines (native comparison)", lines: ["const somethingLong = computeIt(a, b);", "  const somethingLong = computeIt(a, b);"], queries: ["const somethingLong = computeIt(a, b);"] },
    { name: "repeated short lines", lines: ["}", "}", "}", "  }", "}"], queries: ["}"] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const got = passAll(flatLinesOf(c.lines), c.queries);
      for (const tier of [1, 2, 3, 4] as const) expect(got.get(tier)).toEqual(referenceIds(c.lines, c.queries, tier));
    });
  }

  test("5000 queries (so that signatures collide) over 20000 random lines, in a file with mixed endings", () => {
    const rand = prng(5);
    const pieces = ["a", "b", "x1", "(", ")", " ", "  ", "\t", "\u2014", "“", "é", ";"];
    const randomLine = (): string => {
      let s = "";
      const n = 1 + Math.floor(rand() * 7);
      for (let i = 0; i < n; i++) s += pieces[Math.floor(rand() * pieces.length)];
      return s;
    };
    const queries = Array.from({ length: 5000 }, randomLine);
    const lines = Array.from({ length: 20_000 }, () => (rand() < 0.5 ? queries[Math.floor(rand() * queries.length)]! : randomLine()));
    const endings = ["\n", "\r\n", "\r"];
    const text = lines.map((l) => l + endings[Math.floor(rand() * 3)]).join("");
    const scan = scanLines(text);
    const flat = { text, starts: scan.starts, eols: scan.eols };
    expect(flat.eols.length).toBe(lines.length);
    const got = passAll(flat, queries);
    for (const tier of [1, 2, 3, 4] as const) expect(got.get(tier)).toEqual(referenceIds(lines, queries, tier));
  });

  test("keys sharing a signature: a pair told apart by a character or by length, three through the table", () => {
    // Alike at every sampled character (signatureSamples), so each group shares one signature.
    const pairByChar = ["    x = step(x);", "    y = step(y);"];
    const sampled = (p: number, n: number): boolean => signatureSamples(n).includes(p);
    const alike = (digit: string, n: number): string => Array.from({ length: n }, (_, p) => (sampled(p, n) ? "K" : digit)).join("");
    const triple = ["1", "2", "3"].map((d) => alike(d, 12));
    const queries = [...pairByChar, ...triple, "short", "shorts"];
    const lines = [...pairByChar, "    z = step(z);", ...triple, alike("4", 12), "short", "shorts", "shortx", "    x = step(x);  "];
    for (const ascii of [false, true]) {
      const got = passAll(flatLinesOf(lines), queries, ascii);
      for (const tier of [1, 2, 3, 4] as const) expect(got.get(tier)).toEqual(referenceIds(lines, queries, tier));
    }
    const k = new TierKeyer(1, new Set(queries), 0);
    const entry = (q: string): number => k.sigs[signature(q, 0, q.length, false, k.shift)]!;
    expect(entry(pairByChar[0]!)).toBeLessThan(-1);
    expect(entry(triple[0]!)).toBe(-1);
  });

  // Above 4096 keys lines are filtered by their whole-line hash, below by a sampled signature; an
  // ASCII file is not folded as it is hashed. Both filters, both ways, against the dictionary.
  for (const count of [300, 6000]) {
    test(`${count} queries over an ASCII file told it is ASCII (tier 4 unfolded), keys that fold left out`, () => {
      const rand = prng(count);
      const pieces = ["a", "b", "x1", "(", ")", " ", "  ", "\t", ";", "=", "\u2014"];
      const randomLine = (): string => {
        let s = "";
        const n = 1 + Math.floor(rand() * 9);
        for (let i = 0; i < n; i++) s += pieces[Math.floor(rand() * pieces.length)];
        return s;
      };
      const queries = Array.from({ length: count }, randomLine);
      const asciiOnly = (l: string): string => l.replace(/[^\x00-\x7f]/g, "-");
      const lines = Array.from({ length: 20_000 }, () => asciiOnly(rand() < 0.5 ? queries[Math.floor(rand() * queries.length)]! : randomLine()));
      const got = passAll(flatLinesOf(lines), queries, true);
      for (const tier of [1, 2, 3, 4] as const) expect(got.get(tier)).toEqual(referenceIds(lines, queries, tier));
    });
  }
});

describe("passExactScanning: finding the lines and keying them in one pass", () => {
  const cases: { name: string; text: string }[] = [
    { name: "empty", text: "" },
    { name: "one line without ending", text: "x = 1" },
    { name: "final newline", text: "a\nx = 1\n" },
    { name: "blank lines and repeats", text: "\n\n}\n}\n}\nx = 1\n\n" },
    { name: "no final newline after repeats", text: "}\n}\n}" },
    { name: "long lines", text: "const somethingLong = computeIt(a, b);\nconst somethingLong = computeIt(a, c);\n" },
  ];
  const queries = ["x = 1", "}", "", "const somethingLong = computeIt(a, b);"];
  for (const c of cases) {
    test(c.name, () => {
      const scan = scanLines(c.text);
      const reference = new TierKeyer(1, new Set(queries), scan.eols.length);
      passExact({ text: c.text, starts: scan.starts, eols: scan.eols }, reference);
      const fused = new TierKeyer(1, new Set(queries), 0);
      expect([...passExactScanning(c.text, fused)]).toEqual([...scan.starts]);
      expect([...fused.finish().ids]).toEqual([...reference.finish().ids]);
      expect(fused.keyed).toBe(reference.keyed);
    });
  }

  test("a text whose short lines follow a sampled start of long ones: the arrays grow mid-pass", () => {
    const text = ("x = 1" + " ".repeat(95) + "\n").repeat(700) + "}\n".repeat(40_000) + "x = 1";
    const queries = new Set(["}", "x = 1"]);
    const scan = scanLines(text);
    const reference = new TierKeyer(1, queries, scan.eols.length);
    passExact({ text, starts: scan.starts, eols: scan.eols }, reference);
    const fused = new TierKeyer(1, queries, 0);
    expect([...passExactScanning(text, fused)]).toEqual([...scan.starts]);
    expect([...fused.finish().ids]).toEqual([...reference.finish().ids]);
  });

  test("3000 random LF texts (short lines, repeats) agree with scan + pass", () => {
    const rand = prng(23);
    const pool = ["}", "", "x = 1", "  x = 1", "return;", "const somethingLong = computeIt(a, b);", "é"];
    for (let k = 0; k < 3000; k++) {
      const n = Math.floor(rand() * 200);
      let text = "";
      for (let i = 0; i < n; i++) text += pool[Math.floor(rand() * pool.length)] + "\n";
      if (rand() < 0.3) text += pool[Math.floor(rand() * pool.length)];
      const q = new Set(pool.filter(() => rand() < 0.5));
      const scan = scanLines(text);
      const reference = new TierKeyer(1, q, scan.eols.length);
      passExact({ text, starts: scan.starts, eols: scan.eols }, reference);
      const fused = new TierKeyer(1, q, 0);
      expect([...passExactScanning(text, fused)]).toEqual([...scan.starts]);
      const a = fused.finish();
      const b = reference.finish();
      expect([...a.ids]).toEqual([...b.ids]);
      for (const key of q) expect(a.count(a.idOf(key))).toBe(b.count(b.idOf(key)));
    }
  });
});
