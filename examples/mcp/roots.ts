/**
 * Roots of the example MCP server: where the model may read and patch,
 * chosen by the operator (flags or a JSON config file) — or, when none is
 * configured, the folders the user's MCP client shares (client_roots.ts) —
 * never by the model.
 *
 * ```
 * --root NAME=LOCATION[?OPTION=VALUE&...]     (repeatable)
 * --config PATH.json
 * ```
 *
 * LOCATION is `ssh://[user@]host[:port]/absolute/path` (host may be an
 * ~/.ssh/config alias) or a local directory (resolved to an absolute path at
 * startup; it must exist). On the command line, per-root options follow a
 * `?` as in a URL query (`?matching=exact&sudo=1&maxFileBytes=1000000`;
 * quote the argument in a shell), so a location given as a flag cannot
 * contain `?` — put such a root in the config file, where options are
 * fields:
 *
 * ```json
 * { "roots": {
 *     "site": "./examples/site",
 *     "app": { "location": "ssh://deploy@web1:2222/srv/app", "matching": "exact",
 *              "requireShaForDelete": true, "knownHostsFile": "~/.ssh/known_hosts" } } }
 * ```
 *
 * Relative paths in the config file (local roots, key and known_hosts files)
 * are relative to the file's directory; on the command line, to the working
 * directory. A leading `~/` means the home directory.
 *
 * @module
 */
import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, posix, resolve } from "node:path";
import { z } from "zod";
import { parseSshDestination, unknownNames, unknownNamesText } from "../../mod.ts";
import { strictObject, strictRecord } from "./strict.ts";
import type { SshDestination } from "../../mod.ts";

/** Per-root options: the same names in the config file and in a flag's `?query`. */
export type RootOptions = {
  /** Where the tier ladder stops (SPEC §5.2); default lenient. */
  matching?: "exact" | "whitespace" | "lenient";
  /** A Delete must carry expected_sha256 for the file. */
  requireShaForDelete?: boolean;
  /** Create missing parent directories of added files (default true). */
  createParents?: boolean;
  /** Timeout of each remote program, in milliseconds. */
  timeoutMs?: number;
  limits?: { maxPatchBytes?: number; maxFiles?: number; maxChunksPerFile?: number; maxFileBytes?: number };
  /**
   * Directories of this root (or above it) that other users can write:
   * `refuse` (default: `unsafe_directory`) or `allow` (accept the risk; see
   * docs/security.md's threat model). Only the operator can set it.
   */
  sharedDirectories?: "refuse" | "allow";
  /**
   * Accept a root below a directory other users can write (refused
   * otherwise, under every sharedDirectories policy; needs
   * `sharedDirectories: "allow"`). Only the operator can set it.
   */
  trustRootAncestors?: boolean;
  /** SSH roots: run the programs through `sudo -n` (passwordless sudo). */
  sudo?: boolean;
  /**
   * SSH roots: run the programs through `sudo -S` with the password read
   * from this environment variable of the server, on each sudo check (it
   * reaches sudo only on stdin; never in a config file, argv or a log).
   * Implies `sudo`. Checked at startup: the variable must be set.
   */
  sudoPasswordEnv?: string;
  hostKeyPolicy?: "strict" | "accept-new" | "insecure-accept-any";
  knownHostsFile?: string;
  identityFile?: string;
  /** An ssh_config file, or `false` to ignore ~/.ssh/config. */
  sshConfigFile?: string | false;
  /** Jump hosts `[user@]host[:port],…` (overrides ssh_config ProxyJump). */
  proxyJump?: string;
};

const positive = z.number().int().positive();
/** A config-file object whose unknown keys are named with the closest known one. */
function strictOptions<T extends z.ZodRawShape>(shape: T): z.ZodObject<T, z.core.$strict> {
  return strictObject(shape, "option");
}

const rootOptionsShape = {
  matching: z.enum(["exact", "whitespace", "lenient"]).optional(),
  requireShaForDelete: z.boolean().optional(),
  createParents: z.boolean().optional(),
  timeoutMs: positive.optional(),
  limits: strictOptions({
    maxPatchBytes: positive.optional(),
    maxFiles: positive.optional(),
    maxChunksPerFile: positive.optional(),
    maxFileBytes: positive.optional(),
  }).optional(),
  sharedDirectories: z.enum(["refuse", "allow"]).optional(),
  trustRootAncestors: z.boolean().optional(),
  sudo: z.boolean().optional(),
  sudoPasswordEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name").optional(),
  hostKeyPolicy: z.enum(["strict", "accept-new", "insecure-accept-any"]).optional(),
  knownHostsFile: z.string().min(1).optional(),
  identityFile: z.string().min(1).optional(),
  sshConfigFile: z.union([z.string().min(1), z.literal(false)]).optional(),
  proxyJump: z.string().min(1).optional(),
};
const rootOptionsSchema = strictOptions(rootOptionsShape);

const ROOT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const NAME_RULE = "a root NAME is letters, digits, '.', '_' or '-' (at most 64, starting with a letter or digit)";

const configFileSchema = z.strictObject({
  roots: strictRecord(
    z.string(),
    z.preprocess(
      (entry) => (typeof entry === "string" ? { location: entry } : entry),
      strictOptions({ ...rootOptionsShape, location: z.string().min(1) }),
    ),
    "roots",
  ),
});

/** One configured root, resolved. */
export interface RootConfig {
  /** The name the model passes as `root`. */
  name: string;
  kind: "local" | "ssh";
  /** Absolute directory on the target host. */
  path: string;
  /** The SSH destination (ssh roots). */
  ssh?: SshDestination;
  options: RootOptions;
  /** `ssh://user@host:port/path` or the local path, for messages and logs. */
  label: string;
}

/**
 * A configuration problem: the message says what is wrong and how to write it.
 *
 * @example
 * ```ts
 * try { loadRoots(["--root", "x"]); } catch (e) { if (e instanceof ConfigError) console.error(e.message); }
 * ```
 */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * How the user runs the server: `ssh-apply-patch-mcp` through the bin of the
 * npm package `ssh-apply-patch-mcp`, otherwise the example's source path.
 */
const PROGRAM = /(?:^|[\\/])ssh-apply-patch-mcp(?:\.js)?$/.test(process.argv[1] ?? "") ? "ssh-apply-patch-mcp" : "bun examples/mcp_server.ts";

/** How to start the server (printed by --help and with configuration errors). */
export const USAGE: string = `usage: ${PROGRAM} [--root NAME=LOCATION[?OPTIONS]]... [--config FILE.json] [--group NAME=ROOT,ROOT...]... [--cache-bytes N] [--queue-length N]
         [--http [HOST:]PORT | --socket PATH] [--token-file FILE | --no-auth] [--allow-origin ORIGIN]... [--max-sessions N] [--replay-bytes N]

  (no --root)                                      stdio only: serve the local folders the MCP client offers (roots/list)
  --root site=./examples/site                      a local directory (must exist)
  --root app=ssh://deploy@web1:2222/srv/app        a directory on an SSH host (host may be an ~/.ssh/config alias)
  --root 'app=ssh://web1/srv/app?matching=exact&sudo=1&requireShaForDelete=1'   (quote it: & and ? are special to shells)
  --config roots.json                              {"roots": {"NAME": "LOCATION" | {"location": "LOCATION", ...options}}}
  --group web=web1,web2,web3                       a host group of configured roots for apply_patch_fleet (repeatable;
                                                   the first root is the canary)
  --cache-bytes 128M                               file contents cached for all sessions together (default 128M; 0: none)
  --queue-length 128                               applies to one file wait for each other in a queue of this length (all sessions;
                                                   past it: locked with queue.retry_after_ms); the wait is the root's timeoutMs, else 45 s

  --http 8080 | --http 127.0.0.1:8080             Streamable HTTP at http://HOST:PORT/mcp instead of stdio (default host 127.0.0.1);
                                                   needs --root or --config. Clients must send "Authorization: Bearer <token>":
                                                   a new token is written to a private file whose path is printed at start
  --socket PATH                                    Streamable HTTP on a Unix socket made 0600 (in a directory only you can write);
                                                   no token unless --token-file or SAP_MCP_TOKEN gives one
  --token-file FILE                                the token is this file's content (mode 0600; created with a new token if missing);
                                                   or set SAP_MCP_TOKEN
  --no-auth                                        no token (loopback only; any local process can then use the server;
                                                   on --socket it changes nothing: the 0600 mode is the guard)
  --allow-origin https://app.example               a browser Origin allowed besides localhost ones (repeatable)
  --max-sessions 64                                sessions open at once: the oldest idle one is closed for a new one; all busy: 503
  --replay-bytes 16M                               SSE events kept so a client can resume a stream (Last-Event-ID), all sessions

options: matching=exact|whitespace|lenient, requireShaForDelete, createParents, sudo (booleans: 1/0, true/false),
  sudoPasswordEnv=VAR (sudo -S, the password read from the server's environment variable VAR; implies sudo),
  sharedDirectories=refuse|allow (directories other users can write: refused unless allowed),
  trustRootAncestors (accept a root whose parent directories other users can write; needs sharedDirectories=allow),
  timeoutMs, maxPatchBytes, maxFiles, maxChunksPerFile, maxFileBytes, hostKeyPolicy=strict|accept-new|insecure-accept-any,
  knownHostsFile, identityFile, sshConfigFile (a path, or none), proxyJump`;

const LIMIT_KEYS = ["maxPatchBytes", "maxFiles", "maxChunksPerFile", "maxFileBytes"] as const;
const BOOLEAN_KEYS = ["requireShaForDelete", "createParents", "sudo", "trustRootAncestors"] as const;
const SSH_ONLY_KEYS = ["sudo", "sudoPasswordEnv", "hostKeyPolicy", "knownHostsFile", "identityFile", "sshConfigFile", "proxyJump"] as const;
const QUERY_KEYS = [
  "matching",
  "sharedDirectories",
  "sudoPasswordEnv",
  "hostKeyPolicy",
  "knownHostsFile",
  "identityFile",
  "sshConfigFile",
  "proxyJump",
  "timeoutMs",
  ...BOOLEAN_KEYS,
  ...LIMIT_KEYS,
];

/**
 * The roots named by command-line arguments (`--root`, `--config`), or
 * `"help"` for `--help`. Throws {@linkcode ConfigError} for anything wrong.
 *
 * @example
 * ```ts
 * const roots = loadRoots(["--root", "site=./examples/site"]);
 * ```
 */
export function loadRoots(argv: readonly string[], cwd: string = process.cwd(), options: { allowNone?: boolean } = {}): RootConfig[] | "help" {
  const roots: RootConfig[] = [];
  const add = (root: RootConfig): void => {
    if (roots.some((r) => r.name === root.name)) throw new ConfigError(`root "${root.name}" is configured twice; give each root its own name`);
    roots.push(root);
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "-h" || arg === "--help") return "help";
    const [flag, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    if (flag !== "--root" && flag !== "--config") throw new ConfigError(`unknown argument ${JSON.stringify(arg)}\n\n${USAGE}`);
    const value = inline ?? argv[++i];
    if (value === undefined || value === "") throw new ConfigError(`${flag} needs a value\n\n${USAGE}`);
    if (flag === "--root") add(rootFromFlag(value, cwd));
    else for (const root of rootsFromFile(resolve(cwd, expandHome(value)))) add(root);
  }
  if (roots.length === 0 && !options.allowNone) throw new ConfigError(`no roots configured: name at least one directory the tools may edit\n\n${USAGE}`);
  return roots;
}

/** `NAME=LOCATION[?a=b&c=d]` from the command line. */
function rootFromFlag(value: string, cwd: string): RootConfig {
  const eq = value.indexOf("=");
  const name = eq > 0 ? value.slice(0, eq) : "";
  if (!ROOT_NAME.test(name)) {
    throw new ConfigError(`--root ${JSON.stringify(value)}: write --root NAME=LOCATION, ${NAME_RULE} (e.g. --root site=./examples/site)`);
  }
  const spec = value.slice(eq + 1);
  const q = spec.indexOf("?");
  const location = q < 0 ? spec : spec.slice(0, q);
  const options = q < 0 ? {} : queryOptions(name, spec.slice(q + 1));
  return resolveRoot(name, location, validate<RootOptions>(`--root ${name}`, rootOptionsSchema, options), cwd);
}

function queryOptions(name: string, query: string): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  const limits: Record<string, unknown> = {};
  const seen = new Set<string>();
  for (const [key, raw] of new URLSearchParams(query)) {
    if (!QUERY_KEYS.includes(key)) {
      throw new ConfigError(`--root ${name}: ${unknownNamesText(unknownNames([key], QUERY_KEYS), "option", QUERY_KEYS)}`);
    }
    // The last one won without a word (`?matching=exact&matching=lenient` served lenient).
    if (seen.has(key)) throw new ConfigError(`--root ${name}: option \`${key}\` is given twice; give it once`);
    seen.add(key);
    let value: unknown = raw;
    if ((BOOLEAN_KEYS as readonly string[]).includes(key)) {
      value = /^(1|true|yes)$/i.test(raw) ? true : /^(0|false|no)$/i.test(raw) ? false : raw;
    } else if (key === "timeoutMs" || (LIMIT_KEYS as readonly string[]).includes(key)) {
      value = /^\d+$/.test(raw) ? Number(raw) : raw;
    } else if (key === "sshConfigFile" && /^(none|false)$/i.test(raw)) {
      value = false;
    }
    if ((LIMIT_KEYS as readonly string[]).includes(key)) limits[key] = value;
    else options[key] = value;
  }
  if (Object.keys(limits).length > 0) options.limits = limits;
  return options;
}

function rootsFromFile(file: string): RootConfig[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(`--config ${file}: cannot read it (${(error as Error).message})`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`--config ${file}: not valid JSON (${(error as Error).message})`);
  }
  const config = validate(`--config ${file}`, configFileSchema, data);
  const base = dirname(file);
  return Object.entries(config.roots).map(([name, { location, ...options }]) => {
    if (!ROOT_NAME.test(name)) throw new ConfigError(`--config ${file}: root name ${JSON.stringify(name)}: ${NAME_RULE}`);
    return resolveRoot(name, location, options, base);
  });
}

function validate<T>(where: string, schema: z.ZodType<T>, data: unknown): T {
  const parsed = schema.safeParse(data);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `  ${issue.path.join(".") || "(top level)"}: ${issue.message}`);
  throw new ConfigError(`${where}: invalid configuration\n${problems.join("\n")}\n\n${USAGE}`);
}

function expandHome(path: string): string {
  return path === "~" || path.startsWith("~/") ? homedir() + path.slice(1) : path;
}

/** Turn a location into a root; file options become absolute paths. */
function resolveRoot(name: string, location: string, options: RootOptions, base: string): RootConfig {
  const file = (path: string | undefined): string | undefined => (path === undefined ? undefined : resolve(base, expandHome(path)));
  const resolved: RootOptions = {
    ...options,
    ...(options.knownHostsFile !== undefined ? { knownHostsFile: file(options.knownHostsFile) } : {}),
    ...(options.identityFile !== undefined ? { identityFile: file(options.identityFile) } : {}),
    ...(typeof options.sshConfigFile === "string" ? { sshConfigFile: file(options.sshConfigFile) } : {}),
  };
  if (/[\u0000-\u001f\u007f]/.test(location)) throw new ConfigError(`root "${name}": the location contains control characters`);
  if (location.startsWith("ssh://")) {
    const rest = location.slice("ssh://".length);
    const slash = rest.indexOf("/");
    const destination = slash < 0 ? null : parseSshDestination(rest.slice(0, slash));
    if (destination === null) {
      throw new ConfigError(`root "${name}": ${JSON.stringify(location)} is not ssh://[user@]host[:port]/absolute/path (e.g. ssh://deploy@web1:2222/srv/app)`);
    }
    const path = posix.normalize(rest.slice(slash)).replace(/(.)\/+$/, "$1");
    const passwordEnv = options.sudoPasswordEnv;
    if (passwordEnv !== undefined && !process.env[passwordEnv]) {
      throw new ConfigError(`root "${name}": sudoPasswordEnv ${passwordEnv}: that environment variable is not set (export it in the server's environment)`);
    }
    if (passwordEnv !== undefined && options.sudo === false) {
      throw new ConfigError(`root "${name}": sudoPasswordEnv means sudo; drop sudo=false (or sudoPasswordEnv)`);
    }
    return { name, kind: "ssh", path, ssh: destination, options: resolved, label: `ssh://${rest.slice(0, slash)}${path}` };
  }
  const path = resolve(base, expandHome(location));
  let isDirectory = false;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    // reported below
  }
  if (!isDirectory) {
    const hint = /^[^/]*@[^/]*:/.test(location) ? " For an SSH root write ssh://user@host[:port]/absolute/path." : "";
    throw new ConfigError(`root "${name}": the local directory ${path} does not exist (or is not a directory).${hint}`);
  }
  const sshOnly = SSH_ONLY_KEYS.filter((key) => options[key] !== undefined);
  if (sshOnly.length > 0) throw new ConfigError(`root "${name}" is a local directory: ${sshOnly.join(", ")} ${sshOnly.length === 1 ? "applies" : "apply"} to ssh:// roots only`);
  return { name, kind: "local", path, options: resolved, label: path };
}
