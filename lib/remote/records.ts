/**
 * Strict reading of the discovery programs' output (list and search): ASCII
 * lines, except records whose last field is a path or a file line, which may
 * hold any byte but NUL and end with a NUL before the newline (`sap_rec` in
 * lib/remote/programs/sh_walk.ts), and raw lines (grep's `N:text`), read
 * with {@linkcode RecordReader.rawLine} where a record announced them.
 *
 * @module
 */

const LATIN1 = new TextDecoder("latin1");

/** One record: its type word, the ASCII fields after it, and the raw last field when the type carries one. */
export interface OutputRecord {
  type: string;
  fields: string[];
  /** The path (or other raw bytes) of a NUL-terminated record. */
  raw?: Uint8Array;
}

/**
 * Reads records from one buffer. `pathRecords` maps each type whose last
 * field is raw bytes (NUL-terminated) to the number of ASCII fields before
 * it. A record that breaks the framing returns `null` from {@linkcode next}
 * with {@linkcode broken} set.
 *
 * @example
 * ```ts
 * const reader = new RecordReader(stdout, new Map([["E", 5]]));
 * for (let r = reader.next(); r !== null; r = reader.next()) console.log(r.type);
 * ```
 */
export class RecordReader {
  #at = 0;
  readonly #buf: Uint8Array;
  readonly #pathRecords: ReadonlyMap<string, number>;
  /** Why reading stopped before the end, or null. */
  broken: string | null = null;

  constructor(buf: Uint8Array, pathRecords: ReadonlyMap<string, number>) {
    this.#buf = buf;
    this.#pathRecords = pathRecords;
  }

  /** Whether every byte was read. */
  atEnd(): boolean {
    return this.#at >= this.#buf.length;
  }

  /** The next record, or null at the end or on a framing error (see {@linkcode broken}). */
  next(): OutputRecord | null {
    if (this.atEnd() || this.broken !== null) return null;
    const buf = this.#buf;
    const start = this.#at;
    const space = buf.indexOf(0x20, start);
    const newline = buf.indexOf(0x0a, start);
    if (newline < 0) return this.#fail("an unfinished line at the end");
    const typeEnd = space >= 0 && space < newline ? space : newline;
    const type = LATIN1.decode(buf.subarray(start, typeEnd));
    const headCount = this.#pathRecords.get(type);
    if (headCount === undefined) {
      const line = buf.subarray(start, newline);
      for (const b of line) if (b < 0x20 || b > 0x7e) return this.#fail("a line with control or non-ASCII bytes");
      this.#at = newline + 1;
      const words = LATIN1.decode(line).split(" ");
      return { type: words[0]!, fields: words.slice(1) };
    }
    // A raw record: `TYPE f1 … fn <raw bytes>\0\n`.
    let at = typeEnd + 1;
    const fields: string[] = [];
    for (let i = 0; i < headCount; i++) {
      const end = buf.indexOf(0x20, at);
      if (end < 0) return this.#fail(`a short ${type} record`);
      const word = buf.subarray(at, end);
      for (const b of word) if (b < 0x21 || b > 0x7e) return this.#fail(`a bad field in a ${type} record`);
      fields.push(LATIN1.decode(word));
      at = end + 1;
    }
    const nul = buf.indexOf(0x00, at);
    if (nul < 0 || buf[nul + 1] !== 0x0a) return this.#fail(`an unterminated ${type} record`);
    this.#at = nul + 2;
    return { type, fields, raw: buf.slice(at, nul) };
  }

  /** The next raw line (any bytes but newline, without it), or null when no complete line remains. */
  rawLine(): Uint8Array | null {
    if (this.broken !== null) return null;
    const newline = this.#buf.indexOf(0x0a, this.#at);
    if (newline < 0) return this.#fail("an unfinished line at the end");
    const line = this.#buf.slice(this.#at, newline);
    this.#at = newline + 1;
    return line;
  }

  #fail(why: string): null {
    this.broken = why;
    return null;
  }
}
