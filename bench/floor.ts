/**
 * The floor of SPEC §11: the least any planner must do with a file's bytes
 * — validate and decode UTF-8, split into lines, and hash the same bytes.
 * `planPatch` is measured as a multiple of this.
 *
 * @module
 */
import { createHash } from "node:crypto";

// Fatal: the planner must reject invalid UTF-8, so the floor validates too.
const decoder = new TextDecoder("utf-8", { fatal: true });

/** What the floor computes, returned so nothing is optimised away. */
export interface FloorResult {
  lineCount: number;
  sha256: string;
}

/**
 * Decode `bytes` as UTF-8 (fatal), split into lines, SHA-256 the bytes.
 *
 * @example
 * ```ts
 * floor(new TextEncoder().encode("a\nb\n")).lineCount; // 3 (split keeps the empty tail)
 * ```
 */
export function floor(bytes: Uint8Array): FloorResult {
  const lines = decoder.decode(bytes).split("\n");
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  return { lineCount: lines.length, sha256 };
}
