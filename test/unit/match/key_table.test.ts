/**
 * KeyTable (lib/match/key_table.ts): the tier's dictionary (ids in order
 * of first registration, as a Map would give), and a region resolves to
 * the key it equals with at most one comparison, also when two keys share hash and
 * length — found here by a birthday search against this process's seed, so
 * the "look up by text" slot is exercised for real, not through a stub.
 */
import { describe, expect, test } from "bun:test";
import { KeyTable, regionHash, regionHashBytes } from "../../../lib/match/key_table.ts";

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** The table of `keys` and, built apart, the dictionary it must equal. */
function tableOf(keys: readonly string[], fold = false): { table: KeyTable; dict: Map<string, number> } {
  const dict = new Map<string, number>();
  for (const k of keys) if (!dict.has(k)) dict.set(k, dict.size + 1);
  const table = new KeyTable(fold, keys.length);
  for (const k of keys) expect(table.intern(k, regionHash(k, 0, k.length, fold))).toBe(dict.get(k)!);
  expect(table.size).toBe(dict.size);
  for (const [k, id] of dict) expect(table.get(k)).toBe(id);
  expect(table.compared).toBe(0);
  return { table, dict };
}

/** Two different 8-character strings with the same region hash (300k tries: no pair is about 1 in 30,000). */
function collidingPair(): [string, string] {
  const seen = new Map<number, string>();
  const rand = prng(7);
  for (let i = 0; i < 300_000; i++) {
    let s = "";
    for (let j = 0; j < 8; j++) s += String.fromCharCode(97 + Math.floor(rand() * 26));
    const h = regionHash(s, 0, s.length, false);
    const other = seen.get(h);
    if (other !== undefined && other !== s) return [other, s];
    seen.set(h, s);
  }
  throw new Error("no colliding pair in 300k strings");
}

describe("KeyTable", () => {
  test("regions resolve to the dictionary's ids (few keys, many keys, embedded in a longer text)", () => {
    const rand = prng(3);
    for (const count of [3, 5000]) {
      const keys = Array.from({ length: count }, () => "k" + Math.floor(rand() * 2 * count) + (rand() < 0.5 ? " = x;" : ""));
      const { table, dict } = tableOf(keys);
      for (let i = 0; i < 2000; i++) {
        const probe = rand() < 0.5 ? keys[Math.floor(rand() * keys.length)]! : "k" + Math.floor(rand() * 4 * count);
        const text = `>>${probe}<<`;
        const before = table.compared;
        expect(table.resolve(text, 2, 2 + probe.length)).toBe(dict.get(probe) ?? 0);
        expect(table.compared - before).toBeLessThanOrEqual(1);
      }
    }
  });

  test("two keys with the same hash and length: each still resolves, with one lookup", () => {
    const [a, b] = collidingPair();
    expect(regionHash(a, 0, 8, false)).toBe(regionHash(b, 0, 8, false));
    const both = tableOf([a, b, a, b]);
    expect(both.table.get("zzzzzzzz")).toBeUndefined();
    for (const [text, id] of [[a, 1], [b, 2], ["zzzzzzzz", 0]] as const) {
      const before = both.table.compared;
      expect(both.table.resolve(text, 0, 8)).toBe(id);
      expect(both.table.compared - before).toBeLessThanOrEqual(1);
    }
    // Only one of them a key: the other, same hash and length, is compared once and rejected.
    const one = tableOf([a]);
    expect(one.table.resolve(b, 0, 8)).toBe(0);
    expect(one.table.compared).toBe(1);
    expect(one.table.resolve(a, 0, 8)).toBe(1);
  });

  test("a table sized for one key grows to 20,000 (and a colliding pair) with every id and lookup intact", () => {
    const [a, b] = collidingPair();
    const keys = [a, ...Array.from({ length: 20_000 }, (_, i) => `line ${i} = f(${i % 97});`), b];
    const table = new KeyTable(false, 1);
    keys.forEach((k, i) => expect(table.intern(k, regionHash(k, 0, k.length, false))).toBe(i + 1));
    expect(table.size).toBe(keys.length);
    keys.forEach((k, i) => {
      expect(table.get(k)).toBe(i + 1);
      expect(table.resolve(`(${k})`, 1, 1 + k.length)).toBe(i + 1);
    });
    expect(table.get("line 20000 = f(0);")).toBeUndefined();
    expect(table.hashes[1]).toBe(regionHash(a, 0, a.length, false));
  });

  test("by bytes (an ASCII text): the same hash and ids, a colliding pair looked up by text, keys that are not ASCII never equal", () => {
    const [a, b] = collidingPair();
    const keys = [a, "caf\u00e9", "x = 1", b, ...Array.from({ length: 3000 }, (_, i) => `k${i} = v;`)];
    const table = new KeyTable(false, 2);
    for (const k of keys) table.intern(k, regionHash(k, 0, k.length, false));
    table.encodeKeyBytes();
    const resolveBytes = (region: string): number => {
      const text = `<${region}>`;
      const bytes = new TextEncoder().encode(text);
      expect(regionHashBytes(bytes, 1, 1 + region.length)).toBe(regionHash(text, 1, 1 + region.length, false));
      return table.resolveHashedBytes(bytes, text, 1, 1 + region.length, regionHashBytes(bytes, 1, 1 + region.length));
    };
    for (const [i, k] of keys.entries()) if (!/[^\x00-\x7f]/.test(k)) expect(resolveBytes(k)).toBe(i + 1);
    expect(resolveBytes("cafe")).toBe(0);
    expect(resolveBytes("k3000 = v;")).toBe(0);
    // Interned after encoding (the table grows too): found once encoded again.
    for (let i = 3000; i < 9000; i++) table.intern(`k${i} = v;`, regionHash(`k${i} = v;`, 0, `k${i} = v;`.length, false));
    table.encodeKeyBytes();
    expect(resolveBytes("k8999 = v;")).toBe(table.get("k8999 = v;")!);
    expect(resolveBytes(a)).toBe(1);
    expect(resolveBytes("x = 1")).toBe(3);
    // Only one of the pair a key: the other shares its slot's hash and length and is compared, not taken.
    const one = new KeyTable(false, 1);
    one.intern(a, regionHash(a, 0, a.length, false));
    one.encodeKeyBytes();
    const bytes = new TextEncoder().encode(b);
    expect(one.resolveHashedBytes(bytes, b, 0, b.length, regionHashBytes(bytes, 0, b.length))).toBe(0);
    expect(one.compared).toBe(1);
  });

  test("tier 4: a region folds to its key as it is hashed and compared", () => {
    const { table } = tableOf(["a - \"b\"", "x-y"], true);
    const text = "a \u2014 \u201cb\u201d|x\u2013y";
    expect(table.resolve(text, 0, 7)).toBe(1);
    expect(table.resolve(text, 8, 11)).toBe(2);
    expect(regionHash(text, 8, 11, true)).toBe(regionHash("x-y", 0, 3, false));
  });
});
