/**
 * `connectSsh` options and their resolution into connection hops: ssh_config
 * aliases, defaults as OpenSSH has them, key loading, known_hosts files.
 *
 * @module
 */
import { appendFileSync, chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { dirname } from "node:path";
import { defaultIdentityFiles, planAuth } from "./auth.ts";
import type { PassphraseSource } from "./auth.ts";
import { resolveSshConfig } from "./config.ts";
import { parseSshDestination } from "./destination.ts";
import type { ResolvedSshHost, SshConfigSource } from "./config.ts";
import type { SshDestination } from "./destination.ts";
import type { HopConfig, HostKeyPolicy, KnownHostsStore } from "./connect.ts";
import type { SudoOption } from "./sudo.ts";

/** Options of {@linkcode connectSsh} (SPEC §2, §8). */
export interface SshOptions {
  /** Host name, IP, or ~/.ssh/config alias; `user@host:port` is accepted too. */
  host: string;
  /** Default: ssh_config `Port`, else 22. */
  port?: number;
  /** Default: ssh_config `User`, else the local user. */
  username?: string;
  /** Private key file(s), tried before the agent and the config's IdentityFile. */
  identityFile?: string | string[];
  /** A private key's text or bytes (OpenSSH or PEM format). */
  privateKey?: string | Uint8Array;
  /** Passphrase for encrypted keys, or a callback asked once per encrypted key (given its path). */
  passphrase?: PassphraseSource;
  /** Agent socket; default `SSH_AUTH_SOCK` (or ssh_config `IdentityAgent`); `false` disables. */
  agent?: string | false;
  /** known_hosts file(s). Default: ssh_config `UserKnownHostsFile`, else ~/.ssh/known_hosts (+ global files, read-only). */
  knownHostsFile?: string | string[];
  /** Default `"strict"`. */
  hostKeyPolicy?: HostKeyPolicy;
  /** Default ~/.ssh/config; `false` to ignore any config. */
  sshConfigFile?: string | false;
  /** Jump hosts `[user@]host[:port],…` or `none`; overrides ssh_config `ProxyJump`. */
  proxyJump?: string;
  /** SSH keepalive; default ssh_config `ServerAliveInterval`, else 15000; 0 disables. */
  keepaliveIntervalMs?: number;
  /** Handshake + authentication timeout; default ssh_config `ConnectTimeout`, else 20000. */
  readyTimeoutMs?: number;
  /** Programs running at once on the connection (default 8, below OpenSSH's MaxSessions 10). */
  maxChannels?: number;
  /** Run every program through sudo (§7). */
  sudo?: SudoOption;
  /**
   * Most stdout + stderr bytes one program may produce before it is killed
   * and the call rejects `limit_exceeded` (default 1 GiB, as LocalShell).
   */
  maxOutputBytes?: number;
}

/** Everything connectSsh needs, resolved once. */
export interface ResolvedSshTarget {
  hops: HopConfig[];
  knownHosts: KnownHostsStore;
  readyTimeoutMs: number;
  keepaliveIntervalMs: number;
  configWarnings: string[];
  label: string;
}

const HOST_KEY_POLICIES: readonly HostKeyPolicy[] = ["strict", "accept-new", "insecure-accept-any"];

/**
 * Check option types (programmer errors throw) and resolve aliases, users,
 * ports, keys, agent and known_hosts files into connection hops.
 *
 * @example
 * ```ts
 * const target = await resolveSshTarget({ host: "web1" });
 * target.hops.at(-1)!.hostName;
 * ```
 */
export async function resolveSshTarget(options: SshOptions): Promise<ResolvedSshTarget> {
  validateOptions(options);
  const home = homedir();
  const localUser = localUserName();
  const source: SshConfigSource = {
    homeDir: home,
    localUser,
    readFile: (path) => readText(path),
    listDir: (path) => {
      try {
        return readdirSync(path);
      } catch {
        return undefined;
      }
    },
  };
  const configPath = options.sshConfigFile === false ? null : options.sshConfigFile ?? `${home}/.ssh/config`;
  const resolve = (alias: string): ResolvedSshHost =>
    configPath === null ? emptyResolution(alias) : resolveSshConfig(alias, configPath, source);

  const destination = parseSshDestination(options.host) ?? { host: options.host };
  const main = resolve(destination.host);
  const configWarnings = main.warnings.map((w) => `${destination.host}: ${w}`);
  const port = options.port ?? destination.port ?? main.port ?? 22;
  const username = options.username ?? destination.user ?? main.user ?? localUser;

  const explicitFiles = typeof options.identityFile === "string" ? [options.identityFile] : options.identityFile ?? [];
  const agentFor = (resolved: ResolvedSshHost): string | null => {
    if (options.agent === false) return null;
    if (options.agent !== undefined) return options.agent;
    const fromConfig = agentFromConfig(resolved); // null: IdentityAgent none
    if (fromConfig !== undefined) return fromConfig;
    // IdentitiesOnly: OpenSSH offers only the named files (it filters agent
    // keys by them); without that filter, do not offer the agent at all.
    return resolved.identitiesOnly ? null : process.env.SSH_AUTH_SOCK || null;
  };
  const agent = agentFor(main);
  const readKey = (path: string): Uint8Array | undefined => {
    try {
      return readFileSync(path);
    } catch {
      return undefined;
    }
  };
  const implicitFor = (resolved: ResolvedSshHost): string[] =>
    resolved.identityFiles.length > 0
      ? resolved.identityFiles
      : explicitFiles.length > 0 || options.privateKey !== undefined
      ? []
      : defaultIdentityFiles(home);

  const targetHop: HopConfig = {
    label: `${username}@${main.hostName}:${port}`,
    hostName: main.hostName,
    port,
    username,
    ...(main.hostKeyAlias !== undefined ? { hostKeyAlias: main.hostKeyAlias } : {}),
    auth: await planAuth({
      username,
      ...(options.privateKey !== undefined ? { privateKey: options.privateKey } : {}),
      explicitIdentityFiles: explicitFiles,
      implicitIdentityFiles: implicitFor(main),
      ...(options.passphrase !== undefined ? { passphrase: options.passphrase } : {}),
      agent,
      readFile: readKey,
    }),
  };

  const jumpText = options.proxyJump;
  let jumps: SshDestination[] = main.proxyJump;
  if (jumpText !== undefined) {
    jumps = [];
    if (jumpText.trim().toLowerCase() !== "none") {
      for (const part of jumpText.split(",")) {
        const hop = parseSshDestination(part.trim());
        if (hop === null) throw new TypeError(`proxyJump hop "${part}" is not [user@]host[:port]`);
        jumps.push(hop);
      }
    }
  }
  const hops: HopConfig[] = [];
  for (const jump of jumps) {
    // Each jump is resolved through the same config (its HostName, User,
    // Port, IdentityFile); its own ProxyJump is not followed.
    const resolved = resolve(jump.host);
    configWarnings.push(...resolved.warnings.map((w) => `${jump.host}: ${w}`));
    const jumpUser = jump.user ?? resolved.user ?? localUser;
    const jumpPort = jump.port ?? resolved.port ?? 22;
    hops.push({
      label: `${jumpUser}@${resolved.hostName}:${jumpPort}`,
      hostName: resolved.hostName,
      port: jumpPort,
      username: jumpUser,
      ...(resolved.hostKeyAlias !== undefined ? { hostKeyAlias: resolved.hostKeyAlias } : {}),
      auth: await planAuth({
        username: jumpUser,
        ...(options.privateKey !== undefined ? { privateKey: options.privateKey } : {}),
        explicitIdentityFiles: explicitFiles,
        implicitIdentityFiles: implicitFor(resolved),
        ...(options.passphrase !== undefined ? { passphrase: options.passphrase } : {}),
        agent: agentFor(resolved),
        readFile: readKey,
      }),
    });
  }
  hops.push(targetHop);

  const userFiles = typeof options.knownHostsFile === "string"
    ? [options.knownHostsFile]
    : options.knownHostsFile ??
      (main.userKnownHostsFiles.length > 0
        ? main.userKnownHostsFiles
        : [`${home}/.ssh/known_hosts`, `${home}/.ssh/known_hosts2`]);
  const files = options.knownHostsFile === undefined
    ? [...userFiles, "/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"]
    : userFiles;
  const knownHosts: KnownHostsStore = {
    files,
    writeFile: userFiles[0]!,
    read: readText,
    append: appendKnownHostsLine,
  };
  const via = hops.length > 1 ? ` via ${hops.slice(0, -1).map((h) => h.label).join(" -> ")}` : "";
  return {
    hops,
    knownHosts,
    readyTimeoutMs: options.readyTimeoutMs ?? main.connectTimeoutMs ?? 20000,
    keepaliveIntervalMs: options.keepaliveIntervalMs ?? main.serverAliveIntervalMs ?? 15000,
    configWarnings,
    label: targetHop.label + via,
  };
}

function validateOptions(options: SshOptions): void {
  if (typeof options !== "object" || options === null) throw new TypeError("connectSsh: options must be an object");
  if (typeof options.host !== "string" || options.host === "") throw new TypeError("connectSsh: host must be a non-empty string");
  const port = options.port;
  if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) {
    throw new TypeError("connectSsh: port must be an integer in 1..65535");
  }
  if (options.hostKeyPolicy !== undefined && !HOST_KEY_POLICIES.includes(options.hostKeyPolicy)) {
    throw new TypeError(`connectSsh: hostKeyPolicy must be one of ${HOST_KEY_POLICIES.join(", ")}`);
  }
  for (const name of ["keepaliveIntervalMs", "readyTimeoutMs"] as const) {
    const value = options[name];
    if (value !== undefined && (!Number.isFinite(value) || value < 0)) {
      throw new TypeError(`connectSsh: ${name} must be a number >= 0`);
    }
  }
  const maxOutput = options.maxOutputBytes;
  if (maxOutput !== undefined && (!Number.isInteger(maxOutput) || maxOutput < 1)) {
    throw new TypeError("connectSsh: maxOutputBytes must be an integer >= 1");
  }
  const max = options.maxChannels;
  if (max !== undefined && (!Number.isInteger(max) || max < 1)) {
    throw new TypeError("connectSsh: maxChannels must be an integer >= 1");
  }
  const sudo = options.sudo;
  if (sudo !== undefined && typeof sudo !== "boolean" && typeof sudo?.password !== "function") {
    throw new TypeError("connectSsh: sudo must be true/false or { password: () => Promise<string> }");
  }
}

function emptyResolution(alias: string): ResolvedSshHost {
  return { alias, hostName: alias, identityFiles: [], proxyJump: [], userKnownHostsFiles: [], warnings: [] };
}

function agentFromConfig(resolved: ResolvedSshHost): string | null | undefined {
  if (resolved.identityAgent === undefined) return undefined;
  if (resolved.identityAgent === "none") return null;
  if (resolved.identityAgent === "SSH_AUTH_SOCK") return process.env.SSH_AUTH_SOCK || null;
  return resolved.identityAgent;
}

function localUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? "root";
  }
}

function readText(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return undefined;
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** Append a line, creating the directory (0700) and file (0600) as ssh does. */
function appendKnownHostsLine(path: string, line: string): void {
  const dir = dirname(path);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const existing = readText(path);
  const separator = existing !== undefined && existing.length > 0 && !existing.endsWith("\n") ? "\n" : "";
  appendFileSync(path, `${separator}${line}\n`, { mode: 0o600 });
  if (existing === undefined) chmodSync(path, 0o600);
}
