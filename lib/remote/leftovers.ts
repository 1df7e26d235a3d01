/**
 * The warning of a read-only program that removed what killed snapshots
 * and searches had left in a directory (programs/sh_reap.ts).
 *
 * @module
 */
import type { Warning } from "../types.ts";

/**
 * Warning `cleanup_incomplete` of a read: the private directory a
 * snapshot or search made in the root-relative directory `dir` was moved
 * out of its reach by someone who can write there, so it could not be
 * removed (programs/sh_private.ts, sap_pfind). `path`: a file read there.
 *
 * @example
 * ```ts
 * privateKept("shared", "shared/a.txt").code; // "cleanup_incomplete"
 * ```
 */
export function privateKept(dir: string, path?: string): Warning {
  const where = dir === "" ? "the root" : dir;
  return {
    code: "cleanup_incomplete",
    message: `a private directory this read made in ${where} (.sap-snap.-* / .sap-srch.-*, 0700, holding hard links of the files it read there) could not be removed: someone who can write ${where} renamed or moved it while the read ran. Nothing was read through it after that. The next snapshot or search in ${where} removes it when it finds it there; otherwise remove it by hand (it belongs to the remote user).`,
    ...(path === undefined ? {} : { path }),
  };
}

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
