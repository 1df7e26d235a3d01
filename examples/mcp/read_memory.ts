/**
 * What read_file handed out, remembered so that apply_patch can recognise
 * its own hashes (SPEC §5.4 round 2): a model that sends a window's
 * `content_sha256` as `expected_sha256` gets "that is the hash of lines
 * a–b only; send file_sha256 …" instead of "the file changed since you read
 * it", which is false — and re-reading would return the same hash, so the
 * model would loop.
 *
 * Bounded: the most recent {@linkcode READ_MEMORY_SIZE} reads, no file
 * contents, per server.
 *
 * @module
 */
import { shaHint } from "../../mod.ts";
import type { PatchFailure, ReadWindowResult } from "../../mod.ts";

/** Reads remembered per server (oldest forgotten first). */
export const READ_MEMORY_SIZE = 512;

interface Read {
  root: string;
  path: string;
  startLine: number;
  endLine: number;
  fileSha256: string;
}

/** The recent read_file results' hashes. */
export class ReadMemory {
  readonly #byContent = new Map<string, Read>();
  readonly #size: number;

  constructor(size: number = READ_MEMORY_SIZE) {
    this.#size = size;
  }

  /**
   * Remember a read window (only a window's hash differs from its file's).
   *
   * @example
   * ```ts
   * memory.remember("site", "index.html", window);
   * ```
   */
  remember(root: string, path: string, window: Pick<ReadWindowResult, "contentSha256" | "fileSha256" | "startLine" | "endLine">): void {
    if (window.contentSha256 === window.fileSha256) return;
    this.#byContent.delete(window.contentSha256);
    this.#byContent.set(window.contentSha256, { root, path, startLine: window.startLine, endLine: window.endLine, fileSha256: window.fileSha256 });
    if (this.#byContent.size > this.#size) this.#byContent.delete(this.#byContent.keys().next().value!);
  }

  /**
   * A `precondition_failed` whose expected SHA-256 is a content_sha256 this
   * server handed out, explained; any other failure unchanged.
   *
   * @example
   * ```ts
   * const errors = (report.errors ?? []).map((e) => memory.explain("site", e));
   * ```
   */
  explain(root: string, f: PatchFailure): PatchFailure {
    // An "already applied" resend (lib/plan/resend.ts) says the more important thing.
    if (f.code !== "precondition_failed" || typeof f.expectedSha256 !== "string" || f.path === undefined || f.alreadyAppliedAt !== undefined) return f;
    const read = this.#byContent.get(f.expectedSha256);
    if (read === undefined || read.root !== root) return f;
    const lines = read.startLine === read.endLine ? `line ${read.startLine}` : `lines ${read.startLine}–${read.endLine}`;
    const of = read.path === f.path ? f.path : `${read.path} (not ${f.path})`;
    const what = `precondition_failed: ${f.path}: the expected_sha256 sent, ${f.expectedSha256}, is the content_sha256 that read_file returned for ${lines} of ${of}: the hash of those lines only, never of a whole file.`;
    if (read.path === f.path && read.fileSha256 === f.actualSha256) {
      const next = shaHint(f.path, read.fileSha256);
      return {
        ...f,
        message: `${what} The file has not changed since that read: its file_sha256 is ${read.fileSha256}. Next step: ${next.says} with the same patch.`,
        hints: [next],
      };
    }
    const next = shaHint(f.path, null);
    return {
      ...f,
      message: `${what} Next step: call read_file {"path": ${JSON.stringify(f.path)}}, build the patch on what it returns, and ${next.says}.`,
      hints: [next],
    };
  }
}
