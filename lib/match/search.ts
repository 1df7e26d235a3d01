/**
 * Searching a chunk's ids in a tier index (SPEC §5.5): from the occurrences
 * of its rarest line when verifying them is cheap, otherwise with KMP, which
 * is linear whatever the input; both stop after the cap.
 *
 * @module
 */
import type { MatchStats, TierIndex } from "./tier_index.ts";

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

