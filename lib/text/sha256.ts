/**
 * SHA-256 as lowercase hex, the identity of a file version everywhere in the
 * library (snapshots, plans, preconditions, reports).
 *
 * @module
 */
import { createHash } from "node:crypto";

/**
 * Lowercase hex SHA-256 of some bytes (or of a string's UTF-8 bytes).
 *
 * @example
 * ```ts
 * sha256Hex(new Uint8Array()); // "e3b0c442…b855"
 * ```
 */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * Lowercase hex SHA-256 of the concatenation of `parts`, without making it.
 *
 * @example
 * ```ts
 * sha256HexOfParts([new Uint8Array([0x61]), new Uint8Array([0x62, 0x63])]) === sha256Hex("abc"); // true
 * ```
 */
export function sha256HexOfParts(parts: readonly Uint8Array[]): string {
  const hash = createHash("sha256");
  for (const part of parts) if (part.length > 0) hash.update(part);
  return hash.digest("hex");
}

/**
 * Whether a string is a well-formed SHA-256 hex digest (64 hex digits, any case).
 *
 * @example
 * ```ts
 * isSha256Hex("abc"); // false
 * ```
 */
export function isSha256Hex(value: string): boolean {
  return /^[0-9a-fA-F]{64}$/.test(value);
}
