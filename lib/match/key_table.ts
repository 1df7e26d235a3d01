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
import { foldCode, foldPunctuation } from "./normalize.ts";

/**
 * The seed of every region hash in this process: random, so the lines of a
 * file cannot be chosen to collide with a patch's keys (a collision costs
 * time, never a wrong answer: every hit is compared). Web Crypto's
 * `getRandomValues` is global in every runtime and browser, so the pure core
 * needs no `node:crypto`.
 */
const SEED = globalThis.crypto.getRandomValues(new Int32Array(1))[0]!;

const ENCODER = new TextEncoder();

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

/**
 * {@linkcode regionHash} (unfolded) of `bytes[start, end)`, the bytes of an
 * ASCII text: equal to the hash of the same region of the decoded string
 * (each byte is its code unit), read without `charCodeAt`.
 *
 * @example
 * ```ts
 * regionHashBytes(new TextEncoder().encode("xab"), 1, 3) === regionHash("ab", 0, 2, false); // true
 * ```
 */
export function regionHashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = SEED ^ (end - start);
  let i = start;
  for (; i + 1 < end; i += 2) h = Math.imul(((h << 5) | (h >>> 27)) ^ (bytes[i]! | (bytes[i + 1]! << 16)), 0x9e3779b1);
  if (i < end) h = Math.imul(((h << 5) | (h >>> 27)) ^ bytes[i]!, 0x9e3779b1);
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
  /**
   * Per slot, side by side: hash, length, id (0: empty; BY_TEXT: see
   * above), where the key's bytes start (see #keyBytes) — one cache line
   * per probe, and the key's bytes found without another array.
   */
  #slots: Int32Array;
  /** The keys of BY_TEXT slots (two or more keys sharing hash and length): rare. */
  readonly #colliding = new Map<string, number>();
  /**
   * The keys' code units as bytes, back to back, for comparing regions of
   * an ASCII file's bytes (see {@linkcode resolveHashedBytes}): a key's
   * bytes sit in one small array instead of a string somewhere in the heap
   * (with tens of thousands of keys each comparison with a key string was a
   * few cache misses), and reading a byte costs less than `charCodeAt`.
   */
  #keyBytes = new Uint8Array(0);
  /** Per id: where its bytes start in #keyBytes, −1 for a key that is not ASCII (equal to no ASCII region). */
  #keyAt = new Int32Array(1);
  /** Ids below this are written into #keyBytes; #keyBytesLength bytes of it are placed (see #place). */
  #encodedUpTo = 1;
  #keyBytesLength = 0;

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
    this.#slots = new Int32Array(4 * capacity);
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
      const at = 4 * s;
      const slotId = slots[at + 2]!;
      if (slotId === 0) {
        const id = this.keys.length;
        this.keys.push(key);
        this.hashes.push(h);
        slots[at] = h;
        slots[at + 1] = length;
        slots[at + 2] = id;
        // Where its bytes will be (encodeKeyBytes writes them before any byte pass).
        slots[at + 3] = this.#place(id, length);
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
      this.#place(id, length);
      this.#colliding.set(key, id);
      return id;
    }
  }

  /** Twice the slots, each (hash, length) entry moved as it is (a BY_TEXT slot stays one). */
  #grow(): void {
    const old = this.#slots;
    const mask = 2 * (this.#mask + 1) - 1;
    const slots = new Int32Array(4 * (mask + 1));
    for (let at = 0; at < old.length; at += 4) {
      if (old[at + 2] === 0) continue;
      let s = old[at]! & mask;
      while (slots[4 * s + 2] !== 0) s = (s + 1) & mask;
      slots[4 * s] = old[at]!;
      slots[4 * s + 1] = old[at + 1]!;
      slots[4 * s + 2] = old[at + 2]!;
      slots[4 * s + 3] = old[at + 3]!;
    }
    this.#slots = slots;
    this.#mask = mask;
  }

  /** Key `id`'s place in #keyBytes (after every earlier key's): its offset. */
  #place(id: number, length: number): number {
    if (id >= this.#keyAt.length) {
      const grown = new Int32Array(2 * this.#keyAt.length);
      grown.set(this.#keyAt);
      this.#keyAt = grown;
    }
    const at = this.#keyBytesLength;
    this.#keyAt[id] = at;
    this.#keyBytesLength = at + length;
    return at;
  }

  /**
   * Make the keys added so far comparable with {@linkcode resolveHashedBytes}
   * (call before a pass over bytes; keys interned later need another call):
   * their bytes written at the places `intern` gave them, all new keys in
   * one native encoding, key by key only when some are not ASCII (those get
   * no place: equal to no ASCII region).
   */
  encodeKeyBytes(): void {
    const keys = this.keys;
    const from = this.#encodedUpTo;
    if (from === keys.length) return;
    if (this.#keyBytesLength > this.#keyBytes.length) {
      const grown = new Uint8Array(Math.max(2 * this.#keyBytes.length, this.#keyBytesLength));
      grown.set(this.#keyBytes);
      this.#keyBytes = grown;
    }
    const keyAt = this.#keyAt;
    const start = keyAt[from]!;
    const chars = this.#keyBytesLength - start;
    const joined = from === keys.length - 1 ? keys[from]! : keys.slice(from).join("");
    const whole = ENCODER.encodeInto(joined, this.#keyBytes.subarray(start, start + chars));
    // All ASCII: one byte per code unit, every unit read. Else key by key.
    if (whole.read !== chars || whole.written !== chars) {
      for (let id = from; id < keys.length; id++) {
        const key = keys[id]!;
        const at = keyAt[id]!;
        const one = ENCODER.encodeInto(key, this.#keyBytes.subarray(at, at + key.length));
        if (one.read !== key.length || one.written !== key.length) this.#unplace(id);
      }
    }
    this.#encodedUpTo = keys.length;
  }

  /** Whether key `id` is ASCII ({@linkcode encodeKeyBytes} first). */
  isAsciiKey(id: number): boolean {
    return this.#keyAt[id]! >= 0;
  }

  /** Key `id` is not ASCII: no place (its slot too, when it has one). */
  #unplace(id: number): void {
    this.#keyAt[id] = -1;
    const slots = this.#slots;
    const mask = this.#mask;
    for (let s = this.hashes[id]! & mask; slots[4 * s + 2] !== 0; s = (s + 1) & mask) {
      if (slots[4 * s + 2] === id) {
        slots[4 * s + 3] = -1;
        return;
      }
    }
  }

  /**
   * {@linkcode resolveHashed} for a region of an ASCII text given by its
   * bytes too (`bytes[i]` is `text`'s code unit `i`), compared byte by byte
   * with the key's bytes ({@linkcode encodeKeyBytes} first). Unfolded
   * tables only.
   */
  resolveHashedBytes(bytes: Uint8Array, text: string, start: number, end: number, h: number): number {
    const length = end - start;
    const at = this.#slotOf(h, length);
    if (at < 0) return 0;
    this.compared++;
    const id = this.#slots[at + 2]!;
    if (id === BY_TEXT) return this.#colliding.get(text.slice(start, end)) ?? 0;
    return this.#sameBytesAt(this.#slots[at + 3]!, bytes, start, length) ? id : 0;
  }

  /** Where the slot of hash `h` and `length` starts in #slots, or −1 when no key has both (the one probe both resolvers share). */
  #slotOf(h: number, length: number): number {
    const slots = this.#slots;
    const mask = this.#mask;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const at = 4 * s;
      if (slots[at + 2] === 0) return -1;
      if (slots[at] === h && slots[at + 1] === length) return at;
    }
  }

  /** Whether key `id` is the `length` bytes at `start` ({@linkcode encodeKeyBytes} first; a key that is not ASCII never is). */
  sameBytes(id: number, bytes: Uint8Array, start: number, length: number): boolean {
    return this.#sameBytesAt(this.#keyAt[id]!, bytes, start, length);
  }

  #sameBytesAt(from: number, bytes: Uint8Array, start: number, length: number): boolean {
    if (from < 0) return false;
    const keyBytes = this.#keyBytes;
    // From the end: keys alike at their start (indentation, `return `) differ there.
    for (let j = length - 1; j >= 0; j--) if (bytes[start + j] !== keyBytes[from + j]) return false;
    return true;
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
    const at = this.#slotOf(h, end - start);
    if (at < 0) return 0;
    this.compared++;
    const id = this.#slots[at + 2]!;
    if (id === BY_TEXT) {
      const region = text.slice(start, end);
      return this.#colliding.get(fold ? foldPunctuation(region) : region) ?? 0;
    }
    return sameRegion(this.keys[id]!, text, start, end, fold) ? id : 0;
  }
}
