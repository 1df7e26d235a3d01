/**
 * Campaign 2, short version (`npm run hardening` runs the long one):
 * FAULT INJECTION — the commit program's process group is SIGKILLed at
 * seeded random moments (and at fixed hook points for the stale-lock
 * rules); every trial must keep every invariant of verdict.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { commitRemote } from "../../lib/remote/commit.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import { assertNoLeftovers, cleanupTemps, HookedShell, leftovers, tempDir } from "../support/local_trees.ts";
import { deltaFiles, fileStates, fourOpFixture, writeBefore } from "./fixture.ts";
import { runKillCampaign } from "./kills.ts";

afterAll(cleanupTemps, 30_000);

const local = (): LocalShell => new LocalShell({ cwd: tempDir("sap-kill-cwd-") });

describe("remote process death (SIGKILL of the commit's process group)", () => {
  test("24 kills at seeded random moments over a 4-op commit (two of its stages rebuilt from their sources: delta uploads): all-old or all-new, a truthful result, reconcile settles and cleans up", async () => {
    expect(deltaFiles(fourOpFixture())).toBe(2);
    const figures = await runKillCampaign({ trials: 24, seed: 20261130, shell: local() });
    expect(figures.violations).toEqual([]);
    expect(figures.survived).toBe(24);
    expect(figures.strayDirectoryTrials).toBe(0);
  }, 60_000);

  test("a killed commit's locks are broken by a later commit at once, whatever their age (owner gone, with a warning); reconcile then removes its stages", async () => {
    const fx = fourOpFixture();
    const root = tempDir("sap-stale-");
    writeBefore(root, fx);
    // FAULT INJECTION: the whole group dies right after the path checks (locks held, stages made)
    const killed = new HookedShell(local(), `case "$1:$2" in checked:) kill -9 0 ;; esac`);
    const dead = await commitRemote(killed, root, fx.plan, { operationId: "dead_op" });
    expect(dead.errors![0]!.code).toBe("remote_error"); // died before step 5: nothing changed
    const locks = readdirSync(root).filter((n) => /^\.sap-lock-[0-9a-f]{16}$/.test(n));
    expect(locks.length).toBeGreaterThan(0);
    expect(leftovers(root).some((p) => p.includes(".sap-dead_op-"))).toBe(true);
    // their owner is gone: judged by its record, not by their age (made new here)
    const now = Date.now() / 1000 + 3600;
    for (const l of leftovers(root).filter((p) => /\.sap-lock-[0-9a-f]{16}$/.test(p))) utimesSync(l, now, now);

    const later = await commitRemote(local(), root, fx.plan, { operationId: "later_op", lockWaitMs: 2000 });
    expect(later.errors).toBeUndefined();
    expect(later.warnings.filter((w) => w.code === "stale_lock_broken").length).toBeGreaterThan(0);
    expect(fileStates(root, fx)).toEqual(["new", "new", "new", "new"]);
    expect(leftovers(root).some((p) => p.includes(".sap-dead_op-"))).toBe(true); // stages wait for reconcile

    const settled = await reconcile(local(), root, reconcileTicket(fx.plan, "dead_op"));
    expect(settled.ok).toBe(true);
    expect(settled.files.map((f) => f.state)).toEqual(["applied", "applied", "applied", "applied"]); // the later commit's result
    assertNoLeftovers(root);
    expect(readdirSync(join(root))).not.toContain(".sap-dead_op.journal");
  });
});
