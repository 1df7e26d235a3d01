/**
 * SHA-256 (lib/text/sha256.ts): the native hash is what Node, Bun and Deno
 * use (planning a 40 MB file depends on it), and the JavaScript fallback
 * that browsers use (lib/text/sha256_pure.ts) gives the same digests: the
 * FIPS 180-4 / NIST vectors, every padding boundary, chunked updates, and
 * random data checked against `node:crypto`.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { sha256Hex, sha256HexOfParts, sha256Implementation } from "../../../lib/text/sha256.ts";
import { Sha256 } from "../../../lib/text/sha256_pure.ts";

const encoder = new TextEncoder();
const pure = (data: Uint8Array | string): string => new Sha256().update(typeof data === "string" ? encoder.encode(data) : data).hex();
const reference = (data: Uint8Array): string => createHash("sha256").update(data).digest("hex");

/** NIST CSHS example vectors (FIPS 180-4 examples, SHA256ShortMsg / the million-a test). */
const VECTORS: [string, string | Uint8Array, string][] = [
  ["empty", "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
  ["abc", "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
  ["448 bits", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"],
  [
    "896 bits",
    "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
    "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
  ],
  ["one million a", "a".repeat(1_000_000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"],
  ["UTF-8 text", "héllo → wörld\n", createHash("sha256").update("héllo → wörld\n").digest("hex")],
];

describe("sha256Hex", () => {
  test("runs on the runtime's native node:crypto here (the fast path Node, Bun and Deno take)", () => {
    expect(sha256Implementation()).toBe("native");
  });

  for (const [name, input, digest] of VECTORS) {
    test(`native and JavaScript agree with the vector: ${name}`, () => {
      expect(sha256Hex(input)).toBe(digest);
      expect(pure(input)).toBe(digest);
    });
  }

  test("the JavaScript hash matches node:crypto at every length around the padding boundaries (0..200 bytes)", () => {
    const bytes = new Uint8Array(200).map((_, i) => (i * 131 + 7) & 0xff);
    for (let length = 0; length <= bytes.length; length++) {
      expect(pure(bytes.subarray(0, length))).toBe(reference(bytes.subarray(0, length)));
    }
  });

  test("chunked updates give the digest of the concatenation, whatever the cut points", () => {
    const bytes = globalThis.crypto.getRandomValues(new Uint8Array(5000));
    const whole = reference(bytes);
    for (const cuts of [[1], [63, 64, 65], [0, 0, 100], [128, 129, 4999], [7, 700, 3000]]) {
      const parts: Uint8Array[] = [];
      let from = 0;
      for (const cut of cuts) {
        parts.push(bytes.subarray(from, cut));
        from = cut;
      }
      parts.push(bytes.subarray(from));
      const hash = new Sha256();
      for (const part of parts) hash.update(part);
      expect(hash.hex()).toBe(whole);
      expect(sha256HexOfParts(parts)).toBe(whole);
    }
  });

  test("random inputs up to 1 MiB: the JavaScript hash equals node:crypto", () => {
    for (const length of [1, 55, 56, 57, 4096, 65_537, 1 << 20]) {
      const bytes = new Uint8Array(length);
      for (let at = 0; at < length; at += 65_536) globalThis.crypto.getRandomValues(bytes.subarray(at, Math.min(length, at + 65_536)));
      expect(pure(bytes)).toBe(reference(bytes));
    }
  });
});
