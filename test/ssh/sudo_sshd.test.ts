import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectSsh } from "../../lib/ssh/shell.ts";
import { RemoteShellError } from "../../lib/remote/shell.ts";
import { ensureTestUsers, sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd, TestUsers } from "../support/sshd.ts";
import { failureOf, remoteCommandLines, sshOptions, text } from "./helpers.ts";

const ready = sshdReady("sudo elevation (test/ssh/sudo_sshd.test.ts)", true);

describe.skipIf(!ready)("sudo elevation against a real sshd", () => {
  let sshd: Sshd;
  let work: string;
  let knownHosts: string;
  let users: TestUsers;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "sap-sudo-"));
    sshd = await startSshd();
    users = ensureTestUsers();
    knownHosts = writeKnownHosts(work, [sshd.hostKeyLine]);
  }, 30_000);
  afterAll(async () => {
    await sshd?.stop();
    rmSync(work, { recursive: true, force: true });
  }, 30_000);

  test("sudo: true with a NOPASSWD rule runs programs as root and reports elevated", async () => {
    const shell = await connectSsh(sshOptions(sshd, knownHosts, { username: users.nopasswdUser, sudo: true }));
    try {
      expect(shell.elevated).toBe(true);
      const result = await shell.exec("id -u; cat", { stdin: new TextEncoder().encode("in\0put") });
      expect(text(result.stdout)).toBe("0\nin\0put");
      expect(result.exitCode).toBe(0);
    } finally {
      await shell.close();
    }
  }, 10000);

  test("without sudo the same user is not root and cannot write a root-owned 0640 file", async () => {
    const shell = await connectSsh(sshOptions(sshd, knownHosts, { username: users.nopasswdUser }));
    try {
      expect(shell.elevated).toBe(false);
      const dir = mkdtempSync(join(tmpdir(), "sap-root-owned-"));
      chmodSync(dir, 0o755);
      const file = join(dir, "secret.conf");
      writeFileSync(file, "root only\n", { mode: 0o640 });
      try {
        const result = await shell.exec(`id -u; cat ${file} || echo cannot-read; echo x >> ${file} || echo cannot-write`);
        expect(text(result.stdout)).toBe(`${uid(users.nopasswdUser)}\ncannot-read\ncannot-write\n`);
        expect(readFileSync(file, "utf8")).toBe("root only\n");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    } finally {
      await shell.close();
    }
  }, 10000);

  test("sudo with a password: validated once per connection, stdin reaches the program intact", async () => {
    let asked = 0;
    const shell = await connectSsh(
      sshOptions(sshd, knownHosts, {
        username: users.passwordUser,
        sudo: { password: async () => (asked++, users.password) },
      }),
    );
    try {
      const payload = new Uint8Array(70000).map((_, i) => (i * 7) % 256);
      for (let i = 0; i < 3; i++) {
        const result = await shell.exec("id -u >&2; cat", { stdin: payload });
        expect(text(result.stderr)).toBe("0\n");
        expect(Buffer.from(result.stdout)).toEqual(Buffer.from(payload));
      }
      expect(asked).toBe(1);
    } finally {
      await shell.close();
    }
  }, 15000);

  test("a NOPASSWD user with a password callback: the callback is never asked and no password reaches stdin", async () => {
    let asked = 0;
    const shell = await connectSsh(
      sshOptions(sshd, knownHosts, { username: users.nopasswdUser, sudo: { password: async () => (asked++, "unused") } }),
    );
    try {
      const result = await shell.exec("cat", { stdin: new TextEncoder().encode("only this") });
      expect(text(result.stdout)).toBe("only this");
      expect(asked).toBe(0);
    } finally {
      await shell.close();
    }
  }, 10000);

  // sudo -S would read the program's stdin lines as further password tries
  // and the program would never run: the test timeout catches such a hang.
  test("a wrong sudo password fails auth_failed (no hang), without the password in the message", async () => {
    const wrong = "not-the-password-" + Date.now();
    const shell = await connectSsh(
      sshOptions(sshd, knownHosts, { username: users.passwordUser, sudo: { password: async () => wrong } }),
    );
    try {
      const failed = await failureOf(shell.exec("echo never", { stdin: new TextEncoder().encode("x\ny\nz\n") }));
      expect(failed.code).toBe("auth_failed");
      expect(failed.message).toContain(`sudo rejected the password for user ${users.passwordUser} on host 127.0.0.1`);
      expect(failed.message).not.toContain(wrong);
      // Not cached as success: the next call validates again and fails the same way.
      expect((await failureOf(shell.exec("echo never"))).code).toBe("auth_failed");
    } finally {
      await shell.close();
    }
  }, 20000);

  test("a sudo password callback that throws: a typed auth_failed that ran nothing, never the raw error", async () => {
    const shell = await connectSsh(
      sshOptions(sshd, knownHosts, { username: users.passwordUser, sudo: { password: () => Promise.reject(new Error("vault sealed")) } }),
    );
    try {
      const error = await shell.exec("echo never").then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(RemoteShellError);
      const e = error as RemoteShellError;
      expect([e.code, e.retryable, e.started]).toEqual(["auth_failed", false, false]);
      expect(e.message).toContain("the sudo password callback");
      expect(e.message).toContain("vault sealed");
    } finally {
      await shell.close();
    }
  }, 10000);

  test("sudo: true for a user who needs a password: auth_failed naming both ways out", async () => {
    const shell = await connectSsh(sshOptions(sshd, knownHosts, { username: users.passwordUser, sudo: true }));
    try {
      const failed = await failureOf(shell.exec("id -u"));
      expect(failed.code).toBe("auth_failed");
      expect(failed.message).toContain("NOPASSWD");
      expect(failed.message).toContain("password");
    } finally {
      await shell.close();
    }
  }, 10000);

  test("a timeout under sudo kills the root-owned process group", async () => {
    const shell = await connectSsh(sshOptions(sshd, knownHosts, { username: users.nopasswdUser, sudo: true }));
    try {
      const failed = await failureOf(shell.exec("sleep 33.01", { timeoutMs: 500 }));
      expect(failed.code).toBe("timeout");
      expect(failed.message).toContain("killed");
      expect((await remoteCommandLines(shell)).filter((c) => c.startsWith("sleep 33.01"))).toEqual([]);
    } finally {
      await shell.close();
    }
  }, 10000);
});

function uid(user: string): string {
  return spawnSync("id", ["-u", user], { encoding: "utf8" }).stdout.trim();
}
