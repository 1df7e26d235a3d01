/**
 * `context_mismatch` as a recovery instruction (SPEC §5.4): the change may
 * already be applied (the usual cause of a retry loop), else the closest
 * region with its line ids, a compact expected-vs-actual diff, what differs,
 * and the concrete next step. All failing chunks and `@@` anchors of a file
 * are diagnosed together, so the file is read at most once more: one
 * similarity pass (`similar.ts`) for the chunks none of whose lines is in
 * the file as sent and for every anchor found nowhere.
 *
 * @module
 */
import type { ChunkVariant, IndentDelta } from "./chunk_variants.ts";
import { describeWhitespace, hasTextInserts } from "./chunk_variants.ts";
import { castVotes, type Closest, closestAt, PAIR_SCORE, type VoteSource, VoteScratch } from "./closest.ts";
import { boundedBlock, type ExcerptLimits, formatRef, type LineSource, lineRange, refsOf } from "../text/excerpt.ts";
import { type LineSpan, SimilarLines, similarityWindows } from "./similar.ts";
import type { FlatLines } from "./tier_pass.ts";
import { failure, optionHint, readHint } from "../failure.ts";
import type { MatchIndex } from "./index.ts";
import type { MatchStats, TierIndex } from "./tier_index.ts";
import { describeTier, type LineTier } from "./normalize.ts";
import type { FailureHint, MatchTier, PatchFailure } from "../types.ts";

/** What every diagnosis of one file needs. */
export interface DiagnoseEnv {
  /** The file's lines (a view: only the lines read are made into strings). */
  lines: LineSource;
  /** The same lines as one flat text, for passes over the whole file. */
  flat: FlatLines;
  /** The file's bytes after any BOM when every character is ASCII (offsets then agree with `flat`). */
  asciiBytes?: Uint8Array;
  index: MatchIndex;
  /** The tiers the matching mode allows. */
  tiers: readonly MatchTier[];
  path: string;
  limits: ExcerptLimits;
  stats: MatchStats;
}

/** Which chunk a failure is about. */
export interface ChunkRef {
  /** 1-based chunk index in its Update section. */
  hunk: number;
  /** 1-based patch line the failure points at. */
  patchLine: number;
}

/** Where a chunk's search started, and why there. */
export interface SearchStart {
  /** 0-based first line searched. */
  from: number;
  /** Words for the reason, e.g. `chunk 1 (lines 3–9)` or `the @@ anchor at line 40`. */
  reason: string;
  /** The chunk's own @@ anchors moved the start. */
  byAnchor: boolean;
  /**
   * When the anchors moved it: the 0-based line where the search would have
   * started without them (after the previous chunk). A chunk found only
   * between this line and its anchor has its anchor after the change.
   */
  unanchoredFrom?: number;
}

/** A chunk whose old side was found nowhere. */
export interface MismatchCase extends ChunkRef {
  variant: ChunkVariant;
  start: SearchStart;
  endOfFile: boolean;
  /** For an End of File chunk: where it matches uniquely, not at the end. */
  foundElsewhere?: number;
}

/** An `@@` anchor found nowhere at or after its search start. */
export interface AnchorCase {
  ref: ChunkRef;
  anchor: string;
  start: SearchStart;
  /** Where the anchor is, before the search start, if anywhere. */
  before: number | undefined;
}

/** Scores below this look for similar lines too. */
const WEAK_SCORE = 0.5;
/** Lines of a chunk that look for similar lines (the longest ones). */
const SIMILAR_QUERIES = 8;
/** Similar lines each of them votes with. */
const SIMILAR_PER_LINE = 8;
/** Similar lines an anchor lists, and how similar they must be. */
const ANCHOR_CANDIDATES = 5;
const ANCHOR_SCORE = 0.4;

/** What {@linkcode diagnoseFile} found. */
export interface FileDiagnosis {
  /** One failure per mismatching chunk, in order. */
  mismatches: PatchFailure[];
  /** Per missing anchor, in order: the most similar lines (0-based), best first. */
  similarToAnchors: number[][];
  /**
   * When the similarity pass stopped at its budget (`SIMILAR_CHAR_BUDGET`):
   * words saying which lines it read, for the messages that list similar
   * lines or say none was found.
   */
  similarityStopped?: string;
}

/**
 * "the similarity search stopped at its budget and read only lines 1–52000 of 250000", or undefined when it read every line
 * — or read none because it had nothing to look for (every line of the weak chunks under three characters, no anchor):
 * then no budget was hit, and there is no range to name (issue 32.6: that case printed "read only lines  of 4").
 */
function stoppedWords(spans: readonly LineSpan[], n: number): string | undefined {
  if (spans.length === 0) return undefined;
  if (spans.length === 1 && spans[0]!.from === 0 && spans[0]!.to >= n) return undefined;
  const shown = spans.slice(0, 4).map((s) => lineRange(s.from, s.to).replace(/^lines? /, ""));
  const more = spans.length > 4 ? ` and ${spans.length - 4} more stretches` : "";
  return `the similarity search stopped at its budget and read only line${spans.length === 1 && spans[0]!.to - spans[0]!.from === 1 ? "" : "s"} ${shown.join(", ")}${more} of ${n}`;
}

/**
 * Diagnose every mismatching chunk of one file, and find the lines most
 * similar to each `@@` anchor found nowhere, in one pass.
 *
 * @example
 * ```ts
 * // What locateChunks returns for a chunk whose lines are not in the file:
 * const chunk = { anchors: [], endOfFile: false, patchLine: 3, lines: [{ kind: "delete" as const, text: "gone", patchLine: 4 }] };
 * const r = locateChunks(["a", "b"], [chunk], { matching: "lenient", path: "f.txt", indentationSensitive: false, excerptLines: 40, excerptBytes: 4096 });
 * r.errors[0]!.code; // "context_mismatch"
 * ```
 */
export function diagnoseFile(env: DiagnoseEnv, cases: readonly MismatchCase[], anchors: readonly AnchorCase[]): FileDiagnosis {
  const n = env.lines.length;
  const out = new Map<MismatchCase, PatchFailure>();
  const pending: MismatchCase[] = [];
  for (const c of cases) {
    const applied = c.endOfFile && c.foundElsewhere !== undefined ? undefined : findApplied(env, c.variant);
    if (applied !== undefined) out.set(c, alreadyAppliedFailure(env, c, applied.start, applied.tier));
    else pending.push(c);
  }
  const closest = new Map<MismatchCase, Closest>();
  const weak: MismatchCase[] = [];
  if (pending.length > 0 && n > 0) {
    const maxLines = pending.reduce((most, c) => Math.max(most, c.variant.oldTexts.length), 0);
    const scratch = new VoteScratch(n, maxLines);
    const budget = Math.max(2048, Math.floor((2 * n) / pending.length));
    // Vote with the loosest tier already built: no pass is added to vote.
    const t4 = env.index.built(4) ? env.index.tier(4) : env.index.tier(1);
    for (const c of pending) {
      const source: VoteSource = { pattern: t4.pattern(c.variant.oldTexts), count: (id) => t4.count(id), occurrences: (id) => t4.occurrences(id) };
      castVotes(source, scratch, budget, Math.max(256, Math.floor(n / 100)), env.stats);
      const best = bestAt(env, c, scratch.takeBest(3, c.start.from, n).map((x) => x.start), false);
      if (best) closest.set(c, best);
      if (!best || best.region.score < WEAK_SCORE) weak.push(c);
    }
  }
  // One similarity pass for the weak chunks' longest lines and every anchor.
  const queries: string[] = [];
  const asked = weak.map((c) => {
    const lines = c.variant.oldTexts
      .map((text, k) => ({ text, k, size: text.replace(/\s+/g, "").length }))
      .filter((l) => l.size >= 3)
      .sort((a, b) => b.size - a.size || a.k - b.k)
      .slice(0, SIMILAR_QUERIES);
    return lines.map((l) => ({ k: l.k, q: queries.push(l.text) - 1 }));
  });
  const anchorQueries = anchors.map((a) => queries.push(a.anchor) - 1);
  // A large file is read near where each search started, within a budget.
  const spans = queries.length > 0 && n > 0 ? similarityWindows(env.flat, [...weak.map((c) => c.start.from), ...anchors.map((a) => a.start.from)]) : [];
  const similar = spans.length > 0 ? new SimilarLines(env.flat, queries, env.stats, env.asciiBytes, spans) : undefined;
  const stopped = stoppedWords(spans, n);
  const weakSet = new Set(weak);
  weak.forEach((c, w) => {
    if (similar === undefined) return;
    // Each similar line p of chunk line k votes for start p − k, by similarity.
    const votes = new Map<number, number>();
    for (const { k, q } of asked[w]!) {
      for (const hit of similar.best(q, SIMILAR_PER_LINE, PAIR_SCORE)) votes.set(hit.line - k, (votes.get(hit.line - k) ?? 0) + hit.score);
    }
    const starts = [...votes].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 3).map(([s]) => s);
    const best = bestAt(env, c, starts, true);
    const previous = closest.get(c);
    if (best && (!previous || best.region.score > previous.region.score)) closest.set(c, best);
  });
  for (const c of pending) out.set(c, mismatchFailure(env, c, closest.get(c), weakSet.has(c) ? stopped : undefined));
  const similarToAnchors = anchors.map((a, i) => {
    const lines = similar === undefined ? [] : similar.best(anchorQueries[i]!, 2 * ANCHOR_CANDIDATES, ANCHOR_SCORE);
    // The most similar first; among equals, the nearest to where the search started.
    lines.sort((x, y) => y.score - x.score || Math.abs(x.line - a.start.from) - Math.abs(y.line - a.start.from));
    return lines.slice(0, ANCHOR_CANDIDATES).map((l) => l.line);
  });
  return { mismatches: cases.map((c) => out.get(c)!), similarToAnchors, ...(stopped !== undefined ? { similarityStopped: stopped } : {}) };
}

/** The best region at `starts` and where the search started (the right place when the anchor or the previous chunk was right but the context is not). */
function bestAt(env: DiagnoseEnv, c: MismatchCase, starts: number[], similar: boolean): Closest | undefined {
  if (!starts.includes(c.start.from) && c.start.from < env.lines.length) starts.push(c.start.from);
  let best: Closest | undefined;
  for (const start of starts) {
    const found = closestAt(env.lines, c.variant.oldTexts, start, env.limits, env.stats, similar);
    if (found && (!best || found.region.score > best.region.score)) best = found;
  }
  return best;
}

/**
 * The chunk's new side (context and `+` lines), found exactly once: the
 * change looks applied. Without `+` lines only the context is left to find,
 * which proves a deletion only when context surrounds every deleted run
 * (the lines around it are now adjacent).
 */
function findApplied(env: DiagnoseEnv, variant: ChunkVariant): { start: number; tier: LineTier } | undefined {
  const texts = variant.newTexts;
  if (texts.length === 0 || texts.every((t) => t.trim() === "")) return undefined;
  if (!hasTextInserts(variant.body) && !deletionsEnclosed(variant)) return undefined;
  const maxTier = Math.min(4, Math.max(...env.tiers)) as LineTier; // bounded spread: at most 5 tiers
  let previous: TierIndex | undefined;
  for (let tier = 1 as LineTier; tier <= maxTier; tier = (tier + 1) as LineTier) {
    if (!env.index.mayMatch(texts, tier)) continue;
    const t = env.index.tier(tier);
    if (t.repeats(previous)) continue;
    previous = t;
    const found = env.index.search(t).after(texts, 0, 2);
    if (found.length === 1) return { start: found[0]!, tier };
    if (found.length > 1) return undefined;
  }
  return undefined;
}

/** Every run of `-` lines has a context line before and after it. */
function deletionsEnclosed(variant: ChunkVariant): boolean {
  const body = variant.body;
  for (let i = 0; i < body.length; i++) {
    if (body[i]!.kind !== "delete") continue;
    let j = i;
    while (j < body.length && body[j]!.kind !== "context") j++;
    const before = body.slice(0, i).some((l) => l.kind === "context");
    if (!before || j === body.length) return false;
    i = j;
  }
  return true;
}

function chunkLabel(env: DiagnoseEnv, c: ChunkRef): string {
  return `chunk ${c.hunk} of ${env.path} (patch line ${c.patchLine})`;
}

function alreadyAppliedFailure(env: DiagnoseEnv, c: MismatchCase, start: number, tier: LineTier): PatchFailure {
  const m = c.variant.newTexts.length;
  const end = start + m;
  const refs = refsOf(env.lines, start, end, env.limits);
  const how = tier > 1 ? ` (${describeTier(tier)})` : "";
  const read = readLines(env, start - 5, end + 5);
  const message = [
    `context_mismatch: ${chunkLabel(env, c)}: its context and '-' lines are not in the file, but its result — the context and '+' lines — is already there at ${lineRange(start, end)}${how}. The change looks already applied, usually by an earlier call that succeeded. The file there:`,
    boundedBlock(refs.map(formatRef), env.limits),
    `Next step: do not resend this chunk; drop it from the patch (${read.says} to confirm if unsure).`,
  ].join("\n");
  return failure("context_mismatch", message, {
    path: env.path,
    hunk: c.hunk,
    patchLine: c.patchLine,
    line: start + 1,
    alreadyAppliedAt: start + 1,
    hints: [read],
  });
}

function triedWords(env: DiagnoseEnv): string {
  const top = Math.min(4, Math.max(...env.tiers)) as MatchTier; // bounded spread: at most 5 tiers
  return top === 1 ? "matching exactly (matching mode \"exact\")" : `not even ${describeTier(top)}`;
}

const DIFFERENCE_WORDS = {
  whitespace: "only whitespace differs",
  indentation: "only indentation differs",
  content: "the text differs",
} as const;

/**
 * A file this short whose chunk matches nothing similar is shown whole in
 * the failure (issue 29.4): re-reading it would cost a call for fewer lines
 * than the excerpt limit anyway. Still bounded by the excerpt's bytes.
 */
export const WHOLE_FILE_LINES = 40;

/** The whole (short) file with line ids, and whether every line fit the excerpt's bytes. */
function wholeFile(env: DiagnoseEnv): { text: string; complete: boolean } {
  const n = env.lines.length;
  if (n === 0) return { text: `The file is empty (0 lines).`, complete: true };
  const refs = refsOf(env.lines, 0, n, env.limits);
  const more = n - refs.length;
  // a line cut to the excerpt's width cannot be copied into a chunk: then the file must be read after all
  const cut = refs.some((r, i) => r.text !== env.lines.at(i));
  const block = boundedBlock(refs.map(formatRef), env.limits) + (more > 0 ? `\n  … (${more} more line${more === 1 ? "" : "s"}, past the excerpt's ${env.limits.bytes} bytes)` : "");
  const title = `The whole file (${n} line${n === 1 ? "" : "s"}${cut ? "; long lines cut" : ""}), with line ids:`;
  return { text: `${title}\n${block}`, complete: more === 0 && !cut };
}

function mismatchFailure(env: DiagnoseEnv, c: MismatchCase, closest: Closest | undefined, stopped?: string): PatchFailure {
  const n = env.lines.length;
  const m = c.variant.oldTexts.length;
  const parts: string[] = [];
  parts.push(`context_mismatch: ${chunkLabel(env, c)} does not match the file: its ${m} context and '-' line${m === 1 ? "" : "s"} ${m === 1 ? "was" : "were"} not found at or after line ${c.start.from + 1} (after ${c.start.reason}), ${triedWords(env)}.`);
  if (c.endOfFile) {
    parts.push(`The chunk is marked *** End of File, so these lines must be the last ${m} of the file, which has ${n} line${n === 1 ? "" : "s"}.`);
    if (c.foundElsewhere !== undefined) {
      const s = c.foundElsewhere;
      parts.push(`They do appear at ${lineRange(s, s + m)}, which is not the end of the file:`);
      parts.push(boundedBlock(refsOf(env.lines, s, s + m, env.limits).map(formatRef), env.limits));
      const read = readLines(env, n - 10, n);
      parts.push(`Next step: if that is the place, remove the *** End of File line after this chunk; otherwise ${read.says} (the end of the file) and rebuild the chunk.`);
      return failure("context_mismatch", parts.join("\n"), { path: env.path, hunk: c.hunk, patchLine: c.patchLine, line: s + 1, hints: [read] });
    }
  }
  if (closest === undefined) {
    parts.push(stopped === undefined ? `Nothing similar was found in the file. The chunk expected:` : `Nothing similar was found (${stopped}). The chunk expected:`);
    parts.push(boundedBlock(c.variant.oldTexts, env.limits));
    const whole = n <= WHOLE_FILE_LINES ? wholeFile(env) : undefined;
    if (whole !== undefined) {
      parts.push(whole.text);
      if (whole.complete) {
        parts.push(`Next step: rebuild the chunk from the file's lines above (copy its context and '-' lines exactly, without the N:hh ids), or, if this is not the file you meant, fix the path.`);
        return failure("context_mismatch", parts.join("\n"), { path: env.path, hunk: c.hunk, patchLine: c.patchLine });
      }
    }
    const read = readHint(env.path);
    parts.push(`Next step: ${read.says} (it may have changed, or this may be the wrong file) and rebuild the chunk from its current text.`);
    return failure("context_mismatch", parts.join("\n"), { path: env.path, hunk: c.hunk, patchLine: c.patchLine, hints: [read] });
  }
  const r = closest.region;
  parts.push(`The closest region is ${lineRange(closest.start, closest.end)} (score ${r.score.toFixed(2)}: ${DIFFERENCE_WORDS[r.difference]}). The file there, with line ids:`);
  parts.push(boundedBlock(r.lines.map(formatRef), env.limits));
  parts.push(`Difference (- the chunk's line, + the file's line; quoted where only whitespace differs):`);
  parts.push(r.diff.split("\n").map((line) => "  " + line).join("\n"));
  if (closest.start < c.start.from) {
    parts.push(`That region lies before line ${c.start.from + 1}, where this chunk's search started (after ${c.start.reason}): if it is the intended place, the chunk is also out of order${c.start.byAnchor ? " or its @@ anchor points past it" : ""}.`);
  }
  const read = readLines(env, closest.start - 10, closest.end + 10);
  const hints = [read];
  const reread = `${read.says} and rebuild the chunk`;
  if (r.difference === "content") {
    parts.push(`Next step: the file is not what the chunk expects there. Copy the file's current lines exactly as shown above (without the N:hh ids) into the chunk's context and '-' lines, then re-apply your change to them; or ${reread}.`);
  } else if (r.difference === "indentation") {
    const loosen = env.tiers.includes(3) ? undefined : optionHint("matching", "whitespace");
    if (loosen) hints.push(loosen);
    parts.push(`Next step: copy the context and '-' lines with the file's exact indentation (as shown above, without the N:hh ids)${loosen ? `, or apply with ${loosen.says}` : ""}; or ${reread}.`);
  } else {
    parts.push(`Next step: copy the lines exactly as shown above, including their whitespace (without the N:hh ids), into the chunk's context and '-' lines; or ${reread}.`);
  }
  return failure("context_mismatch", parts.join("\n"), {
    path: env.path,
    hunk: c.hunk,
    patchLine: c.patchLine,
    line: r.startLine,
    closest: r,
    hints,
  });
}

/**
 * `context_mismatch` for a match that ignored indentation where the
 * indentation differs unevenly, in a file where indentation is syntax.
 *
 * @example
 * ```ts
 * const lines = ["if a:", "    b()", "        c()"];
 * const chunk = { anchors: [], endOfFile: false, patchLine: 3, lines: [
 *   { kind: "context" as const, text: "b()", patchLine: 4 }, { kind: "context" as const, text: "c()", patchLine: 5 },
 *   { kind: "insert" as const, text: "d()", patchLine: 6 }] };
 * const r = locateChunks(lines, [chunk], { matching: "lenient", path: "a.py", indentationSensitive: true, excerptLines: 40, excerptBytes: 4096 });
 * r.errors[0]!.message; // "context_mismatch: … the indentation differs unevenly …"
 * ```
 */
export function unevenIndentationFailure(env: DiagnoseEnv, c: ChunkRef, start: number, variant: ChunkVariant, delta: IndentDelta): PatchFailure {
  const m = variant.oldTexts.length;
  const why = delta.kind === "uneven"
    ? delta.pairs.map((p) => `patch line ${p.chunkLine.patchLine} has ${describeWhitespace(p.chunkIndent)} where file line ${p.fileLine + 1} has ${describeWhitespace(p.fileIndent)}`).join(", but ")
    : `the file is indented ${describeWhitespace(delta.kind === "remove" ? delta.prefix : "")} less than the chunk, and a '+' line has less indentation than that to remove`;
  const closest = closestAt(env.lines, variant.oldTexts, start, env.limits, env.stats);
  const message = [
    `context_mismatch: ${chunkLabel(env, c)} matches ${lineRange(start, start + m)} only when indentation is ignored, and the indentation differs unevenly: ${why}. Indentation is syntax in ${env.path}, so the '+' lines cannot be re-indented safely. The file there:`,
    boundedBlock(refsOf(env.lines, start, start + m, env.limits).map(formatRef), env.limits),
    `Next step: copy the context and '-' lines with the file's exact indentation (as shown above, without the N:hh ids) and indent the '+' lines to fit them.`,
  ].join("\n");
  return failure("context_mismatch", message, {
    path: env.path,
    hunk: c.hunk,
    patchLine: c.patchLine,
    line: start + 1,
    ...(closest ? { closest: { ...closest.region, difference: "indentation" as const } } : {}),
  });
}

/** A hint to read lines `[start, end)` (0-based, clamped to the file) of the file again. */
function readLines(env: DiagnoseEnv, start: number, end: number): FailureHint {
  const from = Math.max(0, start);
  const to = Math.min(env.lines.length, end);
  return to > from ? readHint(env.path, from + 1, to) : readHint(env.path);
}
