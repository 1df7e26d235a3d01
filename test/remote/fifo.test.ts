/**
 * No remote program waits on anything another user controls (SPEC §7
 * round 2, issue 13 item 5): FIFOs planted by another uid in a shared
 * directory (accepted with `sharedDirectories: "allow"`) — at the patched
 * file's name, at its lock's name, swapped in for the file between the
 * read and the commit (FAULT INJECTION at the `locked` hook) — must end in
 * a true report within a second or two, never in a program blocked in
 * open(2). Under every local shell, as root (the strongest user the
 * programs run as) and with each program's own timeout well above what
 * the test allows.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { commitRemote } from "../../lib/remote/commit.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { lockDirName } from "../../lib/remote/manifest.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { cleanupTemps, HookedShell, leftovers, makeTree, P, plan, rootTest, shellCases, tempDir } from "../support/local_trees.ts";
import { ensureTestUsers } from "../support/sshd.ts";

afterAll(cleanupTemps, 30_000);

const idOf = (flag: string, user: string): number => Number(Bun.spawnSync(["id", flag, user]).stdout.toString().trim());
/** mkfifo as another user (the attacker), in a directory they may write. */
const plantFifo = (path: string): void => {
  const { passwordUser } = ensureTestUsers();
  const uid = idOf("-u", passwordUser);
  const run = Bun.spawnSync(["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "mkfifo", path]);
  if (run.exitCode !== 0) throw new Error(`mkfifo ${path}: ${run.stderr.toString()}`);
};
const quick = async <T>(work: Promise<T>): Promise<T> => {
  const started = performance.now();
  const value = await work;
  expect(performance.now() - started).toBeLessThan(5000);
  return value;
};

for (const c of shellCases()) {
  describe(`FIFOs planted by another user (${c.name})`, () => {
    const shell = (): LocalShell => new LocalShell({ ...c.options, cwd: tempDir("sap-cwd-") });
    /** root/s, world-writable and sticky, with f.txt. */
    const sharedTree = (): string => {
      const root = makeTree({ "keep.txt": "k\n" });
      chmodSync(root, 0o755);
      mkdirSync(join(root, "s"));
      chmodSync(join(root, "s"), 0o1777);
      writeFileSync(join(root, "s/f.txt"), "v1\n");
      return root;
    };
    const allow = { sharedDirectories: "allow" as const, timeoutMs: 60_000 };

    rootTest("a FIFO at the file's name: read as `other`, the patch refused at once", async () => {
      const root = sharedTree();
      plantFifo(join(root, "s/p.txt"));
      const snaps = await quick(readSnapshots(shell(), root, ["s/p.txt"], allow));
      expect(snaps.get("s/p.txt")!.kind).toBe("other");
      const report = await quick(applyPatch(shell(), { root, patch: "*** Begin Patch\n*** Update File: s/p.txt\n@@\n-a\n+b\n*** End Patch\n", ...allow }));
      expect(report.errors![0]!.code).toBe("not_regular_file");
    });

    rootTest("a FIFO at the lock's name: no lock, cleared at once; the commit goes through", async () => {
      const root = sharedTree();
      plantFifo(join(root, "s", lockDirName("f.txt")));
      const report = await quick(commitRemote(shell(), root, plan([P.update("s/f.txt", "v1\n", "v2\n")]), allow));
      expect(report.errors).toBeUndefined();
      expect(leftovers(root)).toEqual([]);
    });

    rootTest("the file swapped for a FIFO after the read (FAULT INJECTION, under the locks): conflict at once, nothing written", async () => {
      const root = sharedTree();
      const f = join(root, "s/f.txt");
      const swap = new HookedShell(shell(), `case "$1" in locked) rm -f '${f}'; setpriv --reuid=${idOf("-u", ensureTestUsers().passwordUser)} --regid=${idOf("-u", ensureTestUsers().passwordUser)} --clear-groups mkfifo '${f}' ;; esac`);
      const thePlan = plan([P.update("s/f.txt", "v1\n", "v2\n")]);
      const report = await quick(commitRemote(swap, root, thePlan, { ...allow, operationId: "fifo_swap" }));
      expect(report.errors![0]!.code).toBe("conflict");
      const settled = await quick(reconcile(shell(), root, reconcileTicket(thePlan, "fifo_swap"), allow));
      expect(settled.ok).toBe(true);
      expect(leftovers(root)).toEqual([]);
    });

    test("a FIFO inside the root where the programs look for their own leftovers (.sap-<op>-*) is never opened", async () => {
      const root = makeTree({ "a.txt": "a1\n" });
      // as root here (the test's own tree): a name of the operation's reserved form
      Bun.spawnSync(["mkfifo", join(root, ".sap-fifo_op-XXXXXX")]);
      const thePlan = plan([P.update("a.txt", "a1\n", "a2\n")]);
      const report = await quick(commitRemote(shell(), root, thePlan, { operationId: "fifo_op" }));
      expect(report.errors).toBeUndefined();
      const settled = await quick(reconcile(shell(), root, reconcileTicket(thePlan, "fifo_op")));
      expect(settled.ok).toBe(true);
    });
  });
}
