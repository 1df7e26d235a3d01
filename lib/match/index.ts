/**
 * The matching engine under locate (SPEC §5.5): per tier, every file line is
 * keyed at most once, in one pass for all chunks of the file, into an
 * `Int32Array` of small ids (0: not a line any chunk mentions) plus
 * occurrence lists per id. Chunks are then searched on ids only
 * (search.ts): each from the occurrences of its rarest line when that is
 * cheap, all the others together in one multi-pattern pass per tier, which
 * keeps the work near-linear in the file and the patch whatever the input.
 * No per-line objects are allocated.
 *
 * @module
 */
import { EOL_CHARS, type EolCode } from "../text/line_scan.ts";
import { foldPunctuation, type LineTier, normalizeLine } from "./normalize.ts";
import { type MatchStats, newMatchStats, type TierIndex } from "./tier_index.ts";
import { PatternSearch } from "./search.ts";
import { KeyTable, regionHash } from "./key_table.ts";
import { adoptLfLineStarts, type TextFile, unscannedLfText } from "../text/text.ts";
import { type FlatLines, flatLinesOf, passExact, passExactScanning, passLoosest, tierMap, TierKeyer } from "./tier_pass.ts";
import { passTrimmed } from "./trimmed_pass.ts";
import { passExactScanningBytes, passLoosestBytes } from "./byte_pass.ts";

/** No two ids map to the same id. */
function injective(map: Int32Array): boolean {
  const seen = new Set<number>();
  for (let id = 1; id < map.length; id++) {
    if (seen.has(map[id]!)) return false;
    seen.add(map[id]!);
  }
  return true;
}

function isTextFile(source: readonly string[] | FlatLines | TextFile): source is TextFile {
  return !Array.isArray(source) && "lineStarts" in source;
}

/** What the caller knows about the file, to skip work (all optional). */
export interface FileHints {
  /** Every character of the file is ASCII (`TextFile.ascii`): tier 4 folds nothing in it. */
  ascii?: boolean;
  /**
   * The decoded text the lines were split from, with each line's ending
   * (`TextFile.text` and `eols`). Scanning one flat string is much cheaper
   * than reading a million line strings; lines are then only read when
   * their signature says they may match. Without it the lines are joined.
   */
  text?: string;
  eols?: Uint8Array;
  /** `TextFile.lineStarts`: with `text` and `eols`, the line strings are never read. */
  starts?: Int32Array;
  /** About how many distinct query texts will be registered (sizes their table; it grows past it). */
  queries?: number;
}

/** Shorter keys (`}`, `end`) are in almost every file: searching for them tells nothing. */
const MIN_PROBE_KEY = 6;
/** Native substring searches allowed per file (each may scan the whole text). */
const MAX_PROBES = 8;
/**
 * With more queries than this, whether a chunk may match at tiers 2–4 is
 * decided by one pass keying only each pattern's rarest line (its
 * "selector") at tier 4, before keying all queries at tiers 2–4: a full
 * pass with tens of thousands of keys compares most lines of a code file,
 * and a patch of thousands of failing chunks rarely needs it. Tier 4 alone
 * suffices: the tiers' normalisations compose (trim the end, both ends,
 * fold), so a line equal to the selector at tier 2 or 3 is equal at tier 4,
 * and a selector absent at tier 4 is absent at every fuzzy tier.
 */
const SELECTOR_QUERIES = 4096;

/**
 * The line of a pattern that decides whether it may match at a fuzzy tier:
 * its rarest line at tier 1 (a line found nowhere as sent is the likeliest
 * to be found nowhere at all), the longest among equals.
 */
function selectorOf(texts: readonly string[], ids: Int32Array, tier1: TierIndex): string | undefined {
  let best: string | undefined;
  let count = Infinity;
  let size = -1;
  for (let j = 0; j < texts.length; j++) {
    const t = texts[j]!;
    const c = tier1.count(ids[j]!);
    const k = t.length;
    if (c < count || (c === count && k > size)) {
      count = c;
      size = k;
      best = t;
    }
  }
  return best;
}

/**
 * The per-file index: register every text any chunk may look for, then ask
 * for tiers. Tier 1 is built alone (its length prefilter skips most lines
 * without reading them); the first request for any higher tier builds
 * tiers 2–4 together in one pass, since reading each line's text is what
 * costs. Tier 4 reuses tier 3 when nothing can fold (an ASCII file and
 * queries without foldable characters).
 *
 * @example
 * ```ts
 * const index = new MatchIndex(["  x = 1", "y"]);
 * index.add("x = 1");
 * index.tier(1).count(index.tier(1).idOf("x = 1")); // 0
 * index.tier(3).count(index.tier(3).idOf("x = 1")); // 1
 * ```
 */
export class MatchIndex {
  /** Work counters. */
  readonly stats: MatchStats;
  readonly #source: readonly string[] | FlatLines | TextFile;
  readonly #hints: FileHints;
  /**
   * Query texts by id (1, 2, … in order of registration; a pattern keeps
   * its lines' ids). Tier 1 takes the table as its dictionary, so its ids
   * are these and no query text is looked up twice.
   */
  readonly #queries: KeyTable;
  readonly #tiers = new Map<LineTier, TierIndex>();
  #flat: FlatLines | undefined;
  readonly #probes = new Map<string, boolean>();
  readonly #patterns: (readonly string[])[] = [];
  /** Per registered pattern, its lines' query ids (tier 1's ids too). */
  readonly #patternQueries: Int32Array[] = [];
  /** Per registered pattern: whether its selector is in the file at tier 4 (see SELECTOR_QUERIES). */
  #selectorPresent: Map<readonly string[], boolean> | undefined;
  #lastSelectorTexts: readonly string[] | undefined;
  #lastSelectorAnswer = true;
  readonly #searches = new Map<TierIndex, PatternSearch>();
  readonly #anchors = new Set<string>();
  #anchorTiers: Map<LineTier, TierIndex> | undefined;

  /**
   * `lines`: the file's lines, their flat form, or the decoded file itself
   * (then `hints.text`, `eols` and `starts` are not needed, and a file whose
   * lines were not found yet has them found by the tier-1 pass, in the same
   * pass).
   */
  constructor(lines: readonly string[] | FlatLines | TextFile, stats?: MatchStats, hints: FileHints = {}) {
    this.#queries = new KeyTable(false, Math.max(16, Math.min(hints.queries ?? 0, 1 << 22)));
    this.#source = lines;
    this.stats = stats ?? newMatchStats();
    this.#hints = hints;
  }

  /** How many lines the file has. */
  get lineCount(): number {
    const source = this.#source;
    return Array.isArray(source) ? source.length : (source as FlatLines | TextFile).eols.length;
  }

  /** The flat text (the lines joined when only they were given). */
  #text(): string {
    const source = this.#source;
    return Array.isArray(source) ? this.#flatLines().text : (source as FlatLines | TextFile).text;
  }

  /** Register a text that some chunk will search for; returns its query id. Must precede building any tier. */
  add(text: string): number {
    return this.#add(text);
  }

  #add(text: string): number {
    const queries = this.#queries;
    if (this.#tiers.size > 0) {
      const known = queries.get(text);
      if (known === undefined) throw new Error("MatchIndex: queries must be added before any tier is built");
      return known;
    }
    return queries.intern(text, regionHash(text, 0, text.length, false));
  }

  /** Register an `@@` anchor (a query too): {@linkcode anchorTier} keys only these. */
  addAnchor(text: string): void {
    this.add(text);
    this.#anchors.add(text);
  }

  /**
   * An index of `tier` good for looking up registered anchors (their ids,
   * counts and positions are those of `tier(tier)`): that tier itself when
   * built, else tiers 2–4 keyed for the anchors alone, in one pass. An
   * anchor not found as sent would otherwise key every chunk line at
   * tiers 2–4 over the whole file — the costliest pass there is (most lines
   * of a code file share a length and signature with some chunk line) —
   * only to learn where an `@@` line is, or that it is nowhere (a typo:
   * every chunk of the patch then fails on its anchor and nothing else is
   * searched). Keyed for a few anchors, the pass mostly trims lines and
   * checks a length. Decision: a patch that later needs tiers 2–4 for its
   * chunks pays both passes (at most one more pass, still linear); one
   * whose anchors need tier 2 or 3 but whose chunks match exactly — the
   * usual `@@ def run(self):` without indentation — pays only the cheap one.
   */
  anchorTier(tier: LineTier): TierIndex {
    if (tier === 1 || this.#tiers.has(tier)) return this.tier(tier);
    if (this.#anchorTiers === undefined) {
      const tier1 = this.tier(1);
      const flat = this.#flatLines();
      const n = flat.eols.length;
      const ascii = this.#hints.ascii === true;
      const foldless = ascii && [...this.#anchors].every((q) => foldPunctuation(q) === q);
      const keyers = (foldless ? ([2, 3] as const) : ([2, 3, 4] as const)).map((t) => new TierKeyer(t, this.#anchors, n, ascii));
      passTrimmed(flat, keyers[0]!, keyers[1]!, keyers[2], tier1);
      const tiers = new Map<LineTier, TierIndex>(keyers.map((k) => [k.tier, k.finish()]));
      if (foldless) tiers.set(4, tiers.get(3)!);
      this.#anchorTiers = tiers;
      this.stats.indexBuilds++;
      this.stats.linesScanned += n;
      for (const k of keyers) this.stats.linesKeyed += k.keyed;
    }
    return this.#anchorTiers.get(tier)!;
  }

  /**
   * Register a sequence of lines (a chunk's old or new side) that will be
   * searched for: its texts become queries, and every tier's first
   * multi-pattern pass takes it along. Must precede building any tier.
   */
  addPattern(texts: readonly string[], known?: Int32Array): Int32Array {
    // `known`: the texts' query ids as `add` returned them (a chunk's
    // new side shares its context lines with the old side): not hashed and
    // looked up again.
    let ids = known;
    if (ids === undefined || ids.length !== texts.length) {
      ids = new Int32Array(texts.length);
      for (let k = 0; k < texts.length; k++) ids[k] = this.#add(texts[k]!);
    }
    this.#patterns.push(texts);
    this.#patternQueries.push(ids);
    return ids;
  }

  /** The pattern search of tier index `t` (one of this index's tiers). */
  search(t: TierIndex): PatternSearch {
    let found = this.#searches.get(t);
    if (found === undefined) {
      // Each distinct query's id at this tier, once: the patterns' ids follow by number.
      // A tier built here was keyed from exactly these queries, in this order: its keyer kept their ids.
      let queryIds = t.queryIds;
      if (queryIds === undefined || queryIds.length !== this.#queries.size) {
        queryIds = new Int32Array(this.#queries.size);
        let q = 0;
        for (const text of this.#queries.keys.slice(1)) queryIds[q++] = t.idOf(text);
      }
      found = new PatternSearch(t, this.#patterns, this.stats, { ids: this.#patternQueries, queryIds });
      this.#searches.set(t, found);
    }
    return found;
  }

  /** Whether `tier` is built already (asking for it costs nothing more). */
  built(tier: LineTier): boolean {
    return this.#tiers.has(tier);
  }

  /**
   * Whether any line could match `texts` (context and `-` lines of a chunk)
   * at `tier` 2–4, judged without building the tier: a line equal to the
   * longest text at that tier contains its trimmed (and, in an ASCII file,
   * folded) form, so if the flat text lacks it, nothing matches. `true`
   * when it cannot tell (tier 4 in a file not known to be ASCII, short
   * keys, or the few native searches this allows are used up).
   */
  mayMatch(texts: readonly string[], tier: LineTier): boolean {
    if (tier === 1 || this.#tiers.has(tier)) return true;
    if (this.#queries.size > SELECTOR_QUERIES) {
      // Necessary: the selector line must be in the file at tier 4. (Asked
      // for tiers 2, 3 and 4 in a row: the last answer is kept.)
      if (texts !== this.#lastSelectorTexts) {
        this.#lastSelectorTexts = texts;
        this.#lastSelectorAnswer = this.#selectorPresence().get(texts) ?? true;
      }
      return this.#lastSelectorAnswer;
    }
    if (tier === 4 && this.#hints.ascii !== true) return true;
    let key = "";
    for (const t of texts) {
      const k = normalizeLine(t, tier === 4 ? 4 : 3);
      if (k.length > key.length) key = k;
    }
    if (key.length < MIN_PROBE_KEY) return true;
    let known = this.#probes.get(key);
    if (known === undefined) {
      if (this.#probes.size >= MAX_PROBES) return true;
      known = this.#text().includes(key);
      this.#probes.set(key, known);
      this.stats.textProbes++;
    }
    return known;
  }

  /** Per pattern, whether its selector is in the file at tier 4: one pass keying the selectors (see SELECTOR_QUERIES), on first use. */
  #selectorPresence(): Map<readonly string[], boolean> {
    if (this.#selectorPresent === undefined) {
      const tier1 = this.tier(1);
      // The patterns' tier-1 ids as the tier-1 search already mapped them (no text normalised again).
      const search = this.search(tier1);
      const selectorOfPattern = this.#patterns.map((texts) => selectorOf(texts, search.ids(texts), tier1));
      const selected = new Set<string>();
      for (const s of selectorOfPattern) if (s !== undefined) selected.add(s);
      const flat = this.#flatLines();
      const n = flat.eols.length;
      // Selectors are mostly lines found nowhere: the sampled signature rejects most lines cheaply.
      const keyer = new TierKeyer(4, selected, 0, this.#hints.ascii === true, "signature");
      // Lines tier 1 keyed take their ids from their key without being read
      // again: in a file made of the chunks' own lines (thousands of failing
      // chunks) that is most lines.
      const bytes = this.#asciiBytes(flat);
      if (bytes !== undefined && !keyer.foldsText) passLoosestBytes(flat, bytes, keyer, tier1);
      else passLoosest(flat, keyer, tier1);
      const index = keyer.finish();
      // Each selector's id from the keyer (in the set's order), not looked up again.
      const present = new Map<string, boolean>();
      let q = 0;
      for (const s of selected) present.set(s, index.count(keyer.queryIds[q++]!) > 0);
      this.#selectorPresent = new Map(this.#patterns.map((texts, p) => {
        const s = selectorOfPattern[p];
        return [texts, s === undefined || present.get(s) === true];
      }));
      this.stats.indexBuilds++;
      this.stats.linesScanned += n;
      this.stats.linesKeyed += keyer.keyed;
    }
    return this.#selectorPresent;
  }

  /** The bytes of an ASCII decoded file whose code units they are (past a BOM), for the byte passes; else undefined. */
  #asciiBytes(flat: FlatLines): Uint8Array | undefined {
    const source = this.#source;
    if (!isTextFile(source) || source.ascii !== true || flat.text !== source.text) return undefined;
    const bytes = source.bytes.subarray(source.bom ? 3 : 0);
    return bytes.length === flat.text.length ? bytes : undefined;
  }

  /** The index of `tier`, built on first use. */
  tier(tier: LineTier): TierIndex {
    const built = this.#tiers.get(tier);
    if (built !== undefined) return built;
    if (tier === 1) {
      this.#build([1]);
    } else {
      // Tiers 2–4 take the ids of lines tier 1 keyed from it (see passTrimmed).
      this.tier(1);
      const foldless = this.#hints.ascii === true && this.#queries.keys.every((q) => foldPunctuation(q) === q);
      this.#build(foldless ? [2, 3] : [2, 3, 4]);
      if (foldless) this.#tiers.set(4, this.#tiers.get(3)!);
    }
    return this.#tiers.get(tier)!;
  }

  /** The file's lines as offsets into one flat text (see `#flatLines`). */
  flat(): FlatLines {
    return this.#flatLines();
  }

  /**
   * The lines as offsets into one flat text: the decoded file's own when
   * the hints carry it (and the lines add up to it), else the lines joined.
   */
  #flatLines(): FlatLines {
    if (this.#flat !== undefined) return this.#flat;
    const source = this.#source;
    if (isTextFile(source)) return (this.#flat = { text: source.text, starts: source.lineStarts, eols: source.eols });
    if (!Array.isArray(source)) return (this.#flat = source as FlatLines);
    const lines = source as readonly string[];
    const { text, eols, starts } = this.#hints;
    if (text !== undefined && eols !== undefined && eols.length === lines.length) {
      if (starts !== undefined && starts.length === lines.length + 1 && starts[lines.length] === text.length) {
        return (this.#flat = { text, starts, eols });
      }
      const counted = new Int32Array(lines.length + 1);
      let offset = 0;
      for (let i = 0; i < lines.length; i++) {
        counted[i] = offset;
        offset += lines[i]!.length + EOL_CHARS[eols[i] as EolCode];
      }
      counted[lines.length] = offset;
      // Lines that do not add up to the text did not come from it.
      if (offset === text.length) return (this.#flat = { text, starts: counted, eols });
    }
    return (this.#flat = flatLinesOf(lines));
  }

  #build(tiers: readonly LineTier[]): void {
    const source = this.#source;
    const unscanned = tiers.length === 1 && isTextFile(source) ? unscannedLfText(source) : undefined;
    if (unscanned !== undefined) {
      // Find the lines and key them in one pass (the file keeps the starts).
      const file = source as TextFile;
      const keyer = new TierKeyer(1, this.#queries, 0, this.#hints.ascii === true);
      // An ASCII file is read through its bytes (see passExactScanningBytes).
      const bytes = file.ascii === true ? file.bytes.subarray(file.bom ? 3 : 0) : undefined;
      const starts = bytes !== undefined && bytes.length === unscanned.length
        ? passExactScanningBytes(unscanned, bytes, keyer)
        : passExactScanning(unscanned, keyer);
      adoptLfLineStarts(file, starts);
      this.#finish([keyer]);
      return;
    }
    const flat = this.#flatLines();
    const n = flat.eols.length;
    const keyers = tiers.map((tier) => new TierKeyer(tier, this.#queries, n, this.#hints.ascii === true));
    if (tiers.length === 1) {
      passExact(flat, keyers[0]!);
      this.#finish(keyers);
      return;
    }
    const lower = this.#tiers.get(1)!;
    passTrimmed(flat, keyers[0]!, keyers[1]!, keyers[2], lower);
    this.#finish(keyers);
    // A tier that keyed no line the tier below did not, with no two keys
    // merging, finds exactly what that tier found: searches skip it.
    let below: { index: TierIndex; keyOf: readonly string[] } = { index: lower, keyOf: lower.keyOf };
    for (const keyer of keyers) {
      const index = this.#tiers.get(keyer.tier)!;
      if (keyer.fresh === 0 && injective(tierMap(below.keyOf, keyer))) index.sameAs = below.index;
      below = { index, keyOf: keyer.keyOf };
    }
  }

  #finish(keyers: readonly TierKeyer[]): void {
    const n = keyers[0]!.ids.length;
    for (const keyer of keyers) {
      this.#tiers.set(keyer.tier, keyer.finish());
      this.stats.linesKeyed += keyer.keyed;
    }
    this.stats.indexBuilds++;
    this.stats.linesScanned += n;
  }
}
