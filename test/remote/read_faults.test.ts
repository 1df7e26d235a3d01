/**
 * True reports for the host's own faults in the read-only programs (SPEC
 * §7 round 2, issue 13 item 3): the snapshot, list and search programs,
 * on real file systems, as root and as a non-root user. FAULT INJECTION: a
 * small tmpfs filled to a chosen level (disk full), a read-only bind mount.
 *
 * What each program writes, and so what can be refused:
 * - snapshot: nothing in a trusted directory; in a shared directory (policy
 *   allow) its private directory and the pin of each file (a hard link);
 * - search: two temporaries in $TMPDIR (else /tmp) — the pattern and grep's
 *   output, which a full disk must not cut silently — and, in a shared
 *   directory, its private directory there and a pin of each file;
 * - list: nothing at all, so a full or read-only file system changes
 *   nothing for it (tested too, so that stays true).
 *
 * The snapshot and list tests run under every shell under test (dash, bash,
 * BusyBox, and over the real sshd as root and sudo: the mounts are on this
 * machine); the search tests set $TMPDIR, which only a LocalShell can, so
 * they run under the local shells.
 */
import { afterAll, describe, expect } from "bun:test";
import { chmodSync, chownSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { listFiles } from "../../lib/remote/list_files.ts";
import { searchFiles } from "../../lib/remote/search_files.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { readOnlyBind, smallTmpfs, unmountAll } from "../support/fault_mounts.ts";
import { asUser, cleanupTemps, leftovers, rootTest, shellCases, tempDir } from "../support/local_trees.ts";
import type { ShellCase } from "../support/local_trees.ts";
import { shellsUnderTest } from "../support/shells_under_test.ts";
import { ensureTestUsers } from "../support/sshd.ts";

afterAll(() => {
  unmountAll();
  cleanupTemps();
}, 30_000);

const shells = shellsUnderTest({ suite: "remote: read-only programs' host faults" });
const idOf = (flag: string, user: string): number => Number(Bun.spawnSync(["id", flag, user]).stdout.toString().trim());

/** A root (mode 0755) holding `own/a.txt` in a trusted directory and `up/a.txt` in a shared (0777) one. */
function populate(root: string): void {
  chmodSync(root, 0o755);
  for (const dir of ["own", "up"]) {
    mkdirSync(join(root, dir));
    writeFileSync(join(root, dir, "a.txt"), `${dir} needle\n`);
  }
  chmodSync(join(root, "up"), 0o777);
}

for (const c of shells) {
  describe(`read-only programs on a full or read-only file system (${c.name})`, () => {
    rootTest("snapshot, disk full: a shared directory's pin is no_space (directory, bytes free), not 'may not hard-link it'; a trusted directory reads as always; nothing left", async () => {
      const fs = smallTmpfs(512);
      populate(fs.dir);
      fs.fill(0);
      const snaps = await readSnapshots(await c.open(), fs.dir, ["up/a.txt", "own/a.txt"], { sharedDirectories: "allow" });
      const e = snaps.get("up/a.txt")!.rejected!;
      expect(e.code).toBe("no_space");
      expect(e.message).toContain(`the file system of ${fs.dir}/up on the host is full`);
      expect(e.message).toContain("hard link");
      expect(e.message).toContain("nothing was changed");
      expect(e.message).not.toContain("may not hard-link");
      expect(e.noSpace).toEqual({ directory: `${fs.dir}/up`, bytesNeeded: null, bytesFree: expect.any(Number) });
      expect(e.noSpace!.bytesFree!).toBeLessThan(64 * 1024);
      expect(e.retryable).toBe(true);
      expect(e.path).toBe("up/a.txt");
      expect(new TextDecoder().decode(snaps.get("own/a.txt")!.bytes!)).toBe("own needle\n");
      expect(leftovers(fs.dir)).toEqual([]);
      fs.unfill();
      const again = await readSnapshots(await c.open(), fs.dir, ["up/a.txt"], { sharedDirectories: "allow" });
      expect(again.get("up/a.txt")!.rejected).toBeUndefined();
      expect(new TextDecoder().decode(again.get("up/a.txt")!.bytes!)).toBe("up needle\n");
    });

    rootTest("snapshot, read-only file system: a shared directory's pin is read_only_filesystem, a trusted one reads by name", async () => {
      const source = tempDir("sap-ro-snap-");
      populate(source);
      const ro = readOnlyBind(source);
      const snaps = await readSnapshots(await c.open(), ro, ["up/a.txt", "own/a.txt"], { sharedDirectories: "allow" });
      const e = snaps.get("up/a.txt")!.rejected!;
      expect(e.code).toBe("read_only_filesystem");
      expect(e.message).toContain(`${ro}/up is on a read-only file system`);
      expect(e.message).not.toContain("write access");
      expect(e.retryable).toBe(false);
      expect(snaps.get("own/a.txt")!.rejected).toBeUndefined();
      expect(readdirSync(join(source, "up"))).toEqual(["a.txt"]);
    });

    rootTest("search, disk full and read-only: a shared directory's files cannot be pinned there, so they are skipped unpinnable with that cause (never read by name); trusted ones are searched", async () => {
      const fs = smallTmpfs(512);
      populate(fs.dir);
      fs.fill(0);
      const source = tempDir("sap-ro-search-");
      populate(source);
      const ro = readOnlyBind(source);
      for (const [root, cause] of [[fs.dir, "no_space"], [ro, "read_only_filesystem"]] as const) {
        const r = await searchFiles(await c.open(), root, "needle");
        expect(r.errors).toBeUndefined();
        expect(r.matches.map((m) => m.path)).toEqual(["own/a.txt"]);
        expect(r.skipped.unpinnable).toBe(1);
        expect(r.skipped.examples).toEqual([{ path: "up/a.txt", reason: "unpinnable", cause }]);
        expect(leftovers(root)).toEqual([]);
      }
    });

    rootTest("list: a full and a read-only file system change nothing (the list program writes nothing)", async () => {
      const fs = smallTmpfs(512);
      populate(fs.dir);
      fs.fill(0);
      const source = tempDir("sap-ro-list-");
      populate(source);
      const ro = readOnlyBind(source);
      for (const root of [fs.dir, ro]) {
        const listing = await listFiles(await c.open(), root, { depth: 2 });
        expect(listing.errors).toBeUndefined();
        expect(listing.entries.map((e) => e.path).filter((p) => p !== "filler")).toEqual(["own", "own/a.txt", "up", "up/a.txt"]);
      }
    });
  });
}

for (const c of shellCases()) {
  describe(`search's temporaries on a full or read-only file system (${c.name})`, () => {
    const withTmp = (tmp: string, base: ShellCase["options"] = c.options): LocalShell =>
      new LocalShell({ ...base, env: { ...(base.env ?? (process.env as Record<string, string>)), TMPDIR: tmp }, cwd: tempDir("sap-cwd-") });

    rootTest("a full $TMPDIR: no_space naming it and its free bytes, nothing left there; with space, the same search works", async () => {
      const root = tempDir("sap-search-root-");
      populate(root);
      const fs = smallTmpfs(512);
      fs.fill(0);
      const r = await searchFiles(withTmp(fs.dir), root, "needle");
      expect(r.ok).toBe(false);
      const e = r.errors![0]!;
      expect(e.code).toBe("no_space");
      expect(e.message).toContain(`the file system of ${fs.dir} on the host is full`);
      expect(e.message).toContain("temporary files");
      expect(e.noSpace).toEqual({ directory: fs.dir, bytesNeeded: null, bytesFree: expect.any(Number) });
      expect(e.retryable).toBe(true);
      expect(readdirSync(fs.dir)).toEqual(["filler"]);
      fs.unfill();
      const again = await searchFiles(withTmp(fs.dir), root, "needle");
      expect(again.matches.map((m) => m.path).sort()).toEqual(["own/a.txt", "up/a.txt"]);
      expect(readdirSync(fs.dir)).toEqual([]);
    });

    rootTest("$TMPDIR fills up while grep's output is written: no_space, never a shorter list of matches", async () => {
      const root = tempDir("sap-search-big-");
      chmodSync(root, 0o755);
      const line = `needle ${"x".repeat(200)}\n`;
      for (let i = 0; i < 4; i++) writeFileSync(join(root, `f${i}.txt`), line.repeat(400)); // ~80 KiB of matches each
      const fs = smallTmpfs(512);
      fs.fill(16 * 1024);
      const r = await searchFiles(withTmp(fs.dir), root, "needle", { maxResults: 2000 });
      expect(r.ok).toBe(false);
      expect(r.errors![0]!.code).toBe("no_space");
      expect(r.matches).toEqual([]);
      expect(readdirSync(fs.dir)).toEqual(["filler"]);
    });

    rootTest("a read-only $TMPDIR: read_only_filesystem, not a remote_error quoting mktemp", async () => {
      const root = tempDir("sap-search-ro-");
      populate(root);
      const ro = readOnlyBind(tempDir("sap-ro-tmp-"));
      const r = await searchFiles(withTmp(ro), root, "needle");
      const e = r.errors![0]!;
      expect(e.code).toBe("read_only_filesystem");
      expect(e.message).toContain(`${ro} is on a read-only file system`);
      expect(e.message).not.toContain("write access");
      expect(e.retryable).toBe(false);
    });

    rootTest("a $TMPDIR the (non-root) remote user may not write: permission_denied naming it", async () => {
      const { nopasswdUser } = ensureTestUsers();
      const uid = idOf("-u", nopasswdUser);
      const gid = idOf("-g", nopasswdUser);
      const root = tempDir("sap-search-perm-");
      populate(root);
      const tmp = tempDir("sap-tmp-closed-");
      chmodSync(tmp, 0o755); // root's: the user may enter, not write
      const r = await searchFiles(withTmp(tmp, asUser(c, uid, gid)), root, "needle");
      const e = r.errors![0]!;
      expect(e.code).toBe("permission_denied");
      expect(e.message).toContain(`the remote user may not write in ${tmp}`);
      expect(e.retryable).toBe(false);
    });
  });
}

rootTest("snapshot as a non-root user: a shared directory it may not write (another user's) is permission_denied for the pin, not a guess", async () => {
  const { nopasswdUser, passwordUser } = ensureTestUsers();
  const c = shellCases()[0]!;
  const root = tempDir("sap-snap-perm-");
  chmodSync(root, 0o755);
  mkdirSync(join(root, "theirs"));
  writeFileSync(join(root, "theirs", "a.txt"), "x\n");
  chownSync(join(root, "theirs"), idOf("-u", passwordUser), idOf("-g", passwordUser));
  chmodSync(join(root, "theirs"), 0o755);
  chmodSync(join(root, "theirs", "a.txt"), 0o644);
  const user = new LocalShell({ ...asUser(c, idOf("-u", nopasswdUser), idOf("-g", nopasswdUser)), cwd: "/" });
  const snaps = await readSnapshots(user, root, ["theirs/a.txt"], { sharedDirectories: "allow" });
  const e = snaps.get("theirs/a.txt")!.rejected!;
  expect(e.code).toBe("permission_denied");
  expect(e.message).toContain(`the remote user may not write in ${root}/theirs`);
  expect(e.message).toContain("hard link");
});
