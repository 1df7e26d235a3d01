/**
 * Campaign 3, short version (`npm run hardening` runs 50 and 100 rounds):
 * concurrent applyPatch callers of this protocol never lose an update and
 * never deadlock (bounded by the test timeout, not by a timed assertion).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { cleanupTemps, tempDir } from "../support/local_trees.ts";
import { runOppositeOrders, runSharedFileEditors } from "./concurrency.ts";

afterAll(cleanupTemps, 30_000);

const local = (): LocalShell => new LocalShell({ cwd: tempDir("sap-conc-cwd-") });

describe("concurrency", () => {
  test("8 concurrent callers edit disjoint sections of one file, retrying on conflict/locked, 2 rounds: every edit present", async () => {
    const f = await runSharedFileEditors({ callers: 8, rounds: 2, seed: 31, shell: local() });
    expect(f.violations).toEqual([]);
    expect(f.lostUpdates).toBe(0);
    expect(f.cleanRounds).toBe(2);
    expect(f.conflicts).toBeGreaterThan(0); // they really raced
  }, 60_000);

  test("two multi-file patches in opposite file orders, 6 rounds: both applied every round, no deadlock", async () => {
    const f = await runOppositeOrders({ rounds: 6, seed: 32, shell: local() });
    expect(f.violations).toEqual([]);
    expect(f.cleanRounds).toBe(6);
  }, 60_000);
});
