/**
 * A throwaway OpenSSH server for integration tests: `/usr/sbin/sshd -D` on
 * 127.0.0.1 at a free port, with its own ed25519 host key, a throwaway user
 * key, its own config and log, in a temp dir removed by `stop()`.
 *
 * As root it logs in as a non-root test user that accepts the same
 * throwaway key: this run's `sapu<id>` (test/support/test_users.ts creates
 * it with its sudoers rules and removes them when the run ends).
 *
 * Suites call {@linkcode sshdReady} to be skipped with a loud banner when
 * sshd is missing, or to fail instead when `REQUIRE_SSHD=1`.
 *
 * @module
 */
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureTestUsers } from "./test_users.ts";

const SSHD = "/usr/sbin/sshd";

export { ensureTestUsers, removeTestUsers } from "./test_users.ts";
export type { TestUsers } from "./test_users.ts";

/** Options of {@linkcode startSshd}. */
export interface SshdOptions {
  /** sshd `MaxSessions` (default 10, as OpenSSH). */
  maxSessions?: number;
  /**
   * Extra sshd_config lines, written before the harness's own: sshd keeps the
   * first value of a keyword, so these override the defaults (e.g.
   * `PasswordAuthentication yes`). Accumulating keywords (HostKey) add up.
   */
  extraConfig?: string[];
  /** Authorize this existing client key (its `.pub` beside it) instead of generating one. */
  userKeyPath?: string;
}

/** A running sshd. */
export interface Sshd {
  host: "127.0.0.1";
  port: number;
  /** The temp dir holding keys, config and log. */
  dir: string;
  hostKeyPath: string;
  /** `[127.0.0.1]:port ssh-ed25519 AAAA…` — ready for a known_hosts file. */
  hostKeyLine: string;
  /** `SHA256:…` as ssh-keygen prints it. */
  hostKeyFingerprint: string;
  /** The throwaway client private key (any test user accepts it). */
  userKeyPath: string;
  /** The user to log in as: this run's `sapu<id>` when running as root (root also works), else the current user. */
  user: string;
  logPath: string;
  configPath: string;
  /** The server log so far. */
  readLog(): string;
  stop(): Promise<void>;
}

/**
 * Whether a real sshd can be started here.
 *
 * @example
 * ```ts
 * if (!sshdAvailable()) console.error("no sshd");
 * ```
 */
export function sshdAvailable(): boolean {
  return existsSync(SSHD) && spawnSync("ssh-keygen", ["-?"], { stdio: "ignore" }).error === undefined;
}

/**
 * Gate for an sshd suite: true when it can run. Otherwise prints a loud
 * banner and returns false (skip) — or throws when `REQUIRE_SSHD=1`, so CI
 * fails instead of silently skipping. `needsRoot` also requires uid 0.
 *
 * @example
 * ```ts
 * describe.skipIf(!sshdReady("ssh shell"))("ssh shell", () => { ... });
 * ```
 */
export function sshdReady(suite: string, needsRoot = false): boolean {
  let missing: string | null = null;
  if (!sshdAvailable()) missing = `${SSHD} or ssh-keygen is missing (apt-get install -y openssh-server)`;
  else if (needsRoot && process.getuid?.() !== 0) missing = "this suite needs root (it creates test users and sudoers rules)";
  if (missing === null) return true;
  const banner = [
    "",
    "#".repeat(78),
    `#  SKIPPING the real-sshd suite "${suite}": ${missing}`,
    "#  These integration tests did NOT run. Set REQUIRE_SSHD=1 to make this a failure.",
    "#".repeat(78),
    "",
  ].join("\n");
  if (process.env.REQUIRE_SSHD === "1") {
    throw new Error(`REQUIRE_SSHD=1 but the sshd suite "${suite}" cannot run: ${missing}`);
  }
  console.error(banner);
  return false;
}

function run(command: string, args: string[], input?: string): string {
  const result = spawnSync(command, args, { encoding: "utf8", input });
  if (result.error || result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed: ${result.error?.message ?? result.stderr}`);
  }
  return result.stdout;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Start a throwaway sshd. Retries on a port race.
 *
 * @example
 * ```ts
 * const sshd = await startSshd({ maxSessions: 3 });
 * try { ... } finally { await sshd.stop(); }
 * ```
 */
export async function startSshd(options: SshdOptions = {}): Promise<Sshd> {
  mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const dir = mkdtempSync(join(tmpdir(), "sap-sshd-"));
  // Non-root users must be able to read the shared AuthorizedKeysFile.
  chmodSync(dir, 0o755);
  const hostKeyPath = join(dir, "host_ed25519");
  const userKeyPath = join(dir, "user_ed25519");
  run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "sap-test-host", "-f", hostKeyPath]);
  if (options.userKeyPath) {
    writeFileSync(userKeyPath, readFileSync(options.userKeyPath), { mode: 0o600 });
    writeFileSync(`${userKeyPath}.pub`, readFileSync(`${options.userKeyPath}.pub`));
  } else {
    run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "sap-test-user", "-f", userKeyPath]);
  }
  chmodSync(`${userKeyPath}.pub`, 0o644);
  // As root, log in as the non-root test user by default: root's own dotfiles
  // on a developer machine can make every exec slow (e.g. pyenv in .bashrc).
  const user = process.getuid?.() === 0 ? ensureTestUsers().nopasswdUser : (process.env.USER ?? run("id", ["-un"]).trim());
  const [keyType, keyBase64] = readFileSync(`${hostKeyPath}.pub`, "utf8").trim().split(/\s+/) as [string, string];
  const hostKeyFingerprint = run("ssh-keygen", ["-l", "-E", "sha256", "-f", `${hostKeyPath}.pub`]).split(/\s+/)[1]!;
  const configPath = join(dir, "sshd_config");
  const logPath = join(dir, "sshd.log");

  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    writeFileSync(
      configPath,
      [
        ...(options.extraConfig ?? []),
        `Port ${port}`,
        "ListenAddress 127.0.0.1",
        `HostKey ${hostKeyPath}`,
        `AuthorizedKeysFile ${userKeyPath}.pub`,
        `PidFile ${join(dir, "sshd.pid")}`,
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PermitRootLogin yes",
        "StrictModes no",
        "UsePAM no",
        "LogLevel DEBUG1",
        `MaxSessions ${options.maxSessions ?? 10}`,
        "MaxStartups 100",
        "",
      ].join("\n"),
    );
    writeFileSync(logPath, "");
    const child = spawn(SSHD, ["-D", "-f", configPath, "-E", logPath], { stdio: "ignore" });
    const started = await waitForListening(child, logPath);
    if (!started) {
      if (/Address already in use|Bind to port/.test(readFileSync(logPath, "utf8"))) continue;
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`sshd did not start: ${readFileSync(logPath, "utf8")}`);
    }
    return {
      host: "127.0.0.1",
      port,
      dir,
      hostKeyPath,
      hostKeyLine: `[127.0.0.1]:${port} ${keyType} ${keyBase64}`,
      hostKeyFingerprint,
      userKeyPath,
      user,
      logPath,
      configPath,
      readLog: () => readFileSync(logPath, "utf8"),
      stop: () => stopSshd(child, dir),
    };
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error("sshd: no free port after 5 attempts");
}

async function waitForListening(child: ChildProcess, logPath: string): Promise<boolean> {
  let exited = false;
  child.once("exit", () => (exited = true));
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    if (/Server listening on/.test(readFileSync(logPath, "utf8"))) return true;
    if (exited) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  child.kill("SIGKILL");
  return false;
}

async function stopSshd(child: ChildProcess, dir: string): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 2000);
    await exited;
    clearTimeout(timer);
  }
  rmSync(dir, { recursive: true, force: true });
}

/** Two sshds for ProxyJump tests: the target is reached through the jump. */
export interface JumpPair {
  jump: Sshd;
  target: Sshd;
  /** The client key both accept. */
  userKeyPath: string;
  /** Both host key lines, for one known_hosts file. */
  knownHostsLines: string[];
  stop(): Promise<void>;
}

/**
 * Start a jump sshd and a target sshd that accept the same client key.
 * Both listen on 127.0.0.1 (this project's tests never use another
 * address); the jump's log shows each `direct-tcpip` forward it serves.
 *
 * @example
 * ```ts
 * const pair = await startJumpPair();
 * connectSsh({ host: "127.0.0.1", port: pair.target.port, proxyJump: `${pair.jump.user}@127.0.0.1:${pair.jump.port}`, ... });
 * ```
 */
export async function startJumpPair(options: SshdOptions = {}): Promise<JumpPair> {
  const jump = await startSshd(options);
  try {
    const target = await startSshd({ ...options, userKeyPath: jump.userKeyPath });
    return {
      jump,
      target,
      userKeyPath: jump.userKeyPath,
      knownHostsLines: [jump.hostKeyLine, target.hostKeyLine],
      stop: async () => {
        await Promise.all([jump.stop(), target.stop()]);
      },
    };
  } catch (error) {
    await jump.stop();
    throw error;
  }
}

/**
 * Write a known_hosts file with the given lines into a fresh temp dir.
 *
 * @example
 * ```ts
 * const file = writeKnownHosts(sshd.dir, [sshd.hostKeyLine]);
 * ```
 */
export function writeKnownHosts(dir: string, lines: string[], name = "known_hosts"): string {
  const path = join(dir, name);
  writeFileSync(path, lines.join("\n") + (lines.length ? "\n" : ""), { mode: 0o600 });
  return path;
}
