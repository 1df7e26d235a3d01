import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describePlan } from "../../lib/ssh/auth.ts";
import { resolveSshTarget } from "../../lib/ssh/options.ts";
import type { SshOptions } from "../../lib/ssh/options.ts";

// resolveSshTarget reads real files (config, keys) but opens no connection.
let dir: string;
let key: string;
let config: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "sap-opts-"));
  key = join(dir, "id_test");
  spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", key]);
  config = join(dir, "config");
  writeFileSync(
    config,
    [
      "Host web",
      "  HostName 10.1.2.3",
      "  User deploy",
      "  Port 2222",
      `  IdentityFile ${key}`,
      "  ProxyJump ops@bastion:2200",
      "  IdentityAgent none",
      `  UserKnownHostsFile ${dir}/kh_web`,
      "  ConnectTimeout 7",
      "Host bastion",
      "  HostName 10.9.9.9",
      "Host only",
      "  IdentitiesOnly yes",
      "",
    ].join("\n"),
  );
}, 30_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("resolveSshTarget", () => {
  test("an alias: HostName/User/Port/IdentityFile/ProxyJump (hop resolved too)/known_hosts/timeouts", async () => {
    const saved = process.env.SSH_AUTH_SOCK;
    process.env.SSH_AUTH_SOCK = "/tmp/agent.sock"; // so that "IdentityAgent none" has something to turn off
    const target = await resolveSshTarget({ host: "web", sshConfigFile: config }).finally(() => {
      if (saved === undefined) delete process.env.SSH_AUTH_SOCK;
      else process.env.SSH_AUTH_SOCK = saved;
    });
    const [jump, web] = target.hops;
    expect(web).toMatchObject({ hostName: "10.1.2.3", port: 2222, username: "deploy", label: "deploy@10.1.2.3:2222" });
    expect(jump).toMatchObject({ hostName: "10.9.9.9", port: 2200, username: "ops" });
    expect(describePlan(web!.auth)).toEqual([`key file ${key}`]); // IdentityAgent none: no agent
    expect(web!.knownHosts.files).toEqual([`${dir}/kh_web`, "/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"]);
    expect(web!.knownHosts.writeFile).toBe(`${dir}/kh_web`);
    expect(web!.readyTimeoutMs).toBe(7000);
    expect(target.refusal).toBeNull();
    expect(target.label).toBe("deploy@10.1.2.3:2222 via ops@10.9.9.9:2200");
  });

  test("precedence: options > user@host:port in host > config", async () => {
    const fromDestination = await resolveSshTarget({ host: "root@web:2022", sshConfigFile: config });
    expect(fromDestination.hops.at(-1)).toMatchObject({ username: "root", port: 2022, hostName: "10.1.2.3" });
    const fromOptions = await resolveSshTarget({ host: "root@web:2022", username: "x", port: 2023, sshConfigFile: config });
    expect(fromOptions.hops.at(-1)).toMatchObject({ username: "x", port: 2023 });
  });

  test("the proxyJump option overrides the config's; 'none' disables it", async () => {
    const none = await resolveSshTarget({ host: "web", sshConfigFile: config, proxyJump: "none" });
    expect(none.hops).toHaveLength(1);
    const other = await resolveSshTarget({ host: "web", sshConfigFile: config, proxyJump: "a@j1,j2:2201" });
    expect(other.hops.map((h) => `${h.username}@${h.hostName}:${h.port}`).slice(0, 2)).toEqual([
      "a@j1:22",
      `${other.hops[1]!.username}@j2:2201`,
    ]);
  });

  test("agent: SSH_AUTH_SOCK by default, restricted to the listed keys with IdentitiesOnly, not with agent: false", async () => {
    const saved = process.env.SSH_AUTH_SOCK;
    process.env.SSH_AUTH_SOCK = "/tmp/agent.sock";
    try {
      const plain = await resolveSshTarget({ host: "plain", sshConfigFile: config, identityFile: key });
      expect(describePlan(plain.hops[0]!.auth)).toEqual([`key file ${key}`, "agent /tmp/agent.sock"]);
      const only = await resolveSshTarget({ host: "only", sshConfigFile: config, identityFile: key });
      expect(describePlan(only.hops[0]!.auth)).toEqual([`key file ${key}`, "agent /tmp/agent.sock (IdentitiesOnly: listed keys only)"]);
      const off = await resolveSshTarget({ host: "plain", sshConfigFile: config, identityFile: key, agent: false });
      expect(describePlan(off.hops[0]!.auth)).toEqual([`key file ${key}`]);
    } finally {
      if (saved === undefined) delete process.env.SSH_AUTH_SOCK;
      else process.env.SSH_AUTH_SOCK = saved;
    }
  });

  test("without config or options: ~/.ssh/known_hosts(2) then the global files; sshConfigFile false reads no config", async () => {
    const target = await resolveSshTarget({ host: "web", sshConfigFile: false, agent: false });
    expect(target.hops.at(-1)!.hostName).toBe("web");
    expect(target.hops.at(-1)!.knownHosts.files).toEqual([
      `${homedir()}/.ssh/known_hosts`,
      `${homedir()}/.ssh/known_hosts2`,
      "/etc/ssh/ssh_known_hosts",
      "/etc/ssh/ssh_known_hosts2",
    ]);
  });

  function conf(name: string, text: string): string {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  }

  test("UserKnownHostsFile none: ~/.ssh/known_hosts is not trusted; GlobalKnownHostsFile is read", async () => {
    const path = conf("kh-none", "Host web\n  UserKnownHostsFile none\n  GlobalKnownHostsFile /etc/sap/global_kh\n");
    const hop = (await resolveSshTarget({ host: "web", sshConfigFile: path })).hops.at(-1)!;
    expect(hop.knownHosts.files).toEqual(["/etc/sap/global_kh"]);
    expect(hop.knownHosts.writeFile).toBeNull();
    const both = conf("kh-both-none", "Host web\n  UserKnownHostsFile none\n  GlobalKnownHostsFile none\n");
    expect((await resolveSshTarget({ host: "web", sshConfigFile: both })).hops.at(-1)!.knownHosts.files).toEqual([]);
  });

  test("IdentityFile none: no identity files at all (not OpenSSH's defaults)", async () => {
    const path = conf("id-none", "Host web\n  IdentityFile none\n");
    expect((await resolveSshTarget({ host: "web", sshConfigFile: path, agent: false })).hops.at(-1)!.auth.identities).toEqual([]);
  });

  test("the system file is read after the user file (first value wins), only when no sshConfigFile path is given", async () => {
    const user = conf("user-conf", "Host web\n  User fromuser\n");
    const system = conf("system-conf", "Host *\n  User fromsystem\n  Port 2299\n  ServerAliveCountMax 9\n");
    const both = await resolveSshTarget({ host: "web", sshConfigFile: user, systemSshConfigFile: system });
    expect(both.hops.at(-1)).toMatchObject({ username: "fromuser", port: 2299, keepaliveCountMax: 9 });
    const userOnly = await resolveSshTarget({ host: "web", sshConfigFile: user });
    expect(userOnly.hops.at(-1)).toMatchObject({ username: "fromuser", port: 22, keepaliveCountMax: 3 });
    const systemOnly = await resolveSshTarget({ host: "web", sshConfigFile: false, systemSshConfigFile: system });
    expect(systemOnly.hops.at(-1)).toMatchObject({ username: "fromsystem", port: 2299 });
  });

  test("a password goes to the target only, never to a jump host", async () => {
    const target = await resolveSshTarget({ host: "web", sshConfigFile: false, proxyJump: "j1,j2", password: "secret", agent: false });
    expect(target.hops.map((h) => h.auth.password)).toEqual([undefined, undefined, "secret"]);
  });

  test("ProxyCommand: refused (connect_failed, not retryable) without allowProxyCommand; the first hop runs it with it", async () => {
    const path = conf("pc", "Host web\n  HostName 10.2.3.4\n  Port 2201\n  User ops\n  ProxyCommand nc %h %p\n");
    const refused = await resolveSshTarget({ host: "web", sshConfigFile: path });
    expect(refused.refusal).toMatchObject({ code: "connect_failed", retryable: false });
    expect(refused.refusal!.message).toContain("ProxyCommand (nc 10.2.3.4 2201)");
    expect(refused.refusal!.message).toContain("allowProxyCommand: true");
    const allowed = await resolveSshTarget({ host: "web", sshConfigFile: path, allowProxyCommand: true });
    expect(allowed.refusal).toBeNull();
    expect(allowed.hops.map((h) => [h.label, h.proxyCommand])).toEqual([["ops@10.2.3.4:2201", "nc 10.2.3.4 2201"]]);
    expect(allowed.configWarnings).toContain("web: running ProxyCommand nc 10.2.3.4 2201 as the transport (allowProxyCommand)");
    // The proxyJump option (like ssh -J) comes first, so the ProxyCommand does not apply.
    const jumped = await resolveSshTarget({ host: "web", sshConfigFile: path, proxyJump: "bastion" });
    expect(jumped.refusal).toBeNull();
    expect(jumped.hops.map((h) => h.hostName)).toEqual(["bastion", "10.2.3.4"]);
  });

  test("jump chains as OpenSSH builds them: the first hop's own ProxyJump / ProxyCommand is followed, later hops' are overridden", async () => {
    const path = conf(
      "chains",
      [
        "Host t1", "  ProxyJump j1",
        "Host j1", "  HostName j1.example", "  ProxyJump j0",
        "Host j0", "  HostName j0.example", "  User zero",
        "Host t2", "  ProxyJump a,b",
        "Host b", "  ProxyJump never",
        "Host a", "  ProxyCommand nc %h %p",
        "Host loop", "  ProxyJump loop",
        "Host badhop", "  ProxyJump ok,bad@",
        "",
      ].join("\n"),
    );
    const t1 = await resolveSshTarget({ host: "t1", sshConfigFile: path });
    expect(t1.hops.map((h) => h.label)).toEqual([`zero@j0.example:22`, `${t1.hops[1]!.username}@j1.example:22`, `${t1.hops[2]!.username}@t1:22`]);
    const t2 = await resolveSshTarget({ host: "t2", sshConfigFile: path, allowProxyCommand: true });
    expect(t2.hops.map((h) => h.hostName)).toEqual(["a", "b", "t2"]);
    expect(t2.hops[0]!.proxyCommand).toBe("nc a 22");
    const loop = await resolveSshTarget({ host: "loop", sshConfigFile: path });
    expect(loop.refusal?.message).toContain("longer than 10 hops");
    const bad = await resolveSshTarget({ host: "badhop", sshConfigFile: path });
    expect(bad.refusal?.message).toContain(`ProxyJump hop "bad@" is not [user@]host[:port]`);
    expect(bad.hops).toEqual([]);
  });

  test("no User and no $USER: the remote user is the passwd name (Bun's os.userInfo() would say \"unknown\")", async () => {
    const saved = { USER: process.env.USER, LOGNAME: process.env.LOGNAME, HOME: process.env.HOME };
    delete process.env.USER;
    delete process.env.LOGNAME;
    process.env.HOME = join(dir, "not-my-home");
    try {
      const name = spawnSync("id", ["-un"], { encoding: "utf8" }).stdout.trim();
      const home = spawnSync("getent", ["passwd", String(process.getuid!())], { encoding: "utf8" }).stdout.split(":")[5]!;
      const target = await resolveSshTarget({ host: "web", sshConfigFile: false, agent: false });
      expect(target.hops[0]!.username).toBe(name);
      expect(target.hops[0]!.knownHosts.files[0]).toBe(`${home}/.ssh/known_hosts`);
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });

  const invalid: [string, Partial<SshOptions>][] = [
    ["empty host", { host: "" }],
    ["port out of range", { port: 70000 }],
    ["unknown policy", { hostKeyPolicy: "trust-me" as never }],
    ["maxChannels 0", { maxChannels: 0 }],
    ["negative timeout", { readyTimeoutMs: -1 }],
    ["sudo of the wrong shape", { sudo: { password: "plain" } as never }],
    ["maxOutputBytes 0", { maxOutputBytes: 0 }],
    ["bad proxyJump hop", { proxyJump: "a@" }],
    ["password of the wrong type", { password: 42 as never }],
    ["keepaliveCountMax -1", { keepaliveCountMax: -1 }],
    ["allowProxyCommand not a boolean", { allowProxyCommand: "yes" as never }],
    ["onWarning not a function", { onWarning: "log" as never }],
  ];
  for (const [name, options] of invalid) {
    test(`programmer error throws TypeError: ${name}`, async () => {
      await expect(resolveSshTarget({ host: "web", sshConfigFile: false, ...options })).rejects.toThrow(TypeError);
    });
  }
});
