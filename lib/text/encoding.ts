/**
 * Opt-in single-byte encodings (issue 29 item 6): `latin1` (ISO-8859-1)
 * and `windows-1252`, for legacy config files that are not UTF-8. The
 * default stays strict UTF-8; a caller names one of these per request.
 *
 * Both are bijections between the 256 byte values and 256 characters, so
 * decoding and re-encoding gives back every byte exactly:
 * - `latin1`: byte b is U+00b (U+0000–U+00FF). Note that WHATWG's
 *   TextDecoder treats the label "latin1" as windows-1252, so it is not
 *   used here.
 * - `windows-1252`: as WHATWG's index, which also gives the five bytes the
 *   code page leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D) the C1
 *   control of the same value (U+0081, …), so they round-trip too. The
 *   other C1 controls (U+0080, U+0082–U+008C, …) have no byte: 0x80 is €.
 *
 * A character of new text that the encoding has no byte for is never
 * replaced or dropped: {@linkcode firstUnencodable} finds it so the plan can
 * refuse the patch with the character and its patch line.
 *
 * Pure: no `node:` import.
 *
 * @module
 */

import type { TextEncodingName } from "../types.ts";

export type { TextEncodingName } from "../types.ts";

/** The names {@linkcode TextEncodingName} accepts, for validation. */
export const TEXT_ENCODINGS: readonly TextEncodingName[] = ["utf-8", "latin1", "windows-1252"];

/** windows-1252 bytes 0x80–0x9F (WHATWG index; the five undefined ones map to their C1 control). */
const CP1252_HIGH = [
  0x20ac, 0x0081, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008d, 0x017d, 0x008f,
  0x0090, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0x009d, 0x017e, 0x0178,
];

/** Byte → UTF-16 code unit, per single-byte encoding. */
const DECODE: Record<"latin1" | "windows-1252", Uint16Array> = {
  latin1: Uint16Array.from({ length: 256 }, (_, b) => b),
  "windows-1252": Uint16Array.from({ length: 256 }, (_, b) => (b >= 0x80 && b <= 0x9f ? CP1252_HIGH[b - 0x80]! : b)),
};

/** Code unit → byte for windows-1252 beyond the identity range (0x00–0x7F, 0xA0–0xFF). */
const CP1252_ENCODE = new Map<number, number>(CP1252_HIGH.map((unit, i) => [unit, 0x80 + i]));

/** Decoding works in slices so String.fromCharCode never gets too many arguments. */
const SLICE = 8192;

/**
 * Whether `encoding` is one of the single-byte encodings (one byte per
 * character, so byte offsets are character offsets).
 *
 * @example
 * ```ts
 * isSingleByte("latin1"); // true
 * ```
 */
export function isSingleByte(encoding: TextEncodingName | undefined): encoding is "latin1" | "windows-1252" {
  return encoding === "latin1" || encoding === "windows-1252";
}

/**
 * Decode bytes of a single-byte encoding: one character per byte, never
 * fails.
 *
 * @example
 * ```ts
 * decodeSingleByte(new Uint8Array([0x63, 0x61, 0x66, 0xe9]), "latin1"); // "café"
 * decodeSingleByte(new Uint8Array([0x80]), "windows-1252"); // "€"
 * ```
 */
export function decodeSingleByte(bytes: Uint8Array, encoding: "latin1" | "windows-1252"): string {
  const table = DECODE[encoding];
  const units = new Uint16Array(Math.min(bytes.length, SLICE));
  let out = "";
  for (let at = 0; at < bytes.length; at += SLICE) {
    const n = Math.min(SLICE, bytes.length - at);
    for (let i = 0; i < n; i++) units[i] = table[bytes[at + i]!]!;
    out += String.fromCharCode.apply(null, units.subarray(0, n) as unknown as number[]);
  }
  return out;
}

/** The byte of code unit `unit` in `encoding`, or -1. */
function byteOf(unit: number, encoding: "latin1" | "windows-1252"): number {
  if (encoding === "latin1") return unit <= 0xff ? unit : -1;
  if (unit < 0x80 || (unit >= 0xa0 && unit <= 0xff)) return unit;
  return CP1252_ENCODE.get(unit) ?? -1;
}

/**
 * Index (UTF-16) of the first character of `text` that `encoding` cannot
 * represent, or -1 when every one can.
 *
 * @example
 * ```ts
 * firstUnencodable("café €", "latin1"); // 5
 * firstUnencodable("café €", "windows-1252"); // -1
 * ```
 */
export function firstUnencodable(text: string, encoding: "latin1" | "windows-1252"): number {
  for (let i = 0; i < text.length; i++) {
    if (byteOf(text.charCodeAt(i), encoding) < 0) return i;
  }
  return -1;
}

/**
 * Encode text in a single-byte encoding. A character it cannot represent
 * is a programmer error here (RangeError): callers check new text with
 * {@linkcode firstUnencodable} first and refuse the patch.
 *
 * @example
 * ```ts
 * encodeSingleByte("café", "latin1"); // Uint8Array [0x63, 0x61, 0x66, 0xe9]
 * ```
 */
export function encodeSingleByte(text: string, encoding: "latin1" | "windows-1252"): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const b = byteOf(text.charCodeAt(i), encoding);
    if (b < 0) throw new RangeError(`encodeSingleByte: ${encoding} has no byte for U+${text.charCodeAt(i).toString(16).toUpperCase().padStart(4, "0")} at ${i}`);
    out[i] = b;
  }
  return out;
}

/**
 * The character at UTF-16 index `i` of `text` (a whole surrogate pair when
 * one starts there) and its code point, for messages.
 *
 * @example
 * ```ts
 * characterAt("a😀", 1); // { character: "😀", codePoint: 0x1f600 }
 * ```
 */
export function characterAt(text: string, i: number): { character: string; codePoint: number } {
  const codePoint = text.codePointAt(i)!;
  return { character: String.fromCodePoint(codePoint), codePoint };
}
