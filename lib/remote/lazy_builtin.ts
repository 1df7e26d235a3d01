/**
 * A `node:` builtin loaded where it is first used rather than with the
 * module that uses it: `node:zlib` and `node:net` cost about as much Bun
 * start-up as the rest of a small command-line apply, and a local apply
 * never needs them. `process.getBuiltinModule` is in Bun, Node ≥ 22.3 and
 * Deno, though not yet in every runtime's types.
 *
 * @module
 */

/**
 * The builtin `id` (loaded once by the runtime, then cached by it).
 *
 * @example
 * ```ts
 * const zlib = lazyBuiltin<typeof import("node:zlib")>("node:zlib");
 * ```
 */
export function lazyBuiltin<T>(id: string): T {
  return (process as unknown as { getBuiltinModule(id: string): unknown }).getBuiltinModule(id) as T;
}
