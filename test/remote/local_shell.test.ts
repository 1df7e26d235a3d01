import { afterAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { RemoteShellError } from "../../lib/remote/shell.ts";
import { cleanupTemps, shellCases, tempDir } from "../support/local_trees.ts";

const text = (b: Uint8Array): string => new TextDecoder().decode(b);

afterAll(cleanupTemps, 30_000);

for (const c of shellCases()) {
  describe(`LocalShell (${c.name})`, () => {
    test("returns stdout, stderr and the exit code", async () => {
      const shell = new LocalShell(c.options);
      const r = await shell.exec("printf out; printf err >&2; exit 3");
      expect(text(r.stdout)).toBe("out");
      expect(text(r.stderr)).toBe("err");
      expect(r.exitCode).toBe(3);
      expect(r.signal).toBeNull();
      expect(shell.label).toBe("local");
    });

    test("passes stdin bytes through unchanged and reports progress", async () => {
      const shell = new LocalShell(c.options);
      const input = new Uint8Array(300_000).map((_, i) => (i * 7) % 256);
      const progress: number[] = [];
      const r = await shell.exec("cat", { stdin: input, onStdinProgress: (sent, total) => { progress.push(sent); expect(total).toBe(input.length); } });
      expect(r.stdout).toEqual(input);
      expect(progress.at(-1)).toBe(input.length);
      expect(progress.length).toBeGreaterThan(1);
    });

    test("a program killed by a signal resolves with the signal", async () => {
      const r = await new LocalShell(c.options).exec("kill -9 $$");
      expect(r.exitCode).toBeNull();
      expect(r.signal).toBe("SIGKILL");
    });

    test("abort kills the program and rejects cancelled", async () => {
      const controller = new AbortController();
      const p = new LocalShell(c.options).exec("sleep 5", { signal: controller.signal });
      setTimeout(() => controller.abort(), 100);
      const error = await p.catch((e) => e);
      expect(error).toBeInstanceOf(RemoteShellError);
      expect(error.failure.code).toBe("cancelled");
    });

    test("stdout past maxStdoutBytes kills the program group at once and rejects limit_exceeded (overflow stdout), keeping no more", async () => {
      const dir = tempDir();
      const marker = join(dir, "survived");
      const started = Date.now();
      // a child that would outlive a kill of the shell alone
      const error = await new LocalShell(c.options).exec(`(sleep 1; : > '${marker}') & while :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done`, { maxStdoutBytes: 4096 }).catch((e) => e);
      expect(error).toBeInstanceOf(RemoteShellError);
      expect(error.failure.code).toBe("limit_exceeded");
      expect(error.overflow).toBe("stdout");
      expect(error.started).toBe(true);
      expect(Date.now() - started).toBeLessThan(1000);
      await Bun.sleep(1300);
      expect(existsSync(marker)).toBe(false);
    });

    test("stderr past maxStderrBytes is dropped and counted; the program runs on", async () => {
      const r = await new LocalShell(c.options).exec("i=0; while [ $i -lt 200 ]; do echo 0123456789abcdef >&2; i=$((i + 1)); done; printf done", { maxStderrBytes: 100 });
      expect(text(r.stdout)).toBe("done");
      expect(r.exitCode).toBe(0);
      expect(text(r.stderr)).toBe("0123456789abcdef\n".repeat(7).slice(0, 100));
      expect(r.stderrDropped).toBe(200 * 17 - 100);
    });

    test("output over the cap kills the program and rejects limit_exceeded", async () => {
      const shell = new LocalShell({ ...c.options, maxOutputBytes: 10_000 });
      const error = await shell.exec("while :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done").catch((e) => e);
      expect(error).toBeInstanceOf(RemoteShellError);
      expect(error.failure.code).toBe("limit_exceeded");
      expect(error.overflow).toBe("output");
    });
  });
}

describe("LocalShell runs no startup files", () => {
  // Debian's bash sources /etc/bash.bashrc and ~/.bashrc for `bash -c` when
  // its stdin is a socket (Node/Bun/Deno stdio pipes are socketpairs) and
  // SHLVL < 1; BASH_ENV names a file every non-interactive bash runs.
  const home = tempDir("sap-rc-home-");
  const marker = join(home, "rc-ran");
  writeFileSync(join(home, ".bashrc"), `echo bashrc >> '${marker}'\n`);
  writeFileSync(join(home, "env.sh"), `echo bash_env >> '${marker}'\n`);
  const bare = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home };

  test.each([
    ["no SHLVL", bare],
    ["SHLVL=0", { ...bare, SHLVL: "0" }],
    ["BASH_ENV set", { ...bare, BASH_ENV: join(home, "env.sh") }],
    ["BASH_ENV set, SHLVL=2", { ...bare, BASH_ENV: join(home, "env.sh"), SHLVL: "2" }],
  ])("bash with %s reads neither ~/.bashrc nor $BASH_ENV", async (_name, env) => {
    rmSync(marker, { force: true });
    const r = await new LocalShell({ shell: ["bash"], env }).exec('printf "%s" "${BASH_ENV-unset}"');
    expect(r.exitCode).toBe(0);
    expect(text(r.stdout)).toBe("unset");
    expect(existsSync(marker)).toBe(false);
  });

  test("the same bash reached through a wrapper (env bash) reads none either", async () => {
    rmSync(marker, { force: true });
    const r = await new LocalShell({ shell: ["/usr/bin/env", "bash"], env: bare }).exec("printf ok");
    expect(text(r.stdout)).toBe("ok");
    expect(existsSync(marker)).toBe(false);
  });

  test("a given SHLVL of 1 or more is kept", async () => {
    const r = await new LocalShell({ shell: ["dash"], env: { ...bare, SHLVL: "4" } }).exec('printf "%s" "$SHLVL"');
    expect(text(r.stdout)).toBe("4");
  });

  test("control: plain bash -c with this stdin does read ~/.bashrc (so the tests above test something)", async () => {
    rmSync(marker, { force: true });
    const child = spawn("bash", ["-c", "true"], { env: bare, stdio: ["pipe", "pipe", "pipe"] });
    child.stdin.end();
    await new Promise((resolve) => child.on("close", resolve));
    expect(readFileSync(marker, "utf8")).toBe("bashrc\n");
  });
});

describe("LocalShell options", () => {
  test("timeout kills the whole process group, children included", async () => {
    const dir = tempDir();
    const marker = join(dir, "survived");
    const shell = new LocalShell();
    const started = Date.now();
    const error = await shell.exec(`(sleep 1; : > '${marker}') & sleep 5`, { timeoutMs: 200 }).catch((e) => e);
    expect(error).toBeInstanceOf(RemoteShellError);
    expect(error.failure.code).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(1000);
    await Bun.sleep(1300);
    expect(existsSync(marker)).toBe(false);
  });

  test("env replaces the environment", async () => {
    const r = await new LocalShell({ env: { ONLY: "yes", PATH: "/usr/bin:/bin" } }).exec('printf "%s:%s" "$ONLY" "${HOME-unset}"');
    expect(text(r.stdout)).toBe("yes:unset");
  });

  test("an already aborted signal never starts the program", async () => {
    const dir = tempDir();
    const controller = new AbortController();
    controller.abort();
    const error = await new LocalShell().exec(`: > '${join(dir, "ran")}'`, { signal: controller.signal }).catch((e) => e);
    expect(error.failure.code).toBe("cancelled");
    expect(existsSync(join(dir, "ran"))).toBe(false);
  });

  test("a missing shell binary rejects connect_failed, not retryable", async () => {
    const error = await new LocalShell({ shell: ["/nonexistent/sh"] }).exec("true").catch((e) => e);
    expect(error).toBeInstanceOf(RemoteShellError);
    expect(error.failure.code).toBe("connect_failed");
    expect(error.failure.retryable).toBe(false);
  });

  test("bad options are programmer errors", () => {
    expect(() => new LocalShell({ shell: [] })).toThrow(TypeError);
    expect(() => new LocalShell({ maxOutputBytes: 0 })).toThrow(TypeError);
  });
});
