/**
 * renderTextPieces and planPatch's `pieces`: the recorded stretches rebuild
 * the new content from the old bytes byte for byte, for random files
 * (LF, CRLF, lone CR and mixed endings, BOM, no final newline, non-ASCII
 * text, empty files) and random edits; fresh ranges follow each other in
 * the output, source ranges ascend inside the old file, neighbours of one
 * kind are merged.
 */
import { describe, expect, test } from "bun:test";
import { parsePatch } from "../../../lib/patch/parse.ts";
import { planPatch } from "../../../lib/plan/plan.ts";
import { sha256Hex } from "../../../lib/text/sha256.ts";
import { decodeText, renderText, renderTextPieces } from "../../../lib/text/text.ts";
import type { ContentPiece, FileSnapshot, LineEdit, OutputLine } from "../../../lib/types.ts";

const enc = new TextEncoder();

/** mulberry32: a small seeded generator, so a failure names its seed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Rebuild new bytes from pieces, checking their shape; returns the rebuilt bytes. */
function rebuild(old: Uint8Array, produced: Uint8Array, pieces: readonly ContentPiece[]): Uint8Array {
  const out = new Uint8Array(produced.length);
  let at = 0;
  let sourceEnd = 0;
  let previous: "source" | "fresh" | null = null;
  for (const piece of pieces) {
    if ("source" in piece) {
      const [start, end] = piece.source;
      expect(start).toBeGreaterThanOrEqual(sourceEnd); // ascending, no overlap
      expect(end).toBeGreaterThan(start); // never empty
      expect(end).toBeLessThanOrEqual(old.length);
      if (previous === "source") expect(start).not.toBe(sourceEnd); // contiguous ones are merged
      out.set(old.subarray(start, end), at);
      at += end - start;
      sourceEnd = end;
      previous = "source";
    } else {
      const [start, end] = piece.fresh;
      expect(start).toBe(at); // a fresh range is where it lands
      expect(end).toBeGreaterThan(start);
      expect(previous).not.toBe("fresh"); // neighbours are merged
      out.set(produced.subarray(start, end), at);
      at = end;
      previous = "fresh";
    }
  }
  expect(at).toBe(produced.length);
  return out;
}

const WORDS = ["alpha", "beta", "", "  indented", "\tTab", "é ü ß", "🚀 rocket", "x".repeat(40), "}", "return 1;"];
const ENDINGS = ["\n", "\r\n", "\r"];

function randomFile(rng: () => number): Uint8Array {
  const lines = Math.floor(rng() * 30);
  const style = rng();
  let text = "";
  for (let i = 0; i < lines; i++) {
    text += WORDS[Math.floor(rng() * WORDS.length)]!;
    const last = i === lines - 1;
    if (last && rng() < 0.3) break; // no final newline
    // uniform LF, uniform CRLF, or mixed endings
    text += style < 0.4 ? "\n" : style < 0.7 ? "\r\n" : ENDINGS[Math.floor(rng() * 3)]!;
  }
  const body = enc.encode(text);
  if (rng() < 0.25) {
    const withBom = new Uint8Array(body.length + 3);
    withBom.set([0xef, 0xbb, 0xbf]);
    withBom.set(body, 3);
    return withBom;
  }
  return body;
}

function randomEdits(rng: () => number, lineCount: number): LineEdit[] {
  const edits: LineEdit[] = [];
  let cursor = 0;
  while (cursor <= lineCount && rng() < 0.7) {
    const start = cursor + Math.floor(rng() * (lineCount - cursor + 1) * 0.5);
    if (start > lineCount) break;
    const end = Math.min(lineCount, start + Math.floor(rng() * 4));
    const replacement: OutputLine[] = [];
    for (let k = start; k < end; k++) {
      if (rng() < 0.4) replacement.push({ text: WORDS[Math.floor(rng() * WORDS.length)]! + "*" });
      if (rng() < 0.5) replacement.push({ keep: k });
    }
    if (rng() < 0.5) replacement.push({ text: "new " + Math.floor(rng() * 100) });
    edits.push({ start, end, replacement });
    cursor = end + 1;
  }
  return edits;
}

describe("renderTextPieces", () => {
  test("the documented example", () => {
    const r = decodeText(enc.encode("a\nb\nc\n"));
    if (!r.ok) throw new Error("decode");
    const out = renderTextPieces(r.file, [{ start: 1, end: 2, replacement: [{ text: "B" }] }]);
    expect(new TextDecoder().decode(out.bytes)).toBe("a\nB\nc\n");
    expect(out.pieces).toEqual([{ source: [0, 2] }, { fresh: [2, 4] }, { source: [4, 6] }]);
  });

  const cases: { name: string; input: Uint8Array; edits: LineEdit[]; pieces: ContentPiece[] }[] = [
    { name: "no edits: one source piece (BOM merged with the lines)", input: enc.encode("\uFEFFa\r\nb"), edits: [], pieces: [{ source: [0, 7] }] },
    { name: "empty file, no edits: no pieces", input: new Uint8Array(), edits: [], pieces: [] },
    {
      name: "appending to a file without final newline: the dominant ending is new",
      input: enc.encode("a\nb"),
      edits: [{ start: 2, end: 2, replacement: [{ text: "c" }] }],
      pieces: [{ source: [0, 3] }, { fresh: [3, 5] }],
    },
    {
      name: "deleting the last line of a file without final newline trims the kept ending",
      input: enc.encode("a\r\nb\r\nc"),
      edits: [{ start: 2, end: 3, replacement: [] }],
      pieces: [{ source: [0, 4] }],
    },
    {
      name: "a kept line inside an edit is a source piece of its own",
      input: enc.encode("a\nb\nc\nd\n"),
      edits: [{ start: 0, end: 4, replacement: [{ text: "A" }, { keep: 2 }, { text: "D" }] }],
      pieces: [{ fresh: [0, 2] }, { source: [4, 6] }, { fresh: [4, 6] }],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const r = decodeText(c.input);
      if (!r.ok) throw new Error("decode");
      const out = renderTextPieces(r.file, c.edits);
      expect(out.pieces).toEqual(c.pieces);
      expect(rebuild(c.input, out.bytes, out.pieces)).toEqual(out.bytes);
    });
  }

  test("property: for 3000 random files and edits the pieces rebuild the new bytes from the old ones", () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const rng = seeded(seed);
      const old = randomFile(rng);
      const r = decodeText(old);
      if (!r.ok) throw new Error(`seed ${seed}: decode`);
      const edits = randomEdits(rng, r.file.eols.length);
      const out = renderTextPieces(r.file, edits);
      expect(out.bytes).toEqual(renderText(r.file, edits));
      const rebuilt = rebuild(old, out.bytes, out.pieces);
      if (sha256Hex(rebuilt) !== sha256Hex(out.bytes)) throw new Error(`seed ${seed}: pieces do not rebuild the output`);
    }
  });
});

describe("planPatch records the pieces of updates and moves", () => {
  const snapshot = (path: string, bytes: Uint8Array): FileSnapshot => ({ path, kind: "file", bytes, sha256: sha256Hex(bytes), size: bytes.length, mode: 0o644, nlink: 1 });
  const missing = (path: string): FileSnapshot => ({ path, kind: "missing", parentExists: true });
  const cases: { name: string; old: string; patch: string[]; moveTo?: string }[] = [
    { name: "LF, one line in the middle", old: "one\ntwo\nthree\nfour\n", patch: ["@@", " two", "-three", "+THREE"] },
    { name: "CRLF kept", old: "[a]\r\nx = 1\r\ny = 2\r\n", patch: ["@@", " [a]", "-x = 1", "+x = 10"] },
    { name: "BOM and no final newline", old: "\uFEFFalpha\nbeta\ngamma", patch: ["@@", " beta", "-gamma", "+GAMMA"] },
    { name: "insertion at the end of a file without final newline", old: "a\nb", patch: ["@@", " b", "+c", "*** End of File"] },
    { name: "Move with a change", old: "m1\nm2\nm3\n", patch: ["@@", " m1", "-m2", "+M2"], moveTo: "moved/m.txt" },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const text = ["*** Begin Patch", "*** Update File: f.txt", ...(c.moveTo ? [`*** Move to: ${c.moveTo}`] : []), ...c.patch, "*** End Patch"].join("\n");
      const parsed = parsePatch(text);
      if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
      const old = enc.encode(c.old);
      const snaps = new Map([["f.txt", snapshot("f.txt", old)], ...(c.moveTo ? [[c.moveTo, missing(c.moveTo)] as const] : [])]);
      const planned = planPatch(parsed.patch, snaps);
      if (!planned.ok) throw new Error(planned.errors[0]!.message);
      const file = planned.plan.files[0]!;
      expect(file.op).toBe(c.moveTo ? "move" : "update");
      expect(file.pieces).toBeDefined();
      expect(rebuild(old, file.newBytes!, file.pieces!)).toEqual(file.newBytes!);
      expect(file.pieces!.some((p) => "source" in p)).toBe(true);
      expect(JSON.parse(JSON.stringify(file.pieces))).toEqual(file.pieces); // plain data
    });
  }

  test("adds and deletes carry no pieces", () => {
    const parsed = parsePatch(["*** Begin Patch", "*** Add File: n.txt", "+x", "*** Delete File: d.txt", "*** End Patch"].join("\n"));
    if (!parsed.ok) throw new Error("parse");
    const planned = planPatch(parsed.patch, new Map([["n.txt", missing("n.txt")], ["d.txt", snapshot("d.txt", enc.encode("d\n"))]]));
    if (!planned.ok) throw new Error(planned.errors[0]!.message);
    expect(planned.plan.files.map((f) => f.pieces)).toEqual([undefined, undefined]);
  });
});
