/**
 * The example server's command line: the roots (roots.ts) and the
 * transport — stdio by default, or Streamable HTTP with `--http`.
 *
 * HTTP decisions (the issue is silent on them):
 * - `--http PORT` binds 127.0.0.1; `--http HOST:PORT` (IPv6 as
 *   `[::1]:PORT`) binds HOST. A HOST that is not a loopback address needs a
 *   bearer token (`--token-file` or `SAP_MCP_TOKEN`): anyone who can reach
 *   the port could otherwise edit the roots.
 * - The token file must not be readable by group or others (like an SSH
 *   key), and holds one line of at least 16 characters.
 *
 * @module
 */
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { ConfigError, loadRoots, USAGE } from "./roots.ts";
import type { RootConfig } from "./roots.ts";

/** Where the HTTP transport listens, and who may talk to it. */
export interface HttpSettings {
  host: string;
  port: number;
  /** Required as `Authorization: Bearer <token>` when set. */
  token: string | null;
  /** Browser origins allowed besides http(s)://localhost, 127.0.0.1 and [::1] (any port). */
  allowedOrigins: string[];
}

/** The parsed command line. */
export interface ServerArgs {
  roots: RootConfig[];
  http: HttpSettings | null;
}

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
 * ConfigError for anything wrong.
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
  const rest: string[] = [];
  let http: string | null = null;
  let tokenFile: string | null = null;
  const origins: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    if (flag !== "--http" && flag !== "--token-file" && flag !== "--allow-origin") {
      rest.push(arg);
      continue;
    }
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value === "") throw new ConfigError(`${flag} needs a value\n\n${USAGE}`);
    if (flag === "--http") http = value;
    else if (flag === "--token-file") tokenFile = resolve(cwd, value);
    else origins.push(originOf(value));
  }
  const roots = loadRoots(rest, cwd, { allowNone: true });
  if (roots === "help") return "help";
  if (http === null) {
    if (tokenFile !== null || origins.length > 0) throw new ConfigError(`--token-file and --allow-origin apply to --http only\n\n${USAGE}`);
    return { roots, http: null };
  }
  const { host, port } = hostPort(http);
  const token = tokenFile !== null ? readToken(tokenFile) : env.SAP_MCP_TOKEN ? checkToken(env.SAP_MCP_TOKEN, "SAP_MCP_TOKEN") : null;
  if (token === null && !isLoopback(host)) {
    throw new ConfigError(
      `--http ${http}: listening on ${host}, which is not a loopback address, needs a bearer token: anyone who reaches the port could edit the roots. Give --token-file FILE (one line, mode 0600) or set SAP_MCP_TOKEN.`,
    );
  }
  return { roots, http: { host, port, token, allowedOrigins: origins } };
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

function readToken(file: string): string {
  let text: string;
  try {
    if ((statSync(file).mode & 0o077) !== 0) throw new ConfigError(`--token-file ${file}: group or others can read it; chmod 600 it`);
    text = readFileSync(file, "utf8");
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`--token-file ${file}: cannot read it (${(error as Error).message})`);
  }
  return checkToken(text.trim(), `--token-file ${file}`);
}

function checkToken(token: string, where: string): string {
  if (token.length < 16 || /[\s\u0000-\u001f\u007f]/.test(token)) {
    throw new ConfigError(`${where}: the token must be one line of at least 16 characters without spaces`);
  }
  return token;
}
