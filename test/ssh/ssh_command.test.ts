import { describe, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { buildExecCommand, buildKillCommand, PidMarkerScanner } from "../../lib/ssh/command.ts";
import { backoffDelay } from "../../lib/ssh/backoff.ts";
import { ChannelLimiter } from "../../lib/ssh/channel_limiter.ts";
import { classifySudoFailure, sudoPrefix, sudoStdin, wrapWithSudo } from "../../lib/ssh/sudo.ts";

// The wrapper runs first under the login shell, then under sh: check it with
// every shell installed here, as sshd would call it (`<shell> -c <command>`).
const SHELLS = [["/bin/sh"], ["/bin/bash"], ["/bin/dash"], ["busybox", "sh"]].filter(
  (s) => existsSync(s[0]!) || spawnSync("which", [s[0]!]).status === 0,
);
const NASTY = "it's $HOME `x` \\n \"q\" ünï\n";

describe("buildExecCommand under real shells", () => {
  for (const shell of SHELLS) {
    test(`${shell.join(" ")}: program, stdin, exit code, marker stripped`, () => {
      const nonce = "00ff00ff00ff00ff";
      const program = `printf '%s' "$(cat)"; printf '%s' ${"'" + NASTY.replaceAll("'", "'\\''") + "'"} >&2; exit 7`;
      const command = buildExecCommand(program, nonce, { kind: "none" });
      const run = spawnSync(shell[0]!, [...shell.slice(1), "-c", command], { input: "stdin bytes" });
      expect(run.status).toBe(7);
      expect(run.stdout.toString()).toBe("stdin bytes");
      const scanner = new PidMarkerScanner(nonce);
      expect(scanner.push(run.stderr)).toBe(true);
      expect(scanner.process!.pid).toBeGreaterThan(1);
      expect(scanner.process!.pgid).toBeGreaterThan(1);
      expect(Buffer.from(scanner.strip(run.stderr)).toString()).toBe(NASTY);
    });
  }

  test("the marker is found across chunk boundaries and after login-shell noise", () => {
    const scanner = new PidMarkerScanner("abcdef0123456789");
    const text = Buffer.from("noise from .bashrc\n__sap_pid_abcdef0123456789 4242 4240\nprogram err\n");
    expect(scanner.push(text.subarray(0, 30))).toBe(false);
    expect(scanner.push(text.subarray(30, 50))).toBe(false);
    expect(scanner.push(text.subarray(50))).toBe(true);
    expect(scanner.process).toEqual({ pid: 4242, pgid: 4240 });
    expect(Buffer.from(scanner.strip(text)).toString()).toBe("noise from .bashrc\nprogram err\n");
  });

  test("a marker with another nonce is not ours", () => {
    const scanner = new PidMarkerScanner("abcdef0123456789");
    scanner.push(Buffer.from("__sap_pid_0000000000000000 4242 4240\n"));
    expect(scanner.started).toBe(false);
  });

  test("buildKillCommand kills the whole process group (a child that ignores the parent's death too)", async () => {
    const nonce = "1234abcd1234abcd";
    const child = spawn("/bin/sh", ["-c", buildExecCommand("sleep 30 & sleep 31; wait", nonce, { kind: "none" })], {
      detached: true, // its own group, as sshd's session would be
      stdio: ["ignore", "ignore", "pipe"],
    });
    const scanner = new PidMarkerScanner(nonce);
    await new Promise<void>((resolve) => child.stderr!.on("data", (c: Buffer) => scanner.push(c) && resolve()));
    const exited = new Promise<string | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    const kill = spawnSync("/bin/sh", ["-c", buildKillCommand(scanner.process!, { kind: "none" })]);
    expect(kill.status).toBe(0);
    expect(await exited).toBe("SIGKILL");
    // Zombies may linger until reaped; count live members of the group.
    await new Promise((r) => setTimeout(r, 50));
    expect(liveMembersOfGroup(scanner.process!.pgid)).toEqual([]);
  });

  test("rejects a malformed nonce or pid (programmer errors)", () => {
    expect(() => buildExecCommand("true", "x; rm", { kind: "none" })).toThrow(TypeError);
    expect(() => buildKillCommand({ pid: 1, pgid: 1 }, { kind: "none" })).toThrow(TypeError);
  });
});

describe("sudo wrapping", () => {
  test("prefixes per mode; the password is never on the command line", () => {
    expect(sudoPrefix({ kind: "none" })).toBe("");
    expect(wrapWithSudo("'id'", { kind: "nopasswd" })).toBe("sudo -n -- sh -c 'id'");
    const mode = { kind: "password", password: "s3cret" } as const;
    expect(wrapWithSudo("'id'", mode)).toBe("sudo -S -k -p '' -- sh -c 'id'");
    expect(wrapWithSudo("'id'", mode)).not.toContain("s3cret");
  });

  test("the password line goes first on stdin, then the program's bytes", () => {
    const mode = { kind: "password", password: "pw" } as const;
    expect(Buffer.from(sudoStdin(mode, new Uint8Array([1, 2]))!)).toEqual(Buffer.from([0x70, 0x77, 0x0a, 1, 2]));
    expect(Buffer.from(sudoStdin(mode, undefined)!).toString()).toBe("pw\n");
    const bytes = new Uint8Array([9]);
    expect(sudoStdin({ kind: "nopasswd" }, bytes)).toBe(bytes);
  });

  const stderrCases: [string, number, string | null][] = [
    ["sudo: a password is required\n", 1, "auth_failed"],
    ["sudo: a terminal is required to read the password\n", 1, "auth_failed"],
    ["Sorry, try again.\nsudo: 1 incorrect password attempt\n", 1, "auth_failed"],
    ["deploy is not in the sudoers file.  This incident will be reported.\n", 1, "permission_denied"],
    ["Sorry, user deploy is not allowed to execute '/bin/sh -c x' as root on web1.\n", 1, "permission_denied"],
    ["sudo: sorry, you must have a tty to run sudo\n", 1, "permission_denied"],
    ["sh: 1: sudo: not found\n", 127, "remote_unsupported"],
    ["something else\n", 1, null],
  ];
  for (const [stderr, code, expected] of stderrCases) {
    test(`classifySudoFailure: ${JSON.stringify(stderr.slice(0, 40))}`, () => {
      const result = classifySudoFailure(stderr, code, { user: "deploy", host: "web1" });
      expect(result?.code ?? null).toBe(expected as never);
      if (result) expect(result.message).toContain("deploy");
    });
  }
});

describe("ChannelLimiter", () => {
  test("FIFO order, never more than the limit", async () => {
    const limiter = new ChannelLimiter(2);
    const order: number[] = [];
    let running = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const slot = await limiter.acquire();
        order.push(i);
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 2));
        running--;
        slot.release();
      }),
    );
    expect(peak).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  test("an aborted waiter leaves the queue; releasing twice counts once", async () => {
    const limiter = new ChannelLimiter(1);
    const held = await limiter.acquire();
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal);
    expect(limiter.waiting).toBe(1);
    controller.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
    expect(limiter.waiting).toBe(0);
    held.release();
    held.release();
    expect(limiter.active).toBe(0);
  });

  test("shrinkTo lowers the limit (not below 1)", async () => {
    const limiter = new ChannelLimiter(8);
    limiter.shrinkTo(3);
    expect(limiter.limit).toBe(3);
    limiter.shrinkTo(0);
    expect(limiter.limit).toBe(1);
    expect(() => new ChannelLimiter(0)).toThrow(TypeError);
  });

  test("requeue after a shrink: the slot waits for a release under the lower limit, ahead of calls that never held one", async () => {
    const limiter = new ChannelLimiter(3);
    const [a, b, c] = await Promise.all([limiter.acquire(), limiter.acquire(), limiter.acquire()]);
    const order: string[] = [];
    const late = limiter.acquire().then((slot) => (order.push("late"), slot));
    limiter.shrinkTo(2); // the server held two: c's open was refused
    const again = c!.requeue().then(() => order.push("c again"));
    await Promise.resolve();
    expect([limiter.active, limiter.waiting]).toEqual([2, 2]); // a and b run; c and the late call wait
    a!.release();
    await again;
    expect(order).toEqual(["c again"]);
    expect(limiter.active).toBe(2);
    b!.release();
    const lateSlot = await late;
    expect(order).toEqual(["c again", "late"]);
    c!.release();
    lateSlot.release();
    expect([limiter.active, limiter.waiting]).toEqual([0, 0]);
  });

  test("an aborted requeue holds nothing: its later release counts nothing; raiseTo lets waiting calls go", async () => {
    const limiter = new ChannelLimiter(2);
    const a = await limiter.acquire();
    const b = await limiter.acquire();
    limiter.shrinkTo(1);
    const controller = new AbortController();
    const again = b.requeue(controller.signal);
    controller.abort(new Error("timeout"));
    await expect(again).rejects.toThrow("timeout");
    b.release();
    expect([limiter.active, limiter.waiting]).toEqual([1, 0]);
    const c = limiter.acquire();
    const d = limiter.acquire();
    expect(limiter.waiting).toBe(2);
    limiter.raiseTo(3);
    await Promise.all([c, d]);
    expect([limiter.limit, limiter.active, limiter.waiting]).toEqual([3, 3, 0]);
    await expect(a.requeue(AbortSignal.abort(new Error("gone")))).rejects.toThrow("gone");
    expect(limiter.active).toBe(3); // an already-aborted signal leaves the slot held
  });
});

describe("backoffDelay", () => {
  test.each([
    [1, 0, 2.5],
    [1, 1, 5],
    [2, 0.5, 7.5],
    [4, 1, 40],
    [7, 0, 160],
    [9, 1, 500], // capped
    [60, 0, 250], // no overflow at large attempts
  ] as [number, number, number][])("attempt %p with random %p → %p ms (base 5, cap 500)", (attempt, random, expected) => {
    expect(backoffDelay(attempt, { baseMs: 5, capMs: 500 }, () => random)).toBe(expected);
  });

  test("calls refused together do not ask again together: the pauses spread between half and all of the ceiling", () => {
    const delays = Array.from({ length: 200 }, () => backoffDelay(5, { baseMs: 5, capMs: 500 }));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(40);
    expect(Math.max(...delays)).toBeLessThanOrEqual(80);
    expect(new Set(delays.map((d) => Math.floor(d / 4))).size).toBeGreaterThan(5);
  });
});

/** Live (non-zombie) pids of a process group, from /proc (no procps needed). */
function liveMembersOfGroup(pgid: number): number[] {
  const members: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // state ppid pgrp …
    if (Number(fields[2]) === pgid && fields[0] !== "Z") members.push(Number(name));
  }
  return members;
}
