import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { commitRemote } from "../../lib/commit.ts";
import { LocalShell } from "../../lib/local_shell.ts";
import { readSnapshots } from "../../lib/snapshot.ts";
import { sha256Hex } from "../../lib/sha256.ts";
import { asUser, assertNoLeftovers, busyboxBinary, bytes, cleanupTemps, localShell, makeTree, P, plan, setPosixAcl, shellCases, tempDir } from "../support/local_trees.ts";

afterAll(cleanupTemps);
const isRoot = process.getuid?.() === 0;
/** Tests that need root (setpriv, chown) or GNU tools are not registered elsewhere (a skip would fail CI). */
const noTest = (..._args: unknown[]): void => {};
if (!isRoot) console.warn(`${import.meta.file}: not root, the setpriv/chown tests are not registered`);
const read = (root: string, path: string): string => readFileSync(join(root, path), "utf8");

for (const c of shellCases()) {
  describe(`commitRemote (${c.name})`, () => {
    test("update, add with new parents, delete and move in one batch", async () => {
      const root = makeTree({ "a.txt": "old a\n", "d/gone.txt": "bye\n", "src/m.txt": "move me\n" });
      const report = await commitRemote(localShell(c), root, plan([
        P.update("a.txt", "old a\n", "new a\n"),
        P.add("n1/n2/new.txt", "fresh\n"),
        P.delete("d/gone.txt", "bye\n"),
        P.move("src/m.txt", "dst/deep/m.txt", "move me\n", "moved\n"),
      ]));
      expect(report.errors).toBeUndefined();
      expect(report.ok).toBe(true);
      expect(report.atomicity).toBe("batch_preflight_per_file_commit");
      expect(report.elevated).toBe(false);
      expect(report.operation_id).toMatch(/^[0-9a-f]{16}$/);
      expect(read(root, "a.txt")).toBe("new a\n");
      expect(read(root, "n1/n2/new.txt")).toBe("fresh\n");
      expect(existsSync(join(root, "d/gone.txt"))).toBe(false);
      expect(existsSync(join(root, "src/m.txt"))).toBe(false);
      expect(read(root, "dst/deep/m.txt")).toBe("moved\n");
      // Created directories follow the login umask (022 here), not the stages' 077.
      expect(statSync(join(root, "n1/n2")).mode & 0o777).toBe(0o755);
      expect(statSync(join(root, "n1/n2/new.txt")).mode & 0o777).toBe(0o644);
      const [u, a, d, m] = report.files;
      expect(u).toMatchObject({ op: "update", path: "a.txt", previous_sha256: sha256Hex("old a\n"), new_sha256: sha256Hex("new a\n"), bytes_written: 6, metadata_preserved: { mode: true, owner: true } });
      expect(a).toMatchObject({ op: "add", previous_sha256: null, metadata_preserved: null });
      expect(d).toMatchObject({ op: "delete", new_sha256: null, bytes_written: 0 });
      expect(m).toMatchObject({ op: "move", move_to: "dst/deep/m.txt", metadata_preserved: { mode: true, owner: true } });
      expect(u!.diff).toContain("a/a.txt");
      assertNoLeftovers(root);
    });

    test("Add never overwrites an existing file (conflict, content kept)", async () => {
      const root = makeTree({ "exists.txt": "precious\n" });
      const report = await commitRemote(localShell(c), root, plan([P.add("exists.txt", "clobber\n")]));
      expect(report.ok).toBe(false);
      expect(report.errors![0]).toMatchObject({ code: "conflict", path: "exists.txt", expected_state: "missing", actual_state: "file", actual_sha256: sha256Hex("precious\n"), retryable: true });
      expect(read(root, "exists.txt")).toBe("precious\n");
      assertNoLeftovers(root);
    });

    test("Delete with a wrong expected SHA keeps the file", async () => {
      const root = makeTree({ "keep.txt": "current\n" });
      const report = await commitRemote(localShell(c), root, plan([P.delete("keep.txt", "what the model thought\n")]));
      expect(report.errors![0]).toMatchObject({ code: "conflict", path: "keep.txt", expected_sha256: sha256Hex("what the model thought\n"), actual_sha256: sha256Hex("current\n") });
      expect(report.errors![0]!.message).toContain("Read the file again");
      expect(read(root, "keep.txt")).toBe("current\n");
      assertNoLeftovers(root);
    });

    test("one conflict in a batch changes nothing (same inodes, same bytes)", async () => {
      const root = makeTree({ "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c changed\n" });
      const before = ["a.txt", "b.txt", "c.txt"].map((p) => statSync(join(root, p)).ino);
      const report = await commitRemote(localShell(c), root, plan([
        P.update("a.txt", "a\n", "A\n"),
        P.delete("b.txt", "b\n"),
        P.update("c.txt", "c\n", "C\n"),
        P.add("d.txt", "D\n"),
      ]));
      expect(report.ok).toBe(false);
      expect(report.errors!.map((e) => [e.code, e.path])).toEqual([["conflict", "c.txt"]]);
      expect(["a.txt", "b.txt", "c.txt"].map((p) => statSync(join(root, p)).ino)).toEqual(before);
      expect([read(root, "a.txt"), read(root, "b.txt"), read(root, "c.txt")]).toEqual(["a\n", "b\n", "c changed\n"]);
      expect(existsSync(join(root, "d.txt"))).toBe(false);
      assertNoLeftovers(root);
    });

    test("every conflicting path is reported, each with expected and actual state", async () => {
      const root = makeTree({ "x.txt": "x2\n", "dir/": { dir: true } });
      const report = await commitRemote(localShell(c), root, plan([
        P.update("x.txt", "x1\n", "x3\n"),
        P.delete("missing.txt", "was here\n"),
        P.add("dir", "not a file\n"),
      ]));
      const byPath = Object.fromEntries(report.errors!.map((e) => [e.path, e]));
      expect(byPath["x.txt"]).toMatchObject({ code: "conflict", actual_state: "file" });
      expect(byPath["missing.txt"]).toMatchObject({ code: "conflict", actual_state: "missing", actual_sha256: null });
      expect(byPath["dir"]).toMatchObject({ code: "conflict", actual_state: "directory" });
      assertNoLeftovers(root);
    });

    test("modes are kept exactly: 0755, 0600, setuid 04755, setgid 02755", async () => {
      const modes = { "exec.sh": 0o755, "private.key": 0o600, "suid.bin": 0o4755, "sgid.bin": 0o2755 };
      const root = makeTree(Object.fromEntries(Object.entries(modes).map(([p, mode]) => [p, { content: "v1\n", mode }])));
      const report = await commitRemote(localShell(c), root, plan(Object.keys(modes).map((p) => P.update(p, "v1\n", "v2\n"))));
      expect(report.ok).toBe(true);
      for (const [p, mode] of Object.entries(modes)) {
        expect(statSync(join(root, p)).mode & 0o7777).toBe(mode);
        expect(read(root, p)).toBe("v2\n");
      }
      expect(report.files.every((f) => f.metadata_preserved?.mode === true)).toBe(true);
      assertNoLeftovers(root);
    });

    (isRoot ? test : noTest)("owner and group are kept (file owned by uid 1234)", async () => {
      const root = makeTree({ "owned.txt": { content: "v1\n", mode: 0o4750 } });
      chownSync(join(root, "owned.txt"), 1234, 2345);
      chmodSync(join(root, "owned.txt"), 0o4750); // chown cleared setuid
      const report = await commitRemote(localShell(c), root, plan([P.update("owned.txt", "v1\n", "v2\n")]));
      expect(report.ok).toBe(true);
      const st = statSync(join(root, "owned.txt"));
      expect([st.uid, st.gid, st.mode & 0o7777]).toEqual([1234, 2345, 0o4750]);
      expect(report.files[0]!.metadata_preserved).toEqual({ mode: true, owner: true });
      assertNoLeftovers(root);
    });

    (isRoot ? test : noTest)("as a user who may not chown: owner_not_preserved warning, content replaced", async () => {
      const root = makeTree({ "shared/root-owned.txt": { content: "v1\n", mode: 0o666 } });
      chmodSync(root, 0o755);
      chownSync(join(root, "shared"), 65534, 65534);
      const shell = new LocalShell(asUser(c, 65534, 65534));
      const report = await commitRemote(shell, root, plan([P.update("shared/root-owned.txt", "v1\n", "v2\n")]));
      expect(report.ok).toBe(true);
      expect(read(root, "shared/root-owned.txt")).toBe("v2\n");
      expect(report.files[0]!.metadata_preserved).toEqual({ mode: true, owner: false });
      expect(report.files[0]!.warnings.map((w) => w.code)).toContain("owner_not_preserved");
      assertNoLeftovers(root);
    });

    (isRoot ? test : noTest)("as a user who may not write the directory: permission_denied, nothing changed", async () => {
      const root = makeTree({ "ro/file.txt": { content: "v1\n", mode: 0o666 } });
      chmodSync(root, 0o755);
      const shell = new LocalShell(asUser(c, 65534, 65534));
      const report = await commitRemote(shell, root, plan([P.update("ro/file.txt", "v1\n", "v2\n")]));
      expect(report.ok).toBe(false);
      expect(report.errors![0]!.code).toBe("permission_denied");
      expect(read(root, "ro/file.txt")).toBe("v1\n");
      assertNoLeftovers(root);
    });

    test("a file with other hard links: replaced, hard_link_broken warning", async () => {
      const root = makeTree({ "a.txt": "v1\n" });
      Bun.spawnSync(["ln", join(root, "a.txt"), join(root, "other-name.txt")]);
      const report = await commitRemote(localShell(c), root, plan([P.update("a.txt", "v1\n", "v2\n")]));
      expect(report.ok).toBe(true);
      expect(report.files[0]!.warnings.map((w) => w.code)).toEqual(["hard_link_broken"]);
      expect(read(root, "other-name.txt")).toBe("v1\n");
      assertNoLeftovers(root);
    });

    // BusyBox's ls shows no ACL marker and BusyBox has no getfattr: there the
    // engine cannot see ACLs (documented); the GNU userland can.
    (c.name === "busybox" ? noTest : test)("a file with a POSIX ACL: replaced, acl_or_xattr_not_preserved warning", async () => {
      const root = makeTree({ "acl.txt": "v1\n", "plain.txt": "p1\n" });
      setPosixAcl(join(root, "acl.txt"), 1234);
      const report = await commitRemote(localShell(c), root, plan([P.update("acl.txt", "v1\n", "v2\n"), P.update("plain.txt", "p1\n", "p2\n")]));
      expect(report.ok).toBe(true);
      expect(report.files[0]!.warnings.map((w) => w.code)).toEqual(["acl_or_xattr_not_preserved"]);
      expect(report.files[1]!.warnings).toEqual([]);
      expect(read(root, "acl.txt")).toBe("v2\n");
      assertNoLeftovers(root);
    });

    test("$, backticks, \\, quotes, newlines and Unicode stay literal in contents and file names", async () => {
      const names = ["$(touch pwned)", "a;b", "-rf", "`x`", "it's \"q\"", "ünï 🚀.txt", "*", "~user"];
      const cwd = tempDir();
      const root = makeTree(Object.fromEntries(names.map((n) => [n, "old\n"])), "sap $(touch pwned) 'q' ü-");
      const content = (n: string): string => `name ${n}\n$HOME $(touch pwned) \`touch pwned\` \\ 'single' "double"\n\n\u00e9\u{1F680}\r\nend`;
      const report = await commitRemote(localShell(c, { cwd }), root, plan([
        ...names.map((n) => P.update(n, "old\n", content(n))),
        P.add("new $(touch pwned)/`x` 'y'.txt", content("new")),
      ]));
      expect(report.errors).toBeUndefined();
      for (const n of names) expect(read(root, n)).toBe(content(n));
      expect(read(root, "new $(touch pwned)/`x` 'y'.txt")).toBe(content("new"));
      expect(Bun.spawnSync(["find", root, cwd, "-name", "pwned"]).stdout.toString()).toBe("");
      assertNoLeftovers(root);
    });

    test("binary contents of many files survive the stdin framing byte for byte", async () => {
      const files: { path: string; data: Uint8Array }[] = Array.from({ length: 6 }, (_, i) => ({
        path: `bin/f${i}.bin`,
        data: new Uint8Array(i === 0 ? 0 : 4096 * i + i * 13).map((_, j) => (j * (i + 3) + 10) % 256),
      }));
      // Newlines and "SAP-DATA" inside the content must not confuse anything.
      files.push({ path: "bin/tricky.bin", data: bytes("\nSAP-DATA\n\n\u0000\u00ff".repeat(1000)) });
      const root = makeTree(Object.fromEntries(files.map((f) => [f.path, "x"])));
      const report = await commitRemote(localShell(c), root, plan(files.map((f) => P.update(f.path, "x", f.data))));
      expect(report.errors).toBeUndefined();
      for (const f of files) expect(new Uint8Array(readFileSync(join(root, f.path)))).toEqual(new Uint8Array(f.data));
      assertNoLeftovers(root);
    });

    test("a final symlink is never replaced; a symlinked directory cannot be written through", async () => {
      const outside = makeTree({ "target.txt": "outside\n" });
      const root = makeTree({ "real.txt": "real\n" });
      symlinkSync("real.txt", join(root, "link.txt"));
      symlinkSync(outside, join(root, "escape"));
      const first = await commitRemote(localShell(c), root, plan([P.update("link.txt", "real\n", "hijacked\n")]));
      expect(first.errors![0]).toMatchObject({ code: "conflict", actual_state: "symlink" });
      const second = await commitRemote(localShell(c), root, plan([P.add("escape/new.txt", "x"), P.update("escape/target.txt", "outside\n", "hijacked\n")]));
      expect(second.ok).toBe(false);
      expect(second.errors!.every((e) => e.code === "symlink_rejected")).toBe(true);
      expect(read(root, "real.txt")).toBe("real\n");
      expect(read(outside, "target.txt")).toBe("outside\n");
      expect(existsSync(join(outside, "new.txt"))).toBe(false);
      assertNoLeftovers(root);
      assertNoLeftovers(outside);
    });

    test("missing parents with createParents off: not_found, nothing created", async () => {
      const root = makeTree({ "a.txt": "a" });
      const report = await commitRemote(localShell(c), root, plan([P.add("no/such/dir.txt", "x")], false));
      expect(report.errors![0]).toMatchObject({ code: "not_found", path: "no/such/dir.txt" });
      expect(existsSync(join(root, "no"))).toBe(false);
      assertNoLeftovers(root);
    });

    test("a root that is a symlink is resolved once; a missing root is not_found", async () => {
      const real = makeTree({ "f.txt": "v1\n" });
      const holder = tempDir();
      symlinkSync(real, join(holder, "root-link"));
      const ok = await commitRemote(localShell(c), join(holder, "root-link"), plan([P.update("f.txt", "v1\n", "v2\n"), P.add("g.txt", "g")]));
      expect(ok.ok).toBe(true);
      expect(read(real, "f.txt")).toBe("v2\n");
      expect(read(real, "g.txt")).toBe("g");
      assertNoLeftovers(real);
      const missing = await commitRemote(localShell(c), join(holder, "nope"), plan([P.add("g.txt", "g")]));
      expect(missing.errors![0]).toMatchObject({ code: "not_found", retryable: false });
      expect(missing.errors![0]!.message).toContain("does not exist");
    });

    test("upload progress is reported up to the full stdin size", async () => {
      const root = makeTree({});
      const big = "x".repeat(300_000);
      const seen: [number, number][] = [];
      const report = await commitRemote(localShell(c), root, plan([P.add("big.txt", big)]), { onProgress: (sent, total) => seen.push([sent, total]) });
      expect(report.ok).toBe(true);
      expect(seen.length).toBeGreaterThan(1);
      const [sent, total] = seen.at(-1)!;
      expect(sent).toBe(total);
      expect(total).toBeGreaterThan(300_000);
      expect(read(root, "big.txt")).toBe(big);
    });

    test("a snapshot's SHA is the commit's precondition (snapshot → commit round trip)", async () => {
      const root = makeTree({ "cfg/app.conf": "port=80\n" });
      const shell = localShell(c);
      const snaps = await readSnapshots(shell, root, ["cfg/app.conf"]);
      const old = snaps.get("cfg/app.conf")!;
      const report = await commitRemote(shell, root, plan([{ ...P.update("cfg/app.conf", old.bytes!, "port=8080\n") }]), { operationId: "roundtrip_1" });
      expect(report).toMatchObject({ ok: true, operation_id: "roundtrip_1" });
      expect(read(root, "cfg/app.conf")).toBe("port=8080\n");
    });
  });
}

describe("commitRemote arguments", () => {
  test("an empty plan succeeds without running anything", async () => {
    let calls = 0;
    const shell = { exec: () => { calls++; return Promise.reject(new Error("no")); } };
    const report = await commitRemote(shell, "/tmp", plan([]));
    expect(report.ok).toBe(true);
    expect(calls).toBe(0);
  });

  test("a host without any SHA-256 tool → remote_unsupported naming it, nothing changed", async () => {
    const bin = tempDir();
    for (const applet of ["cat", "stat", "head", "tail", "dd", "date", "link", "ln", "mv", "rm", "mkdir", "chmod", "uname", "id", "ls"]) {
      symlinkSync(busyboxBinary(), join(bin, applet));
    }
    const root = makeTree({ "a.txt": "a" });
    const shell = new LocalShell({ shell: [busyboxBinary(), "sh"], env: { PATH: bin } });
    const report = await commitRemote(shell, root, plan([P.update("a.txt", "a", "b")]));
    expect(report.errors![0]).toMatchObject({ code: "remote_unsupported", retryable: false });
    expect(report.errors![0]!.tool).toContain("sha256sum");
    expect(read(root, "a.txt")).toBe("a");
    assertNoLeftovers(root);
  });

  test("invalid plans, roots and operation ids are programmer errors", async () => {
    const shell = new LocalShell();
    expect(commitRemote(shell, "/tmp", plan([P.add("../x", "y")]))).rejects.toThrow(TypeError);
    expect(commitRemote(shell, "/tmp", plan([P.add("a", "y"), P.add("a", "z")]))).rejects.toThrow(TypeError);
    expect(commitRemote(shell, "/tmp", plan([{ ...P.add("a", "y"), newSha256: sha256Hex("other") }]))).rejects.toThrow(TypeError);
    expect(commitRemote(shell, "tmp", plan([P.add("a", "y")]))).rejects.toThrow(TypeError);
    expect(commitRemote(shell, "/tmp", plan([P.add("a", "y")]), { operationId: "a-b" })).rejects.toThrow(TypeError);
  });
});
