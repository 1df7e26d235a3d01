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
