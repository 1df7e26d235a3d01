/**
 * Authentication as OpenSSH does it (issue 18), each case run with the real
 * `ssh` client on the same ssh_config and against the same real sshd, with a
 * real `ssh-agent` this suite starts:
 * - IdentitiesOnly restricts the agent to the listed identities (by public
 *   key); a listed key whose file is encrypted is signed by the agent, no
 *   passphrase asked;
 * - a missing, dead or silent agent socket falls back to the key files with
 *   an `agent_unavailable` warning;
 * - RSA keys sign with rsa-sha2-512 for a server that accepts only that;
 * - password and keyboard-interactive (PAM) logins for this run's throwaway
 *   password user (`sapp<id>`), the password from a callback or (CLI) an
 *   environment variable;
 * - user certificates, which ssh2 cannot present: `auth_unsupported`, naming them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectSsh } from "../../lib/ssh/shell.ts";
import type { SshOptions } from "../../lib/ssh/shell.ts";
import { brokenAgents, startAgent } from "../support/ssh_agent.ts";
import type { BrokenAgents, TestAgent } from "../support/ssh_agent.ts";
import { ensureTestUsers, sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd, TestUsers } from "../support/sshd.ts";
import { failureOf, text } from "./helpers.ts";

const ready = sshdReady("authentication like OpenSSH (test/ssh/auth_sshd.test.ts)", true);
const REPO = join(import.meta.dir, "..", "..");

function keygen(path: string, type: "ed25519" | "rsa", passphrase = ""): string {
  const result = spawnSync("ssh-keygen", ["-q", "-t", type, ...(type === "rsa" ? ["-b", "2048"] : []), "-N", passphrase, "-C", "sap-auth-test", "-f", path]);
  if (result.status !== 0) throw new Error(`ssh-keygen failed: ${result.stderr}`);
  return path;
}

function fingerprint(pubPath: string): string {
  return spawnSync("ssh-keygen", ["-l", "-E", "sha256", "-f", pubPath], { encoding: "utf8" }).stdout.split(/\s+/)[1]!;
}

describe.skipIf(!ready)("authentication like OpenSSH, against real sshds and a real ssh-agent", () => {
  let work: string;
  let sshd: Sshd;
  let rsaOnly512: Sshd;
  let passwordSshd: Sshd;
  let kbdSshd: Sshd;
  let certSshd: Sshd;
  let agent: TestAgent;
  let broken: BrokenAgents;
  let knownHosts: string;
  let password: string;
  let users: TestUsers;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "sap-auth-"));
    users = ensureTestUsers();
    password = users.password;
    keys.unlisted = keygen(join(work, "unlisted"), "ed25519"); // authorized, in the agent
    keys.notAuthorized = keygen(join(work, "not_authorized"), "ed25519"); // listed, not authorized
    keys.encrypted = keygen(join(work, "encrypted"), "ed25519", "agent-holds-me"); // authorized, in the agent
    unlinkSync(`${keys.encrypted}.pub`); // only the private file: its public half comes from the openssh-key-v1 header
    keys.rsa = keygen(join(work, "rsa"), "rsa");
    keys.certified = keygen(join(work, "certified"), "ed25519");
    keygen(join(work, "ca"), "ed25519");
    spawnSync("ssh-keygen", ["-q", "-s", join(work, "ca"), "-I", "sap-test", "-n", users.nopasswdUser, "-V", "-5m:+1h", `${keys.certified}.pub`]);

    sshd = await startSshd();
    for (const name of ["unlisted", "rsa"]) appendFileSync(`${sshd.userKeyPath}.pub`, readFileSync(`${keys[name]}.pub`));
    appendFileSync(`${sshd.userKeyPath}.pub`, spawnSync("ssh-keygen", ["-y", "-P", "agent-holds-me", "-f", keys.encrypted], { encoding: "utf8" }).stdout);
    rsaOnly512 = await startSshd({ extraConfig: ["PubkeyAcceptedAlgorithms rsa-sha2-512"] });
    appendFileSync(`${rsaOnly512.userKeyPath}.pub`, readFileSync(`${keys.rsa}.pub`));
    passwordSshd = await startSshd({ extraConfig: ["PasswordAuthentication yes", "AuthenticationMethods password"] });
    kbdSshd = await startSshd({ extraConfig: ["UsePAM yes", "KbdInteractiveAuthentication yes", "AuthenticationMethods keyboard-interactive"] });
    // Only the certificate opens this one: the plain key is not authorized.
    certSshd = await startSshd({ extraConfig: [`TrustedUserCAKeys ${join(work, "ca")}.pub`] });
    knownHosts = writeKnownHosts(work, [sshd, rsaOnly512, passwordSshd, kbdSshd, certSshd].map((s) => s.hostKeyLine));
    agent = await startAgent();
    agent.add(keys.unlisted);
    agent.add(keys.encrypted, "agent-holds-me");
    broken = await brokenAgents();
  }, 30_000);
  afterAll(async () => {
    await Promise.all([sshd, rsaOnly512, passwordSshd, kbdSshd, certSshd].map((s) => s?.stop()));
    await agent?.stop();
    await broken?.stop();
    rmSync(work, { recursive: true, force: true });
  }, 30_000);

  let n = 0;
  /** An ssh_config with `Host box` for `server`, plus `lines`. */
  function config(server: Sshd, lines: string[], user = server.user): string {
    const path = join(work, `config-${n++}`);
    writeFileSync(path, ["Host box", "  HostName 127.0.0.1", `  Port ${server.port}`, `  User ${user}`, `  UserKnownHostsFile ${knownHosts}`, ...lines.map((l) => `  ${l}`), ""].join("\n"));
    return path;
  }

  /** The real client on the same config: exit status and stderr. Password prompts are answered by SSH_ASKPASS from a root-only file. */
  function realSsh(configPath: string, env: Record<string, string | undefined>, withPassword = false): { status: number | null; stderr: string } {
    const askpass = join(work, "askpass.sh");
    writeFileSync(askpass, `#!/bin/sh\ncat ${users.passwordFile}\n`, { mode: 0o700 });
    const result = spawnSync("setsid", ["ssh", "-F", configPath, "-o", `BatchMode=${withPassword ? "no" : "yes"}`, "-o", "StrictHostKeyChecking=yes", "box", "true"], {
      encoding: "utf8",
      timeout: 20_000,
      env: {
        PATH: process.env.PATH ?? "",
        ...(withPassword ? { SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: "force", DISPLAY: ":0" } : {}),
        ...Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)),
      } as Record<string, string>,
      stdio: ["ignore", "pipe", "pipe"],
    });
    return { status: result.status, stderr: result.stderr };
  }

  async function withAgentEnv<T>(socket: string | undefined, body: () => Promise<T>): Promise<T> {
    const saved = process.env.SSH_AUTH_SOCK;
    if (socket === undefined) delete process.env.SSH_AUTH_SOCK;
    else process.env.SSH_AUTH_SOCK = socket;
    try {
      return await body();
    } finally {
      if (saved === undefined) delete process.env.SSH_AUTH_SOCK;
      else process.env.SSH_AUTH_SOCK = saved;
    }
  }

  async function logsIn(options: SshOptions, socket?: string): Promise<{ user: string; warnings: string[] }> {
    const shell = await withAgentEnv(socket, () => connectSsh(options));
    try {
      return { user: text((await shell.exec("id -un")).stdout).trim(), warnings: shell.warnings.map((w) => `${w.code}: ${w.message}`) };
    } finally {
      await shell.close();
    }
  }

  test("IdentitiesOnly + IdentityAgent: an agent key that is not listed is never offered (OpenSSH refuses too)", async () => {
    const path = config(sshd, ["IdentitiesOnly yes", `IdentityFile ${keys.notAuthorized}`, `IdentityAgent ${agent.socket}`]);
    expect(realSsh(path, {}).status).toBe(255);
    const failed = await failureOf(withAgentEnv(undefined, () => connectSsh({ host: "box", sshConfigFile: path })));
    expect(failed.code).toBe("auth_failed");
    expect(failed.message).toContain(`tried: key file ${keys.notAuthorized} (rejected)`);
    expect(failed.message).not.toContain(fingerprint(`${keys.unlisted}.pub`));
    // The same config without IdentitiesOnly: the agent's key opens it, for both.
    const open = config(sshd, [`IdentityFile ${keys.notAuthorized}`, `IdentityAgent ${agent.socket}`]);
    expect(realSsh(open, {}).status).toBe(0);
    expect((await logsIn({ host: "box", sshConfigFile: open })).user).toBe(sshd.user);
  }, 30_000);

  test("IdentitiesOnly + SSH_AUTH_SOCK: a listed key whose file is encrypted is signed by the agent, no passphrase asked", async () => {
    const path = config(sshd, ["IdentitiesOnly yes", `IdentityFile ${keys.encrypted}`]);
    expect(realSsh(path, { SSH_AUTH_SOCK: agent.socket }).status).toBe(0);
    const asked: string[] = [];
    const passphrase = (keyPath: string): Promise<string> => {
      asked.push(keyPath);
      return Promise.resolve("wrong anyway");
    };
    const logged = await logsIn({ host: "box", sshConfigFile: path, passphrase }, agent.socket);
    expect(logged.user).toBe(sshd.user);
    expect(asked).toEqual([]);
  }, 30_000);

  // OpenSSH falls back for the first two; on a silent agent it waits forever (no timeout), where this
  // library gives up after AGENT_TIMEOUT_MS (5 s) and falls back too — a documented difference.
  const stale: [string, (b: BrokenAgents) => string, string, boolean][] = [
    ["missing (a stale SSH_AUTH_SOCK)", (b) => b.missing, "ENOENT", true],
    ["dead (nothing listens)", (b) => b.dead, "ECONNREFUSED", true],
    ["silent (accepts, never answers; OpenSSH hangs here)", (b) => b.silent, "no answer within", false],
  ];
  for (const [name, socketOf, reason, compare] of stale) {
    test(`an unreachable agent, ${name}: the key files are used, with an agent_unavailable warning`, async () => {
      const path = config(sshd, [`IdentityFile ${sshd.userKeyPath}`]);
      if (compare) expect(realSsh(path, { SSH_AUTH_SOCK: socketOf(broken) }).status).toBe(0);
      const logged = await logsIn({ host: "box", sshConfigFile: path }, socketOf(broken));
      expect(logged.user).toBe(sshd.user);
      expect(logged.warnings).toEqual([expect.stringMatching(new RegExp(`^agent_unavailable: .*${reason}.*using key files only`))]);
    }, 30_000);
  }

  test("an unreachable IdentityAgent from ssh_config falls back the same way", async () => {
    const path = config(sshd, [`IdentityFile ${sshd.userKeyPath}`, `IdentityAgent ${broken.dead}`]);
    expect(realSsh(path, {}).status).toBe(0);
    const logged = await logsIn({ host: "box", sshConfigFile: path });
    expect(logged.warnings).toEqual([expect.stringContaining("agent_unavailable")]);
  }, 30_000);

  test("an RSA key signs with rsa-sha2-512 for a server that accepts only rsa-sha2-512 (from the file and through the agent)", async () => {
    const path = config(rsaOnly512, ["IdentitiesOnly yes", `IdentityFile ${keys.rsa}`]);
    expect(realSsh(path, {}).status).toBe(0);
    const offset = rsaOnly512.readLog().length;
    expect((await logsIn({ host: "box", sshConfigFile: path, agent: false })).user).toBe(rsaOnly512.user);
    expect(rsaOnly512.readLog().slice(offset)).toContain(`Accepted publickey for ${rsaOnly512.user}`);
    const rsaAgent = await startAgent();
    try {
      rsaAgent.add(keys.rsa);
      unlinkSync(keys.rsa); // only the agent can sign now (the .pub stays, to list it)
      const viaAgent = config(rsaOnly512, ["IdentitiesOnly yes", `IdentityFile ${keys.rsa}`, `IdentityAgent ${rsaAgent.socket}`]);
      expect(realSsh(viaAgent, {}).status).toBe(0);
      expect((await logsIn({ host: "box", sshConfigFile: viaAgent })).user).toBe(rsaOnly512.user);
    } finally {
      await rsaAgent.stop();
    }
  }, 30_000);

  test("password authentication through a callback (PasswordAuthentication yes); a wrong one is auth_failed and never shown", async () => {
    const path = config(passwordSshd, [], users.passwordUser);
    expect(realSsh(path, {}, true).status).toBe(0);
    const requests: unknown[] = [];
    const ok = await logsIn({
      host: "box",
      sshConfigFile: path,
      agent: false,
      password: (request) => {
        requests.push(request);
        return Promise.resolve(password);
      },
    });
    expect(ok.user).toBe(users.passwordUser);
    expect(requests).toEqual([{ target: `${users.passwordUser}@127.0.0.1:${passwordSshd.port}`, prompt: "password" }]);
    expect(passwordSshd.readLog()).toContain(`Accepted password for ${users.passwordUser}`);
    const wrong = "not-the-password-" + Date.now();
    const failed = await failureOf(connectSsh({ host: "box", sshConfigFile: path, agent: false, password: wrong }));
    expect(failed.code).toBe("auth_failed");
    expect(failed.message).toContain("password (rejected)");
    expect(failed.message).toContain("The server accepts: password");
    expect(JSON.stringify(failed)).not.toContain(wrong);
  }, 30_000);

  test("keyboard-interactive (PAM) answers the hidden Password: prompt with the password", async () => {
    const path = config(kbdSshd, [], users.passwordUser);
    expect(realSsh(path, {}, true).status).toBe(0);
    const ok = await logsIn({ host: "box", sshConfigFile: path, agent: false, password: () => Promise.resolve(password) });
    expect(ok.user).toBe(users.passwordUser);
    expect(kbdSshd.readLog()).toContain(`Accepted keyboard-interactive/pam for ${users.passwordUser}`);
  }, 30_000);

  test("the CLI reads the SSH password from --password-env VAR: not in its argv, not in its output", async () => {
    const root = mkdtempSync(join(tmpdir(), "sap-auth-root-"));
    try {
      spawnSync("chown", [users.passwordUser, root]);
      writeFileSync(join(root, "a.txt"), "one\n");
      spawnSync("chown", [users.passwordUser, join(root, "a.txt")]);
      const args = [
        "examples/apply.ts", "--ssh", `${users.passwordUser}@127.0.0.1:${passwordSshd.port}`, "--root", root,
        "--known-hosts", knownHosts, "--password-env", "SAP_TEST_SSH_PW",
      ];
      const result = spawnSync(process.execPath, args, {
        cwd: REPO,
        encoding: "utf8",
        input: "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n",
        env: { ...process.env, SAP_TEST_SSH_PW: password, SSH_AUTH_SOCK: "" },
        timeout: 30_000,
      });
      expect(args.join(" ")).not.toContain(password);
      expect(result.stdout + result.stderr).not.toContain(password);
      expect(result.status).toBe(0);
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("ONE\n");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 40_000);

  test("a user certificate (<key>-cert.pub, CertificateFile) cannot be presented: auth_unsupported names it", async () => {
    const certificate = `${keys.certified}-cert.pub`;
    const implicit = config(certSshd, [`IdentityFile ${keys.certified}`]);
    expect(realSsh(implicit, {}).status).toBe(0); // OpenSSH logs in with the certificate
    const failed = await failureOf(connectSsh({ host: "box", sshConfigFile: implicit, agent: false }));
    expect(failed.code).toBe("auth_unsupported");
    expect(failed.message).toContain(certificate);
    expect(failed.message).toContain("cannot present OpenSSH user certificates");
    const shellless = config(certSshd, [`IdentityFile ${keys.certified}`, `CertificateFile ${certificate}`]);
    const again = await failureOf(connectSsh({ host: "box", sshConfigFile: shellless, agent: false }));
    expect(again.code).toBe("auth_unsupported");
    expect(again.message).toContain(certificate);
  }, 30_000);
});
