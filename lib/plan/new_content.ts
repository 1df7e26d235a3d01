/**
 * A planned file's new content, joined only when someone asks for it.
 *
 * Why. An update of a large file is almost all old bytes: planPatch renders
 * it as parts (views of the snapshot's bytes and a few new stretches), and
 * a delta commit needs only the content's length, its SHA-256 and those new
 * stretches. Joining the parts into `newBytes` at plan time made a second
 * full-size copy of the file (38.5 MB for the bench's large file: one more
 * copy in the peak RSS of every local apply and a full pass of writes).
 * So planPatch gives update and move files a lazy `newBytes`: the first
 * read joins the parts (and from then on the file is an ordinary one), and
 * the engine reads through the helpers below, which never join.
 *
 * While a file is unjoined, its `newSha256` was computed by planPatch from
 * the very parts the helpers read, so the commit needs no second hash of
 * the content to trust it (the host still checks the SHA-256 of what it
 * stages). Once `newBytes` was read or assigned, the bytes are the
 * caller's, and every check treats them as it treats a hand-made plan.
 *
 * @module
 */
import type { PlannedFile } from "../types.ts";

interface Unjoined {
  readonly parts: readonly Uint8Array[];
  /** Output offset where each part starts (ascending), for ranges. */
  readonly starts: readonly number[];
  readonly length: number;
}

const UNJOINED = new WeakMap<PlannedFile, Unjoined>();

/** How often a lazy `newBytes` was joined (counted-work tests: a delta commit joins none). */
let joins = 0;

/**
 * Give `file` a lazy `newBytes` made of `parts` (in order). Reading it joins
 * them once and makes it a plain property; assigning it replaces it.
 *
 * @example
 * ```ts
 * const file = { op: "update", path: "a", expected: { state: "missing" }, diff: "", hunks: [], warnings: [] } as PlannedFile;
 * lazyNewBytes(file, [new Uint8Array([0x61]), new Uint8Array([0x62])]);
 * newContentLength(file); // 2, nothing joined
 * ```
 */
export function lazyNewBytes(file: PlannedFile, parts: readonly Uint8Array[]): void {
  const starts: number[] = [];
  let length = 0;
  for (const part of parts) {
    starts.push(length);
    length += part.length;
  }
  UNJOINED.set(file, { parts, starts, length });
  const settle = (value: Uint8Array | undefined): void => {
    UNJOINED.delete(file);
    Object.defineProperty(file, "newBytes", { value, writable: true, enumerable: true, configurable: true });
  };
  Object.defineProperty(file, "newBytes", {
    enumerable: true,
    configurable: true,
    get(): Uint8Array {
      const unjoined = UNJOINED.get(file)!;
      const out = new Uint8Array(unjoined.length);
      unjoined.parts.forEach((part, i) => out.set(part, unjoined.starts[i]));
      joins++;
      settle(out);
      return out;
    },
    set(value: Uint8Array | undefined): void {
      settle(value);
    },
  });
}

/**
 * Whether `file`'s content is still planPatch's unjoined parts (so its
 * `newSha256` is theirs by construction).
 *
 * @example
 * ```ts
 * if (!isUnjoined(file)) checkSha(file.newBytes);
 * ```
 */
export function isUnjoined(file: PlannedFile): boolean {
  return UNJOINED.has(file);
}

/**
 * Bytes of `file`'s new content, or undefined when it has none; never joins.
 *
 * @example
 * ```ts
 * newContentLength(plan.files[0]); // 38493890
 * ```
 */
export function newContentLength(file: PlannedFile): number | undefined {
  const unjoined = UNJOINED.get(file);
  return unjoined !== undefined ? unjoined.length : file.newBytes?.length;
}

/**
 * Copy `[start, end)` of `file`'s new content into `out` at `at`; never
 * joins. Throws RangeError for a range outside the content.
 *
 * @example
 * ```ts
 * const out = new Uint8Array(10);
 * copyNewContent(file, 0, 10, out, 0);
 * ```
 */
export function copyNewContent(file: PlannedFile, start: number, end: number, out: Uint8Array, at: number): void {
  const unjoined = UNJOINED.get(file);
  if (unjoined === undefined) {
    const bytes = file.newBytes;
    if (bytes === undefined || start < 0 || end > bytes.length || start > end) throw new RangeError(`no new content [${start}, ${end}) in ${file.path}`);
    out.set(bytes.subarray(start, end), at);
    return;
  }
  if (start < 0 || end > unjoined.length || start > end) throw new RangeError(`no new content [${start}, ${end}) in ${file.path}`);
  const { parts, starts } = unjoined;
  // The last part starting at or before `start` (binary search: a 100-chunk
  // update has ~200 parts, each range is found in a few steps).
  let lo = 0;
  let hi = parts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= start) lo = mid;
    else hi = mid - 1;
  }
  let pos = start;
  for (let i = lo; pos < end && i < parts.length; i++) {
    const part = parts[i]!;
    const from = pos - starts[i]!;
    const take = Math.min(part.length - from, end - pos);
    if (take <= 0) continue;
    out.set(part.subarray(from, from + take), at + (pos - start));
    pos += take;
  }
}

/**
 * `[start, end)` of `file`'s new content as a fresh array; never joins the
 * whole. For small stretches (delta uploads' inline pieces).
 *
 * @example
 * ```ts
 * newContentSlice(file, 0, 4);
 * ```
 */
export function newContentSlice(file: PlannedFile, start: number, end: number): Uint8Array {
  const out = new Uint8Array(Math.max(0, end - start));
  copyNewContent(file, start, end, out, 0);
  return out;
}

/**
 * How many lazy contents were joined so far in this process.
 *
 * @example
 * ```ts
 * const before = newContentJoins();
 * await commitRemote(shell, root, plan);
 * newContentJoins() - before; // 0: a delta commit reads only the new stretches
 * ```
 */
export function newContentJoins(): number {
  return joins;
}
