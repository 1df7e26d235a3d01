/**
 * OutputBuffer (lib/remote/output_buffer.ts): chunks appended in order come
 * back as one view, on both growth paths — the resizable buffer and the
 * doubling fallback (small maxima, or an ArrayBuffer constructor that
 * refuses to reserve: faked here, as the test name says).
 */
import { describe, expect, test } from "bun:test";
import { OutputBuffer } from "../../../lib/remote/output_buffer.ts";

function chunks(sizes: readonly number[]): Uint8Array[] {
  let next = 0;
  return sizes.map((n) => Uint8Array.from({ length: n }, () => next++ & 0xff));
}

function joined(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const CASES: { name: string; max: number; sizes: number[] }[] = [
  { name: "nothing appended", max: 1 << 20, sizes: [] },
  { name: "empty chunks", max: 100, sizes: [0, 0] },
  { name: "a small maximum (plain buffer, doubling)", max: 70_000, sizes: [1, 65_535, 4000, 464] },
  { name: "exactly the maximum", max: 200_000, sizes: [100_000, 100_000] },
  { name: "many chunks past several resize steps", max: 5 << 20, sizes: Array.from({ length: 40 }, (_, i) => 100_000 + i * 1000) },
  { name: "one chunk larger than a resize step", max: 4 << 20, sizes: [3 << 20, 17] },
];

describe("OutputBuffer", () => {
  for (const c of CASES) {
    test(`${c.name}: the bytes, in order`, () => {
      const parts = chunks(c.sizes);
      const out = new OutputBuffer(c.max);
      for (const p of parts) out.append(p);
      expect(out.length).toBe(joined(parts).length);
      expect(out.bytes()).toEqual(joined(parts));
    });
  }

  test("appending past the maximum throws (the caller's limit checks come first)", () => {
    for (const max of [1000, 3 << 20]) {
      const out = new OutputBuffer(max);
      out.append(new Uint8Array(max - 1));
      expect(() => out.append(new Uint8Array(2))).toThrow(RangeError);
    }
  });

  test("large replies grow in place: bytes() is a view of one buffer, not a copy", () => {
    const out = new OutputBuffer(64 << 20);
    for (const p of chunks(Array.from({ length: 30 }, () => 256 * 1024))) out.append(p);
    const view = out.bytes();
    expect(view.buffer.byteLength).toBeLessThanOrEqual(view.length + (1 << 20));
    expect((view.buffer as { resizable?: boolean }).resizable).toBe(true);
  });

  test("fault injected: an ArrayBuffer that cannot reserve its maximum falls back to doubling, same bytes", () => {
    const Original = globalThis.ArrayBuffer;
    const refusing = function (this: unknown, length: number, options?: { maxByteLength?: number }) {
      if (options?.maxByteLength !== undefined) throw new RangeError("cannot reserve (fault injected)");
      return new Original(length);
    } as unknown as ArrayBufferConstructor;
    globalThis.ArrayBuffer = refusing;
    let out: OutputBuffer;
    try {
      out = new OutputBuffer(8 << 20);
    } finally {
      globalThis.ArrayBuffer = Original;
    }
    const parts = chunks([70_000, 1, 200_000, 1 << 20]);
    for (const p of parts) out.append(p);
    expect(out.bytes()).toEqual(joined(parts));
    expect((out.bytes().buffer as { resizable?: boolean }).resizable).toBe(false);
  });
});
