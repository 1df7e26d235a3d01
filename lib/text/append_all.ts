/**
 * Appending a list of unbounded length to another without spreading it
 * into a call.
 *
 * `target.push(...items)` passes every item as an argument, and engines
 * refuse a call with too many: V8 (Node 26, Deno) throws `RangeError:
 * Maximum call stack size exceeded` at about 125,000 arguments, Bun (JSC)
 * at about 640,000. A patch of a million lines, or a failure per chunk of a
 * 100,000-chunk patch, is past both.
 *
 * @module
 */

/**
 * Append `items` to `target` one by one (never spread into a call) and
 * return `target`.
 *
 * @example
 * ```ts
 * const out = [1];
 * appendAll(out, new Array(1_000_000).fill(2)).length; // 1000001
 * ```
 */
export function appendAll<T>(target: T[], items: Iterable<T>): T[] {
  if (Array.isArray(items)) {
    const list = items as readonly T[];
    for (let i = 0; i < list.length; i++) target.push(list[i]!);
  } else {
    for (const item of items) target.push(item);
  }
  return target;
}
