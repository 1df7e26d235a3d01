/**
 * searchFiles in a directory another user can write: that user (a real
 * second uid, through setpriv) swaps a regular file for a FIFO between the
 * search's check and its read (FAULT INJECTION: the program's pin hooks
 * run the attacker's action at that exact moment). Before the fix the
 * search opened the name after `[ -f ]`, and the open of a FIFO nobody
 * writes waited until the call's timeout; now the file is hard-linked into
 * the search's private directory and only that pin — a regular file
 * nobody else can reach — is opened, so nothing waits: a FIFO linked
 * instead is skipped as changed, and a swap after the pin reads the file
 * that was pinned. Files it may not hard-link (another user's, under
 * fs.protected_hardlinks) are skipped as unpinnable, never opened by name.
 *
 * The calls get a 20 s timeout: a search that waited on the FIFO would
 * come back as `timeout`, which the assertions on `ok` catch.
 */
import { afterAll, describe, expect } from "bun:test";
import { chownSync, lstatSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { searchFiles } from "../../lib/remote/search_files.ts";
import { shQuote } from "../../lib/remote/shell.ts";
import { asUser, cleanupTemps, HookedShell, rootTest, shellCases, tempDir } from "../support/local_trees.ts";
import type { ShellCase } from "../support/local_trees.ts";
import { attackerPrefix, coTenantTree, loginAccount } from "./co_tenant_fixture.ts";
import type { CoTenantTree } from "./co_tenant_fixture.ts";

afterAll(cleanupTemps, 30_000);

const q = shQuote;
const TIMEOUT = 20_000;

/**
 * Hook body: at `hook` for file `name`, the attacker moves it away and puts
 * a FIFO in its place. The hook runs as the search's user: as root it
 * becomes the attacker with setpriv; as the login user, whose harness rule
 * allows sudo, with `sudo -n -u <attacker>` — either way the swap is the
 * other uid's own act, allowed only by its write permission there.
 */
function fifoSwap(t: CoTenantTree, hook: string, name: string): string {
  const from = join(t.work, name);
  const script = `mv ${q(from)} ${q(`${from}.moved`)} && mkfifo -m 0666 ${q(from)}`;
  const become = t.owner ? ["/usr/bin/sudo", "-n", "-u", t.attacker.name, "--"] : attackerPrefix(t);
  return `case "$1:$2" in ${hook}:${name}) ${become.map(q).join(" ")} /bin/sh -c ${q(script)} ;; esac`;
}

function shellFor(c: ShellCase, t: CoTenantTree): LocalShell {
  const base = t.owner ? asUser(c, t.owner.uid, t.owner.gid) : c.options;
  return new LocalShell({ ...base, cwd: t.owner ? "/" : tempDir("sap-cwd-") });
}

const isFifo = (path: string): boolean => lstatSync(path).isFIFO();
const engineEntries = (t: CoTenantTree): string[] => readdirSync(t.work).filter((n) => n.startsWith(".sap-"));

for (const c of shellCases()) {
  for (const who of ["root", "login user"] as const) {
    describe(`searchFiles against a co-tenant's FIFO swap (${c.name}, as ${who})`, () => {
      const tree = (): CoTenantTree =>
        coTenantTree({ files: { "a.txt": "needle a\n", "b.txt": "needle b\n" }, ...(who === "root" ? {} : { owner: loginAccount() }) });

      rootTest("swapped for a FIFO between the check and the pin: skipped as changed, the search does not wait", async () => {
        const t = tree();
        const hooked = new HookedShell(shellFor(c, t), fifoSwap(t, "search_pin_check", "a.txt"));
        const r = await searchFiles(hooked, t.root, "needle", { timeoutMs: TIMEOUT });
        expect(r.errors).toBeUndefined();
        expect(r.ok).toBe(true);
        expect(isFifo(join(t.work, "a.txt"))).toBe(true); // the attack really happened
        expect(r.matches.map((m) => m.path)).toEqual(["shared/b.txt"]);
        expect(r.skipped.examples).toEqual([{ path: "shared/a.txt", reason: "changed" }]);
        expect(engineEntries(t)).toEqual([]);
      }, 40_000);

      rootTest("swapped for a FIFO after the pin: the pinned file is read, the FIFO never opened", async () => {
        const t = tree();
        const hooked = new HookedShell(shellFor(c, t), fifoSwap(t, "search_pin_open", "a.txt"));
        const r = await searchFiles(hooked, t.root, "needle", { timeoutMs: TIMEOUT });
        expect(r.ok).toBe(true);
        expect(isFifo(join(t.work, "a.txt"))).toBe(true);
        expect(r.matches.map((m) => `${m.path}:${m.text}`).sort()).toEqual(["shared/a.txt:needle a", "shared/b.txt:needle b"]);
        expect(r.skipped).toMatchObject({ changed: 0, unpinnable: 0 });
        expect(engineEntries(t)).toEqual([]);
      }, 40_000);
    });
  }
}

describe("searchFiles and files it may not hard-link (as the login user)", () => {
  rootTest("the attacker's own file in the shared directory is skipped unpinnable (hard_link_refused), never read by name; swapped for a FIFO it is skipped as changed, without waiting", async () => {
    if (readFileSync("/proc/sys/fs/protected_hardlinks", "utf8").trim() !== "1") throw new Error("this test needs fs.protected_hardlinks=1 (the Linux default)");
    const c = shellCases().find((x) => x.name === "dash")!;
    const t = coTenantTree({ files: { "mine.txt": "needle mine\n" }, owner: loginAccount() });
    const theirs = join(t.work, "theirs.txt");
    writeFileSync(theirs, "needle theirs\n", { mode: 0o644 });
    chownSync(theirs, t.attacker.uid, t.attacker.gid);
    const r = await searchFiles(shellFor(c, t), t.root, "needle", { timeoutMs: TIMEOUT });
    expect(r.ok).toBe(true);
    expect(r.matches.map((m) => m.path)).toEqual(["shared/mine.txt"]);
    expect(r.skipped.unpinnable).toBe(1);
    expect(r.skipped.examples).toEqual([{ path: "shared/theirs.txt", reason: "unpinnable", cause: "hard_link_refused" }]);
    expect(lstatSync(theirs).nlink).toBe(1);
    expect(engineEntries(t)).toEqual([]);
    // whenever the search gets to it, the attacker makes it a FIFO: link(2) refuses a FIFO too, and it is no regular file any more
    const hooked = new HookedShell(shellFor(c, t), fifoSwap(t, "search_pin_check", "theirs.txt"));
    const swapped = await searchFiles(hooked, t.root, "needle", { timeoutMs: TIMEOUT });
    expect(swapped.ok).toBe(true);
    expect(isFifo(theirs)).toBe(true); // the attack really happened
    expect(swapped.skipped.examples).toEqual([{ path: "shared/theirs.txt", reason: "changed" }]);
    expect(engineEntries(t)).toEqual([]);
  }, 40_000);
});
