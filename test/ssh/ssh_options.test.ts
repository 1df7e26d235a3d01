import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
});
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
    expect(web!.auth.described).toEqual([`key file ${key}`]); // IdentityAgent none: no agent
    expect(target.knownHosts.files).toEqual([`${dir}/kh_web`, "/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"]);
    expect(target.knownHosts.writeFile).toBe(`${dir}/kh_web`);
    expect(target.readyTimeoutMs).toBe(7000);
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

  test("agent: SSH_AUTH_SOCK by default, not with IdentitiesOnly, not with agent: false", async () => {
    const saved = process.env.SSH_AUTH_SOCK;
    process.env.SSH_AUTH_SOCK = "/tmp/agent.sock";
    try {
      const plain = await resolveSshTarget({ host: "plain", sshConfigFile: config, identityFile: key });
      expect(plain.hops[0]!.auth.described).toEqual([`key file ${key}`, "agent /tmp/agent.sock"]);
      const only = await resolveSshTarget({ host: "only", sshConfigFile: config, identityFile: key });
      expect(only.hops[0]!.auth.described).toEqual([`key file ${key}`]);
      const off = await resolveSshTarget({ host: "plain", sshConfigFile: config, identityFile: key, agent: false });
      expect(off.hops[0]!.auth.described).toEqual([`key file ${key}`]);
    } finally {
      if (saved === undefined) delete process.env.SSH_AUTH_SOCK;
      else process.env.SSH_AUTH_SOCK = saved;
    }
  });

  test("without config or options: ~/.ssh/known_hosts(2) then the global files; sshConfigFile false reads no config", async () => {
    const target = await resolveSshTarget({ host: "web", sshConfigFile: false, agent: false });
    expect(target.hops.at(-1)!.hostName).toBe("web");
    expect(target.knownHosts.files).toEqual([
      `${homedir()}/.ssh/known_hosts`,
      `${homedir()}/.ssh/known_hosts2`,
      "/etc/ssh/ssh_known_hosts",
      "/etc/ssh/ssh_known_hosts2",
    ]);
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
  ];
  for (const [name, options] of invalid) {
    test(`programmer error throws TypeError: ${name}`, async () => {
      await expect(resolveSshTarget({ host: "web", sshConfigFile: false, ...options })).rejects.toThrow(TypeError);
    });
  }
});
