import { describe, expect, test } from "bun:test";
import { formatLineId } from "../../../lib/text/line_id.ts";
import { type LocateOptions, locateChunks } from "../../../lib/match/locate.ts";
import type { Chunk, PatchFailure } from "../../../lib/types.ts";
import { chunk, options } from "./chunk_builder.ts";

function failureOf(lines: readonly string[], chunks: Chunk[], overrides: Partial<LocateOptions> = {}): PatchFailure {
  const r = locateChunks(lines, chunks, options(overrides));
  expect(r.errors.length).toBe(1);
  return r.errors[0]!;
}

/** Realistic code: 300 functions, each with a distinct name and body. */
function codeFile(): string[] {
  const lines: string[] = [];
  for (let f = 0; f < 300; f++) {
    lines.push(`export function handler${f}(request: Request): Response {`);
    lines.push(`  const id = request.params.get("id${f}");`);
    lines.push(`  if (!id) return notFound(${f});`);
    lines.push(`  return json({ id, index: ${f} });`);
    lines.push("}");
    lines.push("");
  }
  return lines;
}

describe("context_mismatch: closest region, diff and difference kind", () => {
  const lines = codeFile();

  test("one changed line: region, score, ids and the two versions in the diff", () => {
    const e = failureOf(lines, [chunk([
      " export function handler120(request: Request): Response {",
      '   const id = request.params.get("ident120");',
      "-  if (!id) return notFound(120);",
      "+  if (!id) return badRequest(120);",
    ])]);
    expect(e.code).toBe("context_mismatch");
    expect(e.closest).toMatchObject({ startLine: 721, endLine: 723, difference: "content" });
    expect(e.closest!.score).toBeCloseTo(0.67, 2);
    expect(e.closest!.lines.map((l) => l.id)).toEqual([721, 722, 723].map((n) => formatLineId(lines[n - 1]!, n)));
    expect(e.closest!.diff.split("\n")).toEqual([
      "  export function handler120(request: Request): Response {",
      '-   const id = request.params.get("ident120");',
      '+   const id = request.params.get("id120");',
      "    if (!id) return notFound(120);",
    ]);
    expect(e.message.startsWith("context_mismatch: chunk 1 of src/file.ts (patch line 10)")).toBe(true);
    expect(e.message).toContain(`${formatLineId(lines[721]!, 722)}    const id = request.params.get("id120");`);
    expect(e.message).toMatch(/Next step: .*read lines 711–733 of src\/file\.ts again/);
    expect(e.hints).toContainEqual({ kind: "read", path: "src/file.ts", startLine: 711, endLine: 733, says: "read lines 711–733 of src/file.ts again" });
  });

  test("internal whitespace only: difference 'whitespace', lines quoted so spaces show", () => {
    const e = failureOf(lines, [chunk([
      "   const id = request.params.get( \"id7\" );",
      "-  if (!id) return notFound(7);",
    ])]);
    expect(e.closest!.difference).toBe("whitespace");
    expect(e.closest!.score).toBe(1);
    expect(e.closest!.diff).toContain(`- "  const id = request.params.get( \\"id7\\" );"`);
    expect(e.message).toContain("including their whitespace");
  });

  test("indentation only, in exact mode: difference 'indentation'", () => {
    const e = failureOf(lines, [chunk(["     if (!id) return notFound(9);", "-    return json({ id, index: 9 });"])], { matching: "exact" });
    expect(e.closest!.difference).toBe("indentation");
    expect(e.message).toContain('or apply with matching: "whitespace"');
    expect(e.hints).toContainEqual({ kind: "option", option: "matching", value: "whitespace", says: 'matching: "whitespace"' });
  });

  test("trailing whitespace only, in exact mode: difference 'whitespace'", () => {
    const e = failureOf(lines, [chunk(["   if (!id) return notFound(9);  ", "-  return json({ id, index: 9 });"])], { matching: "exact" });
    expect(e.closest!.difference).toBe("whitespace");
  });

  test("a line missing from the chunk: the file's extra line shows as +", () => {
    const e = failureOf(lines, [chunk([
      " export function handler42(request: Request): Response {",
      "   if (!id) return notFound(42);",
      "-  return json({ id, index: 42 });",
    ])]);
    expect(e.closest).toMatchObject({ startLine: 253, endLine: 256, difference: "content", score: 1 });
    expect(e.closest!.diff).toContain('+   const id = request.params.get("id42");');
  });

  test("nothing similar: the expected lines are listed, and the next step is to re-read", () => {
    const e = failureOf(lines, [chunk([" completely different", "-text here"])]);
    expect(e.closest).toBeUndefined();
    expect(e.message).toContain("Nothing similar was found");
    expect(e.message).toContain("  completely different\n  text here");
    expect(e.message).toContain("Next step: read src/file.ts again");
  });

  // Issue 32.6: chunks whose lines are all under three characters ask the
  // similarity pass nothing; it read no line, so no budget was hit and the
  // message must not claim one ("…read only lines  of 4").
  for (const [name, file, body] of [
    ["a 4-line file, one short line", ["alpha beta", "gamma", "delta", "epsilon"], ["-xy", "+z"]],
    ["a 4-line file, short context and delete", ["alpha beta", "gamma", "delta", "epsilon"], [" {", "-}", "+ }"]],
    ["a large file, short lines", codeFile(), ["-q", "+r"]],
  ] as const) {
    test(`no similarity query: no budget claimed (${name})`, () => {
      const e = failureOf(file, [chunk(body)]);
      expect(e.code).toBe("context_mismatch");
      expect(e.message).not.toContain("budget");
      expect(e.message).not.toMatch(/lines? {2}/);
    });
  }

  // Issue 29.4: a short file that matches nothing similar is shown whole.
  const small = ["[server]", "host = example.org", "port = 8080", "debug = false"];
  test("nothing similar in a file of at most 40 lines: the whole file with line ids, no re-read", () => {
    const e = failureOf(small, [chunk([" completely different", "-text here"])]);
    expect(e.message).toContain("Nothing similar was found");
    expect(e.message).toContain(`The whole file (4 lines), with line ids:\n${small.map((t, i) => `  ${formatLineId(t, i + 1)}  ${t}`).join("\n")}`);
    expect(e.message).toContain("Next step: rebuild the chunk from the file's lines above");
    expect(e.message).not.toContain("read src/file.ts again");
    expect(e.hints).toBeUndefined();
  });
  test("exactly 40 lines: shown whole; 41: not, the step is to re-read", () => {
    const forty = Array.from({ length: 40 }, (_, i) => `entry_${i} = ${i * 7}`);
    expect(failureOf(forty, [chunk(["-completely different text"])]).message).toContain("The whole file (40 lines), with line ids:");
    const more = failureOf([...forty, "entry_40 = 280"], [chunk(["-completely different text"])]);
    expect(more.message).not.toContain("The whole file");
    expect(more.message).toContain("Next step: read src/file.ts again");
  });
  test("an empty file says so", () => {
    const e = failureOf([], [chunk(["-completely different text", "+x"])]);
    expect(e.message).toContain("The file is empty (0 lines).");
  });
  test("a short file of long lines: bounded by the excerpt's bytes, the rest counted, the step is to re-read", () => {
    const wide = Array.from({ length: 40 }, (_, i) => `${i}:` + "w".repeat(200));
    const e = failureOf(wide, [chunk(["-completely different text"])]);
    expect(e.message).toContain("The whole file (40 lines), with line ids:");
    expect(e.message).toMatch(/… \(\d+ more lines, past the excerpt's 4096 bytes\)/);
    expect(e.message).toContain("Next step: read src/file.ts again");
    expect(e.message.length).toBeLessThan(6000);
  });
  test("a short file with a line too long to show: cut, so the step is to re-read", () => {
    const e = failureOf(["short", "x".repeat(5000)], [chunk(["-completely different text"])]);
    expect(e.message).toContain("The whole file (2 lines; long lines cut), with line ids:");
    expect(e.message).toContain("Next step: read src/file.ts again");
    expect(e.message.length).toBeLessThan(2000);
  });

  test("the closest region before the search start is flagged", () => {
    const e = locateChunks(lines, [
      chunk(["   return json({ id, index: 200 });", "+  // 200"]),
      chunk(["   if (!id) return notFound(3);", "-  return json({ id, index: 3, extra });"], { patchLine: 30 }),
    ], options()).errors[0]!;
    expect(e.hunk).toBe(2);
    expect(e.closest!.startLine).toBe(21);
    expect(e.message).toContain("lies before line 1205, where this chunk's search started (after chunk 1 (line 1204))");
  });

  test("End of File chunk that is not at the end", () => {
    const e = failureOf(["a", "b", "c"], [chunk([" x", "-y"], { eof: true })]);
    expect(e.message).toContain("marked *** End of File, so these lines must be the last 2 of the file, which has 3 lines");
  });
});

describe("already applied", () => {
  test("found at a fuzzy tier: still reported, naming how it matched", () => {
    const e = failureOf(["a", "B  ", "c"], [chunk([" a", "-b", "+B", " c"])]);
    expect(e.alreadyAppliedAt).toBe(1);
    expect(e.message).toContain("ignoring trailing whitespace");
    expect(e.message).toContain(`${formatLineId("B  ", 2)}  B  `);
  });
  test("new side found twice: not claimed", () => {
    const e = failureOf(["a", "B", "a", "B"], [chunk([" a", "-b", "+B"])]);
    expect(e.alreadyAppliedAt).toBeUndefined();
  });
  test("a pure deletion whose lines are gone: applied when its context is unique", () => {
    const e = failureOf(["start", "end"], [chunk([" start", "-middle", " end"])]);
    expect(e.alreadyAppliedAt).toBe(1);
  });
});

describe("ambiguous_hunk advice", () => {
  const lines = [
    "function a() {", "  init();", "  return 1;", "}",
    "function b() {", "  setup();", "  return 1;", "}",
    "function c() {", "  init();", "  return 1;", "}",
  ];
  test("distinguishing lines above each match, and an anchor for the last", () => {
    const e = failureOf(lines, [chunk(["-  return 1;", "+  return 2;"])]);
    expect(e.code).toBe("ambiguous_hunk");
    expect(e.candidates!.map((c) => c.line)).toEqual([3, 7, 11]);
    expect(e.message).toContain(`to select the match at line 7, add the line above it as context: ${formatLineId("  setup();", 6)}    setup();`);
    expect(e.message).toContain(`to select the match at line 3, add the line above it as context (with the 1 line between): ${formatLineId("function a() {", 1)}  function a() {`);
    expect(e.message).toContain('to select the last match (line 11), start the chunk with "@@ function c() {" (line 9)');
  });
  test("the suggested anchor really selects the last match", () => {
    const r = locateChunks(lines, [chunk(["-  return 1;", "+  return 2;"], { anchors: ["function c() {"] })], options());
    expect(r.placements.map((p) => p.start)).toEqual([10]);
  });
});

describe("anchor_not_found", () => {
  test("at most five similar lines, closest first", () => {
    const lines = Array.from({ length: 50 }, (_, i) => `def process_item_${i}(self, value):`);
    const e = failureOf(lines, [chunk(["+x"], { anchors: ["def process_item(self, value):"] })]);
    expect(e.candidates!.length).toBe(5);
    expect(e.message).toContain("Lines that look similar:");
  });
  test("nothing similar", () => {
    const e = failureOf(["a", "b"], [chunk(["+x"], { anchors: ["zzz_qqq"] })]);
    expect(e.candidates).toEqual([]);
    expect(e.message).toContain("No similar line was found");
  });
});

describe("every excerpt is bounded", () => {
  test("a 300-line near miss with 5000-character lines stays within the limits", () => {
    const long = "x".repeat(5000);
    const lines = Array.from({ length: 2000 }, (_, i) => `${long} ${i}`);
    const body = lines.slice(500, 800).map((l, i) => (i % 50 === 7 ? ` ${l} changed` : ` ${l}`));
    const e = failureOf(lines, [chunk([...body, "+new"])], { excerptLines: 10, excerptBytes: 2048 });
    expect(e.closest!.lines.length).toBeLessThanOrEqual(10);
    expect(e.closest!.lines.every((l) => l.text.length <= 240 && l.text.endsWith("…"))).toBe(true);
    expect(e.closest!.diff.split("\n").length).toBeLessThanOrEqual(11);
    expect(e.message.length).toBeLessThan(8 * 2048);
  });
  test("ambiguous candidates are bounded by the byte limit in the message", () => {
    const line = "y".repeat(300);
    const lines = Array.from({ length: 100 }, () => line);
    const e = failureOf(lines, [chunk([`-${line}`])], { excerptBytes: 1024 });
    expect(e.candidates!.length).toBe(20);
    expect(e.message.length).toBeLessThan(4 * 1024);
    expect(e.message).toMatch(/… \(\d+ more lines\)/);
  });
});

describe("a chunk far longer than the file", () => {
  // Fuzzing found it: the alignment's band of diagonals was empty when the
  // window (the whole 5-line file) was shorter than the chunk by more than
  // the band, and the failure became a RangeError thrown out of the pure core.
  test("fails with a value (no close region: 5 of its 100 lines are there)", () => {
    const file = ["alpha one", "beta two", "gamma three", "delta four", "epsilon five"];
    const old = [...Array.from({ length: 95 }, (_, i) => `other line ${i}`), ...file];
    const e = failureOf(file, [chunk(old.map((l) => " " + l))]);
    expect(e.code).toBe("context_mismatch");
    expect(e.closest).toBeUndefined();
  });
});
