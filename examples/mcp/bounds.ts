/**
 * Bounds on what one tool result may carry (SPEC §9 round 2): a 13 MB
 * delete's diff must not become a 13 MB response that the client's
 * transport refuses ("Connection closed" although the delete succeeded).
 *
 * - Diffs are cut at a line boundary (inside a line only when one line
 *   alone is over the budget), in the text block and again in
 *   `structuredContent` (where the budget is shared by the files in order;
 *   a cut file carries `diff_truncated: true` and `diff_bytes`, its full
 *   size).
 * - {@linkcode guardResult} is the last line of defence for any result:
 *   text blocks over the result budget are cut with a note.
 *
 * @module
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** Default budget of diffs in one result, in UTF-8 bytes (text, and again structuredContent). */
export const DEFAULT_DIFF_BUDGET_BYTES: number = 256 * 1024;

/** Most bytes of all text blocks of one result together. */
export const RESULT_TEXT_BUDGET_BYTES: number = 1024 * 1024;

const encoder = new TextEncoder();

/** A diff cut to a budget. */
export interface CutText {
  text: string;
  /** UTF-8 bytes of `text`. */
  bytes: number;
  /** UTF-8 bytes of the whole input. */
  total: number;
  cut: boolean;
}

/**
 * `text` cut within `budget` UTF-8 bytes: after the last whole line that
 * fits, or inside the first line when even that one does not fit (never
 * inside a UTF-8 sequence or surrogate pair).
 *
 * @example
 * ```ts
 * cutText("a\nbb\nccc\n", 5).text; // "a\nbb\n"
 * ```
 */
export function cutText(text: string, budget: number): CutText {
  const total = encoder.encode(text).length;
  if (total <= budget) return { text, bytes: total, total, cut: false };
  let bytes = 0;
  let end = 0;
  let lastLineEnd = 0;
  let bytesAtLineEnd = 0;
  while (end < text.length) {
    const code = text.charCodeAt(end);
    const width = code >= 0xd800 && code <= 0xdbff ? 2 : 1;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : width === 2 ? 4 : 3;
    if (bytes + size > budget) break;
    bytes += size;
    end += width;
    if (code === 0x0a) {
      lastLineEnd = end;
      bytesAtLineEnd = bytes;
    }
  }
  if (lastLineEnd > 0) return { text: text.slice(0, lastLineEnd), bytes: bytesAtLineEnd, total, cut: true };
  return { text: text.slice(0, end), bytes, total, cut: true };
}

/** A file report's diff fields after bounding. */
export interface BoundedDiffFields {
  diff: string;
  diff_truncated?: true;
  diff_bytes?: number;
}

/**
 * Copies of `files` whose diffs together fit `budget` bytes; a cut diff
 * gets `diff_truncated: true` and `diff_bytes` (its full size).
 *
 * @example
 * ```ts
 * const files = boundFileDiffs(report.files, 256 * 1024);
 * ```
 */
export function boundFileDiffs<T extends { diff: string }>(files: readonly T[], budget: number): (T & BoundedDiffFields)[] {
  let left = budget;
  return files.map((file) => {
    if (file.diff === "") return file;
    const cut = cutText(file.diff, Math.max(0, left));
    left -= cut.bytes;
    return cut.cut ? { ...file, diff: cut.text, diff_truncated: true as const, diff_bytes: cut.total } : file;
  });
}

/**
 * The note after a cut diff: how much is shown, and how to see more.
 *
 * @example
 * ```ts
 * diffCutNote(1000, 5000); // "[diff cut: 1000 of 5000 bytes shown. …]"
 * ```
 */
export function diffCutNote(shown: number, total: number): string {
  return `[diff cut: ${shown} of ${total} bytes shown. To see one file's change whole, send the same patch with only that file's section and dry_run: true (nothing is changed), or read_file the lines around each change.]`;
}

/**
 * The result with its text blocks cut so that together they stay within
 * `budget` bytes (each cut block ends with a note). Results already within
 * the budget are returned as they are.
 *
 * @example
 * ```ts
 * return guardResult({ content: blocks, structuredContent: out });
 * ```
 */
export function guardResult(result: CallToolResult, budget: number = RESULT_TEXT_BUDGET_BYTES): CallToolResult {
  const sizes = result.content.map((block) => (block.type === "text" ? encoder.encode(block.text).length : 0));
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total <= budget) return result;
  let left = budget;
  const content = result.content.map((block, i) => {
    if (block.type !== "text") return block;
    const cut = cutText(block.text, Math.max(0, Math.min(left, sizes[i]!)));
    left -= cut.bytes;
    if (!cut.cut) return block;
    return { ...block, text: `${cut.text}\n[cut: ${cut.bytes} of ${cut.total} bytes of this block shown; the result would be too large for the transport]` };
  });
  return { ...result, content };
}
