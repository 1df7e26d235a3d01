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
import { deadPid, deadRecord, ownerRecord, plantLock } from "../support/lock_records.ts";
import { HEAVY_SHELLS, shellsUnderTest } from "../support/shells_under_test.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();
const shells = shellsUnderTest({ suite: "contract: locks" });
const heavy = new Set(HEAVY_SHELLS);
const ROUNDS = Number(process.env.SAP_CONCURRENCY_ROUNDS ?? 4);
const read = (root: string, path: string): string => readFileSync(join(root, path), "utf8");

/** A lock of an older version: an `owner` file (`pid host epoch op`) instead of a record. */
function plantLegacyLock(dir: string, suffix: string, owner: string, ageSeconds: number): string {
  const lock = join(dir, lockDirName(suffix));
  mkdirSync(lock);
  writeFileSync(join(lock, "owner"), owner + "\n");
  const when = Date.now() / 1000 - ageSeconds;
  utimesSync(lock, when, when);
  return lock;
}

for (const c of shells) {
  describe(`locks (${c.name})`, () => {
    test("a lock held by a live operation → locked after the bounded wait, nothing written", async () => {
      const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
      const lock = plantLock(root, "b.txt", ownerRecord(), "other_op");
      const started = Date.now();
      const report = await commitRemote(await c.open(), root, plan([P.update("a.txt", "a1\n", "a2\n"), P.update("b.txt", "b1\n", "b2\n")]), { lockWaitMs: 400 });
      expect(Date.now() - started).toBeLessThan(3000);
      expect(report.ok).toBe(false);
      expect(report.errors![0]).toMatchObject({ code: "locked", path: "b.txt", retryable: true });
      expect(report.errors![0]!.lock).toMatchObject({ operationId: "other_op", pid: process.pid });
      expect([read(root, "a.txt"), read(root, "b.txt")]).toEqual(["a1\n", "b1\n"]);
      expect(existsSync(lock)).toBe(true); // someone else's lock is never removed
      rmSync(lock, { recursive: true });
      assertNoLeftovers(root); // and nothing of ours is left behind
    });

    // Whose it is, never how old (issue 28 item 0): a day-old lock of a live
    // process, one whose pid lives but started at another time (reused), one
    // of another pid namespace or another machine, a dead one made "now".
    const cases: { name: string; record: () => string; age: number; broken: boolean }[] = [
      { name: "a day-old lock of a live process is not broken", record: () => ownerRecord(), age: 86_400, broken: false },
      { name: "a lock whose pid now belongs to another process (other start time) is broken at once", record: () => ownerRecord(process.pid, { start: "7" }), age: 0, broken: true },
      { name: "a lock of a process gone (same boot, same namespace) is broken at once, although it is new", record: () => deadRecord(), age: -3600, broken: true },
      { name: "a lock of another pid namespace (a container) is never broken", record: () => ownerRecord(deadPid(), { ns: "4026531999" }), age: 86_400, broken: false },
      { name: "a lock of another machine (other boot id and machine id) is never broken", record: () => ownerRecord(deadPid(), { boot: "00000000-0000-4000-8000-000000000000", machine: "0123456789abcdef0123456789abcdef" }), age: 86_400, broken: false },
      { name: "a lock of an earlier boot of this machine (other boot id, same machine id) is broken", record: () => ownerRecord(deadPid(), { boot: "00000000-0000-4000-8000-000000000000" }), age: 0, broken: true },
    ];
    for (const t of cases) {
      test(t.name, async () => {
        const root = makeTree({ "a.txt": "a1\n" });
        const lock = plantLock(root, "a.txt", t.record(), "long_op", t.age);
        const report = await commitRemote(await c.open(), root, plan([P.update("a.txt", "a1\n", "a2\n")]), { lockWaitMs: 300 });
        if (t.broken) {
          expect(report.errors).toBeUndefined();
          expect(report.warnings.map((w) => [w.code, w.path])).toEqual([["stale_lock_broken", "a.txt"]]);
          expect(read(root, "a.txt")).toBe("a2\n");
        } else {
          expect(report.errors![0]!.code).toBe("locked");
          expect(existsSync(lock)).toBe(true);
          expect(read(root, "a.txt")).toBe("a1\n");
          rmSync(lock, { recursive: true });
        }
        assertNoLeftovers(root);
      });
    }

    test("a stale lock (owner gone) is broken with a warning naming its age, and the commit proceeds", async () => {
      const root = makeTree({ "sub/a.txt": "a1\n" });
      plantLock(join(root, "sub"), "a.txt", deadRecord(), "crashed_op", 600);
      const report = await commitRemote(await c.open(), root, plan([P.update("sub/a.txt", "a1\n", "a2\n")]));
      expect(report.errors).toBeUndefined();
      expect(report.warnings.map((w) => [w.code, w.path])).toEqual([["stale_lock_broken", "sub/a.txt"]]);
      expect(report.warnings[0]!.message).toMatch(/\d+ s old/);
      expect(read(root, "sub/a.txt")).toBe("a2\n");
      assertNoLeftovers(root);
    });

    test("an older version's lock (owner file): a dead owner's is broken at once, a live one's is waited for", async () => {
      const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
      plantLegacyLock(root, "a.txt", `${deadPid()} ${hostname()} 0 old_op`, 0);
      const live = plantLegacyLock(root, "b.txt", `${process.pid} ${hostname()} 0 old_live`, 86_400);
      const first = await commitRemote(await c.open(), root, plan([P.update("a.txt", "a1\n", "a2\n")]));
      expect(first.errors).toBeUndefined();
      expect(first.warnings.map((w) => w.code)).toEqual(["stale_lock_broken"]);
      const second = await commitRemote(await c.open(), root, plan([P.update("b.txt", "b1\n", "b2\n")]), { lockWaitMs: 300 });
      expect(second.errors![0]!.code).toBe("locked");
      rmSync(live, { recursive: true });
      assertNoLeftovers(root);
    });

    test("a stale lock of a path whose parent is missing lives in the deepest existing ancestor", async () => {
      const root = makeTree({ "keep.txt": "k" });
      plantLock(root, "new/dir/f.txt", deadRecord(), "crashed_op", 600);
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
