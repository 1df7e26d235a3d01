import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { lineHash } from "../../../lib/text/line_id.ts";
import { readWindow } from "../../../lib/plan/read_window.ts";
import type { ReadWindowOptions, ReadWindowResult } from "../../../lib/plan/read_window.ts";
import type { PatchFailure } from "../../../lib/types.ts";

const enc = new TextEncoder();
const BOM = [0xef, 0xbb, 0xbf];

function bytesOf(text: string, bom = false): Uint8Array {
  const body = enc.encode(text);
  if (!bom) return body;
  const out = new Uint8Array(body.length + 3);
  out.set(BOM);
  out.set(body, 3);
  return out;
}

function sha(bytes: Uint8Array | string): string {
  return createHash("sha256").update(typeof bytes === "string" ? enc.encode(bytes) : bytes).digest("hex");
}

function ok(result: ReadWindowResult | PatchFailure): ReadWindowResult {
  if ("code" in result) throw new Error(`unexpected failure: ${result.message}`);
  return result;
}

function failed(result: ReadWindowResult | PatchFailure): PatchFailure {
  if (!("code" in result)) throw new Error(`expected a failure, got lines ${result.startLine}-${result.endLine}`);
  return result;
}

describe("readWindow: windows, endings and the window hash", () => {
  const cases: {
    name: string;
    file: string;
    bom?: boolean;
    options?: ReadWindowOptions;
    text: string;
    range: [number, number, number];
    truncated: boolean;
    eol: ReadWindowResult["eol"];
    finalNewline: boolean;
    /** The exact file bytes contentSha256 must hash. */
    window: string;
  }[] = [
    { name: "whole LF file", file: "a\nb\nc\n", text: "a\nb\nc\n", range: [1, 3, 3], truncated: false, eol: "lf", finalNewline: true, window: "a\nb\nc\n" },
    { name: "no final newline", file: "a\nb", text: "a\nb", range: [1, 2, 2], truncated: false, eol: "lf", finalNewline: false, window: "a\nb" },
    { name: "offset and limit cut the middle", file: "1\n2\n3\n4\n5\n", options: { offset: 2, limit: 2 }, text: "2\n3\n", range: [2, 3, 5], truncated: true, eol: "lf", finalNewline: true, window: "2\n3\n" },
    { name: "limit past the end stops at the last line", file: "1\n2\n3\n", options: { offset: 3, limit: 10 }, text: "3\n", range: [3, 3, 3], truncated: false, eol: "lf", finalNewline: true, window: "3\n" },
    { name: "default limit is 800 lines", file: "x\n".repeat(801), text: "x\n".repeat(800), range: [1, 800, 801], truncated: true, eol: "lf", finalNewline: true, window: "x\n".repeat(800) },
    { name: "CRLF: text shows \\n, the hash covers the CRLF bytes", file: "a\r\nb\r\nc\r\n", options: { offset: 2, limit: 1 }, text: "b\n", range: [2, 2, 3], truncated: true, eol: "crlf", finalNewline: true, window: "b\r\n" },
    { name: "lone CR endings", file: "a\rb\r", text: "a\nb\n", range: [1, 2, 2], truncated: false, eol: "cr", finalNewline: true, window: "a\rb\r" },
    { name: "mixed endings", file: "a\r\nb\nc\rd", options: { offset: 2 }, text: "b\nc\nd", range: [2, 4, 4], truncated: false, eol: "mixed", finalNewline: false, window: "b\nc\rd" },
    { name: "one line without ending: eol none", file: "only", text: "only", range: [1, 1, 1], truncated: false, eol: "none", finalNewline: false, window: "only" },
    { name: "empty file: an empty window at offset 1", file: "", text: "", range: [1, 0, 0], truncated: false, eol: "none", finalNewline: false, window: "" },
    { name: "multi-byte UTF-8 kept", file: "héllo → wörld\n€\n", options: { offset: 2 }, text: "€\n", range: [2, 2, 2], truncated: false, eol: "lf", finalNewline: true, window: "€\n" },
    { name: "empty lines count as lines", file: "\n\n\n", options: { offset: 2, limit: 1 }, text: "\n", range: [2, 2, 3], truncated: true, eol: "lf", finalNewline: true, window: "\n" },
    { name: "maxBytes stops before the line that would overflow", file: "aaaa\nbbbb\ncccc\n", options: { maxBytes: 10 }, text: "aaaa\nbbbb\n", range: [1, 2, 3], truncated: true, eol: "lf", finalNewline: true, window: "aaaa\nbbbb\n" },
    { name: "maxBytes keeps one whole line however long", file: "a".repeat(50) + "\nb\n", options: { maxBytes: 8 }, text: "a".repeat(50) + "\n", range: [1, 1, 2], truncated: true, eol: "lf", finalNewline: true, window: "a".repeat(50) + "\n" },
    { name: "maxBytes counts UTF-8 bytes, not characters", file: "€€\n€€\n", options: { maxBytes: 8 }, text: "€€\n", range: [1, 1, 2], truncated: true, eol: "lf", finalNewline: true, window: "€€\n" },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const bytes = bytesOf(c.file, c.bom);
      const w = ok(readWindow(bytes, c.options));
      expect(w.text).toBe(c.text);
      expect([w.startLine, w.endLine, w.totalLines]).toEqual(c.range);
      expect(w.truncated).toBe(c.truncated);
      expect(w.eol).toBe(c.eol);
      expect(w.finalNewline).toBe(c.finalNewline);
      expect(w.bom).toBe(false);
      expect(w.fileSha256).toBe(sha(bytes));
      expect(w.contentSha256).toBe(sha(c.window));
    });
  }
});

describe("readWindow: the BOM and the whole-file identity", () => {
  test("a window from line 1 includes the BOM bytes; the text never shows it", () => {
    const bytes = bytesOf("a\nb\n", true);
    const w = ok(readWindow(bytes, { limit: 1 }));
    expect(w.bom).toBe(true);
    expect(w.text).toBe("a\n");
    expect(w.contentSha256).toBe(sha(new Uint8Array([...BOM, ...enc.encode("a\n")])));
  });

  test("a later window does not include the BOM", () => {
    const w = ok(readWindow(bytesOf("a\nb\n", true), { offset: 2 }));
    expect(w.contentSha256).toBe(sha("b\n"));
  });

  const whole = ["", "a", "a\nb\n", "a\r\nb", "x\ry\r\nz\n"];
  for (const [i, file] of whole.entries()) {
    for (const bom of [false, true]) {
      test(`a window over the whole file hashes like the file (#${i}, bom ${bom})`, () => {
        const w = ok(readWindow(bytesOf(file, bom)));
        expect(w.truncated).toBe(false);
        expect(w.contentSha256).toBe(w.fileSha256);
      });
    }
  }
});

describe("readWindow: line ids", () => {
  test("each line is prefixed N:hh| with its 1-based number and content hash", () => {
    const w = ok(readWindow(bytesOf("def f():\n    return 1\n\n"), { offset: 2, lineIds: true }));
    expect(w.text).toBe(`2:${lineHash("    return 1")}|    return 1\n3:${lineHash("")}|\n`);
  });

  test("the hash does not depend on the line ending", () => {
    const lf = ok(readWindow(bytesOf("same\n"), { lineIds: true }));
    const crlf = ok(readWindow(bytesOf("same\r\n"), { lineIds: true }));
    expect(lf.text).toBe(crlf.text);
    expect(lf.contentSha256).not.toBe(crlf.contentSha256);
  });

  test("maxBytes counts the prefixes", () => {
    const w = ok(readWindow(bytesOf("a\nb\nc\n"), { lineIds: true, maxBytes: 14 }));
    expect(w.endLine).toBe(2); // "1:hh|a\n" is 7 bytes
  });
});

describe("readWindow: failures are values", () => {
  const cases: { name: string; bytes: Uint8Array; options?: ReadWindowOptions; code: PatchFailure["code"]; line: number; says: RegExp[] }[] = [
    {
      name: "invalid UTF-8 names the line and byte offset",
      bytes: new Uint8Array([0x61, 0x0a, 0x62, 0xff, 0x0a]),
      options: { path: "bin.dat" },
      code: "invalid_utf8",
      line: 2,
      says: [/bin\.dat is not valid UTF-8/, /offset 3, line 2/],
    },
    {
      name: "offset past the end gives total_lines and the valid range",
      bytes: bytesOf("1\n2\n3\n4\n5\n"),
      options: { offset: 9, limit: 2, path: "five.txt" },
      code: "invalid_argument",
      line: 9,
      says: [/offset 9 is past the end of five\.txt/, /total_lines is 5/, /between 1 and 5/, /offset 4/],
    },
    {
      name: "offset 2 of an empty file",
      bytes: bytesOf(""),
      options: { offset: 2 },
      code: "invalid_argument",
      line: 2,
      says: [/the file is empty \(0 lines\)/, /offset 1/],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const f = failed(readWindow(c.bytes, c.options));
      expect(f.code).toBe(c.code);
      expect(f.line).toBe(c.line);
      expect(f.retryable).toBe(false);
      if (c.options?.path) expect(f.path).toBe(c.options.path);
      for (const pattern of c.says) expect(f.message).toMatch(pattern);
    });
  }

  const wrong: [string, unknown, ReadWindowOptions][] = [
    ["bytes not a Uint8Array", "text", {}],
    ["offset 0", new Uint8Array(), { offset: 0 }],
    ["fractional limit", new Uint8Array(), { limit: 1.5 }],
    ["negative maxBytes", new Uint8Array(), { maxBytes: -1 }],
  ];
  for (const [name, bytes, options] of wrong) {
    test(`programmer error throws: ${name}`, () => {
      expect(() => readWindow(bytes as Uint8Array, options)).toThrow();
    });
  }
});

test("a late window of a large file (1M lines) has the right range and hash", () => {
  const bytes = bytesOf("line of code;\n".repeat(1_000_000));
  const w = ok(readWindow(bytes, { offset: 999_990, limit: 5 }));
  expect([w.startLine, w.endLine, w.totalLines]).toEqual([999_990, 999_994, 1_000_000]);
  expect(w.contentSha256).toBe(sha("line of code;\n".repeat(5)));
});
