import { describe, expect, test } from "bun:test";
import { formatLineId } from "../../../lib/text/line_id.ts";
import { type LocateOptions, type LocateResult, locateChunks } from "../../../lib/match/locate.ts";
import { type MatchStats, newMatchStats } from "../../../lib/match/tier_index.ts";
import { decodeText, renderText, type TextFile } from "../../../lib/text/text.ts";
import type { Chunk, FailureCode, LineEdit, OutputLine } from "../../../lib/types.ts";
import { chunk, options } from "./chunk_builder.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

function fileOf(text: string): TextFile {
  const r = decodeText(enc.encode(text));
  if (!r.ok) throw new Error("invalid UTF-8 in test input");
  return r.file;
}

/**
 * Locate from the line array alone, from the lines with the decoded file as
 * a hint, and from the decoded file itself (lines made only when read); all
 * must agree exactly, so every case below checks each way in.
 */
function locate(lines: readonly string[] | string, chunks: Chunk[], overrides: Partial<LocateOptions> = {}): LocateResult {
  const text = typeof lines === "string" ? lines : lines.join("\n") + "\n";
  const file = fileOf(text);
  const slow = locateChunks(file.lines, chunks, options(overrides));
  const fast = locateChunks(file.lines, chunks, options({ ...overrides, file }));
  const whole = locateChunks(fileOf(text), chunks, options(overrides));
  expect(fast).toEqual(slow);
  expect(whole).toEqual(slow);
  return fast;
}

/** Apply placements the way planPatch does, and render. */
function apply(text: string, chunks: Chunk[], overrides: Partial<LocateOptions> = {}): { out: string; result: LocateResult } {
  const file = fileOf(text);
  const result = locateChunks(file, chunks, options(overrides));
  const edits: LineEdit[] = result.placements.map((p) => {
    const replacement: OutputLine[] = [];
    let at = p.start;
    for (const line of p.body) {
      if (line.kind === "context") replacement.push({ keep: at++ });
      else if (line.kind === "delete") at++;
      else replacement.push({ text: line.text });
    }
    expect(at).toBe(p.end);
    return { start: p.start, end: p.end, replacement };
  });
  return { out: dec.decode(renderText(file, edits)), result };
}

const codes = (r: LocateResult) => r.errors.map((e) => e.code);
const warningCodes = (r: LocateResult) => r.warnings.map((w) => w.code);

const SAMPLE = [
  "import os",
  "",
  "class Store:",
  "    def load(self, path):",
  "        with open(path) as f:",
  "            return f.read()",
  "",
  "    def save(self, path, data):",
  "        with open(path, 'w') as f:",
  "            f.write(data)",
  "",
  "class Cache:",
  "    def load(self, path):",
  "        return self.data[path]",
  "",
  "def main():",
  "    Store().save('x', 'y')",
];

describe("the tier ladder", () => {
  test("tier 1: exact, unique, placement and body as sent", () => {
    const c = chunk(["     def save(self, path, data):", "-        with open(path, 'w') as f:", "+        with open(path, 'a') as f:"]);
    const r = locate(SAMPLE, [c]);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.placements).toEqual([{ index: 1, start: 7, end: 9, tier: 1, body: c.lines }]);
  });

  test("tier 2: trailing whitespace in the chunk is ignored, with a warning naming tier and lines", () => {
    const r = locate(SAMPLE, [chunk(["     def save(self, path, data):   ", "-        with open(path, 'w') as f:\t", "+        pass"])]);
    expect(r.placements.map((p) => [p.start, p.end, p.tier])).toEqual([[7, 9, 2]]);
    expect(warningCodes(r)).toEqual(["fuzzy_match"]);
    expect(r.warnings[0]!.message).toContain("lines 8–9");
    expect(r.warnings[0]!.message).toContain("tier 2");
    expect(r.warnings[0]!).toMatchObject({ path: "src/file.ts", hunk: 1, line: 8, patchLine: 10 });
  });

  test("tier 3: indentation ignored; + lines get the file's extra indentation", () => {
    const r = locate(SAMPLE, [chunk([" def save(self, path, data):", "-    with open(path, 'w') as f:", "+    with open(path, 'a') as f:", "+        f.flush()"])]);
    expect(r.placements[0]!.tier).toBe(3);
    expect(r.placements[0]!.body.filter((l) => l.kind === "insert").map((l) => l.text)).toEqual([
      "        with open(path, 'a') as f:",
      "            f.flush()",
    ]);
    expect(warningCodes(r)).toEqual(["indentation_adjusted", "fuzzy_match"]);
    expect(r.warnings[0]!.message).toContain("4 spaces more");
  });

  test("tier 3: a chunk indented more than the file loses the difference", () => {
    const r = locate(["fn main() {", "  let x = 1;", "  run(x);", "}"], [chunk(["     let x = 1;", "-    run(x);", "+    run(x + 1);"])]);
    expect(r.placements[0]!.body.map((l) => l.text)).toEqual(["    let x = 1;", "    run(x);", "  run(x + 1);"]);
    expect(r.warnings[0]!.message).toContain("2 spaces less");
  });

  test("tier 4: curly quotes, dashes and NBSP in the file match ASCII in the chunk", () => {
    const lines = ["title = “Hello” — world", "x\u00a0= 1", "end"];
    const r = locate(lines, [chunk([' title = "Hello" - world', "-x = 1", "+x = 2"])]);
    expect(r.placements.map((p) => [p.start, p.end, p.tier])).toEqual([[0, 2, 4]]);
    expect(r.warnings.map((w) => w.message).join()).toContain("tier 4");
  });

  test("tier 5: literal \\n in the chunk becomes line breaks; + lines are unescaped too", () => {
    const lines = ["def f():", "    x = 1", "    return x", "", "def g():", "    return 2"];
    const c = chunk([" def f():\\n    x = 1", "-    return x", '+    return \\"x\\"\\n    # done']);
    const r = locate(lines, [c]);
    expect(r.errors).toEqual([]);
    const p = r.placements[0]!;
    expect([p.start, p.end, p.tier]).toEqual([0, 3, 5]);
    expect(p.body.map((l) => [l.kind, l.text])).toEqual([
      ["context", "def f():"],
      ["context", "    x = 1"],
      ["delete", "    return x"],
      ["insert", '    return "x"'],
      ["insert", "    # done"],
    ]);
    expect(warningCodes(r)).toEqual(["fuzzy_match", "escaped_literals_recovered"]);
  });

  test("tier 5 is only accepted when unique", () => {
    const lines = ["a", "b", "x", "a", "b"];
    const r = locate(lines, [chunk([" a\\nb", "+c"])]);
    expect(codes(r)).toEqual(["ambiguous_hunk"]);
    expect(r.placements).toEqual([]);
  });

  test("the first tier that finds anything decides, even if a later tier would find more", () => {
    const r = locate(["x = 1", "  x = 1", "x = 1  "], [chunk(["-  x = 1", "+  x = 2"])]);
    expect(r.placements.map((p) => [p.start, p.tier])).toEqual([[1, 1]]);
  });

  const modeCases: { mode: LocateOptions["matching"]; lines: string[]; body: string[]; code?: FailureCode; tier?: number }[] = [
    { mode: "exact", lines: ["a  ", "b"], body: [" a", "-b"], code: "context_mismatch" },
    { mode: "whitespace", lines: ["a  ", "b"], body: [" a", "-b"], tier: 2 },
    { mode: "whitespace", lines: ["    a", "b"], body: [" a", "-b"], tier: 3 },
    { mode: "whitespace", lines: ["“a”", "b"], body: [' "a"', "-b"], code: "context_mismatch" },
    { mode: "lenient", lines: ["“a”", "b"], body: [' "a"', "-b"], tier: 4 },
    { mode: "whitespace", lines: ["a", "b"], body: [" a\\nb", "+c"], code: "context_mismatch" },
  ];
  for (const c of modeCases) {
    test(`matching "${c.mode}" on ${JSON.stringify(c.lines)} → ${c.code ?? `tier ${c.tier}`}`, () => {
      const r = locate(c.lines, [chunk(c.body)], { matching: c.mode });
      if (c.code) expect(codes(r)).toEqual([c.code]);
      else expect(r.placements.map((p) => p.tier)).toEqual([c.tier as 1]);
    });
  }

  test("CRLF file at a fuzzy tier: endings of context and new lines stay CRLF", () => {
    const text = "  if (a) {\r\n      run();\r\n  }\r\n";
    const { out, result } = apply(text, [chunk([" if (a) {  ", "-    run();", "+    run(1);", "+    done();"])]);
    expect(result.placements[0]!.tier).toBe(3);
    expect(out).toBe("  if (a) {\r\n      run(1);\r\n      done();\r\n  }\r\n");
  });

  test("the flat-text scan agrees with the line scan on mixed endings, a BOM and non-ASCII text", () => {
    const text = "\uFEFFé one\r\n  “two” —\rthree  \nfour\r\n\r\n  five\u00a0\rsix";
    const file = fileOf(text);
    expect(file.bom).toBe(true);
    const chunks = [chunk([' "two" -', "-three", "+3"]), chunk(["-five", "+5"]), chunk([" six", "+7"], { eof: true })];
    const slow = locateChunks(file.lines, chunks, options());
    const fast = locateChunks(file.lines, chunks, options({ file }));
    const whole = locateChunks(fileOf(text), chunks, options());
    expect(fast).toEqual(slow);
    expect(whole).toEqual(slow);
    expect(fast.placements.map((p) => [p.start, p.end, p.tier])).toEqual([[1, 3, 4], [5, 6, 3], [6, 7, 1]]);
  });

  test("context lines keep the file's text, not the patch's (Codex #30505)", () => {
    const { out } = apply("  a = 1  \n  b = 2\n", [chunk([" a = 1", "-b = 2", "+b = 3"])]);
    expect(out).toBe("  a = 1  \n  b = 3\n");
  });
});

describe("uniqueness and order", () => {
  test("ambiguous: every candidate with its N:hh id, nothing picked", () => {
    const lines = ["}", "x", "}", "y", "}"];
    const r = locate(lines, [chunk(["-}", "+};"])]);
    expect(codes(r)).toEqual(["ambiguous_hunk"]);
    expect(r.placements).toEqual([]);
    expect(r.errors[0]!.candidates).toEqual([1, 3, 5].map((n) => ({ line: n, id: formatLineId("}", n), text: "}" })));
    expect(r.errors[0]!.message).toContain(`${formatLineId("}", 3)}  }`);
  });

  test("ambiguous: candidates capped at 20, message says more than 20", () => {
    const lines = Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? "tick();" : `step(${i});`));
    const r = locate(lines, [chunk(["-tick();", "+tock();"])]);
    expect(r.errors[0]!.code).toBe("ambiguous_hunk");
    expect(r.errors[0]!.candidates!.length).toBe(20);
    expect(r.errors[0]!.message).toContain("more than 20");
  });

  test("out of order: a chunk found only before the previous chunk", () => {
    const r = locate(SAMPLE, [chunk([" def main():", "-    Store().save('x', 'y')", "+    pass"]), chunk([" import os", "+import sys"])]);
    expect(r.placements.map((p) => p.index)).toEqual([1]);
    expect(codes(r)).toEqual(["out_of_order_hunk"]);
    expect(r.errors[0]!).toMatchObject({ hunk: 2, line: 1 });
    expect(r.errors[0]!.message).toContain("before chunk 1");
  });

  // Issue 29.5: an @@ anchor below the lines it should precede is its own failure, not "out of order".
  const afterChange: { name: string; lines?: readonly string[]; chunks: Chunk[]; hunk: number; line: number; says: string[] }[] = [
    {
      name: "the block's line is suggested when it is below the previous chunk",
      chunks: [chunk(["-        return self.data[path]", "+        return self.data.get(path)"], { anchors: ["def main():"] })],
      hunk: 1,
      line: 14,
      says: [
        `its @@ anchor is on line 16 (${formatLineId("def main():", 16)}  def main():), after the lines it should precede — the chunk matches only line 14, above it:`,
        `Next step: move the @@ line above the change: use @@     def load(self, path): (line 13, the block the change is in), or drop the @@ line.`,
      ],
    },
    {
      name: "after a previous chunk: the innermost block's line",
      chunks: [chunk([" import os", "+import sys"]), chunk(["-            f.write(data)", "+            f.write(data + '\\n')"], { anchors: ["class Cache:"] })],
      hunk: 2,
      line: 10,
      says: ["the chunk matches only line 10, above it:", `use @@         with open(path, 'w') as f: (line 9, the block the change is in), or drop the @@ line.`],
    },
    {
      name: "no block (flat lines): the line just above the change, below the previous chunk",
      lines: ["x = 1", "y = 2", "z = 3", "end"],
      chunks: [chunk(["-x = 1", "+x = 0"]), chunk(["-z = 3", "+z = 9"], { anchors: ["end"] })],
      hunk: 2,
      line: 3,
      says: ["use @@ y = 2 (line 2, the line above the change), or drop the @@ line."],
    },
    {
      name: "right after the previous chunk: nothing between can be the anchor",
      lines: ["x = 1", "y = 2", "z = 3", "end"],
      chunks: [chunk(["-x = 1", "+x = 0"]), chunk(["-y = 2", "+y = 9"], { anchors: ["end"] })],
      hunk: 2,
      line: 2,
      says: ["drop the @@ line (no line between the previous chunk and the change can serve as an anchor)."],
    },
    {
      name: "a change at the top of the file: only dropping the anchor is offered",
      lines: ["a = 1", "b = 2", "c = 3"],
      chunks: [chunk(["-a = 1", "+a = 9"], { anchors: ["c = 3"] })],
      hunk: 1,
      line: 1,
      says: ["drop the @@ line (the change starts the file, so no line above it can serve as an anchor)."],
    },
  ];
  for (const c of afterChange) {
    test(`anchor after the change: ${c.name}`, () => {
      const r = locate(c.lines ?? SAMPLE, c.chunks);
      expect(codes(r)).toEqual(["anchor_after_change"]);
      expect(r.errors[0]!).toMatchObject({ hunk: c.hunk, line: c.line, candidates: [{ line: c.line }] });
      for (const s of c.says) expect(r.errors[0]!.message).toContain(s);
      // Compact (past the detail budget) it keeps its code.
      expect(codes({ ...r, errors: locate(c.lines ?? SAMPLE, c.chunks, { detail: 0 }).undiagnosed })).toEqual(["anchor_after_change"]);
    });
  }

  test("a chunk above the previous chunk stays out of order even with an anchor: reorder, not re-anchor", () => {
    const r = locate(SAMPLE, [chunk([" def main():", "-    Store().save('x', 'y')", "+    pass"]), chunk([" import os", "+import sys"], { anchors: ["class Cache:"] })]);
    expect(r.errors.map((e) => [e.code, e.hunk])).toEqual([["anchor_not_found", 2]]);
    const s = locate(SAMPLE, [chunk(["     def save(self, path, data):", "-        with open(path, 'w') as f:", "+        with open(path) as f:"]), chunk([" import os", "+import sys"], { anchors: ["def main():"] })]);
    expect(codes(s)).toEqual(["out_of_order_hunk"]);
    expect(s.errors[0]!.message).toContain("move this chunk before chunk 1 in the patch");
  });

  test("overlapping: the only match shares lines with the previous chunk", () => {
    const r = locate(SAMPLE, [
      chunk(["     def save(self, path, data):", "-        with open(path, 'w') as f:", "+        with open(path, 'a') as f:"]),
      chunk(["         with open(path, 'w') as f:", "-            f.write(data)", "+            f.write(data + '\\n')"]),
    ]);
    expect(codes(r)).toEqual(["overlapping_hunks"]);
    expect(r.errors[0]!.message).toContain("chunk 1");
  });

  test("End of File: the chunk must be the last lines (an earlier copy is ignored)", () => {
    const lines = ["}", "", "x", "}"];
    const r = locate(lines, [chunk([" x", "-}", "+};"], { eof: true })]);
    expect(r.placements.map((p) => [p.start, p.end])).toEqual([[2, 4]]);
    const bare = locate(lines, [chunk(["-}", "+};"], { eof: true })]);
    expect(bare.placements.map((p) => [p.start, p.end])).toEqual([[3, 4]]);
  });

  test("End of File: found elsewhere but not at the end fails and says where", () => {
    const r = locate(["a", "b", "c", "d"], [chunk([" a", "-b", "+B"], { eof: true })]);
    expect(codes(r)).toEqual(["context_mismatch"]);
    expect(r.errors[0]!.message).toContain("lines 1–2, which is not the end of the file");
    expect(r.errors[0]!.line).toBe(1);
  });

  test("End of File: trailing blank lines of the file are tolerated with a warning", () => {
    const r = locate(["a", "b", "", ""], [chunk([" a", "-b", "+B"], { eof: true })]);
    expect(r.placements.map((p) => [p.start, p.end])).toEqual([[0, 2]]);
    expect(r.warnings[0]!.message).toContain("2 blank lines at the end");
  });

  test("consecutive anchors narrow the search", () => {
    const r = locate(SAMPLE, [chunk(["-        return self.data[path]", "+        return self.data.get(path)"], { anchors: ["class Cache:", "def load(self, path):"] })]);
    expect(r.placements.map((p) => p.start)).toEqual([13]);
    const wrong = locate(SAMPLE, [chunk([" def load(self, path):", "+        # cached"], { anchors: [] })]);
    expect(codes(wrong)).toEqual(["ambiguous_hunk"]);
  });

  test("an anchor picks the first equal line at or after the cursor, then the chunk must be unique after it", () => {
    const c = chunk(["     def load(self, path):", "+        # load"], { anchors: ["class Cache:"] });
    expect(locate(SAMPLE, [c]).placements.map((p) => p.start)).toEqual([12]);
  });

  test("anchor not found: similar lines listed with ids", () => {
    const r = locate(SAMPLE, [chunk(["+x"], { anchors: ["class Stores:"] })]);
    expect(codes(r)).toEqual(["anchor_not_found"]);
    expect(r.errors[0]!.candidates!.map((c) => c.line)).toContain(3);
    expect(r.errors[0]!.message).toContain(`${formatLineId("class Store:", 3)}  class Store:`);
  });

  test("anchor only before the cursor: says so, chunks in file order", () => {
    const r = locate(SAMPLE, [chunk([" def main():", "+    pass"]), chunk(["+    x = 1"], { anchors: ["class Store:"] })]);
    expect(codes(r)).toEqual(["anchor_not_found"]);
    expect(r.errors[0]!.line).toBe(3);
    expect(r.errors[0]!.message).toContain("It is at line 3, before that");
  });

  test("pure insertion goes right after the anchor (not at EOF, Codex #30946)", () => {
    const { out, result } = apply("a\nb\nc\n", [chunk(["+x"], { anchors: ["a"] })]);
    expect(result.placements.map((p) => [p.start, p.end])).toEqual([[1, 1]]);
    expect(out).toBe("a\nx\nb\nc\n");
    expect(result.warnings).toEqual([]);
  });

  test("pure insertion without anchor or context appends at EOF with a warning", () => {
    const { out, result } = apply("a\nb", [chunk(["+x"])]);
    expect(out).toBe("a\nb\nx");
    expect(warningCodes(result)).toEqual(["appended_at_eof"]);
  });

  test("trailing blank context lines are dropped when they do not match", () => {
    const r = locate(["a", "b", "c"], [chunk([" b", "-c", "+C", " ", " "])]);
    expect(r.placements.map((p) => [p.start, p.end, p.body.length])).toEqual([[1, 3, 3]]);
    expect(warningCodes(r)).toEqual(["trailing_blank_context_dropped"]);
    expect(r.warnings[0]!.message).toContain("2 blank context lines");
  });

  test("trailing blank context that does match is kept", () => {
    const r = locate(["a", "b", "", "c"], [chunk([" a", "-b", "+B", " "])]);
    expect(r.placements.map((p) => [p.start, p.end])).toEqual([[0, 3]]);
    expect(r.warnings).toEqual([]);
  });

  test("several failing chunks are all reported, the good ones still placed", () => {
    const r = locate(SAMPLE, [
      chunk([" import nothing", "+x"]),
      chunk(["     def save(self, path, data):", "-        with open(path, 'w') as f:", "+        pass"]),
      chunk([" class Missing:", "+x"], { patchLine: 30 }),
      chunk(["+y"], { anchors: ["def nowhere():"], patchLine: 40 }),
    ]);
    expect(r.errors.map((e) => [e.code, e.hunk, e.patchLine])).toEqual([
      ["context_mismatch", 1, 10],
      ["context_mismatch", 3, 30],
      ["anchor_not_found", 4, 40],
    ]);
    expect(r.placements.map((p) => p.index)).toEqual([2]);
  });
});

describe("indentation deltas", () => {
  const file = ["def f():", "    if a:", "        b()", "    return 1"];
  test("uniform delta in a .py file: applied to + lines", () => {
    const r = locate(file, [chunk([" if a:", "-    b()", "+    c()"])], { path: "a.py", indentationSensitive: true });
    expect(r.placements[0]!.body.at(-1)!.text).toBe("        c()");
  });
  test("uneven delta in a .py file: context_mismatch naming the lines", () => {
    const r = locate(file, [chunk([" if a:", "-      b()", "+      c()"])], { path: "a.py", indentationSensitive: true });
    expect(codes(r)).toEqual(["context_mismatch"]);
    expect(r.errors[0]!.message).toContain("differs unevenly");
    expect(r.errors[0]!.message).toContain("patch line 11 has 6 spaces where file line 3 has 8 spaces");
    expect(r.errors[0]!.closest?.difference).toBe("indentation");
  });
  test("uneven delta elsewhere: + lines as sent, warning", () => {
    const r = locate(file, [chunk([" if a:", "-      b()", "+      c()"])], { path: "a.txt", indentationSensitive: false });
    expect(r.placements[0]!.body.at(-1)!.text).toBe("      c()");
    expect(warningCodes(r)).toEqual(["indentation_not_adjusted", "fuzzy_match"]);
  });
  test("only deletions: no indentation question at all", () => {
    const r = locate(file, [chunk([" if a:", "-      b()"])], { path: "a.py", indentationSensitive: true });
    expect(r.errors).toEqual([]);
    expect(r.placements[0]!.tier).toBe(3);
  });
  test("tabs in the file, none in the chunk: the tab prefix is added", () => {
    const r = locate(["all:", "\tcc -o x x.c"], [chunk([" cc -o x x.c", "+strip x"])], { path: "Makefile", indentationSensitive: true });
    expect(r.placements[0]!.body.at(-1)!.text).toBe("\tstrip x");
  });
});

describe("diagnostics attached by locate", () => {
  test("already applied: the new side is found, the old side is not", () => {
    const r = locate(SAMPLE, [chunk(["     def save(self, path, data):", "-        with open(path, 'x') as f:", "+        with open(path, 'w') as f:"])]);
    expect(codes(r)).toEqual(["context_mismatch"]);
    expect(r.errors[0]!.alreadyAppliedAt).toBe(8);
    expect(r.errors[0]!.message).toContain("already applied");
    expect(r.errors[0]!.message).toContain("do not resend this chunk");
  });

  test("closest region of a realistic near-miss", () => {
    const r = locate(SAMPLE, [chunk(["     def save(self, path, data):", "         with open(path, 'wb') as f:", "-            f.write(data)", "+            f.write(data.encode())"])]);
    const e = r.errors[0]!;
    expect(e.code).toBe("context_mismatch");
    expect(e.closest).toMatchObject({ startLine: 8, endLine: 10, difference: "content" });
    expect(e.closest!.score).toBeCloseTo(0.67, 2);
    expect(e.closest!.diff).toContain("-         with open(path, 'wb') as f:");
    expect(e.closest!.diff).toContain("+         with open(path, 'w') as f:");
    expect(e.line).toBe(8);
    expect(e.message).toContain(`${formatLineId("        with open(path, 'w') as f:", 9)}`);
    expect(e.message).toContain("Next step:");
  });
});

// A naive reference of SPEC §5.1 for tiers 1–4 without anchors, EOF or the
// leniencies: try every position at every tier. The engine must agree with
// it on every random input.
function reference(lines: readonly string[], chunks: readonly Chunk[], maxTier: number): string[] {
  const key = (s: string, t: number): string => (t === 1 ? s : t === 2 ? s.trimEnd() : t === 3 ? s.trim() : s.trim());
  const out: string[] = [];
  let cursor = 0;
  const placed: [number, number][] = [];
  for (const c of chunks) {
    let from = cursor;
    let anchored = true;
    for (const anchor of c.anchors) {
      // Anchors always match at least up to tier 3.
      let found = -1;
      for (let t = 1; t <= Math.max(3, maxTier) && found < 0; t++) {
        for (let s = from; s < lines.length && found < 0; s++) if (key(lines[s]!, t) === key(anchor, t)) found = s;
      }
      if (found < 0) anchored = false;
      else from = found + 1;
      if (!anchored) break;
    }
    if (!anchored) {
      out.push("anchor_not_found");
      continue;
    }
    const old = c.lines.filter((l) => l.kind !== "insert").map((l) => l.text);
    const find = (from: number, to: number): { tier: number; at: number[] } | undefined => {
      for (let t = 1; t <= maxTier; t++) {
        const at: number[] = [];
        for (let s = from; s < to && s + old.length <= lines.length; s++) {
          if (old.every((o, k) => key(o, t) === key(lines[s + k]!, t))) at.push(s);
        }
        if (at.length > 0) return { tier: t, at };
      }
      return undefined;
    };
    const hit = find(from, lines.length + 1);
    if (hit && hit.at.length === 1) {
      out.push(`ok ${hit.at[0]} ${hit.tier}`);
      placed.push([hit.at[0]!, hit.at[0]! + old.length]);
      cursor = hit.at[0]! + old.length;
    } else if (hit) out.push("ambiguous_hunk");
    else {
      const before = find(0, from);
      if (!before) out.push("context_mismatch");
      else if (before.at.length > 1) out.push("out_of_order_hunk");
      else {
        const s = before.at[0]!;
        // Found only between the previous chunk and the chunk's own anchor: the anchor is after the change.
        const afterChange = c.anchors.length > 0 && s >= cursor;
        out.push(placed.some(([a, b]) => s < b && a < s + old.length) ? "overlapping_hunks" : afterChange ? "anchor_after_change" : "out_of_order_hunk");
      }
    }
  }
  return out;
}

describe("agrees with a naive reference on random inputs", () => {
  test("600 random files and patches (all modes, anchors)", () => {
    let seed = 7;
    const rand = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const vocabulary = ["a", "b", "c", "}", "", "  a", "a  ", " b ", "\tc"];
    const tally = new Map<string, number>();
    for (let round = 0; round < 600; round++) {
      const lines = Array.from({ length: 1 + rand(30) }, () => vocabulary[rand(vocabulary.length)]!);
      const chunks: Chunk[] = [];
      for (let k = 0; k < 1 + rand(3); k++) {
        const len = 1 + rand(4);
        const start = rand(lines.length);
        const body = lines.slice(start, start + len).map((l) => (rand(5) === 0 ? vocabulary[rand(vocabulary.length)]! : l));
        // Keep the leniencies out: no trailing blank context, a change at the end.
        const marked = body.map((l, i) => (i === body.length - 1 ? "-" : " ") + l);
        const anchors = rand(3) === 0 ? [rand(2) === 0 ? lines[rand(lines.length)]! : vocabulary[rand(vocabulary.length)]!] : [];
        chunks.push(chunk([...marked, "+new"], { patchLine: 10 * (k + 1), anchors }));
      }
      const matching = (["exact", "whitespace", "lenient"] as const)[rand(3)]!;
      const r = locate(lines, chunks, { matching });
      const got = chunks.map((_, k) => {
        const p = r.placements.find((x) => x.index === k + 1);
        if (p) return `ok ${p.start} ${p.tier}`;
        return r.errors.find((e) => e.hunk === k + 1)?.code ?? "missing";
      });
      const want = reference(lines, chunks, matching === "exact" ? 1 : matching === "whitespace" ? 3 : 4);
      for (const w of want) {
        const kind = w.startsWith("ok") ? `ok${w.split(" ")[2]}` : w;
        tally.set(kind, (tally.get(kind) ?? 0) + 1);
      }
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        throw new Error(`round ${round}: ${JSON.stringify({ lines, chunks: chunks.map((c) => c.lines.map((l) => l.kind[0] + l.text)), matching, got, want })}`);
      }
    }
    // The inputs must exercise every outcome, or the comparison proves little.
    expect([...tally.keys()].sort()).toEqual(
      ["ambiguous_hunk", "anchor_after_change", "anchor_not_found", "context_mismatch", "ok1", "ok2", "ok3", "out_of_order_hunk", "overlapping_hunks"],
    );
  });
});

describe("bounded work on adversarial inputs (counted, not timed)", () => {
  const total = (s: MatchStats): number =>
    s.linesScanned + s.linesKeyed + s.candidatesVerified + s.idComparisons + s.scanSteps + s.scanReports + s.votes + s.lcsCells + s.diagnosticLines + s.similarSetup +
    s.textProbes;
  const run = (lines: string[], chunks: Chunk[]): { stats: MatchStats; result: LocateResult } => {
    const stats = newMatchStats();
    const file = fileOf(lines.join("\n") + "\n");
    const result = locateChunks(file, chunks, options({ stats }));
    return { stats, result };
  };
  const braces = (n: number): string[] => new Array<string>(n).fill("}");
  const everywhere = chunk([...new Array<string>(50).fill(" }"), "-}", "+};", ...new Array<string>(49).fill(" }")]);
  const nearMiss = chunk([...new Array<string>(99).fill(" }"), "-    return done;", "+    return finished;"]);
  // Every 50th line is the odd one: the rarest line of the chunk occurs n/50
  // times and each candidate nearly matches (the worst case for verifying).
  const periodic = (n: number): string[] => Array.from({ length: n }, (_, i) => (i % 50 === 49 ? "odd();" : "}"));
  const periodicChunk = chunk([...new Array<string>(99).fill(" }"), "-odd();", "+even();"]);
  const alternating = (n: number): string[] => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? "a" : "b"));
  const alternatingChunk = chunk([...Array.from({ length: 99 }, (_, i) => (i % 2 === 0 ? " a" : " b")), "-a"]);

  const cases: { name: string; lines: (n: number) => string[]; chunks: Chunk[]; code: FailureCode; perLine: number }[] = [
    { name: "200k-style `}` file, 100-line chunk of `}`", lines: braces, chunks: [everywhere], code: "ambiguous_hunk", perLine: 2 },
    { name: "`}` file, 99 `}` and one absent line", lines: braces, chunks: [nearMiss], code: "context_mismatch", perLine: 2 },
    { name: "odd line every 50th: every candidate nearly matches", lines: periodic, chunks: [periodicChunk], code: "context_mismatch", perLine: 7 },
    // Every line there passes the prefilter at each of the four tiers, and
    // each pass is one in-place comparison (linesKeyed counts them all).
    { name: "alternating lines, chunk fails on its last line", lines: alternating, chunks: [alternatingChunk], code: "context_mismatch", perLine: 13 },
  ];
  for (const c of cases) {
    test(`${c.name}: linear work, and doubling the file at most doubles it`, () => {
      const small = run(c.lines(20_000), c.chunks);
      const large = run(c.lines(40_000), c.chunks);
      expect(small.result.errors.map((e) => e.code)).toEqual([c.code]);
      expect(large.result.errors.map((e) => e.code)).toEqual([c.code]);
      expect(total(small.stats)).toBeLessThanOrEqual(c.perLine * 20_000);
      expect(total(large.stats)).toBeLessThanOrEqual(c.perLine * 40_000);
      expect(total(large.stats)).toBeLessThanOrEqual(2.2 * total(small.stats));
      // Never more than one pass per tier group (tier 1; tiers 2–4).
      expect(large.stats.indexBuilds).toBeLessThanOrEqual(2);
    });
  }

  test("a near miss whose odd line is nowhere in the text costs one pass (a substring probe rules out tiers 2–4)", () => {
    const { stats } = run(braces(40_000), [nearMiss]);
    expect(stats.indexBuilds).toBe(1);
    expect(stats.textProbes).toBeGreaterThan(0);
  });

  test("ambiguous everywhere stops after 21 matches", () => {
    const { stats } = run(braces(40_000), [everywhere]);
    expect(stats.scanSteps + stats.scanReports + stats.idComparisons).toBeLessThan(1_000);
  });

  test("100 chunks on a 20k-line file: one pass, a handful of candidates each", () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => (i % 7 === 0 ? "}" : i % 11 === 0 ? "" : `  call(${i});`));
    const chunks = Array.from({ length: 100 }, (_, k) => {
      const at = 150 + k * 190;
      return chunk([` ${lines[at]}`, ` ${lines[at + 1]}`, `-${lines[at + 2]}`, `+  changed(${k});`], { patchLine: 10 + 5 * k });
    });
    const { stats, result } = run(lines, chunks);
    expect(result.errors).toEqual([]);
    expect(result.placements.length).toBe(100);
    expect(stats.indexBuilds).toBe(1);
    expect(stats.candidatesVerified).toBeLessThanOrEqual(200);
    expect(stats.idComparisons).toBeLessThanOrEqual(1_000);
    expect(stats.scanPasses).toBe(0);
  });
});
