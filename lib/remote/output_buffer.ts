/**
 * `OutputBuffer`: the bytes a program writes, collected into one buffer
 * that grows in place.
 *
 * Why not a list of chunks joined at the end. A snapshot reply is
 * essentially the files' bytes (38.5 MB for one large file), and a list of
 * pipe chunks joined on exit holds it twice at the moment of the join —
 * and writes it twice, each fresh page a page fault (about 9,400 of them
 * per copy of that file, tens of milliseconds on a loaded VM). A resizable
 * `ArrayBuffer` (ES2024; Bun, Node ≥ 20, Deno) reserves address space up to
 * its maximum and commits pages only as they are written, so it grows
 * without moving: the reply is written once, held once, and the returned
 * view is the buffer itself. Where a runtime cannot reserve that much (a
 * small `ulimit -v`), the buffer falls back to doubling a plain one.
 *
 * @module
 */

/** ES2024's resizable ArrayBuffer members (the project's TypeScript lib predates them). */
interface Resizable {
  readonly resizable?: boolean;
}

/** Start capacity of the fallback buffer. */
const INITIAL = 64 * 1024;
/** Grow the resizable buffer by at least this much at a time (fewer resize calls; unwritten pages cost nothing). */
const STEP = 1024 * 1024;

/**
 * Collects appended chunks into one contiguous buffer of at most `max`
 * bytes (the caller enforces its limits before appending).
 *
 * @example
 * ```ts
 * const out = new OutputBuffer(1 << 20);
 * out.append(new TextEncoder().encode("hello "));
 * out.append(new TextEncoder().encode("world"));
 * new TextDecoder().decode(out.bytes()); // "hello world"
 * ```
 */
export class OutputBuffer {
  #buffer: ArrayBuffer;
  #view: Uint8Array;
  #length = 0;
  readonly #resizable: boolean;
  readonly #max: number;

  /** `max`: the most bytes that will ever be appended (the buffer reserves up to it). */
  constructor(max: number) {
    this.#max = Math.max(0, Math.floor(max));
    let buffer: ArrayBuffer | undefined;
    if (this.#max > INITIAL) {
      try {
        buffer = new ArrayBuffer(0, { maxByteLength: this.#max });
      } catch {
        buffer = undefined; // no room to reserve: the doubling fallback
      }
    }
    this.#resizable = buffer !== undefined && (buffer as Resizable).resizable === true;
    this.#buffer = buffer ?? new ArrayBuffer(Math.min(INITIAL, this.#max));
    this.#view = new Uint8Array(this.#buffer);
  }

  /** Bytes appended so far. */
  get length(): number {
    return this.#length;
  }

  /** Append `chunk` (the caller keeps the total within `max`). */
  append(chunk: Uint8Array): void {
    const needed = this.#length + chunk.length;
    if (needed > this.#view.length) this.#grow(needed);
    this.#view.set(chunk, this.#length);
    this.#length = needed;
  }

  /** Everything appended, as one view (no copy). Append no more after this. */
  bytes(): Uint8Array {
    return this.#view.subarray(0, this.#length);
  }

  #grow(needed: number): void {
    if (needed > this.#max) throw new RangeError(`OutputBuffer: ${needed} bytes exceed the maximum of ${this.#max}`);
    if (this.#resizable) {
      this.#buffer.resize(Math.min(this.#max, Math.max(needed, this.#buffer.byteLength + STEP)));
      this.#view = new Uint8Array(this.#buffer);
      return;
    }
    const grown = new Uint8Array(Math.min(this.#max, Math.max(needed, this.#view.length * 2)));
    grown.set(this.#view.subarray(0, this.#length));
    this.#buffer = grown.buffer;
    this.#view = grown;
  }
}
