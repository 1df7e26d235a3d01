/**
 * Contract: `RemoteShellError.started` over the real SSH transport — a
 * failure before the commit program started is reported as that failure
 * (nothing ran: the sshd saw no exec), one after it started is
 * `outcome_unknown`. The fault-injected and LocalShell side is in
 * test/remote/started.test.ts; a commit killed by timeout after it started
 * (→ outcome_unknown) runs on every shell in test/contract/faults.test.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { commitRemote } from "../../lib/remote/commit.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { RemoteShellError } from "../../lib/remote/shell.ts";
import { cleanupTemps, makeTree, noLeftoversAfterEach, P, plan, tempDir } from "../support/local_trees.ts";
import { shellsUnderTest } from "../support/shells_under_test.ts";
import { read } from "./helpers.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();
const sshShells = shellsUnderTest({ suite: "contract: started" }).filter((c) => c.transport === "ssh");

for (const c of sshShells) {
  describe(`not started vs started over SSH (${c.name})`, () => {
    test("a program too long to send (a 140 KB root) → limit_exceeded, not outcome_unknown: the sshd saw no exec", async () => {
      const shell = await c.open();
      await shell.exec("true");
      const before = await c.serverExecs!();
      const deep = join(tempDir(), "d".repeat(200));
      mkdirSync(deep);
      const root = deep + "/x".repeat(70 * 1024);
      const report = await commitRemote(shell, root, plan([P.add("a.txt", "a\n")]), { operationId: "too_long" });
      expect(report.errors).toHaveLength(1);
      expect(report.errors![0]).toMatchObject({ code: "limit_exceeded", operationId: "too_long" });
      expect(report.errors![0]!.message).toContain("Nothing ran");
      const snapshot = await readSnapshots(shell, root, ["a.txt"]).catch((e) => e);
      expect(snapshot).toBeInstanceOf(RemoteShellError);
      expect([snapshot.failure.code, snapshot.started]).toEqual(["limit_exceeded", false]);
      const settled = await reconcile(shell, root, reconcileTicket(plan([P.add("a.txt", "a\n")]), "too_long"));
      expect(settled.errors![0]!.message).toContain("reconcile did not run");
      expect((await c.serverExecs!()) - before).toBe(0);
    });

    test("the adapter's own flags: cancelled before the start → started false; timeout after the start → started true; closed → started false", async () => {
      const shell = await c.open();
      const early = await shell.exec("true", { signal: AbortSignal.abort() }).catch((e) => e);
      expect([early.failure.code, early.started]).toEqual(["cancelled", false]);
      const late = await shell.exec("sleep 5", { timeoutMs: 300 }).catch((e) => e);
      expect([late.failure.code, late.started]).toEqual(["timeout", true]);
      const extra = await c.openNew();
      await extra.close?.();
      const closed = await extra.exec("true").catch((e) => e);
      expect([closed.failure.code, closed.started]).toEqual(["connect_failed", false]);
    }, 15_000);

    test("a timeout while reconnecting after a TCP cut → timeout \"nothing ran\", not outcome_unknown; file untouched; the next call works", async () => {
      const root = makeTree({ "a.txt": "a1\n" });
      const shell = await c.open();
      await shell.exec("true");
      c.cut!();
      await Bun.sleep(100); // let the client see the drop: the next call must reconnect
      const thePlan = plan([P.update("a.txt", "a1\n", "a2\n")]);
      // 1 ms is far less than an SSH handshake: the commit cannot be sent in time.
      const report = await commitRemote(shell, root, thePlan, { operationId: "slow_link", timeoutMs: 1 });
      expect(report.errors).toHaveLength(1);
      expect(report.errors![0]).toMatchObject({ code: "timeout", operationId: "slow_link" });
      expect(report.errors![0]!.message).toContain("nothing ran");
      expect(read(root, "a.txt")).toBe("a1\n");
      const retried = await commitRemote(shell, root, thePlan, { operationId: "slow_link" });
      expect(retried).toMatchObject({ ok: true, elevated: c.expectElevated });
      expect(read(root, "a.txt")).toBe("a2\n");
    }, 15_000);
  });
}
