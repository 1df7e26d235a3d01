/**
 * ProxyCommand and jump chains against real sshds on 127.0.0.1, each config
 * also run by the real `ssh` client (issue 18):
 * - ProxyCommand runs (with allowProxyCommand) as the transport, tokens
 *   expanded exactly as OpenSSH expands them (the command logs its argv for
 *   both clients), is stopped when the connection closes, and a failing one
 *   is reported with its stderr;
 * - without allowProxyCommand the connect is refused and nothing connects
 *   around the command;
 * - a jump host's own ProxyJump (and ProxyCommand) is followed; for
 *   `ProxyJump a,b` b is reached through a, as `ssh -J` does.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectSsh } from "../../lib/ssh/shell.ts";
import { sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd } from "../support/sshd.ts";
import { failureOf, logSince, text } from "./helpers.ts";

const ready = sshdReady("ProxyCommand and jump chains (test/ssh/proxy_sshd.test.ts)");
const PROXY = join(import.meta.dir, "..", "support", "proxy_connect.mjs");

describe.skipIf(!ready)("ProxyCommand and jump chains against real sshds", () => {
  let work: string;
  let target: Sshd;
  let j0: Sshd;
  let j1: Sshd;
  let knownHosts: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "sap-proxy-"));
    target = await startSshd();
    j0 = await startSshd({ userKeyPath: target.userKeyPath });
    j1 = await startSshd({ userKeyPath: target.userKeyPath });
    knownHosts = writeKnownHosts(work, [target, j0, j1].map((s) => s.hostKeyLine));
  }, 30_000);
  afterAll(async () => {
    await Promise.all([target, j0, j1].map((s) => s?.stop()));
    rmSync(work, { recursive: true, force: true });
  }, 30_000);

  let n = 0;
  function config(lines: string[]): string {
    const path = join(work, `config-${n++}`);
    writeFileSync(path, [...lines, "Host *", `  IdentityFile ${target.userKeyPath}`, `  UserKnownHostsFile ${knownHosts}`, ""].join("\n"));
    return path;
  }
  function host(name: string, server: Sshd, extra: string[] = []): string[] {
    return [`Host ${name}`, "  HostName 127.0.0.1", `  Port ${server.port}`, `  User ${server.user}`, ...extra.map((l) => `  ${l}`)];
  }
  function realSsh(path: string, alias: string): { status: number | null; stdout: string; stderr: string } {
    return spawnSync("ssh", ["-F", path, "-o", "BatchMode=yes", alias, "id -un"], { encoding: "utf8", timeout: 20_000, env: { PATH: process.env.PATH ?? "" } });
  }
  function proxyLog(path: string): { pid: number; argv: string[] }[] {
    return existsSync(path) ? readFileSync(path, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
  }
  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  test("ProxyCommand runs as the transport with %h %p %r %n %% expanded exactly as OpenSSH does; close stops it", async () => {
    const oursLog = join(work, "proxy-ours.log");
    const theirsLog = join(work, "proxy-theirs.log");
    const line = (log: string): string => `ProxyCommand ${process.execPath} ${PROXY} ${log} %h %p %r %n 100%%`;
    const theirs = realSsh(config(host("Box", target, [line(theirsLog)])), "Box");
    expect(theirs.status).toBe(0);
    const offset = target.readLog().length;
    const shell = await connectSsh({ host: "Box", sshConfigFile: config(host("Box", target, [line(oursLog)])), agent: false, allowProxyCommand: true });
    let pid: number;
    try {
      expect(text((await shell.exec("id -un")).stdout).trim()).toBe(target.user);
      expect(shell.configWarnings.some((w) => w.includes("running ProxyCommand"))).toBe(true);
      const [ours] = proxyLog(oursLog);
      expect(ours!.argv).toEqual(proxyLog(theirsLog)[0]!.argv);
      expect(ours!.argv).toEqual(["127.0.0.1", String(target.port), target.user, "Box", "100%"]);
      pid = ours!.pid;
      expect(alive(pid)).toBe(true);
      // The session really came through the proxy: sshd saw the proxy's TCP connection, not ours.
      expect(await logSince(target, offset, /Accepted publickey/)).toContain("Accepted publickey");
    } finally {
      await shell.close();
    }
    const deadline = Date.now() + 3000;
    while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(alive(pid)).toBe(false);
  }, 30_000);

  test("without allowProxyCommand: connect_failed naming the command, and nothing connects around it", async () => {
    const log = join(work, "proxy-refused.log");
    const path = config(host("box", target, [`ProxyCommand ${process.execPath} ${PROXY} ${log} %h %p`]));
    const offset = target.readLog().length;
    const failed = await failureOf(connectSsh({ host: "box", sshConfigFile: path, agent: false }));
    expect(failed.code).toBe("connect_failed");
    expect(failed.retryable).toBe(false);
    expect(failed.message).toContain("allowProxyCommand: true");
    expect(failed.message).toContain("did not connect around it");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(target.readLog().slice(offset)).not.toContain("Connection from");
    expect(existsSync(log)).toBe(false);
  });

  test("a ProxyCommand that fails is reported with its exit status and stderr", async () => {
    const path = config(host("box", target, [`ProxyCommand sh -c "echo 'no route to %h via bastion' >&2; exit 7"`]));
    const failed = await failureOf(connectSsh({ host: "box", sshConfigFile: path, agent: false, allowProxyCommand: true }));
    expect(failed.code).toBe("connect_failed");
    expect(failed.message).toContain("exited with status 7");
    expect(failed.message).toContain("no route to 127.0.0.1 via bastion");
    expect(realSsh(path, "box").status).toBe(255);
  });

  test("a jump host's own ProxyJump is followed: t via j1, j1 via j0 (every hop's log shows its forward)", async () => {
    const path = config([...host("t", target, ["ProxyJump j1"]), ...host("j1", j1, ["ProxyJump j0"]), ...host("j0", j0)]);
    expect(realSsh(path, "t").status).toBe(0);
    const [o0, o1] = [j0.readLog().length, j1.readLog().length];
    const shell = await connectSsh({ host: "t", sshConfigFile: path, agent: false });
    try {
      expect(shell.label).toBe(`${target.user}@127.0.0.1:${target.port} via ${j0.user}@127.0.0.1:${j0.port} -> ${j1.user}@127.0.0.1:${j1.port}`);
      expect(text((await shell.exec("echo through")).stdout)).toBe("through\n");
      expect(await logSince(j0, o0, /direct-tcpip/)).toMatch(new RegExp(`target 127\\.0\\.0\\.1 port ${j1.port}`));
      expect(await logSince(j1, o1, /direct-tcpip/)).toMatch(new RegExp(`target 127\\.0\\.0\\.1 port ${target.port}`));
    } finally {
      await shell.close();
    }
  }, 30_000);

  test("ProxyJump a,b reaches b through a, overriding b's own ProxyJump (as ssh -J a -W … b)", async () => {
    const path = config([...host("t", target, ["ProxyJump j0,j1"]), ...host("j1", j1, ["ProxyJump no-such-host.invalid"]), ...host("j0", j0)]);
    expect(realSsh(path, "t").status).toBe(0);
    const shell = await connectSsh({ host: "t", sshConfigFile: path, agent: false });
    try {
      expect(text((await shell.exec("echo ok")).stdout)).toBe("ok\n");
      expect(shell.label).toContain(`via ${j0.user}@127.0.0.1:${j0.port} -> ${j1.user}@127.0.0.1:${j1.port}`);
    } finally {
      await shell.close();
    }
  }, 30_000);

  test("a jump host reached by its own ProxyCommand", async () => {
    const log = join(work, "proxy-jump.log");
    const path = config([...host("t", target, ["ProxyJump j0"]), ...host("j0", j0, [`ProxyCommand ${process.execPath} ${PROXY} ${log} %h %p`])]);
    expect(realSsh(path, "t").status).toBe(0);
    const before = proxyLog(log).length; // the real client's run
    const shell = await connectSsh({ host: "t", sshConfigFile: path, agent: false, allowProxyCommand: true });
    try {
      expect(text((await shell.exec("echo ok")).stdout)).toBe("ok\n");
      // Our connection ran the command too (not a direct connection to j0).
      expect(proxyLog(log).slice(before).map((l) => l.argv)).toEqual([["127.0.0.1", String(j0.port)]]);
    } finally {
      await shell.close();
    }
  }, 30_000);
});
