/**
 * Where a chunk's ids occur in a tier index (SPEC §5.5), for every chunk
 * of a file together, near-linear in the file and the patch whatever the
 * input.
 *
 * Each pattern (the id sequence of a chunk's old or new side) is resolved
 * once per tier, independently of where a search starts:
 * - cheaply from the occurrences of its rarest line, verified one by one,
 *   when that line occurs at most {@linkcode EASY_OCCURRENCES} times, or when
 *   the verifications of ALL registered patterns whose lines are frequent fit
 *   a budget of two passes over the file: its full list of occurrences
 *   (when they do not fit, the pass below is needed anyway, and takes them
 *   all: verifying some first would only add work);
 * - otherwise (every line of it frequent: `}` runs, low-entropy files) by
 *   ONE Aho–Corasick pass over the file's ids for all such patterns at once
 *   (`automaton.ts`), which records each pattern's first
 *   {@linkcode OCCURRENCE_CAP} occurrences, and, for the patterns that have
 *   more, one backward pass for their last {@linkcode OCCURRENCE_CAP}.
 *
 * From the first and last 32 occurrences every question locate asks is
 * answered exactly: the first ≤ 21 matches at or after a position (one:
 * unique; several: ambiguous), and the first ≤ 21 before it (out of order).
 * One approximation, documented in docs/performance.md: when a chunk matches more
 * than 64 places and its search starts after the 12th of them, the
 * `ambiguous_hunk` candidates listed are real matches after the start but
 * not necessarily the first ones.
 *
 * @module
 */
import { IdAutomaton } from "./automaton.ts";
import type { MatchStats, TierIndex } from "./tier_index.ts";

/** A pattern whose rarest line occurs this often or less is always verified directly. */
export const EASY_OCCURRENCES = 64;
/** Occurrences kept from each end of a frequent pattern's list. */
export const OCCURRENCE_CAP = 32;

/** What is known about where one pattern occurs. */
type Occurrences =
  | { kind: "all"; at: Int32Array }
  | { kind: "ends"; first: Int32Array; last: Int32Array };

function sameIds(a: Int32Array, b: Int32Array): boolean {
  if (a.length !== b.length) return false;
  for (let j = 0; j < a.length; j++) if (a[j] !== b[j]) return false;
  return true;
}

/**
 * Distinct patterns by content, numbered in order of first sight: a hash of
 * the ids picks a bucket, the ids are compared in it (no string key per
 * pattern: building one cost more than the lookup it served).
 */
class DistinctPatterns {
  readonly patterns: Int32Array[] = [];
  /** Hash → the number of the one pattern with it, or the numbers of several. */
  readonly #buckets = new Map<number, number | number[]>();

  numberOf(p: Int32Array): number {
    let h = 0x811c9dc5 ^ p.length;
    for (let j = 0; j < p.length; j++) h = Math.imul(h ^ p[j]!, 0x01000193);
    const bucket = this.#buckets.get(h);
    if (typeof bucket === "number") {
      if (sameIds(this.patterns[bucket]!, p)) return bucket;
    } else if (bucket !== undefined) {
      for (const q of bucket) if (sameIds(this.patterns[q]!, p)) return q;
    }
    const q = this.patterns.length;
    this.patterns.push(p);
    if (bucket === undefined) this.#buckets.set(h, q);
    else if (typeof bucket === "number") this.#buckets.set(h, [bucket, q]);
    else bucket.push(q);
    return q;
  }
}

/** One text sequence asked about: its ids, their pattern number, and (once resolved) where they occur. */
interface Entry {
  ids: Int32Array;
  pattern: number;
  occ: Occurrences | undefined;
}

function lowerBound(values: Int32Array, x: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The occurrences of one tier's patterns, resolved on first use.
 *
 * @example
 * ```ts
 * const index = new MatchIndex(["a", "b", "a", "b"]);
 * index.add("a"); index.add("b");
 * const t = index.tier(1);
 * const search = new PatternSearch(t, [["a", "b"]], index.stats);
 * search.after(["a", "b"], 1, 21); // [2]
 * ```
 */
export class PatternSearch {
  readonly #index: TierIndex;
  readonly #stats: MatchStats;
  /** Each registered (or asked-about) text sequence, by identity: locate asks about the same arrays again and again. */
  readonly #entries = new Map<readonly string[], Entry>();
  readonly #distinct = new DistinctPatterns();
  /** Occurrences by pattern number, once resolved. */
  readonly #known: (Occurrences | undefined)[] = [];
  /** Registered patterns not resolved yet, by number: the next pass takes them all. */
  readonly #pending = new Set<number>();
  /** Verifications still allowed beyond the always-cheap ones. */
  #budget: number;
  /** Whether the registered frequent patterns are verified directly (all fit the budget together). */
  readonly #directFrequent: boolean;

  /**
   * `patterns`: every line sequence that may be asked about (others cost a
   * pass of their own). `queries`, when the caller numbered the patterns'
   * lines: `ids[k]` the query ids (1, 2, …) of `patterns[k]`, `queryIds[q − 1]`
   * query `q`'s id at this tier (so no line text is looked up per pattern;
   * where each query's id is its own — tier 1 — the arrays are taken as
   * they are).
   */
  constructor(
    index: TierIndex,
    patterns: readonly (readonly string[])[],
    stats: MatchStats,
    queries?: { ids: readonly Int32Array[]; queryIds: Int32Array },
  ) {
    this.#index = index;
    this.#stats = stats;
    this.#budget = 2 * index.ids.length + 1024;
    let frequentCost = 0;
    const queryIds = queries?.queryIds;
    let same = queryIds !== undefined;
    for (let q = 0; same && q < queryIds!.length; q++) same = queryIds![q] === q + 1;
    for (let k = 0; k < patterns.length; k++) {
      let ids = queries?.ids[k];
      if (ids !== undefined && !same) {
        const own = ids;
        ids = new Int32Array(own.length);
        for (let j = 0; j < own.length; j++) ids[j] = queryIds![own[j]! - 1]!;
      }
      const entry = this.#entry(patterns[k]!, ids);
      if (this.#pending.has(entry.pattern)) continue;
      this.#pending.add(entry.pattern);
      const rarest = this.#rarestCount(entry.ids);
      if (rarest > EASY_OCCURRENCES && entry.ids.length <= index.ids.length) frequentCost += rarest * entry.ids.length;
    }
    this.#directFrequent = frequentCost <= this.#budget;
  }

  #rarestCount(pattern: Int32Array): number {
    let rarest = Infinity;
    for (let k = 0; k < pattern.length; k++) rarest = Math.min(rarest, this.#index.count(pattern[k]!));
    return rarest;
  }

  /** The last sequence asked about and its entry: locate asks about one chunk's texts a few times in a row. */
  #lastTexts: readonly string[] | undefined;
  #lastEntry: Entry | undefined;

  #entry(texts: readonly string[], known?: Int32Array): Entry {
    if (texts === this.#lastTexts) return this.#lastEntry!;
    let entry = this.#entries.get(texts);
    if (entry === undefined) {
      const ids = known ?? this.#index.pattern(texts);
      entry = { ids, pattern: this.#distinct.numberOf(ids), occ: undefined };
      // Kept dense (numbers come in order), so writes out of order stay cheap.
      while (this.#known.length <= entry.pattern) this.#known.push(undefined);
      this.#entries.set(texts, entry);
    }
    this.#lastTexts = texts;
    this.#lastEntry = entry;
    return entry;
  }

  /** The ids of `texts` at this tier (computed once per sequence). */
  ids(texts: readonly string[]): Int32Array {
    return this.#entry(texts).ids;
  }

  /**
   * The first `cap` (≤ {@linkcode OCCURRENCE_CAP}) starts `>= from` where the
   * file's lines equal `texts` at this tier, ascending.
   */
  after(texts: readonly string[], from: number, cap: number): number[] {
    const occ = this.#occurrences(this.#entry(texts));
    const out: number[] = [];
    const take = (values: Int32Array, at: number): void => {
      for (let k = lowerBound(values, at); k < values.length && out.length < cap; k++) out.push(values[k]!);
    };
    if (occ.kind === "all") {
      take(occ.at, from);
      return out;
    }
    take(occ.first, from);
    if (out.length >= cap) return out;
    // Past the first occurrences: the last ones hold all that follow when
    // they reach back far enough, else at least OCCURRENCE_CAP real ones.
    take(occ.last, Math.max(from, occ.first[occ.first.length - 1]! + 1));
    return out;
  }

  /** The first `cap` (≤ {@linkcode OCCURRENCE_CAP}) starts `< to` where the file's lines equal `texts`, ascending. */
  before(texts: readonly string[], to: number, cap: number): number[] {
    const occ = this.#occurrences(this.#entry(texts));
    const values = occ.kind === "all" ? occ.at : occ.first;
    const out: number[] = [];
    for (let k = 0; k < values.length && values[k]! < to && out.length < cap; k++) out.push(values[k]!);
    return out;
  }

  #occurrences(entry: Entry): Occurrences {
    if (entry.occ !== undefined) return entry.occ;
    entry.occ = this.#resolve(entry.ids, entry.pattern);
    return entry.occ;
  }

  #resolve(pattern: Int32Array, number: number): Occurrences {
    const known = this.#known[number];
    if (known !== undefined) return known;
    const direct = this.#direct(pattern);
    if (direct !== undefined) {
      this.#known[number] = direct;
      this.#pending.delete(number);
      return direct;
    }
    if (!this.#pending.has(number)) {
      // Not registered: a pass of its own (locate registers every pattern it asks about).
      this.#stats.extraPasses++;
      this.#pending.add(number);
    }
    this.#pass();
    return this.#known[number]!;
  }

  /** All occurrences from the rarest line's, when that is cheap; undefined when a pass is needed. */
  #direct(pattern: Int32Array): Occurrences | undefined {
    const index = this.#index;
    const m = pattern.length;
    const n = index.ids.length;
    if (m === 0 || m > n) return { kind: "all", at: new Int32Array(0) };
    let rarest = 0;
    let rarestCount = Infinity;
    for (let k = 0; k < m; k++) {
      const count = index.count(pattern[k]!);
      if (count < rarestCount) {
        rarestCount = count;
        rarest = k;
      }
    }
    if (rarestCount === 0) return { kind: "all", at: new Int32Array(0) };
    const cost = rarestCount * m;
    if (rarestCount > EASY_OCCURRENCES) {
      if (!this.#directFrequent || cost > this.#budget) return undefined;
      this.#budget -= cost;
    }
    const ids = index.ids;
    const occ = index.occurrences(pattern[rarest]!);
    const found: number[] = [];
    let compared = 0;
    for (let j = 0; j < occ.length; j++) {
      const s = occ[j]! - rarest;
      if (s < 0 || s + m > n) continue;
      let k = 0;
      while (k < m && ids[s + k] === pattern[k]) k++;
      compared += k < m ? k + 1 : m;
      if (k === m) found.push(s);
    }
    this.#stats.candidatesVerified += occ.length;
    this.#stats.idComparisons += compared;
    return { kind: "all", at: Int32Array.from(found) };
  }

  /** One forward pass for every pending pattern, and a backward one for those that occur more than the cap. */
  #pass(): void {
    const pending: [number, Int32Array][] = [];
    for (const number of this.#pending) {
      if (this.#known[number] !== undefined) continue;
      const p = this.#distinct.patterns[number]!;
      // Patterns that never occur, or whose rarest line is rare, are resolved directly.
      const rarest = this.#rarestCount(p);
      if (rarest <= EASY_OCCURRENCES || p.length === 0 || p.length > this.#index.ids.length) this.#known[number] = this.#direct(p)!;
      else pending.push([number, p]);
    }
    this.#pending.clear();
    if (pending.length === 0) return;
    const ids = this.#index.ids;
    const idCount = this.#index.idCount;
    const work = { steps: 0, reports: 0, cells: 0 };
    const forward = new IdAutomaton(pending.map(([, p]) => p), idCount, ids.length).scan(ids, false, OCCURRENCE_CAP, work);
    this.#stats.scanPasses++;
    const frequent: number[] = [];
    for (let k = 0; k < pending.length; k++) {
      if (forward[k]!.length < OCCURRENCE_CAP) this.#known[pending[k]![0]] = { kind: "all", at: forward[k]! };
      else frequent.push(k);
    }
    if (frequent.length > 0) {
      const reversed = frequent.map((k) => pending[k]![1].slice().reverse());
      const backward = new IdAutomaton(reversed, idCount, ids.length).scan(ids, true, OCCURRENCE_CAP, work);
      this.#stats.scanPasses++;
      frequent.forEach((k, j) => {
        const last = backward[j]!.slice().reverse();
        this.#known[pending[k]![0]] = { kind: "ends", first: forward[k]!, last };
      });
    }
    // A dense table's cells are work like steps (each is written once).
    this.#stats.scanSteps += work.steps + work.cells;
    this.#stats.scanReports += work.reports;
  }
}

/**
 * Whether the file's ids equal `pattern` at `start` (`pattern` from
 * {@linkcode PatternSearch.ids}).
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
