/**
 * SHA-256 as lowercase hex, the identity of a file version everywhere in the
 * library (snapshots, plans, preconditions, reports).
 *
 * The pure core imports no `node:` module (SPEC §1), so that it bundles and
 * runs in a browser: where the runtime has Node's builtins (Node ≥ 20.16,
 * Bun, Deno: `process.getBuiltinModule`) the hash is `node:crypto`'s native
 * one, loaded on first use, which planning a 40 MB file needs (the
 * JavaScript fallback in `sha256_pure.ts` is about 10× slower); elsewhere it
 * is that fallback. Web Crypto is not an option: `crypto.subtle.digest` is
 * asynchronous and the core is synchronous.
 *
 * @module
 */
import { Sha256 } from "./sha256_pure.ts";

/** The part of `node:crypto`'s hash object used here (typed locally: the core needs no Node types). */
interface NativeHash {
  update(data: Uint8Array | string): NativeHash;
  digest(encoding: "hex"): string;
}

/** `node:crypto`'s `createHash`, when the runtime has Node's builtins. */
type CreateHash = (algorithm: "sha256") => NativeHash;

let native: CreateHash | null | undefined;

/** `createHash` from the runtime's `node:crypto`, or null (looked up once). */
function nativeCreateHash(): CreateHash | null {
  if (native !== undefined) return native;
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const crypto = runtime?.getBuiltinModule?.("node:crypto") as { createHash?: CreateHash } | undefined;
  native = typeof crypto?.createHash === "function" ? crypto.createHash : null;
  return native;
}

const ENCODER = new TextEncoder();

/**
 * Which implementation hashes in this runtime: `"native"` (`node:crypto`) or
 * `"javascript"` (the portable fallback, in browsers).
 *
 * @example
 * ```ts
 * sha256Implementation(); // "native" under Node, Bun and Deno
 * ```
 */
export function sha256Implementation(): "native" | "javascript" {
  return nativeCreateHash() === null ? "javascript" : "native";
}

/**
 * Lowercase hex SHA-256 of some bytes (or of a string's UTF-8 bytes).
 *
 * @example
 * ```ts
 * sha256Hex(new Uint8Array()); // "e3b0c442…b855"
 * ```
 */
export function sha256Hex(data: Uint8Array | string): string {
  const createHash = nativeCreateHash();
  if (createHash !== null) return createHash("sha256").update(data).digest("hex");
  return new Sha256().update(typeof data === "string" ? ENCODER.encode(data) : data).hex();
}

/**
 * Lowercase hex SHA-256 of the concatenation of `parts`, without making it.
 *
 * @example
 * ```ts
 * sha256HexOfParts([new Uint8Array([0x61]), new Uint8Array([0x62, 0x63])]) === sha256Hex("abc"); // true
 * ```
 */
export function sha256HexOfParts(parts: readonly Uint8Array[]): string {
  const createHash = nativeCreateHash();
  if (createHash !== null) {
    const hash = createHash("sha256");
    for (const part of parts) if (part.length > 0) hash.update(part);
    return hash.digest("hex");
  }
  const hash = new Sha256();
  for (const part of parts) hash.update(part);
  return hash.hex();
}

/**
 * Whether a string is a well-formed SHA-256 hex digest (64 hex digits, any case).
 *
 * @example
 * ```ts
 * isSha256Hex("abc"); // false
 * ```
 */
export function isSha256Hex(value: string): boolean {
  return /^[0-9a-fA-F]{64}$/.test(value);
}
