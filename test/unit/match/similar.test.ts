/**
 * Closest lines for any chunk size and for anchors (issue 15 item 1, SPEC
 * §5.4 round 2): a one- or two-line chunk whose lines are in the file only
 * with a typo, and an `@@` anchor that differs by a word, get the similar
 * lines — found by one bounded similarity pass over the file for all of
 * them together (counted, not timed).
 */
import { describe, expect, test } from "bun:test";
import { locateChunks } from "../../../lib/match/locate.ts";
import { dice, SIMILAR_CHAR_BUDGET, SimilarLines, similarityWindows, trigramsOf } from "../../../lib/match/similar.ts";
import { newMatchStats } from "../../../lib/match/tier_index.ts";
import { flatLinesOf } from "../../../lib/match/tier_pass.ts";
import { parsePatch } from "../../../lib/patch/parse.ts";
import { planPatch } from "../../../lib/plan/plan.ts";
import { decodeText } from "../../../lib/text/text.ts";
import { formatLineId } from "../../../lib/text/line_id.ts";
import type { Chunk, PatchFailure } from "../../../lib/types.ts";
import { chunk, options } from "./chunk_builder.ts";
import { createHash } from "node:crypto";

const NGINX = [
  "server {",
  "    listen 80;",
  "    server_name example.com;",
  "    root /var/www/html;",
  "",
  "    location / {",
  "        try_files $uri $uri/ =404;",
  "    }",
  "}",
];

const TAX = [
  "import math",
  "",
  "TAX_RATE = 0.2",
  "",
  "def total_for_vendor(vendor, items):",
  "    subtotal = sum(item.price for item in items)",
  "    return math.ceil(subtotal * (1 + TAX_RATE))",
  "",
  "def main():",
  "    print(total_for_vendor(None, []))",
];

function only(lines: readonly string[], chunks: Chunk[], path: string): PatchFailure {
  const r = locateChunks(lines, chunks, options({ path }));
  expect(r.errors).toHaveLength(1);
  return r.errors[0]!;
}

describe("a chunk whose lines are in the file only with a typo gets its closest lines", () => {
  test("one line: `listen 8080;` where the file has `listen 80;`", () => {
    const e = only(NGINX, [chunk(["-    listen 8080;", "+    listen 8443;"])], "nginx.conf");
    expect(e.code).toBe("context_mismatch");
    expect(e.closest).toMatchObject({ startLine: 2, endLine: 2, difference: "content" });
    expect(e.closest!.score).toBeGreaterThan(0.8);
    expect(e.closest!.lines).toEqual([{ line: 2, id: formatLineId("    listen 80;", 2), text: "    listen 80;" }]);
    expect(e.closest!.diff.split("\n")).toEqual(["-     listen 8080;", "+     listen 80;"]);
    expect(e.message).not.toContain("Nothing similar");
    expect(e.message).toContain(`${formatLineId("    listen 80;", 2)}      listen 80;`);
  });

  test("one line: `TAX_RATES` where the file has `TAX_RATE`", () => {
    const e = only(TAX, [chunk(["-TAX_RATES = 0.2", "+TAX_RATES = 0.25"])], "tax.py");
    expect(e.closest).toMatchObject({ startLine: 3, endLine: 3, difference: "content" });
    expect(e.closest!.diff.split("\n")).toEqual(["- TAX_RATES = 0.2", "+ TAX_RATE = 0.2"]);
  });

  test("two lines, both with a typo: the region and a diff of both", () => {
    const e = only(TAX, [chunk([
      "     subtotal = sum(item.price for item in itmes)",
      "-    return math.ceil(subtotal * (1 + TAX_RATES))",
      "+    return math.floor(subtotal * (1 + TAX_RATE))",
    ])], "tax.py");
    expect(e.closest).toMatchObject({ startLine: 6, endLine: 7, difference: "content" });
    expect(e.closest!.diff).toContain("+     return math.ceil(subtotal * (1 + TAX_RATE))");
  });

  test("the same through planPatch (a decoded file, lines never split)", () => {
    const text = NGINX.join("\n") + "\n";
    const bytes = new TextEncoder().encode(text);
    const parsed = parsePatch("*** Begin Patch\n*** Update File: nginx.conf\n@@\n-    listen 8080;\n+    listen 8443;\n*** End Patch");
    if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    const r = planPatch(parsed.patch, new Map([["nginx.conf", { path: "nginx.conf", kind: "file" as const, bytes, sha256, size: bytes.length, mode: 0o644, nlink: 1 }]]));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]!.closest?.startLine).toBe(2);
  });

  test("nothing similar anywhere still says so", () => {
    const e = only(NGINX, [chunk(["-completely unrelated words", "+x"])], "nginx.conf");
    expect(e.closest).toBeUndefined();
    expect(e.message).toContain("Nothing similar was found");
  });
});

describe("an anchor that differs by a word lists the similar lines", () => {
  test("`def total_for_supplier(supplier, items):` → `def total_for_vendor(vendor, items):`", () => {
    const e = only(TAX, [chunk(["     subtotal = sum(item.price for item in items)", "+    # audited"], { anchors: ["def total_for_supplier(supplier, items):"] })], "tax.py");
    expect(e.code).toBe("anchor_not_found");
    expect(e.candidates!.map((c) => c.text)[0]).toBe("def total_for_vendor(vendor, items):");
    expect(e.line).toBe(5);
    expect(e.message).toContain(`${formatLineId(TAX[4]!, 5)}  def total_for_vendor(vendor, items):`);
  });

  test("an anchor with a swapped letter", () => {
    const e = only(TAX, [chunk(["+x"], { anchors: ["def mian():"] })], "tax.py");
    expect(e.candidates![0]!.text).toBe("def main():");
  });
});

describe("the similarity pass", () => {
  test("trigrams ignore whitespace and case; Dice of sets", () => {
    expect(dice(trigramsOf("f( a, b )", 0, 9), trigramsOf("F(a,b)", 0, 6))).toBe(1);
    expect(dice(trigramsOf("listen 8080;", 0, 12), trigramsOf("listen 80;", 0, 10))).toBeCloseTo(0.875, 3);
    expect(dice(trigramsOf("ab", 0, 2), trigramsOf("ab", 0, 2))).toBe(0);
  });

  test("best lines by similarity, ties to the earlier line", () => {
    const lines = ["alpha beta", "alpha betb", "gamma", "alpha beta"];
    const s = new SimilarLines(flatLinesOf(lines), ["alpha beta"], newMatchStats());
    expect(s.best(0, 3, 0.5).map((x) => x.line)).toEqual([0, 3, 1]);
  });

  test("200 anchors found nowhere in a 20,000-line file: one pass for all (counted)", () => {
    const lines: string[] = [];
    for (let f = 0; f < 2000; f++) {
      lines.push(`function handler${f}(request) {`, `  const id = request.id + ${f};`, "  if (!id) return null;", `  return lookup(id, ${f});`, "}");
      for (let k = 0; k < 5; k++) lines.push(`  // filler ${f} ${k}`);
    }
    const decoded = decodeText(new TextEncoder().encode(lines.join("\n") + "\n"));
    if (!decoded.ok) throw new Error("not text");
    const chunks = Array.from({ length: 200 }, (_, k) => chunk(["+x"], { anchors: [`function hnadler${k * 10}(request) {`], patchLine: 10 + 3 * k }));
    const stats = newMatchStats();
    const r = locateChunks(decoded.file, chunks, { ...options(), stats });
    expect(r.errors.map((e) => e.code)).toEqual(new Array(200).fill("anchor_not_found"));
    expect(r.errors[7]!.candidates![0]!.text).toBe("function handler70(request) {");
    // Every line read once by the similarity pass, whatever the number of anchors.
    expect(stats.diagnosticLines).toBeLessThanOrEqual(lines.length + 1000);
  });

  test("anchors spread over a file past the budget: one stretch per anchor, the trigram tables built once (counted)", () => {
    const setup = (functions: number, anchors: number): { setup: number; queryChars: number } => {
      const lines: string[] = [];
      for (let f = 0; f < functions; f++) {
        lines.push(`function handler${f}(request) {`, `  const id = request.id + ${f};`, "  if (!id) return null;", `  return lookup(id, ${f});`, "}");
        for (let k = 0; k < 5; k++) lines.push(`  // filler ${f} ${k}`);
      }
      const decoded = decodeText(new TextEncoder().encode(lines.join("\n") + "\n"));
      if (!decoded.ok) throw new Error("not text");
      // Each anchor's search starts after the previous chunk, which matched: as many stretches as anchors.
      const step = Math.floor(functions / anchors);
      const chunks = Array.from({ length: anchors }, (_, k) => [
        chunk([`  if (!id) return null;`, `- return lookup(id, ${k * step});`, `+ return lookup(id, ${k * step}) ?? 0;`], { anchors: [`function handler${k * step}(request) {`], patchLine: 10 + 8 * k }),
        chunk(["+x"], { anchors: [`function hnadler${k * step + 1}(request) {`], patchLine: 14 + 8 * k }),
      ]).flat();
      const stats = newMatchStats();
      const r = locateChunks(decoded.file, chunks, { ...options(), stats });
      expect(r.errors.map((e) => e.code)).toEqual(new Array(anchors).fill("anchor_not_found"));
      return { setup: stats.similarSetup, queryChars: chunks.reduce((n, c) => n + (c.anchors[0]!.length - 2), 0) / 2 };
    };
    const small = setup(12_000, 100);
    const large = setup(24_000, 200);
    for (const r of [small, large]) {
      // At most 8 table entries per query trigram (a power-of-two table at most half full, two words an entry):
      // once per pass, not once per stretch read (100–200 stretches here).
      expect(r.setup).toBeLessThanOrEqual(8 * r.queryChars);
    }
    expect(large.setup / small.setup).toBeLessThanOrEqual(2.2);
  });

  test("with a budget of detailed failures, anchors past it cost no similarity search at all", () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `line number ${i}`);
    const chunks = Array.from({ length: 50 }, (_, k) => chunk(["+x"], { anchors: [`lnie number ${k}`], patchLine: 10 + 3 * k }));
    const stats = newMatchStats();
    const r = locateChunks(lines, chunks, { ...options(), stats, detail: 20 });
    expect(r.errors).toHaveLength(20);
    expect(r.undiagnosed).toHaveLength(30);
    expect(r.undiagnosed.every((e) => e.code === "anchor_not_found" && e.candidates === undefined)).toBe(true);
    expect(stats.diagnosticLines).toBeLessThanOrEqual(lines.length);
  });

  test("windows: the whole file within the budget, else a share per search start, merged, within the budget", () => {
    const flat = flatLinesOf(Array.from({ length: 1000 }, (_, i) => `line ${String(i).padStart(4, "0")}`)); // 10 characters a line
    expect(similarityWindows(flat, [500], 20_000)).toEqual([{ from: 0, to: 1000 }]);
    // 1000 characters: 100 lines, an eighth of them before the start.
    expect(similarityWindows(flat, [500], 1000)).toEqual([{ from: 488, to: 588 }]);
    // Near the end: moved back so the share is used.
    expect(similarityWindows(flat, [995], 1000)).toEqual([{ from: 900, to: 1000 }]);
    // Two starts: half each; close ones merge.
    expect(similarityWindows(flat, [100, 700], 1000)).toEqual([{ from: 94, to: 144 }, { from: 694, to: 744 }]);
    expect(similarityWindows(flat, [100, 120], 1000)).toEqual([{ from: 94, to: 164 }]);
  });

  test("anchors found nowhere in a file past the budget: the pass reads a bounded stretch whatever the file size, and says so (counted)", () => {
    const read = (functions: number): { lines: number; chars: number; scanned: number; message: string; candidates: string[] } => {
      const lines: string[] = [];
      for (let f = 0; f < functions; f++) {
        lines.push(`function handler${f}(request) {`, `  const id = request.id + ${f};`, "  if (!id) return null;", `  return lookup(id, ${f});`, "}");
        for (let k = 0; k < 5; k++) lines.push(`  // filler ${f} ${k}`);
      }
      const decoded = decodeText(new TextEncoder().encode(lines.join("\n") + "\n"));
      if (!decoded.ok) throw new Error("not text");
      const chunks = Array.from({ length: 50 }, (_, k) => chunk(["+x"], { anchors: [`function hnadler${k * 10}(request) {`], patchLine: 10 + 3 * k }));
      const stats = newMatchStats();
      const r = locateChunks(decoded.file, chunks, { ...options(), stats, detail: 20 });
      expect(r.errors.map((e) => e.code)).toEqual(new Array(20).fill("anchor_not_found"));
      return { lines: lines.length, chars: decoded.file.text.length, scanned: stats.diagnosticLines, message: r.errors[3]!.message, candidates: r.errors[3]!.candidates!.map((c) => c.text) };
    };
    const small = read(12_000); // 120,000 lines, 2.6 M characters
    const large = read(24_000);
    expect(small.chars).toBeGreaterThan(SIMILAR_CHAR_BUDGET);
    for (const r of [small, large]) {
      // Every anchor's search started at line 1: one stretch from there, about the budget's worth of lines.
      expect(r.scanned).toBeLessThan(r.lines);
      expect(r.scanned * (r.chars / r.lines)).toBeLessThanOrEqual(SIMILAR_CHAR_BUDGET * 1.05);
      expect(r.message).toContain(`Lines that look similar (the similarity search stopped at its budget and read only lines 1–${r.scanned} of ${r.lines}):`);
      // Within the stretch read, the right line is still found.
      expect(r.candidates[0]).toBe("function handler30(request) {");
    }
    // Doubling the file does not change what the pass reads.
    expect(large.scanned).toBe(small.scanned);
  });
});

