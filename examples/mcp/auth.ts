/**
 * The bearer token of the HTTP transport (issue 26 item 1): where it comes
 * from, where a generated one is written, and how a request's
 * `Authorization` header is judged.
 *
 * Any local process can reach 127.0.0.1, so over TCP a token is required
 * unless the operator says `--no-auth`. Sources, first match wins:
 * 1. `--token-file PATH`: an existing file must be a regular file owned by
 *    this user that group and others cannot read (like an SSH key) — it is
 *    opened without following a symlink and checked on the open file; a
 *    missing one is created (mode 0600, exclusively, so never through a
 *    planted name) holding a new token, so the same file serves every
 *    later start;
 * 2. the environment variable `SAP_MCP_TOKEN` (removed from the server's
 *    environment once read, so no program it starts inherits it);
 * 3. otherwise a new random token (256 bits, base64url) written to a file
 *    only this user can read: `$XDG_RUNTIME_DIR/ssh-apply-patch/mcp-PORT.token`
 *    when that runtime directory is this user's and private (mode 0700, as
 *    systemd makes it), else `token` in a fresh private directory made by
 *    mkdtemp under the temp directory. The server prints the file's path,
 *    never the token, and removes the file when it stops.
 * A token never travels in argv (it would be public in /proc/PID/cmdline).
 *
 * @module
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, mkdtempSync, openSync, readSync, renameSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "./roots.ts";
import { unsafeAncestor } from "./unix_socket.ts";

/** The environment variable a token may come from. */
export const TOKEN_ENV = "SAP_MCP_TOKEN";

/** Shortest token accepted from a file or the environment. */
export const MIN_TOKEN_CHARS = 16;

/** Where the token of a server came from. */
export type TokenOrigin = "token-file" | "created-token-file" | "environment" | "generated";

/** A bearer token and where it came from. */
export interface BearerToken {
  token: string;
  origin: TokenOrigin;
  /** The token file (`--token-file`, or the generated token's once written). */
  file: string | null;
}

const UID: number | undefined = process.getuid?.();
const MAX_TOKEN_FILE_BYTES = 4096;

/**
 * A new random token: 32 bytes from the system's CSPRNG, base64url.
 *
 * @example
 * ```ts
 * newToken().length; // 43
 * ```
 */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/**
 * The token of `--token-file PATH`: read from an existing private file, or
 * created there (a new token, mode 0600) when there is none. Throws
 * ConfigError with the fix for a file others can read, one owned by
 * another user, a symlink or anything but a regular file.
 *
 * @example
 * ```ts
 * const { token, origin } = tokenFromFile("/home/me/.config/sap/token");
 * ```
 */
export function tokenFromFile(file: string): BearerToken {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { token: createTokenFile(file), origin: "created-token-file", file };
    if (code === "ELOOP") throw new ConfigError(`--token-file ${file}: it is a symlink; give the file itself`);
    throw new ConfigError(`--token-file ${file}: cannot read it (${(error as Error).message})`);
  }
  try {
    const s = fstatSync(fd);
    if (!s.isFile()) throw new ConfigError(`--token-file ${file}: not a regular file`);
    if (UID !== undefined && s.uid !== UID) throw new ConfigError(`--token-file ${file}: it belongs to uid ${s.uid}, not to this user (${UID}), who could change it; use a file of your own (mode 0600)`);
    if ((s.mode & 0o077) !== 0) throw new ConfigError(`--token-file ${file}: group or others can read it (mode ${(s.mode & 0o777).toString(8)}); chmod 600 it`);
    const buffer = Buffer.alloc(MAX_TOKEN_FILE_BYTES + 1);
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    if (n > MAX_TOKEN_FILE_BYTES) throw new ConfigError(`--token-file ${file}: longer than ${MAX_TOKEN_FILE_BYTES} bytes; it holds one line, the token`);
    return { token: checkToken(buffer.subarray(0, n).toString("utf8").trim(), `--token-file ${file}`), origin: "token-file", file };
  } finally {
    closeSync(fd);
  }
}

/**
 * A token from the environment variable {@linkcode TOKEN_ENV}, checked.
 *
 * @example
 * ```ts
 * const token = tokenFromEnvironment(process.env.SAP_MCP_TOKEN!);
 * ```
 */
export function tokenFromEnvironment(value: string): BearerToken {
  return { token: checkToken(value.trim(), TOKEN_ENV), origin: "environment", file: null };
}

function checkToken(token: string, where: string): string {
  // deno-lint-ignore no-control-regex
  if (token.length < MIN_TOKEN_CHARS || /[\s\u0000-\u001f\u007f]/.test(token)) {
    throw new ConfigError(`${where}: the token must be one line of at least ${MIN_TOKEN_CHARS} characters without spaces (e.g. the output of: openssl rand -base64 32)`);
  }
  return token;
}

function createTokenFile(file: string): string {
  const token = newToken();
  try {
    // wx = O_CREAT|O_EXCL: fails on any existing name, a planted symlink included.
    const fd = openSync(file, "wx", 0o600);
    try {
      writeSync(fd, `${token}\n`);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    throw new ConfigError(`--token-file ${file}: it does not exist and cannot be created (${(error as Error).message})`);
  }
  return token;
}

/** A generated token's file, and how to remove it. */
export interface WrittenToken {
  file: string;
  /** Remove the file (and the private directory made for it). */
  remove(): void;
  /** Why the runtime directory was not used, when it was not. */
  note: string | null;
}

/**
 * Write a generated token where only this user can read it (see the module
 * notes): `$XDG_RUNTIME_DIR/ssh-apply-patch/mcp-NAME.token`, or a fresh
 * mkdtemp directory. The file is written under a temporary name created
 * exclusively (mode 0600) and renamed into place, so a stale file of a
 * killed server is replaced whole and nothing is ever written through a
 * name someone else made.
 *
 * @example
 * ```ts
 * const written = writeGeneratedToken(token, "8080");
 * console.error(`token in ${written.file}`);
 * ```
 */
export function writeGeneratedToken(token: string, name: string, env: Record<string, string | undefined> = process.env): WrittenToken {
  const runtime = env.XDG_RUNTIME_DIR;
  const problem = runtime ? privateDirProblem(runtime) : "";
  if (problem === null) {
    const dir = join(runtime!, "ssh-apply-patch");
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const dirProblem = privateDirProblem(dir);
    if (dirProblem === null) {
      const file = join(dir, `mcp-${name}.token`);
      writePrivateFile(dir, file, token);
      return { file, remove: () => rmSync(file, { force: true }), note: null };
    }
    return inTemp(token, `${dir}: ${dirProblem}`);
  }
  return inTemp(token, problem === "" ? null : `XDG_RUNTIME_DIR ${runtime}: ${problem}`);
}

function inTemp(token: string, note: string | null): WrittenToken {
  const dir = mkdtempSync(join(tmpdir(), "ssh-apply-patch-")); // mode 0700, a new name
  const file = join(dir, "token");
  writePrivateFile(dir, file, token);
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }), note };
}

function writePrivateFile(dir: string, file: string, token: string): void {
  const temp = join(dir, `.tmp-${randomBytes(8).toString("hex")}`);
  const fd = openSync(temp, "wx", 0o600);
  try {
    writeSync(fd, `${token}\n`);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
}

/**
 * Why `dir` is not a directory private to this user (a real directory, not
 * a symlink, owned by this user, mode without group or other bits, below
 * ancestors no other user can rename it out of: unix_socket.ts
 * {@linkcode unsafeAncestor}), or null.
 *
 * @example
 * ```ts
 * privateDirProblem("/tmp"); // "group or others can use it (mode 1777)"
 * ```
 */
export function privateDirProblem(dir: string): string | null {
  let s;
  try {
    s = lstatSync(dir);
  } catch (error) {
    return `cannot use it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  if (!s.isDirectory()) return "not a directory (a symlink is not followed)";
  if (UID !== undefined && s.uid !== UID) return `it belongs to uid ${s.uid}, not to this user (${UID})`;
  if ((s.mode & 0o077) !== 0) return `group or others can use it (mode ${(s.mode & 0o777).toString(8)})`;
  // Private, but another user could rename it away and put their own in its place.
  return unsafeAncestor(dir);
}

/** How a request's credentials were judged. */
export type AuthVerdict = "ok" | "missing" | "wrong" | "in_url";

/**
 * Judge a request's `Authorization` header (and URL) against the token:
 * `Bearer <token>` (scheme case-insensitive), compared in constant time —
 * both sides are hashed first, so neither the token's length nor its
 * content leaks through timing. A token in the URL query (`access_token`,
 * `token`) is never accepted: URLs end up in logs, histories and Referer
 * headers.
 *
 * @example
 * ```ts
 * const check = bearerCheck(token);
 * check(req.headers.authorization, new URL(req.url!, "http://x")); // "ok" | "missing" | "wrong" | "in_url"
 * ```
 */
export function bearerCheck(token: string): (authorization: string | undefined, url: URL) => AuthVerdict {
  const expected = createHash("sha256").update(token).digest();
  return (authorization, url) => {
    if (url.searchParams.has("access_token") || url.searchParams.has("token")) return "in_url";
    if (authorization === undefined || authorization === "") return "missing";
    const m = /^Bearer +(\S+) *$/i.exec(authorization);
    if (m === null) return "wrong";
    return timingSafeEqual(createHash("sha256").update(m[1]!).digest(), expected) ? "ok" : "wrong";
  };
}
