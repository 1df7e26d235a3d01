import { describe, expect, test } from "bun:test";
import { EOL_CHARS, type EolCode, lineCapacityFor, scanLines, scannedLine, splitScannedLines } from "../../../lib/text/line_scan.ts";

/** The reference: a regex split that keeps each ending, as SPEC §5.3 defines them. */
function reference(text: string): { lines: string[]; eols: number[] } {
  const lines: string[] = [];
  const eols: number[] = [];
  const re = /\r\n|\r|\n/g;
  let pos = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    lines.push(text.slice(pos, m.index));
    eols.push(m[0] === "\n" ? 1 : m[0] === "\r\n" ? 2 : 3);
    pos = m.index + m[0].length;
  }
  if (pos < text.length) {
    lines.push(text.slice(pos));
    eols.push(0);
  }
  return { lines, eols };
}

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("scanLines: offsets and endings without a string per line", () => {
  const cases: { name: string; text: string; starts: number[]; eols: number[]; dominant: string; uniform: boolean }[] = [
    { name: "empty", text: "", starts: [0], eols: [], dominant: "\n", uniform: true },
    { name: "no ending", text: "ab", starts: [0, 2], eols: [0], dominant: "\n", uniform: true },
    { name: "LF", text: "a\nbc\n", starts: [0, 2, 5], eols: [1, 1], dominant: "\n", uniform: true },
    { name: "LF, last open", text: "a\n\nc", starts: [0, 2, 3, 4], eols: [1, 1, 0], dominant: "\n", uniform: true },
    { name: "CRLF", text: "a\r\nb\r\n", starts: [0, 3, 6], eols: [2, 2], dominant: "\r\n", uniform: true },
    { name: "CRLF, last open", text: "a\r\nb", starts: [0, 3, 4], eols: [2, 0], dominant: "\r\n", uniform: true },
    { name: "lone CR", text: "a\rb\r", starts: [0, 2, 4], eols: [3, 3], dominant: "\r", uniform: true },
    { name: "CR at the very end after LF", text: "a\n\r", starts: [0, 2, 3], eols: [1, 3], dominant: "\n", uniform: false },
    { name: "CR CR LF: a lone CR, then a CRLF", text: "\r\r\n", starts: [0, 1, 3], eols: [3, 2], dominant: "\r\n", uniform: false },
    { name: "LF CR: two endings", text: "x\n\ry", starts: [0, 2, 3, 4], eols: [1, 3, 0], dominant: "\n", uniform: false },
    { name: "mixed, CRLF dominant", text: "a\r\nb\nc\r\nd\re", starts: [0, 3, 5, 8, 10, 11], eols: [2, 1, 2, 3, 0], dominant: "\r\n", uniform: false },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const s = scanLines(c.text);
      expect([...s.starts]).toEqual(c.starts);
      expect([...s.eols]).toEqual(c.eols);
      expect(s.dominant).toBe(c.dominant as "\n");
      expect(s.uniform).toBe(c.uniform);
      const ref = reference(c.text);
      expect(splitScannedLines(c.text, s)).toEqual(ref.lines);
      expect(ref.lines.map((_, i) => scannedLine(c.text, s, i))).toEqual(ref.lines);
    });
  }

  test("2000 random texts of a b \\r \\n agree with the regex reference (lines, endings, offsets)", () => {
    const rand = prng(11);
    const alphabet = ["a", "b", "\r", "\n", "\r\n", "é"];
    for (let k = 0; k < 2000; k++) {
      let text = "";
      const length = Math.floor(rand() * 24);
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(rand() * alphabet.length)];
      const s = scanLines(text);
      const ref = reference(text);
      expect([...s.eols]).toEqual(ref.eols);
      expect(splitScannedLines(text, s)).toEqual(ref.lines);
      // Each line plus its ending tiles the text exactly.
      let rebuilt = "";
      for (let i = 0; i < ref.lines.length; i++) {
        expect(s.starts[i + 1]! - s.starts[i]! - EOL_CHARS[s.eols[i] as EolCode]).toBe(ref.lines[i]!.length);
        rebuilt += scannedLine(text, s, i) + ["", "\n", "\r\n", "\r"][s.eols[i]!];
      }
      expect(rebuilt).toBe(text);
      expect(s.starts[s.starts.length - 1]).toBe(text.length);
    }
  });

  test("a file whose short lines come after the sampled start grows the offset arrays past their first guess", () => {
    // The first 64 Ki characters hold long lines, so the guess is far too small.
    const head = ("x".repeat(99) + "\n").repeat(700);
    const text = head + "}\n".repeat(50_000) + "x";
    const s = scanLines(text);
    expect(lineCapacityFor(text)).toBeLessThan(20_000);
    expect(s.eols.length).toBe(50_701);
    expect(s.starts[700]).toBe(70_000);
    expect(s.starts[50_700]).toBe(170_000);
    expect(s.eols[50_700]).toBe(0);
    const crlf = head + "}\r\n".repeat(30_000) + "\r";
    const m = scanLines(crlf);
    expect(m.eols.length).toBe(30_701);
    expect(m.eols[30_700]).toBe(3);
    expect(splitScannedLines(crlf, m)).toEqual(reference(crlf).lines);
  });

  test("the capacity guess is exact for short texts and close for long uniform ones", () => {
    expect(lineCapacityFor("")).toBe(2);
    expect(lineCapacityFor("a\nb")).toBe(3);
    const uniform = "}\n".repeat(100_000);
    const guess = lineCapacityFor(uniform);
    expect(guess).toBeGreaterThanOrEqual(100_001);
    expect(guess).toBeLessThan(120_000);
  });
});
