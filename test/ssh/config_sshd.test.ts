/**
 * ssh_config resolution end to end: each config is used by connectSsh and
 * by the real `ssh` client against the same real sshd, and both must reach
 * (or miss) it the same way (issue 18). The decoy blocks point at a port
 * where nothing listens, so a resolver that applies the wrong block fails.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectSsh } from "../../lib/ssh/shell.ts";
import type { SshOptions } from "../../lib/ssh/shell.ts";
import { sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd } from "../support/sshd.ts";
import { logSince, text } from "./helpers.ts";

const ready = sshdReady("ssh_config end to end (test/ssh/config_sshd.test.ts)", true);

describe.skipIf(!ready)("ssh_config end to end against a real sshd and the real client", () => {
  let sshd: Sshd;
  let work: string;
  let knownHosts: string;
  const DEAD = 1; // nothing listens on 127.0.0.1:1

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "sap-config-e2e-"));
    sshd = await startSshd();
    knownHosts = writeKnownHosts(work, [sshd.hostKeyLine]);
  }, 30_000);
  afterAll(async () => {
    await sshd?.stop();
    rmSync(work, { recursive: true, force: true });
  }, 30_000);

  let n = 0;
  function config(lines: string[]): string {
    const path = join(work, `config-${n++}`);
    writeFileSync(path, [...lines, ""].join("\n"));
    return path;
  }
  const box = (port: number, extra: string[] = []): string[] => [
    "  HostName 127.0.0.1",
    `  Port ${port}`,
    `  User ${sshd.user}`,
    `  IdentityFile ${sshd.userKeyPath}`,
    `  UserKnownHostsFile ${knownHosts}`,
    ...extra,
  ];
  function realSsh(path: string, alias: string, env: Record<string, string> = {}): number | null {
    return spawnSync("ssh", ["-F", path, "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", alias, "true"], {
      timeout: 20_000,
      env: { PATH: process.env.PATH ?? "", ...env },
    }).status;
  }
  async function ours(options: SshOptions): Promise<string> {
    const shell = await connectSsh({ agent: false, readyTimeoutMs: 5000, ...options });
    try {
      return text((await shell.exec("id -un")).stdout).trim();
    } finally {
      await shell.close();
    }
  }

  test("Host box,decoy is one literal pattern: the block does not apply to box (both clients reach the real port)", async () => {
    const path = config(["Host box,decoy", `  Port ${DEAD}`, "Host box", ...box(sshd.port)]);
    expect(realSsh(path, "box")).toBe(0);
    expect(await ours({ host: "box", sshConfigFile: path })).toBe(sshd.user);
  }, 20_000);

  test("Host patterns are case-sensitive: Host BOX does not apply to box", async () => {
    const path = config(["Host BOX", `  Port ${DEAD}`, "Host box", ...box(sshd.port)]);
    expect(realSsh(path, "box")).toBe(0);
    expect(await ours({ host: "box", sshConfigFile: path })).toBe(sshd.user);
  }, 20_000);

  test("IdentityFile with ${VAR} and %r / %h tokens is expanded as OpenSSH does", async () => {
    const keys = mkdtempSync(join(work, "keys-"));
    copyFileSync(sshd.userKeyPath, join(keys, `${sshd.user}_at_127.0.0.1`));
    const path = config(["Host box", ...box(sshd.port).filter((l) => !l.includes("IdentityFile")), "  IdentityFile ${SAP_KEY_DIR}/%r_at_%h"]);
    const env = { SAP_KEY_DIR: keys };
    expect(realSsh(path, "box", env)).toBe(0);
    process.env.SAP_KEY_DIR = keys;
    try {
      expect(await ours({ host: "box", sshConfigFile: path })).toBe(sshd.user);
    } finally {
      delete process.env.SAP_KEY_DIR;
    }
  }, 20_000);

  test("the system file supplies what the user file does not (read after it), like /etc/ssh/ssh_config", async () => {
    const user = config(["Host box", `  IdentityFile ${sshd.userKeyPath}`]);
    const system = config(["Host box", `  User nobody-from-system`, "Host *", "  HostName 127.0.0.1", `  Port ${sshd.port}`, `  UserKnownHostsFile ${knownHosts}`]);
    const userWins = config(["Host box", `  User ${sshd.user}`, `  IdentityFile ${sshd.userKeyPath}`]);
    expect(await ours({ host: "box", sshConfigFile: userWins, systemSshConfigFile: system })).toBe(sshd.user);
    // Without the user's User line the system's applies (and that user does not exist: refused).
    await expect(ours({ host: "box", sshConfigFile: user, systemSshConfigFile: system })).rejects.toThrow(/nobody-from-system/);
  }, 20_000);

  test("no User and no $USER: the passwd name is the remote user (root here), as ssh", async () => {
    const saved = { USER: process.env.USER, LOGNAME: process.env.LOGNAME };
    delete process.env.USER;
    delete process.env.LOGNAME;
    try {
      // Only the login is checked (sshd's log names the user): a program as root would run root's own
      // dotfiles, which on a developer machine can be slow (see test/support/sshd.ts). ssh -G shows the
      // same user (openssh_parity.test.ts).
      const path = config(["Host box", ...box(sshd.port).filter((l) => !l.includes("User "))]);
      const offset = sshd.readLog().length;
      const shell = await connectSsh({ host: "box", sshConfigFile: path, agent: false });
      expect(shell.label).toBe(`root@127.0.0.1:${sshd.port}`);
      await shell.close();
      expect(await logSince(sshd, offset, /Accepted publickey/)).toContain("Accepted publickey for root from 127.0.0.1");
    } finally {
      for (const [key, value] of Object.entries(saved)) if (value !== undefined) process.env[key] = value;
    }
  }, 20_000);

  test("an Include that includes itself is refused at once by both, before any connection", async () => {
    const dir = join(work, "inc");
    mkdirSync(dir);
    const path = join(dir, "config");
    writeFileSync(path, [`Include ${path}`, `Include ${path}`, `Include ${path}`, "Host box", ...box(sshd.port), ""].join("\n"));
    const offset = sshd.readLog().length;
    expect(realSsh(path, "box")).toBe(255);
    await expect(ours({ host: "box", sshConfigFile: path })).rejects.toThrow(/Too many recursive configuration includes/);
    expect(sshd.readLog().slice(offset)).not.toContain("Connection from");
  }, 20_000);
});
