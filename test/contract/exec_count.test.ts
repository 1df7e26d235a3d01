/**
 * Contract: one exec for all snapshots of a patch and one for the whole
 * commit (SPEC §7), for 1 and for 20 files, on every shell under test —
 * counted at the RemoteShell interface (a counting adapter around the real
 * one) and, over SSH, also at the server (exec requests in the sshd log),
 * so no hidden round trip below the adapter goes unnoticed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { commitRemote } from "../../lib/remote/commit.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { cleanupTemps, CountingShell, makeTree, noLeftoversAfterEach, P, plan } from "../support/local_trees.ts";
import { shellsUnderTest } from "../support/shells_under_test.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();
const shells = shellsUnderTest({ suite: "contract: exec count" });

for (const c of shells) {
  describe(`one exec per operation (${c.name})`, () => {
    for (const n of [1, 20]) {
      test(`${n} file(s): one exec for the snapshots, one for the commit${c.serverExecs ? " (also counted at the sshd)" : ""}`, async () => {
        const names = Array.from({ length: n }, (_, i) => `dir${i % 3}/file ${i}.txt`);
        const root = makeTree(Object.fromEntries(names.map((p) => [p, `v1 ${p}\n`])));
        const inner = await c.open();
        await inner.exec("true"); // a live connection (and sudo validated) before counting
        const serverBefore = await c.serverExecs?.();
        const shell = new CountingShell(inner);
        const snaps = await readSnapshots(shell, root, [...names, "missing/new.txt"]);
        expect(shell.count).toBe(1);
        expect(snaps.size).toBe(n + 1);
        const report = await commitRemote(shell, root, plan([
          ...names.map((p) => P.update(p, snaps.get(p)!.bytes!, `v2 ${p}\n`)),
          P.add("missing/new.txt", "new\n"),
        ]));
        expect(report.errors).toBeUndefined();
        expect(shell.count).toBe(2);
        if (serverBefore !== undefined) expect((await c.serverExecs!()) - serverBefore).toBe(2);
        for (const p of names) expect(readFileSync(join(root, p), "utf8")).toBe(`v2 ${p}\n`);
      });
    }
  });
}
