/**
 * Library-level peers of the benchmark, run in-process on the same file
 * bytes and patch text as ours:
 *
 * - {@linkcode naiveApply}: the Codex `apply_patch` algorithm written from
 *   its description — per chunk a forward scan from the cursor for the old
 *   lines, four tiers (exact, trim-end, trim, Unicode punctuation folded)
 *   each tried over the whole rest of the file in turn, the first match wins,
 *   no uniqueness check. One deliberate kindness: the output is assembled in
 *   one pass of slices (Codex splices a `Vec` per replaced line), so the
 *   comparison measures the locating strategy, not a slow join.
 * - {@linkcode diffApply}: the `diff` package's `applyPatch` on a unified
 *   diff made from the Codex patch by {@linkcode toUnifiedDiff} (a setup
 *   step, not timed: it needs real line numbers, which it gets by locating
 *   every chunk once).
 *
 * @module
 */
import { applyPatch as diffApplyPatch } from "diff";

/** One `@@` chunk of the Codex format, as the naive peer parses it. */
export interface NaiveChunk {
  /** The `@@ text` line, if any: the scan first moves past a line equal to it. */
  changeContext: string | null;
  oldLines: string[];
  newLines: string[];
  /** Each body line with its marker, in patch order (for the unified diff). */
  body: { marker: " " | "-" | "+"; text: string }[];
  isEndOfFile: boolean;
}

/** An `*** Update File` section as the naive peer parses it. */
export interface NaiveUpdate {
  path: string;
  chunks: NaiveChunk[];
}

/**
 * Parse the `*** Update File` sections of a Codex patch (the only kind the
 * benchmark's peers are given). Throws on anything else: a peer is never
 * fed a patch it cannot read.
 *
 * @example
 * ```ts
 * naiveParse("*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** End Patch")[0]!.chunks.length; // 1
 * ```
 */
export function naiveParse(patchText: string): NaiveUpdate[] {
  const lines = patchText.trim().split("\n");
  if (lines[0]?.trim() !== "*** Begin Patch" || lines[lines.length - 1]?.trim() !== "*** End Patch") {
    throw new Error("naiveParse: not a Codex patch");
  }
  const updates: NaiveUpdate[] = [];
  let chunk: NaiveChunk | null = null;
  const newChunk = (context: string | null): NaiveChunk => {
    const made: NaiveChunk = { changeContext: context, oldLines: [], newLines: [], body: [], isEndOfFile: false };
    updates[updates.length - 1]!.chunks.push(made);
    return made;
  };
  for (const line of lines.slice(1, -1)) {
    if (line.startsWith("*** Update File: ")) {
      updates.push({ path: line.slice("*** Update File: ".length), chunks: [] });
      chunk = null;
    } else if (updates.length === 0) {
      throw new Error(`naiveParse: unsupported section ${JSON.stringify(line)}`);
    } else if (line === "@@" || line.startsWith("@@ ")) {
      chunk = newChunk(line === "@@" ? null : line.slice(3));
    } else if (line === "*** End of File") {
      if (chunk) chunk.isEndOfFile = true;
    } else {
      chunk ??= newChunk(null);
      const marker = line === "" ? " " : line[0];
      const text = line.slice(1);
      if (marker === " ") {
        chunk.oldLines.push(text);
        chunk.newLines.push(text);
      } else if (marker === "-") {
        chunk.oldLines.push(text);
      } else if (marker === "+") {
        chunk.newLines.push(text);
      } else {
        throw new Error(`naiveParse: bad chunk line ${JSON.stringify(line)}`);
      }
      chunk.body.push({ marker, text });
    }
  }
  return updates;
}

const PUNCTUATION: Readonly<Record<string, string>> = {
  "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
  "\u2018": "'", "\u2019": "'", "\u201A": "'", "\u201B": "'",
  "\u201C": '"', "\u201D": '"', "\u201E": '"', "\u201F": '"',
  "\u00A0": " ", "\u2002": " ", "\u2003": " ", "\u2004": " ", "\u2005": " ", "\u2006": " ", "\u2007": " ",
  "\u2008": " ", "\u2009": " ", "\u200A": " ", "\u202F": " ", "\u205F": " ", "\u3000": " ",
};

function foldPunctuation(s: string): string {
  let out = "";
  for (const c of s.trim()) out += PUNCTUATION[c] ?? c;
  return out;
}

/** The four tiers, each a line comparison, applied per comparison as Codex does. */
const TIERS: readonly ((a: string, b: string) => boolean)[] = [
  (a, b) => a === b,
  (a, b) => a.trimEnd() === b.trimEnd(),
  (a, b) => a.trim() === b.trim(),
  (a, b) => foldPunctuation(a) === foldPunctuation(b),
];

/**
 * Codex's `seek_sequence`: the first index at or after `start` where
 * `pattern` matches, trying each tier over the whole range before the next.
 */
export function seekSequence(lines: readonly string[], pattern: readonly string[], start: number, eof: boolean): number {
  if (pattern.length === 0) return start;
  if (pattern.length > lines.length) return -1;
  const from = eof ? lines.length - pattern.length : start;
  const last = lines.length - pattern.length;
  for (const equal of TIERS) {
    for (let i = from; i <= last; i++) {
      let j = 0;
      while (j < pattern.length && equal(lines[i + j]!, pattern[j]!)) j++;
      if (j === pattern.length) return i;
    }
  }
  return -1;
}

/** Where one chunk goes: replace `length` lines at `start` with `lines`. */
export interface Replacement {
  start: number;
  length: number;
  lines: string[];
}

/**
 * Codex's `compute_replacements`: locate each chunk from the cursor, first
 * match wins. Returns `null` when a chunk (or its `@@` context) is not found.
 */
export function computeReplacements(lines: readonly string[], chunks: readonly NaiveChunk[]): Replacement[] | null {
  const replacements: Replacement[] = [];
  let cursor = 0;
  for (const chunk of chunks) {
    if (chunk.changeContext !== null) {
      const at = seekSequence(lines, [chunk.changeContext], cursor, false);
      if (at < 0) return null;
      cursor = at + 1;
    }
    if (chunk.oldLines.length === 0) {
      // Codex appends pure insertions at end of file.
      replacements.push({ start: lines.length, length: 0, lines: chunk.newLines });
      continue;
    }
    let pattern = chunk.oldLines;
    let replacement = chunk.newLines;
    let found = seekSequence(lines, pattern, cursor, chunk.isEndOfFile);
    if (found < 0 && pattern[pattern.length - 1] === "") {
      pattern = pattern.slice(0, -1);
      if (replacement[replacement.length - 1] === "") replacement = replacement.slice(0, -1);
      found = seekSequence(lines, pattern, cursor, chunk.isEndOfFile);
    }
    if (found < 0) return null;
    replacements.push({ start: found, length: pattern.length, lines: replacement });
    cursor = found + pattern.length;
  }
  return replacements.sort((a, b) => a.start - b.start);
}

const fatalDecoder = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/**
 * The naive peer end to end: decode the file, parse the patch, locate first
 * matches, rebuild, encode. `null` when a chunk does not match.
 *
 * @example
 * ```ts
 * const out = naiveApply(new TextEncoder().encode("a\nb\n"), "*** Begin Patch\n*** Update File: f\n@@\n-b\n+c\n*** End Patch");
 * new TextDecoder().decode(out!); // "a\nc\n"
 * ```
 */
export function naiveApply(fileBytes: Uint8Array, patchText: string): Uint8Array | null {
  const update = naiveParse(patchText)[0]!;
  const lines = fatalDecoder.decode(fileBytes).split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const replacements = computeReplacements(lines, update.chunks);
  if (replacements === null) return null;
  const out: string[] = [];
  let cursor = 0;
  for (const r of replacements) {
    for (let i = cursor; i < r.start; i++) out.push(lines[i]!);
    for (const line of r.lines) out.push(line);
    cursor = r.start + r.length;
  }
  for (let i = cursor; i < lines.length; i++) out.push(lines[i]!);
  if (out[out.length - 1] !== "") out.push("");
  return encoder.encode(out.join("\n"));
}

/**
 * Convert a one-file Codex Update patch to a unified diff against
 * `fileText`, locating every chunk (first exact-or-fuzzy match, as the
 * naive peer does) to get real line numbers. Setup for the `diff`, `git
 * apply` and GNU `patch` peers; throws when a chunk cannot be placed.
 *
 * @example
 * ```ts
 * toUnifiedDiff("a\nb\n", "*** Begin Patch\n*** Update File: f\n@@\n-b\n+c\n*** End Patch");
 * // "--- a/f\n+++ b/f\n@@ -2,1 +2,1 @@\n-b\n+c\n"
 * ```
 */
export function toUnifiedDiff(fileText: string, patchText: string): string {
  const update = naiveParse(patchText)[0]!;
  const lines = fileText.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const out = [`--- a/${update.path}`, `+++ b/${update.path}`];
  let cursor = 0;
  let delta = 0;
  for (const chunk of update.chunks) {
    if (chunk.oldLines.length === 0 || chunk.changeContext !== null) {
      throw new Error("toUnifiedDiff: chunks without old lines or with @@ context are not converted");
    }
    const start = seekSequence(lines, chunk.oldLines, cursor, chunk.isEndOfFile);
    if (start < 0) throw new Error("toUnifiedDiff: a chunk does not match the file");
    const oldCount = chunk.oldLines.length;
    const newCount = chunk.newLines.length;
    out.push(`@@ -${start + 1},${oldCount} +${start + 1 + delta},${newCount} @@`);
    // The file's own text for context lines, as ours keeps it.
    let at = start;
    for (const line of chunk.body) {
      if (line.marker === "+") out.push("+" + line.text);
      else out.push(line.marker + lines[at++]!);
    }
    delta += newCount - oldCount;
    cursor = start + oldCount;
  }
  return out.join("\n") + "\n";
}

/**
 * The `diff` package's peer end to end: decode, `applyPatch` with the
 * unified diff text (parsed each call, as a caller would), encode. `null`
 * when it does not apply.
 *
 * @example
 * ```ts
 * const out = diffApply(new TextEncoder().encode("a\nb\n"), "--- a/f\n+++ b/f\n@@ -2,1 +2,1 @@\n-b\n+c\n");
 * ```
 */
export function diffApply(fileBytes: Uint8Array, unifiedDiff: string): Uint8Array | null {
  const result = diffApplyPatch(fatalDecoder.decode(fileBytes), unifiedDiff);
  return result === false ? null : encoder.encode(result);
}
