/**
 * Contract: listFiles (SPEC §9 round 2, §6) on real trees for every shell
 * under test (dash, bash, BusyBox userland, ssh-root, ssh-sudo).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { listFiles } from "../../lib/remote/list_files.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { asUser, cleanupTemps, CountingShell, makeTree, rootTest, shellCases, tempDir } from "../support/local_trees.ts";
import { shellsUnderTest } from "../support/shells_under_test.ts";
import { ensureTestUsers } from "../support/sshd.ts";

afterAll(cleanupTemps, 30_000);
const shells = shellsUnderTest({ suite: "contract: listFiles" });

const paths = (r: { entries: { path: string }[] }): string[] => r.entries.map((e) => e.path);

for (const c of shells) {
  describe(`listFiles (${c.name})`, () => {
    test("kinds, sizes, modes and depth, breadth first, in one exec; symlinks listed, never followed", async () => {
      const outside = makeTree({ "secret.txt": "top secret", "deeper/x.txt": "x" });
      const root = makeTree({
        "a.txt": { content: "hello\n", mode: 0o640 },
        "src/b.ts": "b",
        "src/deep/c.ts": "cc",
        ".env": "SECRET=1",
        "empty/": { dir: true, mode: 0o750 },
      });
      symlinkSync(outside, join(root, "src", "out-link"));
      symlinkSync("a.txt", join(root, "file-link"));
      const shell = new CountingShell(await c.open());
      const one = await listFiles(shell, root);
      expect(one.ok).toBe(true);
      expect(paths(one)).toEqual([".env", "a.txt", "empty", "file-link", "src"]);
      expect(one.entries.find((e) => e.path === "a.txt")).toMatchObject({ kind: "file", size: 6, mode: 0o640, depth: 1 });
      expect(one.entries.find((e) => e.path === "empty")).toMatchObject({ kind: "directory", size: null, mode: 0o750 });
      expect(one.entries.find((e) => e.path === "file-link")).toMatchObject({ kind: "symlink", size: null });
      expect(one.entries.every((e) => typeof e.mtime === "number" && e.mtime > 1_500_000_000)).toBe(true);
      const all = await listFiles(shell, root, { depth: 5 });
      expect(paths(all)).toEqual([".env", "a.txt", "empty", "file-link", "src", "src/b.ts", "src/deep", "src/deep/c.ts", "src/out-link"]);
      expect(all.entries.find((e) => e.path === "src/out-link")!.kind).toBe("symlink");
      expect(all.entries.find((e) => e.path === "src/deep/c.ts")!.depth).toBe(3);
      expect(JSON.stringify(all)).not.toContain("secret");
      expect(shell.count).toBe(2);
    });

    test("a subdirectory, a glob on names, a glob with a slash on paths below it", async () => {
      const root = makeTree({ "src/a.ts": "", "src/b.js": "", "src/lib/c.ts": "", "src/lib/d.md": "", "top.ts": "" });
      const shell = await c.open();
      const ts = await listFiles(shell, root, { path: "src", depth: 3, glob: "*.ts" });
      expect(ts).toMatchObject({ ok: true, path: "src", truncated: false });
      expect(paths(ts)).toEqual(["src/a.ts", "src/lib/c.ts"]);
      const slash = await listFiles(shell, root, { path: "src/", depth: 3, glob: "lib/*" });
      expect(paths(slash)).toEqual(["src/lib/c.ts", "src/lib/d.md"]);
      const dot = await listFiles(shell, root, { path: ".", glob: "*.ts" });
      expect(paths(dot)).toEqual(["top.ts"]);
    });

    test("the entry cap: truncated, shallow entries first", async () => {
      const files: Record<string, string> = {};
      for (let i = 0; i < 30; i++) files[`d/sub/f${String(i).padStart(2, "0")}`] = "";
      for (let i = 0; i < 5; i++) files[`top${i}`] = "";
      const root = makeTree(files);
      const r = await listFiles(await c.open(), root, { depth: 3, maxEntries: 10 });
      expect(r.truncated).toBe(true);
      expect(r.entries).toHaveLength(10);
      for (const top of ["d", "top0", "top4", "d/sub"]) expect(paths(r)).toContain(top);
      const exact = await listFiles(await c.open(), root, { maxEntries: 6 });
      expect(exact).toMatchObject({ truncated: false });
      expect(exact.entries).toHaveLength(6);
    });

    test("names with newlines, control characters, quotes and $(…) are data; unaddressable ones are marked", async () => {
      const shell = await c.open();
      const cwd = new TextDecoder().decode((await shell.exec("pwd")).stdout).trim();
      const names = ["new\nline.txt", "esc\u001b[31mred", "$(touch pwned)", "-rf", "it's \"q\"", "ünï 🚀.txt", " sp "];
      const root = makeTree(Object.fromEntries(names.map((n) => [n, "x"])), "sap $(x) 'q' ü-");
      const r = await listFiles(shell, root);
      expect(r.ok).toBe(true);
      expect(paths(r).sort()).toEqual([...names].sort());
      for (const e of r.entries) {
        const bad = e.path.includes("\n") || e.path.includes("\u001b");
        expect(e.addressable).toBe(bad ? false : undefined);
      }
      expect(existsSync(join(cwd, "pwned"))).toBe(false);
      expect(spawnSync("find", [root, "-name", "pwned"]).stdout.toString()).toBe("");
    });

    test("refusals are values: .., absolute, through a symlink, a file, a missing directory, a missing root", async () => {
      const outside = makeTree({ "secret.txt": "s" });
      const root = makeTree({ "a.txt": "a", "real/x": "x" });
      symlinkSync(outside, join(root, "evil"));
      symlinkSync("real", join(root, "inner"));
      const shell = await c.open();
      const cases: [string, string][] = [
        ["../", "invalid_path"],
        ["a/../b", "invalid_path"],
        ["/etc", "invalid_path"],
        ["evil", "symlink_rejected"],
        ["evil/sub", "symlink_rejected"],
        ["inner", "symlink_rejected"],
        ["a.txt", "not_regular_file"],
        ["nope", "not_found"],
        ["x/.sap-lock", "invalid_path"],
      ];
      for (const [path, code] of cases) {
        const r = await listFiles(shell, root, { path });
        expect({ path, ok: r.ok, code: r.errors?.[0]?.code as string | undefined }).toEqual({ path, ok: false, code });
        expect(r.entries).toEqual([]);
      }
      const gone = await listFiles(shell, join(tempDir(), "missing"));
      expect(gone.errors?.[0]?.code).toBe("not_found");
      expect(gone.errors?.[0]?.message).toContain("does not exist");
    });

    test("the engine's own .sap-* temporaries are not listed", async () => {
      const root = makeTree({ "a.txt": "a", ".sap-stage-x": "s", "d/.sap-lock-y/owner": "o" });
      const r = await listFiles(await c.open(), root, { depth: 3 });
      expect(paths(r)).toEqual(["a.txt", "d"]);
    });
  });
}

describe("listFiles as another user (setpriv) under each local shell", () => {
  for (const c of shellCases()) {
    rootTest(`${c.name}: a directory it cannot enter is reported unreadable, the walk goes on`, async () => {
      const { nopasswdUser } = ensureTestUsers();
      const uid = Number(spawnSync("id", ["-u", nopasswdUser]).stdout.toString().trim());
      const gid = Number(spawnSync("id", ["-g", nopasswdUser]).stdout.toString().trim());
      const root = makeTree({ "open/a.txt": "a", "closed/secret.txt": "s", "b.txt": "b" });
      chmodSync(root, 0o755);
      for (const dir of [root, join(root, "open"), join(root, "closed")]) chownSync(dir, uid, gid);
      chmodSync(join(root, "closed"), 0o700);
      chownSync(join(root, "closed"), 0, 0);
      const shell = new LocalShell({ ...asUser(c, uid, gid), cwd: "/" });
      const r = await listFiles(shell, root, { depth: 3 });
      expect(r.ok).toBe(true);
      expect(paths(r)).toEqual(["b.txt", "closed", "open", "open/a.txt"]);
      expect(r).toMatchObject({ unreadable: ["closed"], unreadableCount: 1 });
      const direct = await listFiles(shell, root, { path: "closed" });
      expect(direct.errors?.[0]?.code).toBe("permission_denied");
    });
  }
});

describe("listFiles: a directory swapped for a symlink during the walk is not followed", () => {
  test("FAULT INJECTION (a shell wrapper swaps the directory right after it was listed): the walk skips it", async () => {
    const outside = makeTree({ "secret.txt": "top secret" });
    const root = makeTree({ "d/inner.txt": "i", "z.txt": "z" });
    mkdirSync(join(root, "d", "sub"));
    writeFileSync(join(root, "d", "sub", "f"), "f");
    // The swap runs between the listing of the root and the entering of d:
    // the program is wrapped so that the first `sap_walk_enter` of d sees a symlink.
    const base = new LocalShell();
    const original = 'sap_walk_enter() { sap_cd "$WD"; }';
    const swapping = `sap_walk_enter() { case $WR in d) mv "$WD" "$WD.moved"; ln -s '${outside}' "$WD" ;; esac; sap_cd "$WD"; }`;
    const shell = {
      label: "local",
      exec: (command: string, options?: Parameters<LocalShell["exec"]>[1]) => {
        if (!command.includes(original)) throw new Error("the fault cannot be injected: sap_walk_enter changed");
        return base.exec(command.replace(original, () => swapping), options);
      },
    };
    const r = await listFiles(shell, root, { depth: 3 });
    expect(r.ok).toBe(true);
    expect(paths(r)).toEqual(["d", "z.txt"]);
    expect(r.unreadable).toEqual(["d"]);
    expect(JSON.stringify(r)).not.toContain("secret");
  });
});
