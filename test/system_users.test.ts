/**
 * Tests that need system users leave the system as they found it (issue
 * 32.5; test/support/test_users.ts). As root, each case runs a child process
 * under a fresh run id and compares, before and after, what that run makes:
 * its lines in /etc/passwd, /etc/group, /etc/shadow and /etc/gshadow, its
 * file in /etc/sudoers.d, its homes and mail spools, its password and run
 * files. Each case also checks that the child really made them (seen while it
 * ran, or in what it printed), so none passes by making nothing. Other
 * processes may add and remove their own users meanwhile (older copies of
 * these tests use fixed names): only this run's names are compared.
 */
import { describe, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { sshdReady } from "./support/sshd.ts";
import { testUserNames } from "./support/test_users.ts";

const REPO = join(import.meta.dir, "..");
const CHILD = join(REPO, "test", "support", "system_users_child.ts");

/** Every trace of run `runId` on this system, as sorted lines (empty: none). */
function traces(runId: string): string[] {
  const names = testUserNames(runId);
  const users = [names.nopasswdUser, names.passwordUser];
  const found: string[] = [];
  for (const file of ["/etc/passwd", "/etc/group", "/etc/shadow", "/etc/gshadow"]) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const fields = line.split(":");
      if (users.includes(fields[0]!)) found.push(`${file}: ${fields[0]}`);
      const members = file === "/etc/group" ? fields[3] : file === "/etc/gshadow" ? fields[3] : undefined;
      if (members?.split(",").some((m) => users.includes(m))) found.push(`${file}: members of ${fields[0]}`);
    }
  }
  for (const name of readdirSync("/etc/sudoers.d")) if (name.includes(runId)) found.push(`/etc/sudoers.d/${name}`);
  for (const path of [...users.flatMap((u) => [`/home/${u}`, `/var/mail/${u}`, `/var/spool/mail/${u}`]), names.passwordFile, names.runFile]) {
    if (existsSync(path)) found.push(path);
  }
  return found.sort();
}

const freshRunId = (): string => randomBytes(3).toString("hex");

/** Start the child for `runId` in `mode`; resolves with its first stdout line (the users it made) and, later, its exit. */
function child(runId: string, mode: "exit" | "throw" | "wait"): { made: Promise<Record<string, string>>; exited: Promise<number | null>; pid: number } {
  const proc = spawn(process.execPath, [CHILD, mode], { cwd: REPO, env: { ...process.env, SAP_TEST_RUN_ID: runId }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  const made = new Promise<Record<string, string>>((resolve, reject) => {
    proc.stdout.on("data", (chunk) => {
      out += String(chunk);
      if (out.includes("\n")) resolve(JSON.parse(out.split("\n")[0]!) as Record<string, string>);
    });
    proc.on("close", () => reject(new Error(`the child made no users: ${err}`)));
  });
  proc.stderr.on("data", (chunk) => (err += String(chunk)));
  const exited = new Promise<number | null>((resolve) => proc.on("close", (code) => resolve(code)));
  return { made, exited, pid: proc.pid! };
}

describe.skipIf(!sshdReady("system users are removed after the run", true))("system users made by a test run are removed by it", () => {
  test("the names are per run and never the fixed sapuser/sappass of older copies", () => {
    const a = testUserNames("0a1b2c");
    expect([a.nopasswdUser, a.passwordUser, a.sudoers]).toEqual(["sapu0a1b2c", "sapp0a1b2c", "/etc/sudoers.d/ssh-apply-patch-test-0a1b2c"]);
    expect(a.nopasswdUser.length).toBeLessThanOrEqual(32); // useradd's limit
  });

  test("a process that ends normally removes its users, groups, homes, sudoers rules and files", async () => {
    const runId = freshRunId();
    expect(traces(runId)).toEqual([]);
    const run = child(runId, "wait");
    const made = await run.made;
    expect(made.nopasswdUser).toBe(`sapu${runId}`);
    const during = traces(runId);
    expect(during).toContain(`/etc/passwd: sapu${runId}`);
    expect(during).toContain(`/etc/shadow: sapp${runId}`);
    expect(during).toContain(`/etc/sudoers.d/ssh-apply-patch-test-${runId}`);
    expect(during).toContain(`/home/sapu${runId}`);
    process.kill(run.pid, "SIGTERM");
    expect(await run.exited).toBe(128 + 15);
    expect(traces(runId)).toEqual([]);

    const second = freshRunId();
    const normal = child(second, "exit");
    expect((await normal.made).passwordUser).toBe(`sapp${second}`);
    expect(await normal.exited).toBe(0);
    expect(traces(second)).toEqual([]);
  }, 60_000);

  test("a process that fails with an uncaught error removes them too", async () => {
    const runId = freshRunId();
    const run = child(runId, "throw");
    expect((await run.made).nopasswdUser).toBe(`sapu${runId}`);
    expect(await run.exited).toBe(1);
    expect(traces(runId)).toEqual([]);
  }, 60_000);

  test("a run killed with SIGKILL is cleaned by the next run, which removes nothing of a live run", async () => {
    const killed = freshRunId();
    const live = freshRunId();
    const victim = child(killed, "wait");
    await victim.made;
    const alive = child(live, "wait");
    await alive.made;
    process.kill(victim.pid, "SIGKILL");
    await victim.exited;
    expect(traces(killed)).toContain(`/etc/passwd: sapu${killed}`); // SIGKILL runs no hook
    const next = child(freshRunId(), "exit");
    await next.made;
    expect(await next.exited).toBe(0);
    expect(traces(killed)).toEqual([]);
    expect(traces(live)).toContain(`/etc/passwd: sapu${live}`); // its creator still runs: not ours to remove
    process.kill(alive.pid, "SIGTERM");
    await alive.exited;
    expect(traces(live)).toEqual([]);
  }, 60_000);

  const bunTest = (runId: string, args: string[]): { output: string; status: number | null } => {
    const result = spawnSync(process.execPath, ["test", ...args], {
      cwd: REPO,
      encoding: "utf8",
      env: { ...process.env, SAP_TEST_RUN_ID: runId, REQUIRE_SSHD: "1" },
      timeout: 120_000,
    });
    return { output: result.stdout + result.stderr, status: result.status };
  };

  test("a real sshd suite run with `bun test` (sudo as both users) leaves /etc as it was", () => {
    const runId = freshRunId();
    expect(traces(runId)).toEqual([]);
    const run = bunTest(runId, ["./test/ssh/sudo_sshd.test.ts"]);
    expect([run.status, run.output]).toEqual([0, expect.stringMatching(/\b[1-9]\d* pass\b/)]);
    expect(traces(runId)).toEqual([]);
  }, 150_000);

  test("a `bun test` run whose test fails after making the users leaves /etc as it was (the global afterAll)", () => {
    const runId = freshRunId();
    expect(traces(runId)).toEqual([]);
    const run = bunTest(runId, ["./test/support/failing_users_fixture.ts"]);
    expect(run.status).toBe(1);
    expect(run.output).toContain(`made sapu${runId}`);
    expect(run.output).toMatch(/\b1 fail\b/);
    expect(traces(runId)).toEqual([]);
  }, 150_000);
});
