/**
 * The error model (README "Failures"): the functions that change or search
 * files resolve with a report for every failure, and the ones that produce
 * a shell or data reject only with RemoteShellError, which carries `code`,
 * `retryable` and the whole failure. Checked against an adapter that
 * breaks its contract (FAULT INJECTED: exec rejects with a plain Error,
 * as a foreign adapter might): nothing raw escapes, and a commit through
 * it is an unknown outcome, never success or "nothing changed".
 */
import { afterAll, describe, expect, test } from "bun:test";
import { applyPatch, commitRemote, failure, listFiles, readSnapshots, reconcile, reconcileTicket, RemoteShellError, searchFiles } from "../../mod.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../mod.ts";
import { cleanupTemps, makeTree, P, plan } from "../support/local_trees.ts";

afterAll(cleanupTemps, 30_000);

/** An adapter whose exec rejects with a plain Error (FAULT INJECTED). */
class ForeignErrorShell implements RemoteShell {
  readonly label = "foreign";
  calls = 0;
  exec(_command: string, _options?: ExecOptions): Promise<ExecResult> {
    this.calls++;
    return Promise.reject(new Error("socket hang up"));
  }
}

describe("a foreign adapter error never escapes raw (FAULT INJECTED: exec rejects with a plain Error)", () => {
  test("readSnapshots rejects with RemoteShellError remote_error, code and retryable on the error itself", async () => {
    const error = await readSnapshots(new ForeignErrorShell(), "/srv/app", ["a.txt"]).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteShellError);
    const e = error as RemoteShellError;
    expect([e.code, e.retryable, e.started]).toEqual(["remote_error", false, undefined]);
    expect(e.code).toBe(e.failure.code);
    expect(e.message).toContain("Error: socket hang up");
    expect(e.message).toContain("instead of a RemoteShellError");
  });

  test("applyPatch resolves with a failed report", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    const report = await applyPatch(new ForeignErrorShell(), { root, patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-a1\n+a2\n*** End Patch" });
    expect(report.ok).toBe(false);
    if (!report.ok) expect(report.errors[0].code).toBe("remote_error");
  });

  test("commitRemote reports outcome_unknown with a ticket: the program may have run", async () => {
    const thePlan = plan([P.update("a.txt", "a1\n", "a2\n")]);
    const report = await commitRemote(new ForeignErrorShell(), "/srv/app", thePlan, { operationId: "foreign_1" });
    expect(report.ok).toBe(false);
    if (report.ok) return;
    const f = report.errors[0];
    expect(f.code).toBe("outcome_unknown");
    if (f.code !== "outcome_unknown") return;
    expect(f.reconcile).toEqual(reconcileTicket(thePlan, "foreign_1"));
  });

  test("reconcile, listFiles and searchFiles resolve with failed results", async () => {
    const shell = new ForeignErrorShell();
    const settled = await reconcile(shell, "/srv/app", reconcileTicket(plan([P.update("a.txt", "a1\n", "a2\n")]), "foreign_2"));
    expect(settled.ok).toBe(false);
    const listed = await listFiles(shell, "/srv/app");
    const found = await searchFiles(shell, "/srv/app", "x");
    expect([settled.errors?.[0]?.code, listed.errors?.[0]?.code, found.errors?.[0]?.code]).toEqual(["remote_error", "remote_error", "remote_error"]);
    expect(shell.calls).toBe(3);
  });
});

test("RemoteShellError mirrors its failure's code and retryable", () => {
  const e = new RemoteShellError(failure("locked", "held", { operationId: "op1" }));
  expect([e.name, e.code, e.retryable, e.message]).toEqual(["RemoteShellError", "locked", true, "locked: held"]);
});
