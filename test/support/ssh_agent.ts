/**
 * A throwaway OpenSSH `ssh-agent` for tests: `ssh-agent -D -a <socket>` in
 * the foreground (so its pid is ours to kill), keys added with `ssh-add`
 * (an encrypted key's passphrase through SSH_ASKPASS, never on a command
 * line), and sockets that are no agent: a path where nothing exists, a dead
 * socket file, and a listener that accepts and never answers.
 *
 * @module
 */
import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A running agent. */
export interface TestAgent {
  socket: string;
  /** `ssh-add` a private key (with its passphrase, if encrypted). */
  add(keyPath: string, passphrase?: string): void;
  stop(): Promise<void>;
}

/**
 * Start `ssh-agent -D -a <socket>`.
 *
 * @example
 * ```ts
 * const agent = await startAgent();
 * agent.add("/tmp/key");
 * ```
 */
export async function startAgent(): Promise<TestAgent> {
  const dir = mkdtempSync(join(tmpdir(), "sap-agent-"));
  const socket = join(dir, "agent.sock");
  const child: ChildProcess = spawn("ssh-agent", ["-D", "-a", socket], { stdio: "ignore" });
  const deadline = Date.now() + 5000;
  while (!existsSync(socket)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error("ssh-agent did not start");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    socket,
    add(keyPath, passphrase) {
      const askpass = join(dir, "askpass.sh");
      writeFileSync(askpass, `#!/bin/sh\ncat ${JSON.stringify(join(dir, "passphrase"))}\n`, { mode: 0o700 });
      writeFileSync(join(dir, "passphrase"), passphrase ?? "", { mode: 0o600 });
      const result = spawnSync("ssh-add", [keyPath], {
        encoding: "utf8",
        env: { ...process.env, SSH_AUTH_SOCK: socket, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: "force", DISPLAY: ":0" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      rmSync(join(dir, "passphrase"), { force: true });
      if (result.status !== 0) throw new Error(`ssh-add ${keyPath} failed: ${result.stderr}`);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Sockets where no agent answers. */
export interface BrokenAgents {
  /** A path where nothing exists (a stale SSH_AUTH_SOCK after logout). */
  missing: string;
  /** A socket file nobody listens on any more (ECONNREFUSED). */
  dead: string;
  /** A listener that accepts and never answers. */
  silent: string;
  stop(): Promise<void>;
}

/**
 * Make the three kinds of unusable agent socket.
 *
 * @example
 * ```ts
 * const broken = await brokenAgents();
 * process.env.SSH_AUTH_SOCK = broken.dead;
 * ```
 */
export async function brokenAgents(): Promise<BrokenAgents> {
  const dir = mkdtempSync(join(tmpdir(), "sap-noagent-"));
  const connections: net.Socket[] = [];
  const listen = (path: string): Promise<net.Server> =>
    new Promise((resolve) => {
      const server = net.createServer((socket) => connections.push(socket));
      server.listen(path, () => resolve(server));
    });
  // A socket file whose listener died without unlinking it: a process that is SIGKILLed while listening.
  const deadPath = join(dir, "dead.sock");
  spawnSync(process.execPath, ["-e", `require("net").createServer().listen(${JSON.stringify(deadPath)}, () => process.kill(process.pid, "SIGKILL"))`]);
  if (!existsSync(deadPath)) throw new Error("could not make a dead agent socket");
  const silentPath = join(dir, "silent.sock");
  const silent = await listen(silentPath);
  chmodSync(dir, 0o700);
  return {
    missing: join(dir, "missing.sock"),
    dead: deadPath,
    silent: silentPath,
    async stop() {
      for (const socket of connections) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
