/**
 * Contract: locks — bounded wait, stale-lock breaking, and two multi-file
 * commits touching the same files in opposite orders, concurrently (two
 * separate adapters: for SSH two connections), for every shell under test.
 * The concurrency test runs on HEAVY_SHELLS only (runtime budget, see
 * test/support/shells_under_test.ts). Round counts come from
 * SAP_CONCURRENCY_ROUNDS (default 4 per shell; the hardening campaign
 * raises it).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { commitRemote } from "../../lib/remote/commit.ts";
import { lockDirName } from "../../lib/remote/manifest.ts";
import type { CommitReport } from "../../lib/types.ts";
import { assertNoLeftovers, cleanupTemps, makeTree, noLeftoversAfterEach, P, plan, writeTree } from "../support/local_trees.ts";
import { HEAVY_SHELLS, shellsUnderTest } from "../support/shells_under_test.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();
const shells = shellsUnderTest({ suite: "contract: locks" });
const heavy = new Set(HEAVY_SHELLS);
const ROUNDS = Number(process.env.SAP_CONCURRENCY_ROUNDS ?? 4);
const read = (root: string, path: string): string => readFileSync(join(root, path), "utf8");

/** A lock as another operation would have left it. */
function plantLock(dir: string, suffix: string, owner: string, ageSeconds: number): string {
  const lock = join(dir, lockDirName(suffix));
  mkdirSync(lock);
  writeFileSync(join(lock, "owner"), owner + "\n");
  const when = Date.now() / 1000 - ageSeconds;
  utimesSync(lock, when, when);
  return lock;
}

/** A pid that no process has (checked). */
function deadPid(): number {
  for (let pid = 4_000_000; ; pid--) {
    try {
      process.kill(pid, 0);
    } catch {
      return pid;
    }
  }
}

for (const c of shells) {
  describe(`locks (${c.name})`, () => {
    test("a lock held by a live operation → locked after the bounded wait, nothing written", async () => {
      const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
      const lock = plantLock(root, "b.txt", `${process.pid} ${hostname()} ${Math.floor(Date.now() / 1000)} other_op`, 0);
      const started = Date.now();
      const report = await commitRemote(await c.open(), root, plan([P.update("a.txt", "a1\n", "a2\n"), P.update("b.txt", "b1\n", "b2\n")]), { lockWaitMs: 400 });
      expect(Date.now() - started).toBeLessThan(3000);
      expect(report.ok).toBe(false);
      expect(report.errors![0]).toMatchObject({ code: "locked", path: "b.txt", retryable: true });
      expect([read(root, "a.txt"), read(root, "b.txt")]).toEqual(["a1\n", "b1\n"]);
      expect(existsSync(lock)).toBe(true); // someone else's lock is never removed
      expect(read(lock, "owner")).toContain("other_op");
      rmSync(lock, { recursive: true });
      assertNoLeftovers(root); // and nothing of ours is left behind
    });

    test("an old lock whose owner process is alive is not broken", async () => {
      const root = makeTree({ "a.txt": "a1\n" });
      const lock = plantLock(root, "a.txt", `${process.pid} ${hostname()} 0 long_op`, 3600);
      const report = await commitRemote(await c.open(), root, plan([P.update("a.txt", "a1\n", "a2\n")]), { lockWaitMs: 300, staleLockMs: 1000 });
      expect(report.errors![0]!.code).toBe("locked");
      expect(existsSync(lock)).toBe(true);
      rmSync(lock, { recursive: true });
      assertNoLeftovers(root);
    });

    test("a stale lock (old, owner gone) is broken with a warning and the commit proceeds", async () => {
      const root = makeTree({ "sub/a.txt": "a1\n" });
      plantLock(join(root, "sub"), "a.txt", `${deadPid()} ${hostname()} 0 crashed_op`, 600);
      const report = await commitRemote(await c.open(), root, plan([P.update("sub/a.txt", "a1\n", "a2\n")]), { staleLockMs: 120_000 });
      expect(report.errors).toBeUndefined();
      expect(report.warnings.map((w) => [w.code, w.path])).toEqual([["stale_lock_broken", "sub/a.txt"]]);
      expect(report.warnings[0]!.message).toMatch(/\d+ s old/);
      expect(read(root, "sub/a.txt")).toBe("a2\n");
      assertNoLeftovers(root);
    });

    test("a stale lock of a path whose parent is missing lives in the deepest existing ancestor", async () => {
      const root = makeTree({ "keep.txt": "k" });
      plantLock(root, "new/dir/f.txt", `${deadPid()} elsewhere 0 crashed_op`, 600);
      const report = await commitRemote(await c.open(), root, plan([P.add("new/dir/f.txt", "f\n")]));
      expect(report.ok).toBe(true);
      expect(report.warnings.map((w) => w.code)).toEqual(["stale_lock_broken"]);
      assertNoLeftovers(root);
    });

    if (heavy.has(c.name)) test(`two multi-file commits in opposite orders, concurrently (two adapters), ${ROUNDS} rounds: no deadlock, one applies, the other conflicts`, async () => {
      const root = makeTree({});
      const [first, second] = [await c.openNew(), await c.openNew()];
      const names = ["f1.txt", "d/f2.txt", "f3.txt"];
      for (let round = 0; round < ROUNDS; round++) {
        writeTree(root, Object.fromEntries(names.map((n) => [n, `base ${round}\n`])));
        const forward = plan(names.map((n) => P.update(n, `base ${round}\n`, `A ${round}\n`)));
        const backward = plan([...names].reverse().map((n) => P.update(n, `base ${round}\n`, `B ${round}\n`)));
        const reports: CommitReport[] = await Promise.all([
          commitRemote(first, root, forward, { lockWaitMs: 15_000 }),
          commitRemote(second, root, backward, { lockWaitMs: 15_000 }),
        ]);
        const applied = reports.filter((r) => r.ok);
        expect(applied).toHaveLength(1);
        const loser = reports.find((r) => !r.ok)!;
        expect(loser.errors!.every((e) => e.code === "conflict" || e.code === "locked")).toBe(true);
        expect(reports.every((r) => r.elevated === c.expectElevated)).toBe(true);
        const winner = reports[0]!.ok ? "A" : "B";
        for (const n of names) expect(read(root, n)).toBe(`${winner} ${round}\n`);
        assertNoLeftovers(root);
      }
    }, 60_000);
  });
}
