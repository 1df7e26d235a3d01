/**
 * Contract: the commit under faults, for every shell under test. Faults are
 * injected at the commit program's hook points (HookedShell replaces the
 * no-op `sap_hook` with test code that runs inside the real program, on the
 * real host) and, for SSH, by cutting the real TCP connection through the
 * proxy at a moment a hook makes deterministic. Every test name says which
 * fault it injects; every test ends with the no-leftovers check.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitRemote } from "../../lib/remote/commit.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import type { ReconcileTicket } from "../../lib/types.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import { cleanupTemps, HookedShell, leftovers, makeTree, noLeftoversAfterEach, P, plan, tempDir } from "../support/local_trees.ts";
import { shellsUnderTest } from "../support/shells_under_test.ts";
import { at, pauseUntil, q, read, waitForFile } from "./helpers.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();
const shells = shellsUnderTest({ suite: "contract: faults" });

/** A failure's reconcile ticket after a trip through JSON (a log, a file, a tool result). */
function travelled(ticket: ReconcileTicket | undefined): ReconcileTicket {
  expect(ticket).toBeDefined();
  return JSON.parse(JSON.stringify(ticket));
}

for (const c of shells) {
  describe(`commit faults (${c.name})`, () => {
    test("a change to the destination during stage upload → conflict, nothing written (hook after staging)", async () => {
      const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
      const inoB = statSync(join(root, "b.txt")).ino;
      const shell = new HookedShell(await c.open(), at("staged", "", `printf 'someone else\\n' > ${q(root, "a.txt")}`));
      const report = await commitRemote(shell, root, plan([P.update("a.txt", "a1\n", "a2\n"), P.update("b.txt", "b1\n", "b2\n")]));
      expect(report.ok).toBe(false);
      expect(report.errors).toHaveLength(1);
      expect(report.errors![0]).toMatchObject({ code: "conflict", path: "a.txt", actualSha256: sha256Hex("someone else\n"), retryable: true });
      expect(read(root, "a.txt")).toBe("someone else\n");
      expect(read(root, "b.txt")).toBe("b1\n");
      expect(statSync(join(root, "b.txt")).ino).toBe(inoB);
    });

    // The stages are hashed in the background from the end of step 1 and
    // judged under the locks with the content comparison: a stage that is
    // not the planned content still stops the commit before any rename.
    const alteredStages: { name: string; plan: () => ReturnType<typeof plan>; stage: number }[] = [
      { name: "the second of two updates", plan: () => plan([P.update("a.txt", "a1\n", "a2\n"), P.update("b.txt", "b1\n", "b2\n")]), stage: 1 },
      { name: "an add (no source to compare)", plan: () => plan([P.add("new.txt", "ours\n")]), stage: 0 },
    ];
    for (const a of alteredStages) {
      test(`a stage that is not what was uploaded, ${a.name} (FAULT INJECTED: hook appends to it before it is hashed) → remote_error 'did not match its SHA-256', found under the locks, nothing written`, async () => {
        const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
        const inoA = statSync(join(root, "a.txt")).ino;
        const marker = join(tempDir(), "locked");
        const shell = new HookedShell(
          await c.open(),
          at("stages_built", "", `sap_get S_d_${a.stage}; sap_pcd $SAP_V && printf X >> ./s${a.stage}`) + "\n" + at("locked", "", `: > ${q(marker, "")}`),
        );
        const report = await commitRemote(shell, root, a.plan());
        expect(report.ok).toBe(false);
        expect(report.errors!.map((e) => e.code)).toEqual(["remote_error"]);
        expect(report.errors![0]!.message).toContain("did not match its SHA-256");
        expect(report.errors![0]!.message).toContain("nothing was changed");
        expect(existsSync(marker)).toBe(true);
        expect(read(root, "a.txt")).toBe("a1\n");
        expect(read(root, "b.txt")).toBe("b1\n");
        expect(statSync(join(root, "a.txt")).ino).toBe(inoA);
        expect(existsSync(join(root, "new.txt"))).toBe(false);
      });
    }

    test("no file for the stages' hashes in the private directory (FAULT INJECTED: hook puts a directory at ./h) → a stage write failure naming the file, before any lock, nothing written", async () => {
      const root = makeTree({ "a.txt": "a1\n" });
      const marker = join(tempDir(), "locked");
      const shell = new HookedShell(await c.open(), at("stages_built", "", "sap_pcd $SAP_W && mkdir ./h") + "\n" + at("locked", "", `: > ${q(marker, "")}`));
      const report = await commitRemote(shell, root, plan([P.update("a.txt", "a1\n", "a2\n")]));
      expect(report.ok).toBe(false);
      expect(report.errors!.map((e) => e.code)).toEqual(["remote_error"]);
      expect(report.errors![0]!.message).toContain("a.txt");
      expect(report.errors![0]!.message).toContain("nothing was changed");
      expect(existsSync(marker)).toBe(false);
      expect(read(root, "a.txt")).toBe("a1\n");
    });

    test("the program's stderr still reaches the report after the stages' hash is collected (FAULT INJECTED: hook writes to stderr and exits after the comparison) → remote_error quoting it, nothing written", async () => {
      const root = makeTree({ "a.txt": "a1\n" });
      const shell = new HookedShell(await c.open(), at("compared", "", "printf 'stderr-after-compare\\n' >&2; exit 7"));
      const report = await commitRemote(shell, root, plan([P.update("a.txt", "a1\n", "a2\n")]));
      expect(report.ok).toBe(false);
      expect(report.errors!.map((e) => e.code)).toEqual(["remote_error"]);
      expect(report.errors![0]!.message).toContain("stderr-after-compare");
      expect(read(root, "a.txt")).toBe("a1\n");
    });

    test("a file created at an Add's path after the re-check is never overwritten; earlier files restored (hook after check)", async () => {
      const root = makeTree({ "a.txt": "a1\n" });
      const inoA = statSync(join(root, "a.txt")).ino;
      const shell = new HookedShell(await c.open(), at("checked", "", `printf 'theirs\\n' > ${q(root, "new.txt")}`));
      const report = await commitRemote(shell, root, plan([P.update("a.txt", "a1\n", "a2\n"), P.add("new.txt", "ours\n")]));
      expect(report.ok).toBe(false);
      expect(report.errors![0]!.code).toBe("conflict");
      expect(report.errors![0]!.message).toContain("nothing was changed");
      expect(read(root, "new.txt")).toBe("theirs\n");
      expect(read(root, "a.txt")).toBe("a1\n");
      expect(statSync(join(root, "a.txt")).ino).toBe(inoA);
    });

    test("a finalize failure midway restores the earlier files, same inodes and modes (hook deletes the third stage)", async () => {
      const op = "fin_fail";
      const root = makeTree({ "a.txt": { content: "a1\n", mode: 0o640 }, "b.txt": "b1\n", "c.txt": "c1\n" });
      const inoA = statSync(join(root, "a.txt")).ino;
      const inoB = statSync(join(root, "b.txt")).ino;
      // white box: file 2's stage s2 in the private directory of its directory
      const shell = new HookedShell(await c.open(), at("before_finalize", "2", `sap_get S_d_2 && sap_pcd "$SAP_V" && rm -f ./s2`));
      const report = await commitRemote(shell, root, plan([P.update("a.txt", "a1\n", "a2\n"), P.delete("b.txt", "b1\n"), P.update("c.txt", "c1\n", "c2\n")]), { operationId: op });
      expect(report.ok).toBe(false);
      expect(report.errors![0]).toMatchObject({ code: "remote_error", operationId: op });
      expect(report.errors![0]!.message).toContain("writing c.txt failed");
      expect(report.errors![0]!.message).toContain("nothing was changed");
      expect([read(root, "a.txt"), read(root, "b.txt"), read(root, "c.txt")]).toEqual(["a1\n", "b1\n", "c1\n"]);
      expect(statSync(join(root, "a.txt")).ino).toBe(inoA);
      expect(statSync(join(root, "a.txt")).mode & 0o777).toBe(0o640);
      expect(statSync(join(root, "b.txt")).ino).toBe(inoB);
    });

    test("partial_apply with each path's real state when the restore fails too (hook deletes a stage and a backup); reconcile then cleans up", async () => {
      const op = "partial_1";
      const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
      const shell = await c.open();
      // white box: file 1's stage s1 and file 0's backup (its pin p/a.txt), in the root's private directory
      const hooked = new HookedShell(shell, at("before_finalize", "1", `sap_pcd 0 && rm -f ./s1 ./p/a.txt`));
      const thePlan = plan([P.update("a.txt", "a1\n", "a2\n"), P.update("b.txt", "b1\n", "b2\n")]);
      const report = await commitRemote(hooked, root, thePlan, { operationId: op });
      expect(report.ok).toBe(false);
      const f = report.errors![0]!;
      expect(f).toMatchObject({ code: "partial_apply", operationId: op, retryable: false });
      expect(f.outcomes).toEqual([
        { path: "a.txt", state: "new", sha256: sha256Hex("a2\n") },
        { path: "b.txt", state: "old", sha256: sha256Hex("b1\n") },
      ]);
      expect(f.message).toContain("reconcile");
      expect(read(root, "a.txt")).toBe("a2\n");
      expect(read(root, "b.txt")).toBe("b1\n");
      // Settled from the failure alone, as a caller that kept only the report would.
      const after = await reconcile(shell, root, travelled(f.reconcile));
      expect(after.ok).toBe(true);
      expect(after.elevated).toBe(c.expectElevated);
      expect(after.files.map((x) => x.state)).toEqual(["applied", "not_applied"]);
    });

    test("killed (SIGKILL via hook) after finalizing an update and a delete → outcome_unknown; reconcile restores both and cleans up", async () => {
      const op = "killed_1";
      const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
      const inoB = statSync(join(root, "b.txt")).ino;
      const thePlan = plan([P.update("a.txt", "a1\n", "a2\n"), P.delete("b.txt", "b1\n"), P.add("n/c.txt", "c\n")]);
      const shell = await c.open();
      const report = await commitRemote(new HookedShell(shell, at("after_finalize", "1", "kill -9 $$")), root, thePlan, { operationId: op });
      expect(report.ok).toBe(false);
      expect(report.errors![0]).toMatchObject({ code: "outcome_unknown", operationId: op, retryable: false });
      expect(report.errors![0]!.planned).toEqual([
        { path: "a.txt", sha256: sha256Hex("a2\n") },
        { path: "b.txt", sha256: null },
        { path: "n/c.txt", sha256: sha256Hex("c\n") },
      ]);
      expect(existsSync(join(root, "b.txt"))).toBe(false); // renamed aside: the backup is the only copy now
      expect(report.errors![0]!.reconcile).toEqual(reconcileTicket(thePlan, op));
      expect(leftovers(root).length).toBeGreaterThan(0);
      const after = await reconcile(shell, root, travelled(report.errors![0]!.reconcile));
      expect(after).toMatchObject({ ok: true, operationId: op });
      expect(after.files.map((x) => [x.path, x.state])).toEqual([["a.txt", "not_applied"], ["b.txt", "not_applied"], ["n/c.txt", "not_applied"]]);
      expect(read(root, "a.txt")).toBe("a1\n");
      expect(read(root, "b.txt")).toBe("b1\n");
      expect(statSync(join(root, "b.txt")).ino).toBe(inoB);
      // reconcile is idempotent
      const again = await reconcile(shell, root, reconcileTicket(thePlan, op));
      expect(again.files.map((x) => x.state)).toEqual(["not_applied", "not_applied", "not_applied"]);
    });

    test("killed (SIGKILL via hook) in the middle of a move → reconcile removes the new name and restores the source", async () => {
      const op = "killed_mv";
      const root = makeTree({ "src/m.txt": "m1\n" });
      const thePlan = plan([P.move("src/m.txt", "dst/m.txt", "m1\n", "m2\n")]);
      const shell = await c.open();
      const report = await commitRemote(new HookedShell(shell, at("after_finalize", "0", "kill -9 $$")), root, thePlan, { operationId: op });
      expect(report.errors![0]!.code).toBe("outcome_unknown");
      expect(read(root, "dst/m.txt")).toBe("m2\n");
      const after = await reconcile(shell, root, travelled(report.errors![0]!.reconcile));
      expect(after.files[0]!.state).toBe("not_applied");
      expect(read(root, "src/m.txt")).toBe("m1\n");
      expect(existsSync(join(root, "dst/m.txt"))).toBe(false);
    });

    test("killed (SIGKILL via hook) after the commit point → reconcile reports applied and cleans up", async () => {
      const op = "killed_done";
      const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
      const thePlan = plan([P.update("a.txt", "a1\n", "a2\n"), P.delete("b.txt", "b1\n")]);
      const shell = await c.open();
      const report = await commitRemote(new HookedShell(shell, at("done", "", "kill -9 $$")), root, thePlan, { operationId: op });
      expect(report.errors![0]!.code).toBe("outcome_unknown");
      expect(leftovers(root).length).toBeGreaterThan(0);
      const after = await reconcile(shell, root, travelled(report.errors![0]!.reconcile));
      expect(after.files.map((x) => x.state)).toEqual(["applied", "applied"]);
      expect(after.files[0]!.bytesWritten).toBe(3);
      expect(read(root, "a.txt")).toBe("a2\n");
      expect(existsSync(join(root, "b.txt"))).toBe(false);
    });

    test("killed (SIGKILL via hook) before any file changed → remote_error, not outcome_unknown; reconcile removes the leftovers", async () => {
      const op = "killed_early";
      const root = makeTree({ "a.txt": "a1\n" });
      const thePlan = plan([P.update("a.txt", "a1\n", "a2\n"), P.add("b/c.txt", "c")]);
      const shell = await c.open();
      const report = await commitRemote(new HookedShell(shell, at("locked", "", "kill -9 $$")), root, thePlan, { operationId: op });
      expect(report.errors![0]).toMatchObject({ code: "remote_error", retryable: true });
      expect(report.errors![0]!.message).toContain("before changing any file");
      expect(read(root, "a.txt")).toBe("a1\n");
      expect(leftovers(root).length).toBeGreaterThan(0); // stages and locks: SIGKILL cannot be trapped
      expect(report.errors![0]!.reconcile).toEqual(reconcileTicket(thePlan, op));
      const after = await reconcile(shell, root, travelled(report.errors![0]!.reconcile));
      expect(after.files.map((x) => x.state)).toEqual(["not_applied", "not_applied"]);
    });

    test("SIGTERM during finalize (via hook) → the program's trap rolls back and cleans up", async () => {
      const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
      const shell = new HookedShell(await c.open(), at("after_finalize", "0", "kill -TERM $$"));
      const report = await commitRemote(shell, root, plan([P.update("a.txt", "a1\n", "a2\n"), P.update("b.txt", "b1\n", "b2\n")]));
      expect(report.errors![0]).toMatchObject({ code: "remote_error", retryable: true });
      expect(report.errors![0]!.message).toContain("TERM");
      expect(report.errors![0]!.message).toContain("nothing was changed");
      expect([read(root, "a.txt"), read(root, "b.txt")]).toEqual(["a1\n", "b1\n"]);
    });

    test("a deleted file's name re-created by someone else: reconcile keeps the only copy of the old file and says so (SIGKILL via hook)", async () => {
      const op = "kept_bak";
      const root = makeTree({ "gone.txt": "old\n", "x.txt": "x1\n" });
      const thePlan = plan([P.delete("gone.txt", "old\n"), P.update("x.txt", "x1\n", "x2\n")]);
      const shell = await c.open();
      await commitRemote(new HookedShell(shell, at("after_finalize", "0", "kill -9 $$")), root, thePlan, { operationId: op });
      writeFileSync(join(root, "gone.txt"), "someone new\n");
      const after = await reconcile(shell, root, reconcileTicket(thePlan, op));
      expect(after.files.map((x) => x.state)).toEqual(["diverged", "not_applied"]);
      const kept = after.warnings.find((w) => w.code === "cleanup_incomplete");
      expect(kept?.path).toBe("gone.txt");
      expect(read(root, `.sap-${op}-0.bak`)).toBe("old\n");
      expect(read(root, "gone.txt")).toBe("someone new\n");
      unlinkSync(join(root, `.sap-${op}-0.bak`)); // the kept backup is the user's to remove
    });

    test("a timeout while the commit runs, before its go-ahead → timeout, nothing applied; reconcile finds it not applied (fault-injected slow hook)", async () => {
      const root = makeTree({ "a.txt": "a1\n" });
      const thePlan = plan([P.update("a.txt", "a1\n", "a2\n")]);
      const shell = await c.open();
      const report = await commitRemote(new HookedShell(shell, at("checked", "", "sleep 3")), root, thePlan, { operationId: "slow_1", timeoutMs: 500 });
      expect(report.errors![0]).toMatchObject({ code: "timeout", operationId: "slow_1" });
      expect(report.errors![0]!.message).toContain("nothing was applied");
      const after = await reconcile(shell, root, reconcileTicket(thePlan, "slow_1"));
      expect(after.files[0]!.state).toBe("not_applied");
      expect(read(root, "a.txt")).toBe("a1\n");
    });

    test("reconcile while the commit still holds its locks → locked; later → applied (hook holds the locks until released)", async () => {
      const root = makeTree({ "a.txt": "a1\n" });
      const signals = tempDir();
      const reached = join(signals, "locked");
      const release = join(signals, "go");
      const thePlan = plan([P.update("a.txt", "a1\n", "a2\n")]);
      const shell = await c.open();
      const running = commitRemote(new HookedShell(shell, at("checked", "", pauseUntil(reached, release))), root, thePlan, { operationId: "busy_1" });
      await waitForFile(reached);
      const early = await reconcile(shell, root, reconcileTicket(thePlan, "busy_1"), { lockWaitMs: 200 });
      expect(early.ok).toBe(false);
      expect(early.errors![0]).toMatchObject({ code: "locked", retryable: true });
      // the lock that is really held, and whose: the operation's own lock, a live process of this very operation
      expect(early.errors![0]!.message).toContain("operation busy_1 is still running");
      expect(early.errors![0]!.lock).toMatchObject({ kind: "operation", name: ".sap-lock-op-busy_1", operationId: "busy_1" });
      expect(early.errors![0]!.lock!.pid).toBeGreaterThan(1);
      writeFileSync(release, "");
      expect((await running).ok).toBe(true);
      const later = await reconcile(shell, root, reconcileTicket(thePlan, "busy_1"));
      expect(later.files[0]!.state).toBe("applied");
    });

    // Disconnect after rename (SPEC §10): the hook pauses the program right
    // after the first file was renamed into place and tells the test, which
    // then cuts the TCP connection — a real drop at a known point.
    if (c.cut) {
      const cut = c.cut;
      const disconnectAfterRename = async (finish: "completes" | "host kills it"): Promise<{ root: string; report: Awaited<ReturnType<typeof commitRemote>>; after: Awaited<ReturnType<typeof reconcile>> }> => {
        const op = finish === "completes" ? "cut_completes" : "cut_killed";
        const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n", "gone.txt": "g\n" });
        const signals = tempDir();
        const reached = join(signals, "renamed");
        const release = join(signals, "go");
        const thePlan = plan([P.update("a.txt", "a1\n", "a2\n"), P.update("b.txt", "b1\n", "b2\n"), P.delete("gone.txt", "g\n")]);
        const after0 = `${pauseUntil(reached, release)}${finish === "host kills it" ? "; kill -9 $$" : ""}`;
        const shell = await c.open();
        const running = commitRemote(new HookedShell(shell, at("after_finalize", "0", after0)), root, thePlan, { operationId: op });
        await waitForFile(reached);
        expect(read(root, "a.txt")).toBe("a2\n"); // the first rename happened
        cut();
        const report = await running;
        // Only now may the remote program go on: the drop came first.
        writeFileSync(release, "");
        // A new connection (the shell reconnects by itself); reconcile waits
        // for the commit's locks while that program still runs.
        const after = await reconcile(shell, root, reconcileTicket(thePlan, op));
        return { root, report, after };
      };

      test("disconnect after rename (TCP cut at a hook) → outcome_unknown; the program completes; reconcile reports applied", async () => {
        const { root, report, after } = await disconnectAfterRename("completes");
        expect(report.ok).toBe(false);
        expect(report.errors![0]).toMatchObject({ code: "outcome_unknown", operationId: "cut_completes", retryable: false });
        expect(report.errors![0]!.message).toContain("dropped"); // the transport's own report of the cut
        expect(report.errors![0]!.planned).toEqual([
          { path: "a.txt", sha256: sha256Hex("a2\n") },
          { path: "b.txt", sha256: sha256Hex("b2\n") },
          { path: "gone.txt", sha256: null },
        ]);
        expect(after).toMatchObject({ ok: true, operationId: "cut_completes" });
        expect(after.files.map((f) => [f.path, f.state])).toEqual([["a.txt", "applied"], ["b.txt", "applied"], ["gone.txt", "applied"]]);
        expect([read(root, "a.txt"), read(root, "b.txt"), existsSync(join(root, "gone.txt"))]).toEqual(["a2\n", "b2\n", false]);
      }, 20_000);

      test("disconnect after rename (TCP cut at a hook) → outcome_unknown; the program dies (SIGKILL); reconcile restores and reports not_applied", async () => {
        const { root, report, after } = await disconnectAfterRename("host kills it");
        expect(report.errors![0]).toMatchObject({ code: "outcome_unknown", operationId: "cut_killed" });
        expect(after).toMatchObject({ ok: true, operationId: "cut_killed" });
        expect(after.files.map((f) => [f.path, f.state])).toEqual([["a.txt", "not_applied"], ["b.txt", "not_applied"], ["gone.txt", "not_applied"]]);
        expect([read(root, "a.txt"), read(root, "b.txt"), read(root, "gone.txt")]).toEqual(["a1\n", "b1\n", "g\n"]);
      }, 20_000);
    }
  });
}
