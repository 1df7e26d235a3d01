/**
 * One shell per target: a single LocalShell for local roots, and one pooled
 * SSH connection per `user@host:port` + connection options, opened on first
 * use, shared by every root on that host — with `sudo` or without: a sudo
 * root runs on a `withSudo` view of the same connection — closed on shutdown.
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
 * The connectSsh options of an ssh root (its `sudo` included; the pool
 * connects without it and elevates through a view, see {@linkcode ShellPool}).
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
  if (o.sudoPasswordEnv !== undefined) {
    const name = o.sudoPasswordEnv;
    // Read on each sudo check (once per connection), so the operator may rotate it; sudo gets it on stdin only.
    options.sudo = { password: () => Promise.resolve(process.env[name] ?? "") };
  } else if (o.sudo !== undefined) options.sudo = o.sudo;
  return options;
}

/**
 * Which sudo view of a pooled connection a root needs: null (none, the
 * login user), "nopasswd" (`sudo -n`) or `env:VAR` (`sudo -S` with that
 * variable's password). Roots with the same key share one view, and so one
 * sudo check per connection.
 */
function sudoViewKey(root: RootConfig): string | null {
  const o = root.options;
  if (o.sudoPasswordEnv !== undefined) return `env:${o.sudoPasswordEnv}`;
  return o.sudo === true ? "nopasswd" : null;
}

/**
 * The server's shells. SSH connections are created lazily (a root on a host
 * that is down does not stop the server from starting) and kept: the
 * adapter reconnects by itself on the next call after a drop. A failed
 * connect is forgotten, so the next call tries again.
 *
 * Roots share a connection when everything that decides where and as whom
 * it logs in is equal: host, port, user, identity file, known-hosts file,
 * host-key policy, ssh_config file and jump hosts (the key is all of
 * {@linkcode sshOptionsOf} but `sudo`, as configured: an alias and its
 * HostName, or a user given and the same user from ssh_config, count as
 * different). Elevation is not part of the key: the connection logs in
 * without sudo and a sudo root gets a {@linkcode SshShell.withSudo} view of
 * it — one per connection and sudo mode (`sudo` or `sudoPasswordEnv=VAR`),
 * shared by the roots with that mode, so sudo is checked once per
 * connection (again after a reconnect), not per call, and a refused sudo
 * (wrong password, no NOPASSWD rule) fails only the roots of that view.
 * Different credentials never share.
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
  /** The sudo views of each pooled connection by {@linkcode sudoViewKey}, made on first use by a sudo root. */
  readonly #sudoViews = new WeakMap<SshShell, Map<string, SshShell>>();
  readonly #log: (line: string) => void;

  constructor(log: (line: string) => void = () => {}) {
    this.#log = log;
  }

  /** The shell of `root` (see {@linkcode ShellSource.shellFor}). */
  async shellFor(root: RootConfig): Promise<RemoteShell> {
    if (root.kind === "local") return this.#local;
    const { sudo, ...options } = sshOptionsOf(root);
    const shell = await this.#connection(options, root);
    const viewKey = sudoViewKey(root);
    if (sudo === undefined || sudo === false || viewKey === null) return shell;
    let views = this.#sudoViews.get(shell);
    if (views === undefined) this.#sudoViews.set(shell, (views = new Map()));
    let view = views.get(viewKey);
    if (view === undefined) {
      view = shell.withSudo(sudo);
      views.set(viewKey, view);
    }
    return view;
  }

  /** The pooled connection for `options` (connecting on first use). */
  #connection(options: SshOptions, root: RootConfig): Promise<SshShell> {
    const key = JSON.stringify(options);
    let pending = this.#ssh.get(key);
    if (pending === undefined) {
      // Warnings come as they happen (a lowered channel limit can come at any call), not only at connect.
      const attempt = connectSsh({ ...options, onWarning: (w) => this.#log(`${root.label}: [${w.code}] ${w.message}`) });
      pending = attempt;
      this.#ssh.set(key, attempt);
      attempt.then(
        (shell) => {
          this.#log(`connected to ${shell.label}`);
          for (const added of shell.addedHostKeys) this.#log(`accept-new: added ${added.fingerprint} for ${added.host} to ${added.file}`);
          for (const note of shell.configWarnings) this.#log(`${shell.label}: ${note}`);
        },
        (error: Error) => {
          if (this.#ssh.get(key) === attempt) this.#ssh.delete(key);
          this.#log(`cannot connect for root ${root.name} (${root.label}): ${error.message}`);
        },
      );
    }
    return pending;
  }

  /** Close every SSH connection (and with it the sudo views on it). */
  async close(): Promise<void> {
    const pending = [...this.#ssh.values()];
    this.#ssh.clear();
    await Promise.allSettled(pending.map(async (p) => (await p).close()));
  }
}
