/**
 * Default limits and their resolution.
 *
 * @module
 */
import type { Limits } from "../types.ts";

/**
 * Defaults sized for real work (40 MB files are a design target) while
 * bounding what one model call can make the host do.
  *
  * @example
  * ```ts
  * DEFAULT_LIMITS.maxFileBytes; // 134217728 (128 MiB)
  * await applyPatch(shell, { root, patch, limits: { ...DEFAULT_LIMITS, maxFiles: 10 } });
  * ```
 */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  maxPatchBytes: 16 * 1024 * 1024,
  maxFiles: 100,
  maxChunksPerFile: 1000,
  maxFileBytes: 128 * 1024 * 1024,
});

/**
 * Fill missing limits with the defaults.
 *
 * @example
 * ```ts
 * resolveLimits({ maxFiles: 5 }).maxFileBytes; // 134217728
 * ```
 */
export function resolveLimits(partial: Partial<Limits> | undefined): Limits {
  return { ...DEFAULT_LIMITS, ...partial };
}
