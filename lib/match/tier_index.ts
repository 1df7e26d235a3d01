/**
 * The ids and occurrence lists of one matching tier, and the work counters
 * of the matching engine (SPEC §5.5).
 *
 * @module
 */
import { type LineTier, normalizeLine } from "./normalize.ts";

/**
 * Work counters, for tests that check the algorithm does a bounded amount of
 * work (instead of timing it) and for benchmarks.
 */
export interface MatchStats {
  /** Tier indexes built (at most one per tier per file). */
  indexBuilds: number;
  /** File lines visited by index builds. */
  linesScanned: number;
  /** Key comparisons of line regions that passed the prefilter (per tier; one per key of their signature, or one lookup when it is crowded). */
  linesKeyed: number;
  /** Candidate start positions verified from occurrence lists. */
  candidatesVerified: number;
  /** Id comparisons during candidate verification. */
  idComparisons: number;
  /** Multi-pattern (Aho–Corasick) passes over a tier's ids: at most two per tier. */
  scanPasses: number;
  /** Ids read and failure links followed by those passes, plus the cells of their dense transition tables. */
  scanSteps: number;
  /** Occurrences they recorded (at most 32 per pattern and direction). */
  scanReports: number;
  /** Passes run for a pattern nobody registered (locate registers all it asks about: stays 0). */
  extraPasses: number;
  /** Votes cast while looking for the closest region. */
  votes: number;
  /** Cells of the small LCS tables of diagnostics. */
  lcsCells: number;
  /** File lines visited by diagnostics scans (similar lines, loose keys, anchor checks). */
  diagnosticLines: number;
  /** Native substring searches of the flat text that ruled tiers in or out. */
  textProbes: number;
  /** Entries the similarity pass put in its trigram tables (linear in its queries, whatever stretches of the file it reads). */
  similarSetup: number;
}

/**
 * Fresh zeroed counters.
 *
 * @example
 * ```ts
 * const stats = newMatchStats();
 * stats.scanPasses; // 0
 * ```
 */
export function newMatchStats(): MatchStats {
  return {
    indexBuilds: 0,
    linesScanned: 0,
    linesKeyed: 0,
    candidatesVerified: 0,
    idComparisons: 0,
    scanPasses: 0,
    scanSteps: 0,
    scanReports: 0,
    extraPasses: 0,
    votes: 0,
    lcsCells: 0,
    diagnosticLines: 0,
    textProbes: 0,
    similarSetup: 0,
  };
}

/** A tier's dictionary as a {@linkcode TierIndex} reads it: normalised key text → id 1..size (a `Map` will do). */
export interface KeyLookup {
  readonly size: number;
  get(key: string): number | undefined;
}

/**
 * The ids and occurrence lists of one tier: which file lines carry which
 * registered text (under the tier's normalisation), ascending.
 *
 * @example
 * ```ts
 * const index = new MatchIndex(["a", "b", "a"]);
 * index.add("a");
 * const t = index.tier(1);
 * [...t.occurrences(t.idOf("a"))]; // [0, 2]
 * ```
 */
export class TierIndex {
  /** The tier whose normalisation keyed the lines. */
  readonly tier: LineTier;
  /** Per file line: the id of its key, 0 when no query line has that key. */
  readonly ids: Int32Array;
  readonly #dict: KeyLookup;
  /** Key text by id (index 0 unused). */
  readonly keyOf: readonly string[];
  /** The id of each query text the keyer was given, in its order (when the keyer kept them). */
  readonly queryIds: Int32Array | undefined;
  /**
   * The lower tier whose matches this one repeats exactly, if any: no line
   * was keyed here that was not there, and no two of its keys merge here,
   * so every chunk matches at the same places (a search here is skipped).
   */
  sameAs: TierIndex | undefined;
  readonly #occStart: Int32Array;
  #occ: Int32Array | undefined;

  /** `counts[id]`: how many lines carry each id (the occurrence lists are filled on first use). */
  constructor(tier: LineTier, ids: Int32Array, dict: KeyLookup, counts: Int32Array, keyOf: readonly string[] = [], queryIds?: Int32Array) {
    this.queryIds = queryIds;
    this.tier = tier;
    this.ids = ids;
    this.#dict = dict;
    this.keyOf = keyOf;
    this.sameAs = undefined;
    const size = dict.size;
    const occStart = new Int32Array(size + 2);
    for (let k = 1; k <= size; k++) occStart[k + 1] = occStart[k]! + counts[k]!;
    this.#occStart = occStart;
  }

  // Occurrence lists as one flat array (CSR): positions of id k are
  // occ[occStart[k] .. occStart[k+1]). Built lazily: a search whose rarest
  // line never occurs, or a tier nobody searches, never pays for it.
  #occurrenceArray(): Int32Array {
    if (this.#occ !== undefined) return this.#occ;
    const occStart = this.#occStart;
    const occ = new Int32Array(occStart[occStart.length - 1]!);
    const fill = occStart.slice();
    const ids = this.ids;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (id !== 0) occ[fill[id]!++] = i;
    }
    this.#occ = occ;
    return occ;
  }

  /** One more than the largest id (ids are 1..idCount-1; 0 is "no query line"). */
  get idCount(): number {
    return this.#dict.size + 1;
  }

  /** The id of a (registered) query text at this tier; 0 if it was never registered. */
  idOf(text: string): number {
    return this.#dict.get(normalizeLine(text, this.tier)) ?? 0;
  }

  /** Whether this tier's matches are `other`'s (the same index, or repeating it through `sameAs`). */
  repeats(other: TierIndex | undefined): boolean {
    for (let t: TierIndex | undefined = this; t !== undefined; t = t.sameAs) if (t === other) return true;
    return false;
  }

  /** How many file lines carry `id`. */
  count(id: number): number {
    if (id <= 0) return 0;
    return this.#occStart[id + 1]! - this.#occStart[id]!;
  }

  /** The ascending file positions of `id` (a view, do not modify). */
  occurrences(id: number): Int32Array {
    if (id <= 0 || this.count(id) === 0) return new Int32Array(0);
    return this.#occurrenceArray().subarray(this.#occStart[id]!, this.#occStart[id + 1]!);
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
