import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectSsh } from "../../lib/ssh/shell.ts";
import type { SshShell } from "../../lib/ssh/shell.ts";
import { sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd } from "../support/sshd.ts";
import { startTcpProxy } from "../support/tcp_proxy.ts";
import { bytes, failureOf, killRemote, remoteCommandLines, sshOptions, text } from "./helpers.ts";

const ready = sshdReady("SSH connection (test/ssh/connection_sshd.test.ts)");

describe.skipIf(!ready)("SshShell against a real sshd", () => {
  let sshd: Sshd;
  let work: string;
  let knownHosts: string;
  let shell: SshShell;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "sap-conn-"));
    sshd = await startSshd({ maxSessions: 3 });
    knownHosts = writeKnownHosts(work, [sshd.hostKeyLine]);
    shell = await connectSsh(sshOptions(sshd, knownHosts, { maxChannels: 2 }));
  }, 30_000);
  afterAll(async () => {
    await shell?.close();
    await sshd?.stop();
    rmSync(work, { recursive: true, force: true });
  }, 30_000);

  test("stdout, stderr, exit code; label", async () => {
    const result = await shell.exec("echo out; echo err >&2; exit 3");
    expect(text(result.stdout)).toBe("out\n");
    expect(text(result.stderr)).toBe("err\n");
    expect(result.exitCode).toBe(3);
    expect(result.signal).toBeNull();
    expect(shell.label).toBe(`${sshd.user}@127.0.0.1:${sshd.port}`);
    expect(shell.elevated).toBe(false);
  });

  test("programs run under sh, whatever the login shell", async () => {
    const login = spawnSync("getent", ["passwd", sshd.user], { encoding: "utf8" }).stdout.trim().split(":").at(-1)!;
    const sh = spawnSync("readlink", ["-f", "/bin/sh"], { encoding: "utf8" }).stdout.trim();
    const result = await shell.exec('echo "${BASH_VERSION:-no-bash}"; readlink -f /proc/$$/exe');
    expect(text(result.stdout)).toBe(`no-bash\n${sh}\n`);
    if (process.getuid?.() === 0) expect(login).toBe("/bin/bash"); // the harness makes its sapu<id> user a bash user
  });

  test("every byte value and shell metacharacters pass through stdin and the program text unchanged", async () => {
    const all = new Uint8Array(256).map((_, i) => i);
    const round = await shell.exec("cat", { stdin: all });
    expect(Buffer.from(round.stdout)).toEqual(Buffer.from(all));
    const literal = "it's $HOME `id` \\ \"q\" ünïcödé";
    const echoed = await shell.exec(`printf '%s' '${literal.replaceAll("'", "'\\''")}'`);
    expect(text(echoed.stdout)).toBe(literal);
  });

  test("a program killed by a signal reports the signal and no exit code", async () => {
    const result = await shell.exec("kill -TERM $$; sleep 5");
    expect(result.signal).toBe("SIGTERM");
    expect(result.exitCode).toBeNull();
  });

  test("30 concurrent execs with maxChannels 2 on a server with MaxSessions 3 all succeed", async () => {
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => shell.exec(`sleep 0.02; echo ${i}`)),
    );
    expect(results.map((r) => text(r.stdout))).toEqual(Array.from({ length: 30 }, (_, i) => `${i}\n`));
    expect(results.every((r) => r.exitCode === 0)).toBe(true);
  }, 20000);

  test("with the default maxChannels (8) on MaxSessions 3, refused channel opens shrink the limit and queue", async () => {
    const greedy = await connectSsh(sshOptions(sshd, knownHosts));
    try {
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => greedy.exec(`sleep 0.02; echo ${i}`)));
      expect(results.map((r) => text(r.stdout))).toEqual(Array.from({ length: 30 }, (_, i) => `${i}\n`));
    } finally {
      await greedy.close();
    }
  }, 20000);

  test("timeoutMs kills the remote process group and rejects timeout", async () => {
    // The program would run 31 s: only the kill lets this finish inside the test timeout.
    const failed = await failureOf(shell.exec("sleep 31.01 & sleep 31.02; wait", { timeoutMs: 400 }));
    expect(failed.code).toBe("timeout");
    expect(failed.message).toContain("killed");
    expect((await remoteCommandLines(shell)).filter((c) => c.startsWith("sleep 31.0"))).toEqual([]);
  }, 10000);

  test("an AbortSignal kills the remote program and rejects cancelled", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const failed = await failureOf(shell.exec("sleep 32.01", { signal: controller.signal }));
    expect(failed.code).toBe("cancelled");
    expect((await remoteCommandLines(shell)).filter((c) => c.startsWith("sleep 32.01"))).toEqual([]);
  }, 10000);

  test("an already-aborted signal rejects cancelled and runs nothing", async () => {
    const marker = join(work, "must-not-exist");
    const failed = await failureOf(shell.exec(`touch ${marker}`, { signal: AbortSignal.abort() }));
    expect(failed.code).toBe("cancelled");
    expect(failed.message).toContain("nothing ran");
    expect((await shell.exec(`test -e ${marker}`)).exitCode).toBe(1);
  });

  test("64 MiB of stdin arrive intact (SHA-256 compared) with progress reports", async () => {
    const payload = randomBytes(64 * 1024 * 1024);
    const progress: number[] = [];
    const result = await shell.exec("sha256sum | cut -d' ' -f1", {
      stdin: payload,
      onStdinProgress: (sent, total) => {
        expect(total).toBe(payload.length);
        progress.push(sent);
      },
    });
    expect(text(result.stdout).trim()).toBe(createHash("sha256").update(payload).digest("hex"));
    expect(progress.at(-1)).toBe(payload.length);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
  }, 30000);

  test("authentication failure lists what was tried", async () => {
    spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(work, "stranger")]);
    const failed = await failureOf(
      connectSsh(sshOptions(sshd, knownHosts, { identityFile: [join(work, "stranger"), join(work, "no-such-key")] })),
    );
    expect(failed.code).toBe("auth_failed");
    expect(failed.message).toContain(`key file ${join(work, "stranger")}`);
    expect(failed.message).toContain(`${join(work, "no-such-key")} does not exist`);
  }, 10000);

  test("an encrypted key works with a passphrase callback; a wrong passphrase fails auth_failed", async () => {
    const encrypted = join(work, "encrypted");
    copyFileSync(sshd.userKeyPath, encrypted);
    expect(spawnSync("ssh-keygen", ["-q", "-p", "-a", "2", "-N", "correct horse", "-f", encrypted]).status).toBe(0);
    const asked: string[] = [];
    const good = await connectSsh(
      sshOptions(sshd, knownHosts, {
        identityFile: encrypted,
        passphrase: async (path) => {
          asked.push(path);
          return "correct horse";
        },
      }),
    );
    expect((await good.exec("true")).exitCode).toBe(0);
    await good.close();
    expect(asked).toEqual([encrypted]);
    const bad = await failureOf(connectSsh(sshOptions(sshd, knownHosts, { identityFile: encrypted, passphrase: "wrong" })));
    expect(bad.code).toBe("auth_failed");
    expect(bad.message).toContain(`the passphrase for ${encrypted} is wrong`);
    expect(bad.message).not.toContain("wrong\"");
  }, 15000);

  test("an ssh-agent holding the key authenticates (explicit socket, and SSH_AUTH_SOCK by default)", async () => {
    const socket = join(work, "agent.sock");
    const agent = spawn("ssh-agent", ["-D", "-a", socket], { stdio: "ignore" });
    try {
      // The socket file appears at bind(), a moment before the agent listens:
      // retry ssh-add itself (bounded) instead of trusting the file's presence.
      let added = spawnSync("false");
      for (let i = 0; i < 250; i++) {
        if (existsSync(socket)) {
          added = spawnSync("ssh-add", ["-q", sshd.userKeyPath], { env: { ...process.env, SSH_AUTH_SOCK: socket } });
          if (added.status === 0) break;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(added.status).toBe(0);
      const { identityFile: _unused, ...withoutKey } = sshOptions(sshd, knownHosts);
      const explicit = await connectSsh({ ...withoutKey, agent: socket });
      expect((await explicit.exec("true")).exitCode).toBe(0);
      await explicit.close();
      const saved = process.env.SSH_AUTH_SOCK;
      process.env.SSH_AUTH_SOCK = socket;
      try {
        const { agent: _none, ...defaults } = withoutKey;
        const fromEnv = await connectSsh(defaults);
        expect((await fromEnv.exec("true")).exitCode).toBe(0);
        await fromEnv.close();
      } finally {
        if (saved === undefined) delete process.env.SSH_AUTH_SOCK;
        else process.env.SSH_AUTH_SOCK = saved;
      }
      const disabled = await failureOf(connectSsh({ ...withoutKey, agent: false }));
      expect(disabled.code).toBe("auth_failed");
    } finally {
      agent.kill();
    }
  }, 10000);

  test("connection refused: connect_failed, retryable", async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const failed = await failureOf(connectSsh({ ...sshOptions(sshd, knownHosts), port }));
    expect(failed.code).toBe("connect_failed");
    expect(failed.retryable).toBe(true);
    expect(failed.message).toContain("connection refused");
  });

  test("a server that never speaks SSH: connect_failed after readyTimeoutMs", async () => {
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", () => resolve()));
    const port = (silent.address() as net.AddressInfo).port;
    try {
      // The server never answers: only readyTimeoutMs can end this within the test timeout.
      const failed = await failureOf(connectSsh({ ...sshOptions(sshd, knownHosts), port, readyTimeoutMs: 300 }));
      expect(failed.code).toBe("connect_failed");
      expect(failed.message).toContain("300 ms");
    } finally {
      silent.close();
    }
  });

  test("a program too long for one exec argument is refused before sending (limit_exceeded), the shell stays usable", async () => {
    const failed = await failureOf(shell.exec(`#${"x".repeat(140 * 1024)}\necho never`));
    expect(failed.code).toBe("limit_exceeded");
    expect(failed.message).toContain("stdin");
    const fits = await shell.exec(`#${"x".repeat(120 * 1024)}\necho fits`);
    expect(text(fits.stdout)).toBe("fits\n");
  });

  test("maxOutputBytes: a runaway program is killed and the call rejects limit_exceeded", async () => {
    const capped = await connectSsh(sshOptions(sshd, knownHosts, { maxOutputBytes: 1024 * 1024 }));
    try {
      // `yes` never ends on its own: only the cap and the kill finish this call.
      const failed = await failureOf(capped.exec("yes sap-output-cap"));
      expect(failed.code).toBe("limit_exceeded");
      expect((await remoteCommandLines(capped)).filter((c) => c.startsWith("yes sap-output-cap"))).toEqual([]);
    } finally {
      await capped.close();
    }
  }, 10000);

  test("maxStdoutBytes: the program is killed on the host once its stdout passes the per-exec limit (overflow stdout), no more is kept", async () => {
    const error = await shell.exec("sleep 33.01 & yes sap-stdout-cap", { maxStdoutBytes: 64 * 1024 }).catch((e) => e);
    expect(error.failure.code).toBe("limit_exceeded");
    expect(error.overflow).toBe("stdout");
    expect(error.started).toBe(true);
    expect(error.failure.message).toContain("65536 bytes of stdout");
    const left = (await remoteCommandLines(shell)).filter((c) => c.startsWith("yes sap-stdout-cap") || c.startsWith("sleep 33.01"));
    expect(left).toEqual([]);
  }, 10000);

  test("maxStderrBytes: stderr is cut at the limit and the rest counted; the program's pid marker never shows", async () => {
    const result = await shell.exec("i=0; while [ $i -lt 300 ]; do echo 0123456789abcdef >&2; i=$((i + 1)); done; echo done", { maxStderrBytes: 1000 });
    expect(text(result.stdout)).toBe("done\n");
    expect(text(result.stderr)).toBe("0123456789abcdef\n".repeat(59).slice(0, 1000));
    expect(result.stderrDropped).toBe(300 * 17 - 1000);
  }, 10000);

  test("after close(), exec rejects (not retryable)", async () => {
    const closing = await connectSsh(sshOptions(sshd, knownHosts));
    await closing.close();
    const failed = await failureOf(closing.exec("true"));
    expect(failed.code).toBe("connect_failed");
    expect(failed.retryable).toBe(false);
  });
});

describe.skipIf(!ready)("dropped connections (TCP proxy)", () => {
  let sshd: Sshd;
  let work: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "sap-drop-"));
    sshd = await startSshd();
  }, 30_000);
  afterAll(async () => {
    await sshd?.stop();
    rmSync(work, { recursive: true, force: true });
  }, 30_000);

  async function throughProxy(): Promise<{ shell: SshShell; proxy: Awaited<ReturnType<typeof startTcpProxy>> }> {
    const proxy = await startTcpProxy({ targetPort: sshd.port });
    const line = sshd.hostKeyLine.replace(`]:${sshd.port} `, `]:${proxy.port} `);
    const shell = await connectSsh({ ...sshOptions(sshd, writeKnownHosts(work, [line], `kh-${proxy.port}`)), port: proxy.port });
    return { shell, proxy };
  }

  test("a call in flight when the connection drops reports outcome_unknown; the next call reconnects", async () => {
    const { shell, proxy } = await throughProxy();
    try {
      // The program would run 20 s (beyond the test timeout): the report must come from the drop itself.
      const inFlight = shell.exec("sleep 20.01");
      setTimeout(() => proxy.cutAll(), 300);
      const failed = await failureOf(inFlight);
      expect(failed.code).toBe("outcome_unknown");
      expect(failed.message).toContain("reconnects");
      const next = await shell.exec("echo again");
      expect(text(next.stdout)).toBe("again\n");
      await killRemote(shell, "sleep 20.01"); // the orphan keeps running: clean up
      expect(proxy.accepted).toBe(2);
    } finally {
      await shell.close();
      await proxy.close();
    }
  }, 10000);

  test("a silent partition (no FIN, no RST) is detected by keepalives: outcome_unknown, then reconnect", async () => {
    const proxy = await startTcpProxy({ targetPort: sshd.port });
    const line = sshd.hostKeyLine.replace(`]:${sshd.port} `, `]:${proxy.port} `);
    const shell = await connectSsh({
      ...sshOptions(sshd, writeKnownHosts(work, [line], `kh-freeze-${proxy.port}`)),
      port: proxy.port,
      keepaliveIntervalMs: 200,
    });
    try {
      const inFlight = shell.exec("sleep 20.02");
      setTimeout(() => proxy.freezeAll(), 300);
      // Without keepalives nothing would ever arrive again: only their timeout ends this.
      expect((await failureOf(inFlight)).code).toBe("outcome_unknown");
      expect(text((await shell.exec("echo thawed")).stdout)).toBe("thawed\n");
      await killRemote(shell, "sleep 20.02");
      expect(proxy.accepted).toBe(2);
    } finally {
      await shell.close();
      await proxy.close();
    }
  }, 10000);

  test("a drop while idle is repaired by the next call", async () => {
    const { shell, proxy } = await throughProxy();
    try {
      proxy.cutAll();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(text((await shell.exec("echo back")).stdout)).toBe("back\n");
      expect(proxy.accepted).toBe(2);
    } finally {
      await shell.close();
      await proxy.close();
    }
  }, 10000);

  test("a cut 1 MiB into an 8 MiB upload (cutAfterBytes) reports outcome_unknown", async () => {
    const { shell, proxy } = await throughProxy();
    try {
      await shell.exec("true");
      const handshake = proxy.bytesUp; // connect + auth + one exec, client to server
      proxy.cutAll();
      await new Promise((resolve) => setTimeout(resolve, 50)); // let the client see the drop
      proxy.setCutAfterBytes({ up: handshake + 1024 * 1024 }); // the reconnect gets through, the upload does not
      const upload = shell.exec("cat > /dev/null", { stdin: bytes("x".repeat(8 * 1024 * 1024)) });
      expect((await failureOf(upload)).code).toBe("outcome_unknown");
      expect(proxy.accepted).toBe(2);
    } finally {
      await shell.close();
      await proxy.close();
    }
  }, 10000);
});

