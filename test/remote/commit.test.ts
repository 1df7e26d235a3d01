/**
 * LocalShell-specific commit tests: the same programs run as another user
 * through setpriv (no chown, no write permission), a userland without any
 * SHA-256 tool, and argument checking. The engine's contract on every shell
 * (LocalShell and SSH) lives in test/contract/commit.test.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitRemote } from "../../lib/remote/commit.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import { shQuote } from "../../lib/remote/shell.ts";
import { asUser, busyboxBinary, cleanupTemps, HookedShell, makeTree, noLeftoversAfterEach, P, plan, rootTest, shellCases, tempDir } from "../support/local_trees.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();
const read = (root: string, path: string): string => readFileSync(join(root, path), "utf8");

for (const c of shellCases()) {
  describe(`commitRemote as another user (${c.name})`, () => {
    rootTest("as a user who may not chown: owner_not_preserved warning, content replaced", async () => {
      const root = makeTree({ "shared/root-owned.txt": { content: "v1\n", mode: 0o666 } });
      chmodSync(root, 0o755);
      chownSync(join(root, "shared"), 65534, 65534);
      const shell = new LocalShell(asUser(c, 65534, 65534));
      const report = await commitRemote(shell, root, plan([P.update("shared/root-owned.txt", "v1\n", "v2\n")]));
      expect(report.ok).toBe(true);
      expect(read(root, "shared/root-owned.txt")).toBe("v2\n");
      expect(report.files[0]!.metadataPreserved).toEqual({ mode: true, owner: false });
      expect(report.files[0]!.warnings.map((w) => w.code)).toContain("owner_not_preserved");
    });

    rootTest("as a user who may read but not hard-link the file (fs.protected_hardlinks): the delta upload reads it by name in its directory; exact content", async () => {
      const lines = Array.from({ length: 8000 }, (_, i) => `line ${i} ${"x".repeat(i % 50)}`);
      const text = lines.join("\n") + "\n";
      const root = makeTree({ "shared/big.txt": { content: text, mode: 0o644 } });
      chmodSync(root, 0o755);
      chownSync(join(root, "shared"), 65534, 65534);
      const seen = tempDir();
      chmodSync(seen, 0o777);
      // which file the stage was read from (white box: the pin ./src, or the name)
      const shell = new HookedShell(new LocalShell(asUser(c, 65534, 65534)), `case "$1" in delta_read) printf '%s' "$sap_db_src" > ${shQuote(join(seen, "source"))} ;; esac`);
      const next = text.replace("line 4000 ", "line 4000 CHANGED ");
      const [file] = plan([P.update("shared/big.txt", text, next)]).files;
      const patched = { ...file!, pieces: [{ source: [0, text.indexOf("line 4000 ")] as [number, number] }, { fresh: [text.indexOf("line 4000 "), text.indexOf("line 4000 ") + 18] as [number, number] }, { source: [text.indexOf("line 4000 ") + 10, text.length] as [number, number] }] };
      const report = await commitRemote(shell, root, plan([patched]));
      expect(report.errors).toBeUndefined();
      expect(read(root, "shared/big.txt")).toBe(next);
      expect(report.files[0]!.bytesUploaded!).toBeLessThan(100);
      // white box: the source read by name (its directory is trusted), not from a pin ./o0
      if (readFileSync("/proc/sys/fs/protected_hardlinks", "utf8").trim() === "1") expect(readFileSync(join(seen, "source"), "utf8")).toBe(join(realpathSync(root), "shared/big.txt"));
    });

    rootTest("as a user who reads the file through its group only (mode 0060): the stages are hashed before they get that mode (SLOWED: sha256sum sleeps before a stage), content replaced", async () => {
      // The stages are hashed in the background while the locks are taken;
      // a stage given a mode without its owner's read bit could no longer be
      // read by that hash (this user is not root), so the commit waits for
      // the hash before such a chmod. The hash is slowed so that without the
      // wait it would open the stage after the chmod.
      const root = makeTree({ "shared/g.txt": { content: "v1\n", mode: 0o060 } });
      chmodSync(root, 0o755);
      chownSync(join(root, "shared"), 65534, 65534);
      chownSync(join(root, "shared/g.txt"), 0, 65534);
      chmodSync(join(root, "shared/g.txt"), 0o060);
      const bin = tempDir();
      chmodSync(bin, 0o755);
      const real = Bun.which("sha256sum")!;
      writeFileSync(join(bin, "sha256sum"), `#!/bin/sh\ncase " $* " in *"/s"[0-9]*) sleep 0.4 ;; esac\nexec ${shQuote(real)} "$@"\n`, { mode: 0o755 });
      const options = asUser(c, 65534, 65534);
      const shell = new LocalShell({ ...options, env: { ...options.env, PATH: `${bin}:/usr/local/bin:/usr/bin:/bin` } });
      const report = await commitRemote(shell, root, plan([P.update("shared/g.txt", "v1\n", "v2\n")]));
      expect(report.errors).toBeUndefined();
      expect(readFileSync(join(root, "shared/g.txt"), "utf8")).toBe("v2\n");
      expect(statSync(join(root, "shared/g.txt")).mode & 0o7777).toBe(0o060);
      expect(report.files[0]!.warnings.map((w) => w.code)).toContain("owner_not_preserved");
    });

    rootTest("an add under umask 0477 (mode 0200, no read bit for its owner): the stage is hashed before it gets that mode (SLOWED: sha256sum sleeps before a stage), file created", async () => {
      // The same wait as above, on the other path: a mode given to many
      // stages at once (sap_mode_flush), here the mode an add gets from the
      // umask of the user's shell.
      const root = makeTree({ "own/keep.txt": "k\n" });
      chmodSync(root, 0o755);
      chownSync(join(root, "own"), 65534, 65534);
      const bin = tempDir();
      chmodSync(bin, 0o755);
      const real = Bun.which("sha256sum")!;
      writeFileSync(join(bin, "sha256sum"), `#!/bin/sh\ncase " $* " in *"/s"[0-9]*) sleep 0.4 ;; esac\nexec ${shQuote(real)} "$@"\n`, { mode: 0o755 });
      const options = asUser(c, 65534, 65534);
      const inner = c.options.shell!.map(shQuote).join(" ");
      const user = options.shell!.slice(0, options.shell!.length - c.options.shell!.length);
      const shell = new LocalShell({
        ...options,
        shell: [...user, "/bin/sh", "-c", `umask 0477; shift; exec ${inner} -c "$1"`, "sap"],
        env: { ...options.env, PATH: `${bin}:/usr/local/bin:/usr/bin:/bin` },
      });
      const report = await commitRemote(shell, root, plan([P.add("own/new.txt", "fresh\n")]));
      expect(report.errors).toBeUndefined();
      expect(readFileSync(join(root, "own/new.txt"), "utf8")).toBe("fresh\n");
      expect(statSync(join(root, "own/new.txt")).mode & 0o7777).toBe(0o200);
    });

    rootTest("as a user who may not write the directory: permission_denied, nothing changed", async () => {
      const root = makeTree({ "ro/file.txt": { content: "v1\n", mode: 0o666 } });
      chmodSync(root, 0o755);
      const shell = new LocalShell(asUser(c, 65534, 65534));
      const report = await commitRemote(shell, root, plan([P.update("ro/file.txt", "v1\n", "v2\n")]));
      expect(report.ok).toBe(false);
      expect(report.errors![0]!.code).toBe("permission_denied");
      expect(read(root, "ro/file.txt")).toBe("v1\n");
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

describe("hashing a large plan", () => {
  const big = new Uint8Array(4 * 1024 * 1024 + 5).map((_, i) => (i * 13 + 1) % 256);
  const seenSha = (dir: string): string => `case "$1" in staged) printf '%s' "$SAP_SHA" > ${shQuote(join(dir, "tool"))} ;; esac`;

  test("4 MiB or more: the commit hashes with OpenSSL where it gives the right digest (white box: SAP_SHA at the staged hook)", async () => {
    if (Bun.which("openssl") === null) throw new Error("openssl is not installed here; this test needs it");
    const root = makeTree({ "big.bin": "x", "small.txt": "s" });
    const seen = tempDir();
    const report = await commitRemote(new HookedShell(new LocalShell(), seenSha(seen)), root, plan([P.update("big.bin", "x", big)]));
    expect(report.errors).toBeUndefined();
    expect(readFileSync(join(seen, "tool"), "utf8")).toBe("openssl");
    expect(sha256Hex(new Uint8Array(readFileSync(join(root, "big.bin"))))).toBe(sha256Hex(big));
    const small = await commitRemote(new HookedShell(new LocalShell(), seenSha(seen)), root, plan([P.update("small.txt", "s", "t")]));
    expect(small.errors).toBeUndefined();
    expect(readFileSync(join(seen, "tool"), "utf8")).toBe("sha256sum");
  });

  test("an openssl that answers a wrong digest is not used (FAULT INJECTED: a fake openssl first on PATH)", async () => {
    const bin = tempDir();
    writeFileSync(join(bin, "openssl"), "#!/bin/sh\necho 'SHA2-256(stdin)= 0000000000000000000000000000000000000000000000000000000000000000'\n", { mode: 0o755 });
    const root = makeTree({ "big.bin": "x" });
    const seen = tempDir();
    const shell = new HookedShell(new LocalShell({ env: { PATH: `${bin}:${process.env.PATH}` } }), seenSha(seen));
    const report = await commitRemote(shell, root, plan([P.update("big.bin", "x", big)]));
    expect(report.errors).toBeUndefined();
    expect(readFileSync(join(seen, "tool"), "utf8")).toBe("sha256sum");
    expect(sha256Hex(new Uint8Array(readFileSync(join(root, "big.bin"))))).toBe(sha256Hex(big));
  });
});
