/**
 * Decompressing a snapshot the host sent compressed (SPEC §11.1), bounded:
 * the host is not trusted to send what it says, so the output may never
 * exceed the size it announced (which the client already bounded by
 * `maxFileBytes`), and a zstd frame that asks for a larger window than the
 * host's `zstd -1` ever uses is refused before anything is allocated for
 * it. Callers then check the exact length and the SHA-256.
 *
 * `node:zlib` works the same under Bun, Node (≥ 22.15 for zstd) and Deno;
 * zstd is offered to the host only where this runtime has it.
 *
 * @module
 */
import type * as Zlib from "node:zlib";
import { lazyBuiltin } from "./lazy_builtin.ts";

/** node:zlib, loaded on first use (lazy_builtin.ts): a local apply never decompresses. */
function zlib(): typeof Zlib {
  return lazyBuiltin<typeof Zlib>("node:zlib");
}

/** The compressors a snapshot may travel with. */
export type Codec = "zstd" | "gzip";

/**
 * Largest zstd window accepted: `zstd -1` on a stream uses 2^19, levels up
 * to 3 at most 2^21. A frame asking for more is refused (it would make the
 * decompressor allocate that much for a reply of any size).
 */
const ZSTD_WINDOW_LOG_MAX = 21;

type ZstdDecompress = (buf: Uint8Array, options: object, callback: (error: Error | null, result: Uint8Array) => void) => void;

function zstdDecompressor(): ZstdDecompress | null {
  const fn = (zlib() as unknown as { zstdDecompress?: ZstdDecompress }).zstdDecompress;
  const constants = (zlib() as unknown as { constants?: Record<string, number> }).constants;
  return typeof fn === "function" && typeof constants?.ZSTD_d_windowLogMax === "number" ? fn : null;
}

/**
 * The codecs this runtime can decompress, best first.
 *
 * @example
 * ```ts
 * localCodecs(); // ["zstd", "gzip"] under Bun, Node ≥ 22.15 and Deno 2
 * ```
 */
export function localCodecs(): Codec[] {
  return zstdDecompressor() !== null ? ["zstd", "gzip"] : ["gzip"];
}

/**
 * Decompress `data` (one `codec` stream) into at most `maxBytes` bytes.
 * Resolves with the bytes or `null` when the stream is invalid, truncated
 * or would exceed the bound — the caller reports a protocol violation.
 *
 * Streamed into one buffer of `maxBytes` (the size the host announced, so
 * normally exactly the output): the one-shot `gunzip`/`zstdDecompress`
 * collect the output in chunks and join them, holding a 1 GiB file twice
 * at the join.
 *
 * @example
 * ```ts
 * const bytes = await inflate("gzip", compressed, announcedSize);
 * if (bytes === null || bytes.length !== announcedSize) throw new Error("bad stream");
 * ```
 */
export function inflate(codec: Codec, data: Uint8Array, maxBytes: number): Promise<Uint8Array | null> {
  // A zero limit means "any size" to zlib: an empty file never travels compressed.
  if (maxBytes < 1) return Promise.resolve(null);
  // The reply may be a view of a resizable ArrayBuffer (LocalShell's output
  // buffer grows in place), which node:zlib refuses as input: copy the
  // stream (compressed, so small) into a plain buffer first.
  const input = (data.buffer as { resizable?: boolean }).resizable === true ? data.slice() : data;
  return new Promise((resolve) => {
    let out: Uint8Array;
    // A zstd decompressor is a zlib Transform like Gunzip (the project's @types predate it).
    let stream: Zlib.Gunzip;
    try {
      if (codec === "gzip") {
        stream = zlib().createGunzip();
      } else {
        const create = (zlib() as unknown as { createZstdDecompress?: (options: object) => Zlib.Gunzip }).createZstdDecompress;
        if (zstdDecompressor() === null || typeof create !== "function") return resolve(null);
        const windowLogMax = (zlib() as unknown as { constants: Record<string, number> }).constants.ZSTD_d_windowLogMax!;
        stream = create({ params: { [windowLogMax]: ZSTD_WINDOW_LOG_MAX } });
      }
      out = new Uint8Array(maxBytes);
    } catch {
      return resolve(null);
    }
    let written = 0;
    let settled = false;
    const settle = (value: Uint8Array | null): void => {
      if (settled) return;
      settled = true;
      resolve(value);
    };
    stream.on("data", (chunk: Uint8Array) => {
      if (settled) return;
      if (written + chunk.length > maxBytes) {
        settle(null);
        stream.destroy();
        return;
      }
      out.set(chunk, written);
      written += chunk.length;
    });
    stream.on("error", () => settle(null));
    stream.on("end", () => settle(written === maxBytes ? out : out.subarray(0, written)));
    try {
      stream.end(input);
    } catch {
      settle(null);
    }
  });
}
