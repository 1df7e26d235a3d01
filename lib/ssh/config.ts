/**
 * Resolve a host alias through OpenSSH client configuration, without ever
 * executing anything (SPEC §8): the user file (`~/.ssh/config`), then the
 * system file (`/etc/ssh/ssh_config`) when the source names one, with
 * `Include`, `Host` and `Match` blocks, first-obtained-value-wins, tokens and
 * `${VAR}` as ssh_config(5) — each rule checked against the real client
 * (test/ssh/openssh_parity.test.ts compares with `ssh -G`).
 *
 * What OpenSSH refuses, this refuses too: the result's `errors` is then
 * non-empty (an unknown `%x` token, an unset `${VAR}`, a bad `Port`, too many
 * nested `Include`s, a malformed `ProxyJump`, …) and connectSsh fails instead
 * of connecting somewhere the configuration did not mean. `Match exec` is
 * never run; keywords that matter for trust but are not applied are listed
 * in `warnings`. `ProxyCommand` is resolved (tokens expanded) but only run by
 * connectSsh with `allowProxyCommand`.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import { ConfigFatal, readConfig } from "./config_reader.ts";
import type { ConfigDirective } from "./config_reader.ts";
import { expandConfigValue, expandTilde } from "./config_expand.ts";
import type { Environment, TokenValues } from "./config_expand.ts";
import { hostLineMatches, matchLineMatches } from "./config_match.ts";
import { parseSshDestination } from "./destination.ts";
import type { SshDestination } from "./destination.ts";

export type { SshDestination } from "./destination.ts";

/**
 * Where the resolver reads files and what it knows about this machine (so it stays testable).
 *
 * @example
 * ```ts
 * const source: SshConfigSource = { readFile: (p) => (existsSync(p) ? readFileSync(p, "utf8") : undefined), homeDir: homedir(), systemConfigPath: "/etc/ssh/ssh_config" };
 * resolveSshConfig("web1", `${homedir()}/.ssh/config`, source);
 * ```
 */
export interface SshConfigSource {
  /** The text of a file, or `undefined` when it does not exist / is unreadable. */
  readFile(path: string): string | undefined;
  /** Entry names of a directory (for `Include` globs), or `undefined`. */
  listDir?(path: string): string[] | undefined;
  /** The local home directory (`~`, `%d`, relative `Include`): OpenSSH uses the passwd entry's. */
  homeDir: string;
  /** The local user name (`%u`, `Match localuser`, default remote user). */
  localUser?: string;
  /** The system-wide file read after the user file (OpenSSH: `/etc/ssh/ssh_config`); none when unset. */
  systemConfigPath?: string;
  /** Variables for `${VAR}` and `IdentityAgent SSH_AUTH_SOCK`; default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** `%i`; default the process's uid. */
  uid?: number;
  /** `%l` (and `%L`, up to the first dot); default `os.hostname()`. */
  localHostName?: string;
  /** Home of another account, for `~user/`; unset: `~user` is an error. */
  homeOf?(user: string): string | undefined;
}

/**
 * Values given outside the configuration (as on ssh's command line): they win over it.
 *
 * @example
 * ```ts
 * resolveSshConfig("web1", configPath, source, { user: "deploy", port: 2222 } satisfies SshConfigGiven);
 * ```
 */
export interface SshConfigGiven {
  /** The remote user, as `ssh -l` / `user@`. */
  user?: string;
  /** The port, as `ssh -p`. */
  port?: number;
  /** Like `ssh -J`: a jump list or `none`, placed before every config line. */
  proxyJump?: string;
}

/**
 * What the configuration says about one alias.
 *
 * @example
 * ```ts
 * const host: ResolvedSshHost = resolveSshConfig("web1", `${homedir()}/.ssh/config`, source);
 * if (host.errors?.length) throw new Error(host.errors.join("; "));
 * console.log(host.hostName, host.port ?? 22, host.proxyJump.map((h) => h.host));
 * ```
 */
export interface ResolvedSshHost {
  /** The name the user typed. */
  alias: string;
  /** The host to connect to (`HostName`, `%h` expanded), else the alias; lowercased, as OpenSSH does. */
  hostName: string;
  /** `User`, unless given. */
  user?: string;
  /** `Port`, unless given. */
  port?: number;
  /** `IdentityFile` values in order, `~`, tokens and `${VAR}` expanded; `none` left out. */
  identityFiles: string[];
  /** True when any `IdentityFile` line applied (even `none`): OpenSSH's default identities are not used. */
  identityFilesConfigured?: boolean;
  /** `CertificateFile` values, expanded. */
  certificateFiles?: string[];
  /** `IdentitiesOnly`: offer agent keys only when they match a listed identity. */
  identitiesOnly?: boolean;
  /** `IdentityAgent`: a socket path, or `none` (also for `SSH_AUTH_SOCK` / `$VAR` when the variable is unset). */
  identityAgent?: string;
  /** `ProxyJump` hops in connection order; `[]` for none or `ProxyJump none`. */
  proxyJump: SshDestination[];
  /** `ProxyCommand` with `%h %n %p %r %%` expanded; unset for none (or when ProxyJump came first). */
  proxyCommand?: string;
  /** `UserKnownHostsFile` values (`~`, tokens, `${VAR}` expanded); empty when unset or `none`. */
  userKnownHostsFiles: string[];
  /** True for `UserKnownHostsFile none`: no user known_hosts file at all. */
  userKnownHostsNone?: boolean;
  /** `GlobalKnownHostsFile` values (`[]` for `none`); unset: OpenSSH's defaults. */
  globalKnownHostsFiles?: string[];
  /** `ConnectTimeout`, in milliseconds. */
  connectTimeoutMs?: number;
  /** `ServerAliveInterval`, in milliseconds (0: no keepalives). */
  serverAliveIntervalMs?: number;
  /** `ServerAliveCountMax`: unanswered keepalives before the connection is dropped. */
  serverAliveCountMax?: number;
  /** `HostKeyAlias`: the name known_hosts lookups use instead of `hostName:port`. */
  hostKeyAlias?: string;
  /** `PubkeyAuthentication`, `PasswordAuthentication`, `KbdInteractiveAuthentication`. */
  pubkeyAuthentication?: boolean;
  /** `PasswordAuthentication`. */
  passwordAuthentication?: boolean;
  /** `KbdInteractiveAuthentication`. */
  kbdInteractiveAuthentication?: boolean;
  /** Things that were not applied (Match exec, unsupported keywords…). */
  warnings: string[];
  /** What OpenSSH would refuse; connectSsh does not connect when this is non-empty. */
  errors?: string[];
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
  hostkeyalgorithms: "HostKeyAlgorithms is not read; the key types known_hosts lists for the host are offered",
  revokedhostkeys: "RevokedHostKeys is not read; only @revoked lines of known_hosts revoke keys",
  verifyhostkeydns: "VerifyHostKeyDNS is not supported; known_hosts decides",
  canonicalizehostname: "CanonicalizeHostname is not supported; the name is used as given",
  preferredauthentications: "PreferredAuthentications is not read; the order is publickey, keyboard-interactive, password",
  pubkeyacceptedalgorithms: "PubkeyAcceptedAlgorithms is not read",
};

const YES_NO: Record<string, boolean> = { yes: true, true: true, no: false, false: false };

interface State {
  alias: string;
  aliasLower: string;
  source: SshConfigSource;
  given: SshConfigGiven;
  env: Environment;
  values: Map<string, ConfigDirective>;
  identityFiles: string[];
  identityFilesConfigured: boolean;
  certificateFiles: string[];
  /** ProxyJump / ProxyCommand, whichever came first (OpenSSH's rule; see apply). */
  jump: { value: string; where: string } | null;
  command: { value: string; where: string } | null;
  warnings: string[];
}

/**
 * Resolve `alias` through the configuration file at `configPath` (`null`:
 * none) and then `source.systemConfigPath`. A missing file resolves as empty.
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
export function resolveSshConfig(
  alias: string,
  configPath: string | null,
  source: SshConfigSource,
  given: SshConfigGiven = {},
): ResolvedSshHost {
  const state: State = {
    alias,
    aliasLower: alias.toLowerCase(),
    source,
    given,
    env: source.env ?? process.env,
    values: new Map(),
    identityFiles: [],
    identityFilesConfigured: false,
    certificateFiles: [],
    jump: given.proxyJump === undefined ? null : { value: given.proxyJump, where: "the proxyJump option" },
    command: null,
    warnings: [],
  };
  const hooks = {
    readFile: (path: string) => source.readFile(path),
    listDir: (path: string) => source.listDir?.(path),
    expandTilde: (path: string) => expandTilde(path, source.homeDir, (u) => source.homeOf?.(u)),
    block: (d: ConfigDirective) => blockMatches(state, d),
    apply: (d: ConfigDirective) => apply(state, d),
    undecided: (d: ConfigDirective) => undecided(state, d),
    warning: (message: string) => state.warnings.push(message),
  };
  try {
    const budget = configPath === null ? undefined : readConfig(configPath, false, hooks);
    if (source.systemConfigPath !== undefined) readConfig(source.systemConfigPath, true, hooks, budget);
    return finish(state);
  } catch (error) {
    if (!(error instanceof ConfigFatal)) throw error;
    return { alias, hostName: state.aliasLower, identityFiles: [], proxyJump: [], userKnownHostsFiles: [], warnings: state.warnings, errors: [error.message] };
  }
}

function currentUser(state: State): string {
  return state.given.user ?? state.values.get("user")?.args[0] ?? state.source.localUser ?? "";
}

/**
 * Keywords that decide where the connection goes or which host key is
 * trusted: in a block that cannot be evaluated (Match exec) they might apply
 * for OpenSSH, so skipping them could connect around them.
 */
const ROUTE_KEYWORDS = new Set(["hostname", "port", "proxyjump", "proxycommand", "hostkeyalias", "userknownhostsfile", "globalknownhostsfile"]);

function undecided(state: State, d: ConfigDirective): void {
  // Only a setting OpenSSH would still take (first value wins) matters.
  const taken = d.keyword === "proxyjump" || d.keyword === "proxycommand" ? state.jump !== null || state.command !== null : state.values.has(d.keyword);
  if (ROUTE_KEYWORDS.has(d.keyword) && !taken) {
    throw new ConfigFatal(
      `${d.where}: ${d.keyword} is set inside a Match block this library cannot evaluate (Match exec is never run); ` +
        `OpenSSH might apply it, so connecting without it could reach another host. Move it to a Host block`,
    );
  }
}

function blockMatches(state: State, d: ConfigDirective): boolean | "unknown" {
  if (d.keyword === "host") return hostLineMatches(d.args, state.alias);
  const hostNameLine = state.values.get("hostname");
  const host = hostNameLine === undefined ? state.aliasLower : expandHostName(hostNameLine, state.aliasLower);
  const verdict = matchLineMatches(d.args, {
    host,
    originalHost: state.alias,
    user: currentUser(state),
    localUser: state.source.localUser ?? "",
  });
  if (verdict.error !== undefined) throw new ConfigFatal(`${d.where}: ${verdict.error}`);
  if (verdict.warning !== undefined) state.warnings.push(`${d.where}: ${verdict.warning}`);
  return verdict.matches;
}

function apply(state: State, d: ConfigDirective): void {
  if (d.args.length === 0) throw new ConfigFatal(`${d.where}: ${d.keyword} needs an argument`);
  switch (d.keyword) {
    case "identityfile":
      state.identityFilesConfigured = true;
      if (d.args[0]!.toLowerCase() !== "none") state.identityFiles.push(d.args[0]!);
      return;
    case "certificatefile":
      if (d.args[0]!.toLowerCase() !== "none") state.certificateFiles.push(d.args[0]!);
      return;
    case "proxyjump":
      // Checked with `ssh -G`: ProxyJump is ignored once ProxyCommand (even
      // `none`) was set; ProxyCommand once a real ProxyJump was set.
      if (state.jump === null && state.command === null) state.jump = { value: d.args[0]!, where: d.where };
      return;
    case "proxycommand":
      if (state.command === null && (state.jump === null || state.jump.value.toLowerCase() === "none")) {
        state.command = { value: d.rest, where: d.where };
      }
      return;
    case "userknownhostsfile":
    case "globalknownhostsfile":
      if (d.args.length > 1 && d.args.some((a) => a.toLowerCase() === "none")) {
        throw new ConfigFatal(`${d.where}: ${d.keyword} "none" must appear alone`);
      }
      break;
  }
  // First obtained value wins (ssh_config(5)); keep all args of that line.
  if (!state.values.has(d.keyword)) state.values.set(d.keyword, d);
}

function expandHostName(d: ConfigDirective, aliasLower: string): string {
  const expanded = expandConfigValue(d.args[0]!, { h: aliasLower }, null);
  if (!expanded.ok) throw new ConfigFatal(`${d.where}: HostName: ${expanded.error} (HostName takes only %h and %%)`);
  return expanded.value;
}

function finish(state: State): ResolvedSshHost {
  const { source, alias } = state;
  const line = (key: string): ConfigDirective | undefined => state.values.get(key);
  const hostNameLine = line("hostname");
  const hostName = (hostNameLine === undefined ? state.aliasLower : expandHostName(hostNameLine, state.aliasLower)).toLowerCase();
  const user = state.given.user ?? line("user")?.args[0];
  let port = state.given.port;
  const portLine = line("port");
  if (port === undefined && portLine !== undefined) {
    const text = portLine.args[0]!;
    port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
    if (!(port >= 1 && port <= 65535)) throw new ConfigFatal(`${portLine.where}: Bad port '${text}'`);
  }
  const hostKeyAlias = line("hostkeyalias")?.args[0]?.toLowerCase();
  const localHostName = source.localHostName ?? hostname();
  const remoteUser = user ?? source.localUser ?? "";
  const portText = String(port ?? 22);
  const tokens: TokenValues = {
    C: createHash("sha1").update(`${localHostName}${hostName}${portText}${remoteUser}`).digest("hex"),
    d: source.homeDir,
    h: hostName,
    i: String(source.uid ?? (typeof process.getuid === "function" ? process.getuid() : -1)),
    k: hostKeyAlias ?? alias,
    L: localHostName.split(".")[0]!,
    l: localHostName,
    n: alias,
    p: portText,
    r: remoteUser,
    u: source.localUser ?? "",
  };
  const path = (value: string, where: string, keyword: string): string => {
    const tilde = expandTilde(value, source.homeDir, (u) => source.homeOf?.(u));
    if (tilde === undefined) throw new ConfigFatal(`${where}: ${keyword} ${value}: no such user`);
    const expanded = expandConfigValue(tilde, tokens, state.env);
    if (!expanded.ok) throw new ConfigFatal(`${where}: ${keyword}: ${expanded.error}`);
    return expanded.value;
  };
  const where = (key: string): string => line(key)?.where ?? "config";
  const resolved: ResolvedSshHost = {
    alias,
    hostName,
    identityFiles: state.identityFiles.map((f) => path(f, where("identityfile"), "IdentityFile")),
    proxyJump: [],
    userKnownHostsFiles: [],
    warnings: state.warnings,
  };
  if (state.identityFilesConfigured) resolved.identityFilesConfigured = true;
  if (state.certificateFiles.length > 0) {
    resolved.certificateFiles = state.certificateFiles.map((f) => path(f, where("certificatefile"), "CertificateFile"));
  }
  if (user !== undefined) resolved.user = user;
  if (port !== undefined) resolved.port = port;
  const userFiles = line("userknownhostsfile");
  if (userFiles !== undefined) {
    if (userFiles.args[0]!.toLowerCase() === "none") resolved.userKnownHostsNone = true;
    else resolved.userKnownHostsFiles = userFiles.args.map((f) => path(f, userFiles.where, "UserKnownHostsFile"));
  }
  const globalFiles = line("globalknownhostsfile");
  if (globalFiles !== undefined) {
    resolved.globalKnownHostsFiles = globalFiles.args[0]!.toLowerCase() === "none"
      ? []
      : globalFiles.args.map((f) => expandTilde(f, source.homeDir, () => undefined) ?? f);
  }
  const agent = line("identityagent");
  if (agent !== undefined) resolved.identityAgent = identityAgent(agent, state.env, (v) => path(v, agent.where, "IdentityAgent"));
  for (const [key, field] of [
    ["identitiesonly", "identitiesOnly"],
    ["passwordauthentication", "passwordAuthentication"],
    ["kbdinteractiveauthentication", "kbdInteractiveAuthentication"],
    ["pubkeyauthentication", "pubkeyAuthentication"],
  ] as const) {
    const d = line(key);
    if (d === undefined) continue;
    const value = d.args[0]!.toLowerCase();
    // PubkeyAuthentication also takes OpenSSH 8.9's unbound / host-bound (both "yes").
    const flag = key === "pubkeyauthentication" && (value === "unbound" || value === "host-bound") ? true : YES_NO[value];
    if (flag === undefined) throw new ConfigFatal(`${d.where}: ${d.args[0]} is not yes or no`);
    resolved[field] = flag;
  }
  proxy(state, resolved, tokens);
  const timeout = line("connecttimeout");
  if (timeout !== undefined && timeout.args[0]!.toLowerCase() !== "none") {
    const ms = duration(timeout);
    if (ms > 0) resolved.connectTimeoutMs = ms;
  }
  const alive = line("serveraliveinterval");
  if (alive !== undefined) resolved.serverAliveIntervalMs = duration(alive);
  const count = line("serveralivecountmax");
  if (count !== undefined) {
    if (!/^\d+$/.test(count.args[0]!)) throw new ConfigFatal(`${count.where}: ServerAliveCountMax ${count.args[0]} is not a number`);
    resolved.serverAliveCountMax = Number(count.args[0]);
  }
  if (hostKeyAlias !== undefined) resolved.hostKeyAlias = hostKeyAlias;
  for (const [keyword, note] of Object.entries(NOT_APPLIED)) {
    if (state.values.has(keyword)) state.warnings.push(note);
  }
  return resolved;
}

/** `IdentityAgent`: `none`, `SSH_AUTH_SOCK`, `$VAR` (read at use), or a path (tokens, `${VAR}`, `~`). */
function identityAgent(d: ConfigDirective, env: Environment, expand: (value: string) => string): string {
  const value = d.args[0]!;
  if (value.toLowerCase() === "none") return "none";
  if (value === "SSH_AUTH_SOCK") return env.SSH_AUTH_SOCK || "none";
  if (value.startsWith("$") && !value.startsWith("${")) return env[value.slice(1)] || "none";
  return expand(value);
}

/** Characters a host or user name may have before it is spliced into a ProxyCommand (run by a shell). */
const SHELL_SAFE = /^[A-Za-z0-9._@:\[\]%+-]*$/;

function proxy(state: State, resolved: ResolvedSshHost, tokens: TokenValues): void {
  const { command, jump } = state;
  if (command !== null && command.value.toLowerCase() !== "none") {
    for (const token of ["h", "n", "r"] as const) {
      const value = tokens[token]!;
      if (command.value.includes(`%${token}`) && (!SHELL_SAFE.test(value) || value.startsWith("-"))) {
        throw new ConfigFatal(`${command.where}: refusing to put %${token} = ${JSON.stringify(value)} into ProxyCommand (a shell runs it)`);
      }
    }
    const expanded = expandConfigValue(command.value, pick(tokens, "hnpr"), null);
    if (!expanded.ok) throw new ConfigFatal(`${command.where}: ProxyCommand: ${expanded.error} (it takes %h %n %p %r %%)`);
    resolved.proxyCommand = expanded.value;
    return;
  }
  if (jump === null || jump.value.toLowerCase() === "none") return;
  const where = jump.where;
  const expanded = expandConfigValue(jump.value, pick(tokens, "hnpr"), null);
  if (!expanded.ok) throw new ConfigFatal(`${where}: ProxyJump: ${expanded.error}`);
  for (const hop of expanded.value.split(",")) {
    const parsed = parseSshDestination(hop.trim());
    // Never drop a hop and connect around it.
    if (parsed === null) throw new ConfigFatal(`${where}: ProxyJump hop "${hop}" is not [user@]host[:port]`);
    resolved.proxyJump.push(parsed);
  }
}

function pick(tokens: TokenValues, letters: string): TokenValues {
  return Object.fromEntries([...letters].map((l) => [l, tokens[l]!]));
}

/** OpenSSH `convtime`: `30`, `30s`, `5m`, `1h30m`, … in milliseconds. */
function duration(d: ConfigDirective): number {
  const text = d.args[0]!.toLowerCase();
  const units: Record<string, number> = { "": 1, s: 1, m: 60, h: 3600, d: 86400, w: 604800 };
  let total = 0;
  const parts = /^(?:\d+[smhdw]?)+$/.test(text) ? text.match(/\d+[smhdw]?/g)! : null;
  if (parts === null) throw new ConfigFatal(`${d.where}: ${d.args[0]} is not a time`);
  for (const part of parts) total += Number(/^\d+/.exec(part)![0]) * units[part.replace(/^\d+/, "")]!;
  return total * 1000;
}
