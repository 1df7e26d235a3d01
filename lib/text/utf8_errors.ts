/**
 * Where UTF-8 decoding failed (SPEC §5.3: non-UTF-8 content fails
 * `invalid_utf8` with the first bad byte's offset and line). Only called
 * after the native decoder has rejected the bytes, so speed does not matter.
 *
 * @module
 */

const LF = 0x0a;
const CR = 0x0d;

/**
 * Offset of the first byte of the first ill-formed UTF-8 sequence at or
 * after `start` (Unicode Table 3-7), or `bytes.length` if there is none.
 *
 * @example
 * ```ts
 * firstInvalidUtf8(new Uint8Array([0x61, 0x80]), 0); // 1
 * ```
 */
export function firstInvalidUtf8(bytes: Uint8Array, start: number): number {
  const n = bytes.length;
  let i = start;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    if (i + need >= n) return i;
    const second = bytes[i + 1]!;
    if (second < lo || second > hi) return i;
    for (let k = 2; k <= need; k++) {
      const c = bytes[i + k]!;
      if (c < 0x80 || c > 0xbf) return i;
    }
    i += need + 1;
  }
  return n;
}

/**
 * 1-based line of byte `offset`: line breaks before it (CRLF counts once).
 *
 * @example
 * ```ts
 * lineNumberAt(new TextEncoder().encode("a\r\nb"), 3); // 2
 * ```
 */
export function lineNumberAt(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) {
    const b = bytes[i];
    if (b === LF) line++;
    else if (b === CR && bytes[i + 1] !== LF) line++;
  }
  return line;
}
