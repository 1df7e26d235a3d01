import { describe, expect, test } from "bun:test";
import {
  describeTier,
  foldCode,
  foldPunctuation,
  hasEscapes,
  indentationOf,
  isIndentationSensitive,
  isWhitespaceCode,
  looseKey,
  normalizeLine,
  tiersFor,
  unescapeLiterals,
} from "../../../lib/match/normalize.ts";
import type { MatchingMode } from "../../../lib/types.ts";

describe("tiersFor: where each matching mode stops", () => {
  const cases: [MatchingMode, number[]][] = [
    ["exact", [1]],
    ["whitespace", [1, 2, 3]],
    ["lenient", [1, 2, 3, 4, 5]],
  ];
  for (const [mode, tiers] of cases) test(mode, () => expect(tiersFor(mode)).toEqual(tiers as never));
  test("an unknown mode is a programmer error", () => {
    expect(() => tiersFor("fuzzy" as MatchingMode)).toThrow(TypeError);
  });
  test("every tier has a description", () => {
    for (const t of [1, 2, 3, 4, 5] as const) expect(describeTier(t).length).toBeGreaterThan(4);
  });
});

describe("normalizeLine per tier", () => {
  const cases: { line: string; keys: [string, string, string, string] }[] = [
    { line: "  return x;  ", keys: ["  return x;  ", "  return x;", "return x;", "return x;"] },
    { line: "\treturn x;\t", keys: ["\treturn x;\t", "\treturn x;", "return x;", "return x;"] },
    { line: "   ", keys: ["   ", "", "", ""] },
    { line: "", keys: ["", "", "", ""] },
    { line: "\u00a0x = “a” – ‘b’\u3000", keys: ["\u00a0x = “a” – ‘b’\u3000", "\u00a0x = “a” – ‘b’", "x = “a” – ‘b’", `x = "a" - 'b'`] },
    { line: "a\u2002b", keys: ["a\u2002b", "a\u2002b", "a\u2002b", "a b"] },
    { line: "x − y ‐ z", keys: ["x − y ‐ z", "x − y ‐ z", "x − y ‐ z", "x - y - z"] },
    { line: "f′ g″", keys: ["f′ g″", "f′ g″", "f′ g″", `f' g"`] },
    { line: "wait…", keys: ["wait…", "wait…", "wait…", "wait…"] },
  ];
  for (const c of cases) {
    test(JSON.stringify(c.line), () => {
      expect([1, 2, 3, 4].map((t) => normalizeLine(c.line, t as 1 | 2 | 3 | 4))).toEqual(c.keys);
    });
  }
});

describe("folding", () => {
  const map: [number, string][] = [
    ...[0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2212].map((c) => [c, "-"] as [number, string]),
    ...[0x2018, 0x2019, 0x201a, 0x201b, 0x2032].map((c) => [c, "'"] as [number, string]),
    ...[0x201c, 0x201d, 0x201e, 0x201f, 0x2033].map((c) => [c, '"'] as [number, string]),
    ...[0xa0, ...Array.from({ length: 11 }, (_, k) => 0x2000 + k), 0x202f, 0x205f, 0x3000].map((c) => [c, " "] as [number, string]),
  ];
  for (const [code, to] of map) {
    test(`U+${code.toString(16).toUpperCase().padStart(4, "0")} → ${JSON.stringify(to)}`, () => {
      expect(String.fromCharCode(foldCode(code))).toBe(to);
      expect(foldPunctuation(`a${String.fromCharCode(code)}b`)).toBe(`a${to}b`);
    });
  }
  test("everything else is left alone (and folding keeps the length)", () => {
    for (let c = 0; c < 0x10000; c++) {
      if (map.some(([code]) => code === c)) continue;
      if (foldCode(c) !== c) throw new Error(`U+${c.toString(16)} folded unexpectedly`);
    }
  });
  test("the fast whitespace test agrees with String.prototype.trim on every BMP code unit", () => {
    for (let c = 0; c < 0x10000; c++) {
      const ch = String.fromCharCode(c);
      if (isWhitespaceCode(c) !== (ch.trim() === "")) throw new Error(`disagree on U+${c.toString(16)}`);
    }
  });
  test("looseKey drops all whitespace and folds punctuation", () => {
    expect(looseKey("  f( a,\tb ) – “x” ")).toBe(`f(a,b)-"x"`);
  });
  test("indentationOf", () => {
    expect(indentationOf("\t  x  ")).toBe("\t  ");
    expect(indentationOf("   ")).toBe("   ");
  });
});

describe("tier 5: unescapeLiterals", () => {
  const cases: [string, string][] = [
    ["if x:\\n    return 1", "if x:\n    return 1"],
    ["a\\tb", "a\tb"],
    ['print(\\"hi\\")', 'print("hi")'],
    ["it\\'s", "it's"],
    // A double-escaped backslash stays one backslash: `\\n` is backslash + n.
    ['printf(\\"a\\\\n\\")', 'printf("a\\n")'],
    ["line\\r\\nnext", "line\nnext"],
    ["C:\\dir", "C:\\dir"],
    ["trailing\\", "trailing\\"],
    ["no escapes", "no escapes"],
  ];
  for (const [input, output] of cases) test(JSON.stringify(input), () => expect(unescapeLiterals(input)).toBe(output));
  test("hasEscapes only for sequences tier 5 would change", () => {
    expect(hasEscapes("a\\nb")).toBe(true);
    expect(hasEscapes('say \\"x\\"')).toBe(true);
    expect(hasEscapes("C:\\dir")).toBe(false);
    expect(hasEscapes("plain")).toBe(false);
  });
});

describe("isIndentationSensitive", () => {
  const cases: [string, boolean][] = [
    ["app/main.py", true],
    ["types.pyi", true],
    ["deploy/values.yaml", true],
    [".github/workflows/ci.yml", true],
    ["Makefile", true],
    ["src/GNUmakefile", true],
    ["rules.mk", true],
    ["Main.hs", true],
    ["app.coffee", true],
    ["views/index.pug", true],
    ["style.sass", true],
    ["style.styl", true],
    ["main.nim", true],
    ["Program.fs", true],
    ["tools/BUILD.bazel", true],
    ["lib/defs.bzl", true],
    ["docs/index.rst", true],
    ["src/main.ts", false],
    ["style.scss", false],
    ["README.md", false],
    ["config.json", false],
    ["Dockerfile", false],
    ["python", false],
    [".py", false],
  ];
  for (const [path, expected] of cases) test(`${path} → ${expected}`, () => expect(isIndentationSensitive(path)).toBe(expected));
});
