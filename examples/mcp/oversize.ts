/**
 * The `id` and `method` of a JSON-RPC message too large to keep: a
 * streaming scan of the top-level object, fed the bytes as they arrive and
 * keeping nothing but the two short values. An oversize request must still
 * get an answer the client can match (an error with its `id`), and SDK
 * clients put `id` last, after megabytes of `params`.
 *
 * @module
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MAX_VALUE = 256;

/**
 * Feed bytes with {@linkcode push}; {@linkcode id} and {@linkcode method}
 * are the top-level values once seen (`undefined` until then). Malformed
 * JSON simply yields nothing.
 *
 * @example
 * ```ts
 * const scan = new TopLevelScanner();
 * scan.push(new TextEncoder().encode('{"method":"tools/call","params":{"a":"…"},"id":7}'));
 * scan.id; // 7
 * ```
 */
export class TopLevelScanner {
  id: string | number | null | undefined;
  method: string | undefined;
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** At depth 1: collecting a key string, or the value of the key `#key`. */
  #state: "key-or-end" | "key" | "colon" | "value" | "other" = "other";
  #key = "";
  #captured: number[] | null = null;
  #capturingString = false;

  push(bytes: Uint8Array): void {
    for (const b of bytes) this.#byte(b);
  }

  #byte(b: number): void {
    if (this.#inString) {
      if (this.#captured !== null && this.#captured.length < MAX_VALUE && !(b === QUOTE && !this.#escaped)) this.#captured.push(b);
      if (this.#escaped) this.#escaped = false;
      else if (b === BACKSLASH) this.#escaped = true;
      else if (b === QUOTE) {
        this.#inString = false;
        this.#stringEnded();
      }
      return;
    }
    if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) {
      this.#scalarEnded();
      return;
    }
    if (b === QUOTE) {
      this.#inString = true;
      if (this.#depth === 1 && (this.#state === "key-or-end" || this.#state === "key")) {
        this.#state = "key";
        this.#captured = [];
        this.#capturingString = true;
      } else if (this.#depth === 1 && this.#state === "value") {
        this.#captured = this.#wanted() ? [] : null;
        this.#capturingString = true;
      }
      return;
    }
    if (b === 0x7b || b === 0x5b) {
      this.#scalarEnded();
      this.#depth++;
      if (this.#depth === 1 && b === 0x7b) this.#state = "key-or-end";
      else if (this.#depth === 2) this.#state = "other";
      return;
    }
    if (b === 0x7d || b === 0x5d) {
      this.#scalarEnded();
      this.#depth--;
      if (this.#depth === 1) this.#state = "other";
      return;
    }
    if (this.#depth !== 1) return;
    if (b === 0x3a && this.#state === "colon") {
      this.#state = "value";
      return;
    }
    if (b === 0x2c) {
      this.#scalarEnded();
      this.#state = "key-or-end";
      return;
    }
    if (this.#state === "value") {
      // The start of a number, true, false or null.
      this.#captured = this.#wanted() ? [b] : null;
      this.#capturingString = false;
      this.#state = "other";
    } else if (this.#captured !== null && !this.#capturingString && this.#captured.length < MAX_VALUE) {
      this.#captured.push(b);
    }
  }

  #wanted(): boolean {
    return this.#key === "id" || this.#key === "method";
  }

  #stringEnded(): void {
    if (this.#depth !== 1 || this.#captured === null) return;
    const text = new TextDecoder().decode(new Uint8Array(this.#captured));
    this.#captured = null;
    if (this.#state === "key") {
      this.#key = text;
      this.#state = "colon";
      return;
    }
    if (this.#key === "id" && this.id === undefined) this.id = text;
    if (this.#key === "method" && this.method === undefined) this.method = text;
    this.#state = "other";
  }

  #scalarEnded(): void {
    if (this.#captured === null || this.#capturingString || this.#depth !== 1) return;
    const text = new TextDecoder().decode(new Uint8Array(this.#captured));
    this.#captured = null;
    if (this.#key !== "id" || this.id !== undefined) return;
    if (text === "null") this.id = null;
    else if (/^-?\d+$/.test(text)) this.id = Number(text);
  }
}
