/**
 * Layer `lib/match/` (pure, above `lib/text/`): locating chunks in a file —
 * the tier ladder (`normalize.ts`, `tier_*.ts`), the line-id index and
 * search (`index.ts`, `search.ts`), and the diagnostics of a chunk that does
 * not match once (`diagnose.ts`, `closest.ts`, `failures.ts`). It may import
 * `lib/text/`, `lib/types.ts` and `lib/failure.ts` (no `node:` module).
 *
 * This file: locating every chunk of one file (SPEC §5.1, §5.2, §5.5).
 *
 * A cursor starts at line 0. Each `@@` anchor moves it past the first line at
 * or after it equal to the anchor; then every position at or after the
 * cursor where the chunk's old side matches is found, at the first tier that
 * finds any: one is accepted (the cursor moves past it), several are
 * `ambiguous_hunk`, none after but one before is `out_of_order_hunk` or
 * `overlapping_hunks`, none is `context_mismatch` with diagnostics. A failing
 * chunk leaves the cursor where it was and the next chunk is still located,
 * so every failure of the file is reported at once.
 *
 * Choices where the spec is silent (also in docs/matching.md):
 * - Anchors always match ignoring leading and trailing whitespace, also in
 *   `"exact"` mode: `@@` lines conventionally drop the indentation of the
 *   line they name (`@@ def run(self):`). Only tiers 4–5 warn for anchors.
 * - A chunk found several times before the cursor (none after) is
 *   `out_of_order_hunk` listing the candidates.
 * - An `*** End of File` chunk may also sit just before trailing blank lines
 *   of the file (a `fuzzy_match` warning says so).
 *
 * @module
 */
import {
  type ChunkForms,
  chunkForms,
  type ChunkVariant,
  describeWhitespace,
  hasTextInserts,
  indentDelta,
  reindentInserts,
} from "./chunk_variants.ts";
import { type AnchorCase, type DiagnoseEnv, diagnoseFile, type MismatchCase, type SearchStart, unevenIndentationFailure } from "./diagnose.ts";
import { ambiguousFailure, anchorNotFoundFailure, outOfOrderFailure } from "./failures.ts";
import { briefFailure, outOfOrderCode } from "./brief.ts";
import { lineRange } from "../text/excerpt.ts";
import { warning } from "../failure.ts";
import { MatchIndex } from "./index.ts";
import { matchesAt } from "./search.ts";
import type { MatchStats, TierIndex } from "./tier_index.ts";
import { contentStart, describeTier, type LineTier, tiersFor } from "./normalize.ts";
import { lineOf, lineSourceOf, type TextFile } from "../text/text.ts";
import type { ChunkPlacement } from "./placement.ts";
import type { Chunk, ChunkLine, MatchingMode, MatchTier, PatchFailure, Warning } from "../types.ts";
import { appendAll } from "../text/append_all.ts";

/** Options of {@linkcode locateChunks}. */
export interface LocateOptions {
  matching: MatchingMode;
  /** Root-relative path, for messages. */
  path: string;
  /** Indentation is syntax in this file (see `isIndentationSensitive`). */
  indentationSensitive: boolean;
  /** Longest excerpt in a failure, in lines and bytes. */
  excerptLines: number;
  excerptBytes: number;
  /** Optional work counters (tests check bounded work with them). */
  stats?: MatchStats;
  /**
   * The decoded file `lines` came from (optional): its flat text, endings and
   * ASCII flag let the matcher scan without reading every line (much faster
   * on large files). Results are the same without it. Not needed when the
   * file itself is passed instead of its lines.
   */
  file?: Pick<TextFile, "text" | "eols" | "ascii"> & Partial<Pick<TextFile, "lineStarts">>;
  /**
   * How many failures may still be diagnosed in full (default: all). Later
   * failures, in chunk order, come back in `undiagnosed` as compact entries
   * (code, chunk, patch line) at no cost beyond the search itself: a patch
   * of thousands of failing chunks must not cost thousands of diagnoses
   * and megabytes of message (planPatch passes what is left of its budget).
   */
  detail?: number;
}

export type { ChunkPlacement } from "./placement.ts";

/** The result of {@linkcode locateChunks}. */
export interface LocateResult {
  placements: ChunkPlacement[];
  /** Failures diagnosed in full, by chunk. */
  errors: PatchFailure[];
  /** Failures past `options.detail`, compact, by chunk (empty without a budget). */
  undiagnosed: PatchFailure[];
  warnings: Warning[];
  /**
   * Failed chunks (1-based) that provably match nowhere in the file even
   * ignoring leading and trailing whitespace: an `@@` anchor found nowhere,
   * or an old side found at no tier ≥ 3 before or after the cursor. No
   * re-reading that only moves whitespace at the start of lines (the
   * lost-marker diagnosis, lib/plan/chunk_diagnoses.ts) can place them, so
   * it need not search the file again for them.
   */
  absent: Set<number>;
}

/** Stop collecting matches here: enough to say "more than 20". */
const MATCH_CAP = 21;

interface Hit {
  tier: MatchTier;
  /** The normalisation that matched (tier 5 reuses 1–4). */
  lineTier: LineTier;
  variant: ChunkVariant;
  positions: number[];
}

type Finder = (index: TierIndex, texts: readonly string[]) => number[];

/**
 * Locate all chunks of one file. Pure; near-linear in the file size.
 * `lines` is the file's lines, or the decoded file itself: then only the
 * lines a chunk touches are made into strings (all of them only when a
 * failure needs diagnosing), which is what makes large files cheap.
 *
 * @example
 * ```ts
 * const chunk = { anchors: [], endOfFile: false, patchLine: 3, lines: [
 *   { kind: "context", text: "a", patchLine: 3 }, { kind: "delete", text: "b", patchLine: 4 }, { kind: "insert", text: "B", patchLine: 5 }] } as const;
 * const r = locateChunks(["a", "b", "c"], [chunk], { matching: "lenient", path: "f.txt", indentationSensitive: false, excerptLines: 40, excerptBytes: 4096 });
 * r.placements[0]; // { index: 1, start: 0, end: 2, tier: 1, body: [...] }
 * ```
 */
export function locateChunks(lines: readonly string[] | TextFile, chunks: readonly Chunk[], options: LocateOptions): LocateResult {
  const whole = Array.isArray(lines) ? undefined : (lines as TextFile);
  if ((whole === undefined ? !Array.isArray(lines) : typeof whole.text !== "string" || !("lineStarts" in whole)) || !Array.isArray(chunks)) {
    throw new TypeError("locateChunks: lines must be an array or a decoded TextFile, chunks an array");
  }
  const array = lines as readonly string[];
  const tiers = tiersFor(options.matching);
  const lenient = tiers.includes(5);
  const file = whole ?? options.file;
  // (A whole file is its own hint; reading its offsets here would find its lines early.)
  const hints = whole ? { ascii: whole.ascii === true } : file ? { ascii: file.ascii === true, text: file.text, eols: file.eols, ...(file.lineStarts ? { starts: file.lineStarts } : {}) } : {};
  // The query table sized for the chunks' lines and anchors at once (10,000 chunks: no rehash on the way).
  let queries = 0;
  for (const chunk of chunks) queries += chunk.lines.length + chunk.anchors.length;
  const index = new MatchIndex(whole ?? array, options.stats, { ...hints, queries });
  const forms = chunks.map((chunk) => chunkForms(chunk, lenient));
  for (const form of forms) registerQueries(index, form);
  // Any anchor or old line needs tier 1; building it before anything counts
  // the lines lets a decoded file find its lines in that same pass.
  if (forms.some((form) => form.anchors.length > 0 || form.full.oldTexts.length > 0)) index.tier(1);

  const n = index.lineCount;
  const lineAt = whole ? (i: number): string => lineOf(whole, i) : (i: number): string => array[i]!;
  let lineSource: DiagnoseEnv["lines"] | undefined;
  const env: DiagnoseEnv = {
    // Diagnostics read few lines: a decoded file is never split for them.
    get lines() {
      return (lineSource ??= whole ? lineSourceOf(whole) : array);
    },
    get flat() {
      return index.flat();
    },
    ...(whole?.ascii === true ? { asciiBytes: whole.bytes.subarray(whole.bom ? 3 : 0) } : {}),
    index,
    tiers,
    path: options.path,
    limits: { lines: Math.max(1, options.excerptLines), bytes: Math.max(256, options.excerptBytes) },
    stats: index.stats,
  };
  const placements: ChunkPlacement[] = [];
  const errors: PatchFailure[] = [];
  const undiagnosed: PatchFailure[] = [];
  const warnings: Warning[] = [];
  const mismatches: MismatchCase[] = [];
  const missingAnchors: AnchorCase[] = [];
  const absent = new Set<number>();
  // Tier 3 (both ends trimmed) searched: a chunk found at no tier is found nowhere ignoring those ends.
  const trimsBothEnds = tiers.includes(3);
  // Failures are counted in chunk order (each chunk fails at most once).
  let detailLeft = options.detail ?? Infinity;
  const inFull = (): boolean => detailLeft-- > 0;
  let cursor = 0;
  // Why a search starts at the cursor, in words built only when a failure
  // reads them (a string per placed chunk was a measurable share of
  // planning thousands of chunks that all match).
  let cursorReason: () => string = () => "the start of the file";

  for (let c = 0; c < chunks.length; c++) {
    const chunk = chunks[c]!;
    const form = forms[c]!;
    const hunk = c + 1;
    const at = { path: options.path, hunk, patchLine: chunk.patchLine };

    // 1. Anchors narrow the search, each from where the previous one matched.
    let from = cursor;
    let start: SearchStart = cursorStart(from, cursorReason);
    const ref = { hunk, patchLine: chunk.patchLine };
    let anchorsOk = true;
    for (let a = 0; a < form.anchors.length; a++) {
      const found = findAnchor(index, tiers, form.anchors[a]!, form.escapedAnchors[a], from);
      if (found === undefined) {
        const anchorRef = { hunk, patchLine: chunk.patchLine + a };
        const before = findAnchorAnywhere(index, tiers, form, a, from);
        if (before === undefined) absent.add(hunk);
        if (inFull()) missingAnchors.push({ ref: anchorRef, anchor: form.anchors[a]!, start, before });
        else undiagnosed.push(briefFailure("anchor_not_found", options.path, anchorRef));
        anchorsOk = false;
        break;
      }
      if (found.tier >= 4) {
        warnings.push(warning("fuzzy_match", `chunk ${hunk}: the @@ anchor ${JSON.stringify(form.anchors[a])} matched line ${found.line + 1} only ${describeTier(found.tier)} (tier ${found.tier}).`, { ...at, line: found.line + 1 }));
      }
      from = found.line + 1;
      start = { from, reason: `the @@ anchor at line ${found.line + 1}`, byAnchor: true, unanchoredFrom: cursor };
    }
    if (!anchorsOk) continue;

    // 2. Pure insertions: right after the anchor, else at the end of the file.
    if (form.full.oldTexts.length === 0) {
      const atEnd = chunk.endOfFile || form.anchors.length === 0;
      const insertAt = atEnd ? n : from;
      if (!chunk.endOfFile && form.anchors.length === 0) {
        warnings.push(warning("appended_at_eof", `chunk ${hunk} has no context lines and no @@ anchor, so its lines were appended at the end of the file (after line ${n}). To insert elsewhere, add an @@ anchor line or context lines.`, { ...at, line: n }));
      }
      placements.push({ index: hunk, start: insertAt, end: insertAt, tier: 1, body: form.full.body.slice() });
      cursor = insertAt;
      cursorReason = atEnd ? () => "the end of the file" : () => `the insertion of chunk ${hunk} before line ${insertAt + 1}`;
      continue;
    }

    // 3. Search at or after `from`.
    const eofFinder: Finder = (t, texts) => {
      const s = n - texts.length;
      return matchesAt(t, index.search(t).ids(texts), s) ? [s] : [];
    };
    const after: Finder = (t, texts) => index.search(t).after(texts, from, MATCH_CAP);
    let hit = chunk.endOfFile ? searchForms(index, tiers, form, eofFinder) : searchForms(index, tiers, form, after);
    let eofNote: string | undefined;
    if (hit === undefined && chunk.endOfFile) {
      let end = n;
      while (end > 0) {
        const last = lineAt(end - 1);
        if (contentStart(last) !== last.length) break;
        end--;
      }
      if (end < n) {
        const beforeBlank: Finder = (t, texts) => (matchesAt(t, index.search(t).ids(texts), end - texts.length) ? [end - texts.length] : []);
        hit = searchForms(index, tiers, form, beforeBlank);
        if (hit) eofNote = `ignoring the ${n - end} blank line${n - end === 1 ? "" : "s"} at the end of the file`;
      }
    }

    if (hit !== undefined && hit.positions.length > 1) {
      if (inFull()) errors.push(ambiguousFailure(env, ref, hit.positions, hit.variant.oldTexts.length, hit.tier, start));
      else undiagnosed.push(briefFailure("ambiguous_hunk", options.path, ref, hit.positions[0]! + 1));
      continue;
    }
    const outOfOrder = (found: Hit): void => {
      const m = found.variant.oldTexts.length;
      if (inFull()) errors.push(outOfOrderFailure(env, ref, found.positions, m, start, placements));
      else undiagnosed.push(briefFailure(outOfOrderCode(found.positions, m, placements, start), options.path, ref, found.positions[0]! + 1));
    };
    if (hit !== undefined && hit.positions[0]! < from) {
      // Only an End of File chunk gets here: the file's end lies before the cursor.
      outOfOrder(hit);
      continue;
    }
    if (hit === undefined) {
      const before: Finder = (t, texts) => index.search(t).before(texts, from, MATCH_CAP);
      const earlier = chunk.endOfFile ? undefined : searchForms(index, tiers, form, before);
      if (earlier === undefined && !chunk.endOfFile && trimsBothEnds) absent.add(hunk);
      if (earlier !== undefined) {
        outOfOrder(earlier);
      } else if (!inFull()) {
        undiagnosed.push(briefFailure("context_mismatch", options.path, ref));
      } else {
        let elsewhere: number | undefined;
        if (chunk.endOfFile) {
          const anywhere = searchForms(index, tiers, form, after);
          if (anywhere && anywhere.positions.length === 1) elsewhere = anywhere.positions[0];
        }
        mismatches.push({ ...ref, variant: form.full, start, endOfFile: chunk.endOfFile, ...(elsewhere !== undefined ? { foundElsewhere: elsewhere } : {}) });
      }
      continue;
    }

    // 4. Accepted: adjust indentation, record warnings, move the cursor.
    const s = hit.positions[0]!;
    const m = hit.variant.oldTexts.length;
    let body = hit.variant.body.slice();
    if (hit.lineTier >= 3 && hasTextInserts(body)) {
      const delta = indentDelta(lineAt, s, body);
      const reindented = delta.kind === "uneven" ? undefined : reindentInserts(body, delta);
      if (reindented === undefined) {
        if (options.indentationSensitive) {
          if (inFull()) errors.push(unevenIndentationFailure(env, ref, s, hit.variant, delta));
          else undiagnosed.push(briefFailure("context_mismatch", options.path, ref, s + 1));
          continue;
        }
        warnings.push(warning("indentation_not_adjusted", `chunk ${hunk} matched ${lineRange(s, s + m)} only ignoring indentation, and the indentation differs unevenly, so its + lines were inserted exactly as sent. Check their indentation in the diff.`, { ...at, line: s + 1 }));
      } else {
        body = reindented;
        if (delta.kind === "add" || delta.kind === "remove") {
          const what = delta.kind === "add" ? `${describeWhitespace(delta.prefix)} more` : `${describeWhitespace(delta.prefix)} less`;
          warnings.push(warning("indentation_adjusted", `chunk ${hunk} matched ${lineRange(s, s + m)} where the file is indented ${what} than the chunk; its + lines were re-indented the same way.`, { ...at, line: s + 1 }));
        }
      }
    }
    if (hit.tier > 1 || eofNote) {
      const how = eofNote ? `${hit.tier > 1 ? describeTier(hit.tier) + ", " : ""}${eofNote}` : describeTier(hit.tier);
      warnings.push(warning("fuzzy_match", `chunk ${hunk} matched ${lineRange(s, s + m)} ${how} (tier ${hit.tier}); the file's own text was kept for its context lines.`, { ...at, line: s + 1 }));
    }
    if (hit.tier === 5) {
      warnings.push(warning("escaped_literals_recovered", `chunk ${hunk} contained literal escape sequences (\\n, \\t, \\"); read as real line breaks, tabs and quotes it matched ${lineRange(s, s + m)} uniquely, and its + lines were written unescaped too. Send real line breaks next time.`, { ...at, line: s + 1 }));
    }
    if (hit.variant.droppedBlank > 0) {
      warnings.push(warning("trailing_blank_context_dropped", `chunk ${hunk} ended with ${hit.variant.droppedBlank} blank context line${hit.variant.droppedBlank === 1 ? "" : "s"} that the file does not have there; ${hit.variant.droppedBlank === 1 ? "it was" : "they were"} ignored.`, { ...at, line: s + 1 }));
    }
    placements.push({ index: hunk, start: s, end: s + m, tier: hit.tier, body });
    cursor = s + m;
    cursorReason = () => `chunk ${hunk} (${lineRange(s, s + m)})`;
  }

  if (mismatches.length > 0 || missingAnchors.length > 0) {
    const found = diagnoseFile(env, mismatches, missingAnchors);
    appendAll(errors, found.mismatches);
    missingAnchors.forEach((a, i) => errors.push(anchorNotFoundFailure(env, a.ref, a.anchor, a.start, a.before, found.similarToAnchors[i]!, found.similarityStopped)));
  }
  errors.sort((a, b) => (a.hunk ?? 0) - (b.hunk ?? 0));
  return { placements, errors, undiagnosed, warnings, absent };
}

/** A search start at the cursor whose `reason` is put into words when read. */
function cursorStart(from: number, reason: () => string): SearchStart {
  return {
    from,
    byAnchor: false,
    get reason(): string {
      return reason();
    },
  };
}

function registerQueries(index: MatchIndex, form: ChunkForms): void {
  for (const anchor of form.anchors) index.addAnchor(anchor);
  for (const anchor of form.escapedAnchors) if (anchor !== undefined) index.addAnchor(anchor);
  // Every old side searched for, and the new side (diagnostics look for it: already applied?).
  const full = form.full;
  const oldIds = full.oldTexts.length > 0 ? index.addPattern(full.oldTexts) : new Int32Array(0);
  // Without its trailing blank context the old side is its own first lines: their ids.
  if (form.dropped !== undefined) index.addPattern(form.dropped.oldTexts, oldIds.slice(0, form.dropped.oldTexts.length));
  for (const variant of [form.escaped, form.escapedDropped]) {
    if (variant !== undefined && variant.oldTexts.length > 0) index.addPattern(variant.oldTexts);
  }
  if (full.newTexts.length > 0) {
    // The new side's context lines are the old side's texts: only its + lines are looked up.
    const ids = new Int32Array(full.newTexts.length);
    let i = 0;
    let j = 0;
    for (const line of full.body) {
      if (line.kind === "context") ids[i++] = oldIds[j++]!;
      else if (line.kind === "delete") j++;
      else ids[i++] = index.add(line.text);
    }
    index.addPattern(full.newTexts, ids);
  }
  if (form.escaped) for (const text of form.escaped.newTexts) index.add(text);
}

/** The first tier that finds any position for the chunk as sent, then without trailing blank context. */
function searchForms(index: MatchIndex, tiers: readonly MatchTier[], form: ChunkForms, finder: Finder): Hit | undefined {
  return searchVariants(index, tiers, form.full, form.escaped, finder) ??
    (form.dropped ? searchVariants(index, tiers, form.dropped, form.escapedDropped, finder) : undefined);
}

function searchVariants(
  index: MatchIndex,
  tiers: readonly MatchTier[],
  variant: ChunkVariant,
  escaped: ChunkVariant | undefined,
  finder: Finder,
): Hit | undefined {
  // A tier whose index is the previous tier's (nothing to fold), or repeats
  // it (no line newly equal there), finds the same.
  let previous: TierIndex | undefined;
  for (const tier of tiers) {
    if (tier === 5) {
      if (escaped === undefined) continue;
      previous = undefined;
      for (const lineTier of [1, 2, 3, 4] as const) {
        if (!index.mayMatch(escaped.oldTexts, lineTier)) continue;
        const t = index.tier(lineTier);
        if (t.repeats(previous)) continue;
        previous = t;
        const positions = finder(t, escaped.oldTexts);
        if (positions.length > 0) return { tier, lineTier, variant: escaped, positions };
      }
      continue;
    }
    if (!index.mayMatch(variant.oldTexts, tier)) continue;
    const t = index.tier(tier);
    if (t.repeats(previous)) continue;
    previous = t;
    const positions = finder(t, variant.oldTexts);
    if (positions.length > 0) return { tier, lineTier: tier, variant, positions };
  }
  return undefined;
}

/** Anchor tiers: always at least 1–3 (see the module notes). */
function anchorTiers(tiers: readonly MatchTier[]): MatchTier[] {
  return tiers.includes(5) ? [1, 2, 3, 4, 5] : [1, 2, 3];
}

function findAnchor(
  index: MatchIndex,
  tiers: readonly MatchTier[],
  anchor: string,
  escaped: string | undefined,
  from: number,
): { line: number; tier: MatchTier } | undefined {
  for (const tier of anchorTiers(tiers)) {
    if (tier === 5) {
      if (escaped === undefined) continue;
      for (const lineTier of [1, 2, 3, 4] as const) {
        const t = index.anchorTier(lineTier);
        const line = t.firstAtOrAfter(t.idOf(escaped), from);
        if (line >= 0) return { line, tier };
      }
      continue;
    }
    const t = index.anchorTier(tier);
    const line = t.firstAtOrAfter(t.idOf(anchor), from);
    if (line >= 0) return { line, tier };
  }
  return undefined;
}

/** Where anchor `a` would match if searched from the top: only reported when that is before `from`. */
function findAnchorAnywhere(index: MatchIndex, tiers: readonly MatchTier[], form: ChunkForms, a: number, from: number): number | undefined {
  const found = findAnchor(index, tiers, form.anchors[a]!, form.escapedAnchors[a], 0);
  return found !== undefined && found.line < from ? found.line : undefined;
}
