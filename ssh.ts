/**
 * ssh-apply-patch/ssh: the OpenSSH-compatible adapter. `connectSsh` opens a
 * {@linkcode SshShell} (a `RemoteShell`) to a host with ssh2: host keys
 * verified against known_hosts before authentication, keys, agent,
 * passwords and passphrases from callbacks (never logged), `~/.ssh/config`
 * (without running anything it names), jump hosts, sudo. Pass the shell to
 * `applyPatch`, `readSnapshots` or `commitRemote` from the main entry.
 * Everything here is also exported by the main entry.
 *
 * @example
 * ```ts
 * import { connectSsh } from "./ssh.ts";
 * import { applyPatch } from "./mod.ts";
 *
 * const shell = await connectSsh({ host: "web1" });
 * const report = await applyPatch(shell, { root: "/srv/app", patch: "*** Begin Patch\n*** Delete File: old.txt\n*** End Patch" });
 * await shell.close();
 * ```
 *
 * @module
 */

export { connectSsh, SshShell } from "./lib/ssh/shell.ts";
export type { HostKeyPolicy, SshOptions } from "./lib/ssh/shell.ts";
export type { SudoOption } from "./lib/ssh/sudo.ts";
export type { PassphraseSource, PasswordRequest, PasswordSource } from "./lib/ssh/auth.ts";
export type { AddedHostKey } from "./lib/ssh/connect.ts";
export { parseSshDestination } from "./lib/ssh/destination.ts";
export type { SshDestination } from "./lib/ssh/destination.ts";
export { fingerprintSha256, formatKnownHostsLine, knownKeyTypes, parseKnownHosts, verifyHostKey } from "./lib/ssh/known_hosts.ts";
export type { HostKeyVerdict, KnownHostEntry, KnownHosts, KnownHostsProblem } from "./lib/ssh/known_hosts.ts";
export { resolveSshConfig } from "./lib/ssh/config.ts";
export type { ResolvedSshHost, SshConfigGiven, SshConfigSource } from "./lib/ssh/config.ts";
