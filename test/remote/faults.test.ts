/**
 * Faults injected at the commit program's hook points (HookedShell replaces
 * the no-op `sap_hook` with test code) and at the transport (wrappers that
 * drop the result). Every test name says which fault it injects.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitRemote } from "../../lib/commit.ts";
import { reconcile } from "../../lib/reconcile.ts";
import { sha256Hex } from "../../lib/sha256.ts";
import { shQuote } from "../../lib/shell.ts";
import type { ExecOptions, RemoteShell } from "../../lib/shell.ts";
import { assertNoLeftovers, cleanupTemps, HookedShell, leftovers, localShell, makeTree, P, plan, shellCases, tempDir } from "../support/local_trees.ts";

afterAll(cleanupTemps);
const read = (root: string, path: string): string => readFileSync(join(root, path), "utf8");
const q = (root: string, path: string): string => shQuote(join(root, path));
/** Hook body: run `code` at hook `name` (with argument `arg`, if given). */
const at = (name: string, arg: string, code: string): string => `case "$1:$2" in ${shQuote(`${name}:${arg}`)}) ${code} ;; esac`;

for (const c of shellCases()) {
  describe(`commit faults (${c.name})`, () => {
    test("a change to the destination during stage upload → conflict, nothing written (hook after staging)", async () => {
      const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
      const inoB = statSync(join(root, "b.txt")).ino;
      const shell = new HookedShell(localShell(c), at("staged", "", `printf 'someone else\\n' > ${q(root, "a.txt")}`));
      const report = await commitRemote(shell, root, plan([P.update("a.txt", "a1\n", "a2\n"), P.update("b.txt", "b1\n", "b2\n")]));
      expect(report.ok).toBe(false);
      expect(report.errors).toHaveLength(1);
      expect(report.errors![0]).toMatchObject({ code: "conflict", path: "a.txt", actual_sha256: sha256Hex("someone else\n"), retryable: true });
      expect(read(root, "a.txt")).toBe("someone else\n");
      expect(read(root, "b.txt")).toBe("b1\n");
      expect(statSync(join(root, "b.txt")).ino).toBe(inoB);
      assertNoLeftovers(root);
    });

    test("a file created at an Add's path after the re-check is never overwritten; earlier files restored (hook after check)", async () => {
      const root = makeTree({ "a.txt": "a1\n" });
      const inoA = statSync(join(root, "a.txt")).ino;
      const shell = new HookedShell(localShell(c), at("checked", "", `printf 'theirs\\n' > ${q(root, "new.txt")}`));
      const report = await commitRemote(shell, root, plan([P.update("a.txt", "a1\n", "a2\n"), P.add("new.txt", "ours\n")]));
      expect(report.ok).toBe(false);
      expect(report.errors![0]!.code).toBe("conflict");
      expect(report.errors![0]!.message).toContain("nothing was changed");
      expect(read(root, "new.txt")).toBe("theirs\n");
      expect(read(root, "a.txt")).toBe("a1\n");
      expect(statSync(join(root, "a.txt")).ino).toBe(inoA);
      assertNoLeftovers(root);
    });

    test("a finalize failure midway restores the earlier files, same inodes (hook deletes the third stage)", async () => {
      const op = "fin_fail";
      const root = makeTree({ "a.txt": { content: "a1\n", mode: 0o640 }, "b.txt": "b1\n", "c.txt": "c1\n" });
      const inoA = statSync(join(root, "a.txt")).ino;
      const inoB = statSync(join(root, "b.txt")).ino;
      const shell = new HookedShell(localShell(c), at("before_finalize", "2", `rm -f ${q(root, `.sap-${op}-2.stage`)}`));
      const report = await commitRemote(shell, root, plan([P.update("a.txt", "a1\n", "a2\n"), P.delete("b.txt", "b1\n"), P.update("c.txt", "c1\n", "c2\n")]), { operationId: op });
      expect(report.ok).toBe(false);
      expect(report.errors![0]).toMatchObject({ code: "remote_error", operation_id: op });
      expect(report.errors![0]!.message).toContain("writing c.txt failed");
      expect(report.errors![0]!.message).toContain("nothing was changed");
      expect([read(root, "a.txt"), read(root, "b.txt"), read(root, "c.txt")]).toEqual(["a1\n", "b1\n", "c1\n"]);
      expect(statSync(join(root, "a.txt")).ino).toBe(inoA);
      expect(statSync(join(root, "a.txt")).mode & 0o777).toBe(0o640);
      expect(statSync(join(root, "b.txt")).ino).toBe(inoB);
      assertNoLeftovers(root);
    });

    test("partial_apply with each path's real state when the restore fails too (hook deletes a stage and a backup); reconcile then cleans up", async () => {
      const op = "partial_1";
      const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
      const shell = new HookedShell(localShell(c), at("before_finalize", "1", `rm -f ${q(root, `.sap-${op}-1.stage`)} ${q(root, `.sap-${op}-0.bak`)}`));
      const thePlan = plan([P.update("a.txt", "a1\n", "a2\n"), P.update("b.txt", "b1\n", "b2\n")]);
      const report = await commitRemote(shell, root, thePlan, { operationId: op });
      expect(report.ok).toBe(false);
      const f = report.errors![0]!;
      expect(f).toMatchObject({ code: "partial_apply", operation_id: op, retryable: false });
      expect(f.outcomes).toEqual([
        { path: "a.txt", state: "new", sha256: sha256Hex("a2\n") },
        { path: "b.txt", state: "old", sha256: sha256Hex("b1\n") },
      ]);
      expect(f.message).toContain("reconcile");
      expect(read(root, "a.txt")).toBe("a2\n");
      expect(read(root, "b.txt")).toBe("b1\n");
      const after = await reconcile(localShell(c), root, thePlan, op);
      expect(after.ok).toBe(true);
      expect(after.files.map((x) => x.state)).toEqual(["applied", "not_applied"]);
      assertNoLeftovers(root);
    });

    test("killed (SIGKILL via hook) after finalizing an update and a delete → outcome_unknown; reconcile restores both and cleans up", async () => {
      const op = "killed_1";
      const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
      const inoB = statSync(join(root, "b.txt")).ino;
      const thePlan = plan([P.update("a.txt", "a1\n", "a2\n"), P.delete("b.txt", "b1\n"), P.add("n/c.txt", "c\n")]);
      const shell = new HookedShell(localShell(c), at("after_finalize", "1", "kill -9 $$"));
      const report = await commitRemote(shell, root, thePlan, { operationId: op });
      expect(report.ok).toBe(false);
      expect(report.errors![0]).toMatchObject({ code: "outcome_unknown", operation_id: op, retryable: false });
      expect(report.errors![0]!.planned).toEqual([
        { path: "a.txt", sha256: sha256Hex("a2\n") },
        { path: "b.txt", sha256: null },
        { path: "n/c.txt", sha256: sha256Hex("c\n") },
      ]);
      expect(existsSync(join(root, "b.txt"))).toBe(false); // renamed aside: the backup is the only copy now
      expect(leftovers(root).length).toBeGreaterThan(0);
      const after = await reconcile(localShell(c), root, thePlan, op);
      expect(after).toMatchObject({ ok: true, operation_id: op });
      expect(after.files.map((x) => [x.path, x.state])).toEqual([["a.txt", "not_applied"], ["b.txt", "not_applied"], ["n/c.txt", "not_applied"]]);
      expect(read(root, "a.txt")).toBe("a1\n");
      expect(read(root, "b.txt")).toBe("b1\n");
      expect(statSync(join(root, "b.txt")).ino).toBe(inoB);
      assertNoLeftovers(root);
      // reconcile is idempotent
      const again = await reconcile(localShell(c), root, thePlan, op);
      expect(again.files.map((x) => x.state)).toEqual(["not_applied", "not_applied", "not_applied"]);
    });

    test("killed (SIGKILL via hook) in the middle of a move → reconcile removes the new name and restores the source", async () => {
      const op = "killed_mv";
      const root = makeTree({ "src/m.txt": "m1\n" });
      const thePlan = plan([P.move("src/m.txt", "dst/m.txt", "m1\n", "m2\n")]);
      const shell = new HookedShell(localShell(c), at("after_finalize", "0", "kill -9 $$"));
      const report = await commitRemote(shell, root, thePlan, { operationId: op });
      expect(report.errors![0]!.code).toBe("outcome_unknown");
      expect(read(root, "dst/m.txt")).toBe("m2\n");
      const after = await reconcile(localShell(c), root, thePlan, op);
      expect(after.files[0]!.state).toBe("not_applied");
      expect(read(root, "src/m.txt")).toBe("m1\n");
      expect(existsSync(join(root, "dst/m.txt"))).toBe(false);
      assertNoLeftovers(root);
    });

    test("killed (SIGKILL via hook) after the commit point → reconcile reports applied and cleans up", async () => {
      const op = "killed_done";
      const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
      const thePlan = plan([P.update("a.txt", "a1\n", "a2\n"), P.delete("b.txt", "b1\n")]);
      const report = await commitRemote(new HookedShell(localShell(c), at("done", "", "kill -9 $$")), root, thePlan, { operationId: op });
      expect(report.errors![0]!.code).toBe("outcome_unknown");
      expect(leftovers(root).length).toBeGreaterThan(0);
      const after = await reconcile(localShell(c), root, thePlan, op);
      expect(after.files.map((x) => x.state)).toEqual(["applied", "applied"]);
      expect(after.files[0]!.bytes_written).toBe(3);
      expect(read(root, "a.txt")).toBe("a2\n");
      expect(existsSync(join(root, "b.txt"))).toBe(false);
      assertNoLeftovers(root);
    });

    test("killed (SIGKILL via hook) before any file changed → remote_error, not outcome_unknown; reconcile removes the leftovers", async () => {
      const op = "killed_early";
      const root = makeTree({ "a.txt": "a1\n" });
      const thePlan = plan([P.update("a.txt", "a1\n", "a2\n"), P.add("b/c.txt", "c")]);
      const report = await commitRemote(new HookedShell(localShell(c), at("locked", "", "kill -9 $$")), root, thePlan, { operationId: op });
      expect(report.errors![0]).toMatchObject({ code: "remote_error", retryable: true });
      expect(report.errors![0]!.message).toContain("before changing any file");
      expect(read(root, "a.txt")).toBe("a1\n");
      expect(leftovers(root).length).toBeGreaterThan(0); // stages and locks: SIGKILL cannot be trapped
      const after = await reconcile(localShell(c), root, thePlan, op);
      expect(after.files.map((x) => x.state)).toEqual(["not_applied", "not_applied"]);
      assertNoLeftovers(root);
    });

    test("SIGTERM during finalize (via hook) → the program's trap rolls back and cleans up", async () => {
      const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
      const shell = new HookedShell(localShell(c), at("after_finalize", "0", "kill -TERM $$"));
      const report = await commitRemote(shell, root, plan([P.update("a.txt", "a1\n", "a2\n"), P.update("b.txt", "b1\n", "b2\n")]));
      expect(report.errors![0]).toMatchObject({ code: "remote_error", retryable: true });
      expect(report.errors![0]!.message).toContain("TERM");
      expect(report.errors![0]!.message).toContain("nothing was changed");
      expect([read(root, "a.txt"), read(root, "b.txt")]).toEqual(["a1\n", "b1\n"]);
      assertNoLeftovers(root);
    });

    test("a deleted file's name re-created by someone else: reconcile keeps the only copy of the old file and says so (SIGKILL via hook)", async () => {
      const op = "kept_bak";
      const root = makeTree({ "gone.txt": "old\n", "x.txt": "x1\n" });
      const thePlan = plan([P.delete("gone.txt", "old\n"), P.update("x.txt", "x1\n", "x2\n")]);
      await commitRemote(new HookedShell(localShell(c), at("after_finalize", "0", "kill -9 $$")), root, thePlan, { operationId: op });
      writeFileSync(join(root, "gone.txt"), "someone new\n");
      const after = await reconcile(localShell(c), root, thePlan, op);
      expect(after.files.map((x) => x.state)).toEqual(["diverged", "not_applied"]);
      const kept = after.warnings.find((w) => w.code === "cleanup_incomplete");
      expect(kept?.path).toBe("gone.txt");
      const backup = join(root, `.sap-${op}-0.bak`);
      expect(read(root, `.sap-${op}-0.bak`)).toBe("old\n");
      expect(read(root, "gone.txt")).toBe("someone new\n");
      unlinkSync(backup);
      assertNoLeftovers(root);
    });
  });
}

describe("commit transport faults", () => {
  const c = shellCases()[0]!;

  test("the channel drops with no exit status (fault-injected adapter) → outcome_unknown; reconcile finds it applied", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    const inner = localShell(c);
    const dropping: RemoteShell = {
      label: "dropping",
      async exec(command: string, options?: ExecOptions) {
        const r = await inner.exec(command, options);
        const text = new TextDecoder().decode(r.stdout);
        const cut = new TextEncoder().encode(text.slice(0, text.indexOf("DONE")));
        return { stdout: cut, stderr: r.stderr, exitCode: null, signal: null };
      },
    };
    const thePlan = plan([P.update("a.txt", "a1\n", "a2\n")]);
    const report = await commitRemote(dropping, root, thePlan, { operationId: "dropped_1" });
    expect(report.errors![0]).toMatchObject({ code: "outcome_unknown", operation_id: "dropped_1" });
    expect(report.errors![0]!.message).toContain("connection closed");
    const after = await reconcile(inner, root, thePlan, "dropped_1");
    expect(after.files[0]!.state).toBe("applied");
    assertNoLeftovers(root);
  });

  test("a transport timeout while the commit runs → outcome_unknown (fault-injected slow hook)", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    const thePlan = plan([P.update("a.txt", "a1\n", "a2\n")]);
    const shell = new HookedShell(localShell(c), at("checked", "", "sleep 3"));
    const report = await commitRemote(shell, root, thePlan, { operationId: "slow_1", timeoutMs: 500 });
    expect(report.errors![0]).toMatchObject({ code: "outcome_unknown", operation_id: "slow_1" });
    expect(report.errors![0]!.message).toContain("timeout");
    const after = await reconcile(localShell(c), root, thePlan, "slow_1");
    expect(after.files[0]!.state).toBe("not_applied");
    assertNoLeftovers(root);
  });

  test("reconcile while the commit still holds its locks → locked; later → applied (hook holds the locks for 1.5 s)", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    const marker = join(tempDir(), "locked");
    const thePlan = plan([P.update("a.txt", "a1\n", "a2\n")]);
    const hook = at("checked", "", `: > ${shQuote(marker)}; sleep 1.5`);
    const running = commitRemote(new HookedShell(localShell(c), hook), root, thePlan, { operationId: "busy_1" });
    while (!existsSync(marker)) await Bun.sleep(20);
    const early = await reconcile(localShell(c), root, thePlan, "busy_1", { lockWaitMs: 200 });
    expect(early.ok).toBe(false);
    expect(early.errors![0]).toMatchObject({ code: "locked", retryable: true });
    expect(early.errors![0]!.message).toContain("still be running");
    expect((await running).ok).toBe(true);
    const later = await reconcile(localShell(c), root, thePlan, "busy_1");
    expect(later.files[0]!.state).toBe("applied");
    assertNoLeftovers(root);
  });
});
