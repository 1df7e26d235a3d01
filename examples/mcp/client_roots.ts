/**
 * Client roots (MCP `roots/list`): when the server is started without any
 * `--root`, it serves the local directories the client shares, as the
 * reference filesystem server does, and re-reads them on
 * `notifications/roots/list_changed`. Only `file://` URIs of existing local
 * directories become roots; each gets a name the model passes as `root`
 * (the client's name for it when it is a valid root name, else the
 * directory's base name), made unique with `-2`, `-3`, … .
 *
 * Only over stdio: over HTTP any local process that can connect could
 * declare roots, so there the server serves configured roots only
 * (args.ts). And even over stdio, a client root that would hand the model
 * the machine is refused (issue 26 item 2), compared after symlinks are
 * resolved (a link to `/` is `/`):
 * - `/`, and any directory above one of the system directories below;
 * - the home directory of root (`/root`, and uid 0's home in /etc/passwd),
 *   `/etc`, `/boot`, `/proc`, `/sys` and `/dev`: the directory, anything
 *   inside it, anything above it — their files run or configure the
 *   machine (`authorized_keys`, `cron.d`, `sudoers.d`), or are not files;
 * - `/usr`, `/bin`, `/sbin`, `/lib*`, `/var`, `/run` and `/home` themselves
 *   (and what is above them): whole system trees, or every user's home at
 *   once; a project inside them (`/usr/local/src/app`, `/var/www/site`,
 *   `/home/me/project`) is fine.
 * The paths are compared by name and, since a bind mount (a container's
 * `/host`, a `mount --bind /etc /srv/x`) shows the same directory under a
 * name realpath cannot see through, also by identity (device and inode):
 * a client root that is `/`, one of the directories above, or inside one
 * of those that may not even be neared, by another name, is refused the
 * same way (checked: a bind mount of /etc was accepted as a root before).
 * Such a directory can still be served: configure it with `--root`, which
 * is the operator's decision, not the client's. The refusal is logged and
 * shown to the model, like any other unusable client root.
 *
 * @module
 */
import { readFileSync, realpathSync, statSync } from "node:fs";
import { basename, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { RootConfig } from "./roots.ts";

/** A root as the client lists it. */
export interface ClientRoot {
  uri: string;
  name?: string;
}

const ROOT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The usable roots and, for the log, why the others were left out. */
export interface ClientRootsResult {
  roots: RootConfig[];
  ignored: string[];
}

/**
 * The client's roots as server roots.
 *
 * @example
 * ```ts
 * rootsFromClient([{ uri: "file:///home/me/project", name: "project" }]).roots[0]!.path; // "/home/me/project"
 * ```
 */
export function rootsFromClient(listed: readonly ClientRoot[]): ClientRootsResult {
  const roots: RootConfig[] = [];
  const ignored: string[] = [];
  for (const root of listed) {
    let path: string;
    try {
      if (!root.uri.startsWith("file://")) throw new Error("not a file:// URI");
      path = fileURLToPath(root.uri);
    } catch (error) {
      ignored.push(`${root.uri}: ${(error as Error).message}`);
      continue;
    }
    // deno-lint-ignore no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(path)) {
      ignored.push(`${root.uri}: the path contains control characters`);
      continue;
    }
    let isDirectory = false;
    try {
      isDirectory = statSync(path).isDirectory();
    } catch {
      // reported below
    }
    if (!isDirectory) {
      ignored.push(`${root.uri}: not an existing local directory`);
      continue;
    }
    path = realpathSync(path);
    const sensitive = sensitiveRootProblem(path) ?? sameDirectoryProblem(path);
    if (sensitive !== null) {
      ignored.push(`${root.uri}: ${sensitive}`);
      continue;
    }
    const wanted = root.name !== undefined && ROOT_NAME.test(root.name) ? root.name : nameOf(path);
    let name = wanted;
    for (let n = 2; roots.some((r) => r.name === name); n++) name = `${wanted.slice(0, 60)}-${n}`;
    roots.push({ name, kind: "local", path, options: {}, label: path });
  }
  return { roots, ignored };
}

function nameOf(path: string): string {
  const base = basename(path).replace(/[^A-Za-z0-9._-]/g, "_").replace(/^[._-]+/, "").slice(0, 64);
  return base === "" ? "root" : base;
}

/** Directories a client root may be neither at, nor inside, nor above. */
const NEVER_NEAR = ["/etc", "/boot", "/proc", "/sys", "/dev"];
/** Directories a client root may not be, nor be above (inside them is fine). */
const NOT_WHOLE = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/var", "/run", "/home"];

/**
 * Why `path` (a real path, symlinks resolved) may not be a client root, or
 * null. See the module notes for the rule and why.
 *
 * @example
 * ```ts
 * sensitiveRootProblem("/"); // "refused: / holds the whole machine …"
 * sensitiveRootProblem("/home/me/project"); // null
 * ```
 */
export function sensitiveRootProblem(path: string, rootHomes: readonly string[] = homesOfRoot()): string | null {
  const fix = "configure it with --root if the server really should edit it";
  if (path === "/") return `refused: / holds the whole machine (system files, every home, root's keys); share a project folder instead, or ${fix}`;
  const inside = (a: string, b: string): boolean => a === b || a.startsWith(`${b}/`);
  for (const dir of [...rootHomes, ...NEVER_NEAR].flatMap(realOrSelf)) {
    if (inside(path, dir) || inside(dir, path)) {
      return `refused: ${path} ${path === dir ? "is" : inside(path, dir) ? "is inside" : "holds"} ${rootHomes.includes(dir) ? `root's home ${dir}` : dir}, whose files configure or run the machine; ${fix}`;
    }
  }
  for (const dir of NOT_WHOLE.flatMap(realOrSelf)) {
    if (inside(dir, path)) return `refused: ${path} ${path === dir ? "is" : "holds"} the whole of ${dir}; share a project folder inside it instead, or ${fix}`;
  }
  return null;
}

/**
 * Why `path` (a real path) is, by device and inode, one of the refused
 * directories under another name (a bind mount), or inside one of those
 * that may not even be neared; null when it is none of them.
 *
 * @example
 * ```ts
 * sameDirectoryProblem("/srv/etc-bind"); // "refused: /srv/etc-bind is the directory /etc (the same device and inode: a bind mount) …"
 * ```
 */
export function sameDirectoryProblem(path: string, rootHomes: readonly string[] = homesOfRoot()): string | null {
  const idOf = (dir: string): string | null => {
    try {
      const s = statSync(dir);
      return `${s.dev}:${s.ino}`;
    } catch {
      return null;
    }
  };
  const near = new Map<string, string>();
  const whole = new Map<string, string>();
  for (const dir of [...rootHomes, ...NEVER_NEAR]) near.set(idOf(dir) ?? `none:${dir}`, dir);
  for (const dir of ["/", ...NOT_WHOLE]) whole.set(idOf(dir) ?? `none:${dir}`, dir);
  const fix = "configure it with --root if the server really should edit it";
  const own = idOf(path);
  if (own !== null && whole.has(own)) return `refused: ${path} is the directory ${whole.get(own)} (the same device and inode: a bind mount); ${fix}`;
  for (let dir = path; ; dir = dirname(dir)) {
    const id = idOf(dir);
    if (id !== null && near.has(id)) {
      return `refused: ${path} ${dir === path ? "is" : "is inside"} ${dir === path ? "the directory " : `${dir}, the directory `}${near.get(id)} (the same device and inode: a bind mount), whose files configure or run the machine; ${fix}`;
    }
    if (dir === "/") return null;
  }
}

/** The path and, when it is a symlink (merged /usr: /bin → /usr/bin), what it points to. */
function realOrSelf(dir: string): string[] {
  try {
    const real = realpathSync(dir);
    return real === dir ? [dir] : [dir, real];
  } catch {
    return [dir];
  }
}

/** `/root` and the home of every uid-0 account in /etc/passwd. */
function homesOfRoot(): string[] {
  const homes = new Set(["/root"]);
  try {
    for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
      const f = line.split(":");
      if (f.length >= 7 && f[2] === "0" && f[5]!.startsWith("/") && f[5] !== "/") homes.add(f[5]!);
    }
  } catch {
    // no passwd file: /root alone
  }
  return [...homes];
}
