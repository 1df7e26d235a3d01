/**
 * Durability (SPEC §7 round 2, issue 13 item 6): before `ok`, the commit's
 * new contents and every directory it changed are fsynced, and the report
 * says `durable: true`. Checked from the outside: the programs run under
 * `strace -f -e trace=fsync,fdatasync,syncfs -y`, which lists every flush
 * with the path of the flushed descriptor, on the GNU userland (dash) and
 * on a pure BusyBox userland. A userland without `sync` commits all the
 * same and says `durable: false`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { commitRemote } from "../../lib/remote/commit.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { busyboxBinary, busyboxUserland, cleanupTemps, makeTree, noLeftoversAfterEach, P, plan, shellCases, tempDir } from "../support/local_trees.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();

const STRACE = Bun.which("strace");
if (STRACE === null) throw new Error("strace is not installed (apt-get install -y strace); the durability test needs it");

/**
 * The flushes strace saw: syscall and the flushed path. One log per process
 * (`-ff`: `log.<pid>`), since the stages' flush runs in the background beside
 * other processes and a shared log would split its line into "unfinished" and
 * "resumed" halves.
 */
function flushes(log: string): { call: string; path: string }[] {
  const out: { call: string; path: string }[] = [];
  const dir = dirname(log);
  for (const name of readdirSync(dir).filter((n) => n.startsWith(`${basename(log)}.`))) {
    for (const m of readFileSync(join(dir, name), "utf8").matchAll(/\b(fsync|fdatasync|syncfs)\(\d+<([^>]*)>\)\s+=\s+0/g)) out.push({ call: m[1]!, path: m[2]! });
  }
  return out;
}

const cases = shellCases().filter((c) => c.name === "dash" || c.name === "busybox");

for (const c of cases) {
  describe(`durable commits (${c.name} userland)`, () => {
    test("the stages and every changed directory are fsynced before ok, and the report says durable: true", async () => {
      const root = makeTree({ "a.txt": "a1\n", "c.txt": "c1\n", "sub/d.txt": "d1\n" });
      const log = join(tempDir("sap-strace-"), "trace");
      const shell = new LocalShell({ ...c.options, shell: [STRACE!, "-f", "-ff", "-qq", "-y", "-e", "trace=fsync,fdatasync,syncfs", "-o", log, ...c.options.shell!], cwd: tempDir("sap-cwd-") });
      const report = await commitRemote(shell, root, plan([
        P.update("a.txt", "a1\n", "a2\n"),
        P.add("new/b.txt", "b\n"),
        P.delete("c.txt", "c1\n"),
        P.move("sub/d.txt", "e.txt", "d1\n", "d2\n"),
      ]), { operationId: "durable_1" });
      expect(report.errors).toBeUndefined();
      expect(report.durable).toBe(true);
      const seen = flushes(log);
      const paths = new Set(seen.map((f) => f.path));
      // the stages (update, add, move), flushed in their private directories
      const stages = seen.filter((f) => /\/\.sap-durable_1-[^/]+\/s\d+$/.test(f.path));
      expect(stages.length).toBe(3);
      // the add's copy in the directory it created, before its name
      expect([...paths].some((p) => p.startsWith(join(root, "new/.sap-durable_1-a")))).toBe(true);
      // every directory whose entries changed: the root (a, c, e, new), sub (d left), new (b)
      for (const dir of [root, join(root, "sub"), join(root, "new")]) expect({ dir, flushed: paths.has(dir) }).toEqual({ dir, flushed: true });
      expect(readdirSync(join(root, "new"))).toEqual(["b.txt"]);
    });

    test("no sync on the host: the commit is made all the same and says durable: false", async () => {
      // a BusyBox userland without the sync applet
      const dir = mkdtempSync(join(tmpdir(), "sap-nosync-"));
      try {
        for (const name of readdirSync(busyboxUserland())) if (name !== "sync") symlinkSync(busyboxBinary(), join(dir, name));
        const root = makeTree({ "a.txt": "a1\n" });
        const shell = new LocalShell({ shell: [busyboxBinary(), "sh"], env: { PATH: dir, HOME: "/" }, cwd: tempDir("sap-cwd-") });
        const report = await commitRemote(shell, root, plan([P.update("a.txt", "a1\n", "a2\n")]));
        expect(report.errors).toBeUndefined();
        expect(report.durable).toBe(false);
        expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a2\n");
        expect(existsSync(join(dir, "sync"))).toBe(false);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
