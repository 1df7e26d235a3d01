import { describe, expect, test } from "bun:test";
import { adoptLfLineStarts, decodeText, eolText, lineOf, newFileBytes, renderText, type TextFile, unscannedLfText } from "../../../lib/text/text.ts";
import type { LineEdit } from "../../../lib/types.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

function decode(text: string | Uint8Array): TextFile {
  const r = decodeText(typeof text === "string" ? enc.encode(text) : text);
  if (!r.ok) throw new Error(`unexpected decode failure ${JSON.stringify(r)}`);
  return r.file;
}

function withBom(text: string): Uint8Array {
  const body = enc.encode(text);
  const out = new Uint8Array(body.length + 3);
  out.set([0xef, 0xbb, 0xbf]);
  out.set(body, 3);
  return out;
}

describe("decodeText splits lines and records endings", () => {
  const cases: { name: string; text: string; lines: string[]; eols: number[]; finalNewline: boolean; dominant: string }[] = [
    { name: "empty", text: "", lines: [], eols: [], finalNewline: false, dominant: "\n" },
    { name: "one line, no newline", text: "a", lines: ["a"], eols: [0], finalNewline: false, dominant: "\n" },
    { name: "LF", text: "a\nb\n", lines: ["a", "b"], eols: [1, 1], finalNewline: true, dominant: "\n" },
    { name: "LF without final newline", text: "a\nb", lines: ["a", "b"], eols: [1, 0], finalNewline: false, dominant: "\n" },
    { name: "only a newline", text: "\n", lines: [""], eols: [1], finalNewline: true, dominant: "\n" },
    { name: "CRLF", text: "a\r\nb\r\n", lines: ["a", "b"], eols: [2, 2], finalNewline: true, dominant: "\r\n" },
    { name: "CRLF without final newline", text: "a\r\n\r\nb", lines: ["a", "", "b"], eols: [2, 2, 0], finalNewline: false, dominant: "\r\n" },
    { name: "only a CRLF", text: "\r\n", lines: [""], eols: [2], finalNewline: true, dominant: "\r\n" },
    { name: "lone CR", text: "a\rb\r", lines: ["a", "b"], eols: [3, 3], finalNewline: true, dominant: "\r" },
    { name: "lone CR, no final", text: "a\rb", lines: ["a", "b"], eols: [3, 0], finalNewline: false, dominant: "\r" },
    {
      name: "mixed, CRLF dominant",
      text: "a\r\nb\nc\r\nd\re",
      lines: ["a", "b", "c", "d", "e"],
      eols: [2, 1, 2, 3, 0],
      finalNewline: false,
      dominant: "\r\n",
    },
    { name: "tie LF/CRLF → LF", text: "a\r\nb\n", lines: ["a", "b"], eols: [2, 1], finalNewline: true, dominant: "\n" },
    { name: "tie CRLF/CR → CRLF", text: "a\r\nb\r", lines: ["a", "b"], eols: [2, 3], finalNewline: true, dominant: "\r\n" },
    { name: "CR then CRLF in one piece", text: "x\ry\r\nz\n", lines: ["x", "y", "z"], eols: [3, 2, 1], finalNewline: true, dominant: "\n" },
    { name: "empty lines between CRs", text: "\r\r\n\n", lines: ["", "", ""], eols: [3, 2, 1], finalNewline: true, dominant: "\n" },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const f = decode(c.text);
      // Single lines and offsets first, before anything makes the array.
      expect(c.lines.map((_, i) => lineOf(f, i))).toEqual(c.lines);
      expect(f.lineStarts.length).toBe(c.lines.length + 1);
      expect(f.lineStarts[c.lines.length]).toBe(f.text.length);
      expect(f.lines).toEqual(c.lines);
      expect([...f.eols]).toEqual(c.eols);
      expect(f.finalNewline).toBe(c.finalNewline);
      expect(f.dominantEol).toBe(c.dominant as TextFile["dominantEol"]);
      expect(f.bom).toBe(false);
    });
  }

  test("BOM is recorded and not part of the first line", () => {
    const f = decode(withBom("héllo\n"));
    expect(f.bom).toBe(true);
    expect(f.lines).toEqual(["héllo"]);
    expect(f.ascii).toBe(false);
  });

  test("lines are made once, on first read, and lineOf agrees with them after", () => {
    const f = decode("a\r\nb\nc\rd");
    expect(lineOf(f, 3)).toBe("d");
    const first = f.lines;
    expect(f.lines).toBe(first);
    expect(first.map((_, i) => lineOf(f, i))).toEqual(["a", "b", "c", "d"]);
  });

  test("lineStarts are offsets into the text (after the BOM)", () => {
    const f = decode(withBom("é\r\nxy\n"));
    expect(f.text).toBe("é\r\nxy\n");
    expect([...f.lineStarts]).toEqual([0, 3, 6]);
  });

  test("an LF-only file finds its lines on first use, or takes them from a caller that found them", () => {
    const lazy = decode("a\nbc\n");
    expect(unscannedLfText(lazy)).toBe("a\nbc\n");
    expect(lazy.finalNewline).toBe(true);
    expect(lazy.dominantEol).toBe("\n");
    expect(unscannedLfText(lazy)).toBe("a\nbc\n"); // the fields above did not need the lines
    expect([...lazy.eols]).toEqual([1, 1]);
    expect(unscannedLfText(lazy)).toBeUndefined();
    expect(() => adoptLfLineStarts(lazy, new Int32Array([0, 2, 5]))).toThrow();

    const adopted = decode("a\nbc");
    adoptLfLineStarts(adopted, new Int32Array([0, 2, 4]));
    expect(unscannedLfText(adopted)).toBeUndefined();
    expect([...adopted.eols]).toEqual([1, 0]);
    expect(adopted.lines).toEqual(["a", "bc"]);
    expect(adopted.finalNewline).toBe(false);
    expect(() => adoptLfLineStarts(decode("a\nb"), new Int32Array([0, 2]))).toThrow(RangeError);
    // A file with a CR finds its lines at once: nothing to hand over.
    expect(unscannedLfText(decode("a\r\nb"))).toBeUndefined();
  });

  test("a BOM in the middle is text, not a marker", () => {
    const f = decode("a\n\uFEFFb\n");
    expect(f.bom).toBe(false);
    expect(f.lines).toEqual(["a", "\uFEFFb"]);
  });
});

describe("decodeText rejects invalid UTF-8 with line and byte offset", () => {
  const cases: { name: string; bytes: number[]; line: number; byteOffset: number }[] = [
    { name: "Latin-1 é on line 2", bytes: [...enc.encode("ok\ncaf"), 0xe9, 0x0a], line: 2, byteOffset: 6 },
    { name: "lone continuation byte", bytes: [0x61, 0x80], line: 1, byteOffset: 1 },
    { name: "truncated sequence at end", bytes: [...enc.encode("a\r\nb\rc"), 0xe2, 0x82], line: 3, byteOffset: 6 },
    { name: "overlong encoding", bytes: [0xc0, 0xaf], line: 1, byteOffset: 0 },
    { name: "UTF-16 surrogate", bytes: [0x0a, 0xed, 0xa0, 0x80], line: 2, byteOffset: 1 },
    { name: "after a BOM (offset counts the BOM)", bytes: [0xef, 0xbb, 0xbf, 0x61, 0xff], line: 1, byteOffset: 4 },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const r = decodeText(new Uint8Array(c.bytes));
      expect(r).toEqual({ ok: false, reason: "invalid_utf8", line: c.line, byteOffset: c.byteOffset });
    });
  }
});

describe("renderText keeps endings, BOM and final-newline state", () => {
  const cases: { name: string; input: string | Uint8Array; edits: LineEdit[]; expected: string }[] = [
    { name: "no edits is identity (mixed endings)", input: "a\r\nb\nc\rd", edits: [], expected: "a\r\nb\nc\rd" },
    {
      name: "replaced line takes the dominant ending (CRLF)",
      input: "a\r\nb\r\nc\n",
      edits: [{ start: 1, end: 2, replacement: [{ text: "B" }] }],
      expected: "a\r\nB\r\nc\n",
    },
    {
      name: "kept lines keep their own ending",
      input: "a\nb\r\nc\n",
      edits: [{ start: 0, end: 3, replacement: [{ keep: 0 }, { text: "x" }, { keep: 1 }, { keep: 2 }] }],
      expected: "a\nx\nb\r\nc\n",
    },
    {
      name: "lone-CR file gets lone CR for new lines",
      input: "a\rb\r",
      edits: [{ start: 1, end: 1, replacement: [{ text: "new" }] }],
      expected: "a\rnew\rb\r",
    },
    {
      name: "no final newline: last line replaced stays without",
      input: "a\nb",
      edits: [{ start: 1, end: 2, replacement: [{ text: "B" }] }],
      expected: "a\nB",
    },
    {
      name: "no final newline: appending after the last line",
      input: "a\r\nb",
      edits: [{ start: 2, end: 2, replacement: [{ text: "c" }, { text: "d" }] }],
      expected: "a\r\nb\r\nc\r\nd",
    },
    {
      name: "no final newline: last line kept, text after it",
      input: "a\nb",
      edits: [{ start: 1, end: 2, replacement: [{ keep: 1 }, { text: "c" }] }],
      expected: "a\nb\nc",
    },
    {
      name: "no final newline: deleting the last line",
      input: "a\nb\nc",
      edits: [{ start: 2, end: 3, replacement: [] }],
      expected: "a\nb",
    },
    {
      name: "final newline kept when appending",
      input: "a\n",
      edits: [{ start: 1, end: 1, replacement: [{ text: "b" }] }],
      expected: "a\nb\n",
    },
    {
      name: "final newline kept when the last line is deleted",
      input: "a\nb\n",
      edits: [{ start: 1, end: 2, replacement: [] }],
      expected: "a\n",
    },
    {
      name: "delete everything gives an empty file",
      input: "a\nb",
      edits: [{ start: 0, end: 2, replacement: [] }],
      expected: "",
    },
    {
      name: "empty file gets a final newline like an added file",
      input: "",
      edits: [{ start: 0, end: 0, replacement: [{ text: "x" }] }],
      expected: "x\n",
    },
    {
      name: "several edits, untouched stretches copied",
      input: "1\n2\n3\n4\n5\n6\n",
      edits: [
        { start: 0, end: 0, replacement: [{ text: "0" }] },
        { start: 1, end: 3, replacement: [{ keep: 2 }] },
        { start: 4, end: 5, replacement: [{ text: "five" }, { text: "5b" }] },
      ],
      expected: "0\n1\n3\n4\nfive\n5b\n6\n",
    },
    {
      name: "non-ASCII lines are sliced on byte boundaries",
      input: "ä\r\nöü\r\n€\r\n𝄞x\r\n",
      edits: [{ start: 2, end: 3, replacement: [{ text: "ß" }] }],
      expected: "ä\r\nöü\r\nß\r\n𝄞x\r\n",
    },
    {
      name: "non-ASCII with lone CR and mixed endings (three-way tie → LF)",
      input: "é\rà\nç\r\nñ",
      edits: [{ start: 1, end: 3, replacement: [{ keep: 2 }, { text: "new" }] }],
      expected: "é\rç\r\nnew\nñ",
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const f = decode(c.input);
      expect(dec.decode(renderText(f, c.edits))).toBe(c.expected);
    });
  }

  const bomCases: { name: string; input: string; edits: LineEdit[]; expected: string }[] = [
    { name: "BOM kept on edit", input: "a\nb\n", edits: [{ start: 0, end: 1, replacement: [{ text: "A" }] }], expected: "A\nb\n" },
    { name: "BOM kept when all lines are deleted", input: "a\n", edits: [{ start: 0, end: 1, replacement: [] }], expected: "" },
  ];
  for (const c of bomCases) {
    test(c.name, () => {
      const out = renderText(decode(withBom(c.input)), c.edits);
      expect([...out.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
      expect(dec.decode(out.subarray(3))).toBe(c.expected);
    });
  }

  const invalid: { name: string; edits: LineEdit[] }[] = [
    { name: "overlapping edits", edits: [{ start: 0, end: 2, replacement: [] }, { start: 1, end: 2, replacement: [] }] },
    { name: "edit past the end", edits: [{ start: 2, end: 4, replacement: [] }] },
    { name: "keep outside its edit", edits: [{ start: 0, end: 1, replacement: [{ keep: 1 }] }] },
    { name: "keeps not ascending", edits: [{ start: 0, end: 2, replacement: [{ keep: 1 }, { keep: 0 }] }] },
  ];
  for (const c of invalid) {
    test(`programmer error: ${c.name} throws`, () => {
      expect(() => renderText(decode("a\nb\nc\n"), c.edits)).toThrow(RangeError);
    });
  }
});

describe("newFileBytes", () => {
  const cases: { lines: string[]; expected: string }[] = [
    { lines: [], expected: "" },
    { lines: [""], expected: "\n" },
    { lines: ["a", "b"], expected: "a\nb\n" },
    { lines: ["$HOME 'q' \"d\" \\n ✓"], expected: "$HOME 'q' \"d\" \\n ✓\n" },
  ];
  for (const c of cases) {
    test(JSON.stringify(c.lines), () => {
      expect(dec.decode(newFileBytes(c.lines))).toBe(c.expected);
    });
  }
  test("eolText maps codes", () => {
    expect([0, 1, 2, 3].map((c) => eolText(c as 0 | 1 | 2 | 3))).toEqual(["", "\n", "\r\n", "\r"]);
  });
});

describe("round trip on a large generated file", () => {
  test("identity and a middle edit match a string-built reference", () => {
    const endings = ["\n", "\r\n", "\r"];
    let text = "";
    const lines: string[] = [];
    for (let i = 0; i < 5000; i++) {
      const line = i % 7 === 0 ? `ünï ${i}` : `line ${i}`;
      lines.push(line);
      text += line + endings[i % 11 === 0 ? (i % 3) : 0];
    }
    const f = decode(text);
    expect(f.lines).toEqual(lines);
    expect(dec.decode(renderText(f, []))).toBe(text);
    const out = dec.decode(renderText(f, [{ start: 2500, end: 2501, replacement: [{ text: "X" }] }]));
    const lineStart = text.indexOf("line 2500");
    expect(out).toBe(text.slice(0, lineStart) + "X\n" + text.slice(lineStart + "line 2500\n".length));
  });
});
