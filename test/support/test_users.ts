/**
 * The non-root accounts that sudo and second-uid tests need (root only), made
 * for one test run and removed by it.
 *
 * Each run has an id (6 hex digits; `SAP_TEST_RUN_ID` to choose it, which a
 * child test process inherits to share its parent's accounts) and creates:
 * - `sapu<id>`: `NOPASSWD: ALL` (for `sudo: true` tests), login shell bash;
 * - `sapp<id>`: `ALL` with a random password (for `sudo -S`), kept in the
 *   root-only file `/var/lib/ssh-apply-patch-test/<id>.password`;
 * - `/etc/sudoers.d/ssh-apply-patch-test-<id>` with their rules, and
 *   `/var/lib/ssh-apply-patch-test/<id>.run` holding the creating pid.
 *
 * The process that created them removes all of it (users, their groups,
 * homes and mail, the sudoers file, the password and run files) when it ends:
 * after the last test file (a global `afterAll` in test/support/preload.ts,
 * which runs when tests fail too), at process exit (a plain script, an
 * uncaught error) and on SIGINT/SIGTERM/SIGHUP. A run killed with SIGKILL
 * leaves its accounts behind; the next run removes those whose creating pid
 * is gone. Nothing else is ever removed: other runs' ids, and the fixed
 * `sapuser`/`sappass` accounts of older copies of these tests, are not this
 * code's to delete. test/system_users.test.ts checks all of it.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";

/** Non-root accounts created for sudo/permission tests (root only). */
export interface TestUsers {
  /** Has `NOPASSWD: ALL`. */
  nopasswdUser: string;
  /** Needs a password for sudo. */
  passwordUser: string;
  /** That password (random per run). */
  password: string;
  /** A root-only file holding the password (for askpass helpers). */
  passwordFile: string;
  /** The run id in the names. */
  runId: string;
}

/** Where run files live (root-only). */
export const TEST_USERS_STATE_DIR = "/var/lib/ssh-apply-patch-test";
const SUDOERS_DIR = "/etc/sudoers.d";

/** What a run creates, by id (pure: also used by the test that checks the cleanup). */
export function testUserNames(runId: string): { nopasswdUser: string; passwordUser: string; sudoers: string; passwordFile: string; runFile: string } {
  return {
    nopasswdUser: `sapu${runId}`,
    passwordUser: `sapp${runId}`,
    sudoers: join(SUDOERS_DIR, `ssh-apply-patch-test-${runId}`),
    passwordFile: join(TEST_USERS_STATE_DIR, `${runId}.password`),
    runFile: join(TEST_USERS_STATE_DIR, `${runId}.run`),
  };
}

const RUN_ID = ((): string => {
  const given = process.env.SAP_TEST_RUN_ID;
  if (given !== undefined && /^[0-9a-f]{6}$/.test(given)) return given;
  return randomBytes(3).toString("hex");
})();
// Child processes (runtime matrix, CLI runs) share this run's accounts instead of making their own.
process.env.SAP_TEST_RUN_ID = RUN_ID;

function run(command: string, args: string[], input?: string): string {
  const result = spawnSync(command, args, { encoding: "utf8", input });
  if (result.error || result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed: ${result.error?.message ?? result.stderr}`);
  }
  return result.stdout;
}

const exists = (user: string): boolean => spawnSync("id", ["-u", user], { stdio: "ignore" }).status === 0;

/** Remove every trace of run `runId` (idempotent; never throws: it runs in exit hooks). */
function removeRun(runId: string): void {
  const names = testUserNames(runId);
  for (const user of [names.nopasswdUser, names.passwordUser]) {
    // -f: also when one of its processes (a test's sshd session) is still alive; -r: home and mail spool.
    if (exists(user)) spawnSync("userdel", ["-f", "-r", user], { stdio: "ignore" });
    if (spawnSync("getent", ["group", user], { stdio: "ignore" }).status === 0) spawnSync("groupdel", [user], { stdio: "ignore" });
  }
  for (const file of [names.sudoers, names.passwordFile, names.runFile]) rmSync(file, { force: true });
}

/** Runs of these tests killed before their cleanup (their creating pid is gone): removed at the next run. */
function removeAbandonedRuns(): void {
  if (!existsSync(TEST_USERS_STATE_DIR)) return;
  for (const name of readdirSync(TEST_USERS_STATE_DIR)) {
    const match = /^([0-9a-f]{6})\.run$/.exec(name);
    if (match === null || match[1] === RUN_ID) continue;
    const pid = Number(readFileSync(join(TEST_USERS_STATE_DIR, name), "utf8").trim());
    if (Number.isInteger(pid) && pid > 0 && existsSync(`/proc/${pid}`)) continue;
    removeRun(match[1]!);
  }
}

let users: TestUsers | null = null;
let createdHere = false;

/**
 * Remove the accounts this process created (nothing if it created none, or
 * only reused its parent's). Idempotent.
 *
 * @example
 * ```ts
 * afterAll(removeTestUsers);
 * ```
 */
export function removeTestUsers(): void {
  if (!createdHere) return;
  createdHere = false;
  users = null;
  removeRun(RUN_ID);
}

let hooked = false;
function removeAtExit(): void {
  if (hooked) return;
  hooked = true;
  process.on("exit", removeTestUsers);
  for (const [signal, number] of [["SIGINT", 2], ["SIGTERM", 15], ["SIGHUP", 1]] as const) {
    process.once(signal, () => {
      removeTestUsers();
      process.exit(128 + number);
    });
  }
}

/**
 * This run's non-root test users and sudoers rules, created on first call
 * (root only) and removed when the process ends.
 *
 * @example
 * ```ts
 * const { nopasswdUser } = ensureTestUsers();
 * ```
 */
export function ensureTestUsers(): TestUsers {
  if (users) return users;
  if (process.getuid?.() !== 0) throw new Error("ensureTestUsers needs root");
  const names = testUserNames(RUN_ID);
  mkdirSync(TEST_USERS_STATE_DIR, { recursive: true, mode: 0o700 });
  if (!existsSync(names.runFile)) {
    removeAbandonedRuns();
    removeAtExit();
    createdHere = true;
    writeFileSync(names.runFile, `${process.pid}\n`, { mode: 0o600 });
    for (const user of [names.nopasswdUser, names.passwordUser]) {
      if (!exists(user)) run("useradd", ["--create-home", "--shell", "/bin/sh", user]);
    }
    // bash as a login shell proves programs run under sh whatever the login
    // shell; its skeleton .bashrc returns at once for non-interactive shells.
    run("usermod", ["--shell", "/bin/bash", names.nopasswdUser]);
    // An account with "!" in shadow is locked and sshd (UsePAM no) refuses it.
    run("usermod", ["-p", "*", names.nopasswdUser]);
    // Never a constant: the account has `sudo ALL`.
    writeFileSync(names.passwordFile, "sap-" + randomBytes(9).toString("base64url"), { mode: 0o600 });
    run("chpasswd", [], `${names.passwordUser}:${readFileSync(names.passwordFile, "utf8")}\n`);
    const rules = [
      `# Created by ssh-apply-patch's test harness (test/support/test_users.ts) for run ${RUN_ID}, pid ${process.pid}; removed by it.`,
      `Defaults:${names.nopasswdUser},${names.passwordUser} lecture=never`,
      `${names.nopasswdUser} ALL=(ALL) NOPASSWD: ALL`,
      `${names.passwordUser} ALL=(ALL) ALL`,
      "",
    ].join("\n");
    const staged = `${names.sudoers}.${process.pid}.tmp`; // sudoers.d ignores names with a dot
    writeFileSync(staged, rules, { mode: 0o440 });
    try {
      run("visudo", ["-c", "-q", "-f", staged]);
      run("mv", [staged, names.sudoers]);
    } finally {
      rmSync(staged, { force: true });
    }
  }
  users = {
    nopasswdUser: names.nopasswdUser,
    passwordUser: names.passwordUser,
    password: readFileSync(names.passwordFile, "utf8").trim(),
    passwordFile: names.passwordFile,
    runId: RUN_ID,
  };
  return users;
}
