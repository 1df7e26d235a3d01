/**
 * The CLI's SSH connection: connectSsh options from the command line's
 * connection flags, for one destination (`--ssh`, or each host of
 * `--hosts`), and the connection notes that go to stderr.
 *
 * @module
 */
import { connectSsh } from "../../mod.ts";
import type { SshDestination, SshOptions, SshShell } from "../../mod.ts";
import type { ApplyCliOptions } from "./args.ts";

/**
 * connectSsh options for `destination` under this run's connection flags.
 *
 * @example
 * ```ts
 * const shell = await connectSsh(sshOptionsFor(options, { host: "web1" }));
 * ```
 */
export function sshOptionsFor(options: ApplyCliOptions, destination: SshDestination): SshOptions {
  const passwordVar = options.sudoPasswordEnv;
  return {
    host: destination.host, // an ~/.ssh/config alias resolves inside connectSsh
    ...(destination.port !== undefined ? { port: destination.port } : {}),
    ...(destination.user !== undefined ? { username: destination.user } : {}),
    ...(options.identityFiles.length > 0 ? { identityFile: options.identityFiles } : {}),
    ...(options.knownHostsFile !== undefined ? { knownHostsFile: options.knownHostsFile } : {}),
    ...(options.sshConfigFile !== undefined ? { sshConfigFile: options.sshConfigFile } : {}),
    hostKeyPolicy: options.acceptNewHostKey ? "accept-new" : "strict",
    // The user's own ssh_config ProxyCommand runs, as with ssh (logged as an ssh config note).
    allowProxyCommand: true,
    ...(options.passwordEnv !== undefined ? { password: () => Promise.resolve(process.env[options.passwordEnv!] ?? "") } : {}),
    ...(options.timeoutMs !== undefined ? { readyTimeoutMs: options.timeoutMs } : {}),
    ...(passwordVar !== undefined
      ? { sudo: { password: () => Promise.resolve(process.env[passwordVar] ?? "") } }
      : options.sudo
      ? { sudo: true }
      : {}),
  };
}

/**
 * Connect, and write the connection's notes (ssh_config settings not
 * applied, host keys recorded by --accept-new-host-key) to stderr, each
 * line prefixed with `prefix` (a host name in a fleet run): stdout is only
 * ever the report.
 *
 * @example
 * ```ts
 * const shell = await connectWithNotes(options, destination);
 * ```
 */
export async function connectWithNotes(options: ApplyCliOptions, destination: SshDestination, prefix = ""): Promise<SshShell> {
  // Warnings as they happen (a lowered channel limit comes later than the connect).
  const shell = await connectSsh({ ...sshOptionsFor(options, destination), onWarning: (note) => void process.stderr.write(`${prefix}ssh: ${note.message}\n`) });
  for (const note of shell.configWarnings) process.stderr.write(`${prefix}ssh config: ${note}\n`);
  for (const added of shell.addedHostKeys) process.stderr.write(`${prefix}known_hosts: recorded a new host key ${JSON.stringify(added)}\n`);
  return shell;
}
