/**
 * Contract: readSnapshots (SPEC §2, §6) on real files for every shell under
 * test (test/support/shells_under_test.ts).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import { shQuote } from "../../lib/remote/shell.ts";
import { cleanupTemps, HookedShell, makeTree, noLeftoversAfterEach, tempDir } from "../support/local_trees.ts";
import { shellsUnderTest } from "../support/shells_under_test.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();
const shells = shellsUnderTest({ suite: "contract: snapshot" });

for (const c of shells) {
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
      const snaps = await readSnapshots(await c.open(), root, ["text.txt", "bin/data.bin", "empty", "dir/sub", "link", "dir/none.txt", "gone/deep/x.txt"]);
      const t = snaps.get("text.txt")!;
      expect(t.kind).toBe("file");
      expect(new TextDecoder().decode(t.bytes)).toBe("line 1\r\nline 2\n");
      expect(t.sha256).toBe(sha256Hex("line 1\r\nline 2\n"));
      expect(t.size).toBe(15);
      expect(t.mode).toBe(0o640);
      expect(t.uid).toBe(process.getuid!());
      expect(t.gid).toBe(process.getgid!());
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
    });

    test("a symlinked directory component cannot reach outside the root", async () => {
      const outside = makeTree({ "secret.txt": "top secret" });
      const root = makeTree({ "ok.txt": "ok" });
      symlinkSync(outside, join(root, "evil"));
      mkdirSync(join(root, "real"));
      symlinkSync("../real", join(root, "inner"));
      const snaps = await readSnapshots(await c.open(), root, ["evil/secret.txt", "evil/new.txt", "inner/x.txt"]);
      for (const p of ["evil/secret.txt", "evil/new.txt", "inner/x.txt"]) {
        expect(snaps.get(p)!.rejected?.code).toBe("symlink_rejected");
        expect(snaps.get(p)!.bytes).toBeUndefined();
      }
      expect(snaps.get("evil/secret.txt")!.rejected!.message).toContain("evil");
    });

    test("a file used as a directory is invalid_path; .. and absolute paths are refused before sending", async () => {
      const root = makeTree({ "a.txt": "a" });
      const snaps = await readSnapshots(await c.open(), root, ["a.txt/b.txt", "../etc/passwd", "/etc/passwd", "x/.sap-lock-1"]);
      expect(snaps.get("a.txt/b.txt")!.rejected?.code).toBe("invalid_path");
      expect(snaps.get("../etc/passwd")!.rejected?.code).toBe("invalid_path");
      expect(snaps.get("/etc/passwd")!.rejected?.code).toBe("invalid_path");
      expect(snaps.get("x/.sap-lock-1")!.rejected?.code).toBe("invalid_path");
      expect(snaps.get("../etc/passwd")!.bytes).toBeUndefined();
    });

    test("a root that is itself a symlink is resolved once and used physically", async () => {
      const real = makeTree({ "f.txt": "via link" });
      const holder = tempDir();
      symlinkSync(real, join(holder, "root-link"));
      const snaps = await readSnapshots(await c.open(), join(holder, "root-link"), ["f.txt"]);
      expect(new TextDecoder().decode(snaps.get("f.txt")!.bytes)).toBe("via link");
    });

    test("a missing root rejects every path with not_found", async () => {
      const snaps = await readSnapshots(await c.open(), join(tempDir(), "nope"), ["a.txt", "b.txt"]);
      expect(snaps.get("a.txt")!.rejected?.code).toBe("not_found");
      expect(snaps.get("b.txt")!.rejected?.message).toContain("does not exist");
    });

    test("files over maxFileBytes are refused without their bytes", async () => {
      const root = makeTree({ "big.txt": "x".repeat(5000), "small.txt": "y" });
      const snaps = await readSnapshots(await c.open(), root, ["big.txt", "small.txt"], { maxFileBytes: 1000 });
      const big = snaps.get("big.txt")!;
      expect(big.rejected?.code).toBe("limit_exceeded");
      expect(big.rejected?.limit).toEqual({ name: "maxFileBytes", max: 1000, actual: 5000 });
      expect(big.bytes).toBeUndefined();
      expect(snaps.get("small.txt")!.sha256).toBe(sha256Hex("y"));
    });

    test("names with shell metacharacters and Unicode are data, never code", async () => {
      const names = ["$(touch pwned)", "a;b", "-rf", "`x`", "it's \"quoted\"", "ünï cödé 🚀.txt", " lead and trail "];
      const shell = await c.open();
      const cwd = new TextDecoder().decode((await shell.exec("pwd")).stdout).trim();
      const root = makeTree(Object.fromEntries(names.map((n) => [n, `content of ${n} $HOME \`id\``])), "sap $(x) 'q' ü-");
      const snaps = await readSnapshots(shell, root, names);
      for (const n of names) {
        expect(new TextDecoder().decode(snaps.get(n)!.bytes)).toBe(`content of ${n} $HOME \`id\``);
      }
      expect(Bun.spawnSync(["find", root, "-name", "pwned"]).stdout.toString()).toBe("");
      expect(existsSync(join(cwd, "pwned"))).toBe(false);
    });

    test("a file replaced while being read is refused as conflict, not sent half-old (hook swaps it after the copy)", async () => {
      const root = makeTree({ "a.txt": "old\n", "b.txt": "b\n" });
      const swap = `case "$1:$2" in snapshot_read:0) printf 'new\\n' > ${shQuote(join(root, "a.tmp"))}; mv ${shQuote(join(root, "a.tmp"))} ${shQuote(join(root, "a.txt"))} ;; esac`;
      const snaps = await readSnapshots(new HookedShell(await c.open(), swap), root, ["a.txt", "b.txt"]);
      expect(snaps.get("a.txt")!.rejected).toMatchObject({ code: "conflict", retryable: true });
      expect(snaps.get("a.txt")!.bytes).toBeUndefined();
      expect(snaps.get("b.txt")!.sha256).toBe(sha256Hex("b\n"));
    });
  });
}
