/**
 * The adapters' side of the go-ahead handshake ({@linkcode ExecOptions.stdinGate}):
 * finding the program's prompt line in its stdout as it streams, and
 * answering it once.
 *
 * @module
 */
import type { StdinGate } from "./shell.ts";

/**
 * Watches a program's stdout for the line `prompt` (a whole line, at the
 * start of the output or after a newline) and answers it once through
 * `write` / `end`. Memory: the last `prompt.length + 1` bytes only.
 *
 * @example
 * ```ts
 * const answer = new GateAnswer({ prompt: "GATE", reply: () => new TextEncoder().encode("GO\n") }, (b) => sink.write(b), () => sink.end());
 * child.stdout.on("data", (chunk) => answer.push(chunk));
 * ```
 */
export class GateAnswer {
  /** The prompt was seen and answered. */
  answered = false;
  /** The answer carried bytes (a go-ahead): from then on a cancel is too late. */
  gaveBytes = false;
  /** stdin was ended (answered, or closed early by {@linkcode GateAnswer.close}). */
  ended = false;
  readonly #gate: StdinGate;
  readonly #line: string;
  readonly #write: (bytes: Uint8Array) => void;
  readonly #end: () => void;
  /** The stdin bytes are all handed over: an answer may be written. */
  #ready = false;
  #pending = false;
  #tail = "\n";

  constructor(gate: StdinGate, write: (bytes: Uint8Array) => void, end: () => void) {
    if (typeof gate.prompt !== "string" || !/^[\x21-\x7e]+$/.test(gate.prompt)) throw new TypeError("stdinGate.prompt must be printable ASCII without spaces");
    if (typeof gate.reply !== "function") throw new TypeError("stdinGate.reply must be a function");
    this.#gate = gate;
    this.#line = `\n${gate.prompt}\n`;
    this.#write = write;
    this.#end = end;
  }

  /** The caller's stdin bytes are all written: answer now if the prompt came first. */
  stdinDone(): void {
    this.#ready = true;
    if (this.#pending) this.#answer();
  }

  /** Feed the next stdout chunk. */
  push(chunk: Uint8Array): void {
    if (this.answered || this.ended) return;
    const text = this.#tail + Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("latin1");
    if (text.includes(this.#line)) {
      if (this.#ready) this.#answer();
      else this.#pending = true;
      return;
    }
    this.#tail = text.slice(-(this.#line.length - 1));
  }

  /** End stdin without an answer (a stop before the prompt was answered). */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.#end();
  }

  #answer(): void {
    if (this.answered || this.ended) return;
    this.answered = true;
    const bytes = this.#gate.reply();
    if (bytes !== null && bytes.length > 0) {
      this.gaveBytes = true;
      this.#write(bytes);
    }
    this.ended = true;
    this.#end();
  }
}
