/**
 * The matching engine under locate (SPEC §5.5): per tier, every file line is
 * keyed at most once, in one pass for all chunks of the file, into an
 * `Int32Array` of small ids (0: not a line any chunk mentions) plus
 * occurrence lists per id. A chunk is then searched on ids only: from the
 * occurrences of its rarest line when that is cheap, otherwise with KMP,
 * which is linear whatever the input. No per-line objects are allocated.
 *
 * @module
 */
import { foldCode, foldPunctuation, isWhitespaceCode, type LineTier, normalizeLine } from "./normalize.ts";

/**
 * Work counters, for tests that check the algorithm does a bounded amount of
 * work (instead of timing it) and for benchmarks.
 */
export interface MatchStats {
  /** Tier indexes built (at most one per tier per file). */
  indexBuilds: number;
  /** File lines visited by index builds. */
  linesScanned: number;
  /** File lines whose full key was computed and looked up (prefilter hits). */
  linesKeyed: number;
  /** Candidate start positions verified from occurrence lists. */
  candidatesVerified: number;
  /** Id comparisons during candidate verification. */
  idComparisons: number;
  /** Steps of KMP scans. */
  kmpSteps: number;
  /** Votes cast while looking for the closest region. */
  votes: number;
  /** Cells of the small LCS tables of diagnostics. */
  lcsCells: number;
  /** File lines visited by diagnostics scans (similar lines, loose keys, anchor checks). */
  diagnosticLines: number;
}

/**
 * Fresh zeroed counters.
 *
 * @example
 * ```ts
 * const stats = newMatchStats();
 * stats.kmpSteps; // 0
 * ```
 */
export function newMatchStats(): MatchStats {
  return {
    indexBuilds: 0,
    linesScanned: 0,
    linesKeyed: 0,
    candidatesVerified: 0,
    idComparisons: 0,
    kmpSteps: 0,
    votes: 0,
    lcsCells: 0,
    diagnosticLines: 0,
  };
}

const SIG_BITS = 16;
const SIG_MASK = (1 << SIG_BITS) - 1;
const MAX_TRACKED_LENGTH = 4096;

/**
 * A cheap signature of `line[start, end)`: its length and four sampled code
 * units (folded at tier 4, which keeps lengths). Equal keys have equal
 * signatures, so a line whose signature no query has cannot match.
 */
function signature(line: string, start: number, end: number, fold: boolean): number {
  const length = end - start;
  if (length === 0) return 0;
  let a = line.charCodeAt(start);
  let b = line.charCodeAt(start + (length >> 1));
  let c = line.charCodeAt(start + ((length * 3) >> 2));
  let d = line.charCodeAt(end - 1);
  if (fold) {
    a = foldCode(a);
    b = foldCode(b);
    c = foldCode(c);
    d = foldCode(d);
  }
  let h = Math.imul(length, 0x9e3779b1) ^ Math.imul(a + (d << 16), 0x85ebca6b) ^ Math.imul(b + (c << 16), 0xc2b2ae35);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 13;
  return (h & SIG_MASK) | 1;
}

/** The ids and occurrence lists of one tier. */
export class TierIndex {
  /** The tier whose normalisation keyed the lines. */
  readonly tier: LineTier;
  /** Per file line: the id of its key, 0 when no query line has that key. */
  readonly ids: Int32Array;
  readonly #dict: Map<string, number>;
  readonly #occStart: Int32Array;
  readonly #occ: Int32Array;

  constructor(tier: LineTier, ids: Int32Array, dict: Map<string, number>, occStart: Int32Array, occ: Int32Array) {
    this.tier = tier;
    this.ids = ids;
    this.#dict = dict;
    this.#occStart = occStart;
    this.#occ = occ;
  }

  /** The id of a (registered) query text at this tier; 0 if it was never registered. */
  idOf(text: string): number {
    return this.#dict.get(normalizeLine(text, this.tier)) ?? 0;
  }

  /** How many file lines carry `id`. */
  count(id: number): number {
    if (id <= 0) return 0;
    return this.#occStart[id + 1]! - this.#occStart[id]!;
  }

  /** The ascending file positions of `id` (a view, do not modify). */
  occurrences(id: number): Int32Array {
    if (id <= 0) return new Int32Array(0);
    return this.#occ.subarray(this.#occStart[id]!, this.#occStart[id + 1]!);
  }

  /** Index in `occurrences(id)` of the first position `>= pos`. */
  lowerBound(id: number, pos: number): number {
    const occ = this.occurrences(id);
    let lo = 0;
    let hi = occ.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (occ[mid]! < pos) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The first file line `>= pos` carrying `id`, or -1. */
  firstAtOrAfter(id: number, pos: number): number {
    const occ = this.occurrences(id);
    const k = this.lowerBound(id, pos);
    return k < occ.length ? occ[k]! : -1;
  }

  /** Map texts to this tier's ids (0 for unregistered texts). */
  pattern(texts: readonly string[]): Int32Array {
    const out = new Int32Array(texts.length);
    for (let i = 0; i < texts.length; i++) out[i] = this.idOf(texts[i]!);
    return out;
  }
}

/** What the caller knows about the file, to skip work (all optional). */
export interface FileHints {
  /** Every character of the file is ASCII (`TextFile.ascii`): tier 4 folds nothing in it. */
  ascii?: boolean;
  /**
   * The decoded text the lines were split from, with each line's ending
   * (`TextFile.text` and `eols`). Scanning one flat string is much cheaper
   * than reading a million lazily split substrings; lines are then only
   * read when their signature says they may match.
   */
  text?: string;
  eols?: Uint8Array;
}

const EOL_CHARS = [0, 1, 2, 1] as const;

function isBlankCode(c: number): boolean {
  return c === 0x20 || c === 0x09 || (c > 0x7f && isWhitespaceCode(c)) || (c >= 0x0a && c <= 0x0d);
}

/**
 * The per-file index: register every text any chunk may look for, then ask
 * for tiers. Tier 1 is built alone (its length prefilter skips most lines
 * without reading them); the first request for any higher tier builds
 * tiers 2–4 together in one pass, since reading each line's text is what
 * costs. Tier 4 reuses tier 3 when nothing can fold (an ASCII file and
 * queries without foldable characters).
 */
export class MatchIndex {
  /** The file's lines. */
  readonly lines: readonly string[];
  /** Work counters. */
  readonly stats: MatchStats;
  readonly #hints: FileHints;
  readonly #queries = new Set<string>();
  readonly #tiers = new Map<LineTier, TierIndex>();
  #starts: Int32Array | null | undefined;

  constructor(lines: readonly string[], stats?: MatchStats, hints: FileHints = {}) {
    this.lines = lines;
    this.stats = stats ?? newMatchStats();
    this.#hints = hints;
  }

  /** Register a text that some chunk will search for. Must precede building any tier. */
  add(text: string): void {
    if (this.#tiers.size > 0 && !this.#queries.has(text)) throw new Error("MatchIndex: queries must be added before any tier is built");
    this.#queries.add(text);
  }

  /** The index of `tier`, built on first use. */
  tier(tier: LineTier): TierIndex {
    const built = this.#tiers.get(tier);
    if (built !== undefined) return built;
    if (tier === 1) {
      this.#build([1]);
    } else {
      const foldless = this.#hints.ascii === true && [...this.#queries].every((q) => foldPunctuation(q) === q);
      this.#build(foldless ? [2, 3] : [2, 3, 4]);
      if (foldless) this.#tiers.set(4, this.#tiers.get(3)!);
    }
    return this.#tiers.get(tier)!;
  }

  /** Char offset of every line in the flat text (null: no usable text). */
  #lineStarts(): Int32Array | null {
    if (this.#starts !== undefined) return this.#starts;
    const { text, eols } = this.#hints;
    const lines = this.lines;
    this.#starts = null;
    if (text === undefined || eols === undefined || eols.length !== lines.length || text.length >= 0x7fffffff) return null;
    const starts = new Int32Array(lines.length + 1);
    let offset = 0;
    for (let i = 0; i < lines.length; i++) {
      starts[i] = offset;
      offset += lines[i]!.length + EOL_CHARS[eols[i] as 0 | 1 | 2 | 3];
    }
    starts[lines.length] = offset;
    // Lines that do not add up to the text did not come from it.
    if (offset !== text.length) return null;
    this.#starts = starts;
    return starts;
  }

  #build(tiers: readonly LineTier[]): void {
    const starts = this.#lineStarts();
    const flat = starts !== null;
    const keyers = tiers.map((tier) => new TierKeyer(tier, this.#queries, this.lines.length, flat));
    const text = this.#hints.text ?? "";
    if (tiers.length === 1) passExact(this.lines, text, starts, keyers[0]!);
    else passTrimmed(this.lines, text, starts, keyers[0]!, keyers[1]!, keyers[2]);
    for (const keyer of keyers) {
      this.#tiers.set(keyer.tier, keyer.finish());
      this.stats.linesKeyed += keyer.keyed;
    }
    this.stats.indexBuilds++;
    this.stats.linesScanned += this.lines.length;
  }
}

/**
 * The tier-1 pass. The length alone rejects most lines without reading
 * their text; the signature (read from the flat text when there is one)
 * rejects most others; only the rest are compared or looked up.
 */
function passExact(lines: readonly string[], text: string, starts: Int32Array | null, k: TierKeyer): void {
  const { lengths, sigs, ids, counts } = k;
  const longLengths = k.longLengths;
  const n = lines.length;
  for (let i = 0; i < n; i++) {
    const line = lines[i]!;
    const length = line.length;
    if (length <= MAX_TRACKED_LENGTH ? lengths[length] === 0 : !longLengths) continue;
    if (i > 0 && sameAsPrevious(lines, text, starts, i, length)) {
      const previous = ids[i - 1]!;
      if (previous !== 0) {
        ids[i] = previous;
        counts[previous]!++;
      }
      continue;
    }
    let id: number;
    if (length === 0) id = k.emptyId;
    else {
      const source = starts !== null ? text : line;
      const base = starts !== null ? starts[i]! : 0;
      const sig = signature(source, base, base + length, false);
      if (sigs[sig] === 0) continue;
      id = k.resolve(line, source, base, base + length, sig);
    }
    if (id !== 0) {
      ids[i] = id;
      counts[id]!++;
    }
  }
}

/** The pass for tiers 2, 3 and (when something can fold) 4 together: each line's text is read once. */
function passTrimmed(lines: readonly string[], text: string, starts: Int32Array | null, k2: TierKeyer, k3: TierKeyer, k4: TierKeyer | undefined): void {
  const n = lines.length;
  for (let i = 0; i < n; i++) {
    const line = lines[i]!;
    if (i > 0 && sameAsPrevious(lines, text, starts, i, line.length)) {
      repeatPrevious(k2, i);
      repeatPrevious(k3, i);
      if (k4 !== undefined) repeatPrevious(k4, i);
      continue;
    }
    const source = starts !== null ? text : line;
    const base = starts !== null ? starts[i]! : 0;
    const limit = base + line.length;
    let start = base;
    while (start < limit && isBlankCode(source.charCodeAt(start))) start++;
    let end = limit;
    while (end > start && isBlankCode(source.charCodeAt(end - 1))) end--;
    // Tier 2 keeps leading whitespace; a blank line's tier-2 key is "" too.
    probe(k2, i, line, source, base, start === limit ? base : end, false);
    probe(k3, i, line, source, start, end, false);
    if (k4 !== undefined) probe(k4, i, line, source, start, end, true);
  }
}

/**
 * Line `i` is a short line equal to line `i − 1` (runs of `}`, `end`,
 * blank lines): its ids are copied without any other work. Longer lines are
 * left to the signature cache, so this never reads most lines.
 */
function sameAsPrevious(lines: readonly string[], text: string, starts: Int32Array | null, i: number, length: number): boolean {
  if (length > 16 || lines[i - 1]!.length !== length) return false;
  if (starts === null) return lines[i] === lines[i - 1];
  const a = starts[i]!;
  const b = starts[i - 1]!;
  for (let j = 0; j < length; j++) if (text.charCodeAt(a + j) !== text.charCodeAt(b + j)) return false;
  return true;
}

function repeatPrevious(k: TierKeyer, i: number): void {
  const previous = k.ids[i - 1]!;
  if (previous !== 0) {
    k.ids[i] = previous;
    k.counts[previous]!++;
  }
}

/** Key line `i` at one tier: its region after trimming is `source[start, end)`. */
function probe(k: TierKeyer, i: number, line: string, source: string, start: number, end: number, fold: boolean): void {
  const length = end - start;
  if (length <= MAX_TRACKED_LENGTH ? k.lengths[length] === 0 : !k.longLengths) return;
  let id: number;
  if (length === 0) id = k.emptyId;
  else {
    const sig = signature(source, start, end, fold);
    if (k.sigs[sig] === 0) return;
    id = k.resolve(line, source, start, end, sig);
  }
  if (id !== 0) {
    k.ids[i] = id;
    k.counts[id]!++;
  }
}

/** Whether `source[start, end)` equals `key` (same length already checked). */
function sameText(key: string, line: string, source: string, start: number, end: number, flat: boolean): boolean {
  // Short regions (`}`, `end`, `});`) compare faster code unit by code unit
  // than through a native call.
  if (end - start <= 16) {
    for (let j = 0; start + j < end; j++) if (source.charCodeAt(start + j) !== key.charCodeAt(j)) return false;
    return true;
  }
  // In the flat text the line itself is never read; otherwise `===` is far
  // cheaper than `startsWith` when nothing was trimmed.
  if (flat) return source.startsWith(key, start);
  return start === 0 && end === line.length ? line === key : line.startsWith(key, start);
}

/** One tier's dictionary, filters and ids while a pass runs. */
class TierKeyer {
  readonly tier: LineTier;
  /** Offsets are into the flat text (else into the line itself). */
  readonly flat: boolean;
  keyed = 0;
  readonly dict: Map<string, number> = new Map();
  readonly sigs: Uint8Array = new Uint8Array(SIG_MASK + 1);
  readonly lengths: Uint8Array = new Uint8Array(MAX_TRACKED_LENGTH + 1);
  longLengths = false;
  /** The id of the empty key (blank lines), 0 when no query is blank. */
  readonly emptyId: number;
  // The last key seen per signature: repeated lines (`}`, `return;`) compare
  // against it in place instead of slicing, hashing and probing the map.
  // (Filled, not `new Array(n)`: a large holey array is slow to index.)
  readonly cacheKeys: string[] = new Array<string>(SIG_MASK + 1).fill("");
  readonly cacheIds: Int32Array = new Int32Array(SIG_MASK + 1);
  readonly ids: Int32Array;
  readonly counts: Int32Array;

  constructor(tier: LineTier, queries: ReadonlySet<string>, lineCount: number, flat: boolean) {
    this.tier = tier;
    this.flat = flat;
    for (const query of queries) {
      const key = normalizeLine(query, tier);
      if (this.dict.has(key)) continue;
      this.dict.set(key, this.dict.size + 1);
      this.sigs[signature(key, 0, key.length, tier === 4)] = 1;
      if (key.length <= MAX_TRACKED_LENGTH) this.lengths[key.length] = 1;
      else this.longLengths = true;
    }
    this.emptyId = this.dict.get("") ?? 0;
    this.ids = new Int32Array(lineCount);
    this.counts = new Int32Array(this.dict.size + 2);
  }

  /** The id of a line whose region `source[start, end)` passed the filters with signature `sig`. */
  resolve(line: string, source: string, start: number, end: number, sig: number): number {
    // A cached key equal to the raw text is also its folded key (folded keys
    // hold no foldable character). Comparing in the flat text never reads
    // the line; otherwise `===` is far cheaper than `startsWith`.
    const cached = this.cacheKeys[sig];
    // ("" never matches here: empty regions are resolved before.)
    if (cached.length === end - start && sameText(cached, line, source, start, end, this.flat)) {
      return this.cacheIds[sig]!;
    }
    this.keyed++;
    const key = normalizeLine(line, this.tier);
    const id = this.dict.get(key) ?? 0;
    this.cacheKeys[sig] = key;
    this.cacheIds[sig] = id;
    return id;
  }

  /** The finished index: occurrence lists as one flat array (CSR). */
  finish(): TierIndex {
    const size = this.dict.size;
    const counts = this.counts;
    const ids = this.ids;
    const occStart = new Int32Array(size + 2);
    for (let k = 1; k <= size; k++) occStart[k + 1] = occStart[k]! + counts[k]!;
    const occ = new Int32Array(occStart[size + 1]!);
    const fill = occStart.slice();
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (id !== 0) occ[fill[id]!++] = i;
    }
    return new TierIndex(this.tier, ids, this.dict, occStart, occ);
  }
}

/**
 * Every start `s` with `from <= s < toStart` (and `s + m <= n`) where the
 * file's ids equal `pattern`, ascending, stopping after `cap` matches.
 * Uses the occurrences of the pattern's rarest id when verifying them costs
 * at most about two passes over the region, otherwise KMP (linear).
 *
 * @example
 * ```ts
 * const index = new MatchIndex(["a", "b", "a", "b"]);
 * index.add("a"); index.add("b");
 * const t = index.tier(1);
 * findMatches(t, t.pattern(["a", "b"]), 0, 4, 21, index.stats); // [0, 2]
 * ```
 */
export function findMatches(
  index: TierIndex,
  pattern: Int32Array,
  from: number,
  toStart: number,
  cap: number,
  stats: MatchStats,
): number[] {
  const m = pattern.length;
  const n = index.ids.length;
  const last = Math.min(toStart, n - m + 1);
  const first = Math.max(0, from);
  const found: number[] = [];
  if (m === 0 || first >= last || cap <= 0) return found;
  let rarest = 0;
  let rarestCount = Infinity;
  for (let k = 0; k < m; k++) {
    const id = pattern[k]!;
    if (id === 0) return found;
    const count = index.count(id);
    if (count < rarestCount) {
      rarestCount = count;
      rarest = k;
    }
  }
  if (rarestCount === 0) return found;
  const occ = index.occurrences(pattern[rarest]!);
  const lo = index.lowerBound(pattern[rarest]!, first + rarest);
  const hi = index.lowerBound(pattern[rarest]!, last + rarest);
  const region = last - first + m;
  if ((hi - lo) * m <= 2 * region + 1024) {
    const ids = index.ids;
    for (let j = lo; j < hi; j++) {
      const s = occ[j]! - rarest;
      stats.candidatesVerified++;
      let k = 0;
      while (k < m && ids[s + k] === pattern[k]) k++;
      stats.idComparisons += k < m ? k + 1 : m;
      if (k === m) {
        found.push(s);
        if (found.length >= cap) break;
      }
    }
    return found;
  }
  return kmpSearch(index.ids, pattern, first, last, cap, found, stats);
}

function kmpSearch(
  ids: Int32Array,
  pattern: Int32Array,
  first: number,
  last: number,
  cap: number,
  found: number[],
  stats: MatchStats,
): number[] {
  const m = pattern.length;
  const fail = new Int32Array(m);
  for (let i = 1, k = 0; i < m; i++) {
    while (k > 0 && pattern[i] !== pattern[k]) k = fail[k - 1]!;
    if (pattern[i] === pattern[k]) k++;
    fail[i] = k;
  }
  const end = last + m - 1;
  let k = 0;
  let steps = 0;
  for (let i = first; i < end; i++) {
    const id = ids[i];
    while (k > 0 && id !== pattern[k]) {
      k = fail[k - 1]!;
      steps++;
    }
    steps++;
    if (id === pattern[k]) k++;
    if (k === m) {
      found.push(i - m + 1);
      if (found.length >= cap) break;
      k = fail[k - 1]!;
    }
  }
  stats.kmpSteps += steps + m;
  return found;
}

/**
 * Whether the file's ids equal `pattern` at `start`.
 *
 * @example
 * ```ts
 * const index = new MatchIndex(["a", "b"]);
 * index.add("b");
 * const t = index.tier(1);
 * matchesAt(t, t.pattern(["b"]), 1); // true
 * ```
 */
export function matchesAt(index: TierIndex, pattern: Int32Array, start: number): boolean {
  const m = pattern.length;
  if (start < 0 || start + m > index.ids.length) return false;
  for (let k = 0; k < m; k++) {
    const id = pattern[k]!;
    if (id === 0 || index.ids[start + k] !== id) return false;
  }
  return true;
}
