/**
 * The warning of a read-only program that removed what killed snapshots
 * and searches had left in a directory (programs/sh_reap.ts).
 *
 * @module
 */
import type { Warning } from "../types.ts";

/**
 * Warning `leftovers_removed`: `count` private directories of snapshot or
 * search programs that were killed (a timeout or a cancel), found in the
 * root-relative directory `dir` and removed because their programs are
 * provably gone. `path` is the file whose read made the program work there.
 *
 * @example
 * ```ts
 * leftoversRemoved(2, "shared", "shared/a.txt").code; // "leftovers_removed"
 * ```
 */
export function leftoversRemoved(count: number, dir: string, path?: string): Warning {
  const where = dir === "" ? "the root" : dir;
  const what = count === 1 ? "1 private directory" : `${count} private directories`;
  return {
    code: "leftovers_removed",
    message: `removed ${what} (.sap-snap.-* / .sap-srch.-*, holding hard links of the files they had read) that killed snapshot or search programs had left in ${where}; their programs were gone.`,
    ...(path === undefined ? {} : { path }),
  };
}
