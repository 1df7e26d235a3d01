/**
 * The existing files closest to a path that does not exist (issue 29.1:
 * `src/Parse.ts` asked for, `src/parse.ts` there). Pure: the snapshot
 * program lists names (lib/remote/programs/sh_near.ts), this ranks them.
 *
 * What counts as close, best first:
 * 1. `same` — the same path but for letter case or Unicode normalisation
 *    (NFC/NFD: `café` typed composed, stored decomposed);
 * 2. `moved` — the same file name (folded the same way) in another
 *    directory; the nearer its directory is to the one asked for (shared
 *    trailing directory names, then edit distance), the better;
 * 3. `typo` — in the same directory (folded), a name that
 *    {@linkcode closestName} takes for a misspelling of the one asked for.
 * Nothing else is offered: a wrong guess would send the model to edit
 * another file.
 *
 * Bounded: at most `existing.length` comparisons of names of at most 64
 * characters (closest_name.ts), and the caller bounds `existing`.
 *
 * @module
 */
import { closestName } from "./closest_name.ts";

/**
 * How a candidate relates to the path asked for (see the module doc).
 *
 * @example
 * ```ts
 * const kind: ClosestPathKind = "same"; // case or Unicode normalisation only
 * ```
 */
export type ClosestPathKind = "same" | "moved" | "typo";

/**
 * One existing path close to a missing one.
 *
 * @example
 * ```ts
 * const c: ClosestPath = { path: "src/parse.ts", kind: "same" };
 * ```
 */
export interface ClosestPath {
  /** The existing root-relative path. */
  path: string;
  /** Why it is close. */
  kind: ClosestPathKind;
}

/**
 * Most candidates returned.
 *
 * @example
 * ```ts
 * closestPaths("x.ts", names).length <= MAX_CLOSEST_PATHS; // true
 * ```
 */
export const MAX_CLOSEST_PATHS = 5;

/**
 * A path folded for comparison: NFC, then lower case.
 *
 * @example
 * ```ts
 * foldPath("Src/Cafe\u0301.ts") === foldPath("src/café.ts"); // true
 * ```
 */
export function foldPath(path: string): string {
  return path.normalize("NFC").toLowerCase();
}

/**
 * The existing paths closest to `missing`, best first, at most `max`
 * (duplicates and `missing` itself ignored).
 *
 * @example
 * ```ts
 * closestPaths("src/Parse.ts", ["README.md", "src/parse.ts", "lib/parse.ts"]);
 * // [{ path: "src/parse.ts", kind: "same" }, { path: "lib/parse.ts", kind: "moved" }]
 * ```
 */
export function closestPaths(missing: string, existing: Iterable<string>, max: number = MAX_CLOSEST_PATHS): ClosestPath[] {
  const want = split(foldPath(missing));
  const scored: { path: string; kind: ClosestPathKind; rank: number; tie: number }[] = [];
  const seen = new Set<string>([missing]);
  for (const path of existing) {
    if (seen.has(path)) continue;
    seen.add(path);
    const have = split(foldPath(path));
    if (have.dir === want.dir && have.base === want.base) {
      scored.push({ path, kind: "same", rank: 0, tie: 0 });
    } else if (have.base === want.base) {
      scored.push({ path, kind: "moved", rank: 1, tie: dirDistance(want.dir, have.dir) });
    } else if (have.dir === want.dir && closestName(want.base, [have.base]) !== null) {
      scored.push({ path, kind: "typo", rank: 2, tie: Math.abs(have.base.length - want.base.length) });
    }
  }
  scored.sort((a, b) => a.rank - b.rank || a.tie - b.tie || a.path.length - b.path.length || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return scored.slice(0, Math.max(0, max)).map(({ path, kind }) => ({ path, kind }));
}

function split(path: string): { dir: string; base: string } {
  const at = path.lastIndexOf("/");
  return at < 0 ? { dir: "", base: path } : { dir: path.slice(0, at), base: path.slice(at + 1) };
}

/** How far apart two folded directories are: fewer shared trailing names, then more differing components, is farther. */
function dirDistance(a: string, b: string): number {
  const x = a === "" ? [] : a.split("/");
  const y = b === "" ? [] : b.split("/");
  let shared = 0;
  while (shared < x.length && shared < y.length && x[x.length - 1 - shared] === y[y.length - 1 - shared]) shared++;
  let prefix = 0;
  while (prefix < x.length && prefix < y.length && x[prefix] === y[prefix]) prefix++;
  const differing = x.length + y.length - 2 * Math.max(shared, prefix);
  return (1000 - Math.min(shared, 999)) * 1000 + Math.min(differing, 999);
}
