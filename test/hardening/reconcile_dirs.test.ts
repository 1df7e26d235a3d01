/**
 * Regression: reconcile of a commit killed in step 5 must also remove the
 * parent directories that commit created for its Adds and Moves (found by
 * the random-kill campaign: ~10% of kills left an empty directory).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { commitRemote } from "../../lib/remote/commit.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import { cleanupTemps, HookedShell, makeTree, P, plan } from "../support/local_trees.ts";
import { killAfterTool, plainShell as plain } from "./tool_wrappers.ts";

afterAll(cleanupTemps, 30_000);

describe("reconcile removes the parent directories the dead commit created", () => {
  test("SIGKILL right after creating an Add's new parent directory (wrapped mkdir): reconcile removes it", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    const thePlan = plan([P.update("a.txt", "a1\n", "a2\n"), P.add("n/c.txt", "c\n")]);
    const report = await commitRemote(killAfterTool("mkdir", "./n"), root, thePlan, { operationId: "dirs_1" });
    expect(report.errors![0]!.code).toBe("outcome_unknown");
    expect(existsSync(join(root, "n"))).toBe(true);
    const after = await reconcile(plain(), root, reconcileTicket(thePlan, "dirs_1"));
    expect(after.files.map((f) => f.state)).toEqual(["not_applied", "not_applied"]);
    expect(readdirSync(root).sort()).toEqual(["a.txt"]);
  });

  test("SIGKILL after an Add and a Move into new nested directories were finalized (hook): reconcile removes every directory it made, keeps the ones that existed", async () => {
    const root = makeTree({ "a.txt": "a1\n", "m.txt": "m1\n", "keep/x.txt": "x\n" });
    const thePlan = plan([P.add("n/o/c.txt", "c\n"), P.move("m.txt", "keep/deep/er/m.txt", "m1\n", "m2\n"), P.update("a.txt", "a1\n", "a2\n")]);
    const hooked = new HookedShell(plain(), `case "$1:$2" in after_finalize:1) kill -9 $$ ;; esac`);
    const report = await commitRemote(hooked, root, thePlan, { operationId: "dirs_2" });
    expect(report.errors![0]!.code).toBe("outcome_unknown");
    expect(existsSync(join(root, "keep/deep/er/m.txt"))).toBe(true);
    const after = await reconcile(plain(), root, reconcileTicket(thePlan, "dirs_2"));
    expect(after.files.map((f) => f.state)).toEqual(["not_applied", "not_applied", "not_applied"]);
    expect(readdirSync(root).sort()).toEqual(["a.txt", "keep", "m.txt"]);
    expect(readdirSync(join(root, "keep"))).toEqual(["x.txt"]);
  });
});
