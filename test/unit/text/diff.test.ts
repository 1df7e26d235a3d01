import { describe, expect, test } from "bun:test";
import { applyPatch } from "diff";
import { unifiedDiff, type UnifiedDiffInput, unifiedDiffOfLines } from "../../../lib/text/diff.ts";
import type { LineEdit, OutputLine } from "../../../lib/types.ts";

const L = (...lines: string[]): string => lines.join("\n") + "\n";
const nums = (n: number, from = 1): string[] => Array.from({ length: n }, (_, i) => `line ${i + from}`);
const text = (t: string): OutputLine => ({ text: t });
const keep = (k: number): OutputLine => ({ keep: k });
const update = (
  oldLines: string[],
  edits: LineEdit[],
  more: Partial<UnifiedDiffInput> = {},
): UnifiedDiffInput => ({
  oldPath: "f.txt",
  newPath: "f.txt",
  oldLines,
  oldFinalNewline: true,
  edits,
  newFinalNewline: true,
  ...more,
});
const HEAD = L("diff --git a/f.txt b/f.txt", "--- a/f.txt", "+++ b/f.txt");

describe("unifiedDiff: expected output", () => {
  const table: [string, UnifiedDiffInput, string][] = [
    [
      "one line replaced in the middle, 3 lines of context",
      update(nums(10), [{ start: 4, end: 5, replacement: [text("five")] }]),
      HEAD + L("@@ -2,7 +2,7 @@", " line 2", " line 3", " line 4", "-line 5", "+five", " line 6", " line 7", " line 8"),
    ],
    [
      "changes far apart make two hunks",
      update(nums(20), [
        { start: 1, end: 2, replacement: [text("two")] },
        { start: 15, end: 16, replacement: [text("sixteen")] },
      ]),
      HEAD +
        L("@@ -1,5 +1,5 @@", " line 1", "-line 2", "+two", " line 3", " line 4", " line 5") +
        L("@@ -13,7 +13,7 @@", " line 13", " line 14", " line 15", "-line 16", "+sixteen", " line 17", " line 18", " line 19"),
    ],
    [
      "hunks merge when their contexts touch (gap of exactly 6)",
      update(nums(12), [
        { start: 1, end: 2, replacement: [] },
        { start: 8, end: 9, replacement: [] },
      ]),
      HEAD +
        L("@@ -1,12 +1,10 @@", " line 1", "-line 2", ...nums(6, 3).map((l) => " " + l), "-line 9", " line 10", " line 11", " line 12"),
    ],
    [
      "hunks stay apart with a gap of 7",
      update(nums(13), [
        { start: 1, end: 2, replacement: [] },
        { start: 9, end: 10, replacement: [] },
      ]),
      HEAD +
        L("@@ -1,5 +1,4 @@", " line 1", "-line 2", " line 3", " line 4", " line 5") +
        L("@@ -7,7 +6,6 @@", " line 7", " line 8", " line 9", "-line 10", " line 11", " line 12", " line 13"),
    ],
    [
      "pure insertion at the start",
      update(nums(5), [{ start: 0, end: 0, replacement: [text("zero")] }]),
      HEAD + L("@@ -1,3 +1,4 @@", "+zero", " line 1", " line 2", " line 3"),
    ],
    [
      "pure insertion at the end",
      update(nums(5), [{ start: 5, end: 5, replacement: [text("six"), text("seven")] }]),
      HEAD + L("@@ -3,3 +3,5 @@", " line 3", " line 4", " line 5", "+six", "+seven"),
    ],
    [
      "context 0: an insertion's old side is '-N,0' (start one less)",
      update(nums(8), [{ start: 5, end: 5, replacement: [text("new")] }], { context: 0 }),
      HEAD + L("@@ -5,0 +6 @@", "+new"),
    ],
    [
      "context 0: a deletion's new side is '+N,0'",
      update(nums(8), [{ start: 2, end: 4, replacement: [] }], { context: 0 }),
      HEAD + L("@@ -3,2 +2,0 @@", "-line 3", "-line 4"),
    ],
    [
      "kept lines inside an edit are context; '-' before '+' in each gap",
      update(["a", "b", "c", "d", "e", "f"], [{
        start: 1,
        end: 5,
        replacement: [text("B1"), text("B2"), keep(2), keep(3), text("E")],
      }]),
      HEAD + L("@@ -1,6 +1,7 @@", " a", "-b", "+B1", "+B2", " c", " d", "-e", "+E", " f"),
    ],
    [
      "many kept lines inside one edit split it into two hunks",
      update(nums(12), [{
        start: 0,
        end: 12,
        replacement: [text("first"), ...Array.from({ length: 10 }, (_, i) => keep(i + 1)), text("last")],
      }]),
      HEAD +
        L("@@ -1,4 +1,4 @@", "-line 1", "+first", " line 2", " line 3", " line 4") +
        L("@@ -9,4 +9,4 @@", " line 9", " line 10", " line 11", "-line 12", "+last"),
    ],
    [
      "adjacent edits: a pure insertion then a deletion at the same line",
      update(nums(3), [
        { start: 0, end: 0, replacement: [text("A")] },
        { start: 0, end: 1, replacement: [] },
      ]),
      HEAD + L("@@ -1,3 +1,3 @@", "-line 1", "+A", " line 2", " line 3"),
    ],
    [
      "no final newline: last line replaced, still none",
      update(["a", "b"], [{ start: 1, end: 2, replacement: [text("B")] }], {
        oldFinalNewline: false,
        newFinalNewline: false,
      }),
      HEAD + L("@@ -1,2 +1,2 @@", " a", "-b", "\\ No newline at end of file", "+B", "\\ No newline at end of file"),
    ],
    [
      "no final newline: change above it leaves the last line as context",
      update(["a", "b"], [{ start: 0, end: 1, replacement: [text("A")] }], {
        oldFinalNewline: false,
        newFinalNewline: false,
      }),
      HEAD + L("@@ -1,2 +1,2 @@", "-a", "+A", " b", "\\ No newline at end of file"),
    ],
    [
      "appending after a last line without newline changes that line too",
      update(["a"], [{ start: 1, end: 1, replacement: [text("b")] }], {
        oldFinalNewline: false,
        newFinalNewline: false,
      }),
      HEAD + L("@@ -1 +1,2 @@", "-a", "\\ No newline at end of file", "+a", "+b", "\\ No newline at end of file"),
    ],
    [
      "gaining the final newline (no edits) shows the last line as - and +",
      update(["a", "b"], [], { oldFinalNewline: false, newFinalNewline: true }),
      HEAD + L("@@ -1,2 +1,2 @@", " a", "-b", "\\ No newline at end of file", "+b"),
    ],
    [
      "losing the final newline after deleting the old last lines",
      update(["a", "b", "c"], [{ start: 1, end: 3, replacement: [] }], { newFinalNewline: false }),
      HEAD + L("@@ -1,3 +1 @@", "-a", "-b", "-c", "+a", "\\ No newline at end of file"),
    ],
    [
      "add",
      { oldPath: null, newPath: "src/new.ts", oldLines: [], oldFinalNewline: false, edits: [{ start: 0, end: 0, replacement: [text("x"), text("y")] }], newFinalNewline: true },
      L("diff --git a/src/new.ts b/src/new.ts", "--- /dev/null", "+++ b/src/new.ts", "@@ -0,0 +1,2 @@", "+x", "+y"),
    ],
    [
      "add of one line",
      { oldPath: null, newPath: "one", oldLines: [], oldFinalNewline: false, edits: [{ start: 0, end: 0, replacement: [text("x")] }], newFinalNewline: true },
      L("diff --git a/one b/one", "--- /dev/null", "+++ b/one", "@@ -0,0 +1 @@", "+x"),
    ],
    [
      "add of an empty file keeps the --- / +++ lines",
      { oldPath: null, newPath: "empty", oldLines: [], oldFinalNewline: false, edits: [], newFinalNewline: false },
      L("diff --git a/empty b/empty", "--- /dev/null", "+++ b/empty"),
    ],
    [
      "delete of a file without final newline",
      { oldPath: "gone", newPath: null, oldLines: ["x", "y"], oldFinalNewline: false, edits: [{ start: 0, end: 2, replacement: [] }], newFinalNewline: false },
      L("diff --git a/gone b/gone", "--- a/gone", "+++ /dev/null", "@@ -1,2 +0,0 @@", "-x", "-y", "\\ No newline at end of file"),
    ],
    [
      "move with a change",
      update(["a", "b"], [{ start: 1, end: 2, replacement: [text("B")] }], { newPath: "dir/g.txt" }),
      L("diff --git a/f.txt b/dir/g.txt", "rename from f.txt", "rename to dir/g.txt", "--- a/f.txt", "+++ b/dir/g.txt", "@@ -1,2 +1,2 @@", " a", "-b", "+B"),
    ],
    [
      "move without a change: header only",
      update(["a"], [], { newPath: "g.txt" }),
      L("diff --git a/f.txt b/g.txt", "rename from f.txt", "rename to g.txt"),
    ],
    [
      "update without a change: header only",
      update(["a"], []),
      L("diff --git a/f.txt b/f.txt"),
    ],
    [
      "Unicode paths and text are printed as UTF-8; text keeps its whitespace",
      { ...update(["  é\t", "x"], [{ start: 0, end: 1, replacement: [text("  ё\t ")] }]), oldPath: "доки/а.md", newPath: "доки/а.md" },
      L("diff --git a/доки/а.md b/доки/а.md", "--- a/доки/а.md", "+++ b/доки/а.md", "@@ -1,2 +1,2 @@", "-  é\t", "+  ё\t ", " x"),
    ],
  ];
  for (const [name, input, expected] of table) {
    test(name, () => {
      expect(unifiedDiff(input)).toBe(expected);
    });
  }
});

describe("unifiedDiff: contract violations are programmer errors", () => {
  const bad: [string, UnifiedDiffInput, ErrorConstructor][] = [
    ["both paths null", { ...update(["a"], []), oldPath: null, newPath: null }, TypeError],
    ["edits out of order", update(nums(5), [{ start: 3, end: 4, replacement: [] }, { start: 1, end: 2, replacement: [] }]), RangeError],
    ["overlapping edits", update(nums(5), [{ start: 1, end: 3, replacement: [] }, { start: 2, end: 4, replacement: [] }]), RangeError],
    ["edit past the end", update(nums(2), [{ start: 1, end: 3, replacement: [] }]), RangeError],
    ["end before start", update(nums(5), [{ start: 3, end: 2, replacement: [] }]), RangeError],
    ["keep outside its edit", update(nums(5), [{ start: 1, end: 2, replacement: [keep(3)] }]), RangeError],
    ["keeps not ascending", update(nums(5), [{ start: 0, end: 4, replacement: [keep(2), keep(1)] }]), RangeError],
    ["an add with old lines", { ...update(["a"], []), oldPath: null }, RangeError],
    ["a delete that keeps lines", { ...update(["a"], []), newPath: null }, RangeError],
    ["negative context", update(["a"], [], { context: -1 }), RangeError],
  ];
  for (const [name, input, error] of bad) {
    test(name, () => {
      expect(() => unifiedDiff(input)).toThrow(error);
    });
  }
});

/** mulberry32, seeded: failures are reproducible from the case number. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Apply edits the obvious way, independently of lib/diff.ts. */
function applyEdits(oldLines: string[], edits: LineEdit[]): string[] {
  const out: string[] = [];
  let pos = 0;
  for (const e of edits) {
    out.push(...oldLines.slice(pos, e.start));
    for (const item of e.replacement) out.push("keep" in item ? oldLines[item.keep]! : item.text);
    pos = e.end;
  }
  out.push(...oldLines.slice(pos));
  return out;
}

const join = (lines: string[], finalNewline: boolean): string =>
  lines.length === 0 ? "" : lines.join("\n") + (finalNewline ? "\n" : "");

function randomCase(rand: () => number): UnifiedDiffInput {
  const words = ["a", "b", "}", "", "  x", "return;", "é😀"];
  const word = () => words[Math.floor(rand() * words.length)]!;
  const n = Math.floor(rand() * 30);
  const oldLines = Array.from({ length: n }, word);
  const edits: LineEdit[] = [];
  let pos = 0;
  while (pos <= n && rand() < 0.7) {
    const start = pos + Math.floor(rand() * 6);
    if (start > n) break;
    const end = Math.min(n, start + Math.floor(rand() * 5));
    const replacement: OutputLine[] = [];
    for (let k = start; k < end; k++) {
      if (rand() < 0.5) replacement.push(text(word() + "'"));
      if (rand() < 0.4) replacement.push(keep(k));
    }
    if (rand() < 0.5) replacement.push(text("new"));
    edits.push({ start, end, replacement });
    pos = end + (rand() < 0.3 ? 0 : 1);
  }
  const newLines = applyEdits(oldLines, edits);
  // A last line "" without a final newline has no byte form ("x\n" reads back
  // as one terminated line), so the text layer never produces one.
  const finalNewline = (lines: string[]) => rand() < 0.6 || lines.at(-1) === "";
  return {
    oldPath: "f",
    newPath: rand() < 0.2 ? "g" : "f",
    oldLines,
    oldFinalNewline: finalNewline(oldLines),
    edits,
    newFinalNewline: finalNewline(newLines),
    context: Math.floor(rand() * 4),
  };
}

describe("unifiedDiff: cross-check with the diff package's applyPatch", () => {
  test("500 random edit sets: applying the diff to the old text gives the new text", () => {
    const rand = prng(7);
    let hunky = 0;
    for (let i = 0; i < 500; i++) {
      const input = randomCase(rand);
      const newLines = applyEdits([...input.oldLines], [...input.edits]);
      const oldText = join([...input.oldLines], input.oldFinalNewline);
      const newText = join(newLines, input.newFinalNewline);
      const patch = unifiedDiff(input);
      if (patch.includes("\n@@ ")) hunky++;
      const applied = oldText === newText && !patch.includes("\n@@ ") ? newText : applyPatch(oldText, patch);
      if (applied !== newText) {
        throw new Error(
          `case ${i}: ${JSON.stringify({ input, oldText, newText, applied })}\n${patch}`,
        );
      }
    }
    expect(hunky).toBeGreaterThan(300);
  });

  test("an add and a delete round-trip too", () => {
    const add = unifiedDiff({
      oldPath: null,
      newPath: "n",
      oldLines: [],
      oldFinalNewline: false,
      edits: [{ start: 0, end: 0, replacement: [text("x"), text("y")] }],
      newFinalNewline: false,
    });
    expect(applyPatch("", add)).toBe("x\ny");
    const del = unifiedDiff({
      oldPath: "d",
      newPath: null,
      oldLines: ["x", "y"],
      oldFinalNewline: true,
      edits: [{ start: 0, end: 2, replacement: [] }],
      newFinalNewline: false,
    });
    expect(applyPatch("x\ny\n", del)).toBe("");
  });
});

describe("unifiedDiff: cost follows the edits, not the file", () => {
  test("a 1M-line file with two small edits", () => {
    const oldLines = nums(1_000_000);
    const out = unifiedDiff(update(oldLines, [
      { start: 10, end: 11, replacement: [text("x")] },
      { start: 999_990, end: 999_991, replacement: [text("y")] },
    ]));
    // Only the two edits' neighbourhoods appear; speed is measured in bench/, never asserted here.
    expect(out.split("\n@@ ").length).toBe(3);
    expect(out).toContain("@@ -8,7 +8,7 @@");
  });
});

describe("unifiedDiff: old lines as a list read one line at a time", () => {
  test("200 random cases: a list that hands out lines gives the same diff, reading only lines near the edits", () => {
    const rand = prng(13);
    for (let i = 0; i < 200; i++) {
      const input = randomCase(rand);
      const read = new Set<number>();
      const lines = input.oldLines;
      const list = {
        length: lines.length,
        at: (index: number): string | undefined => {
          read.add(index);
          return lines[index];
        },
      };
      expect(unifiedDiffOfLines({ ...input, oldLines: list })).toBe(unifiedDiff(input));
      // Every line read is in an edit or within 2 × context of one (hunks
      // merge across such gaps), or near the old last line (a change of the
      // final newline alone is a hunk of its own).
      const reach = 2 * (input.context ?? 3);
      for (const index of read) {
        const near = input.edits.some((e) => index >= e.start - reach && index < e.end + reach) || index >= lines.length - 1 - reach;
        expect(near).toBe(true);
      }
    }
  });
});
