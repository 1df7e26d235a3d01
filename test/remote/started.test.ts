/**
 * `RemoteShellError.started` (lib/shell.ts): what the adapters say about
 * whether a program may have run, and how commitRemote, reconcile and
 * readSnapshots act on it. A not-started failure during a commit is that
 * failure (nothing ran, retry is safe); a started one is `outcome_unknown`.
 * Adapters that reject without running anything are FAULT-INJECTED (their
 * test names say so); the LocalShell ones are real processes. The same over
 * a real sshd: test/contract/started.test.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { commitRemote } from "../../lib/remote/commit.ts";
import { failure } from "../../lib/failure.ts";
import { codeOnlyFailure } from "../support/code_only_failure.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import { NEVER_STARTED_CODES, programMayHaveRun, RemoteShellError } from "../../lib/remote/shell.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";
import type { FailureCode } from "../../lib/types.ts";
import { cleanupTemps, makeTree, noLeftoversAfterEach, P, plan, tempDir } from "../support/local_trees.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();
const read = (root: string, path: string): string => readFileSync(join(root, path), "utf8");

/** FAULT INJECTION: an adapter whose every exec rejects with `error` (and runs nothing). */
class RejectingShell implements RemoteShell {
  readonly label = "rejecting";
  calls = 0;
  readonly #error: RemoteShellError;
  constructor(error: RemoteShellError) {
    this.#error = error;
  }
  exec(_command: string, _options?: ExecOptions): Promise<ExecResult> {
    this.calls++;
    return Promise.reject(this.#error);
  }
}

const rejection = (code: FailureCode, started: boolean | undefined): RemoteShellError =>
  new RemoteShellError(codeOnlyFailure(code, "refused by the adapter"), started === undefined ? {} : { started });

describe("programMayHaveRun", () => {
  const table: [FailureCode, boolean | undefined, boolean][] = [
    ["timeout", false, false],
    ["timeout", true, true],
    ["timeout", undefined, true],
    ["permission_denied", false, false],
    ["permission_denied", undefined, true],
    ["outcome_unknown", undefined, true],
    ["connect_failed", undefined, false],
    ["auth_failed", undefined, false],
    ["host_key_unknown", undefined, false],
    ["host_key_mismatch", undefined, false],
    ["auth_failed", true, true], // the adapter's word wins over the code
  ];
  for (const [code, started, expected] of table) {
    test(`${code} with started ${String(started)} → ${expected ? "may have run" : "nothing ran"}`, () => {
      const error = rejection(code, started);
      expect(error.started).toBe(started);
      expect(programMayHaveRun(error)).toBe(expected);
    });
  }

  test("the never-start codes are exactly the connection and login failures", () => {
    expect([...NEVER_STARTED_CODES].sort()).toEqual(["auth_failed", "connect_failed", "host_key_mismatch", "host_key_unknown"]);
  });
});

describe("commitRemote and a rejected exec (fault-injected adapters that run nothing)", () => {
  const table: { code: FailureCode; started: boolean | undefined; reported: FailureCode }[] = [
    { code: "permission_denied", started: false, reported: "permission_denied" },
    { code: "remote_unsupported", started: false, reported: "remote_unsupported" },
    { code: "limit_exceeded", started: false, reported: "limit_exceeded" },
    { code: "remote_error", started: false, reported: "remote_error" },
    { code: "timeout", started: false, reported: "timeout" },
    { code: "cancelled", started: false, reported: "cancelled" },
    { code: "connect_failed", started: undefined, reported: "connect_failed" },
    { code: "auth_failed", started: undefined, reported: "auth_failed" },
    { code: "timeout", started: true, reported: "outcome_unknown" },
    { code: "limit_exceeded", started: true, reported: "outcome_unknown" },
    { code: "cancelled", started: true, reported: "outcome_unknown" },
    { code: "outcome_unknown", started: true, reported: "outcome_unknown" },
    { code: "permission_denied", started: undefined, reported: "outcome_unknown" },
    { code: "remote_error", started: undefined, reported: "outcome_unknown" },
  ];
  for (const { code, started, reported } of table) {
    test(`${code} (started: ${String(started)}) → ${reported}`, async () => {
      const root = makeTree({ "a.txt": "a1\n" });
      const shell = new RejectingShell(rejection(code, started));
      const report = await commitRemote(shell, root, plan([P.update("a.txt", "a1\n", "a2\n")]), { operationId: "op_started" });
      expect(shell.calls).toBe(1);
      expect(report.ok).toBe(false);
      expect(report.errors).toHaveLength(1);
      expect(report.errors![0]).toMatchObject({ code: reported, operationId: "op_started" });
      if (reported === "outcome_unknown") {
        expect(report.errors![0]!.planned).toEqual([{ path: "a.txt", sha256: sha256Hex("a2\n") }]);
        expect(report.errors![0]!.message).toContain("reconcile");
      } else {
        expect(report.errors![0]!.message).toBe(`${code}: refused by the adapter`);
      }
      expect(read(root, "a.txt")).toBe("a1\n");
    });
  }
});

describe("reconcile and readSnapshots with a rejected exec (fault-injected adapters that run nothing)", () => {
  test("reconcile: a not-started failure says reconcile did not run; a started one that it may have stopped part-way", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    const thePlan = plan([P.update("a.txt", "a1\n", "a2\n")]);
    const notRun = await reconcile(new RejectingShell(rejection("timeout", false)), root, reconcileTicket(thePlan, "op_r"));
    expect(notRun.errors![0]).toMatchObject({ code: "timeout", operationId: "op_r" });
    expect(notRun.errors![0]!.message).toContain("reconcile did not run: call reconcile again with operation id op_r");
    const part = await reconcile(new RejectingShell(rejection("timeout", true)), root, reconcileTicket(thePlan, "op_r"));
    expect(part.errors![0]!.message).toContain("reconcile may have stopped part-way: call reconcile again");
  });

  test("readSnapshots: a connection dropped mid-read is a retryable remote_error saying nothing changed, never outcome_unknown; applyPatch reports it so", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    const shell = new RejectingShell(rejection("outcome_unknown", true));
    const error = await readSnapshots(shell, root, ["a.txt"]).catch((e) => e);
    expect(error).toBeInstanceOf(RemoteShellError);
    expect(error.failure).toMatchObject({ code: "remote_error", retryable: true });
    expect(error.failure.message).toContain("nothing was changed");
    expect(error.started).toBe(true);
    const report = await applyPatch(shell, { root, patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-a1\n+a2\n*** End Patch" });
    expect(report.errors!.map((e) => e.code)).toEqual(["remote_error"]);
    expect(shell.calls).toBe(2); // no commit was attempted
  });

  test("readSnapshots passes other transport failures through unchanged, started flag included", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    const original = rejection("timeout", false);
    const error = await readSnapshots(new RejectingShell(original), root, ["a.txt"]).catch((e) => e);
    expect(error).toBe(original);
  });
});

describe("LocalShell sets started (real processes)", () => {
  test("cancelled before the start: started false, nothing ran", async () => {
    const marker = join(tempDir(), "ran");
    const error = await new LocalShell().exec(`: > '${marker}'`, { signal: AbortSignal.abort() }).catch((e) => e);
    expect(error.failure.code).toBe("cancelled");
    expect(error.started).toBe(false);
    expect(existsSync(marker)).toBe(false);
  });

  test("a shell binary that cannot be started: started false", async () => {
    const error = await new LocalShell({ shell: ["/nonexistent/sh"] }).exec("true").catch((e) => e);
    expect(error.failure.code).toBe("connect_failed");
    expect(error.started).toBe(false);
  });

  test("timeout, cancel and output cap after the start: started true", async () => {
    const timedOut = await new LocalShell().exec("sleep 5", { timeoutMs: 100 }).catch((e) => e);
    expect([timedOut.failure.code, timedOut.started]).toEqual(["timeout", true]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const cancelled = await new LocalShell().exec("sleep 5", { signal: controller.signal }).catch((e) => e);
    expect([cancelled.failure.code, cancelled.started]).toEqual(["cancelled", true]);
    const capped = await new LocalShell({ maxOutputBytes: 1000 }).exec("while :; do echo xxxxxxxxxxxxxxxx; done").catch((e) => e);
    expect([capped.failure.code, capped.started]).toEqual(["limit_exceeded", true]);
  });

  test("a commit killed by the output cap after it started → outcome_unknown; reconcile settles it and cleans up", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    const thePlan = plan([P.update("a.txt", "a1\n", "a2\n")]);
    // The commit program prints its progress: 64 bytes is passed at once.
    const report = await commitRemote(new LocalShell({ maxOutputBytes: 64 }), root, thePlan, { operationId: "capped_1" });
    expect(report.errors![0]).toMatchObject({ code: "outcome_unknown", operationId: "capped_1" });
    expect(report.errors![0]!.message).toContain("limit_exceeded");
    const after = await reconcile(new LocalShell(), root, reconcileTicket(thePlan, "capped_1"));
    expect(after.ok).toBe(true);
    const state = after.files[0]!.state;
    expect(read(root, "a.txt")).toBe(state === "applied" ? "a2\n" : "a1\n");
  });

  test("readSnapshots' own failures after the program ran carry started true (fault-injected truncation)", async () => {
    const root = makeTree({ "a.txt": "abcdef" });
    const inner = new LocalShell();
    const truncating: RemoteShell = {
      label: "truncating",
      async exec(command: string, options?: ExecOptions) {
        const r = await inner.exec(command, options);
        return { ...r, stdout: r.stdout.subarray(0, r.stdout.length - 15) };
      },
    };
    const error = await readSnapshots(truncating, root, ["a.txt"]).catch((e) => e);
    expect(error.failure.code).toBe("remote_error");
    expect(error.started).toBe(true);
  });
});
