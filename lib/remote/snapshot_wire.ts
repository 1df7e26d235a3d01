/**
 * The client half of the snapshot wire (SPEC §11.1): reading the reply's
 * frames, the hints a request carries from a {@linkcode SnapshotCache}, the
 * decompression of a compressed file with its checks, and what the cache
 * learns from a finished read. The host half is
 * lib/remote/programs/sh_snapshot_wire.ts.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { sha256Hex } from "../text/sha256.ts";
import type { FileSnapshot, Plan } from "../types.ts";
import type { Codec } from "./inflate.ts";
import { inflate } from "./inflate.ts";
import { newContentLength, newContentSlice } from "../plan/new_content.ts";
import type { RemoteShell } from "./shell.ts";
import type { CacheHint, SnapshotCache } from "./snapshot_cache.ts";

const LATIN1 = new TextDecoder("latin1");

/**
 * The most a compressed stream may exceed the file it carries: zstd's and
 * gzip's worst case on incompressible bytes is a small fraction (stored
 * blocks), plus their headers.
 *
 * @example
 * ```ts
 * compressedBound(1 << 20); // 1 MiB + 8 KiB + 1 KiB
 * ```
 */
export function compressedBound(size: number): number {
  return size + Math.ceil(size / 128) + 1024;
}

/** Any character outside printable ASCII (the latin1 decoder maps every byte outside 0x20-0x7e outside it too). */
const NOT_PRINTABLE = /[^\x20-\x7e]/;
const NOT_PRINTABLE_OR_NL = /[^\x20-\x7e\n]/;

/** Reads header lines and raw byte runs from one buffer. */
export class FrameReader {
  #at = 0;
  readonly #buf: Uint8Array;
  constructor(buf: Uint8Array) {
    this.#buf = buf;
  }
  /** The next line (ASCII, without `\n`), or null when there is no complete line. */
  line(): string | null {
    const end = this.#buf.indexOf(0x0a, this.#at);
    if (end < 0) return null;
    const text = LATIN1.decode(this.#buf.subarray(this.#at, end));
    this.#at = end + 1;
    // printable ASCII only (a regular expression over the decoded text: a
    // loop over the bytes costs more than the rest of a bulk reply's parse)
    return NOT_PRINTABLE.test(text) ? "\u0000invalid" : text;
  }
  /**
   * The next `n` lines (as {@linkcode line} reads them: one "\u0000invalid"
   * for a line that is not printable ASCII), or null when fewer remain:
   * one decode and one split for a block of many lines.
   */
  lines(n: number): string[] | null {
    let end = this.#at - 1;
    for (let i = 0; i < n; i++) {
      end = this.#buf.indexOf(0x0a, end + 1);
      if (end < 0) return null;
    }
    if (n === 0) return [];
    const text = LATIN1.decode(this.#buf.subarray(this.#at, end));
    this.#at = end + 1;
    const out = text.split("\n");
    if (NOT_PRINTABLE_OR_NL.test(text)) return out.map((l) => (NOT_PRINTABLE.test(l) ? "\u0000invalid" : l));
    return out;
  }
  /**
   * Exactly `n` bytes, or null when fewer remain: a view of the reply, not a
   * copy (the reply holds little but the files' bytes, so a copy would only
   * add a third full-size buffer to the adapter's chunks and their join).
   */
  bytes(n: number): Uint8Array | null {
    if (this.#at + n > this.#buf.length) return null;
    const out = this.#buf.subarray(this.#at, this.#at + n);
    this.#at += n;
    return out;
  }
  /**
   * The bytes up to `marker` (a view), skipping the marker; null when it
   * does not come within `max` bytes.
   */
  until(marker: Uint8Array, max: number): Uint8Array | null {
    const window = this.#buf.subarray(this.#at, Math.min(this.#buf.length, this.#at + max + marker.length));
    const end = indexOfBytes(window, marker);
    if (end < 0) return null;
    const out = window.subarray(0, end);
    this.#at += end + marker.length;
    return out;
  }
  atEnd(): boolean {
    return this.#at === this.#buf.length;
  }
  /** Whether the unread bytes begin with `prefix` (nothing is consumed). */
  startsWith(prefix: Uint8Array): boolean {
    if (this.#at + prefix.length > this.#buf.length) return false;
    for (let i = 0; i < prefix.length; i++) if (this.#buf[this.#at + i] !== prefix[i]) return false;
    return true;
  }
}

function indexOfBytes(haystack: Uint8Array, needle: Uint8Array): number {
  return Buffer.from(haystack.buffer, haystack.byteOffset, haystack.length).indexOf(needle);
}

/**
 * Where a cache keeps this shell and root's hints: a hint from another
 * host that happens to share the label only costs a download.
 *
 * @example
 * ```ts
 * cacheScope(new LocalShell(), "/srv/app"); // "local\u0000/srv/app"
 * ```
 */
export function cacheScope(shell: RemoteShell, root: string): string {
  return `${shell.label ?? "?"}\u0000${root}`;
}

/** A content the client holds for a path of the request. */
export interface HeldContent {
  hint: CacheHint;
  bytes: Uint8Array;
}

/**
 * The hints of a request: per path the content the cache holds for it (in
 * memory or, loaded and verified, from disk). Only contents actually held
 * are named, and they are kept here for the reply — an eviction meanwhile
 * cannot take them away.
 *
 * @example
 * ```ts
 * const held = await heldContents(cache, scope, ["a.txt"]);
 * ```
 */
export async function heldContents(cache: SnapshotCache | undefined, scope: string, paths: readonly string[]): Promise<Map<number, HeldContent>> {
  const held = new Map<number, HeldContent>();
  if (cache === undefined) return held;
  for (let k = 0; k < paths.length; k++) {
    const hint = cache.hint(scope, paths[k]!);
    if (hint === undefined) continue;
    const bytes = await cache.load(hint.sha256);
    if (bytes !== undefined && bytes.length === hint.size) held.set(k, { hint, bytes });
  }
  return held;
}

/** A compressed file as the reply carried it, checked once the reply is whole. */
export interface CompressedFile {
  codec: Codec;
  /** The host's SHA-256 of the file. */
  sha256: string;
  size: number;
  data: Uint8Array;
}

/**
 * Decompress a file (bounded by its announced size) and check it: exactly
 * `size` bytes hashing to the host's SHA-256. Null when anything differs.
 *
 * @example
 * ```ts
 * const bytes = await unpackFile({ codec: "gzip", sha256, size, data });
 * ```
 */
export async function unpackFile(file: CompressedFile): Promise<Uint8Array | null> {
  const bytes = await inflate(file.codec, file.data, file.size);
  if (bytes === null || bytes.length !== file.size || sha256Hex(bytes) !== file.sha256) return null;
  return bytes;
}

/**
 * What the cache learns from a finished read: every content that was
 * downloaded (copied: a snapshot's bytes are views of the reply), the
 * content now at each path (a hint), a path that holds nothing, and
 * whether each hint was proved.
 *
 * @example
 * ```ts
 * rememberSnapshots(cache, scope, send, result, held);
 * ```
 */
export function rememberSnapshots(
  cache: SnapshotCache | undefined,
  scope: string,
  paths: readonly string[],
  result: ReadonlyMap<string, FileSnapshot>,
  held: ReadonlyMap<number, HeldContent>,
): void {
  if (cache === undefined) return;
  for (let k = 0; k < paths.length; k++) {
    const snap = result.get(paths[k]!);
    if (snap === undefined) continue;
    if (held.has(k)) cache.count(snap.transfer === "cached");
    if (snap.rejected !== undefined) continue;
    if (snap.kind !== "file") {
      cache.see(scope, snap.path, null);
      continue;
    }
    if (snap.bytes === undefined || snap.sha256 === undefined) continue;
    if (snap.transfer !== "cached") cache.storeHashed(snap.sha256, snap.bytes.slice());
    cache.see(scope, snap.path, { sha256: snap.sha256, size: snap.bytes.length });
  }
}

/**
 * After a commit succeeded, the plan's new contents are what the host now
 * holds at their paths (the commit checked each stage's SHA-256): keep
 * them, so the next patch of these files is a hash proof, not a download.
 * A deleted or moved-away path holds nothing any more.
 *
 * @example
 * ```ts
 * if (report.ok) rememberCommitted(cache, cacheScope(shell, root), plan);
 * ```
 */
export function rememberCommitted(cache: SnapshotCache, scope: string, plan: Plan): void {
  for (const file of plan.files) {
    const target = file.moveTo ?? file.path;
    if (file.moveTo !== undefined || file.op === "delete") cache.see(scope, file.path, null);
    // Read through new_content.ts: one fresh copy, never a join of the
    // lazy newBytes (which would be a second full-size copy).
    const length = newContentLength(file);
    if (length === undefined || file.newSha256 === undefined) continue;
    if (length > cache.maxBytes) {
      cache.see(scope, target, null);
      continue;
    }
    cache.storeHashed(file.newSha256, newContentSlice(file, 0, length));
    cache.see(scope, target, { sha256: file.newSha256, size: length });
  }
}
