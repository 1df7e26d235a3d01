/**
 * Diagnoses of chunks that a model got wrong in a recognisable way (SPEC
 * §5.4 round 2), said instead of the generic failure — or instead of a
 * guess that would have succeeded wrongly:
 *
 * - context lines that lost their leading ' ' marker: `    x = 1` was read
 *   as the context line `   x = 1`, one space short. When reading every
 *   context line with its marker as content matches the file exactly and
 *   uniquely, the chunk fails naming those lines — also when the chunk as
 *   read would have matched ignoring indentation and had its `+` lines
 *   re-indented by that one space (a wrong edit that looked fine);
 * - `--- a/x` / `+++ b/x` at the top of an Update section, which Codex reads
 *   as the body lines "delete `-- a/x`", "insert `++ b/x`" (lib/patch/unified.ts);
 * - `N:hh|` line-id prefixes that were not removed (lib/patch/line_ids.ts).
 *
 * Each runs only for a chunk that already failed or matched fuzzily, so a
 * patch that applies exactly costs nothing more.
 *
 * @module
 */
import { failure } from "../failure.ts";
import { locateChunks, type LocateOptions } from "../match/locate.ts";
import { prefixedLines } from "../patch/line_ids.ts";
import { lineOf, type TextFile } from "../text/text.ts";
import type { ChunkPlacement } from "../match/placement.ts";
import type { Chunk, FailureOf, PatchFailure, UpdateFileOp, Warning } from "../types.ts";

/** What the diagnoses need of the file and the chunk search. */
export interface ChunkDiagnosisEnv {
  file: TextFile;
  op: UpdateFileOp;
  locate: Omit<LocateOptions, "matching" | "detail">;
}

/**
 * Replace the failures of chunks that match a recognisable mistake by
 * their diagnosis (others are returned unchanged). The lost-marker readings
 * of all failing chunks are located together, in one pass over the file —
 * except those of the chunks in `absent` (locate's `absent`: found nowhere
 * even ignoring leading and trailing whitespace, so a reading that only
 * adds a space at the start of lines cannot match either); when every
 * reading is such, the file is not searched again at all.
 *
 * @example
 * ```ts
 * const errors = diagnoseChunkFailures(env, located.errors, located.absent);
 * ```
 */
export function diagnoseChunkFailures(env: ChunkDiagnosisEnv, errors: readonly PatchFailure[], absent: ReadonlySet<number> = new Set()): PatchFailure[] {
  const candidates = errors.map((e) => {
    if (e.hunk === undefined || e.alreadyAppliedAt !== undefined) return undefined;
    if (e.code !== "context_mismatch" && e.code !== "ambiguous_hunk" && e.code !== "anchor_not_found") return undefined;
    const chunk = env.op.chunks[e.hunk - 1];
    const alternative = chunk === undefined || absent.has(e.hunk) ? undefined : withMarkersAsContent(chunk);
    return chunk === undefined ? undefined : { e, chunk, hunk: e.hunk, alternative };
  });
  const readings = candidates.filter((c) => c?.alternative !== undefined);
  const found = readings.length === 0 ? new Map<number, { start: number; end: number }>() : exactPlacements(env, readings.map((c) => c!.alternative!.chunk));
  return errors.map((e, k) => {
    const c = candidates[k];
    if (c === undefined) return e;
    const at = c.alternative ? found.get(readings.indexOf(c) + 1) : undefined;
    if (c.alternative && at) return lostMarkers(env, c.chunk, c.hunk, c.alternative.lines, at, "failed");
    return e.code === "context_mismatch" ? diffHeaders(env, c.chunk, e) ?? lineIdPrefixes(env, c.chunk, e) ?? e : e;
  });
}

/**
 * A failure for each chunk that matched only by re-indenting its `+` lines
 * (an `indentation_adjusted` warning) while its context lines, read with
 * their marker as content, equal the file exactly where it matched: the
 * re-indent was a guess. Costs one comparison per line of such a chunk.
 *
 * @example
 * ```ts
 * const guessed = guessedIndentation(env, located.warnings, located.placements);
 * ```
 */
export function guessedIndentation(env: ChunkDiagnosisEnv, warnings: readonly Warning[], placements: readonly ChunkPlacement[]): PatchFailure[] {
  const out: PatchFailure[] = [];
  // By chunk index: a patch of thousands of re-indented chunks must not
  // search the placements once per warning (that was file × patch work).
  let byIndex: Map<number, ChunkPlacement> | undefined;
  for (const w of warnings) {
    if (w.code !== "indentation_adjusted" || w.hunk === undefined) continue;
    const chunk = env.op.chunks[w.hunk - 1];
    byIndex ??= new Map(placements.map((p) => [p.index, p]));
    const placed = byIndex.get(w.hunk);
    const alternative = chunk ? withMarkersAsContent(chunk) : undefined;
    if (!chunk || !placed || !alternative) continue;
    const old = alternative.chunk.lines.filter((l) => l.kind !== "insert").map((l) => l.text);
    if (old.length !== placed.end - placed.start) continue;
    if (!old.every((text, j) => lineOf(env.file, placed.start + j) === text)) continue;
    out.push(lostMarkers(env, chunk, w.hunk, alternative.lines, { start: placed.start, end: placed.end }, "adjusted"));
  }
  return out;
}

/** The chunk, with every indented context line's marker read as content. */
function withMarkersAsContent(chunk: Chunk): { chunk: Chunk; lines: number[] } | undefined {
  const lines: number[] = [];
  const body = chunk.lines.map((l) => {
    if (l.kind !== "context" || l.text === "" || !/^[ \t]/.test(l.text)) return l;
    lines.push(l.patchLine);
    return { ...l, text: " " + l.text };
  });
  return lines.length === 0 ? undefined : { chunk: { ...chunk, lines: body }, lines };
}

/** Where each chunk (by 1-based index) matches exactly, located together in file order. */
function exactPlacements(env: ChunkDiagnosisEnv, chunks: Chunk[]): Map<number, { start: number; end: number }> {
  const r = locateChunks(env.file, chunks, { ...env.locate, matching: "exact", detail: 0 });
  return new Map(r.placements.map((p) => [p.index, { start: p.start, end: p.end }]));
}

function lostMarkers(env: ChunkDiagnosisEnv, chunk: Chunk, hunk: number, lines: readonly number[], at: { start: number; end: number }, why: "failed" | "adjusted"): PatchFailure {
  const path = env.op.path;
  const range = at.end - at.start <= 1 ? `line ${at.start + 1}` : `lines ${at.start + 1}–${at.end}`;
  const asSent = why === "adjusted"
    ? `As sent, the chunk matches there only when indentation is ignored, and its '+' lines would have been re-indented by the difference, which is a guess.`
    : `As sent, the chunk does not match.`;
  return failure(
    "context_mismatch",
    `context_mismatch: chunk ${hunk} of ${path} (patch line ${chunk.patchLine}): its context ${plural(lines.length, "line")} ${lineList(lines)} look${lines.length === 1 ? "s" : ""} like ${lines.length === 1 ? "it" : "they"} lost the leading ' ' marker: read with that space as part of the text (the marker missing, the file's indentation intact), the chunk matches ${path} exactly at ${range}${why === "failed" ? ", and nowhere else" : ""}. ${asSent} Next step: put ' ' at the start of patch ${plural(lines.length, "line")} ${lineList(lines)}, before the file's own indentation, and send the patch again.`,
    { path, hunk, patchLine: chunk.patchLine, line: at.start + 1, unmarkedLines: [...lines] },
  );
}

/** `--- a/x` and `+++ b/x` read as the first two body lines of an Update section. */
function diffHeaders(env: ChunkDiagnosisEnv, chunk: Chunk, e: PatchFailure): PatchFailure | undefined {
  const [a, b] = chunk.lines;
  if (e.hunk !== 1 || a?.kind !== "delete" || b?.kind !== "insert" || !a.text.startsWith("-- ") || !b.text.startsWith("++ ")) return undefined;
  const names = [a.text.slice(3), b.text.slice(3)].map((n) => n.split("\t")[0]!.trim());
  const path = env.op.path;
  const looksLikePath = (n: string): boolean => n === path || n === `a/${path}` || n === `b/${path}` || n === "/dev/null" || n.endsWith(`/${path}`);
  if (!names.every(looksLikePath)) return undefined;
  return failure(
    "context_mismatch",
    `context_mismatch: chunk 1 of ${path} (patch line ${chunk.patchLine}): patch lines ${a.patchLine} and ${b.patchLine} ("-${a.text}", "+${b.text}") look like the file headers of a unified diff, but under '*** Update File: ${path}' every line that starts with '-' or '+' is a change: as sent, the chunk deletes a line "${a.text}" the file does not have. Next step: remove these two lines (the section header already names the file) and send the patch again; keep the '@@' line and the ' ', '-' and '+' lines below it.`,
    { path, hunk: 1, patchLine: a.patchLine },
  );
}

/** A failing chunk whose lines still carry `N:hh|` prefixes (they did not prove themselves). */
function lineIdPrefixes(env: ChunkDiagnosisEnv, chunk: Chunk, e: FailureOf<"context_mismatch">): PatchFailure | undefined {
  const prefixed = prefixedLines(chunk);
  if (prefixed.length === 0) return undefined;
  const path = env.op.path;
  const stale = prefixed.filter((p) => !p.matches);
  const why = stale.length > 0
    ? `${stale.length === 1 ? "The id" : "Some ids"} (first: patch line ${stale[0]!.patchLine} "${stale[0]!.prefix}") ${stale.length === 1 ? "does" : "do"} not match the text after ${stale.length === 1 ? "it" : "them"}, so the prefixes were kept as text and not removed.`
    : `Not every old-side line carries one with consecutive numbers, so the prefixes were kept as text and not removed.`;
  return failure(
    e.code,
    `${e.code}: chunk ${e.hunk} of ${path} (patch line ${chunk.patchLine}): patch ${plural(prefixed.length, "line")} ${lineList(prefixed.map((p) => p.patchLine))} start${prefixed.length === 1 ? "s" : ""} with a line-id prefix such as "${prefixed[0]!.prefix}", as a read with line ids shows the file's lines. The ids are not part of the file's text, and with them the chunk matches nothing. ${why} Next step: remove the "N:hh|" prefix from every line of the chunk (keep the ' ', '-' or '+' marker in front of the text) and send the patch again.`,
    { path, hunk: e.hunk, patchLine: prefixed[0]!.patchLine },
  );
}

function plural(n: number, word: string): string {
  return n === 1 ? word : `${word}s`;
}

function lineList(lines: readonly number[]): string {
  const shown = lines.slice(0, 8);
  const more = lines.length > 8 ? ` and ${lines.length - 8} more` : "";
  if (shown.length <= 1) return shown.join("") + more;
  return more !== "" ? `${shown.join(", ")}${more}` : `${shown.slice(0, -1).join(", ")} and ${shown.at(-1)}`;
}
