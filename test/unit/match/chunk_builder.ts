/**
 * Build chunks by hand for the locate and diagnose tests, without the
 * parser: each body line starts with its Codex marker (' ', '-', '+').
 *
 * @module
 */
import type { LocateOptions } from "../../../lib/match/locate.ts";
import type { Chunk, ChunkLine } from "../../../lib/types.ts";

/** Options for {@linkcode chunk}. */
export interface ChunkSpec {
  anchors?: string[];
  eof?: boolean;
  /** 1-based patch line of the chunk's first line (default 10). */
  patchLine?: number;
}

/**
 * A chunk from marked body lines.
 *
 * @example
 * ```ts
 * chunk([" a", "-b", "+B"], { anchors: ["def f():"] });
 * ```
 */
export function chunk(body: readonly string[], spec: ChunkSpec = {}): Chunk {
  const patchLine = spec.patchLine ?? 10;
  const anchors = spec.anchors ?? [];
  let line = patchLine + anchors.length;
  const lines: ChunkLine[] = body.map((marked) => {
    const marker = marked[0];
    if (marker !== " " && marker !== "-" && marker !== "+") throw new Error(`bad marker in ${JSON.stringify(marked)}`);
    const kind = marker === " " ? "context" : marker === "-" ? "delete" : "insert";
    return { kind, text: marked.slice(1), patchLine: line++ };
  });
  return { anchors, lines, endOfFile: spec.eof ?? false, patchLine };
}

/**
 * Locate options with test defaults.
 *
 * @example
 * ```ts
 * options({ path: "a.py", indentationSensitive: true });
 * ```
 */
export function options(overrides: Partial<LocateOptions> = {}): LocateOptions {
  return { matching: "lenient", path: "src/file.ts", indentationSensitive: false, excerptLines: 40, excerptBytes: 4096, ...overrides };
}
