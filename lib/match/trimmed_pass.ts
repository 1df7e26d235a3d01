/**
 * The pass that keys tiers 2, 3 and (when something can fold) 4 together
 * (SPEC §5.5), over the flat text by offsets, on top of tier 1's ids: see
 * `tier_pass.ts` for the tier-1 passes and the helpers shared with them.
 *
 * @module
 */
import { EOL_CHARS, type EolCode } from "../text/line_scan.ts";
import { contentEnd, contentStart } from "./normalize.ts";
import type { TierKeyer } from "./tier_keyer.ts";
import { type FlatLines, isBlankCode, keep, type LowerTier, probe, repeatPrevious, sameAsPrevious, tierMap } from "./tier_pass.ts";

/**
 * The pass for tiers 2, 3 and (when something can fold) 4 together: each
 * line's text is read once. A line some lower tier already keyed takes its
 * ids here from the key's own normalised forms ({@linkcode tierMap}) without
 * reading it: in a file made of the chunks' own lines (low entropy, runs of
 * near misses) these tiers then cost no comparison at all. Each keyer counts
 * in `fresh` the lines it keyed that the tier below it did not.
 *
 * @example
 * ```ts
 * const queries = new Set(["b"]);
 * const [k2, k3] = [new TierKeyer(2, queries, 2), new TierKeyer(3, queries, 2)];
 * passTrimmed(flatLinesOf(["b  ", "  b"]), k2, k3, undefined);
 * [k2.finish().ids, k3.finish().ids]; // [Int32Array [1, 0], Int32Array [1, 1]]
 * ```
 */
export function passTrimmed(flat: FlatLines, k2: TierKeyer, k3: TierKeyer, k4: TierKeyer | undefined, lower?: LowerTier): void {
  if (k4 === undefined) passTrimmed23(flat, k2, k3, lower);
  else passTrimmed234(flat, k2, k3, k4, lower);
}

/**
 * {@linkcode passTrimmed} with a tier-4 keyer. Two copies of one loop, on
 * purpose: as one function taking `k4` or not, the JIT compiled it for
 * whichever shape ran first and recompiled it, slower for both, once the
 * other shape ran (the tier-2–3 pass over 1M lines of code: 40 ms alone,
 * 105–280 ms in a process that had also keyed a file at tier 4 — what the
 * bench's re-indented chunk measured after its tier-4 family, and what a
 * long-lived server planning both kinds of file would see).
 */
function passTrimmed234(flat: FlatLines, k2: TierKeyer, k3: TierKeyer, k4: TierKeyer, lower?: LowerTier): void {
  const { text, starts, eols } = flat;
  const n = eols.length;
  const ids1 = lower?.ids;
  const to2 = lower ? tierMap(lower.keyOf, k2) : undefined;
  // A line tier 1 did not key, without trailing (and leading) whitespace, is
  // its own tier-2 (tier-3) region: it can only equal a key made from a
  // query that had such whitespace. Without any, that probe is skipped.
  const queriesTrailing = lower === undefined || lower.keyOf.some((key) => contentEnd(key) !== key.length);
  const queriesPadded = queriesTrailing || lower.keyOf.some((key) => contentStart(key) !== 0);
  const to3 = tierMap(k2.keyOf, k3);
  const to4 = tierMap(k3.keyOf, k4);
  // A tier-1 key's forms straight from it: keyers made for fewer texts than
  // tier 1 (the anchors alone, MatchIndex.anchorTier) may lack its tier-2
  // form but have its tier-3 one.
  const from1to3 = lower ? tierMap(lower.keyOf, k3) : undefined;
  const from1to4 = lower ? tierMap(lower.keyOf, k4) : undefined;
  for (let i = 0; i < n; i++) {
    const id1 = ids1 === undefined ? 0 : ids1[i]!;
    if (id1 !== 0) {
      keep(k2, i, to2![id1]!);
      keep(k3, i, from1to3![id1]!);
      keep(k4, i, from1to4![id1]!);
      continue;
    }
    const lineStart = starts[i]!;
    const lineEnd = starts[i + 1]! - EOL_CHARS[eols[i] as EolCode];
    if (i > 0 && sameAsPrevious(flat, i, lineStart, lineEnd - lineStart)) {
      repeatPrevious(k2, i);
      repeatPrevious(k3, i);
      repeatPrevious(k4, i);
      continue;
    }
    let start = lineStart;
    while (start < lineEnd && isBlankCode(text.charCodeAt(start))) start++;
    let end = lineEnd;
    while (end > start && isBlankCode(text.charCodeAt(end - 1))) end--;
    // Tier 2 keeps leading whitespace; a blank line's tier-2 key is "" too.
    // Nothing trailing to trim (a line of blanks is all trailing: its tier-2 key is "").
    const bare = start === lineEnd ? lineStart === lineEnd : end === lineEnd;
    const id2 = bare && !queriesTrailing ? 0 : probe(k2, text, lineStart, start === lineEnd ? lineStart : end, false);
    if (id2 !== 0) {
      keep(k2, i, id2);
      if (ids1 !== undefined) k2.fresh++;
      const id3 = to3[id2]!;
      keep(k3, i, id3);
      keep(k4, i, to4[id3]!);
      continue;
    }
    const id3 = bare && start === lineStart && !queriesPadded ? 0 : probe(k3, text, start, end, false);
    if (id3 !== 0) {
      keep(k3, i, id3);
      k3.fresh++;
      keep(k4, i, to4[id3]!);
      continue;
    }
    const id4 = probe(k4, text, start, end, k4.foldsText);
    if (id4 !== 0) {
      keep(k4, i, id4);
      k4.fresh++;
    }
  }
}

/** {@linkcode passTrimmed} without a tier-4 keyer (see {@linkcode passTrimmed234}). */
function passTrimmed23(flat: FlatLines, k2: TierKeyer, k3: TierKeyer, lower?: LowerTier): void {
  const { text, starts, eols } = flat;
  const n = eols.length;
  const ids1 = lower?.ids;
  const to2 = lower ? tierMap(lower.keyOf, k2) : undefined;
  // A line tier 1 did not key, without trailing (and leading) whitespace, is
  // its own tier-2 (tier-3) region: it can only equal a key made from a
  // query that had such whitespace. Without any, that probe is skipped.
  const queriesTrailing = lower === undefined || lower.keyOf.some((key) => contentEnd(key) !== key.length);
  const queriesPadded = queriesTrailing || lower.keyOf.some((key) => contentStart(key) !== 0);
  const to3 = tierMap(k2.keyOf, k3);
  // A tier-1 key's forms straight from it: keyers made for fewer texts than
  // tier 1 (the anchors alone, MatchIndex.anchorTier) may lack its tier-2
  // form but have its tier-3 one.
  const from1to3 = lower ? tierMap(lower.keyOf, k3) : undefined;
  for (let i = 0; i < n; i++) {
    const id1 = ids1 === undefined ? 0 : ids1[i]!;
    if (id1 !== 0) {
      keep(k2, i, to2![id1]!);
      keep(k3, i, from1to3![id1]!);
      continue;
    }
    const lineStart = starts[i]!;
    const lineEnd = starts[i + 1]! - EOL_CHARS[eols[i] as EolCode];
    if (i > 0 && sameAsPrevious(flat, i, lineStart, lineEnd - lineStart)) {
      repeatPrevious(k2, i);
      repeatPrevious(k3, i);
      continue;
    }
    let start = lineStart;
    while (start < lineEnd && isBlankCode(text.charCodeAt(start))) start++;
    let end = lineEnd;
    while (end > start && isBlankCode(text.charCodeAt(end - 1))) end--;
    // Tier 2 keeps leading whitespace; a blank line's tier-2 key is "" too.
    // Nothing trailing to trim (a line of blanks is all trailing: its tier-2 key is "").
    const bare = start === lineEnd ? lineStart === lineEnd : end === lineEnd;
    const id2 = bare && !queriesTrailing ? 0 : probe(k2, text, lineStart, start === lineEnd ? lineStart : end, false);
    if (id2 !== 0) {
      keep(k2, i, id2);
      if (ids1 !== undefined) k2.fresh++;
      const id3 = to3[id2]!;
      keep(k3, i, id3);
      continue;
    }
    const id3 = bare && start === lineStart && !queriesPadded ? 0 : probe(k3, text, start, end, false);
    if (id3 !== 0) {
      keep(k3, i, id3);
      k3.fresh++;
    }
  }
}
