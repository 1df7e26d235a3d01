/**
 * The shells the remote-engine contract suite (test/contract/) runs
 * against — issue 4: "one contract suite runs the remote-engine tests
 * against both LocalShell and SshShell (parameterised, not copied)".
 *
 * The cases, in order:
 * - `sh`, `dash`, `bash`, `busybox` — {@linkcode LocalShell} under each
 *   shell (BusyBox with a pure BusyBox userland), from
 *   {@linkcode shellCases}. `sh` is left out when /bin/sh is the very same
 *   binary as dash or bash (Debian: dash), since it would repeat that case.
 * - `ssh-root` — an {@linkcode SshShell} logged in as root.
 * - `ssh-sudo` — the non-root test user elevated with `sudo -n` (NOPASSWD
 *   rule from the harness). Its shared adapter (`open()`) is a
 *   `withSudo(true)` view of a plain connection (as the MCP server's pool
 *   gives a sudo root), so every contract test — cuts and reconnects, the
 *   sudo check again after one, exec counts — runs on a view; `openNew()`
 *   is `connectSsh({ sudo: true })`, so the other form is covered too.
 *
 * Both SSH cases go through their own TCP proxy in front of one throwaway
 * sshd per test file, so `cut()` can break the connection at a moment the
 * test chooses. Both act as root on the same machine, so a test builds its
 * trees in /tmp with node:fs and checks them exactly as for LocalShell as
 * root (the SSH cases exist only when the tests run as root: the harness
 * needs root for the test user and sudoers rule). The sshd gets
 * `SetEnv SHLVL=1`: bash (root's and the test user's login shell) then
 * skips ~/.bashrc for ssh commands, so a developer machine's rc files
 * (pyenv init in root's .bashrc costs ~200 ms per exec here) do not slow
 * every exec; the programs run under `sh -c` either way.
 *
 * Availability: without an sshd (or not as root) the SSH cases are left
 * out with the harness's loud banner, and `REQUIRE_SSHD=1` (CI) makes the
 * file fail instead (see {@linkcode sshdReady}).
 *
 * Runtime budget (`npm test` should stay around two minutes; the choice is
 * made in each test file): every contract test runs on every case — the
 * §10 regressions, faults, locks, exec counts for 1 and 20 files — except
 * - the concurrent opposite-order commits (several rounds of two commits),
 *   which run on {@linkcode HEAVY_SHELLS}: dash (the common /bin/sh),
 *   BusyBox (the most unlike GNU) and both SSH cases, leaving out bash,
 *   whose programs are the slowest and which every other test covers;
 * - the ~90-scenario suite (test/contract/scenarios.test.ts), which runs on
 *   BusyBox and ssh-sudo (the most unlike GNU locally, and the whole remote
 *   stack), widened with `SAP_SCENARIO_SHELLS`;
 * - the disconnect-after-rename tests, which need `cut()` (SSH cases; the
 *   local cases get the same outcome_unknown → reconcile path from SIGKILL
 *   at the same hook);
 * - the `started` transport tests, which are about the SSH adapter.
 * `SAP_TEST_SHELLS=dash,ssh-sudo` narrows every list (all case names).
 *
 * @module
 */
import { afterAll } from "bun:test";
import { realpathSync } from "node:fs";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import type { RemoteShell } from "../../lib/remote/shell.ts";
import { connectSsh } from "../../lib/ssh/shell.ts";
import type { SshOptions, SshShell } from "../../lib/ssh/shell.ts";
import { shellCases, tempDir } from "./local_trees.ts";
import type { ShellCase } from "./local_trees.ts";
import { ensureTestUsers, sshdReady, startSshd, writeKnownHosts } from "./sshd.ts";
import type { Sshd } from "./sshd.ts";
import { startTcpProxy } from "./tcp_proxy.ts";
import type { TcpProxy } from "./tcp_proxy.ts";

/** One adapter configuration the contract suite runs against. */
export interface ShellUnderTest {
  /** `sh`, `dash`, `bash`, `busybox`, `ssh-root` or `ssh-sudo`. */
  readonly name: string;
  readonly transport: "local" | "ssh";
  /**
   * The adapter to use: a new LocalShell (private empty working directory)
   * for local cases; for SSH cases the file's shared connection of this case
   * (connected on first use; it reconnects by itself after a cut). Do not
   * close it — the harness does after the file.
   */
  open(): Promise<RemoteShell>;
  /**
   * A separate adapter: for SSH a new connection (a "restart", or a second
   * client for concurrency tests); for local cases the same as `open()`.
   * The harness closes it after the file; closing it earlier is fine.
   */
  openNew(): Promise<RemoteShell>;
  /** What every report's `elevated` must say for this case. */
  readonly expectElevated: boolean;
  /**
   * Cut (TCP reset) every connection this case has open, through its proxy,
   * like a network failure; the next exec reconnects. SSH cases only.
   */
  cut?(): void;
  /**
   * SSH cases: how many exec requests the server has started for this
   * case's user so far (from the sshd log) — counts round trips below the
   * adapter (the sudo probe of a new connection included).
   */
  serverExecs?(): Promise<number>;
  /** Whether the remote userland can see POSIX ACLs (GNU ls; BusyBox ls cannot: documented). */
  readonly seesAcls: boolean;
}

/** Case names of the heavy tests (see the module doc for why). */
export const HEAVY_SHELLS: readonly string[] = ["dash", "busybox", "ssh-root", "ssh-sudo"];

/** Options of {@linkcode shellsUnderTest}. */
export interface ShellsUnderTestOptions {
  /** What the file tests, for the sshd-missing banner or failure. */
  suite: string;
}

/**
 * Every case, for one test file. Call it ONCE per file at top level: it
 * registers an `afterAll` that closes the SSH connections and stops that
 * file's sshd and proxies (started lazily, on the first SSH `open`).
 *
 * @example
 * ```ts
 * const shells = shellsUnderTest({ suite: "contract: commit" });
 * for (const c of shells) describe(`commit (${c.name})`, () => { ... });
 * for (const c of only(shells, HEAVY_SHELLS)) { ... }
 * ```
 */
export function shellsUnderTest(options: ShellsUnderTestOptions): ShellUnderTest[] {
  const narrowed = process.env.SAP_TEST_SHELLS?.split(",").map((s) => s.trim()).filter(Boolean);
  const wanted = (name: string): boolean => !narrowed || narrowed.length === 0 || narrowed.includes(name);
  const cases: ShellUnderTest[] = distinctLocalCases().filter((c) => wanted(c.name)).map(localCase);
  const sshNames = ["ssh-root", "ssh-sudo"].filter(wanted);
  if (sshNames.length > 0 && sshdReady(`${options.suite} over SSH (ssh-root, ssh-sudo)`, true)) {
    const harness = new SshHarness();
    afterAll(() => harness.stop(), 30_000);
    if (sshNames.includes("ssh-root")) cases.push(sshCase(harness, "ssh-root", "root", false));
    if (sshNames.includes("ssh-sudo")) cases.push(sshCase(harness, "ssh-sudo", ensureTestUsers().nopasswdUser, true));
  }
  return cases;
}

/**
 * The cases named in `names`, in list order.
 *
 * @example
 * ```ts
 * for (const c of only(shells, HEAVY_SHELLS)) describe(c.name, () => {});
 * ```
 */
export function only(cases: readonly ShellUnderTest[], names: readonly string[]): ShellUnderTest[] {
  return cases.filter((c) => names.includes(c.name));
}

/** `sh` is dropped when it resolves to the same binary as dash or bash. */
function distinctLocalCases(): ShellCase[] {
  const all = shellCases();
  const binary = (name: string): string | null => {
    const found = name.startsWith("/") ? name : Bun.which(name);
    try {
      return found === null ? null : realpathSync(found);
    } catch {
      return null;
    }
  };
  const sh = binary("/bin/sh");
  const others = [binary("dash"), binary("bash")];
  return all.filter((c) => c.name !== "sh" || sh === null || !others.includes(sh));
}

function localCase(c: ShellCase): ShellUnderTest {
  const open = (): Promise<RemoteShell> => Promise.resolve(new LocalShell({ ...c.options, cwd: tempDir("sap-cwd-") }));
  return { name: c.name, transport: "local", open, openNew: open, expectElevated: false, seesAcls: c.name !== "busybox" };
}

interface Running {
  sshd: Sshd;
  knownHosts: string;
  proxies: Map<string, TcpProxy>;
}

/** One sshd and one proxy per SSH case, for one test file; started on first use. */
class SshHarness {
  #running: Promise<Running> | null = null;
  /** Set once started, so `cut()` acts synchronously. */
  #live: Running | null = null;
  readonly #opened: SshShell[] = [];
  readonly #shared = new Map<string, Promise<SshShell>>();

  start(): Promise<Running> {
    this.#running ??= (async () => {
      const sshd = await startSshd({ extraConfig: ["SetEnv SHLVL=1"] });
      const proxies = new Map<string, TcpProxy>();
      for (const name of ["ssh-root", "ssh-sudo"]) proxies.set(name, await startTcpProxy({ targetPort: sshd.port }));
      const lines = [...proxies.values()].map((p) => sshd.hostKeyLine.replace(`]:${sshd.port} `, `]:${p.port} `));
      this.#live = { sshd, proxies, knownHosts: writeKnownHosts(sshd.dir, lines) };
      return this.#live;
    })();
    return this.#running;
  }

  async connect(name: string, user: string, sudo: boolean): Promise<SshShell> {
    const { sshd, proxies, knownHosts } = await this.start();
    const options: SshOptions = {
      host: "127.0.0.1",
      port: proxies.get(name)!.port,
      username: user,
      identityFile: sshd.userKeyPath,
      knownHostsFile: knownHosts,
      sshConfigFile: false,
      agent: false,
      ...(sudo ? { sudo: true } : {}),
    };
    const shell = await connectSsh(options);
    this.#opened.push(shell);
    return shell;
  }

  shared(name: string, user: string, sudo: boolean): Promise<SshShell> {
    let shell = this.#shared.get(name);
    if (shell === undefined) {
      // A view of a plain connection (see the module doc); the harness closes the connection itself.
      shell = sudo ? this.connect(name, user, false).then((plain) => plain.withSudo(true)) : this.connect(name, user, false);
      this.#shared.set(name, shell);
      shell.catch(() => this.#shared.delete(name));
    }
    return shell;
  }

  cut(name: string): void {
    // Only a started harness has connections to cut.
    this.#live?.proxies.get(name)!.cutAll();
  }

  async sessionsStarted(user: string): Promise<number> {
    const { sshd } = await this.start();
    // sshd writes its log asynchronously: let the last lines land.
    await Bun.sleep(50);
    const marker = `Starting session: command for ${user} from`;
    return sshd.readLog().split("\n").filter((line) => line.includes(marker)).length;
  }

  async stop(): Promise<void> {
    await Promise.all(this.#opened.splice(0).map((s) => s.close().catch(() => {})));
    this.#shared.clear();
    const running = await this.#running?.catch(() => null);
    this.#running = null;
    this.#live = null;
    if (!running) return;
    for (const proxy of running.proxies.values()) await proxy.close();
    await running.sshd.stop();
  }
}

function sshCase(harness: SshHarness, name: string, user: string, sudo: boolean): ShellUnderTest {
  return {
    name,
    transport: "ssh",
    open: () => harness.shared(name, user, sudo),
    openNew: () => harness.connect(name, user, sudo),
    expectElevated: sudo,
    cut: () => harness.cut(name),
    serverExecs: () => harness.sessionsStarted(user),
    seesAcls: true,
  };
}
