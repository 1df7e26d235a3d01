/**
 * True reports for the host's own faults (SPEC §7 round 2, issue 13 item
 * 3), on real file systems, as root, under every local shell. FAULT
 * INJECTION: a small tmpfs filled to a chosen level (disk full while the
 * contents arrive, while a delta stage is rebuilt from its source, while
 * the journal is written in step 5), and a read-only bind mount (where
 * `[ -w ]` is false for everyone, root included).
 */
import { afterAll, describe, expect } from "bun:test";
import { chmodSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { commitRemote } from "../../lib/remote/commit.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import { asUser, cleanupTemps, HookedShell, leftovers, P, plan, rootTest, shellCases, tempDir } from "../support/local_trees.ts";
import { readOnlyBind, smallTmpfs, unmountAll } from "../support/fault_mounts.ts";
import { ensureTestUsers } from "../support/sshd.ts";

afterAll(() => {
  unmountAll();
  cleanupTemps();
}, 30_000);

const KiB = 1024;
const text = (n: number, seed: string): string => {
  let out = "";
  for (let i = 0; out.length < n; i++) out += `${seed} line ${i} ${"x".repeat(40)}\n`;
  return out.slice(0, n);
};
const idOf = (flag: string, user: string): number => Number(Bun.spawnSync(["id", flag, user]).stdout.toString().trim());

for (const c of shellCases()) {
  describe(`host faults (${c.name})`, () => {
    const shell = (): LocalShell => new LocalShell({ ...c.options, cwd: tempDir("sap-cwd-") });

    rootTest("disk full while the new contents arrive: no_space naming the directory, the bytes needed and free; nothing changed, nothing left", async () => {
      const fs = smallTmpfs(1024);
      writeFileSync(join(fs.dir, "a.txt"), "a1\n");
      fs.fill(64 * KiB);
      const big = text(300 * KiB, "new");
      const report = await commitRemote(shell(), fs.dir, plan([P.update("a.txt", "a1\n", big)]), { operationId: "full_1" });
      const e = report.errors![0]!;
      expect(e.code).toBe("no_space");
      expect(e.message).toContain(`the file system of ${fs.dir} on the host is full`);
      expect(e.message).toContain("nothing was changed");
      expect(e.noSpace).toMatchObject({ directory: fs.dir });
      expect(e.noSpace!.bytesNeeded).toBeGreaterThanOrEqual(300 * KiB);
      expect(e.noSpace!.bytesFree).toBeLessThan(128 * KiB);
      expect(e.retryable).toBe(true);
      expect(readFileSync(join(fs.dir, "a.txt"), "utf8")).toBe("a1\n");
      expect(leftovers(fs.dir)).toEqual([]);
      fs.unfill();
      // with space again, the same commit goes through
      const again = await commitRemote(shell(), fs.dir, plan([P.update("a.txt", "a1\n", big)]));
      expect(again.errors).toBeUndefined();
    });

    rootTest("disk full while a delta stage is rebuilt from its source: no_space, not 'it changed while it was being read'", async () => {
      const fs = smallTmpfs(1024);
      const old = text(400 * KiB, "old");
      writeFileSync(join(fs.dir, "big.txt"), old);
      // a one-line change: the upload is a few bytes, the rebuilt stage 400 KiB
      const changed = old.replace("old line 5 ", "NEW line 5 ");
      const patch = ["*** Begin Patch", "*** Update File: big.txt", "@@", `-${old.split("\n")[5]}`, `+${changed.split("\n")[5]}`, "*** End Patch"].join("\n");
      fs.fill(100 * KiB);
      const report = await applyPatch(shell(), { root: fs.dir, patch, operationId: "full_delta" });
      const e = report.errors![0]!;
      expect(e.code).toBe("no_space");
      expect(e.message).not.toContain("changed while it was being read");
      expect(readFileSync(join(fs.dir, "big.txt"), "utf8")).toBe(old);
      expect(leftovers(fs.dir)).toEqual([]);
    });

    rootTest("disk full in step 5 (the journal cannot grow): every file restored, no_space saying so", async () => {
      const fs = smallTmpfs(1024);
      writeFileSync(join(fs.dir, "a.txt"), "a1\n");
      writeFileSync(join(fs.dir, "b.txt"), "b1\n");
      // FAULT INJECTION: right after the content check, the disk fills to the last byte
      const filler = join(fs.dir, "filler");
      const hooked = new HookedShell(shell(), `case "$1" in compared) cat /dev/zero > '${filler}' 2>/dev/null; : ;; esac`);
      const report = await commitRemote(hooked, fs.dir, plan([P.update("a.txt", "a1\n", "a2\n"), P.update("b.txt", "b1\n", "b2\n")]), { operationId: "full_j" });
      const e = report.errors![0]!;
      expect(e.code).toBe("no_space");
      expect(e.message).toContain("every file already changed was restored, so nothing was changed");
      expect([readFileSync(join(fs.dir, "a.txt"), "utf8"), readFileSync(join(fs.dir, "b.txt"), "utf8")]).toEqual(["a1\n", "b1\n"]);
      fs.unfill();
      expect(leftovers(fs.dir)).toEqual([]);
    });

    rootTest("a read-only file system: read_only_filesystem (root: the mount is all that refuses), never 'ask for write access'", async () => {
      const source = tempDir("sap-ro-src-");
      chmodSync(source, 0o755);
      writeFileSync(join(source, "a.txt"), "a1\n");
      const ro = readOnlyBind(source);
      const report = await commitRemote(shell(), ro, plan([P.update("a.txt", "a1\n", "a2\n")]));
      const e = report.errors![0]!;
      expect(e.code).toBe("read_only_filesystem");
      expect(e.message).toContain(`${ro} is on a read-only file system`);
      expect(e.message).not.toContain("write access");
      expect(e.retryable).toBe(false);
      expect(readFileSync(join(source, "a.txt"), "utf8")).toBe("a1\n");
      expect(readdirSync(source)).toEqual(["a.txt"]);
    });

    rootTest("a read-only file system a non-root user owns (its mode lets them write): read_only_filesystem for them too", async () => {
      const { nopasswdUser } = ensureTestUsers();
      const uid = idOf("-u", nopasswdUser);
      const gid = idOf("-g", nopasswdUser);
      const source = tempDir("sap-ro-own-");
      writeFileSync(join(source, "a.txt"), "a1\n");
      Bun.spawnSync(["chown", "-R", `${uid}:${gid}`, source]);
      chmodSync(source, 0o755);
      const ro = readOnlyBind(source);
      const user = new LocalShell({ ...asUser(c, uid, gid), cwd: "/" });
      const report = await commitRemote(user, ro, plan([P.update("a.txt", "a1\n", "a2\n")]));
      expect(report.errors![0]!.code).toBe("read_only_filesystem");
      expect(report.errors![0]!.message).not.toContain("write access");
    });

    rootTest("reconcile on a read-only file system: read_only_filesystem, it changed nothing, call it again once writable", async () => {
      const source = tempDir("sap-ro-rec-");
      chmodSync(source, 0o755);
      writeFileSync(join(source, "a.txt"), "a1\n");
      const ro = readOnlyBind(source);
      const settled = await reconcile(shell(), ro, reconcileTicket(plan([P.update("a.txt", "a1\n", "a2\n")]), "ro_rec"));
      expect(settled.ok).toBe(false);
      const e = settled.errors![0]!;
      expect(e.code).toBe("read_only_filesystem");
      expect(e.message).toContain("reconcile stopped before changing anything");
      expect(e.message).toContain("call reconcile again with operation id ro_rec");
      expect(e.message).not.toContain("write access");
      expect(e.hints?.map((h) => h.kind)).toContain("reconcile");
      expect(readdirSync(source)).toEqual(["a.txt"]);
    });

    rootTest("reconcile after a disk-full commit settles without a word about locks", async () => {
      const fs = smallTmpfs(1024);
      writeFileSync(join(fs.dir, "a.txt"), "a1\n");
      fs.fill(16 * KiB);
      const thePlan = plan([P.update("a.txt", "a1\n", text(200 * KiB, "z"))]);
      const report = await commitRemote(shell(), fs.dir, thePlan, { operationId: "full_r" });
      expect(report.errors![0]!.code).toBe("no_space");
      const settled = await reconcile(shell(), fs.dir, reconcileTicket(thePlan, "full_r"));
      expect(settled.ok).toBe(true);
      expect(settled.files[0]!.state).toBe("not_applied");
      expect(leftovers(fs.dir)).toEqual([]);
    });
  });
}
