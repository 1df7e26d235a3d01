/**
 * One shell per target: a single LocalShell for local roots, and one pooled
 * SSH connection per `user@host:port` + connection options, opened on first
 * use, shared by every root on that host, closed on shutdown.
 *
 * @module
 */
import { LocalShell, connectSsh } from "../../mod.ts";
import type { RemoteShell, SshOptions, SshShell } from "../../mod.ts";
import type { RootConfig } from "./roots.ts";

/** Where the tools get the shell of a root (tests wrap it to inject faults). */
export interface ShellSource {
  /** The shell of `root`; rejects with a RemoteShellError when it cannot connect. */
  shellFor(root: RootConfig): Promise<RemoteShell>;
}

/**
 * The connectSsh options of an ssh root.
 *
 * @example
 * ```ts
 * sshOptionsOf(root); // { host: "web1", port: 2222, username: "deploy", knownHostsFile: "/home/me/.ssh/known_hosts" }
 * ```
 */
export function sshOptionsOf(root: RootConfig): SshOptions {
  if (root.kind !== "ssh" || root.ssh === undefined) throw new TypeError(`root ${root.name} is not an ssh root`);
  const o = root.options;
  // The operator's own ssh_config ProxyCommand runs (as ssh would run it); the pool logs it as a
  // config note when it does. Models never choose hosts or commands: roots come from the operator.
  const options: SshOptions = { host: root.ssh.host, allowProxyCommand: true };
  if (root.ssh.port !== undefined) options.port = root.ssh.port;
  if (root.ssh.user !== undefined) options.username = root.ssh.user;
  if (o.identityFile !== undefined) options.identityFile = o.identityFile;
  if (o.knownHostsFile !== undefined) options.knownHostsFile = o.knownHostsFile;
  if (o.hostKeyPolicy !== undefined) options.hostKeyPolicy = o.hostKeyPolicy;
  if (o.sshConfigFile !== undefined) options.sshConfigFile = o.sshConfigFile;
  if (o.proxyJump !== undefined) options.proxyJump = o.proxyJump;
  if (o.sudo !== undefined) options.sudo = o.sudo;
  return options;
}

/**
 * The server's shells. SSH connections are created lazily (a root on a host
 * that is down does not stop the server from starting) and kept: the
 * adapter reconnects by itself on the next call after a drop. A failed
 * connect is forgotten, so the next call tries again.
 *
 * @example
 * ```ts
 * const pool = new ShellPool((line) => console.error(line));
 * const shell = await pool.shellFor(root);
 * await pool.close();
 * ```
 */
export class ShellPool implements ShellSource {
  readonly #local = new LocalShell();
  readonly #ssh = new Map<string, Promise<SshShell>>();
  readonly #log: (line: string) => void;

  constructor(log: (line: string) => void = () => {}) {
    this.#log = log;
  }

  /** The shell of `root` (see {@linkcode ShellSource.shellFor}). */
  shellFor(root: RootConfig): Promise<RemoteShell> {
    if (root.kind === "local") return Promise.resolve(this.#local);
    const options = sshOptionsOf(root);
    const key = JSON.stringify(options);
    let pending = this.#ssh.get(key);
    if (pending === undefined) {
      const attempt = connectSsh(options);
      pending = attempt;
      this.#ssh.set(key, attempt);
      attempt.then(
        (shell) => {
          this.#log(`connected to ${shell.label}`);
          for (const added of shell.addedHostKeys) this.#log(`accept-new: added ${added.fingerprint} for ${added.host} to ${added.file}`);
          for (const note of [...shell.configWarnings, ...shell.warnings.map((w) => w.message)]) this.#log(`${shell.label}: ${note}`);
        },
        (error: Error) => {
          if (this.#ssh.get(key) === attempt) this.#ssh.delete(key);
          this.#log(`cannot connect for root ${root.name} (${root.label}): ${error.message}`);
        },
      );
    }
    return pending;
  }

  /** Close every SSH connection. */
  async close(): Promise<void> {
    const pending = [...this.#ssh.values()];
    this.#ssh.clear();
    await Promise.allSettled(pending.map(async (p) => (await p).close()));
  }
}
