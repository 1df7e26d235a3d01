/**
 * Command-line flags of `examples/apply.ts`: the usage text and a parser
 * that turns argv into checked options or a usage error (exit code 2).
 *
 * @module
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { parseSshDestination, unknownNames, unknownNamesText } from "../../mod.ts";
import type { MatchingMode, SharedDirectories, SshDestination, TextEncodingName } from "../../mod.ts";
import { parseHostExpect, parseHosts } from "./hosts.ts";
import type { HostEntry } from "./hosts.ts";

/**
 * How the user runs this CLI, for the usage text and the reconcile command it
 * prints: `ssh-apply-patch` when started through the npm package's bin
 * (`npx ssh-apply-patch`, dist/bin/ssh-apply-patch.js), otherwise the
 * example's source path.
 *
 * @example
 * ```ts
 * console.log(`${PROGRAM} --help`);
 * ```
 */
export const PROGRAM: string = /(?:^|[\\/])ssh-apply-patch(?:\.js)?$/.test(process.argv[1] ?? "") ? "ssh-apply-patch" : "bun examples/apply.ts";

/**
 * The `--help` text; also the reference for the exit codes.
 *
 * @example
 * ```ts
 * process.stdout.write(USAGE);
 * ```
 */
export const USAGE: string = `Apply a Codex-format patch to files under a root directory, here or over SSH.

Usage:
  ${PROGRAM} --root DIR [options] < patch
  ${PROGRAM} --root DIR --patch FILE [options]
  ${PROGRAM} --root DIR --reconcile FILE [remote host options]
  ${PROGRAM} --hosts web1,web2,... --root DIR [many hosts options] [options] < patch

Patch and checks:
  --root DIR                  directory the patch paths are relative to (absolute with --ssh)
  --patch FILE                read the patch from FILE instead of stdin
  --dry-run                   plan and show the diffs, and the --expect flags (full SHA-256s of the
                              versions planned on) for the real run; change nothing
  --expect PATH=SHA256        the file must be exactly this version (repeatable)
  --matching MODE             exact | whitespace | lenient (default lenient)
  --encoding NAME             utf-8 (default) | latin1 | windows-1252: read and write the files in
                              that single-byte encoding, every byte kept exactly
  --require-sha-for-delete    a Delete needs an --expect for its path
  --shared-directories MODE   refuse (default) | allow: work in directories other users can
                              write (refused by default: unsafe_directory); see docs/security.md
  --trust-root-ancestors      accept a root whose parent directories other users can write
                              (refused by default under every policy; needs
                              --shared-directories=allow)
  --timeout-ms N              limit for each remote program (and the SSH handshake)
  --cache-dir DIR             keep the contents read and written in DIR (private, created 0700):
                              the next run on a file this run saw only has the host prove its
                              SHA-256 instead of downloading it again
  --compress MODE             auto (default: over SSH) | on | off: large reads travel compressed
                              (zstd or gzip on the host) and programs packed
  --json                      print exactly the report as JSON on stdout
  --reconcile FILE            settle an operation whose outcome was unknown, from the ticket in FILE
                              (a saved --json report or the printed ticket line; - reads stdin)

Remote host (without --ssh the files are on this machine):
  --ssh [user@]host[:port]    connect with SSH; host may be an ~/.ssh/config alias
  --identity FILE             private key file (repeatable); default: agent, config, ~/.ssh/id_*
  --known-hosts FILE          known_hosts file (default ~/.ssh/known_hosts)
  --ssh-config FILE           read this ssh_config alone, like ssh -F (default ~/.ssh/config, then
                              /etc/ssh/ssh_config; ~ is the passwd home, as for ssh)
  --accept-new-host-key       trust and record an unknown host key (a changed key is still refused)
  --sudo                      run the remote programs with sudo -n (NOPASSWD rule needed)
  --sudo-password-env VAR     implies --sudo: sudo -S with the password read from env VAR
  --password-env VAR          SSH password (password / keyboard-interactive login) from env VAR,
                              tried after the keys; never on the command line
  -h, --help                  show this text

Many hosts (one patch, each host planned on its own files; the connection flags above apply to each):
  --hosts LIST                comma-separated hosts (repeatable): HOST ([user@]host[:port], root --root),
                              NAME=HOST, NAME=ssh://[user@]host[:port]/path or NAME=DIR (a local directory)
  --canary N                  hosts done first, one at a time; any that fails stops the rollout (default 1)
  --max-failures N            once more than N hosts failed, start no more (default 0); running ones finish
  --concurrency N             most hosts in flight at once: connections and programs (default 8)
  --host-expect NAME=PATH=SHA256  that host's file must be exactly this version (repeatable; --expect is for all)
  Progress goes to stderr: a line per host (and a bar on a terminal). Ctrl-C once: no new host starts and
  the running ones finish; twice: the running ones are cancelled (a commit cut is reconciled); three times: quit.
  With --reconcile FILE, a saved --json fleet report is settled on the hosts it names.

Exit codes:
  0  applied (with --dry-run: planned); nothing left to do
  1  refused or failed before anything changed: the patch, a precondition, a
     conflict, a lock, permissions, or the connection (the report says why)
  2  usage error: bad flags, unreadable --patch or --identity file, no patch;
     nothing was contacted (message on stderr, nothing on stdout)
  3  files MAY have changed, or changed in an unclean way: the commit's
     outcome was unknown (outcome_unknown, partial_apply) and reconcile,
     which runs right after by itself, found diverged or mixed files or could
     not finish; the output says which files and the next step

After an unknown outcome the CLI runs reconcile at once: it finishes or
undoes the operation and the exit code becomes 0 (every file applied),
1 (nothing applied) or 3 (as above). --reconcile FILE does the same later.

With --hosts: 0 every host applied or already held the change (dry run: would apply),
1 some host failed, was cancelled or not started and no file is in doubt, 3 some host's
files may have changed uncleanly (reconcile, run at once, left it unsettled or diverged).
`;

/** Checked options of one CLI run. */
export interface ApplyCliOptions {
  /** Absolute root (a local relative root is resolved against the cwd). */
  root: string;
  /** `undefined`: read the patch from stdin. */
  patchFile?: string;
  dryRun: boolean;
  json: boolean;
  expectedSha256: Record<string, string>;
  matching?: MatchingMode;
  /** `--encoding`: how the files are decoded and new text encoded. */
  encoding?: TextEncodingName;
  requireShaForDelete: boolean;
  /** `--shared-directories`: what to do with directories other users can write. */
  sharedDirectories?: SharedDirectories;
  /** `--trust-root-ancestors`: accept a root below a directory other users can write. */
  trustRootAncestors?: boolean;
  /** `--cache-dir DIR`: a SnapshotCache on disk. */
  cacheDir?: string;
  /** `--compress`: "auto" | true | false. */
  compress?: "auto" | boolean;
  timeoutMs?: number;
  /** The `--ssh` destination as written and parsed; absent: LocalShell. */
  ssh?: { text: string; destination: SshDestination };
  identityFiles: string[];
  knownHostsFile?: string;
  /** `--ssh-config FILE` (like `ssh -F`). */
  sshConfigFile?: string;
  acceptNewHostKey: boolean;
  sudo: boolean;
  /** Name of the environment variable holding the sudo password. */
  sudoPasswordEnv?: string;
  /** Name of the environment variable holding the SSH login password. */
  passwordEnv?: string;
  /** `--reconcile FILE` (`-`: stdin): settle an operation instead of applying a patch. */
  reconcileFile?: string;
  /** `--hosts`: a fleet run (then `root` is only the default root of the hosts, each has its own). */
  fleet?: FleetCliOptions;
}

/** The many-hosts flags. */
export interface FleetCliOptions {
  hosts: HostEntry[];
  canary: number;
  maxFailures: number;
  concurrency: number;
  /** `--host-expect`: per host name, path → SHA-256. */
  hostExpect: Record<string, Record<string, string>>;
}

/** What the command line asked for. */
export type ParsedArgs =
  | { kind: "help" }
  | { kind: "run"; options: ApplyCliOptions }
  | { kind: "usage_error"; message: string };

const MATCHING: readonly MatchingMode[] = ["exact", "whitespace", "lenient"];
const ENCODINGS: readonly TextEncodingName[] = ["utf-8", "latin1", "windows-1252"];
const SHA256 = /^[0-9a-f]{64}$/;

/**
 * Parse argv (without the runtime and script) into checked options.
 * Never throws for bad input: it returns a `usage_error` with the reason.
 *
 * @example
 * ```ts
 * const parsed = parseApplyArgs(["--root", "/srv/site", "--dry-run"]);
 * if (parsed.kind === "run") parsed.options.dryRun; // true
 * ```
 */
export function parseApplyArgs(argv: readonly string[]): ParsedArgs {
  const strange = unknownFlags(argv);
  if (strange !== null) return usageError(strange);
  let flags: Flags;
  try {
    flags = readFlags(argv);
  } catch (error) {
    return usageError((error as Error).message);
  }
  const { values, positionals } = flags;
  if (values.help) return { kind: "help" };
  if (positionals.length > 0) return usageError(`unexpected argument ${JSON.stringify(positionals[0])} (the patch comes on stdin or with --patch FILE)`);
  const fleet = fleetOptions(values);
  if (typeof fleet === "string") return usageError(fleet);
  if (fleet === undefined && (values.root === undefined || values.root === "")) return usageError("--root DIR is required");

  // No prototype: on a plain {} a path named __proto__ was silently dropped
  // (the assignment hits the prototype setter), so its precondition vanished.
  const expectedSha256: Record<string, string> = Object.create(null);
  for (const item of values.expect ?? []) {
    const at = item.lastIndexOf("=");
    const path = item.slice(0, at);
    const sha = item.slice(at + 1).toLowerCase();
    if (at <= 0 || !SHA256.test(sha)) return usageError(`--expect ${JSON.stringify(item)}: expected PATH=SHA256 (64 hex digits)`);
    if (Object.hasOwn(expectedSha256, path) && expectedSha256[path] !== sha) return usageError(`--expect ${JSON.stringify(path)} is given twice with different SHA-256s; give the one of the version you read, once`);
    expectedSha256[path] = sha;
  }
  const shared = values["shared-directories"] as SharedDirectories | undefined;
  if (shared !== undefined && shared !== "refuse" && shared !== "allow") {
    return usageError(`--shared-directories must be refuse or allow, not ${JSON.stringify(shared)}`);
  }
  const compressFlag = values.compress;
  if (compressFlag !== undefined && !["auto", "on", "off"].includes(compressFlag)) {
    return usageError(`--compress must be auto, on or off, not ${JSON.stringify(compressFlag)}`);
  }
  const compress = compressFlag === undefined ? undefined : compressFlag === "auto" ? "auto" as const : compressFlag === "on";
  const cacheDir = values["cache-dir"];
  if (cacheDir === "") return usageError("--cache-dir needs a directory");
  const matching = values.matching as MatchingMode | undefined;
  if (matching !== undefined && !MATCHING.includes(matching)) {
    return usageError(`--matching must be one of ${MATCHING.join(", ")}, not ${JSON.stringify(matching)}`);
  }
  const encoding = values.encoding as TextEncodingName | undefined;
  if (encoding !== undefined && !ENCODINGS.includes(encoding)) {
    return usageError(`--encoding must be one of ${ENCODINGS.join(", ")}, not ${JSON.stringify(encoding)}`);
  }
  let timeoutMs: number | undefined;
  if (values["timeout-ms"] !== undefined) {
    timeoutMs = Number(values["timeout-ms"]);
    if (!/^\d+$/.test(values["timeout-ms"]) || timeoutMs <= 0) return usageError("--timeout-ms must be a positive whole number of milliseconds");
  }

  let ssh: ApplyCliOptions["ssh"];
  if (values.ssh !== undefined) {
    const destination = parseSshDestination(values.ssh);
    if (destination === null) return usageError(`--ssh ${JSON.stringify(values.ssh)} is not [user@]host[:port]`);
    ssh = { text: values.ssh, destination };
    if (!values.root!.startsWith("/")) return usageError("with --ssh, --root must be an absolute path on the remote host");
  } else if (!fleet?.hosts.some((h) => h.ssh !== undefined)) {
    // These only mean something to an SSH connection; silently ignoring them
    // would let `--sudo` look like it worked while nothing was elevated.
    const sshOnly = ["identity", "known-hosts", "ssh-config", "accept-new-host-key", "sudo", "sudo-password-env", "password-env"] as const;
    const given = sshOnly.find((name) => values[name] !== undefined);
    if (given !== undefined) return usageError(`--${given} needs --ssh (on this machine, run the CLI itself with the rights it needs)`);
  }
  const identityFiles = values.identity ?? [];
  const unreadable = identityFiles.find((file) => !existsSync(file));
  if (unreadable !== undefined) return usageError(`--identity ${unreadable}: no such file`);

  const sudoPasswordEnv = values["sudo-password-env"];
  if (sudoPasswordEnv !== undefined && !process.env[sudoPasswordEnv]) {
    return usageError(`--sudo-password-env ${sudoPasswordEnv}: that environment variable is not set`);
  }
  const passwordEnv = values["password-env"];
  if (passwordEnv !== undefined && !process.env[passwordEnv]) {
    return usageError(`--password-env ${passwordEnv}: that environment variable is not set`);
  }
  if (values["ssh-config"] !== undefined && !existsSync(values["ssh-config"])) return usageError(`--ssh-config ${values["ssh-config"]}: no such file`);
  if (values.patch !== undefined && !existsSync(values.patch)) return usageError(`--patch ${values.patch}: no such file`);
  const reconcileFile = values.reconcile;
  if (reconcileFile !== undefined) {
    // reconcile settles what an earlier run planned: nothing here may change that plan.
    const patchOnly = ["patch", "dry-run", "expect", "matching", "encoding", "require-sha-for-delete", "canary", "max-failures", "host-expect"] as const;
    const given = patchOnly.find((name) => values[name] !== undefined);
    if (given !== undefined) return usageError(`--${given} cannot be combined with --reconcile (it settles the operation the ticket names)`);
    if (reconcileFile !== "-" && !existsSync(reconcileFile)) return usageError(`--reconcile ${reconcileFile}: no such file`);
  }

  return {
    kind: "run",
    options: {
      root: ssh || fleet ? values.root ?? "" : resolve(values.root!),
      ...(values.patch !== undefined ? { patchFile: values.patch } : {}),
      dryRun: values["dry-run"] === true,
      json: values.json === true,
      expectedSha256,
      ...(matching !== undefined ? { matching } : {}),
      ...(encoding !== undefined ? { encoding } : {}),
      requireShaForDelete: values["require-sha-for-delete"] === true,
      ...(shared !== undefined ? { sharedDirectories: shared } : {}),
      ...(values["trust-root-ancestors"] === true ? { trustRootAncestors: true } : {}),
      ...(cacheDir !== undefined ? { cacheDir: resolve(cacheDir) } : {}),
      ...(compress !== undefined ? { compress } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(ssh ? { ssh } : {}),
      identityFiles,
      ...(values["known-hosts"] !== undefined ? { knownHostsFile: values["known-hosts"] } : {}),
      ...(values["ssh-config"] !== undefined ? { sshConfigFile: values["ssh-config"] } : {}),
      acceptNewHostKey: values["accept-new-host-key"] === true,
      sudo: values.sudo === true || sudoPasswordEnv !== undefined,
      ...(sudoPasswordEnv !== undefined ? { sudoPasswordEnv } : {}),
      ...(passwordEnv !== undefined ? { passwordEnv } : {}),
      ...(reconcileFile !== undefined ? { reconcileFile } : {}),
      ...(fleet !== undefined ? { fleet } : {}),
    },
  };
}

/** The many-hosts flags, `undefined` without `--hosts`, or a usage error. */
function fleetOptions(values: Flags["values"]): FleetCliOptions | undefined | string {
  const only = (["canary", "max-failures", "concurrency", "host-expect"] as const).find((name) => values[name] !== undefined);
  if (values.hosts === undefined) return only === undefined ? undefined : `--${only} needs --hosts`;
  if (values.ssh !== undefined) return "--hosts and --ssh do not go together: list every host in --hosts";
  const root = values.root === undefined || values.root === "" ? undefined : values.root;
  const hosts = parseHosts(values.hosts, root);
  if (typeof hosts === "string") return hosts;
  const count = (flag: "canary" | "max-failures" | "concurrency", fallback: number, min: number): number | string => {
    const text = values[flag];
    if (text === undefined) return fallback;
    return /^\d+$/.test(text) && Number(text) >= min ? Number(text) : `--${flag} must be a whole number ≥ ${min}, not ${JSON.stringify(text)}`;
  };
  const canary = count("canary", 1, 0);
  const maxFailures = count("max-failures", 0, 0);
  const concurrency = count("concurrency", 8, 1);
  for (const n of [canary, maxFailures, concurrency]) if (typeof n === "string") return n;
  const hostExpect = parseHostExpect(values["host-expect"] ?? [], hosts.map((h) => h.name));
  if (typeof hostExpect === "string") return hostExpect;
  return { hosts, canary: canary as number, maxFailures: maxFailures as number, concurrency: concurrency as number, hostExpect };
}

/** Every flag of the CLI (USAGE), as node:util parseArgs takes them. */
const FLAGS = {
  root: { type: "string" },
  patch: { type: "string" },
  "dry-run": { type: "boolean" },
  expect: { type: "string", multiple: true },
  json: { type: "boolean" },
  matching: { type: "string" },
  encoding: { type: "string" },
  "require-sha-for-delete": { type: "boolean" },
  "shared-directories": { type: "string" },
  "trust-root-ancestors": { type: "boolean" },
  "timeout-ms": { type: "string" },
  "cache-dir": { type: "string" },
  compress: { type: "string" },
  ssh: { type: "string" },
  identity: { type: "string", multiple: true },
  "known-hosts": { type: "string" },
  "ssh-config": { type: "string" },
  "accept-new-host-key": { type: "boolean" },
  sudo: { type: "boolean" },
  "sudo-password-env": { type: "string" },
  "password-env": { type: "string" },
  reconcile: { type: "string" },
  hosts: { type: "string", multiple: true },
  canary: { type: "string" },
  "max-failures": { type: "string" },
  concurrency: { type: "string" },
  "host-expect": { type: "string", multiple: true },
  help: { type: "boolean", short: "h" },
} as const;
const FLAG_NAMES: readonly string[] = Object.keys(FLAGS);

function readFlags(argv: readonly string[]) {
  const flags = parseArgs({ args: [...argv], strict: true, allowPositionals: true, options: FLAGS, tokens: true });
  // parseArgs keeps the last of a repeated flag: `--root /srv/app … --root /srv/other` ran on the
  // second without a word. A value flag that is not repeatable is given once (as the MCP server's).
  const seen = new Map<string, number>();
  for (const token of flags.tokens) if (token.kind === "option") seen.set(token.name, (seen.get(token.name) ?? 0) + 1);
  for (const [name, count] of seen) {
    const spec = (FLAGS as Record<string, { type: string; multiple?: boolean }>)[name];
    if (count > 1 && spec?.type === "string" && spec.multiple !== true) throw new Error(`--${name} is given ${count} times; give it once`);
  }
  return flags;
}

/**
 * A flag the CLI does not have, named with the closest one it has
 * ("unknown flag --dryrun: did you mean --dry-run? nothing was applied"),
 * or null. parseArgs would refuse it too, but in its own words and without
 * the suggestion; a misspelt --dry-run must never be mistaken for a run.
 * Values of string flags are skipped (`--patch --odd-name` is a file), and
 * everything after `--` is a positional.
 */
function unknownFlags(argv: readonly string[]): string | null {
  const unknown: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") break;
    if (!arg.startsWith("-") || arg === "-") continue;
    const name = arg.startsWith("--") ? arg.slice(2).split("=")[0]! : arg.slice(1);
    const flag = arg.startsWith("--") ? FLAG_NAMES.find((f) => f === name) : FLAG_NAMES.find((f) => (FLAGS as Record<string, { short?: string }>)[f]!.short === name);
    if (flag === undefined) {
      unknown.push(arg.startsWith("--") ? name : arg);
      continue;
    }
    if ((FLAGS as Record<string, { type: string }>)[flag]!.type === "string" && !arg.includes("=")) i++;
  }
  if (unknown.length === 0) return null;
  const text = unknownNamesText(unknownNames(unknown, FLAG_NAMES), "flag", FLAG_NAMES, (name) => (name.startsWith("-") ? name : `--${name}`));
  return `${text}${text.endsWith("?") ? "" : ";"} nothing was applied (see --help)`;
}
type Flags = ReturnType<typeof readFlags>;

function usageError(message: string): ParsedArgs {
  return { kind: "usage_error", message };
}
