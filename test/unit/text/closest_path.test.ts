import { describe, expect, test } from "bun:test";
import { closestPaths, foldPath, MAX_CLOSEST_PATHS } from "../../../lib/text/closest_path.ts";
import type { ClosestPath } from "../../../lib/text/closest_path.ts";

const existing = ["README.md", "src/parse.ts", "lib/util/parse.ts", "src/cafe\u0301.ts", "src/parser.ts", "test/src/parse.ts", "docs/Parse.md"];

describe("closestPaths: the existing files a missing path most likely meant", () => {
  const cases: [string, string, ClosestPath[]][] = [
    ["letter case of the name", "src/Parse.ts", [
      { path: "src/parse.ts", kind: "same" },
      { path: "test/src/parse.ts", kind: "moved" },
      { path: "lib/util/parse.ts", kind: "moved" },
      { path: "src/parser.ts", kind: "typo" },
    ]],
    ["letter case of a directory", "SRC/parse.ts", [{ path: "src/parse.ts", kind: "same" }, { path: "test/src/parse.ts", kind: "moved" }, { path: "lib/util/parse.ts", kind: "moved" }, { path: "src/parser.ts", kind: "typo" }]],
    ["NFC asked, NFD stored", "src/caf\u00e9.ts", [{ path: "src/cafe\u0301.ts", kind: "same" }]],
    ["the same name elsewhere: the directory sharing the most trailing names first", "app/src/parse.ts", [
      { path: "src/parse.ts", kind: "moved" },
      { path: "test/src/parse.ts", kind: "moved" },
      { path: "lib/util/parse.ts", kind: "moved" },
    ]],
    ["a near spelling, only in the same directory", "src/prase.ts", [{ path: "src/parse.ts", kind: "typo" }, { path: "src/parser.ts", kind: "typo" }]],
    ["nothing close", "src/lexer.ts", []],
    ["the path itself is never offered", "README.md", []],
  ];
  for (const [name, missing, want] of cases) {
    test(name, () => expect(closestPaths(missing, existing)).toEqual(want));
  }

  test("at most MAX_CLOSEST_PATHS, duplicates once", () => {
    const many = Array.from({ length: 50 }, (_, i) => `d${i}/x.ts`);
    expect(closestPaths("x.ts", [...many, ...many])).toHaveLength(MAX_CLOSEST_PATHS);
    expect(closestPaths("src/Parse.ts", ["src/parse.ts", "src/parse.ts"])).toEqual([{ path: "src/parse.ts", kind: "same" }]);
  });

  test("foldPath folds case and normalisation, nothing else", () => {
    expect(foldPath("Src/Cafe\u0301.TS")).toBe(foldPath("src/caf\u00e9.ts"));
    expect(foldPath("a_b")).not.toBe(foldPath("a-b"));
  });
});
