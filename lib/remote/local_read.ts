/**
 * Reading a file the snapshot program measured, from this process (SPEC
 * §11.1: a local snapshot must not pay for piping the file's bytes through
 * a shell). LocalShell's {@linkcode LocalFileAccess}.
 *
 * What makes this as safe as the program's own read. The program hands a
 * file over only when it would itself have read it by name: every
 * directory from `/` to the file can be written only by its effective user
 * and root (nobody else can swap a name there), and that user is this
 * process's effective uid, so the read grants no access the program did
 * not have. Here, the name is opened with `O_NOFOLLOW` (a final symlink is
 * refused, not followed) and `O_NONBLOCK` (a FIFO planted meanwhile does
 * not hang the open), then `fstat` of the open descriptor must show a
 * regular file with the inode, size, mtime, mode, owner and link count the
 * program reported — the very inode it measured, not whatever the name
 * means now. After reading exactly `size` bytes, a second `fstat` must show
 * the same size, mtime and ctime to the nanosecond (stricter than the
 * program's own before/after `stat`, which sees whole seconds). Any
 * difference returns `null` and the caller reads the file through the
 * program instead; nothing is ever returned that the checks did not cover.
 *
 * @module
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import type { BigIntStats } from "node:fs";
import type { LocalFileIdentity } from "./shell.ts";

const FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/**
 * Whether this runtime can open a name without following a final symlink
 * and without blocking on a FIFO; without both, LocalShell never offers
 * to read files itself.
 *
 * @example
 * ```ts
 * if (localReadsSupported()) console.log("LocalShell may read large files itself");
 * ```
 */
export function localReadsSupported(): boolean {
  return typeof constants.O_NOFOLLOW === "number" && constants.O_NOFOLLOW > 0 && typeof constants.O_NONBLOCK === "number" && constants.O_NONBLOCK > 0;
}
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;

/**
 * The bytes of `path` when it is the regular file `expect` describes and
 * does not change while read; `null` otherwise (also for any error).
 *
 * @example
 * ```ts
 * const bytes = readVerifiedFile("/srv/app/big.json", { size: 9, inode: 12, mtime: 1700000000, mode: 0o644, uid: 0, gid: 0, nlink: 1 });
 * if (bytes === null) console.log("read it through the program");
 * ```
 */
export function readVerifiedFile(path: string, expect: LocalFileIdentity): Uint8Array | null {
  if (typeof path !== "string" || !path.startsWith("/") || path.includes("\0")) return null;
  if (!Number.isSafeInteger(expect.size) || expect.size < 0) return null;
  let fd: number;
  try {
    fd = openSync(path, FLAGS);
  } catch {
    return null;
  }
  try {
    const before = fstatSync(fd, { bigint: true });
    if (!sameAsMeasured(before, expect)) return null;
    const bytes = new Uint8Array(expect.size);
    let at = 0;
    while (at < bytes.length) {
      const n = readSync(fd, bytes, at, bytes.length - at, at);
      if (n <= 0) return null; // shorter than measured: it shrank
      at += n;
    }
    const after = fstatSync(fd, { bigint: true });
    if (after.size !== before.size || after.mtimeNs !== before.mtimeNs || after.ctimeNs !== before.ctimeNs || after.ino !== before.ino) return null;
    return bytes;
  } catch {
    return null;
  } finally {
    try {
      closeSync(fd);
    } catch {
      // nothing to release
    }
  }
}

function sameAsMeasured(st: BigIntStats, expect: LocalFileIdentity): boolean {
  return (Number(st.mode) & S_IFMT) === S_IFREG &&
    (Number(st.mode) & 0o7777) === expect.mode &&
    st.ino === BigInt(expect.inode) &&
    st.size === BigInt(expect.size) &&
    st.mtimeNs / 1_000_000_000n === BigInt(expect.mtime) &&
    st.uid === BigInt(expect.uid) &&
    st.gid === BigInt(expect.gid) &&
    st.nlink === BigInt(expect.nlink);
}
