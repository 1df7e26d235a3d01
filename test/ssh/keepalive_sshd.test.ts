/**
 * ServerAliveInterval / ServerAliveCountMax from ssh_config, live (issue 18):
 * a silent partition (a TCP proxy that stops forwarding without FIN or RST)
 * must be declared dead by keepalives — not before the configured number of
 * unanswered probes, and not never. The real `ssh` client runs on the same
 * config through the same proxy as the reference.
 *
 * Only lower bounds on time are asserted: load can delay a detection but
 * never make it early, so a client that ignored ServerAliveCountMax (ssh2's
 * default is 3) and gave up after ~3 s fails here however busy the machine.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectSsh } from "../../lib/ssh/shell.ts";
import { sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd } from "../support/sshd.ts";
import { startTcpProxy } from "../support/tcp_proxy.ts";
import type { TcpProxy } from "../support/tcp_proxy.ts";
import { failureOf, killRemote, text } from "./helpers.ts";

const ready = sshdReady("keepalives from ssh_config (test/ssh/keepalive_sshd.test.ts)", true);

const INTERVAL_S = 1;
const COUNT_MAX = 5;

describe.skipIf(!ready)("ServerAliveCountMax from ssh_config against a silent partition", () => {
  let sshd: Sshd;
  let work: string;
  let proxy: TcpProxy;
  let configPath: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "sap-keepalive-"));
    sshd = await startSshd();
    proxy = await startTcpProxy({ targetPort: sshd.port });
    const line = sshd.hostKeyLine.replace(`]:${sshd.port} `, `]:${proxy.port} `);
    const knownHosts = writeKnownHosts(work, [line]);
    configPath = join(work, "config");
    writeFileSync(
      configPath,
      [
        "Host box",
        "  HostName 127.0.0.1",
        `  Port ${proxy.port}`,
        `  User ${sshd.user}`,
        `  IdentityFile ${sshd.userKeyPath}`,
        `  UserKnownHostsFile ${knownHosts}`,
        "  IdentitiesOnly yes",
        `  ServerAliveInterval ${INTERVAL_S}`,
        `  ServerAliveCountMax ${COUNT_MAX}`,
        "",
      ].join("\n"),
    );
  }, 30_000);
  afterAll(async () => {
    await proxy?.close();
    await sshd?.stop();
    rmSync(work, { recursive: true, force: true });
  }, 30_000);

  test(`ours and OpenSSH both give up, neither before ${COUNT_MAX} unanswered keepalives`, async () => {
    const shell = await connectSsh({ host: "box", sshConfigFile: configPath, agent: false, readyTimeoutMs: 10_000 });
    try {
      // The reference: the real client on the same config, holding a session open.
      const real = spawn("ssh", ["-F", configPath, "-o", "BatchMode=yes", "box", "echo up; exec sleep 60.41"], {
        stdio: ["ignore", "pipe", "pipe"],
        env: { PATH: process.env.PATH ?? "" },
      });
      let realErr = "";
      real.stderr.on("data", (d: Buffer) => (realErr += d.toString()));
      const realExit = new Promise<{ code: number | null; at: number }>((resolve) =>
        real.on("exit", (code) => resolve({ code, at: performance.now() }))
      );
      await new Promise<void>((resolve, reject) => {
        real.stdout.on("data", (d: Buffer) => d.toString().includes("up") && resolve());
        real.on("exit", () => reject(new Error(`ssh exited before its session was up: ${realErr}`)));
      });
      const ours = shell.exec("sleep 60.42");
      await new Promise((resolve) => setTimeout(resolve, 300)); // our exec is running on the host
      proxy.freezeAll();
      const frozenAt = performance.now();
      const oursDone = failureOf(ours).then((failure) => ({ failure, at: performance.now() }));
      const [mine, theirs] = await Promise.all([oursDone, realExit]);

      const floorMs = COUNT_MAX * INTERVAL_S * 1000 - 250; // timer slack, never load
      expect(mine.failure.code).toBe("outcome_unknown");
      expect(mine.at - frozenAt).toBeGreaterThanOrEqual(floorMs);
      expect(theirs.code).toBe(255);
      expect(realErr).toMatch(/Timeout, server .* not responding/);
      expect(theirs.at - frozenAt).toBeGreaterThanOrEqual(floorMs);

      // The next call reconnects (the proxy forwards new connections again).
      expect(text((await shell.exec("echo thawed")).stdout)).toBe("thawed\n");
      await killRemote(shell, "sleep 60.42"); // the orphans keep running: clean up
      await killRemote(shell, "sleep 60.41");
    } finally {
      await shell.close();
    }
  }, 60_000);
});
