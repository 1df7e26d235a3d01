/**
 * Regression: reconcile must never settle an operation whose commit is
 * still running but has not taken its path locks yet (after a dropped
 * connection the remote program goes on). Found by reviewing the cut
 * campaign's orphans: a commit with content fails cleanly when reconcile
 * removes its stages, but a delete-only commit has nothing to remove —
 * reconcile reported `not_applied`, then the commit deleted the file.
 *
 * FAULT INJECTION: a hook pauses the commit right after staging (before
 * its locks) until the test releases it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitRemote } from "../../lib/remote/commit.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import { shQuote } from "../../lib/remote/shell.ts";
import { assertNoLeftovers, cleanupTemps, HookedShell, makeTree, P, plan, tempDir } from "../support/local_trees.ts";
import { plainShell } from "./tool_wrappers.ts";

afterAll(cleanupTemps, 30_000);

async function waitFor(path: string): Promise<void> {
  for (let i = 0; i < 500 && !existsSync(path); i++) await Bun.sleep(10);
  if (!existsSync(path)) throw new Error(`timed out waiting for ${path}`);
}

describe("reconcile and a commit of the same operation that is still starting", () => {
  for (const kind of ["delete-only", "with content"] as const) {
    test(`${kind}: reconcile waits (locked) instead of settling; once the commit ends it reports the truth`, async () => {
      const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
      const signals = tempDir("sap-signals-");
      const reached = join(signals, "reached");
      const release = join(signals, "go");
      const thePlan = kind === "delete-only" ? plan([P.delete("b.txt", "b1\n")]) : plan([P.update("a.txt", "a1\n", "a2\n"), P.delete("b.txt", "b1\n")]);
      const hook = `case "$1" in staged) : > ${shQuote(reached)}; w=0; while [ ! -e ${shQuote(release)} ] && [ $w -lt 300 ]; do sleep 0.05; w=$((w + 1)); done ;; esac`;
      const running = commitRemote(new HookedShell(plainShell(), hook), root, thePlan, { operationId: "race_op" });
      await waitFor(reached);
      const early = await reconcile(plainShell(), root, reconcileTicket(thePlan, "race_op"), { lockWaitMs: 300 });
      expect(early.ok).toBe(false);
      expect(early.errors![0]!.code).toBe("locked");
      writeFileSync(release, "");
      const report = await running;
      expect(report.errors).toBeUndefined();
      const later = await reconcile(plainShell(), root, reconcileTicket(thePlan, "race_op"));
      expect(later.files.every((f) => f.state === "applied")).toBe(true);
      expect(existsSync(join(root, "b.txt"))).toBe(false);
      assertNoLeftovers(root);
    }, 20_000);
  }
});
