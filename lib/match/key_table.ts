/**
 * Resolving a line region that passed a keyer's length and line filters to
 * the one key it may equal, with at most ONE full comparison per line
 * whatever the keys (SPEC §5.5: key comparisons bounded per line).
 *
 * The region is hashed whole (seeded, see {@linkcode regionHash}) and looked
 * up in an open-addressing table of the keys' hashes and lengths, laid out
 * as one typed array, so a line that equals no key almost never reaches a
 * comparison, and one that does is compared with the single key of its
 * slot. Two keys that share hash and length (rare: about one pair among
 * 100,000 keys of one length) mark their slot "look up by text": such a
 * region is sliced and found in a small map of those keys, still one lookup. Keys alike at every
 * sampled character (`K00001M00N1Z`, `K00002M00N2Z`, …, or eight
 * 240-character lines differing near the end) — easy to send on purpose —
 * cost what any other key costs.
 *
 * Why a whole-region hash rather than a few sampled characters: in a file
 * made largely of the patch's own lines (thousands of chunks), most lines
 * pass any sampled filter, and each comparison with a key string somewhere
 * in the heap costs a few cache misses; hashing the region reads only the
 * line itself, which the pass has just found and is in the cache.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { foldCode, foldPunctuation } from "./normalize.ts";

/**
 * The seed of every region hash in this process: random, so the lines of a
 * file cannot be chosen to collide with a patch's keys (a collision costs
 * time, never a wrong answer: every hit is compared).
 */
const SEED = randomBytes(4).readInt32LE(0);

const FOLDABLE = /[\u00a0\u2000-\u200a\u2010-\u2015\u2018-\u201f\u202f\u205f\u3000\u2212\u2032\u2033]/;

/**
 * A seeded 32-bit hash of `text[start, end)`, folded at tier 4 when `fold`
 * (folding keeps lengths, so a folded key and a region that folds to it
 * hash alike). Two code units per step.
 *
 * @example
 * ```ts
 * regionHash("xab", 1, 3, false) === regionHash("ab", 0, 2, false); // true
 * ```
 */
export function regionHash(text: string, start: number, end: number, fold: boolean): number {
  let h = SEED ^ (end - start);
  let i = start;
  if (fold) {
    for (; i + 1 < end; i += 2) {
      h = Math.imul(((h << 5) | (h >>> 27)) ^ (foldCode(text.charCodeAt(i)) | (foldCode(text.charCodeAt(i + 1)) << 16)), 0x9e3779b1);
    }
    if (i < end) h = Math.imul(((h << 5) | (h >>> 27)) ^ foldCode(text.charCodeAt(i)), 0x9e3779b1);
  } else {
    for (; i + 1 < end; i += 2) {
      h = Math.imul(((h << 5) | (h >>> 27)) ^ (text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16)), 0x9e3779b1);
    }
    if (i < end) h = Math.imul(((h << 5) | (h >>> 27)) ^ text.charCodeAt(i), 0x9e3779b1);
  }
  // Finalise (murmur3's mixer): the table keeps the low bits.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Slot id meaning "two keys share this hash and length: look the region up by text". */
const BY_TEXT = -1;

/**
 * Whether `text[start, start + key.length)` equals `key`, folded at tier 4
 * when `fold`: one comparison.
 *
 * @example
 * ```ts
 * sameRegion("a-b", "xa\u2013b", 1, 4, true); // true
 * ```
 */
export function sameRegion(key: string, text: string, start: number, end: number, fold: boolean): boolean {
  const length = end - start;
  // Short regions (`}`, `end`, `});`) compare faster code unit by code
  // unit; longer ones natively.
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

/**
 * The keys of one tier by region hash: the tier's dictionary (key text →
 * id, ids 1, 2, … in order of first registration) and the resolver of a
 * region to its key. No `Map` of the key texts is built: for 50k keys that
 * alone cost more than the pass over a million lines it serves.
 *
 * @example
 * ```ts
 * const table = new KeyTable(false, 2);
 * table.intern("ab", regionHash("ab", 0, 2, false)); // 1
 * table.intern("ac", regionHash("ac", 0, 2, false)); // 2
 * table.resolve("xac", 1, 3); // 2
 * table.get("ab"); // 1
 * ```
 */
export class KeyTable {
  /** Full comparisons and text lookups made while resolving regions (at most one per region). */
  compared = 0;
  /** Key text by id (index 0 unused). */
  readonly keys: string[] = [""];
  /** Each key's {@linkcode regionHash} by id (index 0 unused). */
  readonly hashes: number[] = [0];
  readonly #fold: boolean;
  #mask: number;
  /** Per slot, side by side: hash, length, id (0: empty; BY_TEXT: see above) — one cache line per probe. */
  #slots: Int32Array;
  /** The keys of BY_TEXT slots (two or more keys sharing hash and length): rare. */
  readonly #colliding = new Map<string, number>();

  /**
   * A table sized for `keys` distinct keys (it grows past them). At tier 4
   * (`fold`) keys are folded already and regions are folded as they are
   * compared.
   */
  constructor(fold: boolean, keys: number) {
    this.#fold = fold;
    let capacity = 16;
    while (capacity < 2 * keys) capacity *= 2;
    this.#mask = capacity - 1;
    this.#slots = new Int32Array(3 * capacity);
  }

  /** How many keys the table holds. */
  get size(): number {
    return this.keys.length - 1;
  }

  /** The id of `key` (normalised; `h` its {@linkcode regionHash}), added with the next id if new. */
  intern(key: string, h: number): number {
    // At most half full, so probes stay short.
    if (2 * this.keys.length >= this.#mask) this.#grow();
    const slots = this.#slots;
    const mask = this.#mask;
    const length = key.length;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const at = 3 * s;
      const slotId = slots[at + 2]!;
      if (slotId === 0) {
        const id = this.keys.length;
        this.keys.push(key);
        this.hashes.push(h);
        slots[at] = h;
        slots[at + 1] = length;
        slots[at + 2] = id;
        return id;
      }
      if (slots[at] !== h || slots[at + 1] !== length) continue;
      if (slotId !== BY_TEXT) {
        const other = this.keys[slotId]!;
        if (other === key) return slotId;
        slots[at + 2] = BY_TEXT;
        this.#colliding.set(other, slotId);
      }
      const known = this.#colliding.get(key);
      if (known !== undefined) return known;
      const id = this.keys.length;
      this.keys.push(key);
      this.hashes.push(h);
      this.#colliding.set(key, id);
      return id;
    }
  }

  /** Twice the slots, each (hash, length) entry moved as it is (a BY_TEXT slot stays one). */
  #grow(): void {
    const old = this.#slots;
    const mask = 2 * (this.#mask + 1) - 1;
    const slots = new Int32Array(3 * (mask + 1));
    for (let at = 0; at < old.length; at += 3) {
      if (old[at + 2] === 0) continue;
      let s = old[at]! & mask;
      while (slots[3 * s + 2] !== 0) s = (s + 1) & mask;
      slots[3 * s] = old[at]!;
      slots[3 * s + 1] = old[at + 1]!;
      slots[3 * s + 2] = old[at + 2]!;
    }
    this.#slots = slots;
    this.#mask = mask;
  }

  /** The id of a normalised key text, or undefined (a lookup, not counted in `compared`). */
  get(key: string): number | undefined {
    const compared = this.compared;
    const id = this.resolveHashed(key, 0, key.length, regionHash(key, 0, key.length, this.#fold));
    this.compared = compared;
    return id === 0 ? undefined : id;
  }

  /**
   * The id of the key equal to the (non-empty) region `text[start, end)`,
   * or 0: at most one comparison or text lookup.
   */
  resolve(text: string, start: number, end: number): number {
    return this.resolveHashed(text, start, end, regionHash(text, start, end, this.#fold));
  }

  /** {@linkcode resolve} for a region whose {@linkcode regionHash} `h` the caller has. */
  resolveHashed(text: string, start: number, end: number, h: number): number {
    const fold = this.#fold;
    const length = end - start;
    const slots = this.#slots;
    const mask = this.#mask;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const at = 3 * s;
      const id = slots[at + 2]!;
      if (id === 0) return 0;
      if (slots[at] !== h || slots[at + 1] !== length) continue;
      this.compared++;
      if (id === BY_TEXT) {
        const region = text.slice(start, end);
        return this.#colliding.get(fold ? foldPunctuation(region) : region) ?? 0;
      }
      return sameRegion(this.keys[id]!, text, start, end, fold) ? id : 0;
    }
  }
}
