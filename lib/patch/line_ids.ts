/**
 * `N:hh|` line-id prefixes copied from a read with line ids (the example
 * server's `read_file {line_ids: true}`) into a patch (SPEC §3 round 2).
 *
 * They are removed only when the ids prove themselves: every old-side line
 * of the chunk (context and `-`) carries one, each `hh` is the hash of the
 * text after the prefix (formatLineId, SPEC §5.6) and the numbers run
 * consecutively, as a copied window of the file does (an empty context
 * line without a prefix counts as the next number). Then the `+` lines'
 * prefixes go too (a model that copied a line and edited it keeps a stale
 * id, so their hashes are not required to match), and an `@@` anchor's
 * when its id matches. A chunk with no old side (a pure insertion) loses
 * its `+` prefixes only when every one of them matches its text. Anything
 * else keeps its text as sent: a file may contain such text itself, and
 * when the chunk then does not match, the planner names the prefix
 * (prefixedLines).
 *
 * @module
 */
import { lineHash } from "../text/line_id.ts";
import type { Chunk } from "../types.ts";

/** `12:ab|` at the start of a line: number, two hex digits, a bar. */
const PREFIX = /^(\d{1,9}):([0-9a-f]{2})\|/;

/** A prefix found on a line: its number, hash, length and whether the hash matches the rest. */
export interface LineIdPrefix {
  number: number;
  hash: string;
  length: number;
  /** `hh` is the hash of the text after the prefix. */
  matches: boolean;
}

/**
 * The `N:hh|` prefix at the start of `text`, or null.
 *
 * @example
 * ```ts
 * lineIdPrefix(`3:${lineHash("}")}|}`); // { number: 3, hash: "…", length: 5, matches: true }
 * ```
 */
export function lineIdPrefix(text: string): LineIdPrefix | null {
  const m = PREFIX.exec(text);
  if (m === null) return null;
  const length = m[0].length;
  return { number: Number(m[1]), hash: m[2]!, length, matches: lineHash(text.slice(length)) === m[2] };
}

/**
 * Remove proven `N:hh|` prefixes from a chunk in place; returns how many
 * lines (and anchors) lost one.
 *
 * @example
 * ```ts
 * const chunk = { anchors: [], endOfFile: false, patchLine: 3, lines: [{ kind: "delete" as const, text: `2:${lineHash("b")}|b`, patchLine: 4 }] };
 * stripChunkLineIds(chunk); // 1; chunk.lines[0].text === "b"
 * ```
 */
export function stripChunkLineIds(chunk: Chunk): number {
  const old = chunk.lines.filter((l) => l.kind !== "insert");
  const inserts = chunk.lines.filter((l) => l.kind === "insert");
  let proven: boolean;
  if (old.length > 0) {
    let previous = -1;
    let prefixed = 0;
    proven = old.every((l) => {
      const p = lineIdPrefix(l.text);
      if (p === null && l.kind === "context" && l.text.trim() === "") {
        // An empty line of the patch is an empty context line: a copied
        // empty file line whose prefix the model dropped still counts.
        if (previous >= 0) previous++;
        return true;
      }
      if (p === null || !p.matches || (previous >= 0 && p.number !== previous + 1)) return false;
      previous = p.number;
      prefixed++;
      return true;
    }) && prefixed > 0;
  } else {
    proven = inserts.length > 0 && inserts.every((l) => lineIdPrefix(l.text)?.matches === true);
  }
  if (!proven) return 0;
  let stripped = 0;
  for (const line of chunk.lines) {
    const p = lineIdPrefix(line.text);
    if (p === null) continue;
    line.text = line.text.slice(p.length);
    stripped++;
  }
  chunk.anchors = chunk.anchors.map((anchor) => {
    const p = lineIdPrefix(anchor);
    if (p === null || !p.matches) return anchor;
    stripped++;
    return anchor.slice(p.length);
  });
  return stripped;
}

/**
 * Remove `N:hh|` prefixes from an Add File's lines in place when every line
 * has one that matches its text and the numbers count up from 1 (a whole
 * file copied from a read); returns how many were removed.
 *
 * @example
 * ```ts
 * const lines = [`1:${lineHash("a")}|a`];
 * stripAddedLineIds(lines); // 1; lines[0] === "a"
 * ```
 */
export function stripAddedLineIds(lines: string[]): number {
  if (lines.length === 0) return 0;
  const prefixes = lines.map(lineIdPrefix);
  if (!prefixes.every((p, i) => p !== null && p.matches && p.number === i + 1)) return 0;
  for (let i = 0; i < lines.length; i++) lines[i] = lines[i]!.slice(prefixes[i]!.length);
  return lines.length;
}

/**
 * The patch lines of a chunk whose text still starts with an `N:hh|`
 * prefix (for the planner's diagnosis when such a chunk does not match).
 *
 * @example
 * ```ts
 * prefixedLines(chunk); // [{ patchLine: 4, prefix: "12:ab|", matches: false }]
 * ```
 */
export function prefixedLines(chunk: Chunk): { patchLine: number; prefix: string; matches: boolean }[] {
  const out: { patchLine: number; prefix: string; matches: boolean }[] = [];
  for (const line of chunk.lines) {
    const p = lineIdPrefix(line.text);
    if (p !== null) out.push({ patchLine: line.patchLine, prefix: line.text.slice(0, p.length), matches: p.matches });
  }
  return out;
}
