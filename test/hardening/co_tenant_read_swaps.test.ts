/**
 * Read programs clean up on every exit path (issue 26 item 6). The other
 * user (a real second uid) swaps every `.sap-*` entry of a shared
 * directory out to another name and back, in a loop, while snapshots and
 * searches run there (sharedDirectories: "allow"): their private
 * directories (`.sap-snap.-*`, `.sap-srch.-*`, holding hard links of the
 * files read) are renamed under them at any instant — between `mktemp`
 * and their id, while they pin, while they are emptied. A program that
 * finds its private directory gone looks for it among the directory's
 * entries (proved its own by the id with the run's secret, or by its
 * inode once emptied); one moved out of its reach is reported
 * (`cleanup_incomplete`) and removed by the next read there
 * (`leftovers_removed`: an id'd one once its program is gone, an empty one
 * after 2 s). After the loop and one more read, nothing is left: no
 * `.sap-*` name anywhere in the tree. No program is killed. Under dash,
 * bash and BusyBox (with a BusyBox userland), as root. `SAP_READ_SWAP_ROUNDS`
 * sets the number of rounds (a snapshot and a search each; default 15).
 */
import { afterAll, describe, expect } from "bun:test";
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { searchFiles } from "../../lib/remote/search_files.ts";
import { RemoteShellError, shQuote } from "../../lib/remote/shell.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import type { Warning } from "../../lib/types.ts";
import { cleanupTemps, rootTest, shellCases, tempDir } from "../support/local_trees.ts";
import { attackerPrefix, coTenantTree, digestChanges, treeDigest } from "./co_tenant_fixture.ts";

afterAll(cleanupTemps, 30_000);

const q = shQuote;
const ROUNDS = Number(process.env.SAP_READ_SWAP_ROUNDS ?? 15);
const ALLOW = { sharedDirectories: "allow" as const, timeoutMs: 30_000 };

/** Every `.sap-*` name below `dir`, any depth, any kind. */
function sapNames(dir: string): string[] {
  const r = Bun.spawnSync(["find", dir, "-name", ".sap-*"]);
  return r.stdout.toString().split("\n").filter((l) => l !== "");
}

describe("read programs under a directory-swap loop of another user", () => {
  for (const c of shellCases().filter((s) => ["dash", "bash", "busybox"].includes(s.name))) {
    rootTest(`${c.name}: ${ROUNDS} snapshots and searches leave no private directory behind (reported while out of reach, removed by the next read)`, async () => {
      const t = coTenantTree({ files: { "a.txt": "needle a\n", "b.txt": "needle b\n" } });
      const outside = treeDigest(t.outside);
      const stop = join(t.base, "stop");
      const stopped = join(t.work, "stopped");
      // mv -T: a rename onto the name, never into a directory there
      const loop = `cd ${q(t.work)} || exit 1
while [ ! -e ${q(stop)} ]; do
  for d in .sap-*; do [ -d "$d" ] || continue; mv -T "$d" ./x 2>/dev/null && mv -T ./x "$d" 2>/dev/null; done
done
: > ${q(stopped)}`;
      const attacker = spawn(attackerPrefix(t)[0]!, [...attackerPrefix(t).slice(1), "/bin/sh", "-c", loop], { stdio: "ignore" });
      const shell = new LocalShell({ ...c.options, cwd: tempDir("sap-cwd-") });
      const warnings: Warning[] = [];
      let reads = 0;
      try {
        for (let i = 0; i < ROUNDS; i++) {
          try {
            const snaps = await readSnapshots(shell, t.root, ["shared/a.txt", "shared/b.txt"], ALLOW);
            for (const s of snaps.values()) warnings.push(...(s.warnings ?? []));
            reads++;
          } catch (error) {
            // a swap the program saw in its own output's terms: a retryable read failure, nothing else
            expect(error).toBeInstanceOf(RemoteShellError);
            expect((error as RemoteShellError).failure.retryable).toBe(true);
          }
          const found = await searchFiles(shell, t.root, "needle", ALLOW);
          warnings.push(...(found.warnings ?? []));
        }
      } finally {
        writeFileSync(stop, "");
        const deadline = Date.now() + 10_000;
        while (!existsSync(stopped) && Date.now() < deadline) await Bun.sleep(20);
        attacker.kill("SIGKILL");
      }
      expect(existsSync(join(t.work, "x"))).toBe(false);
      expect(reads).toBeGreaterThan(0);
      for (const w of warnings) expect(["cleanup_incomplete", "leftovers_removed"]).toContain(w.code);
      // what the loop kept out of reach is reaped by the next read there (an empty one 2 s on)
      await Bun.sleep(2_500);
      await readSnapshots(shell, t.root, ["shared/a.txt"], ALLOW);
      await searchFiles(shell, t.root, "needle", ALLOW);
      expect(sapNames(t.base)).toEqual([]);
      expect(digestChanges(outside, treeDigest(t.outside))).toEqual([]);
    }, 120_000 + ROUNDS * 4_000);
  }
});
