import { describe, expect, test } from "bun:test";
import { appendAll } from "../../../lib/text/append_all.ts";

describe("appendAll", () => {
  test.each([
    ["an empty list", [1], [], [1]],
    ["an array", [1], [2, 3], [1, 2, 3]],
    ["a Set (any iterable)", [], new Set([4, 5]), [4, 5]],
  ] as [string, number[], Iterable<number>, number[]][])("%s", (_, target, items, expected) => {
    expect(appendAll(target, items)).toBe(target);
    expect(target).toEqual(expected);
  });

  test("a million items: past every engine's argument limit (a spread into push throws there)", () => {
    const items = new Array<number>(1_000_000).fill(7);
    expect(() => ([] as number[]).push(...items)).toThrow(RangeError);
    const out = appendAll([0], items);
    expect(out.length).toBe(1_000_001);
    expect(out[1_000_000]).toBe(7);
  });
});
