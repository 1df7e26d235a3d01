import { describe, expect, test } from "bun:test";
import { normalizeLine, type LineTier } from "../../../lib/match/normalize.ts";
import { scanLines } from "../../../lib/text/line_scan.ts";
import { signature, signatureSamples } from "../../../lib/match/tier_keyer.ts";
import { regionHash } from "../../../lib/match/key_table.ts";
import { type FlatLines, flatLinesOf, passExact, passExactScanning, passLoosest, TierKeyer } from "../../../lib/match/tier_pass.ts";
import { passExactScanningBytes, passLoosestBytes } from "../../../lib/match/byte_pass.ts";
import { passTrimmed } from "../../../lib/match/trimmed_pass.ts";

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function isAscii(text: string): boolean {
  return !/[^\x00-\x7f]/.test(text);
}

/**
 * passExactScanning and passExactScanningBytes over the same LF text with
 * both filters: the same starts, ids, counts and comparisons.
 */
function expectScanningAgree(text: string, queries: Iterable<string>): void {
  const q = new Set(queries);
  const bytes = new TextEncoder().encode(text);
  expect(bytes.length).toBe(text.length);
  for (const filter of ["signature", "hash"] as const) {
    const byText = new TierKeyer(1, q, 0, true, filter);
    const starts = [...passExactScanning(text, byText)];
    const byBytes = new TierKeyer(1, q, 0, true, filter);
    expect([...passExactScanningBytes(text, bytes, byBytes)]).toEqual(starts);
    expect([...byBytes.ids]).toEqual([...byText.ids]);
    expect([...byBytes.counts]).toEqual([...byText.counts]);
    expect(byBytes.keyed).toBe(byText.keyed);
  }
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
  if (ascii && isAscii(flat.text)) {
    // The byte pass over the same ASCII text: the same counts.
    const bytes = new TextEncoder().encode(flat.text);
    for (const filter of ["signature", "hash"] as const) {
      const byBytes = new TierKeyer(4, set, 0, true, filter);
      passLoosestBytes(flat, bytes, byBytes, tier1);
      expect([...byBytes.counts]).toEqual([...k4.counts]);
      const alone = new TierKeyer(4, set, 0, true, filter);
      passLoosestBytes(flat, bytes, alone, undefined);
      expect([...alone.counts]).toEqual([...k4.counts]);
    }
  }
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

describe("the byte passes of an ASCII file: the string passes' results, read through the bytes", () => {
  test("LF texts: pairs told apart by a character or length, keys through the table, repeats, blank lines", () => {
    const sampled = (p: number, n: number): boolean => signatureSamples(n).includes(p);
    const alike = (digit: string, n: number): string => Array.from({ length: n }, (_, p) => (sampled(p, n) ? "K" : digit)).join("");
    const queries = ["    x = step(x);", "    y = step(y);", ...["1", "2", "3"].map((d) => alike(d, 12)), "short", "shorts", "", "}", "const somethingLong = computeIt(a, b);", "caf\u00e9", "x \u2014 y"];
    const lines = ["    x = step(x);", "    y = step(y);", "    z = step(z);", alike("1", 12), alike("4", 12), alike("3", 12), "short", "shorts", "shortx", "", "", "}", "}", "}", "const somethingLong = computeIt(a, b);", "const somethingLong = computeIt(a, c);", "cafe", "x - y"];
    for (const ending of ["", "\n"]) expectScanningAgree(lines.join("\n") + ending, queries);
    expectScanningAgree("", queries);
    expectScanningAgree("}", queries);
    // Sparse: most lines stop at the length filter (keys compared through the text), then dense (through the bytes).
    const filler = Array.from({ length: 300 }, (_, i) => "#".repeat(40 + (i % 7)));
    expectScanningAgree([...filler, ...lines, ...lines, ...lines, ...lines].join("\n"), queries);
    expectScanningAgree([...lines, ...filler, ...lines].join("\n"), queries);
  });

  test("2000 random ASCII LF texts, with keys that are not ASCII (never equal to a line) among the queries", () => {
    const rand = prng(41);
    const lines = ["}", "", "x = 1", "  x = 1", "return;", "const somethingLong = computeIt(a, b);", "ete", "x = 2", "  }"];
    const queries = [...lines, "\u00e9t\u00e9", "x \u2014 1"];
    for (let k = 0; k < 2000; k++) {
      const n = Math.floor(rand() * 120);
      let text = "";
      for (let i = 0; i < n; i++) text += lines[Math.floor(rand() * lines.length)] + "\n";
      if (rand() < 0.3) text += "x = 1";
      expectScanningAgree(text, queries.filter(() => rand() < 0.6));
    }
  });

  test("6000 keys (hash filter) over 30,000 lines; a key added after the first byte pass is encoded by the next", () => {
    const rand = prng(43);
    const keys = Array.from({ length: 6000 }, (_, i) => `  value${i} = compute(${i % 31}, "${"abc".slice(i % 3)}");`);
    const lines = Array.from({ length: 30_000 }, () => (rand() < 0.4 ? keys[Math.floor(rand() * keys.length)]! : `  value${Math.floor(rand() * 12000)} = compute(0, "");`));
    const text = lines.join("\n") + "\n";
    expectScanningAgree(text, keys);
    // One table, two passes: the second sees a key interned in between.
    const table = new TierKeyer(1, new Set(keys), 0, true).dict;
    const bytes = new TextEncoder().encode(text);
    const first = new TierKeyer(1, table, 0, true);
    passExactScanningBytes(text, bytes, first);
    const late = lines.find((l) => table.get(l) === undefined)!;
    const lateId = table.intern(late, regionHash(late, 0, late.length, false));
    const second = new TierKeyer(1, table, 0, true);
    passExactScanningBytes(text, bytes, second);
    const expected = lines.filter((l) => l === late).length;
    expect(expected).toBeGreaterThan(0);
    expect(second.counts[lateId]).toBe(expected);
    expect(first.counts[1]).toBe(second.counts[1]);
  });

  test("the byte passes refuse bytes that are not the text's", () => {
    const k = new TierKeyer(1, new Set(["a"]), 0, true);
    expect(() => passExactScanningBytes("a\u00e9", new TextEncoder().encode("a\u00e9"), k)).toThrow(RangeError);
    expect(() => passLoosestBytes(flatLinesOf(["a"]), new Uint8Array(3), new TierKeyer(4, new Set(["a"]), 0, true), undefined)).toThrow(RangeError);
    expect(() => passLoosestBytes(flatLinesOf(["a"]), new Uint8Array(1), new TierKeyer(4, new Set(["a"]), 0, false), undefined)).toThrow(RangeError);
  });
});
