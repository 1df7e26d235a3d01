/**
 * Transport faults of a LocalShell-backed adapter that only a wrapper can
 * produce: a channel that ends without an exit status (fault-injected
 * adapter dropping the result). The hook-point faults, timeouts, reconcile
 * and real TCP cuts run on every shell in test/contract/faults.test.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import { commitRemote } from "../../lib/remote/commit.ts";
import type { ExecOptions, RemoteShell } from "../../lib/remote/shell.ts";
import { cleanupTemps, localShell, makeTree, noLeftoversAfterEach, P, plan, shellCases } from "../support/local_trees.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();

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
    expect(report.errors![0]).toMatchObject({ code: "outcome_unknown", operationId: "dropped_1" });
    expect(report.errors![0]!.message).toContain("connection closed");
    const after = await reconcile(inner, root, reconcileTicket(thePlan, "dropped_1"));
    expect(after.files[0]!.state).toBe("applied");
  });
});
