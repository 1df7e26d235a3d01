/**
 * Where a chunk's ids occur in a tier index (SPEC §5.5), for every chunk
 * of a file together, near-linear in the file and the patch whatever the
 * input.
 *
 * Each pattern (the id sequence of a chunk's old or new side) is resolved
 * once per tier, independently of where a search starts:
 * - cheaply from the occurrences of its rarest line, verified one by one,
 *   when that line occurs at most {@linkcode EASY_OCCURRENCES} times, or while
 *   the verifications fit a budget of two passes over the file: its full
 *   list of occurrences;
 * - otherwise (every line of it frequent: `}` runs, low-entropy files) by
 *   ONE Aho–Corasick pass over the file's ids for all such patterns at once
 *   (`automaton.ts`), which records each pattern's first
 *   {@linkcode OCCURRENCE_CAP} occurrences, and, for the patterns that have
 *   more, one backward pass for their last {@linkcode OCCURRENCE_CAP}.
 *
 * From the first and last 32 occurrences every question locate asks is
 * answered exactly: the first ≤ 21 matches at or after a position (one:
 * unique; several: ambiguous), and the first ≤ 21 before it (out of order).
 * One approximation, documented in the README: when a chunk matches more
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

/**
 * A pattern's ids as a string key: their bytes read as UTF-16 units, two per
 * id (exact, and several times cheaper than a decimal `join` or a
 * concatenation per id on long patterns).
 */
function keyOf(pattern: Int32Array): string {
  const units = new Uint16Array(pattern.buffer, pattern.byteOffset, 2 * pattern.length);
  const step = 8192; // argument count per call stays small
  if (units.length <= step) return String.fromCharCode.apply(null, units as unknown as number[]);
  let key = "";
  for (let a = 0; a < units.length; a += step) key += String.fromCharCode.apply(null, units.subarray(a, a + step) as unknown as number[]);
  return key;
}

/** One text sequence asked about: its ids, their key, and (once resolved) where they occur. */
interface Entry {
  ids: Int32Array;
  key: string;
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
  readonly #known = new Map<string, Occurrences>();
  /** Registered patterns not resolved yet, by key: the next pass takes them all. */
  readonly #pending = new Map<string, Int32Array>();
  /** Verifications still allowed beyond the always-cheap ones. */
  #budget: number;

  /** `patterns`: every line sequence that may be asked about (others cost a pass of their own). */
  constructor(index: TierIndex, patterns: readonly (readonly string[])[], stats: MatchStats) {
    this.#index = index;
    this.#stats = stats;
    this.#budget = 2 * index.ids.length + 1024;
    for (const texts of patterns) {
      const entry = this.#entry(texts);
      this.#pending.set(entry.key, entry.ids);
    }
  }

  #entry(texts: readonly string[]): Entry {
    let entry = this.#entries.get(texts);
    if (entry === undefined) {
      const ids = this.#index.pattern(texts);
      entry = { ids, key: keyOf(ids), occ: undefined };
      this.#entries.set(texts, entry);
    }
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
    entry.occ = this.#resolve(entry.ids, entry.key);
    return entry.occ;
  }

  #resolve(pattern: Int32Array, key: string): Occurrences {
    const known = this.#known.get(key);
    if (known !== undefined) return known;
    const direct = this.#direct(pattern);
    if (direct !== undefined) {
      this.#known.set(key, direct);
      this.#pending.delete(key);
      return direct;
    }
    if (!this.#pending.has(key)) {
      // Not registered: a pass of its own (locate registers every pattern it asks about).
      this.#stats.extraPasses++;
      this.#pending.set(key, pattern);
    }
    this.#pass();
    return this.#known.get(key)!;
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
      if (cost > this.#budget) return undefined;
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
    const pending: [string, Int32Array][] = [];
    for (const [key, p] of this.#pending) {
      if (this.#known.has(key)) continue;
      // Patterns that never occur, or whose rarest line is rare, are resolved directly.
      let rarest = Infinity;
      for (let k = 0; k < p.length; k++) rarest = Math.min(rarest, this.#index.count(p[k]!));
      if (rarest <= EASY_OCCURRENCES || p.length === 0 || p.length > this.#index.ids.length) this.#known.set(key, this.#direct(p)!);
      else pending.push([key, p]);
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
      if (forward[k]!.length < OCCURRENCE_CAP) this.#known.set(pending[k]![0], { kind: "all", at: forward[k]! });
      else frequent.push(k);
    }
    if (frequent.length > 0) {
      const reversed = frequent.map((k) => pending[k]![1].slice().reverse());
      const backward = new IdAutomaton(reversed, idCount, ids.length).scan(ids, true, OCCURRENCE_CAP, work);
      this.#stats.scanPasses++;
      frequent.forEach((k, j) => {
        const last = backward[j]!.slice().reverse();
        this.#known.set(pending[k]![0], { kind: "ends", first: forward[k]!, last });
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
