/**
 * The other locate failures as recovery instructions (SPEC §5.4):
 * `ambiguous_hunk` (every candidate as `N:hh`, and which line would make
 * each unique), `anchor_not_found` (the nearest similar lines),
 * `out_of_order_hunk`, `anchor_after_change` and `overlapping_hunks`.
 *
 * @module
 */
import { type ChunkPlacement, overlappedPlacement } from "./placement.ts";
import { anchoredAfter } from "./brief.ts";
import type { ChunkRef, DiagnoseEnv, SearchStart } from "./diagnose.ts";
import { boundedBlock, cutLine, formatRef, type LineSource, lineRange, lineRef } from "../text/excerpt.ts";
import { failure, readHint } from "../failure.ts";
import { contentStart, describeTier, normalizeLine } from "./normalize.ts";
import type { LineRef, MatchTier, PatchFailure } from "../types.ts";

/** Most candidates listed (SPEC §5.1). */
export const CANDIDATE_CAP = 20;
/** Candidates that get a ready-made disambiguation. */
const SUGGESTION_CAP = 5;
/** How far above or below a match to look for a distinguishing line. */
const EXTEND_REACH = 3;

function label(env: DiagnoseEnv, c: ChunkRef): string {
  return `chunk ${c.hunk} of ${env.path} (patch line ${c.patchLine})`;
}

/**
 * `ambiguous_hunk`: the chunk matches several places at its first matching tier.
 *
 * @example
 * ```ts
 * const r = locateChunks(["}", "x", "}"], [{ anchors: [], endOfFile: false, patchLine: 3, lines: [{ kind: "delete" as const, text: "}", patchLine: 4 }] }], { matching: "lenient", path: "f", indentationSensitive: false, excerptLines: 40, excerptBytes: 4096 });
 * r.errors.at(-1)!.code; // "ambiguous_hunk"
 * ```
 */
export function ambiguousFailure(env: DiagnoseEnv, c: ChunkRef, positions: readonly number[], m: number, tier: MatchTier, start: SearchStart): PatchFailure {
  const shown = positions.slice(0, CANDIDATE_CAP);
  const candidates = shown.map((s): LineRef => {
    const enclosing = enclosingRef(env, s);
    return { ...lineRef(env.lines, s), ...(enclosing ? { enclosing } : {}) };
  });
  const count = positions.length > CANDIDATE_CAP ? `more than ${CANDIDATE_CAP}` : String(positions.length);
  const complete = positions.length <= CANDIDATE_CAP;
  const blocks = candidates.some((r) => r.enclosing !== undefined);
  const parts = [
    `ambiguous_hunk: ${label(env, c)} matches ${count} places at or after line ${start.from + 1} (after ${start.reason})${tier > 1 ? `, ${describeTier(tier)}` : ""}; a chunk must match exactly one place. The first line of each match${blocks ? ", and the block it is in (the nearest less-indented line above it)" : ""}:`,
    boundedBlock(candidates.map((r) => (r.enclosing ? `${formatRef(r)}    (in ${r.enclosing.id}  ${r.enclosing.text.trim()})` : formatRef(r))), env.limits),
  ];
  const hints: string[] = [];
  for (let k = 0; k < Math.min(SUGGESTION_CAP, shown.length); k++) {
    const hint = distinguishingLine(env.lines, shown, k, m);
    if (hint) hints.push(`to select the match at line ${shown[k]! + 1}, add ${hint}${complete ? "" : " (it differs among the places listed)"}`);
  }
  if (complete && shown.length > 1) {
    const lastStart = shown[shown.length - 1]!;
    const anchor = anchorBetween(env, shown[shown.length - 2]!, lastStart, start.from);
    if (anchor) hints.push(`to select the last match (line ${lastStart + 1}), start the chunk with "@@ ${anchor.text}" (line ${anchor.line + 1})`);
  }
  parts.push(
    `Next step: make the chunk unique — add context lines above or below it that differ between these places. An @@ anchor only skips the lines before it (it selects the first equal line after the previous chunk), so it singles out the last of these places, not an earlier one.`,
  );
  if (hints.length > 0) parts.push(`For example:\n${hints.map((h) => "  - " + h).join("\n")}`);
  return failure("ambiguous_hunk", parts.join("\n"), {
    path: env.path,
    hunk: c.hunk,
    patchLine: c.patchLine,
    line: shown[0]! + 1,
    candidates,
  });
}

/** How far above a candidate its enclosing block is looked for (bounded work). */
const ENCLOSING_REACH = 2000;

/**
 * The block a match is in: the nearest non-blank line above it that is
 * less indented (a `def`, a `server {`), within ENCLOSING_REACH lines.
 */
function enclosingRef(env: DiagnoseEnv, s: number): LineRef | undefined {
  const lines = env.lines;
  const first = lines.at(s)!;
  const indent = contentStart(first);
  if (indent === 0 || indent >= first.length) return undefined;
  const stop = Math.max(0, s - ENCLOSING_REACH);
  for (let a = s - 1; a >= stop; a--) {
    const line = lines.at(a)!;
    const start = contentStart(line);
    if (start < line.length && start < indent) {
      env.stats.diagnosticLines += s - a;
      return lineRef(lines, a);
    }
  }
  env.stats.diagnosticLines += s - stop;
  return undefined;
}

/**
 * The nearest line just above or below match `k` that differs from the line
 * at the same offset of every other (known) match, described for the model.
 */
function distinguishingLine(lines: LineSource, starts: readonly number[], k: number, m: number): string | undefined {
  const s = starts[k]!;
  const key = (i: number): string | undefined => (i >= 0 && i < lines.length ? normalizeLine(lines.at(i)!, 3) : undefined);
  for (let d = 1; d <= EXTEND_REACH; d++) {
    for (const [side, offset] of [["above", -d], ["below", m - 1 + d]] as const) {
      const mine = key(s + offset);
      if (mine === undefined || mine === "") continue;
      if (starts.every((other, j) => j === k || key(other + offset) !== mine)) {
        const ref = formatRef(lineRef(lines, s + offset));
        const between = d > 1 ? ` (with the ${d - 1} line${d === 2 ? "" : "s"} between)` : "";
        return `the line ${side} it as context${between}: ${ref}`;
      }
    }
  }
  return undefined;
}

/** Lines looked at upwards for a less-indented line above a match. */
const ANCHOR_REACH = 2000;
/** Lines containing the anchor's text checked for being the one an anchor search would select. */
const ANCHOR_HITS = 64;

/**
 * A less-indented line between the previous match and the last one that an
 * `@@` anchor would select: the first line at or after `from` equal to it at
 * tier 1, else 2, else 3. Found with native searches of the flat text for
 * its text, bounded (no suggestion when it is not settled quickly).
 */
function anchorBetween(env: DiagnoseEnv, previousStart: number, lastStart: number, from: number): { line: number; text: string } | undefined {
  const lines = env.lines;
  const indent = contentStart(lines.at(lastStart)!);
  let a = lastStart - 1;
  for (; a > previousStart && a >= lastStart - ANCHOR_REACH; a--) {
    const line = lines.at(a)!;
    const start = contentStart(line);
    if (start < line.length && start < indent) break;
  }
  if (a <= previousStart || a < lastStart - ANCHOR_REACH) return undefined;
  const text = normalizeLine(lines.at(a)!, 3);
  if (text === "") return undefined;
  // Simulate the anchor search over the lines holding the text.
  const { text: flat, starts } = env.flat;
  const first = [-1, -1, -1];
  let hits = 0;
  let line = from;
  for (let at = flat.indexOf(text, starts[from]!); at >= 0 && first[0]! < 0; at = flat.indexOf(text, starts[line]!)) {
    if (++hits > ANCHOR_HITS) return undefined;
    line = lineAtOffset(starts, at, line);
    const candidate = lines.at(line)!;
    if (candidate === text) first[0] = line;
    else {
      if (first[1]! < 0 && normalizeLine(candidate, 2) === text) first[1] = line;
      if (first[2]! < 0 && normalizeLine(candidate, 3) === text) first[2] = line;
    }
    if (++line >= lines.length) break;
  }
  env.stats.diagnosticLines += hits;
  const chosen = first.find((j) => j >= 0);
  return chosen === a ? { line: a, text } : undefined;
}

/** The line holding text offset `at`, searching forward from line `from`. */
function lineAtOffset(starts: Int32Array, at: number, from: number): number {
  let lo = from;
  let hi = starts.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid]! <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * `anchor_not_found`, with the nearest similar lines (`similar`: 0-based,
 * best first, found by the file's one similarity pass).
 *
 * @example
 * ```ts
 * const r = locateChunks(["def run():"], [{ anchors: ["def walk():"], endOfFile: false, patchLine: 3, lines: [{ kind: "insert" as const, text: "x", patchLine: 4 }] }], { matching: "lenient", path: "f", indentationSensitive: false, excerptLines: 40, excerptBytes: 4096 });
 * r.errors.at(-1)!.code; // "anchor_not_found"
 * ```
 */
export function anchorNotFoundFailure(
  env: DiagnoseEnv,
  c: ChunkRef,
  anchor: string,
  start: SearchStart,
  before: number | undefined,
  similar: readonly number[],
  stopped?: string,
): PatchFailure {
  const candidates: LineRef[] = similar.map((i) => lineRef(env.lines, i));
  const parts = [
    `anchor_not_found: ${label(env, c)}: the @@ anchor ${JSON.stringify(cutLine(anchor))} was not found at or after line ${start.from + 1} (after ${start.reason}).`,
  ];
  if (before !== undefined) {
    parts.push(`It is at line ${before + 1}, before that. Chunks of one file, and consecutive @@ lines, must follow file order: move this chunk before the chunk that covers or follows line ${before + 1}, or put the @@ lines in file order.`);
  }
  if (candidates.length > 0) {
    parts.push(stopped === undefined ? `Lines that look similar:` : `Lines that look similar (${stopped}):`);
    parts.push(boundedBlock(candidates.map(formatRef), env.limits));
    parts.push(`Next step: put one of these lines after @@ exactly as shown (without the N:hh id), or drop the @@ line and give three lines of exact context instead.`);
  }
  const read = candidates.length > 0 ? undefined : readHint(env.path);
  if (read) {
    parts.push(`No similar line was found${stopped === undefined ? "" : ` (${stopped})`}. Next step: ${read.says} and use an existing line as the anchor, or drop the @@ line and give three lines of exact context instead.`);
  }
  return failure("anchor_not_found", parts.join("\n"), {
    path: env.path,
    hunk: c.hunk,
    patchLine: c.patchLine,
    ...(before !== undefined ? { line: before + 1 } : candidates.length > 0 ? { line: candidates[0]!.line } : {}),
    candidates,
    ...(read ? { hints: [read] } : {}),
  });
}

/**
 * `out_of_order_hunk` (found only before the search start) or
 * `overlapping_hunks` (found where an earlier chunk already applies).
 *
 * @example
 * ```ts
 * const r = locateChunks(["a", "b"], [
 *   { anchors: [], endOfFile: false, patchLine: 3, lines: [{ kind: "delete" as const, text: "b", patchLine: 4 }] },
 *   { anchors: [], endOfFile: false, patchLine: 5, lines: [{ kind: "delete" as const, text: "a", patchLine: 6 }] }], { matching: "lenient", path: "f", indentationSensitive: false, excerptLines: 40, excerptBytes: 4096 });
 * r.errors.at(-1)!.code; // "out_of_order_hunk"
 * ```
 */
export function outOfOrderFailure(
  env: DiagnoseEnv,
  c: ChunkRef,
  positions: readonly number[],
  m: number,
  start: SearchStart,
  placements: readonly ChunkPlacement[],
): PatchFailure {
  const shown = positions.slice(0, CANDIDATE_CAP);
  const candidates = shown.map((s) => lineRef(env.lines, s));
  const fields = { path: env.path, hunk: c.hunk, patchLine: c.patchLine, line: shown[0]! + 1, candidates };
  if (positions.length === 1) {
    const s = positions[0]!;
    const other = overlappedPlacement(s, m, placements);
    if (other) {
      return failure("overlapping_hunks", [
        `overlapping_hunks: ${label(env, c)} matches ${lineRange(s, s + m)}, which overlaps chunk ${other.index} (${other.end > other.start ? lineRange(other.start, other.end) : `insertion before line ${other.start + 1}`}). Chunks of one file must not share lines.`,
        `Next step: merge the two chunks into one chunk, or remove the shared lines from one of them.`,
      ].join("\n"), fields);
    }
    if (anchoredAfter(s, start)) return anchorAfterChangeFailure(env, c, s, m, start, fields);
    const next = placements.find((p) => p.start >= s + m);
    // Found above where the previous chunk ended (an anchor after the change
    // but below the previous chunk is anchor_after_change, above): reorder.
    const fix = `chunks of one file must be in file order: move this chunk${next ? ` before chunk ${next.index}` : ""} in the patch`;
    return failure("out_of_order_hunk", [
      `out_of_order_hunk: ${label(env, c)} matches only ${lineRange(s, s + m)}, before line ${start.from + 1} where its search started (after ${start.reason}):`,
      boundedBlock([formatRef(candidates[0]!)], env.limits),
      `Next step: ${fix}.`,
    ].join("\n"), fields);
  }
  const count = positions.length > CANDIDATE_CAP ? `more than ${CANDIDATE_CAP}` : String(positions.length);
  return failure("out_of_order_hunk", [
    `out_of_order_hunk: ${label(env, c)} does not match at or after line ${start.from + 1} (after ${start.reason}), but matches ${count} places before it:`,
    boundedBlock(candidates.map(formatRef), env.limits),
    `Next step: put the chunk in file order${start.byAnchor ? " (or fix its @@ anchor)" : ""} and add context lines so it matches exactly one of these places.`,
  ].join("\n"), fields);
}

/**
 * `anchor_after_change`: the chunk's only match is above its @@ anchor (and
 * below the previous chunk), so the anchor was put after the lines it
 * should precede — an anchor only skips the lines before it. The next step
 * names a line that works as the anchor: the block the change is in when
 * it is below the previous chunk, else the line just above the change.
 */
function anchorAfterChangeFailure(env: DiagnoseEnv, c: ChunkRef, s: number, m: number, start: SearchStart, fields: Record<string, unknown>): PatchFailure {
  const lines = env.lines;
  const anchor = lineRef(lines, start.from - 1);
  const floor = start.unanchoredFrom ?? 0;
  const enclosing = enclosingRef(env, s);
  const above = s - 1 >= floor && contentStart(lines.at(s - 1)!) < lines.at(s - 1)!.length ? lineRef(lines, s - 1) : undefined;
  const instead = enclosing !== undefined && enclosing.line - 1 >= floor ? { ref: enclosing, why: "the block the change is in" } : above !== undefined ? { ref: above, why: "the line above the change" } : undefined;
  const use = instead === undefined
    ? `drop the @@ line (${floor === 0 ? "the change starts the file, so no line above it" : "no line between the previous chunk and the change"} can serve as an anchor)`
    : `use @@ ${cutLine(instead.ref.text)} (line ${instead.ref.line}, ${instead.why}), or drop the @@ line`;
  return failure("anchor_after_change", [
    `anchor_after_change: ${label(env, c)}: its @@ anchor is on line ${anchor.line} (${anchor.id}  ${cutLine(anchor.text.trim())}), after the lines it should precede — the chunk matches only ${lineRange(s, s + m)}, above it:`,
    boundedBlock([formatRef(lineRef(lines, s))], env.limits),
    `An @@ anchor goes before the change: the chunk is searched for below it.`,
    `Next step: move the @@ line above the change: ${use}.`,
  ].join("\n"), fields as { path: string; hunk: number });
}
