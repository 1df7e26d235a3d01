/**
 * Content-verified line ids `N:hh` (SPEC §5.6).
 *
 * `hh` is the 32-bit FNV-1a hash of the line's UTF-8 bytes (without its
 * ending), folded to 8 bits by XOR of its four bytes. Eight bits mean a
 * changed line keeps its id with probability 1/256: cheap enough to show on
 * every line, and the line number catches any shift.
 *
 * @module
 */

const encoder = new TextEncoder();

/**
 * The 32-bit FNV-1a hash of `bytes`.
 *
 * @example
 * ```ts
 * fnv1a32(new TextEncoder().encode("a")); // 0xe40c292c
 * ```
 */
export function fnv1a32(bytes: Uint8Array): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) {
    hash ^= bytes[i]!;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * The two-hex-digit content hash of a line (without its ending).
 *
 * @example
 * ```ts
 * lineHash("fn main() {"); // two lowercase hex digits
 * ```
 */
export function lineHash(line: string): string {
  const h = fnv1a32(encoder.encode(line));
  const folded = (h ^ (h >>> 8) ^ (h >>> 16) ^ (h >>> 24)) & 0xff;
  return folded.toString(16).padStart(2, "0");
}

/**
 * Format the `N:hh` id of a line: `N` is its 1-based number.
 *
 * @example
 * ```ts
 * formatLineId("}", 3); // "3:" + lineHash("}")
 * ```
 */
export function formatLineId(line: string, lineNumber: number): string {
  return `${lineNumber}:${lineHash(line)}`;
}
