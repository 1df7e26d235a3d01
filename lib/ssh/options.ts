/**
 * `connectSsh` options and their resolution into connection hops: ssh_config
 * (user file, then the system file) for the target and every jump host, the
 * jump chain as OpenSSH builds it, identities, agent, known_hosts files —
 * with OpenSSH's defaults, the local account from the passwd database.
 *
 * Jump chains (OpenSSH runs `ssh -J j1,…,jn-1 -W target jn`): the target is
 * reached through the last hop of its ProxyJump list; that hop is reached
 * through the hops before it (which override its own ProxyJump); the first
 * hop follows its own ssh_config ProxyJump or ProxyCommand. Each hop uses
 * its own configuration (HostName, User, Port, IdentityFile, known_hosts…).
 *
 * @module
 */
import { appendFileSync, chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { failure } from "../failure.ts";
import { defaultIdentityFiles } from "./auth.ts";
import type { AuthPlan, IdentitySource, PassphraseSource, PasswordSource } from "./auth.ts";
import { resolveSshConfig } from "./config.ts";
import type { ResolvedSshHost, SshConfigGiven, SshConfigSource } from "./config.ts";
import { formatSshDestination, parseSshDestination } from "./destination.ts";
import type { SshDestination } from "./destination.ts";
import type { HopConfig, HostKeyPolicy, KnownHostsStore } from "./connect.ts";
import { homeOf, localUser } from "./local_user.ts";
import type { SudoOption } from "./sudo.ts";
import type { PatchFailure, Warning } from "../types.ts";

/**
 * Options of {@linkcode connectSsh} (SPEC §2, §8).
 *
 * @example
 * ```ts
 * const options: SshOptions = { host: "deploy@web1:2222", identityFile: "~/.ssh/deploy_ed25519", hostKeyPolicy: "strict", proxyJump: "bastion", keepaliveIntervalMs: 10_000 };
 * const shell = await connectSsh(options);
 * ```
 */
export interface SshOptions {
  /** Host name, IP, or ~/.ssh/config alias; `user@host:port` is accepted too. */
  host: string;
  /** Default: ssh_config `Port`, else 22. */
  port?: number;
  /** Default: ssh_config `User`, else the local user (from the passwd database, as OpenSSH). */
  username?: string;
  /** Private key file(s), tried before the agent and the config's IdentityFile (offered to jump hosts too). */
  identityFile?: string | string[];
  /** A private key's text or bytes (OpenSSH or PEM format). */
  privateKey?: string | Uint8Array;
  /** Passphrase for encrypted keys, or a callback asked once per encrypted key (given its path), only when that file is tried. */
  passphrase?: PassphraseSource;
  /**
   * Password (or a callback, asked once per connection attempt) for password and
   * keyboard-interactive authentication, tried after the keys. The target host
   * only: never sent to a jump host. Never logged or put in a message.
   */
  password?: PasswordSource;
  /** Agent socket; default ssh_config `IdentityAgent`, else `SSH_AUTH_SOCK`; `false` disables. */
  agent?: string | false;
  /** known_hosts file(s) for every hop. Default: ssh_config `UserKnownHostsFile` (+ `GlobalKnownHostsFile`) of each hop. */
  knownHostsFile?: string | string[];
  /** Default `"strict"`. */
  hostKeyPolicy?: HostKeyPolicy;
  /** Default ~/.ssh/config; `false` to ignore any config. A path is read alone, like `ssh -F` (no system file). */
  sshConfigFile?: string | false;
  /** The system-wide file read after the user file: default `/etc/ssh/ssh_config` unless `sshConfigFile` is given. */
  systemSshConfigFile?: string | false;
  /** Jump hosts `[user@]host[:port],…` or `none`; overrides ssh_config `ProxyJump` (like `ssh -J`). */
  proxyJump?: string;
  /**
   * Run a `ProxyCommand` from ssh_config as the connection's transport
   * (default false: such a host fails `connect_failed`, never connected to
   * directly around the command).
   */
  allowProxyCommand?: boolean;
  /** SSH keepalive; default ssh_config `ServerAliveInterval`, else 15000; 0 disables. */
  keepaliveIntervalMs?: number;
  /** Unanswered keepalives before the connection counts as dropped; default ssh_config `ServerAliveCountMax`, else 3. */
  keepaliveCountMax?: number;
  /** Handshake + authentication timeout; default ssh_config `ConnectTimeout`, else 20000. */
  readyTimeoutMs?: number;
  /**
   * Programs running at once on the connection (default 8, below OpenSSH's MaxSessions 10). A server
   * that refuses a channel while it holds fewer of ours lowers it to that number, with one
   * `channel_limit_lowered` warning.
   */
  maxChannels?: number;
  /**
   * Sees each warning of the connection as it comes (also kept in `shell.warnings`): those of each
   * connect (`insecure_host_key`, `agent_unavailable`) and `channel_limit_lowered`, which can come
   * at any call. A front end logs them.
   */
  onWarning?: (warning: Warning) => void;
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
  /** Jump hosts in connection order, the target last. */
  hops: HopConfig[];
  configWarnings: string[];
  /** Set when the configuration must not be connected with (OpenSSH would refuse it, or ProxyCommand is not allowed). */
  refusal: PatchFailure | null;
  label: string;
}

const HOST_KEY_POLICIES: readonly HostKeyPolicy[] = ["strict", "accept-new", "insecure-accept-any"];
/** Longest jump chain followed (a jump host's ProxyJump that loops back ends here). */
const MAX_HOPS = 10;
const MAX_CONFIG_FILE_BYTES = 4 * 1024 * 1024;
const MAX_KNOWN_HOSTS_BYTES = 64 * 1024 * 1024;
const MAX_KEY_FILE_BYTES = 1024 * 1024;

/** Stops resolving with a refusal (caught below; never escapes). */
class Refusal extends Error {
  readonly failure: PatchFailure;
  constructor(f: PatchFailure) {
    super(f.message);
    this.failure = f;
  }
}

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
  const me = localUser();
  const source: SshConfigSource = {
    homeDir: me.home,
    localUser: me.name,
    uid: me.uid,
    homeOf,
    readFile: (path) => {
      const size = fileSize(path);
      if (size !== undefined && size > MAX_CONFIG_FILE_BYTES) throw new Error(`larger than ${MAX_CONFIG_FILE_BYTES} bytes`);
      return readText(path, MAX_CONFIG_FILE_BYTES);
    },
    listDir: (path) => {
      try {
        return readdirSync(path);
      } catch {
        return undefined;
      }
    },
  };
  const configPath = options.sshConfigFile === false ? null : options.sshConfigFile ?? `${me.home}/.ssh/config`;
  const system = typeof options.systemSshConfigFile === "string"
    ? options.systemSshConfigFile
    : options.systemSshConfigFile === false || options.sshConfigFile !== undefined
    ? undefined
    : "/etc/ssh/ssh_config";
  if (system !== undefined) source.systemConfigPath = system;
  const resolve = (alias: string, given: SshConfigGiven): ResolvedSshHost =>
    configPath === null && system === undefined ? emptyResolution(alias, given) : resolveSshConfig(alias, configPath, source, given);

  const destination = parseSshDestination(options.host) ?? { host: options.host };
  const configWarnings: string[] = [];
  const explicitFiles = typeof options.identityFile === "string" ? [options.identityFile] : options.identityFile ?? [];

  const hopFor = (resolved: ResolvedSshHost, isTarget: boolean): HopConfig => {
    const port = resolved.port ?? 22;
    const username = resolved.user ?? me.name;
    const label = `${username}@${resolved.hostName}:${port}`;
    const identities: IdentitySource[] = [];
    if (options.privateKey !== undefined) identities.push({ kind: "data", data: options.privateKey, label: "the privateKey option" });
    for (const path of explicitFiles) identities.push({ kind: "file", path, origin: "option" });
    if (resolved.identityFilesConfigured) {
      for (const path of resolved.identityFiles) identities.push({ kind: "file", path, origin: "config" });
    } else if (identities.length === 0) {
      for (const path of defaultIdentityFiles(me.home)) identities.push({ kind: "file", path, origin: "default" });
    }
    // OpenSSH also loads <identity>-cert.pub; ssh2 cannot present either kind.
    const certificates = [
      ...(resolved.certificateFiles ?? []),
      ...identities.flatMap((s) => (s.kind === "file" ? [`${s.path}-cert.pub`] : [])),
    ].filter((path, i, all) => all.indexOf(path) === i && existsSync(path));
    const auth: AuthPlan = {
      username,
      target: label,
      identities,
      certificates,
      identitiesOnly: resolved.identitiesOnly ?? false,
      agent: agentFor(options, resolved),
      allow: {
        publickey: resolved.pubkeyAuthentication ?? true,
        password: resolved.passwordAuthentication ?? true,
        keyboardInteractive: resolved.kbdInteractiveAuthentication ?? true,
      },
      readFile: (path) => readBytes(path, MAX_KEY_FILE_BYTES),
    };
    if (options.passphrase !== undefined) auth.passphrase = options.passphrase;
    if (isTarget && options.password !== undefined) auth.password = options.password;
    if (certificates.length > 0) {
      configWarnings.push(`${resolved.alias}: user certificates (${certificates.join(", ")}) cannot be presented by this library (ssh2); the plain keys are offered`);
    }
    const hop: HopConfig = {
      label,
      hostName: resolved.hostName,
      port,
      username,
      auth,
      knownHosts: knownHostsFor(options, resolved, me.home),
      readyTimeoutMs: options.readyTimeoutMs ?? resolved.connectTimeoutMs ?? 20000,
      keepaliveIntervalMs: options.keepaliveIntervalMs ?? resolved.serverAliveIntervalMs ?? 15000,
      keepaliveCountMax: options.keepaliveCountMax ?? resolved.serverAliveCountMax ?? 3,
    };
    if (resolved.hostKeyAlias !== undefined) hop.hostKeyAlias = resolved.hostKeyAlias;
    return hop;
  };

  const chainFor = (dest: SshDestination, given: SshConfigGiven, isTarget: boolean, length: number): HopConfig[] => {
    if (length > MAX_HOPS) {
      throw new Refusal(failure("connect_failed", `the jump chain to ${options.host} is longer than ${MAX_HOPS} hops (does a jump host's ProxyJump lead back to itself?); fix ssh_config's ProxyJump lines.`, { retryable: false }));
    }
    const resolved = resolve(dest.host, given);
    for (const w of resolved.warnings) configWarnings.push(`${dest.host}: ${w}`);
    if (resolved.errors?.length) {
      throw new Refusal(failure(
        "connect_failed",
        `the ssh configuration for ${dest.host} is invalid: ${resolved.errors.join("; ")}. OpenSSH refuses it too; ` +
          `fix it (or pass sshConfigFile: false to ignore the configuration). Nothing was connected.`,
        { retryable: false },
      ));
    }
    const hop = hopFor(resolved, isTarget);
    if (resolved.proxyCommand !== undefined) {
      if (options.allowProxyCommand !== true) {
        throw new Refusal(failure(
          "connect_failed",
          `ssh_config gives ${dest.host} a ProxyCommand (${resolved.proxyCommand}), and connectSsh runs configured ` +
            `programs only with allowProxyCommand: true. It did not connect around it: the host may be reachable only ` +
            `through the command, and a direct connection could reach another machine. Pass allowProxyCommand: true ` +
            `to run it, or give proxyJump to go another way.`,
          { retryable: false },
        ));
      }
      hop.proxyCommand = resolved.proxyCommand;
      configWarnings.push(`${dest.host}: running ProxyCommand ${resolved.proxyCommand} as the transport (allowProxyCommand)`);
      return [hop];
    }
    const jumps = resolved.proxyJump;
    if (jumps.length === 0) return [hop];
    const last = jumps.at(-1)!;
    const rest = jumps.slice(0, -1);
    const lastGiven: SshConfigGiven = {};
    if (last.user !== undefined) lastGiven.user = last.user;
    if (last.port !== undefined) lastGiven.port = last.port;
    if (rest.length > 0) lastGiven.proxyJump = rest.map(formatSshDestination).join(",");
    return [...chainFor(last, lastGiven, false, length + 1), hop];
  };

  const given: SshConfigGiven = {};
  const user = options.username ?? destination.user;
  const port = options.port ?? destination.port;
  if (user !== undefined) given.user = user;
  if (port !== undefined) given.port = port;
  if (options.proxyJump !== undefined) given.proxyJump = options.proxyJump.trim();
  let hops: HopConfig[] = [];
  let refusal: PatchFailure | null = null;
  try {
    hops = chainFor(destination, given, true, 1);
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    refusal = error.failure;
  }
  const target = hops.at(-1);
  const label = target === undefined
    ? options.host
    : target.label + (hops.length > 1 ? ` via ${hops.slice(0, -1).map((h) => h.label).join(" -> ")}` : "");
  return { hops, configWarnings, refusal, label };
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
  for (const name of ["maxOutputBytes", "maxChannels"] as const) {
    const value = options[name];
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) throw new TypeError(`connectSsh: ${name} must be an integer >= 1`);
  }
  const count = options.keepaliveCountMax;
  if (count !== undefined && (!Number.isInteger(count) || count < 0)) throw new TypeError("connectSsh: keepaliveCountMax must be an integer >= 0");
  const sudo = options.sudo;
  if (sudo !== undefined && typeof sudo !== "boolean" && typeof sudo?.password !== "function") {
    throw new TypeError("connectSsh: sudo must be true/false or { password: () => Promise<string> }");
  }
  const password = options.password;
  if (password !== undefined && typeof password !== "string" && typeof password !== "function") {
    throw new TypeError("connectSsh: password must be a string or (request) => Promise<string>");
  }
  if (options.onWarning !== undefined && typeof options.onWarning !== "function") {
    throw new TypeError("connectSsh: onWarning must be a function (warning) => void");
  }
  if (options.allowProxyCommand !== undefined && typeof options.allowProxyCommand !== "boolean") {
    throw new TypeError("connectSsh: allowProxyCommand must be a boolean");
  }
  if (options.proxyJump !== undefined && options.proxyJump.trim().toLowerCase() !== "none") {
    for (const part of options.proxyJump.split(",")) {
      if (parseSshDestination(part.trim()) === null) throw new TypeError(`proxyJump hop "${part}" is not [user@]host[:port]`);
    }
  }
}

function emptyResolution(alias: string, given: SshConfigGiven): ResolvedSshHost {
  const resolved: ResolvedSshHost = { alias, hostName: alias.toLowerCase(), identityFiles: [], proxyJump: [], userKnownHostsFiles: [], warnings: [] };
  if (given.user !== undefined) resolved.user = given.user;
  if (given.port !== undefined) resolved.port = given.port;
  const jump = given.proxyJump;
  if (jump !== undefined && jump.toLowerCase() !== "none") resolved.proxyJump = jump.split(",").map((p) => parseSshDestination(p.trim())!);
  return resolved;
}

function agentFor(options: SshOptions, resolved: ResolvedSshHost): string | null {
  if (options.agent === false) return null;
  if (options.agent !== undefined) return options.agent;
  if (resolved.identityAgent !== undefined) return resolved.identityAgent === "none" ? null : resolved.identityAgent;
  return process.env.SSH_AUTH_SOCK || null;
}

function knownHostsFor(options: SshOptions, resolved: ResolvedSshHost, home: string): KnownHostsStore {
  const store = (files: string[], writeFile: string | null): KnownHostsStore => ({
    files,
    writeFile,
    read: (path) => readText(path, MAX_KNOWN_HOSTS_BYTES),
    append: appendKnownHostsLine,
  });
  if (options.knownHostsFile !== undefined) {
    const files = typeof options.knownHostsFile === "string" ? [options.knownHostsFile] : options.knownHostsFile;
    return store(files, files[0] ?? null);
  }
  const user = resolved.userKnownHostsNone
    ? []
    : resolved.userKnownHostsFiles.length > 0
    ? resolved.userKnownHostsFiles
    : [`${home}/.ssh/known_hosts`, `${home}/.ssh/known_hosts2`];
  const global = resolved.globalKnownHostsFiles ?? ["/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"];
  return store([...user, ...global], user[0] ?? null);
}

function fileSize(path: string): number | undefined {
  try {
    const stat = statSync(path);
    return stat.isFile() ? stat.size : undefined;
  } catch {
    return undefined;
  }
}

function readText(path: string, maxBytes: number): string | undefined {
  const bytes = readBytes(path, maxBytes);
  return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
}

/** A regular file's bytes, or `undefined` (missing, not a file, larger than `maxBytes`). */
function readBytes(path: string, maxBytes: number): Uint8Array | undefined {
  try {
    const stat = statSync(path);
    if (!stat.isFile() || stat.size > maxBytes) return undefined;
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

/** Append a line, creating the directory (0700) and file (0600) as ssh does. */
function appendKnownHostsLine(path: string, line: string): void {
  const dir = dirname(path);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const existing = readText(path, MAX_KNOWN_HOSTS_BYTES);
  const separator = existing !== undefined && existing.length > 0 && !existing.endsWith("\n") ? "\n" : "";
  appendFileSync(path, `${separator}${line}\n`, { mode: 0o600 });
  if (existing === undefined) chmodSync(path, 0o600);
}
