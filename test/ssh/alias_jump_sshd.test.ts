import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectSsh } from "../../lib/ssh/shell.ts";
import { sshdReady, startJumpPair, writeKnownHosts } from "../support/sshd.ts";
import type { JumpPair, Sshd } from "../support/sshd.ts";
import { failureOf, logSince, text } from "./helpers.ts";

const ready = sshdReady("ssh_config aliases and ProxyJump (test/ssh/alias_jump_sshd.test.ts)");

describe.skipIf(!ready)("ssh_config aliases and ProxyJump against real sshds", () => {
  let pair: JumpPair;
  let jump: Sshd;
  let target: Sshd;
  let work: string;
  let knownHosts: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "sap-alias-"));
    pair = await startJumpPair();
    ({ jump, target } = pair);
    knownHosts = writeKnownHosts(work, pair.knownHostsLines);
  }, 30_000);
  afterAll(async () => {
    await pair?.stop();
    rmSync(work, { recursive: true, force: true });
  }, 30_000);

  function config(name: string, body: string): string {
    const path = join(work, name);
    writeFileSync(path, body);
    return path;
  }

  test("an alias resolves HostName, Port, User, IdentityFile and UserKnownHostsFile from the config", async () => {
    const sshConfigFile = config(
      "alias.conf",
      [
        "Host box",
        "  HostName 127.0.0.1",
        `  Port ${target.port}`,
        `  User ${target.user}`,
        `  IdentityFile ${target.userKeyPath}`,
        `  UserKnownHostsFile ${knownHosts}`,
        "",
      ].join("\n"),
    );
    const shell = await connectSsh({ host: "box", sshConfigFile, agent: false });
    try {
      expect(shell.label).toBe(`${target.user}@127.0.0.1:${target.port}`);
      expect(text((await shell.exec("id -un")).stdout)).toBe(`${target.user}\n`);
    } finally {
      await shell.close();
    }
  }, 10000);

  test("HostKeyAlias: known_hosts is searched for the alias name, as OpenSSH does", async () => {
    const aliasLine = `box-key ${target.hostKeyLine.split(" ").slice(1).join(" ")}`;
    const sshConfigFile = config(
      "hostkeyalias.conf",
      [
        "Host box",
        "  HostName 127.0.0.1",
        `  Port ${target.port}`,
        `  User ${target.user}`,
        `  IdentityFile ${target.userKeyPath}`,
        "  HostKeyAlias box-key",
        `  UserKnownHostsFile ${writeKnownHosts(work, [aliasLine], "alias-only")}`,
        "",
      ].join("\n"),
    );
    const shell = await connectSsh({ host: "box", sshConfigFile, agent: false });
    try {
      expect((await shell.exec("true")).exitCode).toBe(0);
    } finally {
      await shell.close();
    }
    // The real host:port token alone (no alias) is not trusted through the alias line.
    const failed = await failureOf(
      connectSsh({ host: "box", sshConfigFile: config("no-alias.conf", readFileSync(sshConfigFile, "utf8").replace("  HostKeyAlias box-key\n", "")), agent: false }),
    );
    expect(failed.code).toBe("host_key_unknown");
  }, 10000);

  test("Match exec in the config is never executed (and its block not applied)", async () => {
    const marker = join(work, "match-exec-ran");
    const sshConfigFile = config(
      "match.conf",
      [
        `Match exec "touch ${marker}"`,
        "  User hijacked",
        "Host box",
        "  HostName 127.0.0.1",
        `  Port ${target.port}`,
        `  User ${target.user}`,
        `  IdentityFile ${target.userKeyPath}`,
        `  UserKnownHostsFile ${knownHosts}`,
        "",
      ].join("\n"),
    );
    const shell = await connectSsh({ host: "box", sshConfigFile, agent: false });
    try {
      expect((await shell.exec("true")).exitCode).toBe(0);
      expect(shell.configWarnings.some((w) => w.includes("Match exec is never executed"))).toBe(true);
      expect(existsSync(marker)).toBe(false);
    } finally {
      await shell.close();
    }
    // A Match exec block that would change the route (here Port 1, before the Host block's Port) is
    // refused: OpenSSH might apply it, and skipping it could connect to another service.
    const routed = config("match-route.conf", readFileSync(sshConfigFile, "utf8").replace("  User hijacked", "  Port 1"));
    const refused = await failureOf(connectSsh({ host: "box", sshConfigFile: routed, agent: false }));
    expect(refused.code).toBe("connect_failed");
    expect(refused.message).toContain("port is set inside a Match block this library cannot evaluate");
    expect(existsSync(marker)).toBe(false);
  }, 10000);

  test("ProxyJump from the config goes through the jump sshd (its log shows the forward)", async () => {
    const sshConfigFile = config(
      "jump.conf",
      [
        "Host bastion",
        "  HostName 127.0.0.1",
        `  Port ${jump.port}`,
        `  User ${jump.user}`,
        `  IdentityFile ${jump.userKeyPath}`,
        "Host inner",
        "  HostName 127.0.0.1",
        `  Port ${target.port}`,
        `  User ${target.user}`,
        `  IdentityFile ${target.userKeyPath}`,
        "  ProxyJump bastion",
        "Host *",
        `  UserKnownHostsFile ${knownHosts}`,
        "",
      ].join("\n"),
    );
    const offset = jump.readLog().length;
    const shell = await connectSsh({ host: "inner", sshConfigFile, agent: false });
    try {
      expect(shell.label).toBe(`${target.user}@127.0.0.1:${target.port} via ${jump.user}@127.0.0.1:${jump.port}`);
      const results = await Promise.all([1, 2, 3].map((i) => shell.exec(`echo ${i}`)));
      expect(results.map((r) => text(r.stdout))).toEqual(["1\n", "2\n", "3\n"]);
      expect(await logSince(jump, offset, /direct-tcpip/)).toMatch(
        new RegExp(`server_request_direct_tcpip: originator 127\\.0\\.0\\.1 port 0, target 127\\.0\\.0\\.1 port ${target.port}`),
      );
    } finally {
      await shell.close();
    }
  }, 10000);

  test("the proxyJump option (user@host:port) works without any config", async () => {
    const shell = await connectSsh({
      host: "127.0.0.1",
      port: target.port,
      username: target.user,
      identityFile: target.userKeyPath, // explicit keys are offered to every hop (the jump needs it too)
      proxyJump: `${jump.user}@127.0.0.1:${jump.port}`,
      knownHostsFile: knownHosts,
      sshConfigFile: false,
      agent: false,
    });
    try {
      expect(text((await shell.exec("echo via")).stdout)).toBe("via\n");
    } finally {
      await shell.close();
    }
  }, 10000);

  test("every hop's host key is verified: an unknown jump host is refused, naming the jump host", async () => {
    const onlyTarget = writeKnownHosts(work, [target.hostKeyLine], "only-target");
    const failed = await failureOf(
      connectSsh({
        host: "127.0.0.1",
        port: target.port,
        username: target.user,
        identityFile: target.userKeyPath, // explicit keys are offered to every hop (the jump needs it too)
        proxyJump: `${jump.user}@127.0.0.1:${jump.port}`,
        knownHostsFile: onlyTarget,
        sshConfigFile: false,
        agent: false,
      }),
    );
    expect(failed.code).toBe("host_key_unknown");
    expect(failed.message).toContain(`jump host 127.0.0.1 port ${jump.port}`);
    expect(failed.fingerprint).toBe(jump.hostKeyFingerprint);
  }, 10000);

  test("every hop's host key is verified: a changed target key behind a known jump is refused", async () => {
    // The target's line carries the jump's key: a changed key for the target.
    const wrongTarget = target.hostKeyLine.split(" ")[0] + " " + jump.hostKeyLine.split(" ").slice(1).join(" ");
    const failed = await failureOf(
      connectSsh({
        host: "127.0.0.1",
        port: target.port,
        username: target.user,
        identityFile: target.userKeyPath, // explicit keys are offered to every hop (the jump needs it too)
        proxyJump: `${jump.user}@127.0.0.1:${jump.port}`,
        knownHostsFile: writeKnownHosts(work, [jump.hostKeyLine, wrongTarget], "wrong-target"),
        sshConfigFile: false,
        agent: false,
      }),
    );
    expect(failed.code).toBe("host_key_mismatch");
    expect(failed.message).toContain(`host 127.0.0.1 port ${target.port}`);
    expect(failed.fingerprint).toBe(target.hostKeyFingerprint);
  }, 10000);
});
