/**
 * Who runs this process, as OpenSSH sees it: the passwd entry of the real
 * uid (`getpwuid(getuid())`), never `$USER` or `$HOME`. `ssh` reads
 * `~/.ssh/config`, expands `~` and `%d`, and defaults the remote user from
 * that entry even when the environment says otherwise (checked with the
 * real client: `HOME=/tmp/x USER=x ssh -G host` still shows the passwd user
 * and home).
 *
 * `os.userInfo()` is not enough on its own: under Bun it returns `$USER` and
 * `$HOME` (and `"unknown"` when `$USER` is unset); Node and Deno call
 * getpwuid. So the lookup goes /etc/passwd (local accounts), then
 * `getent passwd <uid>` (NSS: LDAP, sssd), then `os.userInfo()`, then the
 * environment.
 *
 * @module
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { homedir, userInfo } from "node:os";

/** The local account. */
export interface LocalUser {
  /** Login name (`%u`, the default remote user, `Match localuser`). */
  name: string;
  /** Home directory (`~`, `%d`, where `~/.ssh/config` lives). */
  home: string;
  /** Real uid (`%i`), or -1 where there is none (Windows). */
  uid: number;
  /** Where the answer came from, for messages. */
  source: "passwd" | "getent" | "userInfo" | "environment";
}

/**
 * The passwd entry of this process's real uid (see the module doc for the
 * order of sources).
 *
 * @example
 * ```ts
 * const me = localUser(); // { name: "deploy", home: "/home/deploy", uid: 1000, source: "passwd" }
 * ```
 */
export function localUser(): LocalUser {
  const uid = typeof process.getuid === "function" ? process.getuid() : -1;
  if (uid >= 0) {
    const fromFile = passwdEntry(readPasswd(), (fields) => fields[2] === String(uid));
    if (fromFile) return { ...fromFile, uid, source: "passwd" };
    const fromGetent = passwdEntry(getent(String(uid)), () => true);
    if (fromGetent) return { ...fromGetent, uid, source: "getent" };
  }
  try {
    const info = userInfo();
    // Bun fills userInfo() from $USER/$HOME and says "unknown" without $USER.
    if (info.username && info.username !== "unknown" && info.homedir) {
      return { name: info.username, home: info.homedir, uid, source: "userInfo" };
    }
  } catch {
    // no passwd entry at all (a container's arbitrary uid): fall through
  }
  return { name: process.env.USER ?? process.env.LOGNAME ?? "unknown", home: homedir(), uid, source: "environment" };
}

/**
 * The home directory of another local account (`~user/` in ssh_config), or
 * `undefined` when there is no such account.
 *
 * @example
 * ```ts
 * homeOf("deploy"); // "/home/deploy"
 * ```
 */
export function homeOf(name: string): string | undefined {
  if (!/^[A-Za-z0-9._][A-Za-z0-9._-]*$/.test(name)) return undefined;
  return (passwdEntry(readPasswd(), (fields) => fields[0] === name) ?? passwdEntry(getent(name), () => true))?.home;
}

function readPasswd(): string {
  try {
    return readFileSync("/etc/passwd", "utf8");
  } catch {
    return "";
  }
}

function getent(key: string): string {
  try {
    // No shell; the key is a uid or a checked account name.
    return execFileSync("getent", ["passwd", key], { encoding: "utf8", timeout: 2000, stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    return "";
  }
}

function passwdEntry(text: string, select: (fields: string[]) => boolean): { name: string; home: string } | undefined {
  for (const line of text.split("\n")) {
    const fields = line.split(":");
    if (fields.length < 7 || line.startsWith("#") || !select(fields)) continue;
    if (fields[0] && fields[5]) return { name: fields[0], home: fields[5] };
  }
  return undefined;
}
