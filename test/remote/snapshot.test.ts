/**
 * LocalShell-specific snapshot tests: reading as another user (setpriv), a
 * userland missing a tool, and output that breaks the framing. The
 * contract on every shell lives in test/contract/snapshot.test.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync } from "node:fs";
import { join } from "node:path";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import { RemoteShellError } from "../../lib/remote/shell.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { asUser, busyboxBinary, cleanupTemps, HookedShell, makeTree, noLeftoversAfterEach, rootTest, shellCases, tempDir } from "../support/local_trees.ts";
import { shQuote } from "../../lib/remote/shell.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();

for (const c of shellCases()) {
  describe(`readSnapshots as another user (${c.name})`, () => {
    rootTest("as another user: unreadable file and unenterable directory are permission_denied", async () => {
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

  for (const c of shellCases()) {
    const big = "x".repeat(200_000) + "\n";
    test(`${c.name}: no copy: a file that grows while it is sent is cut at its measured size and refused as changed (conflict); the next file is intact (FAULT INJECTED: hook appends)`, async () => {
      const root = makeTree({ "a.txt": big, "b.txt": "bee\n" });
      const shell = new HookedShell(new LocalShell({ ...c.options, cwd: tempDir() }), `case "$1:$2" in snapshot_read:0) printf more >> ${shQuote(join(root, "a.txt"))} ;; esac`);
      const snaps = await readSnapshots(shell, root, ["a.txt", "b.txt"]);
      expect(snaps.get("a.txt")!.rejected?.code).toBe("conflict");
      expect(snaps.get("a.txt")!.bytes).toBeUndefined();
      expect(snaps.get("b.txt")!.sha256).toBe(sha256Hex("bee\n"));
    });

    test(`${c.name}: a file that shrinks while it is sent breaks no framing: the bytes end before the closing nonce, and the read fails remote_error (retry) instead of misreading what follows (FAULT INJECTED: hook truncates)`, async () => {
      const root = makeTree({ "a.txt": big, "b.txt": "S 1 file 3 420 0 0 1 1\nfake\n" });
      const shell = new HookedShell(new LocalShell({ ...c.options, cwd: tempDir() }), `case "$1:$2" in snapshot_read:0) : > ${shQuote(join(root, "a.txt"))} ;; esac`);
      const error = await readSnapshots(shell, root, ["a.txt", "b.txt"]).catch((e) => e);
      expect(error).toBeInstanceOf(RemoteShellError);
      expect(error.failure.code).toBe("remote_error");
      expect(error.failure.message).toContain("changed size while it was being read");
    });
  }

  test("bad arguments are programmer errors", async () => {
    expect(readSnapshots(new LocalShell(), "relative/root", ["a"])).rejects.toThrow(TypeError);
  });
});
