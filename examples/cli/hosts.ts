/**
 * `--hosts` of `examples/apply.ts`: the hosts of a fleet run, each with its
 * name, where it is and its root.
 *
 *     --hosts web1,web2,deploy@web3:2222          SSH hosts, each with --root DIR
 *     --hosts a=ssh://deploy@web1/srv/a,b=./site  named entries with their own roots
 *
 * An entry is `HOST` — `[user@]host[:port]`, host may be an ~/.ssh/config
 * alias; its name is the entry as written, its root `--root` — or
 * `NAME=LOCATION`, LOCATION being a `HOST` (root `--root`), an
 * `ssh://[user@]host[:port]/absolute/path` or a local directory (a path
 * starting with `/`, `.` or `~`, as in the MCP server's `--root`).
 *
 * @module
 */
import { homedir } from "node:os";
import { posix, resolve } from "node:path";
import { parseSshDestination } from "../../mod.ts";
import type { SshDestination } from "../../mod.ts";

/** One host of a fleet run. */
export interface HostEntry {
  /** Unique; what reports, progress lines and `--hosts` re-runs call it. */
  name: string;
  /** The entry as written (for the re-run command). */
  text: string;
  /** Absolute root on the host (a local one resolved against the cwd). */
  root: string;
  /** The SSH destination; absent: a local directory (LocalShell). */
  ssh?: SshDestination;
}

/** A host name: letters, digits and `@ . _ : -`, starting with a letter or digit (an entry like `deploy@web1:2222` is its own name). */
const NAME = /^[A-Za-z0-9][A-Za-z0-9@._:-]{0,127}$/;

/**
 * The hosts of `--hosts LIST` (repeatable: the lists join), or the usage
 * error to print. `root` is `--root` (undefined when not given).
 *
 * @example
 * ```ts
 * parseHosts(["web1,web2"], "/srv/app"); // [{ name: "web1", root: "/srv/app", ssh: { host: "web1" } }, …]
 * ```
 */
export function parseHosts(lists: readonly string[], root: string | undefined, cwd: string = process.cwd()): HostEntry[] | string {
  const hosts: HostEntry[] = [];
  for (const text of lists.flatMap((list) => list.split(","))) {
    const entry = text.trim();
    if (entry === "") return "--hosts: an empty entry (two commas in a row, or one at an end)";
    const eq = entry.indexOf("=");
    const name = eq < 0 ? entry : entry.slice(0, eq);
    const location = eq < 0 ? entry : entry.slice(eq + 1);
    if (!NAME.test(name)) return `--hosts ${JSON.stringify(entry)}: a host name is letters, digits and @ . _ : - (at most 128, starting with a letter or digit); write NAME=LOCATION to name it`;
    if (hosts.some((h) => h.name === name)) return `--hosts: ${JSON.stringify(name)} is listed twice`;
    const host = hostOf(name, entry, location, root, cwd);
    if (typeof host === "string") return host;
    hosts.push(host);
  }
  if (hosts.length === 0) return "--hosts needs at least one host";
  return hosts;
}

function hostOf(name: string, text: string, location: string, root: string | undefined, cwd: string): HostEntry | string {
  if (/[\u0000-\u001f\u007f]/.test(location)) return `--hosts ${JSON.stringify(text)}: control characters in the location`;
  if (location.startsWith("ssh://")) {
    const rest = location.slice("ssh://".length);
    const slash = rest.indexOf("/");
    const ssh = slash < 0 ? null : parseSshDestination(rest.slice(0, slash));
    if (ssh === null) return `--hosts ${JSON.stringify(text)}: write ssh://[user@]host[:port]/absolute/path`;
    return { name, text, root: posix.normalize(rest.slice(slash)).replace(/(.)\/+$/, "$1"), ssh };
  }
  if (/^[/.~]/.test(location)) {
    const dir = location === "~" || location.startsWith("~/") ? homedir() + location.slice(1) : location;
    return { name, text, root: resolve(cwd, dir) };
  }
  const ssh = parseSshDestination(location);
  if (ssh === null) return `--hosts ${JSON.stringify(text)}: ${JSON.stringify(location)} is not [user@]host[:port], ssh://…/path or a local directory`;
  if (root === undefined) return `--hosts ${JSON.stringify(text)}: give --root DIR (the directory on every host) or write NAME=ssh://${location}/path`;
  if (!root.startsWith("/")) return "with SSH hosts in --hosts, --root must be an absolute path on the remote hosts";
  return { name, text, root, ssh };
}

/**
 * `--host-expect NAME=PATH=SHA256` (repeatable): per host, the SHA-256 a
 * file must have. NAME is up to the first `=`, the SHA-256 after the last;
 * the path is what lies between. Returns the usage error to print, or the
 * preconditions by host name.
 *
 * @example
 * ```ts
 * parseHostExpect(["web1=app.conf=9f86…"], ["web1"]); // { web1: { "app.conf": "9f86…" } }
 * ```
 */
export function parseHostExpect(items: readonly string[], names: readonly string[]): Record<string, Record<string, string>> | string {
  // No prototypes: a host named `constructor` found Object's own and the
  // SHA went onto the global Object (the precondition silently vanished);
  // a path named __proto__ was dropped by the prototype setter.
  const out: Record<string, Record<string, string>> = Object.create(null);
  for (const item of items) {
    const first = item.indexOf("=");
    const last = item.lastIndexOf("=");
    const name = item.slice(0, first);
    const path = item.slice(first + 1, last);
    const sha = item.slice(last + 1).toLowerCase();
    if (first <= 0 || last <= first + 1 || !/^[0-9a-f]{64}$/.test(sha)) {
      return `--host-expect ${JSON.stringify(item)}: expected NAME=PATH=SHA256 (64 hex digits)`;
    }
    if (!names.includes(name)) return `--host-expect ${JSON.stringify(item)}: ${JSON.stringify(name)} is not one of --hosts`;
    const paths = (out[name] ??= Object.create(null) as Record<string, string>);
    if (Object.hasOwn(paths, path) && paths[path] !== sha) return `--host-expect ${JSON.stringify(`${name}=${path}`)} is given twice with different SHA-256s; give it once`;
    paths[path] = sha;
  }
  return out;
}
