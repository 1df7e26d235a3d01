/**
 * Contract: searchFiles (SPEC §9 round 2, §6.1) on real trees for every
 * shell under test (dash, bash, BusyBox userland, ssh-root, ssh-sudo),
 * including the attacks: symlinks inside and outside, names that are code,
 * patterns that look like options, and a co-tenant swapping a file for a
 * symlink while it is read.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { formatLineId } from "../../lib/text/line_id.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { shQuote } from "../../lib/remote/shell.ts";
import { searchFiles } from "../../lib/remote/search_files.ts";
import { asUser, cleanupTemps, CountingShell, HookedShell, makeTree, rootTest, shellCases } from "../support/local_trees.ts";
import { shellsUnderTest } from "../support/shells_under_test.ts";
import { ensureTestUsers } from "../support/sshd.ts";

afterAll(cleanupTemps, 30_000);
const shells = shellsUnderTest({ suite: "contract: searchFiles" });

const hits = (r: { matches: { path: string; line: number }[] }): string[] => r.matches.map((m) => `${m.path}:${m.line}`);

for (const c of shells) {
  describe(`searchFiles (${c.name})`, () => {
    test("matching lines with path, line number and N:hh id, in one exec; CRLF endings dropped from the text", async () => {
      const root = makeTree({
        "app/server.conf": "listen 80;\nroot /srv;\nlisten 443 ssl;\n",
        "app/win.conf": "a\r\nlisten 8080;\r\n",
        "notes.md": "nothing here\n",
      });
      const shell = new CountingShell(await c.open());
      const r = await searchFiles(shell, root, "listen [0-9]+");
      expect(r.ok).toBe(true);
      expect(hits(r).sort()).toEqual(["app/server.conf:1", "app/server.conf:3", "app/win.conf:2"]);
      const m = r.matches.find((x) => x.path === "app/win.conf")!;
      expect(m).toEqual({ path: "app/win.conf", line: 2, id: formatLineId("listen 8080;", 2), text: "listen 8080;", cut: false });
      expect(r).toMatchObject({ truncated: false, filesSearched: 3, directoriesSearched: 2 });
      expect(shell.count).toBe(1);
    });

    test("fixed strings, ignore case, a pattern starting with '-', regex metacharacters as data, a subdirectory and a glob", async () => {
      const root = makeTree({
        "a.txt": "-rf /\nx.y\nxzy\nHello\n$(touch CANARY)\n",
        "sub/b.txt": "Hello there\n",
        "sub/c.log": "hello log\n",
      });
      const shell = await c.open();
      expect(hits(await searchFiles(shell, root, "-rf", { fixedString: true }))).toEqual(["a.txt:1"]);
      expect(hits(await searchFiles(shell, root, "-rf"))).toEqual(["a.txt:1"]);
      expect(hits(await searchFiles(shell, root, "x.y", { fixedString: true }))).toEqual(["a.txt:2"]);
      expect(hits(await searchFiles(shell, root, "x.y")).sort()).toEqual(["a.txt:2", "a.txt:3"]);
      expect(hits(await searchFiles(shell, root, "$(touch CANARY)", { fixedString: true }))).toEqual(["a.txt:5"]);
      expect(hits(await searchFiles(shell, root, "hello", { ignoreCase: true })).sort()).toEqual(["a.txt:4", "sub/b.txt:1", "sub/c.log:1"]);
      expect(hits(await searchFiles(shell, root, "hello", { ignoreCase: true, path: "sub", glob: "*.txt" }))).toEqual(["sub/b.txt:1"]);
      expect(existsSync(join(root, "CANARY"))).toBe(false);
      const cwd = new TextDecoder().decode((await shell.exec("pwd")).stdout).trim();
      expect(existsSync(join(cwd, "CANARY"))).toBe(false);
    });

    test("symlinks are never followed: a file link, a directory link to outside, a directory link inside", async () => {
      const outside = makeTree({ "secret.txt": "needle outside\n" });
      const root = makeTree({ "real/a.txt": "needle inside\n" });
      symlinkSync(join(outside, "secret.txt"), join(root, "link.txt"));
      symlinkSync(outside, join(root, "out"));
      symlinkSync("real", join(root, "again"));
      const r = await searchFiles(await c.open(), root, "needle");
      expect(hits(r)).toEqual(["real/a.txt:1"]);
      expect(JSON.stringify(r)).not.toContain("outside");
      const through = await searchFiles(await c.open(), root, "needle", { path: "out" });
      expect(through.errors?.[0]?.code).toBe("symlink_rejected");
    });

    test("binary files are skipped; .git is not entered; names with newlines and code are data", async () => {
      const root = makeTree({
        "data.bin": new Uint8Array([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x00, 0x01, 0x0a]),
        "text.txt": "needle\n",
        ".git/config": "needle\n",
        "new\nline.txt": "needle\n",
        "$(touch pwned).txt": "needle\n",
      });
      const r = await searchFiles(await c.open(), root, "needle");
      expect(hits(r).sort()).toEqual(["$(touch pwned).txt:1", "new\nline.txt:1", "text.txt:1"]);
      expect(r.matches.find((m) => m.path.includes("\n"))!.addressable).toBe(false);
      expect(existsSync(join(root, "pwned"))).toBe(false);
      expect(spawnSync("find", [root, "-name", "pwned"]).stdout.toString()).toBe("");
    });

    test("max_results: truncated with exactly that many; long lines cut without an id", async () => {
      const files: Record<string, string> = {};
      for (let i = 0; i < 4; i++) files[`f${i}.txt`] = "hit\n".repeat(5);
      files["long.txt"] = `hit ${"x".repeat(10_000)}\n`;
      const root = makeTree(files);
      const r = await searchFiles(await c.open(), root, "hit", { maxResults: 12 });
      expect(r.matches).toHaveLength(12);
      expect(r.truncated).toBe(true);
      const all = await searchFiles(await c.open(), root, "hit", { maxResults: 21 });
      expect(all).toMatchObject({ truncated: false });
      expect(all.matches).toHaveLength(21);
      const long = await searchFiles(await c.open(), root, "hit x", { maxLineBytes: 100 });
      expect(long.matches).toEqual([{ path: "long.txt", line: 1, id: null, text: `hit ${"x".repeat(96)}`, cut: true }]);
    });

    test("bad input is a value: empty, multi-line, a regex grep rejects", async () => {
      const root = makeTree({ "a.txt": "a\n" });
      const shell = await c.open();
      expect((await searchFiles(shell, root, "")).errors?.[0]?.code).toBe("invalid_argument");
      expect((await searchFiles(shell, root, "a\nb")).errors?.[0]?.message).toContain("one line");
      const bad = await searchFiles(shell, root, "(unclosed");
      expect(bad.errors?.[0]).toMatchObject({ code: "invalid_argument" });
      expect(bad.errors?.[0]?.message).toContain("fixed_string");
      expect((await searchFiles(shell, root, "(unclosed", { fixedString: true })).ok).toBe(true);
    });

    test("a file in a directory others can write is read through a pin: a swap for a symlink before the pin is skipped as changed, one after it reads the pinned file (FAULT INJECTION at the pin hooks)", async () => {
      const outside = makeTree({ "secret.txt": "needle SECRET\n" });
      const root = makeTree({ "shared/a.txt": "needle a\n", "shared/b.txt": "needle b\n", "safe.txt": "needle safe\n" });
      chmodSync(join(root, "shared"), 0o777);
      const secret = join(outside, "secret.txt");
      const dir = join(root, "shared");
      // Before the hard link: a.txt becomes a symlink (the pin is that symlink: refused).
      // After the pin: b.txt becomes a symlink (the pin is the regular file that was there: read from it).
      const attack = `case "$1:$2" in
search_pin_check:a.txt) mv ${shQuote(join(dir, "a.txt"))} ${shQuote(join(dir, "a.moved"))}; ln -s ${shQuote(secret)} ${shQuote(join(dir, "a.txt"))} ;;
search_pin_open:b.txt) mv ${shQuote(join(dir, "b.txt"))} ${shQuote(join(dir, "b.moved"))}; ln -s ${shQuote(secret)} ${shQuote(join(dir, "b.txt"))} ;;
esac`;
      const r = await searchFiles(new HookedShell(await c.open(), attack), root, "needle");
      expect(hits(r).sort()).toEqual(["safe.txt:1", "shared/b.txt:1"]);
      expect(r.matches.find((m) => m.path === "shared/b.txt")!.text).toBe("needle b");
      expect(JSON.stringify(r)).not.toContain("SECRET");
      expect(r.skipped).toMatchObject({ changed: 1 });
      expect(r.skipped.examples.map((e) => `${e.reason}:${e.path}`)).toEqual(["changed:shared/a.txt"]);
      expect(readdirSync(dir).filter((n) => n.startsWith(".sap-"))).toEqual([]);
      // Without the attack the same shared directory is searched normally.
      const calm = await searchFiles(await c.open(), root, "needle");
      expect(hits(calm).sort()).toEqual(["safe.txt:1", "shared/a.moved:1", "shared/b.moved:1"]);
    });
  });
}

describe("searchFiles as another user (setpriv) under each local shell", () => {
  for (const c of shellCases()) {
    rootTest(`${c.name}: unreadable files and directories are skipped and counted; its own shared directory is pinned`, async () => {
      const { nopasswdUser } = ensureTestUsers();
      const uid = Number(spawnSync("id", ["-u", nopasswdUser]).stdout.toString().trim());
      const gid = Number(spawnSync("id", ["-g", nopasswdUser]).stdout.toString().trim());
      const root = makeTree({ "mine.txt": "needle\n", "closed/x.txt": "needle\n", "locked.txt": "needle\n", "group/g.txt": "needle\n" });
      chmodSync(root, 0o755);
      for (const p of ["", "mine.txt", "closed", "locked.txt", "group", "group/g.txt"]) chownSync(join(root, p), uid, gid);
      chmodSync(join(root, "closed"), 0o700);
      chownSync(join(root, "closed"), 0, 0);
      chmodSync(join(root, "locked.txt"), 0o000);
      chownSync(join(root, "locked.txt"), 0, 0);
      chmodSync(join(root, "group"), 0o775);
      const shell = new LocalShell({ ...asUser(c, uid, gid), cwd: "/" });
      const r = await searchFiles(shell, root, "needle");
      expect(r.ok).toBe(true);
      expect(hits(r).sort()).toEqual(["group/g.txt:1", "mine.txt:1"]);
      expect(r.skipped).toMatchObject({ unreadable: 2 });
      expect(r.skipped.examples.map((e) => e.path).sort()).toEqual(["closed", "locked.txt"]);
    });
  }
});

describe("searchFiles: many files in batches", () => {
  test("1000 files over several grep batches, matches in the right files", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 1000; i++) files[`d${i % 7}/f${i}.txt`] = i % 97 === 0 ? `line\nneedle ${i}\n` : "line\n";
    const root = makeTree(files);
    mkdirSync(join(root, "empty"));
    writeFileSync(join(root, "d0", "needle-name-only.txt"), "no\n");
    const r = await searchFiles(new LocalShell(), root, "needle [0-9]+", { maxResults: 1000 });
    expect(r.filesSearched).toBe(1001);
    const expected = Array.from({ length: 1000 }, (_, i) => i).filter((i) => i % 97 === 0).map((i) => `d${i % 7}/f${i}.txt:2`);
    expect(hits(r).sort()).toEqual(expected.sort());
  });
});
