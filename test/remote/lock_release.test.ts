/**
 * Kill-safe locks (SPEC §7 round 2, issue 13 item 1), under every local
 * shell. FAULT INJECTION: the commit (or reconcile) program's whole process
 * group is SIGKILLed at a hook point — holding its locks, between the two
 * unlinks of a lock's release (the owner record removed, the directory not
 * yet), right after an add created its missing parent directory — and the
 * next commit (another operation, the default 120 s staleLockMs) or the
 * operation's reconcile must clear what it left at once, with a warning,
 * leaving nothing behind. A lock that is really held is named, with its
 * holder.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitRemote } from "../../lib/remote/commit.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { lockDirName } from "../../lib/remote/manifest.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import { cleanupTemps, HookedShell, leftovers, makeTree, noLeftoversAfterEach, P, plan, shellCases, tempDir } from "../support/local_trees.ts";
import { at, pauseUntil, read, waitForFile } from "../contract/helpers.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();

const KILL = "kill -9 0";

for (const c of shellCases()) {
  describe(`kill-safe locks (${c.name})`, () => {
    const shell = (): LocalShell => new LocalShell({ ...c.options, cwd: tempDir("sap-cwd-") });

    test("a commit killed while holding its locks: the next commit (another operation, default staleLockMs) breaks them at once, with a warning", async () => {
      const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
      const dead = await commitRemote(new HookedShell(shell(), at("checked", "", KILL)), root, plan([P.update("a.txt", "a1\n", "a2\n"), P.update("b.txt", "b1\n", "b2\n")]), { operationId: "dead_locks" });
      expect(dead.ok).toBe(false);
      expect(readdirSync(root).filter((n) => n.startsWith(".sap-lock-")).length).toBe(3); // a, b and the operation's own
      const started = performance.now();
      const next = await commitRemote(shell(), root, plan([P.update("a.txt", "a1\n", "A\n"), P.update("b.txt", "b1\n", "B\n")]), { operationId: "next_op", lockWaitMs: 5000 });
      expect(next.errors).toBeUndefined();
      expect(performance.now() - started).toBeLessThan(4000); // not the lock wait, not 120 s
      expect(next.warnings.filter((w) => w.code === "stale_lock_broken").map((w) => w.path)).toEqual(["a.txt", "b.txt"]);
      expect([read(root, "a.txt"), read(root, "b.txt")]).toEqual(["A\n", "B\n"]);
      // what the killed commit left besides (its private directories, its operation lock) is its reconcile's
      const settled = await reconcile(shell(), root, reconcileTicket(plan([P.update("a.txt", "a1\n", "a2\n"), P.update("b.txt", "b1\n", "b2\n")]), "dead_locks"));
      expect(settled.ok).toBe(true);
      expect(leftovers(root)).toEqual([]);
    });

    test("a kill between the two unlinks of a lock's release (record removed, directory not yet): the next commit goes through at once, reconcile leaves nothing", async () => {
      const root = makeTree({ "a.txt": "a1\n" });
      // FAULT INJECTION: the release has renamed the lock into the private directory; its owner file goes, then the group dies
      const held = `u/${lockDirName("a.txt")}`;
      const killer = new HookedShell(shell(), at("lock_released", held, `rm -rf ./${held}/o.*; ${KILL}`));
      const thePlan = plan([P.update("a.txt", "a1\n", "a2\n")]);
      const killed = await commitRemote(killer, root, thePlan, { operationId: "dead_release" });
      expect(killed.ok).toBe(false);
      expect(read(root, "a.txt")).toBe("a2\n"); // it had committed
      const next = await commitRemote(shell(), root, plan([P.update("a.txt", "a2\n", "a3\n")]), { operationId: "after_release", lockWaitMs: 2000 });
      expect(next.errors).toBeUndefined();
      const settled = await reconcile(shell(), root, reconcileTicket(thePlan, "dead_release"));
      expect(settled.ok).toBe(true);
      expect(leftovers(root)).toEqual([]);
    });

    test("a reconcile killed in its own lock release: the next reconcile clears everything at once", async () => {
      const root = makeTree({ "a.txt": "a1\n" });
      const thePlan = plan([P.update("a.txt", "a1\n", "a2\n")]);
      await commitRemote(new HookedShell(shell(), at("checked", "", KILL)), root, thePlan, { operationId: "twice" });
      const held = "u/.sap-lock-op-twice";
      const first = await reconcile(new HookedShell(shell(), at("lock_released", held, `rm -rf ./${held}/o.*; ${KILL}`)), root, reconcileTicket(thePlan, "twice"));
      expect(first.ok).toBe(false);
      const started = performance.now();
      const second = await reconcile(shell(), root, reconcileTicket(thePlan, "twice"), { lockWaitMs: 5000 });
      expect(second.ok).toBe(true);
      expect(performance.now() - started).toBeLessThan(4000);
      expect(second.files[0]!.state).toBe("not_applied");
      expect(leftovers(root)).toEqual([]);
    });

    test("a live holder: locked names the lock really held (a.txt's, by operation, process and host), not another file", async () => {
      const root = makeTree({ "a.txt": "a1\n", "z.txt": "z1\n" });
      const signals = tempDir();
      const reached = join(signals, "held");
      const release = join(signals, "go");
      const holder = commitRemote(new HookedShell(shell(), at("checked", "", pauseUntil(reached, release))), root, plan([P.update("z.txt", "z1\n", "z2\n")]), { operationId: "holder_op" });
      await waitForFile(reached);
      const blocked = await commitRemote(shell(), root, plan([P.update("a.txt", "a1\n", "a2\n"), P.update("z.txt", "z1\n", "Z\n")]), { operationId: "waiter_op", lockWaitMs: 300 });
      writeFileSync(release, "");
      expect((await holder).ok).toBe(true);
      const e = blocked.errors![0]!;
      expect(e.code).toBe("locked");
      expect(e.path).toBe("z.txt");
      expect(e.lock).toMatchObject({ kind: "path", name: lockDirName("z.txt"), operationId: "holder_op", uid: 0 });
      expect(e.lock!.pid).toBeGreaterThan(1);
      expect(e.message).toContain(`z.txt is locked by operation holder_op: process ${e.lock!.pid}`);
      expect(e.message).toContain(lockDirName("z.txt"));
      expect(e.message).not.toContain("a.txt");
      expect(read(root, "a.txt")).toBe("a1\n");
    });

    test("the lock of a path whose parent did not exist (moved/m.txt, taken in the root) is found and cleared once moved/ exists: by the next commit, and by reconcile", async () => {
      for (const settleBy of ["next commit", "reconcile"] as const) {
        const root = makeTree({ "keep.txt": "k\n" });
        const add = plan([P.add("moved/m.txt", "m1\n")]);
        // FAULT INJECTION: killed right after the add created moved/ and linked the file
        const killed = await commitRemote(new HookedShell(shell(), at("after_finalize", "0", KILL)), root, add, { operationId: "parentless" });
        expect(killed.ok).toBe(false);
        expect(existsSync(join(root, "moved/m.txt"))).toBe(true);
        const rootLock = lockDirName("moved/m.txt");
        expect(readdirSync(root)).toContain(rootLock);
        if (settleBy === "next commit") {
          const next = await commitRemote(shell(), root, plan([P.update("moved/m.txt", "m1\n", "m2\n")]), { operationId: "after_parentless", lockWaitMs: 5000 });
          expect(next.errors).toBeUndefined();
          expect(next.warnings.map((w) => w.code)).toContain("stale_lock_broken");
          expect(readdirSync(root)).not.toContain(rootLock);
        }
        const settled = await reconcile(shell(), root, reconcileTicket(add, "parentless"));
        expect(settled.ok).toBe(true);
        expect(leftovers(root)).toEqual([]);
      }
    });
  });
}
