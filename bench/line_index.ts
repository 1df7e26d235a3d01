/**
 * A straightforward occurrence counter for blocks of lines, used by the
 * fixture generator to prove that a chunk's old side is unique in its file
 * (under a given line normalisation). Not part of the library and not timed:
 * it favours obviously-correct over fast.
 *
 * @module
 */

/**
 * Index of a file's lines under one normalisation: every distinct
 * normalised line gets an integer id, and the positions of each id are
 * listed, so a block is counted by walking the positions of its rarest line.
 *
 * @example
 * ```ts
 * const index = new LineIndex(["a", "b", "a", "b"], (s) => s);
 * index.count(["a", "b"]); // 2
 * ```
 */
export class LineIndex {
  readonly #normalise: (line: string) => string;
  readonly #idOf = new Map<string, number>();
  readonly #ids: Int32Array;
  /** `#positions[#starts[id] .. #starts[id + 1])` are the lines with that id. */
  readonly #starts: Int32Array;
  readonly #positions: Int32Array;

  /** Index `lines` under `normalise` (identity for exact matching). */
  constructor(lines: readonly string[], normalise: (line: string) => string) {
    this.#normalise = normalise;
    this.#ids = new Int32Array(lines.length);
    for (let i = 0; i < lines.length; i++) {
      const key = normalise(lines[i]!);
      let id = this.#idOf.get(key);
      if (id === undefined) {
        id = this.#idOf.size;
        this.#idOf.set(key, id);
      }
      this.#ids[i] = id;
    }
    const distinct = this.#idOf.size;
    this.#starts = new Int32Array(distinct + 1);
    for (const id of this.#ids) this.#starts[id + 1]!++;
    for (let id = 0; id < distinct; id++) this.#starts[id + 1]! += this.#starts[id]!;
    const fill = this.#starts.slice(0, distinct);
    this.#positions = new Int32Array(lines.length);
    for (let i = 0; i < lines.length; i++) this.#positions[fill[this.#ids[i]!]!++] = i;
  }

  /**
   * How many times `pattern` (normalised like the file) occurs as a block of
   * consecutive lines, counting at most `limit` (default: all).
   */
  count(pattern: readonly string[], limit: number = Infinity): number {
    if (pattern.length === 0) return this.#ids.length + 1;
    const wanted: number[] = [];
    for (const line of pattern) {
      const id = this.#idOf.get(this.#normalise(line));
      if (id === undefined) return 0;
      wanted.push(id);
    }
    // Walk the occurrences of the rarest line of the pattern only.
    let pivot = 0;
    for (let j = 1; j < wanted.length; j++) {
      if (this.#frequency(wanted[j]!) < this.#frequency(wanted[pivot]!)) pivot = j;
    }
    const pivotId = wanted[pivot]!;
    let found = 0;
    for (let k = this.#starts[pivotId]!; k < this.#starts[pivotId + 1]!; k++) {
      const start = this.#positions[k]! - pivot;
      if (start < 0 || start + wanted.length > this.#ids.length) continue;
      let equal = true;
      for (let j = 0; j < wanted.length; j++) {
        if (this.#ids[start + j] !== wanted[j]) {
          equal = false;
          break;
        }
      }
      if (equal && ++found >= limit) break;
    }
    return found;
  }

  #frequency(id: number): number {
    return this.#starts[id + 1]! - this.#starts[id]!;
  }
}
