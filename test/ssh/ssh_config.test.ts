import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveSshConfig } from "../../lib/ssh/config.ts";
import { parseSshDestination } from "../../lib/ssh/destination.ts";
import type { ResolvedSshHost, SshConfigSource } from "../../lib/ssh/config.ts";

const HOME = "/home/me";
const CONFIG = `${HOME}/.ssh/config`;

/** An in-memory file tree; records every path read or listed. */
function memory(files: Record<string, string>): SshConfigSource & { touched: string[] } {
  const touched: string[] = [];
  return {
    homeDir: HOME,
    localUser: "me",
    touched,
    readFile: (path) => {
      touched.push(path);
      return files[path];
    },
    listDir: (path) => {
      touched.push(path + "/");
      const prefix = path.endsWith("/") ? path : path + "/";
      const names = Object.keys(files).filter((f) => f.startsWith(prefix)).map((f) => f.slice(prefix.length).split("/")[0]!);
      return names.length ? [...new Set(names)] : undefined;
    },
  };
}

function resolve(alias: string, files: Record<string, string>): ResolvedSshHost {
  return resolveSshConfig(alias, CONFIG, memory(files));
}

describe("resolveSshConfig", () => {
  const cases: { name: string; alias: string; files: Record<string, string>; expect: Partial<ResolvedSshHost> }[] = [
    {
      name: "alias with HostName, User, Port, IdentityFile",
      alias: "web",
      files: { [CONFIG]: "Host web\n  HostName 10.0.0.5\n  User deploy\n  Port 2222\n  IdentityFile ~/.ssh/id_web\n" },
      expect: { hostName: "10.0.0.5", user: "deploy", port: 2222, identityFiles: [`${HOME}/.ssh/id_web`] },
    },
    {
      name: "unknown alias resolves to itself",
      alias: "other",
      files: { [CONFIG]: "Host web\n  HostName 10.0.0.5\n" },
      expect: { hostName: "other", identityFiles: [], proxyJump: [] },
    },
    {
      name: "missing config file",
      alias: "web",
      files: {},
      expect: { hostName: "web", identityFiles: [], warnings: [] },
    },
    {
      name: "first obtained value wins (specific block first)",
      alias: "web",
      files: { [CONFIG]: "Host web\n  User deploy\nHost *\n  User nobody\n  Port 2200\n" },
      expect: { user: "deploy", port: 2200 },
    },
    {
      name: "first obtained value wins (Host * first)",
      alias: "web",
      files: { [CONFIG]: "Host *\n  User nobody\nHost web\n  User deploy\n" },
      expect: { user: "nobody" },
    },
    {
      name: "lines before any Host apply to all",
      alias: "web",
      files: { [CONFIG]: "User early\nHost web\n  User late\n" },
      expect: { user: "early" },
    },
    {
      name: "negated pattern excludes",
      alias: "db",
      files: { [CONFIG]: "Host * !db\n  User deploy\n" },
      expect: { user: undefined },
    },
    {
      name: "HostName %h expansion and wildcard Host",
      alias: "web7",
      files: { [CONFIG]: "Host web?\n  HostName %h.prod.example\n" },
      expect: { hostName: "web7.prod.example" },
    },
    {
      name: "IdentityFile accumulates, tokens %h %r %u %d %%",
      alias: "web",
      files: {
        [CONFIG]: "Host web\n  HostName h.example\n  User deploy\n  IdentityFile ~/.ssh/%h_%r\nHost *\n  IdentityFile %d/k_%u_100%%\n",
      },
      expect: { identityFiles: [`${HOME}/.ssh/h.example_deploy`, `${HOME}/k_me_100%`] },
    },
    {
      name: "Key=value and quoted values, keywords any case",
      alias: "web",
      files: { [CONFIG]: 'HOST=web\n  hostname="10.0.0.9"\n  IDENTITYFILE "~/.ssh/my key"\n' },
      expect: { hostName: "10.0.0.9", identityFiles: [`${HOME}/.ssh/my key`] },
    },
    {
      name: "comments are ignored",
      alias: "web",
      files: { [CONFIG]: "# Host web\nHost web # trailing\n  # User x\n  User y\n" },
      expect: { user: "y" },
    },
    {
      name: "UserKnownHostsFile with several files",
      alias: "web",
      files: { [CONFIG]: "Host web\n  UserKnownHostsFile ~/.ssh/kh1 /etc/kh2\n" },
      expect: { userKnownHostsFiles: [`${HOME}/.ssh/kh1`, "/etc/kh2"] },
    },
    {
      name: "IdentitiesOnly, IdentityAgent none, timeouts",
      alias: "web",
      files: { [CONFIG]: "Host web\n  IdentitiesOnly yes\n  IdentityAgent none\n  ConnectTimeout 7\n  ServerAliveInterval 30\n" },
      expect: { identitiesOnly: true, identityAgent: "none", connectTimeoutMs: 7000, serverAliveIntervalMs: 30000 },
    },
    {
      name: "ProxyJump chain with user@host:port and ssh:// forms",
      alias: "web",
      files: { [CONFIG]: "Host web\n  ProxyJump bastion,ops@jump2:2222,ssh://edge,[::1]:2200\n" },
      expect: {
        proxyJump: [{ host: "bastion" }, { host: "jump2", user: "ops", port: 2222 }, { host: "edge" }, { host: "::1", port: 2200 }],
      },
    },
    {
      name: "ProxyJump none disables a later ProxyJump",
      alias: "web",
      files: { [CONFIG]: "Host web\n  ProxyJump none\nHost *\n  ProxyJump bastion\n" },
      expect: { proxyJump: [] },
    },
    {
      name: "Match host (after HostName), originalhost, user, all",
      alias: "web",
      files: {
        [CONFIG]: [
          "Host web",
          "  HostName web.prod",
          "Match host *.prod",
          "  User fromhost",
          "Match originalhost web",
          "  Port 2201",
          "Match all",
          "  IdentityFile ~/.ssh/all",
          "Match user fromhost",
          "  IdentitiesOnly yes",
          "Match !originalhost web",
          "  IdentityFile ~/.ssh/never",
          "",
        ].join("\n"),
      },
      expect: { hostName: "web.prod", user: "fromhost", port: 2201, identityFiles: [`${HOME}/.ssh/all`], identitiesOnly: true },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const resolved = resolve(c.alias, c.files);
      for (const [key, value] of Object.entries(c.expect)) {
        expect(resolved[key as keyof ResolvedSshHost]).toEqual(value as never);
      }
    });
  }

  test("Include: relative to ~/.ssh, globs in sorted order, absolute paths, conditional inside Host", () => {
    const source = memory({
      [CONFIG]: "Include config.d/*.conf\nHost web\n  Include /etc/ssh/web_extra\nHost other\n  Include never_read\n",
      [`${HOME}/.ssh/config.d/20-b.conf`]: "Host web\n  Port 2202\n  IdentityFile ~/.ssh/b\n",
      [`${HOME}/.ssh/config.d/10-a.conf`]: "Host web\n  User from-a\n  IdentityFile ~/.ssh/a\n",
      [`${HOME}/.ssh/config.d/notes.txt`]: "Host web\n  User from-txt\n",
      "/etc/ssh/web_extra": "HostName extra.example\n",
    });
    const resolved = resolveSshConfig("web", CONFIG, source);
    expect(resolved.user).toBe("from-a");
    expect(resolved.port).toBe(2202);
    expect(resolved.hostName).toBe("extra.example");
    expect(resolved.identityFiles).toEqual([`${HOME}/.ssh/a`, `${HOME}/.ssh/b`]);
    // OpenSSH reads an Include inside a block that does not apply too (to check it); nothing of it applies.
    expect(source.touched).toContain(`${HOME}/.ssh/never_read`);
  });

  test("the system file comes after the user file; its relative Include is under /etc/ssh", () => {
    const source = {
      ...memory({
        [CONFIG]: "Host web\n  User fromuser\n",
        "/etc/ssh/ssh_config": "Include sys.d/*.conf\nHost *\n  User fromsystem\n  Port 2299\n",
        "/etc/ssh/sys.d/10.conf": "Host web\n  IdentityFile ~/.ssh/from_system_include\n",
      }),
      systemConfigPath: "/etc/ssh/ssh_config",
    };
    const resolved = resolveSshConfig("web", CONFIG, source);
    expect(resolved.user).toBe("fromuser");
    expect(resolved.port).toBe(2299);
    expect(resolved.identityFiles).toEqual([`${HOME}/.ssh/from_system_include`]);
  });

  test("Host lines inside an included file do not leak out of it", () => {
    const resolved = resolve("web", {
      [CONFIG]: "Host web\n  Include inc\n  User after-include\n",
      [`${HOME}/.ssh/inc`]: "Host nothing-matches\n  Port 9\n",
    });
    expect(resolved.user).toBe("after-include");
    expect(resolved.port).toBeUndefined();
  });

  test("a config that includes itself three times fails at once, as OpenSSH (17 files read, not 3^16)", () => {
    const source = memory({ [CONFIG]: "Include config\nInclude config\nInclude config\nHost *\n  User x\n" });
    const started = performance.now();
    const resolved = resolveSshConfig("web", CONFIG, source);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(resolved.errors).toEqual([expect.stringContaining("Too many recursive configuration includes")]);
    expect(source.touched.filter((p) => p === CONFIG)).toHaveLength(17);
  });

  test("Include: 16 nested levels are fine, the 17th is refused (OpenSSH's READCONF_MAX_DEPTH)", () => {
    const chain = (levels: number): Record<string, string> => {
      const files: Record<string, string> = { [CONFIG]: "Include c1\n" };
      for (let i = 1; i < levels; i++) files[`${HOME}/.ssh/c${i}`] = `Include c${i + 1}\n`;
      files[`${HOME}/.ssh/c${levels}`] = "User deep\n";
      return files;
    };
    const ok = resolve("web", chain(16));
    expect(ok.user).toBe("deep");
    expect(ok.errors).toBeUndefined();
    expect(resolve("web", chain(17)).errors).toEqual([expect.stringContaining("Too many recursive configuration includes")]);
  });

  test("Include inside a block that does not apply is still followed: a self-include there fails too", () => {
    const resolved = resolve("web", { [CONFIG]: "Host other\n  Include config\nHost *\n  User x\n" });
    expect(resolved.errors).toEqual([expect.stringContaining("Too many recursive configuration includes")]);
  });

  test("total include work is bounded: a wide fan-out that never nests too deep is refused after 256 files", () => {
    // 6 levels of 8 includes each would be 8^6 = 262144 reads.
    const files: Record<string, string> = { [CONFIG]: "Include l1\n".repeat(8) };
    for (let i = 1; i < 6; i++) files[`${HOME}/.ssh/l${i}`] = `Include l${i + 1}\n`.repeat(8);
    files[`${HOME}/.ssh/l6`] = "User leaf\n";
    const source = memory(files);
    const resolved = resolveSshConfig("web", CONFIG, source);
    expect(resolved.errors).toEqual([expect.stringContaining("more than 256 configuration files")]);
    expect(source.touched.length).toBeLessThanOrEqual(257);
  });

  test("Match exec is never executed: block not applied, warning given, nothing ran", () => {
    const dir = mkdtempSync(join(tmpdir(), "sap-cfg-"));
    try {
      const marker = join(dir, "marker");
      mkdirSync(join(dir, ".ssh"));
      const config = join(dir, ".ssh", "config");
      writeFileSync(
        config,
        `Match exec "touch ${marker}"\n  User hijacked\n  IdentityFile ~/.ssh/never\nHost web\n  User deploy\n`,
      );
      const source = {
        homeDir: dir,
        readFile: (p: string) => (existsSync(p) ? readFileSync(p, "utf8") : undefined),
        listDir: (p: string) => readdirSync(p),
      };
      const resolved = resolveSshConfig("web", config, source);
      expect(resolved.user).toBe("deploy");
      expect(resolved.identityFiles).toEqual([]);
      expect(resolved.warnings.some((w) => w.includes("Match exec is never executed"))).toBe(true);
      // A block that cannot be evaluated and would change where the connection goes is refused, not skipped.
      writeFileSync(config, `Match exec "touch ${marker}"\n  ProxyCommand sh -c 'touch ${marker}'\nHost web\n  User deploy\n`);
      const routed = resolveSshConfig("web", config, source);
      expect(routed.errors).toEqual([expect.stringContaining("proxycommand is set inside a Match block this library cannot evaluate")]);
      expect(existsSync(marker)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("ProxyCommand: the rest of the line verbatim, %h %n %p %r %% expanded (never run here)", () => {
    const resolved = resolve("Web", { [CONFIG]: 'Host Web\n  HostName Real.Example\n  User ops\n  Port 2201\n  ProxyCommand=nc  "%h"  %p # %r %n 100%%\n' });
    expect(resolved.proxyCommand).toBe('nc  "real.example"  2201 # ops Web 100%');
    expect(resolved.proxyJump).toEqual([]);
  });

  test("ProxyCommand refuses host or user names a shell would interpret", () => {
    const resolved = resolve("x;touch pwned", { [CONFIG]: "Host *\n  ProxyCommand nc %n %p\n" });
    expect(resolved.errors).toEqual([expect.stringContaining("refusing to put %n")]);
    expect(resolved.proxyCommand).toBeUndefined();
  });

  test("HostKeyAlias is resolved; trust-relevant keywords that are not applied are reported", () => {
    const resolved = resolve("web", {
      [CONFIG]: "Host web\n  HostKeyAlias Web-Alias\n  StrictHostKeyChecking no\n  KnownHostsCommand /bin/evil %H\n",
    });
    expect(resolved.hostKeyAlias).toBe("web-alias");
    expect(resolved.warnings).toContain("StrictHostKeyChecking is not read; the hostKeyPolicy option decides (default strict)");
    expect(resolved.warnings.some((w) => w.startsWith("KnownHostsCommand is not supported"))).toBe(true);
  });

  test("Match exec next to a criterion that fails is simply not matching (no warning, no refusal)", () => {
    const resolved = resolve("web", { [CONFIG]: 'Match host *.corp exec "vpn-down"\n  ProxyCommand nc %h %p\nHost web\n  User deploy\n' });
    expect(resolved.errors).toBeUndefined();
    expect(resolved.proxyCommand).toBeUndefined();
    expect(resolved.warnings).toEqual([]);
  });

  test("unsupported Match criteria do not match and warn", () => {
    const resolved = resolve("web", { [CONFIG]: "Match localnetwork 10.0.0.0/8\n  User x\n" });
    expect(resolved.user).toBeUndefined();
    expect(resolved.warnings.some((w) => w.includes("Match localnetwork is not supported"))).toBe(true);
  });
});

describe("parseSshDestination", () => {
  const cases: [string, ReturnType<typeof parseSshDestination>][] = [
    ["web1", { host: "web1" }],
    ["deploy@web1", { host: "web1", user: "deploy" }],
    ["deploy@web1:2222", { host: "web1", user: "deploy", port: 2222 }],
    ["ssh://deploy@web1:2222", { host: "web1", user: "deploy", port: 2222 }],
    ["[::1]:2200", { host: "::1", port: 2200 }],
    ["::1", { host: "::1" }],
    ["a@b@web1", { host: "web1", user: "a@b" }],
    ["web1:0", null],
    ["web1:70000", null],
    ["web1:x", null],
    ["@web1", null],
    ["", null],
  ];
  for (const [input, expected] of cases) {
    test(JSON.stringify(input), () => expect(parseSshDestination(input)).toEqual(expected));
  }
});
