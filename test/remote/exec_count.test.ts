import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { commitRemote } from "../../lib/commit.ts";
import { readSnapshots } from "../../lib/snapshot.ts";
import { assertNoLeftovers, cleanupTemps, CountingShell, localShell, makeTree, P, plan, shellCases } from "../support/local_trees.ts";

afterAll(cleanupTemps);

for (const c of shellCases()) {
  describe(`one exec per operation (${c.name})`, () => {
    for (const n of [1, 20]) {
      test(`${n} file(s): one exec for the snapshots, one for the commit`, async () => {
        const names = Array.from({ length: n }, (_, i) => `dir${i % 3}/file ${i}.txt`);
        const root = makeTree(Object.fromEntries(names.map((p) => [p, `v1 ${p}\n`])));
        const shell = new CountingShell(localShell(c));
        const snaps = await readSnapshots(shell, root, [...names, "missing/new.txt"]);
        expect(shell.count).toBe(1);
        expect(snaps.size).toBe(n + 1);
        const report = await commitRemote(shell, root, plan([
          ...names.map((p) => P.update(p, snaps.get(p)!.bytes!, `v2 ${p}\n`)),
          P.add("missing/new.txt", "new\n"),
        ]));
        expect(report.errors).toBeUndefined();
        expect(shell.count).toBe(2);
        for (const p of names) expect(readFileSync(join(root, p), "utf8")).toBe(`v2 ${p}\n`);
        assertNoLeftovers(root);
      });
    }
  });
}
