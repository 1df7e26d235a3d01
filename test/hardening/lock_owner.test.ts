/**
 * Regression: a commit killed while taking a lock must not leave a lock
 * nobody can attribute (found by the random-kill campaign: ~5% of kills
 * left an ownerless lock that made reconcile report `locked`). A commit's
 * locks are built ahead as `k/<lock name>` in its private directory (one
 * `mkdir ./k ./u ./k/.sap-lock-…`, owners written after it) and renamed
 * onto their names (`mv -f ./k/.sap-lock-… ..`; one by one, `mv -fT`).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { commitRemote } from "../../lib/remote/commit.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import { assertNoLeftovers, cleanupTemps, leftovers, makeTree, P, plan } from "../support/local_trees.ts";
import { killAfterTool, plainShell as plain } from "./tool_wrappers.ts";

afterAll(cleanupTemps, 30_000);

describe("locks are never visible without their owner", () => {
  test("SIGKILL right after the mkdir of the lock directories built ahead (wrapped mkdir): reconcile settles at once and leaves nothing", async () => {
    const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
    const thePlan = plan([P.update("a.txt", "a1\n", "a2\n"), P.update("b.txt", "b1\n", "b2\n")]);
    const report = await commitRemote(killAfterTool("mkdir", "*./k/.sap-lock-*"), root, thePlan, { operationId: "own_1" });
    expect(report.ok).toBe(false);
    // Before the fix the lock directory existed without its owner file, so
    // not even this operation's reconcile could claim it: `locked` until
    // the stale-lock age (120 s by default).
    const after = await reconcile(plain(), root, reconcileTicket(thePlan, "own_1"), { lockWaitMs: 1000 });
    expect(after.errors).toBeUndefined();
    expect(after.files.map((f) => f.state)).toEqual(["not_applied", "not_applied"]);
    assertNoLeftovers(root);
  });

  test("SIGKILL right after the lock is renamed into place (wrapped mv): reconcile adopts it and leaves nothing", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    const thePlan = plan([P.update("a.txt", "a1\n", "a2\n")]);
    await commitRemote(killAfterTool("mv", "*.sap-lock-[0-9a-f]*"), root, thePlan, { operationId: "own_2" });
    expect(leftovers(root).some((p) => /\.sap-lock-(op-own_2|[0-9a-f]{16})$/.test(p))).toBe(true); // a complete lock, with its owner
    const after = await reconcile(plain(), root, reconcileTicket(thePlan, "own_2"), { lockWaitMs: 1000 });
    expect(after.files.map((f) => f.state)).toEqual(["not_applied"]);
    assertNoLeftovers(root);
  });

  test("another operation's commit is not blocked by a lock whose builder was killed (wrapped mkdir)", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    await commitRemote(killAfterTool("mkdir", "*./k/.sap-lock-*"), root, plan([P.update("a.txt", "a1\n", "a2\n")]), { operationId: "own_3" });
    const next = await commitRemote(plain(), root, plan([P.update("a.txt", "a1\n", "a3\n")]), { lockWaitMs: 1000 });
    expect(next.errors).toBeUndefined();
    expect(next.ok).toBe(true);
  });
});
