/**
 * Resolve a host alias through OpenSSH client configuration text
 * (`~/.ssh/config`), without ever executing anything (SPEC §8).
 *
 * Semantics follow `ssh_config(5)`: keywords are case-insensitive, the first
 * obtained value of a keyword wins (except `IdentityFile`, which accumulates),
 * `Host` patterns match the alias typed by the user, `Include` is resolved
 * relative to `~/.ssh` with globs. `Match` is evaluated only for `all`,
 * `host`, `originalhost`, `user`, `localuser` (each optionally negated with
 * `!`). Every other criterion — notably `Match exec`, which would run a
 * command — is treated as NOT matching and reported in `warnings`: this
 * resolver is a pure function over text and a file-reading callback and
 * cannot run a program. `ProxyCommand` is likewise reported and ignored.
 *
 * @module
 */
import { matchWildcard } from "./known_hosts.ts";
import { parseSshDestination } from "./destination.ts";
import type { SshDestination } from "./destination.ts";

export type { SshDestination } from "./destination.ts";

/** Where the resolver reads files (so it stays pure and testable). */
export interface SshConfigSource {
  /** The text of a file, or `undefined` when it does not exist / is unreadable. */
  readFile(path: string): string | undefined;
  /** Entry names of a directory (for `Include` globs), or `undefined`. */
  listDir?(path: string): string[] | undefined;
  /** The local home directory (for `~` and relative `Include`). */
  homeDir: string;
  /** The local user name (`%u`, `Match localuser`, default remote user). */
  localUser?: string;
}

/** What the configuration says about one alias. */
export interface ResolvedSshHost {
  /** The name the user typed. */
  alias: string;
  /** The host to connect to (`HostName`, `%h` expanded), else the alias. */
  hostName: string;
  user?: string;
  port?: number;
  /** `IdentityFile` values in order, `~` and `%` tokens expanded. */
  identityFiles: string[];
  identitiesOnly?: boolean;
  /** `IdentityAgent` (a socket path, or `none`). */
  identityAgent?: string;
  /** `ProxyJump` hops in connection order; `[]` for none or `ProxyJump none`. */
  proxyJump: SshDestination[];
  /** `UserKnownHostsFile` values (`~` expanded); empty when unset. */
  userKnownHostsFiles: string[];
  /** `ConnectTimeout`, in milliseconds. */
  connectTimeoutMs?: number;
  /** `ServerAliveInterval`, in milliseconds. */
  serverAliveIntervalMs?: number;
  /** `HostKeyAlias`: the name known_hosts lookups use instead of `hostName:port`. */
  hostKeyAlias?: string;
  /** Things that were not applied (Match exec, ProxyCommand, bad Include…). */
  warnings: string[];
}

/**
 * Keywords that matter for trust or that would run something, which this
 * resolver does not apply: each present one is reported, never silently lost.
 */
const NOT_APPLIED: Record<string, string> = {
  stricthostkeychecking: "StrictHostKeyChecking is not read; the hostKeyPolicy option decides (default strict)",
  knownhostscommand: "KnownHostsCommand is not supported (it would run a program); ignored",
  localcommand: "LocalCommand is never run",
  remotecommand: "RemoteCommand is ignored (the library sends its own programs)",
  certificatefile: "CertificateFile is not supported (no user certificates); plain keys are offered",
  globalknownhostsfile: "GlobalKnownHostsFile is not read; /etc/ssh/ssh_known_hosts(2) are",
  hostkeyalgorithms: "HostKeyAlgorithms is not read; the key types known_hosts lists for the host are offered",
};

/** OpenSSH's limit on nested `Include`s. */
const MAX_INCLUDE_DEPTH = 16;

interface ResolveState {
  alias: string;
  source: SshConfigSource;
  values: Map<string, string[]>;
  identityFiles: string[];
  warnings: string[];
}

/**
 * Resolve `alias` through the configuration file at `configPath`.
 * A missing file resolves to the alias itself with no settings.
 *
 * @example
 * ```ts
 * const resolved = resolveSshConfig("web", "/home/me/.ssh/config", {
 *   homeDir: "/home/me",
 *   readFile: (p) => (p === "/home/me/.ssh/config" ? "Host web\n  HostName 10.0.0.5\n  User deploy\n" : undefined),
 * });
 * resolved.hostName; // "10.0.0.5"
 * ```
 */
export function resolveSshConfig(alias: string, configPath: string, source: SshConfigSource): ResolvedSshHost {
  const state: ResolveState = { alias, source, values: new Map(), identityFiles: [], warnings: [] };
  const text = source.readFile(configPath);
  if (text !== undefined) processText(state, text, configPath, true, 0);

  const first = (key: string): string | undefined => state.values.get(key)?.[0];
  const hostName = expandTokens(first("hostname") ?? alias, { h: alias }, state);
  const user = first("user");
  const portText = first("port");
  let port: number | undefined;
  if (portText !== undefined) {
    port = Number(portText);
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      state.warnings.push(`Port ${portText} is not a valid port; using the default`);
      port = undefined;
    }
  }
  const tokens: Record<string, string> = {
    h: hostName,
    n: alias,
    p: String(port ?? 22),
    r: user ?? source.localUser ?? "",
    u: source.localUser ?? "",
    d: source.homeDir,
  };
  const resolved: ResolvedSshHost = {
    alias,
    hostName,
    identityFiles: state.identityFiles.map((f) => expandHome(expandTokens(f, tokens, state), source.homeDir)),
    proxyJump: [],
    userKnownHostsFiles: (state.values.get("userknownhostsfile") ?? [])
      .filter((f) => f.toLowerCase() !== "none")
      .map((f) => expandHome(expandTokens(f, tokens, state), source.homeDir)),
    warnings: state.warnings,
  };
  if (user !== undefined) resolved.user = user;
  if (port !== undefined) resolved.port = port;
  const identitiesOnly = first("identitiesonly");
  if (identitiesOnly !== undefined) resolved.identitiesOnly = isYes(identitiesOnly);
  const agent = first("identityagent");
  if (agent !== undefined) resolved.identityAgent = agent === "none" ? "none" : expandHome(agent, source.homeDir);
  const jump = first("proxyjump");
  if (jump !== undefined && jump.toLowerCase() !== "none") {
    for (const hop of jump.split(",")) {
      const parsed = parseSshDestination(hop.trim());
      if (parsed === null) state.warnings.push(`ProxyJump hop "${hop}" is not [user@]host[:port]; ignored`);
      else resolved.proxyJump.push(parsed);
    }
  }
  const timeout = seconds(first("connecttimeout"));
  if (timeout !== undefined) resolved.connectTimeoutMs = timeout;
  const alive = seconds(first("serveraliveinterval"));
  if (alive !== undefined) resolved.serverAliveIntervalMs = alive;
  const hostKeyAlias = first("hostkeyalias");
  if (hostKeyAlias !== undefined) resolved.hostKeyAlias = hostKeyAlias.toLowerCase();
  for (const [keyword, note] of Object.entries(NOT_APPLIED)) {
    if (state.values.has(keyword)) state.warnings.push(note);
  }
  if (first("proxycommand") !== undefined && first("proxycommand")!.toLowerCase() !== "none") {
    state.warnings.push(
      jump === undefined
        ? "ProxyCommand is not supported (it would run a program); connecting directly. Use ProxyJump instead."
        : "ProxyCommand is not supported (it would run a program); ignored.",
    );
  }
  return resolved;
}

function processText(state: ResolveState, text: string, path: string, initiallyActive: boolean, depth: number): void {
  let active = initiallyActive;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const words = splitConfigLine(lines[i]!);
    if (words === null) {
      state.warnings.push(`${path}:${i + 1}: unbalanced quotes; line ignored`);
      continue;
    }
    if (words.length === 0) continue;
    const keyword = words[0]!.toLowerCase();
    const args = words.slice(1);
    if (keyword === "host") {
      active = hostMatches(args, state.alias);
      continue;
    }
    if (keyword === "match") {
      active = matchMatches(args, state, `${path}:${i + 1}`);
      continue;
    }
    if (!active) continue;
    if (keyword === "include") {
      for (const pattern of args) includeFiles(state, pattern, depth, `${path}:${i + 1}`);
      continue;
    }
    if (args.length === 0) {
      state.warnings.push(`${path}:${i + 1}: ${words[0]} has no value; ignored`);
      continue;
    }
    if (keyword === "identityfile") {
      state.identityFiles.push(args[0]!);
      continue;
    }
    // First obtained value wins (ssh_config(5)); keep all args of that line.
    if (!state.values.has(keyword)) state.values.set(keyword, args);
  }
}

function includeFiles(state: ResolveState, pattern: string, depth: number, where: string): void {
  if (depth + 1 > MAX_INCLUDE_DEPTH) {
    state.warnings.push(`${where}: Include nested deeper than ${MAX_INCLUDE_DEPTH}; ignored`);
    return;
  }
  const expanded = expandHome(pattern, state.source.homeDir);
  const absolute = expanded.startsWith("/") ? expanded : `${state.source.homeDir}/.ssh/${expanded}`;
  const files = /[*?[]/.test(absolute) ? globPaths(absolute, state.source) : [absolute];
  for (const file of files) {
    const text = state.source.readFile(file);
    if (text === undefined) {
      if (!/[*?[]/.test(absolute)) state.warnings.push(`${where}: Include ${file} cannot be read; ignored`);
      continue;
    }
    // An included file starts active (it is only read inside an active
    // block); its own Host/Match lines do not leak out of it.
    processText(state, text, file, true, depth + 1);
  }
}

/** Expand a glob with `*`/`?` in any component, in sorted order (as glob(3)). */
function globPaths(pattern: string, source: SshConfigSource): string[] {
  const parts = pattern.split("/").filter((p) => p !== "");
  let bases = [""];
  for (const part of parts) {
    const next: string[] = [];
    for (const base of bases) {
      if (!/[*?]/.test(part)) {
        next.push(`${base}/${part}`);
        continue;
      }
      const names = source.listDir?.(base === "" ? "/" : base) ?? [];
      for (const name of [...names].sort()) {
        if (name.startsWith(".") && !part.startsWith(".")) continue;
        if (matchWildcard(part, name)) next.push(`${base}/${name}`);
      }
    }
    bases = next;
  }
  return bases;
}

function hostMatches(patterns: string[], alias: string): boolean {
  return patternListMatches(patterns.flatMap((p) => p.split(",")), alias.toLowerCase());
}

/** OpenSSH `match_pattern_list`: any positive match and no negated match. */
function patternListMatches(patterns: string[], value: string): boolean {
  let matched = false;
  for (const raw of patterns) {
    const pattern = raw.toLowerCase();
    if (pattern.startsWith("!")) {
      if (matchWildcard(pattern.slice(1), value)) return false;
    } else if (matchWildcard(pattern, value)) {
      matched = true;
    }
  }
  return matched;
}

function matchMatches(args: string[], state: ResolveState, where: string): boolean {
  if (args.length === 0) {
    state.warnings.push(`${where}: Match without criteria; block ignored`);
    return false;
  }
  let result = true;
  for (let i = 0; i < args.length; i++) {
    let criterion = args[i]!.toLowerCase();
    const negated = criterion.startsWith("!");
    if (negated) criterion = criterion.slice(1);
    if (criterion === "all") continue;
    const value = args[i + 1];
    if (value === undefined) {
      state.warnings.push(`${where}: Match ${criterion} needs an argument; block ignored`);
      return false;
    }
    i++;
    let matched: boolean;
    switch (criterion) {
      case "host": {
        const first = state.values.get("hostname")?.[0];
        const host = first === undefined ? state.alias : expandTokens(first, { h: state.alias }, state);
        matched = patternListMatches(value.split(","), host.toLowerCase());
        break;
      }
      case "originalhost":
        matched = patternListMatches(value.split(","), state.alias.toLowerCase());
        break;
      case "user": {
        const user = state.values.get("user")?.[0] ?? state.source.localUser ?? "";
        matched = patternListMatches(value.split(","), user.toLowerCase());
        break;
      }
      case "localuser":
        matched = patternListMatches(value.split(","), (state.source.localUser ?? "").toLowerCase());
        break;
      case "exec":
        // Never executed: evaluating it would run a program on this machine.
        state.warnings.push(
          `${where}: Match exec is never executed by this library; the block is treated as not matching`,
        );
        return false;
      default:
        state.warnings.push(`${where}: Match ${criterion} is not supported; the block is treated as not matching`);
        return false;
    }
    if (matched === negated) result = false;
  }
  return result;
}

/** Split a config line into words: `Key value`, `Key=value`, double quotes, `#` comments. */
function splitConfigLine(line: string): string[] | null {
  const words: string[] = [];
  let current = "";
  let inWord = false;
  let quoted = false;
  const text = line.replace(/\r$/, "").trim();
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"') quoted = false;
      else current += ch;
      continue;
    }
    if (ch === '"') {
      quoted = true;
      inWord = true;
    } else if (ch === "#" && !inWord) {
      break;
    } else if (ch === " " || ch === "\t" || (ch === "=" && words.length === 0)) {
      if (inWord) words.push(current);
      current = "";
      inWord = false;
    } else {
      current += ch;
      inWord = true;
    }
  }
  if (quoted) return null;
  if (inWord) words.push(current);
  return words;
}

function expandTokens(value: string, tokens: Record<string, string>, state: ResolveState): string {
  return value.replace(/%(.)/g, (whole, name: string) => {
    if (name === "%") return "%";
    const replacement = tokens[name];
    if (replacement === undefined) {
      state.warnings.push(`token ${whole} in "${value}" is not supported; left as is`);
      return whole;
    }
    return replacement;
  });
}

function expandHome(path: string, homeDir: string): string {
  if (path === "~") return homeDir;
  return path.startsWith("~/") ? `${homeDir}${path.slice(1)}` : path;
}

function isYes(value: string): boolean {
  return ["yes", "true"].includes(value.toLowerCase());
}

function seconds(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  const n = Number(value);
  return n > 0 ? n * 1000 : undefined;
}
