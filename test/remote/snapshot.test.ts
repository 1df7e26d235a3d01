import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { readSnapshots } from "../../lib/snapshot.ts";
import { sha256Hex } from "../../lib/sha256.ts";
import { RemoteShellError } from "../../lib/shell.ts";
import { LocalShell } from "../../lib/local_shell.ts";
import { shQuote } from "../../lib/shell.ts";
import { asUser, assertNoLeftovers, busyboxBinary, cleanupTemps, HookedShell, localShell, makeTree, shellCases, tempDir } from "../support/local_trees.ts";

afterAll(cleanupTemps);
const isRoot = process.getuid?.() === 0;
/** Tests that need root (setpriv, chown) or GNU tools are not registered elsewhere (a skip would fail CI). */
const noTest = (..._args: unknown[]): void => {};
if (!isRoot) console.warn(`${import.meta.file}: not root, the setpriv/chown tests are not registered`);

for (const c of shellCases()) {
  describe(`readSnapshots (${c.name})`, () => {
    test("kinds, bytes, SHA-256 and metadata of every path in one call", async () => {
      const binary = new Uint8Array(70_000).map((_, i) => (i * 31 + 7) % 256);
      const root = makeTree({
        "text.txt": { content: "line 1\r\nline 2\n", mode: 0o640 },
        "bin/data.bin": { content: binary, mode: 0o755 },
        "empty": "",
        "dir/sub": { dir: true, mode: 0o750 },
        "link": { symlink: "text.txt" },
      });
      const snaps = await readSnapshots(localShell(c), root, ["text.txt", "bin/data.bin", "empty", "dir/sub", "link", "dir/none.txt", "gone/deep/x.txt"]);
      const t = snaps.get("text.txt")!;
      expect(t.kind).toBe("file");
      expect(new TextDecoder().decode(t.bytes)).toBe("line 1\r\nline 2\n");
      expect(t.sha256).toBe(sha256Hex("line 1\r\nline 2\n"));
      expect(t.size).toBe(15);
      expect(t.mode).toBe(0o640);
      expect(t.uid).toBe(process.getuid!());
      expect(t.nlink).toBe(1);
      const b = snaps.get("bin/data.bin")!;
      expect(b.bytes).toEqual(binary);
      expect(b.mode).toBe(0o755);
      expect(snaps.get("empty")!.bytes).toEqual(new Uint8Array(0));
      expect(snaps.get("empty")!.sha256).toBe(sha256Hex(""));
      expect(snaps.get("dir/sub")!.kind).toBe("directory");
      expect(snaps.get("dir/sub")!.mode).toBe(0o750);
      const link = snaps.get("link")!;
      expect(link.kind).toBe("symlink");
      expect(link.rejected?.code).toBe("symlink_rejected");
      expect(link.bytes).toBeUndefined();
      expect(snaps.get("dir/none.txt")).toMatchObject({ kind: "missing", parentExists: true });
      expect(snaps.get("gone/deep/x.txt")).toMatchObject({ kind: "missing", parentExists: false });
      assertNoLeftovers(root);
    });

    test("a symlinked directory component cannot reach outside the root", async () => {
      const outside = makeTree({ "secret.txt": "top secret" });
      const root = makeTree({ "ok.txt": "ok" });
      symlinkSync(outside, join(root, "evil"));
      mkdirSync(join(root, "real"));
      symlinkSync("../real", join(root, "inner"));
      const snaps = await readSnapshots(localShell(c), root, ["evil/secret.txt", "evil/new.txt", "inner/x.txt"]);
      for (const p of ["evil/secret.txt", "evil/new.txt", "inner/x.txt"]) {
        expect(snaps.get(p)!.rejected?.code).toBe("symlink_rejected");
        expect(snaps.get(p)!.bytes).toBeUndefined();
      }
      expect(snaps.get("evil/secret.txt")!.rejected!.message).toContain("evil");
      assertNoLeftovers(root);
      assertNoLeftovers(outside);
    });

    test("a file used as a directory is invalid_path; .. and absolute paths are refused before sending", async () => {
      const root = makeTree({ "a.txt": "a" });
      const snaps = await readSnapshots(localShell(c), root, ["a.txt/b.txt", "../etc/passwd", "/etc/passwd", "x/.sap-lock-1"]);
      expect(snaps.get("a.txt/b.txt")!.rejected?.code).toBe("invalid_path");
      expect(snaps.get("../etc/passwd")!.rejected?.code).toBe("invalid_path");
      expect(snaps.get("/etc/passwd")!.rejected?.code).toBe("invalid_path");
      expect(snaps.get("x/.sap-lock-1")!.rejected?.code).toBe("invalid_path");
    });

    test("a root that is itself a symlink is resolved once and used physically", async () => {
      const real = makeTree({ "f.txt": "via link" });
      const holder = tempDir();
      symlinkSync(real, join(holder, "root-link"));
      const snaps = await readSnapshots(localShell(c), join(holder, "root-link"), ["f.txt"]);
      expect(new TextDecoder().decode(snaps.get("f.txt")!.bytes)).toBe("via link");
    });

    test("a missing root rejects every path with not_found", async () => {
      const snaps = await readSnapshots(localShell(c), join(tempDir(), "nope"), ["a.txt", "b.txt"]);
      expect(snaps.get("a.txt")!.rejected?.code).toBe("not_found");
      expect(snaps.get("b.txt")!.rejected?.message).toContain("does not exist");
    });

    test("files over maxFileBytes are refused without their bytes", async () => {
      const root = makeTree({ "big.txt": "x".repeat(5000), "small.txt": "y" });
      const snaps = await readSnapshots(localShell(c), root, ["big.txt", "small.txt"], { maxFileBytes: 1000 });
      const big = snaps.get("big.txt")!;
      expect(big.rejected?.code).toBe("limit_exceeded");
      expect(big.rejected?.limit).toEqual({ name: "maxFileBytes", max: 1000, actual: 5000 });
      expect(big.bytes).toBeUndefined();
      expect(snaps.get("small.txt")!.sha256).toBe(sha256Hex("y"));
    });

    test("names with shell metacharacters and Unicode are data, never code", async () => {
      const names = ["$(touch pwned)", "a;b", "-rf", "`x`", "it's \"quoted\"", "ünï cödé 🚀.txt", " lead and trail "];
      const cwd = tempDir();
      const root = makeTree(Object.fromEntries(names.map((n) => [n, `content of ${n} $HOME \`id\``])), "sap $(x) 'q' ü-");
      const snaps = await readSnapshots(localShell(c, { cwd }), root, names);
      for (const n of names) {
        expect(new TextDecoder().decode(snaps.get(n)!.bytes)).toBe(`content of ${n} $HOME \`id\``);
      }
      expect(Bun.spawnSync(["find", root, cwd, "-name", "pwned"]).stdout.toString()).toBe("");
      assertNoLeftovers(root);
    });

    test("a file replaced while being read is refused as conflict, not sent half-old (hook swaps it after the copy)", async () => {
      const root = makeTree({ "a.txt": "old\n", "b.txt": "b\n" });
      const swap = `case "$1:$2" in snapshot_read:0) printf 'new\\n' > ${shQuote(join(root, "a.tmp"))}; mv ${shQuote(join(root, "a.tmp"))} ${shQuote(join(root, "a.txt"))} ;; esac`;
      const snaps = await readSnapshots(new HookedShell(localShell(c), swap), root, ["a.txt", "b.txt"]);
      expect(snaps.get("a.txt")!.rejected).toMatchObject({ code: "conflict", retryable: true });
      expect(snaps.get("a.txt")!.bytes).toBeUndefined();
      expect(snaps.get("b.txt")!.sha256).toBe(sha256Hex("b\n"));
    });

    (isRoot ? test : noTest)("as another user: unreadable file and unenterable directory are permission_denied", async () => {
      const root = makeTree({ "open.txt": "open", "closed.txt": { content: "closed", mode: 0o600 }, "locked/in.txt": "in" });
      chmodSync(root, 0o755);
      chmodSync(join(root, "locked"), 0o700);
      const shell = new LocalShell(asUser(c, 65534, 65534));
      const snaps = await readSnapshots(shell, root, ["open.txt", "closed.txt", "locked/in.txt"]);
      expect(snaps.get("open.txt")!.sha256).toBe(sha256Hex("open"));
      expect(snaps.get("closed.txt")).toMatchObject({ kind: "file", mode: 0o600 });
      expect(snaps.get("closed.txt")!.rejected?.code).toBe("permission_denied");
      expect(snaps.get("closed.txt")!.bytes).toBeUndefined();
      expect(snaps.get("locked/in.txt")!.rejected?.code).toBe("permission_denied");
      chownSync(root, 0, 0);
    });
  });
}

describe("readSnapshots transport", () => {
  test("a missing remote tool rejects remote_unsupported naming it", async () => {
    const bin = tempDir();
    // A userland with a shell but no stat at all.
    Bun.spawnSync(["ln", "-s", busyboxBinary(), join(bin, "mktemp")]);
    const shell = new LocalShell({ shell: [busyboxBinary(), "sh"], env: { PATH: bin } });
    const root = makeTree({ "a.txt": "a" });
    const error = await readSnapshots(shell, root, ["a.txt"]).catch((e) => e);
    expect(error).toBeInstanceOf(RemoteShellError);
    expect(error.failure.code).toBe("remote_unsupported");
    expect(error.failure.tool).toContain("stat");
  });

  test("output that breaks the framing rejects remote_error (fault-injected truncation)", async () => {
    const root = makeTree({ "a.txt": "abcdef" });
    const inner = new LocalShell();
    const truncating = {
      label: "truncating",
      async exec(command: string, options?: Parameters<LocalShell["exec"]>[1]) {
        const r = await inner.exec(command, options);
        return { ...r, stdout: r.stdout.subarray(0, r.stdout.length - 15) };
      },
    };
    const error = await readSnapshots(truncating, root, ["a.txt"]).catch((e) => e);
    expect(error).toBeInstanceOf(RemoteShellError);
    expect(error.failure.code).toBe("remote_error");
  });

  test("bad arguments are programmer errors", async () => {
    expect(readSnapshots(new LocalShell(), "relative/root", ["a"])).rejects.toThrow(TypeError);
  });
});
