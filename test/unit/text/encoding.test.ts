/**
 * Opt-in single-byte encodings (issue 29 item 6): every byte round-trips
 * through decode → encode and through the text model's render, for latin1
 * and windows-1252 (its five undefined bytes included); characters they
 * lack are found, never replaced.
 */
import { describe, expect, test } from "bun:test";
import { characterAt, decodeSingleByte, encodeSingleByte, firstUnencodable } from "../../../lib/text/encoding.ts";
import { decodeText, newFileBytes, renderText } from "../../../lib/text/text.ts";

const ALL = Uint8Array.from({ length: 256 }, (_, b) => b);
const ENCODINGS = ["latin1", "windows-1252"] as const;

describe("single-byte encodings: round trip over all 256 bytes", () => {
  for (const encoding of ENCODINGS) {
    test(`${encoding}: decode then encode gives every byte back, and decoding is one character per byte`, () => {
      const text = decodeSingleByte(ALL, encoding);
      expect(text.length).toBe(256);
      expect(firstUnencodable(text, encoding)).toBe(-1);
      expect([...encodeSingleByte(text, encoding)]).toEqual([...ALL]);
      // Distinct bytes give distinct characters (a bijection).
      expect(new Set(text).size).toBe(256);
    });

    test(`${encoding}: every byte value at every position of a multi-line file survives an edit of another line`, () => {
      // 256 lines, line k holds every byte but the line endings, rotated by k.
      const lines: number[] = [];
      for (let k = 0; k < 256; k++) {
        for (let i = 0; i < 256; i++) {
          const b = (i + k) % 256;
          if (b !== 0x0a && b !== 0x0d) lines.push(b);
        }
        lines.push(0x0a);
      }
      const bytes = Uint8Array.from(lines);
      const decoded = decodeText(bytes, encoding);
      if (!decoded.ok) throw new Error("decode failed");
      expect(decoded.file.bom).toBe(false);
      expect(decoded.file.eols.length).toBe(256);
      const edited = renderText(decoded.file, [{ start: 100, end: 101, replacement: [{ text: decoded.file.lines[100]!.split("").reverse().join("") }] }]);
      expect(edited.length).toBe(bytes.length);
      const expected = bytes.slice();
      const start = bytes.indexOf(0x0a, 0) + 1;
      let at = 0;
      for (let k = 0; k < 100; k++) at = bytes.indexOf(0x0a, at) + 1;
      const end = bytes.indexOf(0x0a, at);
      expected.set(bytes.slice(at, end).reverse(), at);
      expect(start).toBeGreaterThan(0);
      expect([...edited]).toEqual([...expected]);
    });
  }

  test("windows-1252: the five undefined bytes are the C1 controls of the same value (WHATWG), other C1 controls have no byte", () => {
    expect([...decodeSingleByte(new Uint8Array([0x81, 0x8d, 0x8f, 0x90, 0x9d]), "windows-1252")].map((c) => c.charCodeAt(0))).toEqual([0x81, 0x8d, 0x8f, 0x90, 0x9d]);
    expect(decodeSingleByte(new Uint8Array([0x80, 0x93, 0x94, 0x9f]), "windows-1252")).toBe("€“”Ÿ");
    expect(firstUnencodable("\u0080", "windows-1252")).toBe(0);
    expect(firstUnencodable("\u0082", "windows-1252")).toBe(0);
    expect([...encodeSingleByte("€“”Ÿ\u0081", "windows-1252")]).toEqual([0x80, 0x93, 0x94, 0x9f, 0x81]);
  });

  test("latin1 is ISO-8859-1, not WHATWG's latin1 label (which is windows-1252): 0x80 is U+0080", () => {
    expect(decodeSingleByte(new Uint8Array([0x80, 0xe9]), "latin1")).toBe("\u0080é");
    expect(new TextDecoder("latin1").decode(new Uint8Array([0x80]))).toBe("€"); // why it is not used
  });

  const unencodable: [string, (typeof ENCODINGS)[number], number][] = [
    ["café €", "latin1", 5],
    ["café €", "windows-1252", -1],
    ["ok “quoted”", "latin1", 3],
    ["Ελλάδα", "windows-1252", 0],
    ["smile 😀", "latin1", 6],
    ["", "latin1", -1],
  ];
  for (const [text, encoding, at] of unencodable) {
    test(`firstUnencodable(${JSON.stringify(text)}, ${encoding}) = ${at}`, () => expect(firstUnencodable(text, encoding)).toBe(at));
  }

  test("characterAt gives a whole surrogate pair and its code point", () => {
    expect(characterAt("smile 😀", 6)).toEqual({ character: "😀", codePoint: 0x1f600 });
  });

  test("encodeSingleByte refuses a character it has no byte for (never a replacement)", () => {
    expect(() => encodeSingleByte("€", "latin1")).toThrow(RangeError);
  });

  test("a large file decodes in slices (no argument-count limit)", () => {
    const big = new Uint8Array(3_000_000).fill(0xe9);
    const text = decodeSingleByte(big, "latin1");
    expect(text.length).toBe(3_000_000);
    expect(text.charCodeAt(2_999_999)).toBe(0xe9);
  });
});

describe("the text model under a single-byte encoding", () => {
  test("a CRLF latin-1 file: new lines take CRLF and latin-1 bytes, kept lines their bytes; no BOM is read from EF BB BF", () => {
    const bytes = Uint8Array.from([0xef, 0xbb, 0xbf, 0x61, 0x0d, 0x0a, 0x63, 0x61, 0x66, 0xe9, 0x0d, 0x0a]); // "ï»¿a\r\ncafé\r\n"
    const r = decodeText(bytes, "latin1");
    if (!r.ok) throw new Error("decode failed");
    expect(r.file.lines).toEqual(["ï»¿a", "café"]);
    expect(r.file.dominantEol).toBe("\r\n");
    expect(r.file.ascii).toBe(false);
    const out = renderText(r.file, [{ start: 1, end: 2, replacement: [{ keep: 1 }, { text: "naïve" }] }]);
    expect([...out]).toEqual([...bytes, 0x6e, 0x61, 0xef, 0x76, 0x65, 0x0d, 0x0a]);
  });

  test("without an encoding the same bytes are invalid UTF-8", () => {
    const r = decodeText(new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    expect(r).toMatchObject({ ok: false, reason: "invalid_utf8", byteOffset: 3, line: 1 });
  });

  test("newFileBytes writes the encoding's bytes", () => {
    expect([...newFileBytes(["café", "€"], "windows-1252")]).toEqual([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x80, 0x0a]);
  });
});
