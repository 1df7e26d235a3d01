import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { RemoteShellError } from "../../lib/remote/shell.ts";
import { cleanupTemps, shellCases, tempDir } from "../support/local_trees.ts";

const text = (b: Uint8Array): string => new TextDecoder().decode(b);

afterAll(cleanupTemps);

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

    test("output over the cap kills the program and rejects limit_exceeded", async () => {
      const shell = new LocalShell({ ...c.options, maxOutputBytes: 10_000 });
      const error = await shell.exec("while :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done").catch((e) => e);
      expect(error).toBeInstanceOf(RemoteShellError);
      expect(error.failure.code).toBe("limit_exceeded");
    });
  });
}

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
