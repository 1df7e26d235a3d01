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
import { asUser, busyboxBinary, cleanupTemps, makeTree, noLeftoversAfterEach, rootTest, shellCases, tempDir } from "../support/local_trees.ts";

afterAll(cleanupTemps);
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

  test("bad arguments are programmer errors", async () => {
    expect(readSnapshots(new LocalShell(), "relative/root", ["a"])).rejects.toThrow(TypeError);
  });
});
