/**
 * What SIGKILLed snapshots and searches leave in a shared directory — their
 * private directories `.sap-snap.-XXXXXX` / `.sap-srch.-XXXXXX`, holding
 * hard links of the files read — is removed by the next snapshot or search
 * of the same user there, with the warning `leftovers_removed`, but only
 * when it is provably ours and its program provably gone
 * (lib/remote/programs/sh_reap.ts). FAULT INJECTION: the kills are
 * `kill -9 $$` run from the programs' hooks mid-read (what a timeout or a
 * cancel does: the adapters SIGKILL the process group); the concurrent
 * program is held in a hook until the other has run; the co-tenant (a real
 * second uid) plants look-alikes and swaps a candidate in the reaper's
 * hook. Under sh, dash, bash and BusyBox, as root and as the login user.
 */
import { afterAll, describe, expect } from "bun:test";
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { searchFiles } from "../../lib/remote/search_files.ts";
import { shQuote } from "../../lib/remote/shell.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { asUser, cleanupTemps, HookedShell, rootTest, shellCases, tempDir } from "../support/local_trees.ts";
import type { ShellCase } from "../support/local_trees.ts";
import { asAttacker, attackerPrefix, coTenantTree, loginAccount } from "./co_tenant_fixture.ts";
import type { CoTenantTree } from "./co_tenant_fixture.ts";

afterAll(cleanupTemps, 30_000);

const q = shQuote;
const TIMEOUT = 20_000;
const ALLOW = { sharedDirectories: "allow" as const, timeoutMs: TIMEOUT };
const SECRET = "0123456789abcdef0123456789abcdef";

function shellFor(c: ShellCase, t: CoTenantTree, hook?: string): LocalShell | HookedShell {
  const base = t.owner ? asUser(c, t.owner.uid, t.owner.gid) : c.options;
  const shell = new LocalShell({ ...base, cwd: t.owner ? "/" : tempDir("sap-cwd-") });
  return hook === undefined ? shell : new HookedShell(shell, hook);
}

/** Hook body: the program SIGKILLs itself at `point` (hook name:argument). */
const killAt = (point: string): string => `case "$1:$2" in ${point}) kill -9 $$ ;; esac`;

const leftovers = (t: CoTenantTree): string[] => readdirSync(t.work).filter((n) => n.startsWith(".sap-")).sort();

/** This host's identity as sh_reap.ts records it: boot id and pid namespace inode. */
function hostIdentity(): string {
  return `${readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()} ${statSync("/proc/self/ns/pid").ino}`;
}

/** Field 22 of /proc/<pid>/stat. */
function startTime(pid: number): string {
  const line = readFileSync(`/proc/${pid}/stat`, "utf8");
  return line.slice(line.lastIndexOf(") ") + 2).split(" ")[19]!;
}

/** A directory like a read-only program's private directory, owned by `uid`, with an id and files. */
function plant(dir: string, op: string, owner: string, files: string[], uid: number, gid: number, mode = 0o700): void {
  mkdirSync(dir);
  writeFileSync(join(dir, "id"), `${op} ${SECRET}\n${owner}\n`, { mode: 0o600 });
  for (const f of files) writeFileSync(join(dir, f), `kept ${f}\n`, { mode: 0o600 });
  for (const f of ["id", ...files]) chownSync(join(dir, f), uid, gid);
  chownSync(dir, uid, gid);
  chmodSync(dir, mode);
}

for (const c of shellCases()) {
  for (const who of ["root", "login user"] as const) {
    describe(`leftovers of killed snapshots and searches (${c.name}, as ${who})`, () => {
      const tree = (): CoTenantTree =>
        coTenantTree({ files: { "a.txt": "needle a\n", "b.txt": "needle b\n" }, ...(who === "root" ? {} : { owner: loginAccount() }) });

      /** Kill a snapshot while it reads b.txt (a.txt pinned): its private directory stays, a.txt linked there. */
      async function killSnapshot(t: CoTenantTree): Promise<void> {
        await expect(readSnapshots(shellFor(c, t, killAt("snapshot_pin:1")), t.root, ["shared/a.txt", "shared/b.txt"], ALLOW)).rejects.toThrow();
        expect(leftovers(t).map((n) => n.slice(0, 11))).toEqual([".sap-snap.-"]);
        expect(lstatSync(join(t.work, "a.txt")).nlink).toBe(2);
      }

      /** Kill a search while it opens the pin of a.txt: its private directory stays, a.txt linked there. */
      async function killSearch(t: CoTenantTree): Promise<void> {
        const s = await searchFiles(shellFor(c, t, killAt("search_pin_open:a.txt")), t.root, "needle", { timeoutMs: TIMEOUT });
        expect(s.ok).toBe(false);
        expect(leftovers(t).map((n) => n.slice(0, 11))).toEqual([".sap-srch.-"]);
        expect(lstatSync(join(t.work, "a.txt")).nlink).toBe(2);
      }

      async function snapshotRemoves(t: CoTenantTree): Promise<void> {
        const snaps = await readSnapshots(shellFor(c, t), t.root, ["shared/a.txt"], ALLOW);
        const a = snaps.get("shared/a.txt")!;
        expect(a.rejected).toBeUndefined();
        expect(new TextDecoder().decode(a.bytes)).toBe("needle a\n");
        expect(a.warnings?.map((w) => [w.code, w.path])).toEqual([["leftovers_removed", "shared/a.txt"]]);
        expect(a.warnings![0]!.message).toMatch(/^removed 1 private directory .* in shared;/);
        expect(leftovers(t)).toEqual([]);
        expect(lstatSync(join(t.work, "a.txt")).nlink).toBe(1);
        // nothing left to remove: no warning the next time
        expect((await readSnapshots(shellFor(c, t), t.root, ["shared/a.txt"], ALLOW)).get("shared/a.txt")!.warnings).toBeUndefined();
      }

      async function searchRemoves(t: CoTenantTree): Promise<void> {
        const r = await searchFiles(shellFor(c, t), t.root, "needle", { timeoutMs: TIMEOUT });
        expect(r.errors).toBeUndefined();
        expect(r.matches.map((m) => m.path).sort()).toEqual(["shared/a.txt", "shared/b.txt"]);
        expect(r.warnings?.map((w) => w.code)).toEqual(["leftovers_removed"]);
        expect(r.warnings![0]!.message).toMatch(/^removed 1 private directory .* in shared;/);
        expect(leftovers(t)).toEqual([]);
        expect(lstatSync(join(t.work, "a.txt")).nlink).toBe(1);
        expect((await searchFiles(shellFor(c, t), t.root, "needle", { timeoutMs: TIMEOUT })).warnings).toBeUndefined();
      }

      rootTest("a snapshot killed mid-read leaves its private directory; the next snapshot removes it and warns", async () => {
        const t = tree();
        await killSnapshot(t);
        await snapshotRemoves(t);
      }, 60_000);

      rootTest("a search killed mid-read leaves its private directory; the next snapshot removes it and warns", async () => {
        const t = tree();
        await killSearch(t);
        await snapshotRemoves(t);
      }, 60_000);

      rootTest("a snapshot killed mid-read: the next applyPatch removes its leftover and says so in its report's warnings", async () => {
        const t = tree();
        await killSnapshot(t);
        const report = await applyPatch(shellFor(c, t), {
          root: t.root,
          patch: "*** Begin Patch\n*** Update File: shared/a.txt\n@@\n-needle a\n+needle A\n*** End Patch\n",
          sharedDirectories: "allow",
          timeoutMs: TIMEOUT,
        });
        expect(report.ok).toBe(true);
        expect(report.warnings.filter((w) => w.code === "leftovers_removed").map((w) => w.path)).toEqual(["shared/a.txt"]);
        expect(readFileSync(join(t.work, "a.txt"), "utf8")).toBe("needle A\n");
        expect(leftovers(t)).toEqual([]);
      }, 60_000);

      rootTest("killed snapshots and searches: the next search removes what each left and warns", async () => {
        const t = tree();
        await killSnapshot(t);
        await searchRemoves(t);
        await killSearch(t);
        await searchRemoves(t);
      }, 60_000);

      rootTest("a live snapshot's private directory survives a concurrent snapshot and search in the same directory; all succeed", async () => {
        const t = tree();
        const go = join(t.base, "go");
        const hold = `case "$1:$2" in snapshot_pin:1) i=0; while [ ! -e ${q(go)} ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done ;; esac`;
        const held = readSnapshots(shellFor(c, t, hold), t.root, ["shared/a.txt", "shared/b.txt"], ALLOW);
        for (let i = 0; i < 300 && leftovers(t).length === 0; i++) await Bun.sleep(50);
        const live = leftovers(t);
        expect(live.length).toBe(1);
        const other = await readSnapshots(shellFor(c, t), t.root, ["shared/b.txt"], ALLOW);
        expect(other.get("shared/b.txt")!.rejected).toBeUndefined();
        expect(other.get("shared/b.txt")!.warnings).toBeUndefined();
        const search = await searchFiles(shellFor(c, t), t.root, "needle", { timeoutMs: TIMEOUT });
        expect(search.ok).toBe(true);
        expect(search.warnings).toBeUndefined();
        expect(leftovers(t)).toEqual(live);
        writeFileSync(go, "");
        const first = await held;
        for (const p of ["shared/a.txt", "shared/b.txt"]) {
          expect(first.get(p)!.rejected).toBeUndefined();
          expect(first.get(p)!.warnings).toBeUndefined();
        }
        expect(new TextDecoder().decode(first.get("shared/b.txt")!.bytes)).toBe("needle b\n");
        expect(leftovers(t)).toEqual([]);
      }, 60_000);

      rootTest("look-alikes are left alone: the co-tenant's, ours without a parsable id, writable by others, with foreign contents, of another boot, of a live process, a symlink to one of ours; only the provably dead one of ours goes", async () => {
        const t = tree();
        const me = t.owner ?? { uid: 0, gid: 0 };
        const host = hostIdentity();
        const dead = `${host} ${process.pid} 1`; // this pid is alive, but with another start time: a reused pid
        const alive = `${host} ${process.pid} ${startTime(process.pid)}`;
        const w = (n: string): string => join(t.work, n);
        // the co-tenant's own, with an id saying "dead"
        const theirs = asAttacker(t, `mkdir ${q(w(".sap-snap.-AAAAAA"))} && printf 'snap. ${SECRET}\\n${dead}\\n' > ${q(w(".sap-snap.-AAAAAA/id"))} && : > ${q(w(".sap-snap.-AAAAAA/p0"))}`);
        expect(theirs.status).toBe(0);
        mkdirSync(w(".sap-srch.-BBBBBB"));
        writeFileSync(w(".sap-srch.-BBBBBB/keep"), "mine\n");
        chownSync(w(".sap-srch.-BBBBBB/keep"), me.uid, me.gid);
        chownSync(w(".sap-srch.-BBBBBB"), me.uid, me.gid);
        plant(w(".sap-snap.-CCCCCC"), "snap.", dead, ["p1"], me.uid, me.gid, 0o777);
        plant(w(".sap-snap.-DDDDDD"), "snap.", dead, ["p1", "notes.txt"], me.uid, me.gid);
        plant(w(".sap-srch.-EEEEEE"), "srch.", `00000000-0000-0000-0000-000000000000 ${host.split(" ")[1]} ${process.pid} 1`, ["p1"], me.uid, me.gid);
        plant(w(".sap-srch.-HHHHHH"), "srch.", alive, ["p1"], me.uid, me.gid);
        plant(w(".sap-snap.-IIIIII"), "srch.", dead, ["p1"], me.uid, me.gid); // op does not match its name
        const outsideDead = join(t.outside, ".sap-snap.-FFFFFF");
        plant(outsideDead, "snap.", dead, ["p1"], me.uid, me.gid);
        expect(asAttacker(t, `ln -s ${q(outsideDead)} ${q(w(".sap-snap.-FFFFFF"))}`).status).toBe(0);
        plant(w(".sap-snap.-GGGGGG"), "snap.", dead, ["p0", "p1", "e"], me.uid, me.gid);
        const before = leftovers(t);
        const snaps = await readSnapshots(shellFor(c, t), t.root, ["shared/a.txt"], ALLOW);
        expect(snaps.get("shared/a.txt")!.warnings?.map((x) => x.message.slice(0, 29))).toEqual(["removed 1 private directory ("]);
        expect(leftovers(t)).toEqual(before.filter((n) => n !== ".sap-snap.-GGGGGG"));
        expect(readdirSync(w(".sap-snap.-AAAAAA")).sort()).toEqual(["id", "p0"]);
        expect(readdirSync(w(".sap-srch.-BBBBBB"))).toEqual(["keep"]);
        expect(readdirSync(w(".sap-snap.-CCCCCC")).sort()).toEqual(["id", "p1"]);
        expect(readdirSync(w(".sap-snap.-DDDDDD")).sort()).toEqual(["id", "notes.txt", "p1"]);
        expect(readdirSync(w(".sap-srch.-EEEEEE")).sort()).toEqual(["id", "p1"]);
        expect(readdirSync(w(".sap-srch.-HHHHHH")).sort()).toEqual(["id", "p1"]);
        expect(readdirSync(w(".sap-snap.-IIIIII")).sort()).toEqual(["id", "p1"]);
        expect(readdirSync(outsideDead).sort()).toEqual(["id", "p1"]);
        expect(lstatSync(w(".sap-snap.-FFFFFF")).isSymbolicLink()).toBe(true);
      }, 60_000);

      rootTest("the co-tenant swaps a dead candidate for a symlink to another of ours as the reaper enters it: nothing outside is touched", async () => {
        const t = tree();
        const me = t.owner ?? { uid: 0, gid: 0 };
        const dead = `${hostIdentity()} ${process.pid} 1`;
        const name = join(t.work, ".sap-snap.-JJJJJJ");
        plant(name, "snap.", dead, ["p0"], me.uid, me.gid);
        const outsideDead = join(t.outside, ".sap-snap.-JJJJJJ");
        plant(outsideDead, "snap.", dead, ["p0"], me.uid, me.gid);
        const script = `mv ${q(name)} ${q(`${name}.moved`)} && ln -s ${q(outsideDead)} ${q(name)}`;
        const become = t.owner ? ["/usr/bin/sudo", "-n", "-u", t.attacker.name, "--"] : attackerPrefix(t);
        const hook = `case "$1:$2" in reap_enter:./.sap-snap.-JJJJJJ) ${become.map(q).join(" ")} /bin/sh -c ${q(script)} ;; esac`;
        const snaps = await readSnapshots(shellFor(c, t, hook), t.root, ["shared/a.txt"], ALLOW);
        expect(snaps.get("shared/a.txt")!.rejected).toBeUndefined();
        expect(lstatSync(name).isSymbolicLink()).toBe(true); // the swap really happened
        expect(snaps.get("shared/a.txt")!.warnings).toBeUndefined();
        expect(readdirSync(outsideDead).sort()).toEqual(["id", "p0"]);
        expect(readdirSync(`${name}.moved`).sort()).toEqual(["id", "p0"]);
      }, 60_000);
    });
  }
}

describe("leftovers: bounded work against many planted names (dash, as root)", () => {
  rootTest("2000 look-alike directories of the co-tenant: the snapshot succeeds, none is touched", async () => {
    const c = shellCases().find((x) => x.name === "dash")!;
    const t = coTenantTree({ files: { "a.txt": "needle a\n" } });
    for (let i = 0; i < 2000; i++) {
      const d = join(t.work, `.sap-snap.-${i}`);
      mkdirSync(d);
      writeFileSync(join(d, "id"), "");
      chownSync(join(d, "id"), t.attacker.uid, t.attacker.gid);
      chownSync(d, t.attacker.uid, t.attacker.gid);
    }
    const snaps = await readSnapshots(shellFor(c, t), t.root, ["shared/a.txt"], ALLOW);
    expect(snaps.get("shared/a.txt")!.rejected).toBeUndefined();
    expect(snaps.get("shared/a.txt")!.warnings).toBeUndefined();
    expect(leftovers(t).length).toBe(2000);
    expect(existsSync(join(t.work, ".sap-snap.-1999/id"))).toBe(true);
  }, 60_000);
});
