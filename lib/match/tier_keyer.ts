/**
 * One tier's dictionary of query keys and the filters that let a pass over
 * a million lines key almost none of them (SPEC §5.5): a length table and
 * a signature of four sampled code units (or, with many keys, a bit table of
 * the whole-line hash); a line that passes both is resolved to the one key
 * it may equal (`key_table.ts`, also the tier's dictionary) and compared
 * once.
 *
 * @module
 */
import { foldCode, type LineTier, normalizeLine } from "./normalize.ts";
import { TierIndex } from "./tier_index.ts";
import { KeyTable, regionHash, regionHashBytes, sameRegion } from "./key_table.ts";

/** Signature bits at most (the filter tables hold 2^bits entries; fewer keys get smaller tables). */
const MAX_SIG_BITS = 16;
/** The byte passes' signature bit filter: at most 2^20 bits (see `TierKeyer.sigBits`). */
const MAX_FILTER_BITS = 20;
/**
 * With more keys than this, lines are filtered by a bit table of their
 * whole-line hash instead of the sampled signature: a patch of thousands of
 * chunks taken from a code file has keys alike at every sampled character
 * (most lines of such a file passed the signature filter in vain, 630k of
 * 1M with 56k keys even at 2^20 signatures); hashing a line costs less than
 * the table probe each such pass meant.
 */
const HASH_FILTER_KEYS = 4096;
/** Bits of the whole-line hash filter: 2^20 (a 128 KiB bit table), about one line in twenty passes in vain with 50k keys. */
const HASH_FILTER_BITS = 20;
/** `h >>> HASH_FILTER_SHIFT` is the bit of hash `h` in a keyer's `bloom`. */
export const HASH_FILTER_SHIFT: number = 32 - HASH_FILTER_BITS;
/** Line lengths up to this are filtered by a table; longer ones pass when any key is longer. */
export const MAX_TRACKED_LENGTH = 4096;

/**
 * The offsets within a region of `length` that {@linkcode signature}
 * samples: an eighth in, the middle, three quarters, and the last but one
 * (code lines mostly start with indentation and end with `;` or `{`, so
 * their first and last characters tell little).
 *
 * @example
 * ```ts
 * signatureSamples(12); // [1, 6, 9, 10]
 * ```
 */
export function signatureSamples(length: number): [number, number, number, number] {
  return [length >> 3, length >> 1, (length * 3) >> 2, length > 1 ? length - 2 : 0];
}

/**
 * A cheap signature of `line[start, end)`: its length and four sampled code
 * units ({@linkcode signatureSamples}; folded at tier 4, which keeps
 * lengths). Equal keys have equal signatures, so a line whose signature no
 * query has cannot match. `shift` is 32 minus the signature's bits (a
 * keyer's `shift`).
 *
 * @example
 * ```ts
 * signature("  x = 1", 2, 7, false, 16) === signature("x = 1", 0, 5, false, 16); // true
 * ```
 */
export function signature(line: string, start: number, end: number, fold: boolean, shift: number): number {
  const length = end - start;
  if (length === 0) return 0;
  let a = line.charCodeAt(start + (length >> 3));
  let b = line.charCodeAt(start + (length >> 1));
  let c = line.charCodeAt(start + ((length * 3) >> 2));
  let d = line.charCodeAt(length > 1 ? end - 2 : start);
  if (fold) {
    a = foldCode(a);
    b = foldCode(b);
    c = foldCode(c);
    d = foldCode(d);
  }
  // One multiply mixes length and samples: the filter needs no more (the
  // samples carry all there is), and this runs for almost every line.
  return Math.imul(length + a * 0x3b + (b << 7) + (c << 14) + (d << 21), 0x9e3779b1) >>> shift;
}

/**
 * {@linkcode signature} (unfolded) of `bytes[start, end)`, the bytes of an
 * ASCII text: equal to the signature of the same region of its string.
 *
 * @example
 * ```ts
 * signatureBytes(new TextEncoder().encode("x = 1"), 0, 5, 16) === signature("x = 1", 0, 5, false, 16); // true
 * ```
 */
export function signatureBytes(bytes: Uint8Array, start: number, end: number, shift: number): number {
  const length = end - start;
  if (length === 0) return 0;
  const a = bytes[start + (length >> 3)]!;
  const b = bytes[start + (length >> 1)]!;
  const c = bytes[start + ((length * 3) >> 2)]!;
  const d = bytes[length > 1 ? end - 2 : start]!;
  return Math.imul(length + a * 0x3b + (b << 7) + (c << 14) + (d << 21), 0x9e3779b1) >>> shift;
}

/** A signature entry: several keys have it (resolved through the table). */
const SEVERAL = -1;

/**
 * How a keyer filters lines before its table: by the sampled signature
 * (`"signature"`: cheap per line, but lines alike at the sampled characters
 * all pass), by a bit table of the whole-line hash (`"hash"`: one hash per
 * line, few pass in vain), or `"auto"`: the hash above HASH_FILTER_KEYS keys.
 */
export type KeyFilter = "auto" | "signature" | "hash";

/**
 * The query texts of a keyer: a set, an array (repeats are dropped), a
 * map's keys (not copied), or a {@linkcode KeyTable} of them (tier 1 takes
 * it as its dictionary: its ids are then the table's).
 */
export type QueryTexts = ReadonlySet<string> | readonly string[] | ReadonlyMap<string, unknown> | KeyTable;

/**
 * One tier's dictionary, filters and ids while a pass runs; `finish` turns
 * it into a {@linkcode TierIndex}.
 *
 * @example
 * ```ts
 * const k = new TierKeyer(3, new Set(["  x"]), 1);
 * k.dict.get("x"); // 1
 * ```
 */
export class TierKeyer {
  readonly tier: LineTier;
  /** Key comparisons made: at most one per line (MatchStats.linesKeyed). */
  get keyed(): number {
    return this.dict.compared;
  }
  /** The tier's dictionary: normalised key text → id (1, 2, … in order of registration). */
  readonly dict: KeyTable;
  /** Key text by id (index 0 unused). */
  readonly keyOf: readonly string[];
  /** The id of each query text, in the order the keyer was given them (repeats included). */
  readonly queryIds: Int32Array;
  /** Lines this tier keyed that the tier below it had not (set by the tiers 2–4 pass). */
  fresh = 0;
  /**
   * Per signature: 0 when no key has it, the key's id when one key has it,
   * −2 − p for the p-th pair of keys sharing it (told apart by one
   * character or their lengths), −1 when more do (resolved through the
   * table): the filter (small, so it stays in cache; used when `bloom` is
   * not set). A line whose signature names one key, or a pair, is compared
   * with that one key directly — few keys stay in the cache, so that costs
   * less than hashing the line.
   */
  readonly sigs: Int32Array;
  /**
   * The byte passes' first filter: bit `m >>> filterShift` set for the
   * unshifted signature `m` (`signature(…, 0)`) of each key — sixteen
   * times as many bits as `sigs` has entries (up to 2^20 bits, 128 KiB),
   * so a line passes in vain sixteen times less often, and `sigs` and the
   * keys are touched only by lines that pass (the selectors' pass of 10,000
   * failing chunks on 1M lines: 449 comparisons in vain → 42, and fewer
   * lines reading a key string's length before them).
   */
  readonly sigBits: Int32Array;
  /** 32 minus the bits of `sigBits`. */
  readonly filterShift: number;
  /**
   * With many keys (see HASH_FILTER_KEYS): bit `h >>> 12` set for the
   * whole-line hash `h` of each key ({@linkcode regionHash}); the passes
   * then filter by it and hand the hash on ({@linkcode resolveHashed}).
   */
  readonly bloom: Int32Array | undefined;
  /** 32 minus the signature bits: about sixteen signatures per key (few lines pass the filter in vain), at most 2^16 (a 64 KiB filter, still in cache; a small file's keyer stays small). */
  readonly shift: number;
  readonly lengths: Uint8Array = new Uint8Array(MAX_TRACKED_LENGTH + 1);
  longLengths = false;
  /**
   * Whether a probed region must be folded as it is hashed and compared:
   * at tier 4, unless the file is ASCII (nothing in it folds, and keys that
   * are not ASCII are left out of the filters).
   */
  readonly foldsText: boolean;
  /** The id of the empty key (blank lines), 0 when no query is blank. */
  readonly emptyId: number;
  /** Per line: the id of its key, 0 for none. */
  ids: Int32Array;
  readonly counts: Int32Array;

  /**
   * `asciiFile`: every line of the file is ASCII, so a key holding any other
   * character can match no line here and is left out of the filters (it
   * keeps its id). Besides the work saved, comparing an ASCII region with
   * such a key is three times slower than with an ASCII one.
   */
  constructor(tier: LineTier, queries: QueryTexts, lineCount: number, asciiFile = false, filter: KeyFilter = "auto") {
    const count = queries instanceof KeyTable
      ? queries.size
      : Array.isArray(queries)
      ? queries.length
      : (queries as ReadonlySet<string> | ReadonlyMap<string, unknown>).size;
    this.tier = tier;
    this.foldsText = tier === 4 && !asciiFile;
    let bits = 8;
    while (bits < MAX_SIG_BITS && 1 << bits < 16 * count) bits++;
    this.shift = 32 - bits;
    const hashed = filter === "hash" || (filter === "auto" && count > HASH_FILTER_KEYS);
    this.bloom = hashed ? new Int32Array(1 << (HASH_FILTER_BITS - 5)) : undefined;
    this.sigs = new Int32Array(hashed ? 1 : 1 << bits);
    const filterBits = Math.min(MAX_FILTER_BITS, bits + 4);
    this.filterShift = 32 - filterBits;
    this.sigBits = new Int32Array(hashed ? 1 : (1 << filterBits) >>> 5);
    const queryIds = (this.queryIds = new Int32Array(count));
    // Tier 1 normalises nothing: the index's own table of query texts is its dictionary as it is.
    const adopted = tier === 1 && queries instanceof KeyTable ? queries : undefined;
    const table = (this.dict = adopted ?? new KeyTable(tier === 4, count));
    this.keyOf = table.keys;
    if (adopted !== undefined) {
      for (let id = 1; id <= count; id++) queryIds[id - 1] = id;
    } else {
      let q = 0;
      const texts: Iterable<string> = queries instanceof KeyTable ? queries.keys.slice(1) : queries instanceof Map ? queries.keys() : (queries as Iterable<string>);
      for (const query of texts) {
        const key = normalizeLine(query, tier);
        // One hash per key, for the table and the filter.
        queryIds[q++] = table.intern(key, regionHash(key, 0, key.length, tier === 4));
      }
    }
    // In an ASCII file the keys' bytes tell which keys are ASCII (and the byte passes need them).
    if (asciiFile) table.encodeKeyBytes();
    for (let id = 1; id <= table.size; id++) this.#filter(table.keys[id]!, table.hashes[id]!, id, asciiFile);
    this.emptyId = table.get("") ?? 0;
    this.ids = new Int32Array(lineCount);
    this.counts = new Int32Array(table.size + 2);
  }

  /** Pairs of keys sharing a signature, three ints each: id A, id B, where they first differ (-1: their lengths do). */
  #pairs: number[] = [];

  /**
   * The signature entry after key `id` joins one that was `entry`: the key
   * alone, a pair told apart by one character (the usual collision, e.g.
   * `x = step(x);` and `y = step(y);`: no hashing for either), or SEVERAL.
   */
  #joined(entry: number, id: number): number {
    if (entry === 0) return id;
    if (entry < 0) return SEVERAL;
    const a = this.keyOf[entry]!;
    const b = this.keyOf[id]!;
    let position = -1;
    if (a.length === b.length) {
      position = 0;
      while (position < a.length && a.charCodeAt(position) === b.charCodeAt(position)) position++;
    }
    this.#pairs.push(entry, id, position);
    return -(this.#pairs.length / 3 - 1) - 2;
  }

  /** Let lines that may equal the new key `id` (hash `h`) through the filters. */
  #filter(key: string, h: number, id: number, asciiFile: boolean): void {
    // A key no line of an ASCII file can equal keeps its id but stays out of the filters.
    if (asciiFile && !this.dict.isAsciiKey(id)) return;
    if (key.length > 0) {
      const bloom = this.bloom;
      if (bloom !== undefined) {
        const bit = h >>> HASH_FILTER_SHIFT;
        bloom[bit >>> 5]! |= 1 << (bit & 31);
      } else {
        const mixed = signature(key, 0, key.length, this.tier === 4, 0);
        const sig = mixed >>> this.shift;
        this.sigs[sig] = this.#joined(this.sigs[sig]!, id);
        const bit = mixed >>> this.filterShift;
        this.sigBits[bit >>> 5]! |= 1 << (bit & 31);
      }
    }
    if (key.length <= MAX_TRACKED_LENGTH) this.lengths[key.length] = 1;
    else this.longLengths = true;
  }


  /**
   * The id of the key equal to the (non-empty) region `text[start, end)`
   * whose signature's entry in `sigs` is `entry` (not 0): one key's id or a
   * pair's, compared directly, or SEVERAL (the table), else 0. At tier 4
   * the region is folded as it is compared (folding keeps lengths). At most
   * one comparison.
   */
  resolveSignature(text: string, start: number, end: number, entry: number): number {
    if (entry === SEVERAL) return this.dict.resolve(text, start, end);
    if (entry < 0) {
      // Two keys: the character where they first differ (or their lengths) picks one.
      const at = 3 * (-entry - 2);
      const pairs = this.#pairs;
      const position = pairs[at + 2]!;
      const a = pairs[at]!;
      let pick: number;
      if (position < 0) pick = this.keyOf[a]!.length === end - start ? a : pairs[at + 1]!;
      else {
        if (position >= end - start) return 0;
        const c = text.charCodeAt(start + position);
        pick = (this.foldsText ? foldCode(c) : c) === this.keyOf[a]!.charCodeAt(position) ? a : pairs[at + 1]!;
      }
      entry = pick;
    }
    const key = this.keyOf[entry]!;
    if (key.length !== end - start) return 0;
    this.dict.compared++;
    return sameRegion(key, text, start, end, this.foldsText) ? entry : 0;
  }

  /**
   * {@linkcode resolveSignature} for a region of an ASCII file given by its
   * bytes too (`bytes[i]` is `text`'s code unit `i`): compared with the
   * key's bytes (`dict.encodeKeyBytes()` first). Not at a folding tier.
   */
  resolveSignatureBytes(bytes: Uint8Array, text: string, start: number, end: number, entry: number): number {
    const length = end - start;
    if (entry === SEVERAL) return this.dict.resolveHashedBytes(bytes, text, start, end, regionHashBytes(bytes, start, end));
    if (entry < 0) {
      const at = 3 * (-entry - 2);
      const pairs = this.#pairs;
      const position = pairs[at + 2]!;
      const a = pairs[at]!;
      if (position < 0) entry = this.keyOf[a]!.length === length ? a : pairs[at + 1]!;
      else {
        if (position >= length) return 0;
        entry = bytes[start + position] === this.keyOf[a]!.charCodeAt(position) ? a : pairs[at + 1]!;
      }
    }
    if (this.keyOf[entry]!.length !== length) return 0;
    this.dict.compared++;
    return this.dict.sameBytes(entry, bytes, start, length) ? entry : 0;
  }

  /** {@linkcode resolveHashed} by bytes, as {@linkcode resolveSignatureBytes}. */
  resolveHashedBytes(bytes: Uint8Array, text: string, start: number, end: number, h: number): number {
    return this.dict.resolveHashedBytes(bytes, text, start, end, h);
  }

  /** The id of the key equal to a region whose {@linkcode regionHash} `h` passed `bloom`, or 0 (one comparison at most). */
  resolveHashed(text: string, start: number, end: number, h: number): number {
    return this.dict.resolveHashed(text, start, end, h);
  }

  /** Room for `capacity` lines (ids kept): a pass that finds the lines as it goes. */
  growIds(capacity: number): Int32Array {
    if (capacity > this.ids.length) {
      const grown = new Int32Array(capacity);
      grown.set(this.ids);
      this.ids = grown;
    }
    return this.ids;
  }

  /** The pass found `count` lines. */
  trimIds(count: number): void {
    this.ids = this.ids.subarray(0, count);
  }

  /** The finished index. */
  finish(): TierIndex {
    return new TierIndex(this.tier, this.ids, this.dict, this.counts, this.keyOf, this.queryIds);
  }
}
