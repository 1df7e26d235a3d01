/**
 * `--socket PATH`: the Streamable HTTP transport on a Unix socket, the
 * local alternative to a TCP port that every local process can reach.
 *
 * The socket is made mode 0600 (connect(2) needs write permission on it,
 * so only this user — and root — can talk to the server), in a directory
 * this user owns and no one else can write: there, no one can plant a
 * name, swap the socket for their own (an impostor server) or remove it.
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
  if (basename(path).length === 0 || Buffer.byteLength(join(dir, basename(path))) > 107) {
    throw new ConfigError(`--socket ${path}: a Unix socket path is at most 107 bytes; choose a shorter one`);
  }
  return join(dir, basename(path));
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
