/**
 * Resolving a line region that passed the signature filter to the one key
 * it may equal, with at most ONE full comparison per line whatever the keys
 * (SPEC §5.5: key comparisons bounded per line). Keys that share a
 * signature are grouped by length; a group of several keys gets a few
 * discriminating positions, chosen so that no two of its keys agree on all
 * of them, and a table from the characters there to the key. Keys alike at
 * every sampled character (`K00001M00N1Z`, `K00002M00N2Z`, …, or eight
 * 240-character lines differing near the end) — easy to send on purpose —
 * then cost a handful of character reads and one comparison per line
 * instead of one comparison per key.
 *
 * @module
 */
import { foldCode, foldPunctuation } from "./normalize.ts";

/** Discriminating positions per group at most: six 8-bit characters pack exactly into a double. */
const MAX_POSITIONS = 6;
/** Groups (distinct lengths) per signature beyond which a region is looked up by its text. */
const GROUP_LIMIT = 8;
/** Above this many key characters a group is not analysed (its regions are looked up by text). */
const MAX_ANALYSIS = 4_000_000;

const FOLDABLE = /[\u00a0\u2000-\u200a\u2010-\u2015\u2018-\u201f\u202f\u205f\u3000\u2212\u2032\u2033]/;

/**
 * (group, characters at its positions) → key id: open addressing over
 * typed arrays, the characters packed three to a 24-bit word.
 */
class PackedTable {
  readonly #mask: number;
  readonly #group: Int32Array;
  readonly #hi: Int32Array;
  readonly #lo: Int32Array;
  readonly #id: Int32Array;

  constructor(entries: number) {
    let capacity = 16;
    while (capacity < 2 * entries) capacity *= 2;
    this.#mask = capacity - 1;
    this.#group = new Int32Array(capacity).fill(-1);
    this.#hi = new Int32Array(capacity);
    this.#lo = new Int32Array(capacity);
    this.#id = new Int32Array(capacity);
  }

  #slot(group: number, hi: number, lo: number): number {
    // Mix all bits into the low ones the mask keeps (murmur3's finaliser).
    let h = Math.imul(group + 1, 0x9e3779b1) ^ Math.imul(hi, 0x85ebca6b) ^ Math.imul(lo ^ 0x5bd1e995, 0xc2b2ae35);
    h ^= h >>> 16;
    h = Math.imul(h, 0x7feb352d);
    h ^= h >>> 15;
    return h & this.#mask;
  }

  set(group: number, hi: number, lo: number, id: number): void {
    let s = this.#slot(group, hi, lo);
    while (this.#group[s]! >= 0) s = (s + 1) & this.#mask;
    this.#group[s] = group;
    this.#hi[s] = hi;
    this.#lo[s] = lo;
    this.#id[s] = id;
  }

  get(group: number, hi: number, lo: number): number {
    for (let s = this.#slot(group, hi, lo); this.#group[s]! >= 0; s = (s + 1) & this.#mask) {
      if (this.#group[s] === group && this.#hi[s] === hi && this.#lo[s] === lo) return this.#id[s]!;
    }
    return 0;
  }
}

/**
 * Whether `text[start, end)` equals `key` (the same length), folded at
 * tier 4 when `fold`: one comparison.
 *
 * @example
 * ```ts
 * sameRegion("a-b", "xa\u2013b", 1, 4, true); // true
 * ```
 */
export function sameRegion(key: string, text: string, start: number, end: number, fold: boolean): boolean {
  const length = end - start;
  // Short regions (`}`, `end`, `});`) compare faster code unit by code
  // unit; longer ones natively (a slice of the flat text is a view).
  if (length <= 16) {
    if (fold) {
      for (let j = 0; j < length; j++) if (foldCode(text.charCodeAt(start + j)) !== key.charCodeAt(j)) return false;
    } else {
      for (let j = 0; j < length; j++) if (text.charCodeAt(start + j) !== key.charCodeAt(j)) return false;
    }
    return true;
  }
  if (text.startsWith(key, start)) return true;
  if (!fold) return false;
  // A folded key equals the region only through characters that fold.
  const region = text.slice(start, end);
  return FOLDABLE.test(region) && foldPunctuation(region) === key;
}

/** Which characters were seen at the position being counted (`at[c] === stamp`). */
interface Marks {
  at: Int32Array;
  stamp: number;
}

/**
 * Greedy discriminating positions for distinct keys of one length: the
 * positions with the most distinct characters first, until the characters
 * there tell every key apart or {@linkcode MAX_POSITIONS} are taken.
 * Undefined when they do not, or a character there is not 8-bit.
 */
function discriminate(keys: readonly string[], marks: Marks): Int32Array | undefined {
  const g = keys.length;
  const length = keys[0]!.length;
  if (g * length > MAX_ANALYSIS) return undefined;
  if (g === 2) {
    // The usual collision: two keys, told apart by their first difference.
    let p = 0;
    while (p < length && keys[0]!.charCodeAt(p) === keys[1]!.charCodeAt(p)) p++;
    return keys[0]!.charCodeAt(p) > 0xff || keys[1]!.charCodeAt(p) > 0xff ? undefined : Int32Array.of(p);
  }
  const distinct: { p: number; count: number }[] = [];
  for (let p = 0; p < length; p++) {
    let count = 0;
    const stamp = ++marks.stamp;
    for (let k = 0; k < g; k++) {
      const c = keys[k]!.charCodeAt(p);
      if (marks.at[c] !== stamp) {
        marks.at[c] = stamp;
        count++;
      }
    }
    if (count > 1) distinct.push({ p, count });
  }
  distinct.sort((a, b) => b.count - a.count || a.p - b.p);
  const positions: number[] = [];
  const codes = new Float64Array(g);
  const seen = new Set<number>();
  let reach = 1;
  for (const { p, count } of distinct) {
    if (positions.length === MAX_POSITIONS) break;
    positions.push(p);
    for (let k = 0; k < g; k++) {
      const c = keys[k]!.charCodeAt(p);
      if (c > 0xff) return undefined;
      codes[k] = codes[k]! * 256 + c;
    }
    // Telling g keys apart takes at least that many combinations.
    reach *= count;
    if (reach < g) continue;
    seen.clear();
    for (let k = 0; k < g; k++) seen.add(codes[k]!);
    if (seen.size === g) return Int32Array.from(positions);
  }
  return undefined;
}

/** Packed characters of `text` at `start + positions[k]`, three to a word; [-1, -1] when one is not 8-bit. */
function packAt(text: string, start: number, positions: Int32Array, fold: boolean): [number, number] {
  let hi = 0;
  let lo = 0;
  for (let k = 0; k < positions.length; k++) {
    let c = text.charCodeAt(start + positions[k]!);
    if (fold) c = foldCode(c);
    if (c > 0xff) return NOT_PACKED;
    if (k < 3) hi = (hi << 8) | c;
    else lo = (lo << 8) | c;
  }
  return [hi, lo];
}
const NOT_PACKED: [number, number] = [-1, -1];

/**
 * The keys of one tier by signature, resolving a region to its key.
 *
 * @example
 * ```ts
 * const groups = new KeyGroups(["", "ab", "ac"], [0, 7, 7], 8, false, new Map([["ab", 1], ["ac", 2]]));
 * groups.resolve("xac", 1, 3, 7); // 2
 * ```
 */
export class KeyGroups {
  /** Full comparisons and text lookups made (at most one per resolved region). */
  compared = 0;
  readonly #keys: readonly string[];
  readonly #fold: boolean;
  readonly #dict: ReadonlyMap<string, number>;
  // Groups (keys of one length sharing one signature) as flat arrays: a
  // signature's groups are first .. first + count, packed in one entry
  // `bySig[sig] = first * 16 + min(count, 15)` (0: none), and each group's
  // key length and single key id (0 when it has several) side by side in
  // `info[2 * group]`, `info[2 * group + 1]`: a pass over a million lines
  // resolves most of them, and each separate table is one more cache miss.
  readonly #bySig: Int32Array;
  readonly #info: Int32Array;
  /** Discriminating positions of a several-key group, or undefined: look the region up by text. */
  readonly #positions: (Int32Array | undefined)[];
  readonly #table: PackedTable;

  /**
   * `keys[id]` is key `id` (index 0 unused), `sigOf[id]` its signature
   * (`bits` bits); `dict` maps key text to id (for regions looked up by
   * text). Empty keys are not grouped (the passes handle blank lines
   * themselves).
   */
  constructor(keys: readonly string[], sigOf: readonly number[], bits: number, fold: boolean, dict: ReadonlyMap<string, number>) {
    const sigCount = 1 << bits;
    const bySig = (this.#bySig = new Int32Array(sigCount));
    this.#keys = keys;
    this.#fold = fold;
    this.#dict = dict;
    // Ids by signature (a counting sort: no map per signature), then by length.
    const bucketStart = new Int32Array(sigCount + 1);
    for (let id = 1; id < keys.length; id++) if (keys[id]!.length > 0) bucketStart[sigOf[id]! + 1]!++;
    for (let sig = 0; sig < sigCount; sig++) bucketStart[sig + 1]! += bucketStart[sig]!;
    const fill = bucketStart.slice(0, sigCount);
    const sorted = new Int32Array(bucketStart[sigCount]!);
    for (let id = 1; id < keys.length; id++) if (keys[id]!.length > 0) sorted[fill[sigOf[id]!]!++] = id;
    const lengths: number[] = [];
    const singles: number[] = [];
    this.#positions = [];
    const packed: { group: number; positions: Int32Array; ids: number[] }[] = [];
    let entries = 0;
    let marks: Marks | undefined;
    for (let b = 0; b < sorted.length;) {
      const sig = sigOf[sorted[b]!]!;
      let e = b;
      while (e < sorted.length && sigOf[sorted[e]!] === sig) e++;
      const firstGroup = lengths.length;
      if (e - b === 1) {
        // The usual bucket: one key.
        lengths.push(keys[sorted[b]!]!.length);
        singles.push(sorted[b]!);
        this.#positions.push(undefined);
        bySig[sig] = firstGroup * 16 + 1;
        b = e;
        continue;
      }
      // Several keys: by length (a bucket is small), one group per length.
      const bucket = Array.from(sorted.subarray(b, e)).sort((x, y) => keys[x]!.length - keys[y]!.length);
      let groups = 0;
      for (let r = 0; r < bucket.length;) {
        const length = keys[bucket[r]!]!.length;
        let t = r;
        while (t < bucket.length && keys[bucket[t]!]!.length === length) t++;
        const group = lengths.length;
        const ids = bucket.slice(r, t);
        const positions = ids.length === 1 ? undefined : discriminate(ids.map((id) => keys[id]!), (marks ??= { at: new Int32Array(65536), stamp: 0 }));
        lengths.push(length);
        singles.push(ids.length === 1 ? ids[0]! : 0);
        this.#positions.push(positions);
        if (positions !== undefined) {
          packed.push({ group, positions, ids });
          entries += ids.length;
        }
        groups++;
        r = t;
      }
      bySig[sig] = firstGroup * 16 + Math.min(groups, 15);
      b = e;
    }
    const info = (this.#info = new Int32Array(2 * lengths.length));
    for (let g = 0; g < lengths.length; g++) {
      info[2 * g] = lengths[g]!;
      info[2 * g + 1] = singles[g]!;
    }
    this.#table = new PackedTable(entries);
    for (const { group, positions, ids } of packed) {
      for (const id of ids) {
        const [hi, lo] = packAt(keys[id]!, 0, positions, false);
        this.#table.set(group, hi, lo, id);
      }
    }
  }

  /**
   * The id of the key equal to the (non-empty) region `text[start, end)`
   * with signature `sig`, or 0: at most one comparison or text lookup.
   */
  resolve(text: string, start: number, end: number, sig: number): number {
    const entry = this.#bySig[sig]!;
    if (entry === 0) return 0;
    const count = entry & 15;
    if (count > GROUP_LIMIT) return this.#byText(text, start, end);
    const length = end - start;
    const first = entry >>> 4;
    const info = this.#info;
    for (let group = first; group < first + count; group++) {
      if (info[2 * group] !== length) continue;
      let id = info[2 * group + 1]!;
      if (id === 0) {
        const positions = this.#positions[group];
        if (positions === undefined) return this.#byText(text, start, end);
        let hi = 0;
        let lo = 0;
        for (let k = 0; k < positions.length; k++) {
          let c = text.charCodeAt(start + positions[k]!);
          if (this.#fold) c = foldCode(c);
          if (c > 0xff) return 0;
          if (k < 3) hi = (hi << 8) | c;
          else lo = (lo << 8) | c;
        }
        id = this.#table.get(group, hi, lo);
        if (id === 0) return 0;
      }
      this.compared++;
      return sameRegion(this.#keys[id]!, text, start, end, this.#fold) ? id : 0;
    }
    return 0;
  }

  #byText(text: string, start: number, end: number): number {
    this.compared++;
    const region = text.slice(start, end);
    return this.#dict.get(this.#fold ? foldPunctuation(region) : region) ?? 0;
  }
}
