/**
 * Bounded excerpts for failure messages (SPEC §5.4): never the whole file,
 * long lines cut with an ellipsis, every shown file line with its `N:hh` id.
 *
 * @module
 */
import { formatLineId } from "./line_id.ts";
import type { LineRef } from "../types.ts";

/**
 * The lines of a file as excerpts read them: an array, or a view that makes
 * only the lines read into strings (a decoded file of a million lines is
 * not split to show forty of them).
 */
export interface LineSource {
  readonly length: number;
  /** Line `index` (0-based, within `0 ≤ index < length`). */
  at(index: number): string | undefined;
}

/** The bounds of one excerpt. */
export interface ExcerptLimits {
  /** Most lines (default 40). */
  lines: number;
  /** Most UTF-8 bytes, approximately (default 4096). */
  bytes: number;
}

/** Longest line shown in an excerpt, in UTF-16 code units. */
export const MAX_LINE_CHARS = 240;

const encoder = new TextEncoder();

/**
 * Cut a line to `max` code units, marking the cut with an ellipsis.
 *
 * @example
 * ```ts
 * cutLine("abcdef", 4); // "abc…"
 * ```
 */
export function cutLine(text: string, max: number = MAX_LINE_CHARS): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  // Never split a surrogate pair.
  const c = text.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return text.slice(0, end) + "…";
}

/**
 * The {@linkcode LineRef} of 0-based file line `index`.
 *
 * @example
 * ```ts
 * lineRef(["a", "b"], 1); // { line: 2, id: "2:..", text: "b" }
 * ```
 */
export function lineRef(lines: LineSource, index: number): LineRef {
  const text = lines.at(index)!;
  return { line: index + 1, id: formatLineId(text, index + 1), text: cutLine(text) };
}

/**
 * One excerpt line as models see it: `N:hh  text`.
 *
 * @example
 * ```ts
 * formatRef({ line: 3, id: "3:0e", text: "}" }); // "3:0e  }"
 * ```
 */
export function formatRef(ref: LineRef): string {
  return `${ref.id}  ${ref.text}`;
}

/**
 * Take items while they fit the limits (every item is one shown line).
 * Returns how many fit; at least one when there is any and it fits the
 * byte limit after cutting.
 *
 * @example
 * ```ts
 * fitCount(["a", "b", "c"], { lines: 2, bytes: 4096 }); // 2
 * ```
 */
export function fitCount(items: readonly string[], limits: ExcerptLimits): number {
  let bytes = 0;
  let count = 0;
  for (const item of items) {
    if (count >= limits.lines) break;
    bytes += encoder.encode(item).length + 1;
    if (bytes > limits.bytes && count > 0) break;
    count++;
  }
  return count;
}

/**
 * The lines of a bounded excerpt, indented, with a marker for what was left
 * out.
 *
 * @example
 * ```ts
 * boundedBlock(["a", "b", "c"], { lines: 2, bytes: 4096 }); // "  a\n  b\n  … (1 more line)"
 * ```
 */
export function boundedBlock(items: readonly string[], limits: ExcerptLimits, indent = "  "): string {
  const shown = items.map((item) => indent + item);
  const count = fitCount(shown, limits);
  const out = shown.slice(0, count);
  const more = items.length - count;
  if (more > 0) out.push(`${indent}… (${more} more line${more === 1 ? "" : "s"})`);
  return out.join("\n");
}

/**
 * File lines `[from, to)` (clipped) as bounded {@linkcode LineRef}s.
 *
 * @example
 * ```ts
 * refsOf(["a", "b", "c"], 1, 3, { lines: 40, bytes: 4096 }).map((r) => r.line); // [2, 3]
 * ```
 */
export function refsOf(lines: LineSource, from: number, to: number, limits: ExcerptLimits): LineRef[] {
  const start = Math.max(0, from);
  const end = Math.min(lines.length, to, start + limits.lines);
  const refs: LineRef[] = [];
  let bytes = 0;
  for (let i = start; i < end; i++) {
    const ref = lineRef(lines, i);
    bytes += encoder.encode(ref.text).length + ref.id.length + 3;
    if (bytes > limits.bytes && refs.length > 0) break;
    refs.push(ref);
  }
  return refs;
}

/**
 * A 1-based inclusive line range in words.
 *
 * @example
 * ```ts
 * lineRange(4, 7); // "lines 5–7"
 * ```
 */
export function lineRange(start: number, end: number): string {
  if (end - start <= 1) return `line ${start + 1}`;
  return `lines ${start + 1}–${end}`;
}
