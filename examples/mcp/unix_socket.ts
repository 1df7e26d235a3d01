/**
 * `--socket PATH`: the Streamable HTTP transport on a Unix socket, the
 * local alternative to a TCP port that every local process can reach.
 *
 * The socket is made mode 0600 (connect(2) needs write permission on it,
 * so only this user — and root — can talk to the server), in a directory
 * this user owns and no one else can write, below ancestors no one else
 * can rename it out of (each one owned by this user or root and not
 * writable by others, or sticky — /tmp — with the next directory ours):
 * there, no one can plant a name, swap the socket for their own (an
 * impostor server, which would also be sent every client's bearer token)
 * or remove it. Checked: a private `mine/` in a world-writable `shared/`
 * was renamed away by another user, who put a `mine/` of theirs holding
 * their own socket in its place.
 * A directory others can write (`/tmp` itself) is refused with the fix. A
 * stale socket of a server that died is replaced; one that still answers
 * is refused (another server runs there). Over the socket the bearer token
 * is off by default: the file mode already says who may connect (give
 * `--token-file` or `SAP_MCP_TOKEN` to require one as well).
 *
 * @module
 */
import { chmodSync, lstatSync, realpathSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import { connect } from "node:net";
import { basename, dirname, join } from "node:path";
import { ConfigError } from "./roots.ts";

const UID: number | undefined = process.getuid?.();

/**
 * The absolute socket path to bind, after checking its directory (see the
 * module notes). Throws ConfigError with the fix.
 *
 * @example
 * ```ts
 * const path = checkSocketPath("/run/user/1000/sap.sock");
 * ```
 */
export function checkSocketPath(path: string): string {
  let dir: string;
  try {
    dir = realpathSync(dirname(path));
  } catch (error) {
    throw new ConfigError(`--socket ${path}: its directory cannot be used (${(error as Error).message})`);
  }
  const s = lstatSync(dir);
  const fix = "put the socket in a directory only you can write, e.g. $XDG_RUNTIME_DIR or one made with mkdir -m 700";
  if (UID !== undefined && s.uid !== UID) throw new ConfigError(`--socket ${path}: the directory ${dir} belongs to uid ${s.uid}, not to this user (${UID}); ${fix}`);
  if ((s.mode & 0o022) !== 0) throw new ConfigError(`--socket ${path}: other users can write the directory ${dir} (mode ${(s.mode & 0o7777).toString(8)}) and could swap the socket; ${fix}`);
  const ancestor = unsafeAncestor(dir);
  if (ancestor !== null) throw new ConfigError(`--socket ${path}: ${ancestor}, so they could rename ${dir} away and put a directory with their own socket in its place; ${fix}`);
  if (basename(path).length === 0 || Buffer.byteLength(join(dir, basename(path))) > 107) {
    throw new ConfigError(`--socket ${path}: a Unix socket path is at most 107 bytes; choose a shorter one`);
  }
  return join(dir, basename(path));
}

/**
 * Why another user could rename `dir` (a real path, symlinks resolved)
 * or one of its ancestors out from under it, or null: an ancestor owned by
 * someone but this user and root, or writable by group or others without
 * the sticky bit — or sticky with the next directory down not ours (its
 * owner may rename it). The same rule as a root's ancestors (SPEC, issue
 * 26 item 5), for the directories the server itself makes names in.
 *
 * @example
 * ```ts
 * unsafeAncestor("/run/user/1000"); // null
 * unsafeAncestor("/srv/shared/mine"); // "other users can write /srv/shared (mode 777)" when it is 0777
 * ```
 */
export function unsafeAncestor(dir: string): string | null {
  const trusted = (uid: number): boolean => uid === 0 || uid === UID;
  let child = dir;
  for (let parent = dirname(dir); ; child = parent, parent = dirname(parent)) {
    const s = lstatSync(parent);
    if (!trusted(s.uid)) return `${parent} belongs to uid ${s.uid}`;
    if ((s.mode & 0o022) !== 0) {
      const sticky = (s.mode & 0o1000) !== 0;
      if (!sticky) return `other users can write ${parent} (mode ${(s.mode & 0o7777).toString(8)})`;
      const owner = lstatSync(child).uid;
      if (!trusted(owner)) return `${child} belongs to uid ${owner}, in the shared ${parent}`;
    }
    if (parent === "/" || parent === dirname(parent)) return null;
  }
}

/**
 * Listen on `path` with mode 0600 from the first instant (the umask is
 * narrowed around bind(2)); a stale socket there is removed first, a live
 * one or any other file is refused. Resolves a function that removes the
 * socket.
 *
 * @example
 * ```ts
 * const unlink = await listenOnSocket(server, path);
 * ```
 */
export async function listenOnSocket(server: Server, path: string): Promise<() => void> {
  let existing;
  try {
    existing = lstatSync(path);
  } catch {
    existing = null;
  }
  if (existing !== null) {
    if (!existing.isSocket()) throw new ConfigError(`--socket ${path}: a file that is not a socket is there; remove it or choose another path`);
    if (await answers(path)) throw new ConfigError(`--socket ${path}: another server is listening there`);
    rmSync(path, { force: true });
  }
  const mask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } finally {
    process.umask(mask);
  }
  chmodSync(path, 0o600);
  const made = lstatSync(path);
  if (!made.isSocket() || (made.mode & 0o077) !== 0) {
    server.close();
    throw new ConfigError(`--socket ${path}: the socket could not be made private (mode ${(made.mode & 0o777).toString(8)})`);
  }
  return () => rmSync(path, { force: true });
}

function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
}
