/**
 * The root's ancestors are judged like the root (issue 26 item 5). A root
 * whose parent another user can write (no sticky bit protecting the root's
 * name) lets that user rename the root and put a link to any directory at
 * its path between two operations. Such a root is refused
 * `unsafe_directory` under every policy — `sharedDirectories: "allow"`
 * included — naming the parent with its owner and mode, unless the caller
 * opts in with `trustRootAncestors: true`; then the root is pinned (device
 * and inode) for the whole operation and a root swapped in between is
 * refused.
 *
 * The attacker is a real second uid (setpriv), swapping the root for a
 * symlink to the outside tree and back in a tight loop while the engine
 * commits `cron.d/job` over and over: every commit must be refused, and
 * nothing may appear outside. `SAP_ROOT_SWAP_COMMITS` sets the number of
 * commits (20 in `npm test`; `npm run hardening` runs 300).
 */
import { afterAll, describe, expect } from "bun:test";
import { spawn } from "node:child_process";
import { existsSync, lstatSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { shQuote } from "../../lib/remote/shell.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";
import { cleanupTemps, HookedShell, rootTest, shellCases, tempDir } from "../support/local_trees.ts";
import { asAttacker, attackerPrefix, coTenantTree, digestChanges, treeDigest } from "./co_tenant_fixture.ts";

afterAll(cleanupTemps, 30_000);

const q = shQuote;
const COMMITS = Number(process.env.SAP_ROOT_SWAP_COMMITS ?? 20);
const cronAdd = ["*** Begin Patch", "*** Add File: cron.d/job", "+* * * * * root /tmp/pwned", "*** End Patch"].join("\n");

describe("a root whose parent another user can write", () => {
  for (const c of shellCases().filter((s) => ["dash", "bash", "busybox"].includes(s.name))) {
    rootTest(`${c.name}: is refused unsafe_directory in allow mode, naming the parent, owner and mode; nothing is written`, async () => {
      const t = coTenantTree({ sharing: "parent" });
      const before = treeDigest(t.base);
      const report = await applyPatch(new LocalShell({ ...c.options, cwd: tempDir("sap-cwd-") }), { root: t.root, patch: cronAdd, sharedDirectories: "allow" });
      expect(report.ok).toBe(false);
      const error = report.errors![0]!;
      expect(error.code).toBe("unsafe_directory");
      expect(error.message).toContain(`the directory ${t.base}, above the root ${t.root}`);
      expect(error.message).toContain("trustRootAncestors");
      expect(error.unsafeDirectory).toMatchObject({ path: t.base, mode: "2775", uid: 0 });
      expect(digestChanges(before, treeDigest(t.base))).toEqual([]);
    }, 30_000);
  }

  rootTest(`dash: refused every time over ${COMMITS} commits while the other user swaps the root for a link to outside and back; nothing lands outside`, async () => {
    const t = coTenantTree({ sharing: "parent" });
    const decoy = join(t.outside, "dir");
    const before = treeDigest(t.outside);
    // the swap loop, as the other uid: the root's path is the real root, a link to outside, or nothing
    const loop = `while :; do mv ${q(t.root)} ${q(t.root + ".x")} 2>/dev/null; ln -s ${q(decoy)} ${q(t.root)} 2>/dev/null; rm -f ${q(t.root)}; mv ${q(t.root + ".x")} ${q(t.root)} 2>/dev/null; done`;
    const attacker = spawn(attackerPrefix(t)[0]!, [...attackerPrefix(t).slice(1), "/bin/sh", "-c", loop], { detached: true, stdio: "ignore" });
    const codes = new Map<string, number>();
    try {
      const dash = shellCases().find((s) => s.name === "dash")!;
      const shell = new LocalShell({ ...dash.options, cwd: tempDir("sap-cwd-") });
      for (let i = 0; i < COMMITS; i++) {
        const report = await applyPatch(shell, { root: t.root, patch: cronAdd, sharedDirectories: "allow" });
        expect(report.ok).toBe(false);
        const code = report.errors?.[0]?.code ?? "none";
        codes.set(code, (codes.get(code) ?? 0) + 1);
      }
    } finally {
      process.kill(-attacker.pid!, "SIGKILL");
    }
    // the loop may have been stopped half way: put the real root back at its path
    if (existsSync(t.root + ".x")) {
      rmSync(t.root, { force: true });
      asAttacker(t, `mv ${q(t.root + ".x")} ${q(t.root)}`);
    }
    expect(digestChanges(before, treeDigest(t.outside))).toEqual([]);
    expect(existsSync(join(decoy, "cron.d"))).toBe(false);
    expect(readdirSync(join(t.root)).sort()).toEqual(["shared"]);
    // the refusals are the ancestor's, or a root that is not there (or not a directory) at that
    // instant — which of them depends on where the loop is — never a write
    const seen = JSON.stringify(Object.fromEntries(codes));
    for (const code of codes.keys()) expect(["unsafe_directory", "not_found", "conflict", "remote_error"], seen).toContain(code);
  }, 60_000 + COMMITS * 2_000);

  rootTest("dash, trustRootAncestors: true: accepted, the root pinned: a root swapped for a link between the read and the commit is refused, nothing lands outside", async () => {
    const t = coTenantTree({ sharing: "parent" });
    const dash = shellCases().find((s) => s.name === "dash")!;
    const inner = new LocalShell({ ...dash.options, cwd: tempDir("sap-cwd-") });
    const ok = await applyPatch(inner, { root: t.root, patch: cronAdd, sharedDirectories: "allow", trustRootAncestors: true });
    expect(ok.ok).toBe(true);
    expect(existsSync(join(t.root, "cron.d/job"))).toBe(true);
    // refuse policy with the opt-in: every directory counts as shared, so it is still refused
    const refused = await applyPatch(inner, { root: t.root, patch: cronAdd.replace("cron.d/job", "cron.d/job2"), trustRootAncestors: true });
    expect(refused.errors?.[0]?.code).toBe("unsafe_directory");
    const decoy = join(t.outside, "dir");
    const before = treeDigest(t.outside);
    let execs = 0;
    const swapping: RemoteShell = {
      label: "local",
      exec(command: string, options?: ExecOptions): Promise<ExecResult> {
        // after the snapshot, before the commit
        if (execs++ === 1) expect(asAttacker(t, `mv ${q(t.root)} ${q(t.root + ".x")} && ln -s ${q(decoy)} ${q(t.root)}`).status).toBe(0);
        return inner.exec(command, options);
      },
    };
    const report = await applyPatch(swapping, { root: t.root, patch: cronAdd.replace("cron.d/job", "cron.d/job3"), sharedDirectories: "allow", trustRootAncestors: true });
    rmSync(t.root, { force: true });
    expect(report.ok).toBe(false);
    expect(digestChanges(before, treeDigest(t.outside))).toEqual([]);
  }, 60_000);

  for (const c of shellCases().filter((s) => ["dash", "busybox"].includes(s.name))) {
    rootTest(`${c.name}, trustRootAncestors: true: a root swapped for another real directory at the same path during the commit is refused; nothing is written in the other (the private directories are not there; the root pin at each directory entry is the second line)`, async () => {
      const t = coTenantTree({ sharing: "parent", files: { "a.txt": "a\n" } });
      const fake = t.root + ".fake";
      const prefix = attackerPrefix(t).map((w) => q(w)).join(" ");
      // as the other uid, right before the renames: the real root aside, its own look-alike at the path
      const swap = `${prefix} /bin/sh -c ${q(`mkdir -p ${q(fake + "/shared")} && chmod -R 777 ${q(fake)} && mv ${q(t.root)} ${q(t.root + ".x")} && mv ${q(fake)} ${q(t.root)}`)}`;
      const shell = new HookedShell(new LocalShell({ ...c.options, cwd: tempDir("sap-cwd-") }), `case "$1:$2" in before_finalize:0) ${swap} ;; esac`);
      const report = await applyPatch(shell, { root: t.root, patch: cronAdd.replace("cron.d/job", "shared/new.txt"), sharedDirectories: "allow", trustRootAncestors: true });
      expect(lstatSync(t.root + ".x").isDirectory()).toBe(true); // the swap happened
      expect(report.ok).toBe(false);
      // nothing at all was made in the look-alike (no file, no private directory, no temporary)
      const inFake = Bun.spawnSync(["find", t.root, "-mindepth", "1", "-not", "-path", join(t.root, "shared")]).stdout.toString().trim();
      expect(inFake).toBe("");
      expect(existsSync(join(t.root + ".x", "shared/new.txt"))).toBe(false);
    }, 60_000);
  }
});
