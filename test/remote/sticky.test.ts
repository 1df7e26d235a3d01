/**
 * A sticky (1777, /tmp-like) directory holding another user's writable file
 * (issue 13 item 2), as a second uid through setpriv, under every local
 * shell, with `sharedDirectories: "allow"` (the trust policy refuses such a
 * directory by default). The remote user may write the file but not
 * replace or remove it: the report must say so truly — nothing changed,
 * `permission_denied` explaining the sticky bit — leave nothing behind, and
 * retries must not pile up files. In a sticky directory the user owns, the
 * same edit goes through.
 */
import { afterAll, describe, expect } from "bun:test";
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { asUser, cleanupTemps, leftovers, makeTree, noLeftoversAfterEach, rootTest, shellCases } from "../support/local_trees.ts";
import { ensureTestUsers } from "../support/sshd.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();

const idOf = (flag: string, user: string): number => Number(Bun.spawnSync(["id", flag, user]).stdout.toString().trim());
const update = (path: string, from: string, to: string): string => ["*** Begin Patch", `*** Update File: ${path}`, "@@", `-${from}`, `+${to}`, "*** End Patch"].join("\n");
const del = (path: string): string => ["*** Begin Patch", `*** Delete File: ${path}`, "*** End Patch"].join("\n");

for (const c of shellCases()) {
  describe(`sticky directory, another user's writable file (${c.name})`, () => {
    /** root/t (mode 1777, owned by `dirOwner`) holding f.txt of `fileOwner`, mode 0666. */
    const tree = (dirOwner: number, fileOwner: number): string => {
      const root = makeTree({ "keep.txt": "k\n" });
      chmodSync(root, 0o755);
      const t = join(root, "t");
      mkdirSync(t);
      chownSync(t, dirOwner, dirOwner === 0 ? 0 : -1);
      chmodSync(t, 0o1777);
      writeFileSync(join(t, "f.txt"), "v1\n");
      chownSync(join(t, "f.txt"), fileOwner, -1);
      chmodSync(join(t, "f.txt"), 0o666);
      return root;
    };
    const users = (): { me: number; myGid: number; other: number } => {
      const { nopasswdUser, passwordUser } = ensureTestUsers();
      return { me: idOf("-u", nopasswdUser), myGid: idOf("-g", nopasswdUser), other: idOf("-u", passwordUser) };
    };

    rootTest("update and delete of another user's file in a root-owned sticky directory: permission_denied saying why, nothing changed, nothing left, retries add nothing", async () => {
      const { me, myGid, other } = users();
      const root = tree(0, other);
      const shell = new LocalShell({ ...asUser(c, me, myGid), cwd: "/" });
      for (const [patch, what] of [[update("t/f.txt", "v1", "v2"), "update"], [del("t/f.txt"), "delete"]] as const) {
        for (let attempt = 0; attempt < 3; attempt++) {
          const report = await applyPatch(shell, { root, patch, sharedDirectories: "allow" });
          expect({ what, ok: report.ok }).toEqual({ what, ok: false });
          const e = report.errors![0]!;
          expect(e.code).toBe("permission_denied");
          expect(e.path).toBe("t/f.txt");
          expect(e.message).toContain("sticky");
          expect(e.message).toContain("nothing was changed");
          expect(e.message).not.toContain("partly applied");
          expect(e.retryable).toBe(false);
          expect(readFileSync(join(root, "t/f.txt"), "utf8")).toBe("v1\n");
          expect(readdirSync(join(root, "t"))).toEqual(["f.txt"]);
          expect(leftovers(root)).toEqual([]);
        }
      }
      // six applies as another user (each a snapshot and a gated commit): more than the default 5 s on a busy machine
    }, 30_000);

    rootTest("the same edit in a sticky directory the remote user owns goes through (the directory's owner may replace any file in it)", async () => {
      const { me, myGid, other } = users();
      const root = tree(me, other);
      const shell = new LocalShell({ ...asUser(c, me, myGid), cwd: "/" });
      const report = await applyPatch(shell, { root, patch: update("t/f.txt", "v1", "v2"), sharedDirectories: "allow" });
      expect(report.errors).toBeUndefined();
      expect(readFileSync(join(root, "t/f.txt"), "utf8")).toBe("v2\n");
      // the new file is the user's now: the previous owner could not be kept, and the report says so
      expect(report.files[0]!.warnings.map((w) => w.code)).toContain("owner_not_preserved");
      expect(readdirSync(join(root, "t"))).toEqual(["f.txt"]);
    });
  });
}
