/**
 * The example server's command line: the roots (roots.ts), the memory
 * bounds, and the transport — stdio by default, or Streamable HTTP with
 * `--http` (TCP) or `--socket` (a Unix socket).
 *
 * HTTP decisions (issue 26 items 1, 2 and 7; the issue is silent on the
 * details):
 * - `--http PORT` binds 127.0.0.1; `--http HOST:PORT` (IPv6 as
 *   `[::1]:PORT`) binds HOST.
 * - Over TCP a bearer token is required by default (auth.ts says where it
 *   comes from and where a generated one is written); `--no-auth` is the
 *   explicit way to run without one, on a loopback address only, and the
 *   server warns at every start. A HOST that is not loopback always needs a
 *   token.
 * - `--socket PATH` listens on a Unix socket made 0600 in a private
 *   directory (unix_socket.ts); there the token is off unless one is given
 *   (`--token-file` or `SAP_MCP_TOKEN`): the socket's mode already limits
 *   who can connect to this user (and root).
 * - Over HTTP the roots must be configured (`--root` / `--config`): roots a
 *   client declares (MCP `roots/list`) are never trusted there, since any
 *   local process that can connect could declare `file:///`.
 * - Bounds (the defaults are what one busy operator's server needs):
 *   `--max-sessions N` (64) sessions at once, `--cache-bytes N` (128 MiB)
 *   of file contents cached for all sessions together, `--replay-bytes N`
 *   (16 MiB) of SSE events kept for resuming streams, for all sessions
 *   together. Sizes take a K, M or G suffix (KiB, MiB, GiB). `--queue-length N`
 *   (128): applies one file's queue holds (apply_queue.ts), stdio and HTTP.
 *
 * Every flag the server does not know is refused with the closest one it
 * has ("unknown flag --no-auht: did you mean --no-auth?").
 *
 * @module
 */
import { resolve } from "node:path";
import { unknownNames, unknownNamesText } from "../../mod.ts";
import { TOKEN_ENV, tokenFromEnvironment, tokenFromFile, newToken } from "./auth.ts";
import type { BearerToken } from "./auth.ts";
import { checkSocketPath } from "./unix_socket.ts";
import { DEFAULT_QUEUE_LENGTH } from "./apply_queue.ts";
import { loadGroups } from "./groups.ts";
import type { GroupConfig } from "./groups.ts";
import { ConfigError, loadRoots, USAGE } from "./roots.ts";
import type { RootConfig } from "./roots.ts";

/** Where the HTTP transport listens. */
export type Listen = { kind: "tcp"; host: string; port: number } | { kind: "socket"; path: string };

/** Who may talk to the HTTP transport. */
export type HttpAuth =
  | { kind: "token"; bearer: BearerToken }
  | { kind: "none"; reason: "no-auth" | "socket" };

/** Where the HTTP transport listens, who may talk to it, and its bounds. */
export interface HttpSettings {
  listen: Listen;
  auth: HttpAuth;
  /** Browser origins allowed besides http(s)://localhost, 127.0.0.1 and [::1] (any port). */
  allowedOrigins: string[];
  /** Most sessions open at once (idle ones are evicted first; then 503). */
  maxSessions: number;
  /** Most bytes of SSE events kept for replay, all sessions together. */
  replayBytes: number;
}

/** The parsed command line. */
export interface ServerArgs {
  roots: RootConfig[];
  /** `--group NAME=ROOT,…`: the host groups of apply_patch_fleet (none: the tool is not offered). */
  groups: GroupConfig[];
  http: HttpSettings | null;
  /** Most bytes of file contents the server's snapshot cache keeps (all sessions together). */
  cacheBytes: number;
  /** Most applies one file's queue holds, the running one included (all sessions together; apply_queue.ts). */
  queueLength: number;
}

/** Default `--cache-bytes` (the library's SnapshotCache default). */
export const DEFAULT_CACHE_BYTES: number = 128 * 1024 * 1024;
/** Default `--max-sessions`. */
export const DEFAULT_MAX_SESSIONS = 64;
/** Default `--replay-bytes`. */
export const DEFAULT_REPLAY_BYTES: number = 16 * 1024 * 1024;

const VALUE_FLAGS = ["--root", "--config", "--group", "--http", "--socket", "--token-file", "--allow-origin", "--max-sessions", "--cache-bytes", "--replay-bytes", "--queue-length"] as const;
const SWITCHES = ["--no-auth", "--help"] as const;
const FLAG_NAMES: readonly string[] = [...VALUE_FLAGS, ...SWITCHES].map((f) => f.slice(2));
const HTTP_ONLY = ["--token-file", "--allow-origin", "--no-auth", "--max-sessions", "--replay-bytes"];

/**
 * Whether `host` is a loopback address or name.
 *
 * @example
 * ```ts
 * isLoopback("127.0.0.1"); // true
 * ```
 */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * Parse the server's arguments (see USAGE); `"help"` for `--help`. Throws
 * ConfigError for anything wrong. A `--token-file` that does not exist is
 * created here (with a new token, mode 0600).
 *
 * @example
 * ```ts
 * const args = parseServerArgs(["--root", "site=./examples/site", "--http", "8080"]);
 * ```
 */
export function parseServerArgs(
  argv: readonly string[],
  cwd: string = process.cwd(),
  env: Record<string, string | undefined> = process.env,
): ServerArgs | "help" {
  const rootArgs: string[] = [];
  const given = new Map<string, string[]>();
  const unknown: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "-h" || arg === "--help") return "help";
    if (!arg.startsWith("-")) throw new ConfigError(`unexpected argument ${JSON.stringify(arg)}: every value follows its flag (e.g. --root site=./examples/site)\n\n${USAGE}`);
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    if ((SWITCHES as readonly string[]).includes(flag)) {
      if (eq > 0) throw new ConfigError(`${flag} takes no value`);
      given.set(flag, [...(given.get(flag) ?? []), ""]);
      continue;
    }
    if (!arg.startsWith("--") && FLAG_NAMES.includes(flag.replace(/^-+/, ""))) {
      // `-http 8080`: a known name with one dash ("unknown flags " and no name, before)
      throw new ConfigError(`${flag}: a flag takes two dashes: --${flag.replace(/^-+/, "")}\n\n${USAGE}`);
    }
    if (!(VALUE_FLAGS as readonly string[]).includes(flag)) {
      unknown.push(flag.replace(/^-+/, ""));
      // Its value, most likely: it is not a stray argument of its own.
      if (eq < 0 && argv[i + 1] !== undefined && !argv[i + 1]!.startsWith("-")) i++;
      continue;
    }
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value === "") throw new ConfigError(`${flag} needs a value\n\n${USAGE}`);
    if (flag === "--root" || flag === "--config") rootArgs.push(flag, value);
    else given.set(flag, [...(given.get(flag) ?? []), value]);
  }
  if (unknown.length > 0) {
    throw new ConfigError(`${unknownNamesText(unknownNames(unknown, FLAG_NAMES), "flag", FLAG_NAMES, (n) => `--${n}`)}\n\n${USAGE}`);
  }
  const one = (flag: string): string | null => {
    const values = given.get(flag);
    if (values === undefined) return null;
    if (values.length > 1 && flag !== "--allow-origin" && flag !== "--group") throw new ConfigError(`${flag} is given ${values.length} times; give it once`);
    return values[0]!;
  };
  const roots = loadRoots(rootArgs, cwd, { allowNone: true });
  if (roots === "help") return "help";
  const groups = loadGroups(given.get("--group") ?? [], roots);
  const cacheBytes = sizeFlag("--cache-bytes", one("--cache-bytes"), DEFAULT_CACHE_BYTES);
  const queueLength = countFlag("--queue-length", one("--queue-length"), DEFAULT_QUEUE_LENGTH, 1, 100_000);
  const http = one("--http");
  const socket = one("--socket");
  if (http === null && socket === null) {
    const misplaced = HTTP_ONLY.find((flag) => given.has(flag));
    if (misplaced !== undefined) throw new ConfigError(`${misplaced} applies to --http and --socket only\n\n${USAGE}`);
    return { roots, groups, http: null, cacheBytes, queueLength };
  }
  if (http !== null && socket !== null) throw new ConfigError("--http and --socket: choose one (a TCP port or a Unix socket)");
  if (roots.length === 0) {
    throw new ConfigError(
      `${http !== null ? "--http" : "--socket"} needs --root or --config: over HTTP the server serves only the roots you configure, never roots a client declares (any local process that can connect could declare file:/// and edit the whole machine)\n\n${USAGE}`,
    );
  }
  const listen: Listen = http !== null ? { kind: "tcp", ...hostPort(http) } : { kind: "socket", path: checkSocketPath(resolve(cwd, socket!)) };
  const noAuth = given.has("--no-auth");
  const tokenFile = one("--token-file");
  const envToken = env[TOKEN_ENV];
  if (noAuth && (tokenFile !== null || envToken)) {
    throw new ConfigError(`--no-auth and ${tokenFile !== null ? "--token-file" : `${TOKEN_ENV} (set in the environment)`} contradict each other; drop one`);
  }
  let auth: HttpAuth;
  if (noAuth) {
    if (listen.kind === "tcp" && !isLoopback(listen.host)) {
      throw new ConfigError(`--no-auth with --http ${http}: ${listen.host} is not a loopback address, and anyone who reaches it could edit the roots; use a token (the default) instead`);
    }
    auth = { kind: "none", reason: "no-auth" };
  } else if (tokenFile !== null) {
    auth = { kind: "token", bearer: tokenFromFile(resolve(cwd, tokenFile)) };
  } else if (envToken) {
    auth = { kind: "token", bearer: tokenFromEnvironment(envToken) };
  } else if (listen.kind === "socket") {
    auth = { kind: "none", reason: "socket" };
  } else {
    auth = { kind: "token", bearer: { token: newToken(), origin: "generated", file: null } };
  }
  const maxSessions = countFlag("--max-sessions", one("--max-sessions"), DEFAULT_MAX_SESSIONS, 1, 10_000);
  const replayBytes = sizeFlag("--replay-bytes", one("--replay-bytes"), DEFAULT_REPLAY_BYTES);
  return { roots, groups, http: { listen, auth, allowedOrigins: (given.get("--allow-origin") ?? []).map(originOf), maxSessions, replayBytes }, cacheBytes, queueLength };
}

function hostPort(value: string): { host: string; port: number } {
  const m = /^(?:(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(value);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port < 0 || port > 65535) {
    throw new ConfigError(`--http ${JSON.stringify(value)}: write --http PORT or --http HOST:PORT (e.g. --http 8080, --http 127.0.0.1:8080, --http [::1]:8080)`);
  }
  return { host: (m[1] ?? "127.0.0.1").replace(/^\[|\]$/g, ""), port };
}

function originOf(value: string): string {
  try {
    const url = new URL(value);
    if ((url.protocol === "http:" || url.protocol === "https:") && url.pathname === "/" && !url.search) return url.origin;
  } catch {
    // reported below
  }
  throw new ConfigError(`--allow-origin ${JSON.stringify(value)}: give an origin like https://app.example or http://localhost:5173`);
}

function countFlag(flag: string, value: string | null, fallback: number, min: number, max: number): number {
  if (value === null) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) throw new ConfigError(`${flag} ${JSON.stringify(value)}: a whole number from ${min} to ${max}`);
  return n;
}

function sizeFlag(flag: string, value: string | null, fallback: number): number {
  if (value === null) return fallback;
  const m = /^(\d+)([KMG]?)$/i.exec(value);
  const n = m ? Number(m[1]) * 1024 ** " KMG".indexOf((m[2] || " ").toUpperCase()) : NaN;
  if (!Number.isSafeInteger(n)) throw new ConfigError(`${flag} ${JSON.stringify(value)}: a number of bytes, optionally with K, M or G (KiB, MiB, GiB), e.g. 64M`);
  return n;
}
