/**
 * A {@linkcode RemoteShell} wrapper that counts `exec` calls and the bytes
 * each direction carries, for the remote figures of the benchmark.
 *
 * @module
 */
import type { ExecOptions, ExecResult, RemoteShell } from "../lib/remote/shell.ts";

/** What went over the adapter since the last reset. */
export interface ExecCounts {
  execs: number;
  /** Program text plus stdin, in bytes. */
  sentBytes: number;
  /** stdout plus stderr, in bytes. */
  receivedBytes: number;
}

const encoder = new TextEncoder();

/**
 * Counts calls and bytes, then delegates to the wrapped shell unchanged.
 *
 * @example
 * ```ts
 * const shell = new CountingShell(new LocalShell());
 * await shell.exec("true");
 * shell.take().execs; // 1
 * ```
 */
export class CountingShell implements RemoteShell {
  readonly #inner: RemoteShell;
  #counts: ExecCounts = { execs: 0, sentBytes: 0, receivedBytes: 0 };

  /** Wrap `inner`. */
  constructor(inner: RemoteShell) {
    this.#inner = inner;
  }

  /** Forwarded from the wrapped shell. */
  get elevated(): boolean | undefined {
    return this.#inner.elevated;
  }

  /** Forwarded from the wrapped shell. */
  get label(): string | undefined {
    return this.#inner.label;
  }

  /** Count, then run through the wrapped shell. */
  async exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    this.#counts.execs++;
    this.#counts.sentBytes += encoder.encode(command).length + (options?.stdin?.length ?? 0);
    const result = await this.#inner.exec(command, options);
    this.#counts.receivedBytes += result.stdout.length + result.stderr.length;
    return result;
  }

  /** Close the wrapped shell. */
  async close(): Promise<void> {
    await this.#inner.close?.();
  }

  /** The counts so far, and start counting from zero again. */
  take(): ExecCounts {
    const counts = this.#counts;
    this.#counts = { execs: 0, sentBytes: 0, receivedBytes: 0 };
    return counts;
  }
}
