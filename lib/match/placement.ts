/**
 * Where a located chunk goes: the value `locateChunks` produces and the
 * failure builders (`failures.ts`) read. It lives in its own file so that
 * both can import it without importing each other.
 *
 * @module
 */
import type { ChunkLine, MatchTier } from "../types.ts";

/** Where one chunk goes, and the body to apply there. */
export interface ChunkPlacement {
  /** 1-based chunk index. */
  index: number;
  /** 0-based first old line; for a pure insertion the line it goes before. */
  start: number;
  /** Exclusive; `start === end` for a pure insertion; `lines.length` appends. */
  end: number;
  tier: MatchTier;
  /**
   * The body as it must be applied (unescaped at tier 5, trailing blank
   * context dropped, `+` lines re-indented); its context and `-` lines
   * correspond 1:1, in order, to file lines `[start, end)`.
   */
  body: ChunkLine[];
}

/**
 * The placement a chunk found at `[s, s + m)` would share lines with (an
 * insertion counts when it falls strictly inside), if any.
 *
 * @example
 * ```ts
 * overlappedPlacement(2, 3, [{ index: 1, start: 3, end: 5, tier: 1, body: [] }])?.index; // 1
 * ```
 */
export function overlappedPlacement(s: number, m: number, placements: readonly ChunkPlacement[]): ChunkPlacement | undefined {
  return placements.find((p) => (p.end > p.start ? s < p.end && p.start < s + m : s < p.start && p.start < s + m));
}
