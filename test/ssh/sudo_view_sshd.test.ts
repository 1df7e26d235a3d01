/**
 * `SshShell.withSudo`: elevated (or plain) views of one SSH connection,
 * against a real sshd and the real sudo. The connection count is the TCP
 * proxy's: every test connects through it, so `proxy.accepted` is the
 * number of SSH connections the shell and its views opened together.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { connectSsh } from "../../lib/ssh/shell.ts";
import type { SshOptions, SshShell } from "../../lib/ssh/shell.ts";
import { ensureTestUsers, sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd, TestUsers } from "../support/sshd.ts";
import { startTcpProxy } from "../support/tcp_proxy.ts";
import type { TcpProxy } from "../support/tcp_proxy.ts";
import { bytes, failureOf, killRemote, remoteCommandLines, sshOptions, text } from "./helpers.ts";

const ready = sshdReady("sudo views of one connection (test/ssh/sudo_view_sshd.test.ts)", true);

describe.skipIf(!ready)("withSudo: views of one SSH connection, against a real sshd", () => {
  let sshd: Sshd;
  let work: string;
  let users: TestUsers;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "sap-sudo-view-"));
    chmodSync(work, 0o755); // the login user must reach its own directory below
    sshd = await startSshd();
    users = ensureTestUsers();
  }, 30_000);
  afterAll(async () => {
    await sshd?.stop();
    rmSync(work, { recursive: true, force: true });
  }, 30_000);

  /** A shell (no sudo) connected through a fresh TCP proxy, which counts the SSH connections. */
  async function throughProxy(extra: Partial<SshOptions>): Promise<{ shell: SshShell; proxy: TcpProxy }> {
    const proxy = await startTcpProxy({ targetPort: sshd.port });
    const line = sshd.hostKeyLine.replace(`]:${sshd.port} `, `]:${proxy.port} `);
    const knownHosts = writeKnownHosts(work, [line], `kh-${proxy.port}`);
    const shell = await connectSsh({ ...sshOptions(sshd, knownHosts, extra), port: proxy.port });
    return { shell, proxy };
  }

  /** A directory owned by `user` (0700): the login user and root can write there, nobody else. */
  function privateDir(user: string, name: string): string {
    const dir = join(work, name);
    mkdirSync(dir, { mode: 0o700 });
    const chown = spawnSync("chown", [`${user}:`, dir]);
    if (chown.status !== 0) throw new Error(`chown failed: ${String(chown.stderr)}`);
    return dir;
  }

  test("the view runs programs as root while the shell runs them as the login user, at the same time, on one connection", async () => {
    const { shell, proxy } = await throughProxy({ username: users.nopasswdUser });
    const root = shell.withSudo(true);
    try {
      expect([shell.elevated, root.elevated]).toEqual([false, true]);
      expect(root.label).toBe(shell.label);
      const meet = privateDir(users.nopasswdUser, "meet");
      // Each program waits (up to 10 s) for the other's file: both return "met" only if they ran at the same time.
      const program = (mine: string, theirs: string): string =>
        `id -u; : > ${meet}/${mine}; i=0; while [ ! -e ${meet}/${theirs} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; ` +
        `[ -e ${meet}/${theirs} ] && echo met`;
      const [plain, elevated] = await Promise.all([shell.exec(program("plain", "root")), root.exec(program("root", "plain"))]);
      expect(text(plain.stdout)).toBe(`${uid(users.nopasswdUser)}\nmet\n`);
      expect(text(elevated.stdout)).toBe("0\nmet\n");
      expect(statSync(join(meet, "plain")).uid).toBe(Number(uid(users.nopasswdUser)));
      expect(statSync(join(meet, "root")).uid).toBe(0);

      // The engine's reports say which shell ran: elevated exactly for the view. Each works in a
      // directory of its own user (as root the engine refuses a directory another user owns).
      const rootDir = join(work, "root-owned");
      mkdirSync(rootDir, { mode: 0o755 });
      const add = (name: string): string => `*** Begin Patch\n*** Add File: ${name}\n+hello\n*** End Patch\n`;
      const [asUser, asRoot] = await Promise.all([
        applyPatch(shell, { root: meet, patch: add("by-user.txt") }),
        applyPatch(root, { root: rootDir, patch: add("by-root.txt") }),
      ]);
      expect([asUser.errors, asRoot.errors]).toEqual([undefined, undefined]);
      expect([asUser.ok, asUser.elevated, asRoot.ok, asRoot.elevated]).toEqual([true, false, true, true]);
      expect(statSync(join(meet, "by-user.txt")).uid).toBe(Number(uid(users.nopasswdUser)));
      expect(statSync(join(rootDir, "by-root.txt")).uid).toBe(0);
      expect(readFileSync(join(rootDir, "by-root.txt"), "utf8")).toBe("hello\n");
      expect(proxy.accepted).toBe(1);
    } finally {
      await shell.close();
      await proxy.close();
    }
  }, 20_000);

  test("a wrong sudo password fails auth_failed for that view only; the shell and a view with the right one go on, on the same connection", async () => {
    const { shell, proxy } = await throughProxy({ username: users.passwordUser });
    const wrong = "not-the-password-" + Date.now();
    let askedGood = 0;
    let askedBad = 0;
    const good = shell.withSudo({ password: async () => (askedGood++, users.password) });
    const bad = shell.withSudo({ password: async () => (askedBad++, wrong) });
    try {
      const [badResult, goodResult, plainResult] = await Promise.allSettled([
        failureOf(bad.exec("echo never", { stdin: bytes("x\ny\nz\n") })),
        good.exec("id -u; cat", { stdin: bytes("in\nput") }),
        shell.exec("id -u"),
      ]);
      const failed = (badResult as PromiseFulfilledResult<Awaited<ReturnType<typeof failureOf>>>).value;
      expect(failed.code).toBe("auth_failed");
      expect(failed.message).toContain(`sudo rejected the password for user ${users.passwordUser} on host 127.0.0.1`);
      expect(failed.message).not.toContain(wrong);
      expect(text((goodResult as PromiseFulfilledResult<{ stdout: Uint8Array }>).value.stdout)).toBe("0\nin\nput");
      expect(text((plainResult as PromiseFulfilledResult<{ stdout: Uint8Array }>).value.stdout)).toBe(`${uid(users.passwordUser)}\n`);

      // The failure is not cached as success: the bad view asks and fails again; the good one was checked once.
      expect((await failureOf(bad.exec("echo never"))).code).toBe("auth_failed");
      expect(askedBad).toBe(2);
      // While the good view's program runs, its password is in no command line on the host.
      const running = good.exec("sleep 1.51; id -u");
      await new Promise((resolve) => setTimeout(resolve, 300));
      const lines = await remoteCommandLines(shell);
      expect(lines.some((line) => line.includes("sleep 1.51"))).toBe(true);
      expect(lines.filter((line) => line.includes(users.password))).toEqual([]);
      expect(text((await running).stdout)).toBe("0\n");
      expect(askedGood).toBe(1);
      expect(proxy.accepted).toBe(1);
    } finally {
      await shell.close();
      await proxy.close();
    }
  }, 30_000);

  test("a drop reconnects the shell and its view together: both in-flight calls are outcome_unknown, then one new connection serves both and sudo is checked again", async () => {
    const { shell, proxy } = await throughProxy({ username: users.passwordUser });
    let asked = 0;
    const root = shell.withSudo({ password: async () => (asked++, users.password) });
    try {
      expect(text((await root.exec("id -u")).stdout)).toBe("0\n");
      expect(asked).toBe(1);
      const plainInFlight = failureOf(shell.exec("sleep 20.03"));
      const rootInFlight = failureOf(root.exec("sleep 20.04"));
      setTimeout(() => proxy.cutAll(), 400);
      expect([(await plainInFlight).code, (await rootInFlight).code]).toEqual(["outcome_unknown", "outcome_unknown"]);
      const [plain, elevated] = await Promise.all([shell.exec("id -un"), root.exec("id -u")]);
      expect(text(plain.stdout)).toBe(`${users.passwordUser}\n`);
      expect(text(elevated.stdout)).toBe("0\n");
      // The new connection validated the password again (a sudo check belongs to one connection).
      expect(asked).toBe(2);
      expect(proxy.accepted).toBe(2);
      await killRemote(root, "sleep 20.03"); // the orphans keep running: clean up
      await killRemote(root, "sleep 20.04");
    } finally {
      await shell.close();
      await proxy.close();
    }
  }, 20_000);

  test("the sudo check is the connection's: a password that went wrong after the first check fails the view only after a reconnect, and only the view", async () => {
    const { shell, proxy } = await throughProxy({ username: users.passwordUser });
    let password = users.password;
    const root = shell.withSudo({ password: async () => password });
    try {
      expect(text((await root.exec("id -u")).stdout)).toBe("0\n");
      password = "rotated-away-" + Date.now();
      // Same connection: already checked, not asked again.
      expect(text((await root.exec("id -u")).stdout)).toBe("0\n");
      proxy.cutAll();
      await new Promise((resolve) => setTimeout(resolve, 100)); // let the client see the drop
      const [refused, plain] = await Promise.all([failureOf(root.exec("echo never")), shell.exec("id -u")]);
      expect(refused.code).toBe("auth_failed");
      expect(refused.message).not.toContain(password);
      expect(text(plain.stdout)).toBe(`${uid(users.passwordUser)}\n`);
      password = users.password;
      expect(text((await root.exec("id -u")).stdout)).toBe("0\n");
      expect(proxy.accepted).toBe(2);
    } finally {
      await shell.close();
      await proxy.close();
    }
  }, 30_000);

  test("closing a view refuses only its calls (queued ones too) and keeps the connection; closing the shell ends it for every view", async () => {
    const { shell, proxy } = await throughProxy({ username: users.nopasswdUser, maxChannels: 1 });
    const view = shell.withSudo(true);
    const other = shell.withSudo(true);
    try {
      // One channel slot for all three: the shell's program holds it, both views' calls queue behind it.
      const holding = shell.exec("sleep 0.5; echo held");
      await new Promise((resolve) => setTimeout(resolve, 100));
      const queuedView = failureOf(view.exec("echo never"));
      const queuedOther = other.exec("id -u");
      await view.close();
      const refused = await queuedView;
      expect(refused).toMatchObject({ code: "connect_failed", retryable: false });
      expect(refused.message).toContain("withSudo view");
      expect(refused.message).toContain("still open");
      expect(text((await holding).stdout)).toBe("held\n");
      expect(text((await queuedOther).stdout)).toBe("0\n");
      expect((await failureOf(view.exec("id -u"))).code).toBe("connect_failed");
      expect(text((await shell.exec("id -u")).stdout)).toBe(`${uid(users.nopasswdUser)}\n`);
      // A view made from the closed view is a new view of the same, still open connection.
      const again = view.withSudo(true);
      expect(text((await again.exec("id -u")).stdout)).toBe("0\n");
      expect([proxy.accepted, proxy.open]).toEqual([1, 1]);

      const running = failureOf(other.exec("sleep 3.05"));
      await new Promise((resolve) => setTimeout(resolve, 300));
      await shell.close();
      expect((await running).code).toBe("outcome_unknown");
      for (const after of [other, again, again.withSudo(false)]) {
        const closed = await failureOf(after.exec("id -u"));
        expect(closed).toMatchObject({ code: "connect_failed", retryable: false });
        expect(closed.message).toContain("closed by close() of the shell connectSsh returned");
      }
      const deadline = Date.now() + 3000;
      while (proxy.open > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
      expect([proxy.accepted, proxy.open]).toEqual([1, 0]);
    } finally {
      await shell.close();
      await proxy.close();
    }
  }, 20_000);

  test("a timeout in the view kills its root-owned process group (the kill runs elevated too)", async () => {
    const { shell, proxy } = await throughProxy({ username: users.nopasswdUser });
    const root = shell.withSudo(true);
    try {
      const failed = await failureOf(root.exec("sleep 33.06", { timeoutMs: 500 }));
      expect(failed.code).toBe("timeout");
      expect(failed.message).toContain("killed");
      expect((await remoteCommandLines(shell)).filter((c) => c.startsWith("sleep 33.06"))).toEqual([]);
      expect(proxy.accepted).toBe(1);
    } finally {
      await shell.close();
      await proxy.close();
    }
  }, 15_000);

  test("a sudo shell's withSudo(false) view runs as the login user; a malformed option is a TypeError", async () => {
    const { shell, proxy } = await throughProxy({ username: users.nopasswdUser, sudo: true });
    try {
      const plain = shell.withSudo(false);
      expect([shell.elevated, plain.elevated]).toEqual([true, false]);
      const [a, b] = await Promise.all([shell.exec("id -u"), plain.exec("id -u")]);
      expect([text(a.stdout), text(b.stdout)]).toEqual(["0\n", `${uid(users.nopasswdUser)}\n`]);
      for (const bad of [undefined, "yes", { password: "secret" }, null]) {
        expect(() => shell.withSudo(bad as never)).toThrow(TypeError);
      }
      expect(proxy.accepted).toBe(1);
    } finally {
      await shell.close();
      await proxy.close();
    }
  }, 15_000);
});

function uid(user: string): string {
  return spawnSync("id", ["-u", user], { encoding: "utf8" }).stdout.trim();
}
