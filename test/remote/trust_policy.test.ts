/**
 * The directory trust policy (SPEC §6.1, lib/remote/programs/sh_trust.ts)
 * on real directories, through LocalShell as root: which directories count
 * as writable by others (other-write, group-write with another member,
 * another owner, an ACL, a sticky directory inside the root, a symlinked
 * root resolved through a shared directory), which do not (a group whose
 * only member is root, sticky ancestors), what the failure says, and what
 * `sharedDirectories: "allow"` reports instead. Group membership parsing is
 * checked against small passwd/group/nsswitch files handed to the program
 * (FAULT INJECTION: the `start` hook points the program at them).
 */
import { afterAll, describe, expect } from "bun:test";
import { chmodSync, chownSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { commitRemote } from "../../lib/remote/commit.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import { shQuote } from "../../lib/remote/shell.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { cleanupTemps, HookedShell, makeTree, noLeftoversAfterEach, P, plan, rootTest, setPosixAcl, shellCases, tempDir } from "../support/local_trees.ts";
import { ensureTestUsers } from "../support/sshd.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();

const idOf = (flag: string, user: string): number => Number(Bun.spawnSync(["id", flag, user]).stdout.toString().trim());
const patchOf = (path: string, from: string, to: string): string => ["*** Begin Patch", `*** Update File: ${path}`, "@@", `-${from}`, `+${to}`, "*** End Patch"].join("\n");
const GNU = shellCases().filter((c) => c.name !== "busybox");

for (const c of shellCases()) {
  describe(`directory trust policy (${c.name})`, () => {
    const shell = (): LocalShell => new LocalShell({ ...c.options, cwd: tempDir("sap-cwd-") });
    /** A root with `d/f.txt`, d given `mode` and `owner:group`. */
    const tree = (mode: number, uid = 0, gid = 0): string => {
      const root = makeTree({ "d/f.txt": "v1\n" });
      chmodSync(root, 0o755);
      chownSync(join(root, "d"), uid, gid);
      chmodSync(join(root, "d"), mode);
      return root;
    };
    const refused = async (root: string): Promise<NonNullable<Awaited<ReturnType<typeof applyPatch>>["errors"]>[number]> => {
      const report = await applyPatch(shell(), { root, patch: patchOf("d/f.txt", "v1", "v2") });
      expect(report.ok).toBe(false);
      expect(readFileSync(join(root, "d/f.txt"), "utf8")).toBe("v1\n");
      return report.errors![0]!;
    };

    rootTest("group-writable by a group whose only member is root: trusted", async () => {
      const root = tree(0o775, 0, 0);
      const report = await applyPatch(shell(), { root, patch: patchOf("d/f.txt", "v1", "v2") });
      expect(report.errors).toBeUndefined();
      expect(report.files[0]!.directoryTrust).toBe("trusted");
    });

    rootTest("group-writable by a group with another member: unsafe_directory naming the directory, mode, owner, group and its members, and the option", async () => {
      const { passwordUser } = ensureTestUsers();
      const gid = idOf("-g", passwordUser);
      const root = tree(0o2775, 0, gid);
      const f = await refused(root);
      expect(f.code).toBe("unsafe_directory");
      expect(f.path).toBe("d/f.txt");
      expect(f.unsafeDirectory).toMatchObject({ path: join(root, "d"), mode: "2775", uid: 0, gid, reason: "group" });
      expect(f.unsafeDirectory!.writers).toContain(passwordUser);
      for (const part of [join(root, "d"), "mode 2775", "owner root", `group ${passwordUser}`, 'sharedDirectories: "allow"', "nothing was read or written"]) expect(f.message).toContain(part);
      expect(f.hints).toEqual([{ kind: "option", option: "sharedDirectories", value: "allow", says: 'sharedDirectories: "allow"' }]);
      expect(f.retryable).toBe(false);
    });

    rootTest("many paths through one refused directory: the directory is named once in the reply (the rest refer to it); the commit reports it once, the snapshot refuses each path", async () => {
      const root = makeTree({ "d/a.txt": "a\n", "d/b.txt": "b\n", "d/c.txt": "c\n" });
      chmodSync(root, 0o755);
      chmodSync(join(root, "d"), 0o777);
      const snaps = await readSnapshots(shell(), root, ["d/a.txt", "d/b.txt", "d/c.txt"]);
      expect([...snaps.values()].map((x) => x.rejected?.unsafeDirectory?.path)).toEqual([join(root, "d"), join(root, "d"), join(root, "d")]);
      const report = await commitRemote(shell(), root, plan([P.update("d/a.txt", "a\n", "A\n"), P.update("d/b.txt", "b\n", "B\n"), P.delete("d/c.txt", "c\n")]));
      expect(report.errors!.map((e) => [e.code, e.path])).toEqual([["unsafe_directory", "d/a.txt"]]);
      expect(readFileSync(join(root, "d/a.txt"), "utf8")).toBe("a\n");
    });

    rootTest("world-writable: unsafe_directory (other); a sticky 1777 directory inside the root is refused too", async () => {
      for (const mode of [0o777, 0o1777]) {
        const f = await refused(tree(mode));
        expect(f.unsafeDirectory).toMatchObject({ reason: "other", writers: "everyone", mode: mode.toString(8).padStart(4, "0") });
      }
    });

    rootTest("owned by another user (who could chmod it): unsafe_directory (owner)", async () => {
      const { passwordUser } = ensureTestUsers();
      const f = await refused(tree(0o755, idOf("-u", passwordUser), idOf("-g", passwordUser)));
      expect(f.unsafeDirectory).toMatchObject({ reason: "owner", writers: passwordUser });
      expect(f.message).toContain(`it belongs to ${passwordUser}`);
    });

    rootTest("a sticky ancestor counts as trusted (the root inside a 1777 directory owned by root)", async () => {
      const outer = tempDir("sap-sticky-");
      chmodSync(outer, 0o1777);
      const root = join(outer, "root");
      mkdirSync(join(root, "d"), { recursive: true });
      writeFileSync(join(root, "d/f.txt"), "v1\n");
      const report = await applyPatch(shell(), { root, patch: patchOf("d/f.txt", "v1", "v2") });
      expect(report.errors).toBeUndefined();
    });

    rootTest("a root reached through a symlink that lives in a directory others can write: refused, naming that directory", async () => {
      const real = makeTree({ "f.txt": "v1\n" });
      chmodSync(real, 0o755);
      const shared = tempDir("sap-linkdir-");
      chmodSync(shared, 0o777);
      symlinkSync(real, join(shared, "root-link"));
      const report = await applyPatch(shell(), { root: join(shared, "root-link"), patch: patchOf("f.txt", "v1", "v2") });
      expect(report.errors![0]!.code).toBe("unsafe_directory");
      expect(report.errors![0]!.unsafeDirectory).toMatchObject({ path: shared, reason: "other" });
      expect(report.errors![0]!.message).toContain("above the root");
      expect(readFileSync(join(real, "f.txt"), "utf8")).toBe("v1\n");
    });

    rootTest('sharedDirectories: "allow": read from a pin and committed, reported directoryTrust "shared" (also in a dry run); reconcile needs the same option', async () => {
      const root = tree(0o777);
      const snaps = await readSnapshots(shell(), root, ["d/f.txt"]);
      expect(snaps.get("d/f.txt")!.rejected?.code).toBe("unsafe_directory");
      const allowed = await readSnapshots(shell(), root, ["d/f.txt"], { sharedDirectories: "allow" });
      expect(allowed.get("d/f.txt")).toMatchObject({ kind: "file", directoryTrust: "shared", nlink: 1 });
      const dry = await applyPatch(shell(), { root, patch: patchOf("d/f.txt", "v1", "v2"), dryRun: true, sharedDirectories: "allow" });
      expect(dry.files[0]!.directoryTrust).toBe("shared");
      const report = await applyPatch(shell(), { root, patch: patchOf("d/f.txt", "v1", "v2"), sharedDirectories: "allow" });
      expect(report.errors).toBeUndefined();
      expect(report.files[0]!.directoryTrust).toBe("shared");
      expect(readFileSync(join(root, "d/f.txt"), "utf8")).toBe("v2\n");
      const thePlan = plan([P.update("d/f.txt", "v1\n", "v2\n")]);
      const refusedReconcile = await reconcile(shell(), root, reconcileTicket(thePlan, "trust_rec"));
      expect(refusedReconcile.errors![0]!.code).toBe("unsafe_directory");
      const settled = await reconcile(shell(), root, reconcileTicket(thePlan, "trust_rec"), { sharedDirectories: "allow" });
      expect(settled.files[0]!.state).toBe("applied");
    });

    rootTest("group membership: members from passwd (primary) and group (listed); a group with no member, an unknown member, or NSS beyond files is not trusted (FAULT INJECTED: the program reads these files instead of /etc)", async () => {
      const db = tempDir("sap-nss-");
      writeFileSync(join(db, "passwd"), "root:x:0:0:root:/root:/bin/sh\nalice:x:1500:4243:a:/home/alice:/bin/sh\n");
      writeFileSync(join(db, "group"), "root:x:0:\nonlyroot:x:4242:root\nwithalice:x:4243:\nlisted:x:4244:root,bob\nempty:x:4245:\n");
      writeFileSync(join(db, "files"), "passwd: files systemd\ngroup: files [NOTFOUND=return] systemd\n");
      writeFileSync(join(db, "ldap"), "passwd: files\ngroup: files ldap\n");
      const at = (nss: string): LocalShell =>
        new HookedShell(shell(), `case "$1" in start) SAP_PASSWD_DB=${shQuote(join(db, "passwd"))} SAP_GROUP_DB=${shQuote(join(db, "group"))} SAP_NSSWITCH=${shQuote(join(db, nss))} ;; esac`) as unknown as LocalShell;
      const cases: [number, string, string | null][] = [
        [4242, "files", null], // only root listed: trusted
        [4243, "files", "alice"], // alice's primary group
        [4244, "files", "bob"], // bob listed (unknown in passwd: not trusted)
        [4245, "files", "-"], // no member at all
        [4242, "ldap", "?"], // members cannot be known
        [4999, "files", "-"], // a gid /etc/group does not know
      ];
      for (const [gid, nss, who] of cases) {
        const root = tree(0o775, 0, gid);
        const report = await applyPatch(at(nss), { root, patch: patchOf("d/f.txt", "v1", "v2") });
        if (who === null) {
          expect(report.errors).toBeUndefined();
        } else {
          expect(report.errors![0]!.unsafeDirectory).toMatchObject({ reason: "group", gid });
          if (who !== "-") expect(report.errors![0]!.unsafeDirectory!.writers).toContain(who);
        }
      }
    });
  });
}

for (const c of GNU) {
  describe(`directory trust policy: ACLs (${c.name}, GNU ls shows them)`, () => {
    rootTest("group-writable by a trusted group but with an ACL (ls shows +): unsafe_directory (acl)", async () => {
      const root = makeTree({ "d/f.txt": "v1\n" });
      chmodSync(root, 0o755);
      chmodSync(join(root, "d"), 0o775);
      setPosixAcl(join(root, "d"), idOf("-u", ensureTestUsers().passwordUser));
      const report = await applyPatch(new LocalShell({ ...c.options, cwd: tempDir("sap-cwd-") }), { root, patch: patchOf("d/f.txt", "v1", "v2") });
      expect(report.errors![0]!.unsafeDirectory).toMatchObject({ reason: "acl" });
      expect(readFileSync(join(root, "d/f.txt"), "utf8")).toBe("v1\n");
    });

    // ls sorts its operands: the verdict of each directory must be its own,
    // whatever order the directories are checked in (the ACL on the one that
    // sorts first, then on the one that sorts last; the patch names them in
    // the other order).
    for (const [withAcl, without] of [["a", "z"], ["z", "a"]] as const) {
      rootTest(`two group-writable directories, the ACL on ${withAcl}/ only: ${withAcl}/ is the one refused (acl), ${without}/ is trusted`, async () => {
        const root = makeTree({ "a/f.txt": "v1\n", "z/f.txt": "v1\n" });
        chmodSync(root, 0o755);
        for (const d of ["a", "z"]) chmodSync(join(root, d), 0o775);
        setPosixAcl(join(root, withAcl), idOf("-u", ensureTestUsers().passwordUser));
        const patch = ["*** Begin Patch", "*** Update File: z/f.txt", "@@", "-v1", "+v2", "*** Update File: a/f.txt", "@@", "-v1", "+v2", "*** End Patch"].join("\n");
        const report = await applyPatch(new LocalShell({ ...c.options, cwd: tempDir("sap-cwd-") }), { root, patch });
        const refused = (report.errors ?? []).filter((e) => e.code === "unsafe_directory");
        expect(refused.map((e) => e.unsafeDirectory!.reason)).toContain("acl");
        expect(refused.map((e) => e.path)).toEqual([`${withAcl}/f.txt`]);
        for (const d of ["a", "z"]) expect(readFileSync(join(root, d, "f.txt"), "utf8")).toBe("v1\n");
      });
    }
  });
}
