/**
 * A default POSIX ACL on the directory of an existing file must not reach
 * its new version (redteam finding). The engine's private directory, made
 * by mktemp -d inside that directory, inherits the default ACL, and so does
 * the stage made in it; chmod to the file's mode only masks the named
 * entries (with the group bits). So an Update of a 0640 root:root file in a
 * directory whose owner (another user, under sharedDirectories "allow") put
 * `default:user:<it>:rwx` on it would hand it read access to the NEW content
 * — while the report said ok, mode kept. The rule (SPEC §6.1): the new
 * version of an existing file never grants more than the old one, under
 * either policy; an Update/Move whose source shows no ACL but whose stage
 * does fails `unsafe_directory` (reason `acl`) before anything is renamed.
 * An Add inherits the default ACL, as any new file made there does.
 *
 * The ACL is written as the system.posix_acl_default xattr with python3
 * (no setfacl on the machine; .ci/run installs python3).
 */
import { afterAll, describe, expect } from "bun:test";
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { cleanupTemps, rootTest, shellCases, tempDir } from "../support/local_trees.ts";
import { asAttacker, coTenantTree } from "./co_tenant_fixture.ts";
import type { CoTenantTree } from "./co_tenant_fixture.ts";

afterAll(cleanupTemps);

/** A python3 script that sets a default ACL `u::rwx u:<uid>:rwx g::r-x m::rwx o::r-x` on its argument. */
function aclScript(uid: number): string {
  const py = join(tempDir("sap-acl-"), "acl.py");
  writeFileSync(py, [
    "import os, struct, sys",
    `e = [(1, 7, 0xffffffff), (2, 7, ${uid}), (4, 5, 0xffffffff), (0x10, 7, 0xffffffff), (0x20, 5, 0xffffffff)]`,
    "os.setxattr(sys.argv[1], 'system.posix_acl_default', struct.pack('<I', 2) + b''.join(struct.pack('<HHI', *x) for x in e))",
  ].join("\n"));
  chmodSync(join(py, ".."), 0o755);
  chmodSync(py, 0o644);
  return py;
}

/** `root/shared/sub`, the attacker's own 0755 directory with a default ACL naming it, holding a 0640 root:root `s.txt`. */
function attackerAclDir(t: CoTenantTree): { sub: string; f: string } {
  const sub = join(t.work, "sub");
  expect(asAttacker(t, `mkdir ${sub} && chmod 755 ${sub}`).status).toBe(0);
  const f = join(sub, "s.txt");
  writeFileSync(f, "old secret\n");
  chownSync(f, 0, 0);
  chmodSync(f, 0o640);
  expect(asAttacker(t, `python3 ${aclScript(t.attacker.uid)} ${sub}`).status).toBe(0);
  expect(asAttacker(t, `cat ${f}`).status).not.toBe(0); // it cannot read the old content
  return { sub, f };
}

const update = (path: string): string => `*** Begin Patch\n*** Update File: ${path}\n@@\n-old secret\n+NEW secret\n*** End Patch\n`;
const engineEntries = (dir: string): string[] => readdirSync(dir).filter((n) => n.startsWith(".sap-"));

describe("a default ACL on the directory of an existing file", () => {
  rootTest("a default ACL the other user set on its own directory does not let it read the new content of a 0640 root:root file there", async () => {
    const dash = shellCases().find((c) => c.name === "dash")!;
    const t = coTenantTree({ sharing: "group" });
    const { f } = attackerAclDir(t);
    const report = await applyPatch(new LocalShell({ ...dash.options, cwd: tempDir("sap-cwd-") }), {
      root: t.root,
      sharedDirectories: "allow",
      patch: update("shared/sub/s.txt"),
    });
    const read = asAttacker(t, `cat ${f}`);
    // either refused (nothing written) or written without handing out read access
    if (report.ok) expect(read.stdout).not.toContain("NEW secret");
    else expect(read.status).not.toBe(0);
  });

  // Not the BusyBox-only userland: its ls shows no ACLs (and it has no
  // getfacl), so there the stage's inherited ACL is not seen — a gap the
  // docs/security.md states ("Default ACLs").
  for (const c of shellCases().filter((s) => s.name !== "busybox")) {
    rootTest(`${c.name}: the Update fails unsafe_directory (acl) naming the directory and setfacl -k, before anything is renamed: content, inode, mode unchanged, no leftovers`, async () => {
      const t = coTenantTree({ sharing: "group" });
      const { sub, f } = attackerAclDir(t);
      const before = statSync(f);
      const report = await applyPatch(new LocalShell({ ...c.options, cwd: tempDir("sap-cwd-") }), {
        root: t.root,
        sharedDirectories: "allow",
        patch: update("shared/sub/s.txt"),
      });
      expect(report.ok).toBe(false);
      const e = report.errors!;
      expect(e.map((x) => [x.code, x.path, x.unsafeDirectory?.reason, x.unsafeDirectory?.path, x.retryable])).toEqual([
        ["unsafe_directory", "shared/sub/s.txt", "acl", sub, false],
      ]);
      expect(e[0]!.message).toContain(`setfacl -k ${sub}`);
      expect(e[0]!.message).toContain("default ACL");
      expect(e[0]!.message).toContain("nothing was changed");
      const after = statSync(f);
      expect(readFileSync(f, "utf8")).toBe("old secret\n");
      expect([after.ino, after.mode, after.uid, after.gid, after.nlink]).toEqual([before.ino, before.mode, before.uid, before.gid, before.nlink]);
      expect(engineEntries(sub)).toEqual([]);
      expect(asAttacker(t, `cat ${f}`).status).not.toBe(0);
    });
  }

  rootTest("a Move of a 0640 file into the other user's directory with a default ACL is refused the same way; both names untouched", async () => {
    const dash = shellCases().find((c) => c.name === "dash")!;
    const t = coTenantTree({ sharing: "group", files: { "m.txt": { text: "old secret\n", mode: 0o640 } } });
    const { sub } = attackerAclDir(t);
    const report = await applyPatch(new LocalShell({ ...dash.options, cwd: tempDir("sap-cwd-") }), {
      root: t.root,
      sharedDirectories: "allow",
      patch: "*** Begin Patch\n*** Update File: shared/m.txt\n*** Move to: shared/sub/m.txt\n@@\n-old secret\n+NEW secret\n*** End Patch\n",
    });
    expect(report.errors?.map((x) => [x.code, x.path, x.unsafeDirectory?.reason])).toEqual([["unsafe_directory", "shared/sub/m.txt", "acl"]]);
    expect(readFileSync(join(t.work, "m.txt"), "utf8")).toBe("old secret\n");
    expect(existsSync(join(sub, "m.txt"))).toBe(false);
    expect(engineEntries(sub)).toEqual([]);
  });

  rootTest("an Add there inherits the directory's default ACL, as any new file made there does (documented)", async () => {
    const dash = shellCases().find((c) => c.name === "dash")!;
    const t = coTenantTree({ sharing: "group" });
    const { sub } = attackerAclDir(t);
    const report = await applyPatch(new LocalShell({ ...dash.options, cwd: tempDir("sap-cwd-") }), {
      root: t.root,
      sharedDirectories: "allow",
      patch: "*** Begin Patch\n*** Add File: shared/sub/new.txt\n+added\n*** End Patch\n",
    });
    expect(report.ok).toBe(true);
    expect(spawnSync("ls", ["-ld", join(sub, "new.txt")], { encoding: "utf8" }).stdout).toMatch(/^.{10}\+/);
  });

  rootTest("under the default policy too: a root-owned 0755 directory whose default ACL names another user (trusted, so not refused by the trust policy) refuses the Update of its 0640 file", async () => {
    const dash = shellCases().find((c) => c.name === "dash")!;
    const t = coTenantTree({ sharing: "group" });
    const dir = join(t.root, "private");
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const f = join(dir, "s.txt");
    writeFileSync(f, "old secret\n", { mode: 0o640 });
    chmodSync(f, 0o640);
    expect(spawnSync("python3", [aclScript(t.attacker.uid), dir]).status).toBe(0);
    const report = await applyPatch(new LocalShell({ ...dash.options, cwd: tempDir("sap-cwd-") }), { root: t.root, patch: update("private/s.txt") });
    expect(report.errors?.map((x) => [x.code, x.path, x.unsafeDirectory?.reason, x.unsafeDirectory?.path])).toEqual([["unsafe_directory", "private/s.txt", "acl", dir]]);
    expect(readFileSync(f, "utf8")).toBe("old secret\n");
    expect(engineEntries(dir)).toEqual([]);
  });

  rootTest("a source that has an ACL of its own is not refused (its stage gets the directory's, reported as acl_or_xattr_not_preserved as before)", async () => {
    const dash = shellCases().find((c) => c.name === "dash")!;
    const t = coTenantTree({ sharing: "group" });
    const { sub, f } = attackerAclDir(t);
    // the file itself already grants the named user access (an access ACL, from the same entries)
    const py = join(tempDir("sap-acl-"), "acc.py");
    writeFileSync(py, [
      "import os, struct, sys",
      `e = [(1, 6, 0xffffffff), (2, 4, ${t.attacker.uid}), (4, 4, 0xffffffff), (0x10, 4, 0xffffffff), (0x20, 0, 0xffffffff)]`,
      "os.setxattr(sys.argv[1], 'system.posix_acl_access', struct.pack('<I', 2) + b''.join(struct.pack('<HHI', *x) for x in e))",
    ].join("\n"));
    expect(spawnSync("python3", [py, f]).status).toBe(0);
    const report = await applyPatch(new LocalShell({ ...dash.options, cwd: tempDir("sap-cwd-") }), {
      root: t.root,
      sharedDirectories: "allow",
      patch: update("shared/sub/s.txt"),
    });
    expect(report.ok).toBe(true);
    expect(report.files![0]!.warnings?.map((w) => w.code) ?? report.warnings.map((w) => w.code)).toContain("acl_or_xattr_not_preserved");
    expect(engineEntries(sub)).toEqual([]);
  });
});
