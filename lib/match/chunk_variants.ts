/**
 * The forms of a chunk the matcher may try (SPEC §5.1, §5.2): as sent; with
 * trailing blank context lines dropped (Codex leniency); with literal escapes
 * unescaped (tier 5); and both. Plus the indentation-delta logic that
 * re-indents `+` lines after a match that ignored leading whitespace.
 *
 * @module
 */
import { contentStart, hasEscapes, indentationOf, unescapeLiterals } from "./normalize.ts";
import type { Chunk, ChunkLine } from "../types.ts";

/** One form of a chunk's body. */
export interface ChunkVariant {
  /** The body lines as they would be applied. */
  body: ChunkLine[];
  /** Context and `-` lines, in order: what must be in the file. */
  oldTexts: string[];
  /** Context and `+` lines, in order: what the file holds after the change. */
  newTexts: string[];
  /** Trailing blank context lines dropped from the chunk as sent. */
  droppedBlank: number;
  /** Literal escapes were unescaped (tier 5). */
  unescaped: boolean;
}

/** Every form of one chunk, prepared once. */
export interface ChunkForms {
  /** As sent. */
  full: ChunkVariant;
  /** Trailing blank context lines dropped, when there are any and something remains. */
  dropped?: ChunkVariant;
  /** Unescaped (tier 5), when that changes anything. */
  escaped?: ChunkVariant;
  /** Unescaped, then trailing blank context dropped. */
  escapedDropped?: ChunkVariant;
  /** Anchors as sent. */
  anchors: string[];
  /** Unescaped anchors (undefined when unchanged or when they would span lines). */
  escapedAnchors: (string | undefined)[];
}

function variantOf(body: ChunkLine[], droppedBlank: number, unescaped: boolean): ChunkVariant {
  const oldTexts: string[] = [];
  const newTexts: string[] = [];
  for (const line of body) {
    if (line.kind !== "insert") oldTexts.push(line.text);
    if (line.kind !== "delete") newTexts.push(line.text);
  }
  return { body, oldTexts, newTexts, droppedBlank, unescaped };
}

function withoutTrailingBlankContext(variant: ChunkVariant): ChunkVariant | undefined {
  let end = variant.body.length;
  while (end > 0) {
    const line = variant.body[end - 1]!;
    if (line.kind !== "context" || line.text.trim() !== "") break;
    end--;
  }
  const dropped = variant.body.length - end;
  if (dropped === 0) return undefined;
  const next = variantOf(variant.body.slice(0, end), dropped, variant.unescaped);
  return next.oldTexts.length > 0 ? next : undefined;
}

function unescapedBody(body: readonly ChunkLine[]): ChunkLine[] | undefined {
  if (!body.some((line) => hasEscapes(line.text))) return undefined;
  const out: ChunkLine[] = [];
  for (const line of body) {
    for (const text of unescapeLiterals(line.text).split("\n")) out.push({ kind: line.kind, text, patchLine: line.patchLine });
  }
  return out;
}

/**
 * Prepare every form of a chunk; `lenient` enables tier 5.
 *
 * @example
 * ```ts
 * const forms = chunkForms({ anchors: [], lines: [{ kind: "context", text: "a", patchLine: 2 }], endOfFile: false, patchLine: 1 }, true);
 * forms.full.oldTexts; // ["a"]
 * ```
 */
export function chunkForms(chunk: Chunk, lenient: boolean): ChunkForms {
  const full = variantOf(chunk.lines.slice(), 0, false);
  const escapedLines = lenient ? unescapedBody(chunk.lines) : undefined;
  const escaped = escapedLines ? variantOf(escapedLines, 0, true) : undefined;
  const escapedAnchors = chunk.anchors.map((anchor) => {
    if (!lenient || !hasEscapes(anchor)) return undefined;
    const text = unescapeLiterals(anchor);
    return text.includes("\n") ? undefined : text;
  });
  const forms: ChunkForms = { full, anchors: chunk.anchors, escapedAnchors };
  const dropped = withoutTrailingBlankContext(full);
  if (dropped) forms.dropped = dropped;
  if (escaped) {
    forms.escaped = escaped;
    const escapedDropped = withoutTrailingBlankContext(escaped);
    if (escapedDropped) forms.escapedDropped = escapedDropped;
  }
  return forms;
}

/** How the file's indentation differs from the chunk's over a match. */
export type IndentDelta =
  | { kind: "same" }
  | { kind: "add"; prefix: string }
  | { kind: "remove"; prefix: string }
  | { kind: "uneven"; pairs: IndentPair[] };

/** One matched line's indentation in the file and in the chunk. */
export interface IndentPair {
  /** 0-based file line. */
  fileLine: number;
  chunkLine: ChunkLine;
  fileIndent: string;
  chunkIndent: string;
}

/**
 * Compare the leading whitespace of matched file lines `[start, …)` with the
 * chunk's old lines; blank lines are ignored. `lines` is the file's lines,
 * or a function giving line `i` (so only the matched lines are read).
 *
 * @example
 * ```ts
 * indentDelta(["    a"], 0, [{ kind: "context", text: "a", patchLine: 1 }]); // { kind: "add", prefix: "    " }
 * ```
 */
export function indentDelta(lines: readonly string[] | ((index: number) => string), start: number, body: readonly ChunkLine[]): IndentDelta {
  const lineAt = typeof lines === "function" ? lines : (i: number): string => lines[i]!;
  let delta: IndentDelta | undefined;
  let first: IndentPair | undefined;
  let at = start;
  for (const line of body) {
    if (line.kind === "insert") continue;
    const fileText = lineAt(at);
    const fileLine = at++;
    if (contentStart(fileText) === fileText.length || contentStart(line.text) === line.text.length) continue;
    const fileIndent = indentationOf(fileText);
    const chunkIndent = indentationOf(line.text);
    const pair: IndentPair = { fileLine, chunkLine: line, fileIndent, chunkIndent };
    let here: IndentDelta;
    if (fileIndent === chunkIndent) here = { kind: "same" };
    else if (fileIndent.endsWith(chunkIndent)) here = { kind: "add", prefix: fileIndent.slice(0, fileIndent.length - chunkIndent.length) };
    else if (chunkIndent.endsWith(fileIndent)) here = { kind: "remove", prefix: chunkIndent.slice(0, chunkIndent.length - fileIndent.length) };
    else return { kind: "uneven", pairs: [pair] };
    if (delta === undefined || first === undefined) {
      delta = here;
      first = pair;
    } else if (delta.kind !== here.kind || ("prefix" in delta && "prefix" in here && delta.prefix !== here.prefix)) {
      return { kind: "uneven", pairs: [first, pair] };
    }
  }
  return delta ?? { kind: "same" };
}

/**
 * Apply an add/remove delta to the `+` lines of a body. Returns undefined
 * when a `+` line is less indented than the prefix to remove.
 *
 * @example
 * ```ts
 * reindentInserts([{ kind: "insert", text: "b", patchLine: 2 }], { kind: "add", prefix: "  " })![0]!.text; // "  b"
 * ```
 */
export function reindentInserts(body: readonly ChunkLine[], delta: IndentDelta): ChunkLine[] | undefined {
  if (delta.kind !== "add" && delta.kind !== "remove") return body.slice();
  const out: ChunkLine[] = [];
  for (const line of body) {
    if (line.kind !== "insert" || contentStart(line.text) === line.text.length) {
      out.push(line);
      continue;
    }
    if (delta.kind === "add") out.push({ ...line, text: delta.prefix + line.text });
    else if (line.text.startsWith(delta.prefix)) out.push({ ...line, text: line.text.slice(delta.prefix.length) });
    else return undefined;
  }
  return out;
}

/**
 * Whether a body has a `+` line with text (one whose indentation matters).
 *
 * @example
 * ```ts
 * hasTextInserts([{ kind: "insert", text: "", patchLine: 1 }]); // false
 * ```
 */
export function hasTextInserts(body: readonly ChunkLine[]): boolean {
  return body.some((line) => line.kind === "insert" && contentStart(line.text) < line.text.length);
}

/**
 * Describe whitespace visibly (`4 spaces`, `1 tab`, `2 tabs + 1 space`).
 *
 * @example
 * ```ts
 * describeWhitespace("\t  "); // "1 tab + 2 spaces"
 * ```
 */
export function describeWhitespace(ws: string): string {
  if (ws.length === 0) return "no indentation";
  const parts: string[] = [];
  let i = 0;
  while (i < ws.length) {
    const ch = ws[i]!;
    let j = i;
    while (j < ws.length && ws[j] === ch) j++;
    const count = j - i;
    const name = ch === " " ? "space" : ch === "\t" ? "tab" : `U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
    parts.push(`${count} ${name}${count === 1 ? "" : "s"}`);
    i = j;
  }
  return parts.join(" + ");
}
