/**
 * ssh_config resolution compared with the real OpenSSH client on the same
 * file: `ssh -G -F <file> <host>` prints what ssh would use, and
 * resolveSshTarget / resolveSshConfig must say the same (issue 18, 13).
 * ssh -G leaves IdentityFile, CertificateFile and ProxyCommand unexpanded;
 * those are expanded here with ssh's own hostname/port/user by a small
 * independent expander, so the library's expansion is compared with
 * OpenSSH's rules, not with itself (the real logins in auth_sshd.test.ts and
 * proxy_sshd.test.ts check the expansions end to end).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { resolveSshConfig } from "../../lib/ssh/config.ts";
import { formatSshDestination } from "../../lib/ssh/destination.ts";
import { localUser } from "../../lib/ssh/local_user.ts";
import { resolveSshTarget } from "../../lib/ssh/options.ts";
import { sshdAvailable } from "../support/sshd.ts";

const sshClient = spawnSync("ssh", ["-V"], { encoding: "utf8" }).error === undefined;
if (!sshClient && process.env.REQUIRE_SSHD === "1") throw new Error("REQUIRE_SSHD=1 but the OpenSSH client (ssh) is missing");
const ready = sshClient && sshdAvailable();

interface Case {
  name: string;
  config: string;
  /** The ssh argument: `[user@]alias`. */
  host: string;
  env?: Record<string, string>;
  /** OpenSSH refuses the configuration; the library must too, with this in its message. */
  error?: string;
}

const me = localUser();

/** ssh -G output: keyword → one entry per line. */
function sshG(file: string, host: string, env: Record<string, string>): { status: number | null; keys: Map<string, string[]>; stderr: string } {
  const result = spawnSync("ssh", ["-G", "-F", file, host], { encoding: "utf8", env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const keys = new Map<string, string[]>();
  for (const line of result.stdout.split("\n")) {
    const space = line.indexOf(" ");
    if (space < 0) continue;
    const key = line.slice(0, space);
    keys.set(key, [...(keys.get(key) ?? []), line.slice(space + 1)]);
  }
  return { status: result.status, keys, stderr: result.stderr };
}

/** ssh_config(5) TOKENS and ${VAR}, independently of lib/ssh/config_expand.ts, with ssh -G's own values. */
function expandLikeOpenSsh(value: string, g: Map<string, string[]>, alias: string, env: Record<string, string>, letters: string): string {
  const host = g.get("hostname")![0]!;
  const port = g.get("port")![0]!;
  const user = g.get("user")![0]!;
  const local = hostname();
  const values: Record<string, string> = {
    "%": "%", h: host, p: port, r: user, n: alias, u: me.name, d: me.home, i: String(me.uid), L: local.split(".")[0]!, l: local,
    k: g.get("hostkeyalias")?.[0] ?? alias, C: createHash("sha1").update(local + host + port + user).digest("hex"),
  };
  const tilde = value.startsWith("~/") ? me.home + value.slice(1) : value;
  return tilde
    .replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => env[name] ?? `<unset ${name}>`)
    .replace(/%(.)/g, (m, c: string) => (letters.includes(c) || c === "%" ? values[c]! : m));
}

const CASES: Case[] = [
  { name: "Host a,b is one literal pattern: it matches neither a nor b", config: "Host a,b\n  User comma\n", host: "a" },
  { name: "Host patterns are case-sensitive (Web)", config: "Host Web\n  User upper\nHost web\n  Port 2200\n", host: "Web" },
  { name: "Host patterns are case-sensitive (web)", config: "Host Web\n  User upper\nHost web\n  Port 2200\n", host: "web" },
  { name: "Host patterns are case-sensitive (WEB matches neither)", config: "Host Web\n  User upper\nHost web\n  Port 2200\n", host: "WEB" },
  {
    name: "Match originalhost is the name as typed; Match host the lowercased name before HostName",
    config: "Match originalhost Web\n  User origUpper\nMatch host web\n  Port 2001\nMatch host Web\n  Port 2002\nHost *\n  HostName %h.EXAMPLE\n",
    host: "Web",
  },
  {
    name: "Match host sees HostName as written; the final hostname is lowercased",
    config: "Host Web\n  HostName Real.Example\nMatch host Real.Example\n  User matchedUpper\nMatch host real.example\n  User matchedLower\n",
    host: "Web",
  },
  { name: "Match user is case-sensitive, and sees user@ from the command line", config: "Match user abc\n  Port 3\nMatch user Abc\n  Port 4\n", host: "Abc@web" },
  { name: "first obtained value wins; lines before any Host apply to all", config: "User early\nHost web\n  User late\n  Port 2202\nHost *\n  Port 2203\n", host: "web" },
  { name: "no IdentityFile: OpenSSH's default identities in its order", config: "Host web\n  User u\n", host: "web" },
  { name: "IdentityFile none: no identity files at all", config: "Host web\n  IdentityFile none\n", host: "web" },
  { name: "IdentityFile none does not cancel the other IdentityFile lines", config: "Host web\n  IdentityFile none\n  IdentityFile ~/.ssh/k2\n", host: "web" },
  {
    name: "IdentityFile, CertificateFile, UserKnownHostsFile: ~, tokens and ${VAR}",
    config: [
      "Host t",
      "  HostName real.example",
      "  User deploy",
      "  Port 2201",
      "  HostKeyAlias KeyAlias",
      "  IdentityFile ${SAPVAR}/id_%h_%r_%p_%n_%u_%d_%i_%k_%C_%L_%l_%%",
      "  CertificateFile ~/cert_%h_%r",
      "  UserKnownHostsFile ~/kh_%h_%p ${SAPVAR}/kh2_%C",
      "",
    ].join("\n"),
    host: "t",
    env: { SAPVAR: "/env/dir" },
  },
  { name: "UserKnownHostsFile none: no user file (the global ones stay)", config: "Host web\n  UserKnownHostsFile none\n", host: "web" },
  { name: "GlobalKnownHostsFile none", config: "Host web\n  GlobalKnownHostsFile none\n  UserKnownHostsFile /k1 /k2\n", host: "web" },
  { name: "IdentityAgent none", config: "Host web\n  IdentityAgent none\n", host: "web", env: { SSH_AUTH_SOCK: "/tmp/agent.sock" } },
  { name: "IdentityAgent with ${VAR} and %r", config: "Host web\n  User ops\n  IdentityAgent ${SAPVAR}/agent.%r\n", host: "web", env: { SAPVAR: "/run/a" } },
  { name: "IdentityAgent SSH_AUTH_SOCK reads the variable", config: "Host web\n  IdentityAgent SSH_AUTH_SOCK\n", host: "web", env: { SSH_AUTH_SOCK: "/tmp/from-env.sock" } },
  { name: "ProxyJump none does not stop a later ProxyCommand", config: "Host n1\n  ProxyJump none\n  ProxyCommand nc %h %p %r %n %%\n", host: "n1" },
  { name: "ProxyCommand none stops a later ProxyJump", config: "Host n3\n  ProxyCommand none\n  ProxyJump j1\n", host: "n3" },
  { name: "ProxyCommand first wins over ProxyJump", config: "Host n4\n  ProxyCommand nc x %p\n  ProxyJump j1\n", host: "n4" },
  { name: "ProxyJump first wins over ProxyCommand", config: "Host n5\n  ProxyJump j1,ops@j2:2222\n  ProxyCommand nc x\n", host: "n5" },
  { name: "ProxyJump none stops a later ProxyJump", config: "Host n8\n  ProxyJump none\nHost *\n  ProxyJump jstar\n", host: "n8" },
  { name: "ProxyJump with %r and %h tokens", config: "Host web\n  User ops\n  ProxyJump %r@bastion-of-%h:2222\n", host: "web" },
  { name: "ServerAliveCountMax, ServerAliveInterval, ConnectTimeout in OpenSSH time format", config: "Host web\n  ServerAliveCountMax 7\n  ServerAliveInterval 9\n  ConnectTimeout 1m5s\n", host: "web" },
  { name: "HostKeyAlias is lowercased", config: "Host web\n  HostKeyAlias ABC\n", host: "web" },
  { name: "auth method switches", config: "Host web\n  PasswordAuthentication no\n  KbdInteractiveAuthentication no\n  PubkeyAuthentication host-bound\n  IdentitiesOnly yes\n", host: "web" },
  { name: "PubkeyAuthentication no", config: "Host web\n  PubkeyAuthentication no\n", host: "web" },
  { name: "quotes and escapes as argv_split: '…', \"…\", \\ and # inside a word", config: "Host h\n  User 'sq u'\n  HostName \"dq h\"x\n  IdentityFile a\\ b\n  UserKnownHostsFile /k#notcomment /k2 #comment\n", host: "h" },
  { name: "unknown token %j is an error", config: "Host t\n  UserKnownHostsFile /tmp/kh_%j\n", host: "t", error: "unknown token %j" },
  { name: "an unset ${VAR} is an error", config: "Host t\n  IdentityAgent ${SAP_UNSET_VAR}/agent\n", host: "t", error: "SAP_UNSET_VAR" },
  { name: "Port abc is an error", config: "Host h\n  Port abc\n", host: "h", error: "Bad port" },
  { name: "Port 70000 is an error", config: "Host h\n  Port 70000\n", host: "h", error: "Bad port" },
  { name: "UserKnownHostsFile none must appear alone", config: "Host h\n  UserKnownHostsFile ~/kh1 none\n", host: "h", error: "must appear alone" },
  { name: "HostName takes only %h", config: "Host t\n  HostName %h.x.%p\n", host: "t", error: "unknown token %p" },
];

describe.skipIf(!ready)("ssh_config resolution matches `ssh -G` of OpenSSH", () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), "sap-parity-"));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  let n = 0;
  const file = (text: string): string => {
    const path = join(work, `config-${n++}`);
    writeFileSync(path, text);
    return path;
  };

  async function withEnv<T>(env: Record<string, string>, body: () => Promise<T>): Promise<T> {
    const saved = new Map(["SSH_AUTH_SOCK", ...Object.keys(env)].map((k) => [k, process.env[k]]));
    delete process.env.SSH_AUTH_SOCK;
    Object.assign(process.env, env);
    try {
      return await body();
    } finally {
      for (const [k, v] of saved) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }

  for (const c of CASES) {
    test(c.name, async () => {
      const path = file(c.config);
      const env = c.env ?? {};
      const g = sshG(path, c.host, env);
      const at = c.host.lastIndexOf("@");
      const alias = c.host.slice(at + 1);
      const user = at >= 0 ? c.host.slice(0, at) : undefined;
      const target = await withEnv(env, () =>
        resolveSshTarget({ host: alias, ...(user ? { username: user } : {}), sshConfigFile: path, allowProxyCommand: true })
      );
      if (c.error !== undefined) {
        expect(g.status).toBe(255);
        expect(target.refusal?.code).toBe("connect_failed");
        expect(target.refusal?.message).toContain(c.error);
        return;
      }
      expect(g.status).toBe(0);
      expect(target.refusal).toBeNull();
      const resolved = await withEnv(env, async () =>
        resolveSshConfig(alias, path, { homeDir: me.home, localUser: me.name, readFile: (p) => (existsSync(p) ? readFileSync(p, "utf8") : undefined), listDir: (p) => readdirSync(p) }, user ? { user } : {})
      );
      const hop = target.hops.at(-1)!;
      const one = (key: string): string | undefined => g.keys.get(key)?.[0];
      const list = (key: string): string[] => (one(key) ?? "").split(" ").filter((v) => v !== "" && v !== "none");
      const expand = (v: string, letters: string): string => expandLikeOpenSsh(v, g.keys, alias, env, letters);
      const ours = {
        hostname: hop.hostName,
        user: hop.username,
        port: String(hop.port),
        identityfile: hop.auth.identities.map((s) => (s.kind === "file" ? s.path : s.label)),
        knownHostsFiles: hop.knownHosts.files,
        identityagent: hop.auth.agent,
        proxycommand: target.hops[0]!.proxyCommand ?? null,
        proxyjump: resolved.proxyJump.map(formatSshDestination).join(",") || null,
        serveralivecountmax: String(hop.keepaliveCountMax),
        serveraliveinterval: String((resolved.serverAliveIntervalMs ?? 0) / 1000),
        connecttimeout: resolved.connectTimeoutMs === undefined ? "none" : String(resolved.connectTimeoutMs / 1000),
        identitiesonly: hop.auth.identitiesOnly ? "yes" : "no",
        hostkeyalias: hop.hostKeyAlias ?? null,
        passwordauthentication: hop.auth.allow.password ? "yes" : "no",
        kbdinteractiveauthentication: hop.auth.allow.keyboardInteractive ? "yes" : "no",
        pubkeyauthentication: hop.auth.allow.publickey,
        certificatefile: resolved.certificateFiles ?? [],
      };
      const agentLine = one("identityagent");
      const theirs = {
        hostname: one("hostname"),
        user: one("user"),
        port: one("port"),
        identityfile: (g.keys.get("identityfile") ?? []).filter((v) => v !== "none").map((v) => expand(v, "Cdhikln%pLru")),
        knownHostsFiles: [...list("userknownhostsfile"), ...list("globalknownhostsfile")],
        identityagent: agentLine === undefined
          ? env.SSH_AUTH_SOCK ?? null
          : agentLine === "none"
          ? null
          : agentLine === "SSH_AUTH_SOCK"
          ? env.SSH_AUTH_SOCK ?? null
          : agentLine,
        proxycommand: one("proxycommand") === undefined ? null : expand(one("proxycommand")!, "hnpr"),
        proxyjump: one("proxyjump") === undefined ? null : expand(one("proxyjump")!, "hnpr"),
        serveralivecountmax: one("serveralivecountmax"),
        serveraliveinterval: one("serveraliveinterval"),
        connecttimeout: one("connecttimeout"),
        identitiesonly: one("identitiesonly"),
        hostkeyalias: one("hostkeyalias") ?? null,
        passwordauthentication: one("passwordauthentication"),
        kbdinteractiveauthentication: one("kbdinteractiveauthentication"),
        pubkeyauthentication: one("pubkeyauthentication") !== "no" && one("pubkeyauthentication") !== "false",
        certificatefile: (g.keys.get("certificatefile") ?? []).map((v) => expand(v, "Cdhikln%pLru")),
      };
      expect(ours as unknown).toEqual(theirs);
    });
  }

  test("recursion: a config including itself three times fails at once in both (OpenSSH: Too many recursive configuration includes)", async () => {
    const path = join(work, "self");
    writeFileSync(path, `Include ${path}\nInclude ${path}\nInclude ${path}\nHost *\n  User x\n`);
    const g = sshG(path, "h", {});
    expect(g.status).toBe(255);
    expect(g.stderr).toContain("Too many recursive configuration includes");
    const started = performance.now();
    const target = await resolveSshTarget({ host: "h", sshConfigFile: path });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(target.refusal?.message).toContain("Too many recursive configuration includes");
  });

  test("recursion inside a Host block that does not apply fails in both", async () => {
    const path = join(work, "self2");
    writeFileSync(path, `Host nomatch\n  Include ${path}\nHost *\n  User ok\n`);
    expect(sshG(path, "h", {}).status).toBe(255);
    expect((await resolveSshTarget({ host: "h", sshConfigFile: path })).refusal?.message).toContain("Too many recursive");
  });

  test("16 nested Includes work in both, 17 fail in both", async () => {
    for (const [levels, fails] of [[16, false], [17, true]] as const) {
      const dir = mkdtempSync(join(work, `chain${levels}-`));
      for (let i = 1; i <= levels; i++) writeFileSync(join(dir, `c${i}`), `Include ${join(dir, `c${i + 1}`)}\n`);
      writeFileSync(join(dir, `c${levels + 1}`), "User deep\n");
      const g = sshG(join(dir, "c1"), "h", {});
      const target = await resolveSshTarget({ host: "h", sshConfigFile: join(dir, "c1") });
      expect(g.status === 255).toBe(fails);
      expect(target.refusal !== null).toBe(fails);
      if (!fails) expect(target.hops.at(-1)!.username).toBe(g.keys.get("user")![0]!);
    }
  });

  test("the local user and home come from the passwd database, not $USER / $HOME (as ssh -G shows)", async () => {
    const path = file("Host web\n  HostName 10.9.8.7\n");
    const fake = { HOME: join(work, "fake-home"), USER: "not-me", LOGNAME: "not-me" };
    const g = sshG(path, "web", fake);
    const target = await withEnv(fake, () => resolveSshTarget({ host: "web", sshConfigFile: path }));
    const hop = target.hops.at(-1)!;
    expect(hop.username).toBe(g.keys.get("user")![0]!);
    expect(hop.username).toBe(me.name);
    expect(hop.knownHosts.files.slice(0, 2)).toEqual(g.keys.get("userknownhostsfile")![0]!.split(" "));
    expect(hop.auth.identities.map((s) => (s.kind === "file" ? s.path : ""))[0]).toBe(`${me.home}/.ssh/id_rsa`);
  });
});
