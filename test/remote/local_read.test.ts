/**
 * The snapshot's hand-over to LocalShell (lib/remote/local_read.ts,
 * sh_snapshot_wire.ts `L k`): a large file read by name in a trusted
 * directory is read by this process, checked to be the inode the program
 * measured; anything else — a changed file, a symlink or FIFO swapped in,
 * another user's program, a shared directory, a host that hands over what
 * it may not — is read through the program or refused, never misread.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, readFileSync, renameSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LOCAL_READ_MIN_BYTES, readSnapshots } from "../../lib/remote/snapshot.ts";
import { applyPatch } from "../../lib/apply.ts";
import { readVerifiedFile } from "../../lib/remote/local_read.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { RemoteShellError, shQuote } from "../../lib/remote/shell.ts";
import type { ExecOptions, ExecResult, LocalFileAccess, LocalFileIdentity, RemoteShell } from "../../lib/remote/shell.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import { asUser, cleanupTemps, HookedShell, makeTree, noLeftoversAfterEach, rootTest, shellCases, tempDir } from "../support/local_trees.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();

const big = (c: string): string => `${c.repeat(99)}\n`.repeat(Math.ceil((LOCAL_READ_MIN_BYTES * 3) / 100));

/** Forwards to a shell and records each reply's stdout size and every direct read. */
class Recording implements RemoteShell {
  readonly label = "recording";
  readonly link = "local" as const;
  readonly stdoutBytes: number[] = [];
  readonly reads: string[] = [];
  readonly localFiles?: LocalFileAccess;
  readonly #inner: RemoteShell;
  constructor(inner: RemoteShell, access: LocalFileAccess | undefined) {
    this.#inner = inner;
    if (access) this.localFiles = { euid: access.euid, read: (path, expect) => (this.reads.push(path), access.read(path, expect)) };
  }
  async exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    const r = await this.#inner.exec(command, options);
    this.stdoutBytes.push(r.stdout.length);
    return r;
  }
}

/** Runs `between` once, after the first exec returned and before its caller reads any file. */
class Between implements RemoteShell {
  readonly label = "between";
  readonly #inner: RemoteShell;
  #between: (() => void) | undefined;
  constructor(inner: RemoteShell, between: () => void) {
    this.#inner = inner;
    this.#between = between;
  }
  async exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    const r = await this.#inner.exec(command, options);
    const act = this.#between;
    this.#between = undefined;
    act?.();
    return r;
  }
}

for (const c of shellCases()) {
  describe(`snapshot hand-over to LocalShell (${c.name})`, () => {
    test("a large file in a trusted directory is read by the client, not piped; a small one is piped; both exact, one exec", async () => {
      const text = big("a");
      const root = makeTree({ "big.txt": text, "small.txt": "tiny\n" });
      const local = new LocalShell(c.options);
      const shell = new Recording(local, local.localFiles);
      const snaps = await readSnapshots(shell, root, ["big.txt", "small.txt"]);
      expect(snaps.get("big.txt")).toMatchObject({ kind: "file", size: text.length, sha256: sha256Hex(text), transfer: "downloaded" });
      expect(new TextDecoder().decode(snaps.get("big.txt")!.bytes)).toBe(text);
      expect(snaps.get("small.txt")!.sha256).toBe(sha256Hex("tiny\n"));
      expect(shell.stdoutBytes.length).toBe(1);
      expect(shell.stdoutBytes[0]!).toBeLessThan(4096);
      expect(shell.reads).toEqual([join(root, "big.txt")]);
    });

    test("applyPatch end to end: the large file is handed over, planned on, committed (delta) and ends exact", async () => {
      const text = Array.from({ length: 3000 }, (_, i) => `line ${i} ${"m".repeat(90)}`).join("\n") + "\n";
      const root = makeTree({ "big.txt": text });
      const local = new LocalShell(c.options);
      const shell = new Recording(local, local.localFiles);
      const lines = text.split("\n");
      const patch = `*** Begin Patch\n*** Update File: big.txt\n@@\n-${lines[0]}\n+changed\n ${lines[1]}\n*** End Patch`;
      const report = await applyPatch(shell, { root, patch });
      expect(report.ok).toBe(true);
      const expected = ["changed", ...lines.slice(1)].join("\n");
      expect(readFileSync(join(root, "big.txt"), "utf8")).toBe(expected);
      expect(report.files[0]!.previousSha256).toBe(sha256Hex(text));
      expect(report.files[0]!.newSha256).toBe(sha256Hex(expected));
      expect(shell.reads).toEqual([join(root, "big.txt")]);
      // the snapshot's reply and the commit's: neither carries the file
      expect(shell.stdoutBytes.length).toBe(2);
      for (const n of shell.stdoutBytes) expect(n).toBeLessThan(8192);
    });

    test("localReads: false pipes every file", async () => {
      const text = big("b");
      const root = makeTree({ "big.txt": text });
      const local = new LocalShell({ ...c.options, localReads: false });
      expect(local.localFiles).toBeUndefined();
      const shell = new Recording(local, undefined);
      const snaps = await readSnapshots(shell, root, ["big.txt"]);
      expect(snaps.get("big.txt")!.sha256).toBe(sha256Hex(text));
      expect(shell.stdoutBytes[0]!).toBeGreaterThan(text.length);
    });

    // The window the client's own checks cover: after the program ended
    // (it measured the file and printed L and S) and before this process
    // reads the file. `Between` runs the swap exactly there, once.
    test("a file replaced after the program measured it is not read as measured: the whole read runs again through the program and gives the new file (FAULT INJECTED: swap after the exec)", async () => {
      const before = big("c");
      const after = big("d") + "longer\n";
      const root = makeTree({ "big.txt": before, "side.txt": after });
      const local = new LocalShell(c.options);
      const shell = new Recording(new Between(local, () => renameSync(join(root, "side.txt"), join(root, "big.txt"))), local.localFiles);
      const snaps = await readSnapshots(shell, root, ["big.txt"]);
      expect(snaps.get("big.txt")!.rejected).toBeUndefined();
      expect(snaps.get("big.txt")!.sha256).toBe(sha256Hex(after));
      expect(shell.stdoutBytes.length).toBe(2);
      expect(shell.stdoutBytes[1]!).toBeGreaterThan(after.length);
    });

    test("a file rewritten in place (same inode, size, mtime second) before the client reads it: the snapshot is the bytes read and their hash, in one exec — never a mix (FAULT INJECTED: rewrite after the exec)", async () => {
      const before = big("e");
      const root = makeTree({ "big.txt": before });
      const expected = before.slice(0, 7) + "Z" + before.slice(8);
      const local = new LocalShell(c.options);
      const shell = new Recording(new Between(local, () => {
        const st = statSync(join(root, "big.txt"));
        writeFileSync(join(root, "big.txt"), expected);
        utimesSync(join(root, "big.txt"), st.atime, st.mtime);
      }), local.localFiles);
      const snaps = await readSnapshots(shell, root, ["big.txt"]);
      const got = snaps.get("big.txt")!;
      expect(got.rejected).toBeUndefined();
      expect(new TextDecoder().decode(got.bytes)).toBe(expected);
      expect(got.sha256).toBe(sha256Hex(expected));
    });

    test("a symlink swapped in after the program measured the file is never followed: the re-read reports the symlink (FAULT INJECTED: swap after the exec)", async () => {
      const root = makeTree({ "big.txt": big("f"), "outside/secret.txt": big("s") });
      symlinkSync(join(root, "outside", "secret.txt"), join(root, "link"));
      const local = new LocalShell(c.options);
      const shell = new Recording(new Between(local, () => renameSync(join(root, "link"), join(root, "big.txt"))), local.localFiles);
      const snaps = await readSnapshots(shell, root, ["big.txt"]);
      expect(snaps.get("big.txt")!.kind).toBe("symlink");
      expect(snaps.get("big.txt")!.bytes).toBeUndefined();
      expect(shell.stdoutBytes.length).toBe(2);
    });

    test("a FIFO swapped in after the program measured the file neither hangs the client nor is read (FAULT INJECTED: swap after the exec)", async () => {
      const root = makeTree({ "big.txt": big("g") });
      expect(Bun.spawnSync(["mkfifo", join(root, "fifo")]).exitCode).toBe(0);
      const local = new LocalShell(c.options);
      const shell = new Recording(new Between(local, () => renameSync(join(root, "fifo"), join(root, "big.txt"))), local.localFiles);
      const snaps = await readSnapshots(shell, root, ["big.txt"]);
      expect(snaps.get("big.txt")!.kind).toBe("other");
      expect(snaps.get("big.txt")!.bytes).toBeUndefined();
    }, 20_000);

    test("a file swapped while the program runs is caught by the program's own second stat: conflict, nothing read (FAULT INJECTED: hook swaps)", async () => {
      const root = makeTree({ "big.txt": big("k"), "side.txt": big("l") });
      const local = new LocalShell({ ...c.options, cwd: tempDir() });
      const hook = `case "$1:$2" in snapshot_read:0) mv -f ${shQuote(join(root, "side.txt"))} ${shQuote(join(root, "big.txt"))} ;; esac`;
      const shell = new Recording(new HookedShell(local, hook), local.localFiles);
      const snaps = await readSnapshots(shell, root, ["big.txt"]);
      expect(snaps.get("big.txt")!.rejected?.code).toBe("conflict");
      expect(snaps.get("big.txt")!.bytes).toBeUndefined();
      expect(shell.reads).toEqual([]);
    });

    rootTest("a program running as another user never hands over: its file is piped (or refused as that user cannot read it)", async () => {
      const text = big("h");
      const root = makeTree({ "big.txt": text, "closed.txt": { content: big("i"), mode: 0o600 } });
      chmodSync(root, 0o755);
      const local = new LocalShell(asUser(c, 65534, 65534));
      expect(local.localFiles).toBeDefined(); // the client could: the program's euid says no
      const shell = new Recording(local, local.localFiles);
      const snaps = await readSnapshots(shell, root, ["big.txt", "closed.txt"]);
      expect(snaps.get("big.txt")!.sha256).toBe(sha256Hex(text));
      expect(snaps.get("closed.txt")!.rejected?.code).toBe("permission_denied");
      expect(shell.reads).toEqual([]);
      expect(shell.stdoutBytes[0]!).toBeGreaterThan(text.length);
      chownSync(root, 0, 0);
    });

    rootTest("a file in a directory another user can write (policy allow) is pinned and piped, never handed over", async () => {
      const text = big("j");
      const root = makeTree({ "shared/big.txt": text });
      chmodSync(join(root, "shared"), 0o777);
      const local = new LocalShell(c.options);
      const shell = new Recording(local, local.localFiles);
      const snaps = await readSnapshots(shell, root, ["shared/big.txt"], { sharedDirectories: "allow" });
      expect(snaps.get("shared/big.txt")).toMatchObject({ sha256: sha256Hex(text), directoryTrust: "shared" });
      expect(shell.reads).toEqual([]);
      expect(shell.stdoutBytes[0]!).toBeGreaterThan(text.length);
    });
  });
}

describe("a hostile or confused program's hand-over", () => {
  const META = "420 0 0 1 1";
  const reply = (body: (nonce: string) => string): RemoteShell & { reads: string[] } => {
    const reads: string[] = [];
    return {
      label: "fake",
      link: "local",
      reads,
      localFiles: { euid: 0, read: (path: string) => (reads.push(path), new Uint8Array(LOCAL_READ_MIN_BYTES)) },
      exec(_command: string, options?: ExecOptions): Promise<ExecResult> {
        const stdin = new TextDecoder().decode(options?.stdin);
        const nonce = stdin.split("\n").find((l) => l.startsWith("N "))!.slice(2);
        return Promise.resolve({ stdout: new TextEncoder().encode(body(nonce)), stderr: new Uint8Array(), exitCode: 0, signal: null });
      },
    };
  };
  const begin = "SAP-BEGIN snapshot\nROOTID 1:2\n";
  const cases: { name: string; body: string }[] = [
    { name: "a hand-over of a file in a shared directory", body: `TRUST 0 shared\nL 0 5 6\nS 0 file ${LOCAL_READ_MIN_BYTES} ${META}\nSAP-END ok\n` },
    { name: "a hand-over of a directory", body: `L 0 5 6\nS 0 directory - ${META}\nSAP-END ok\n` },
    { name: "a hand-over of a file larger than maxFileBytes", body: `L 0 5 6\nS 0 file 99999999999 ${META}\nSAP-END ok\n` },
    { name: "two hand-overs of one path", body: `L 0 5 6\nL 0 5 6\nS 0 file 9 ${META}\nSAP-END ok\n` },
    { name: "a hand-over with no inode", body: `L 0 - 6\nS 0 file 9 ${META}\nSAP-END ok\n` },
  ];
  for (const c of cases) {
    test(`${c.name} is a protocol failure (remote_error), and nothing is read`, async () => {
      const shell = reply(() => begin + c.body);
      const error = await readSnapshots(shell, "/srv", ["a.txt"]).catch((e) => e);
      expect(error).toBeInstanceOf(RemoteShellError);
      expect(error.failure.code).toBe("remote_error");
      expect(shell.reads).toEqual([]);
    });
  }

  test("a hand-over to a client that did not offer it is a protocol failure", async () => {
    const shell: RemoteShell = {
      label: "fake",
      exec: (_c: string, options?: ExecOptions): Promise<ExecResult> => {
        const stdin = new TextDecoder().decode(options?.stdin);
        expect(stdin.split("\n")[4]).toBe("L - 0");
        return Promise.resolve({ stdout: new TextEncoder().encode(`${begin}L 0 5 6\nS 0 file 9 ${META}\nSAP-END ok\n`), stderr: new Uint8Array(), exitCode: 0, signal: null });
      },
    };
    const error = await readSnapshots(shell, "/srv", ["a.txt"]).catch((e) => e);
    expect(error.failure?.code).toBe("remote_error");
  });
});

describe("readVerifiedFile", () => {
  const setup = (): { path: string; id: LocalFileIdentity } => {
    const dir = tempDir();
    const path = join(dir, "f.txt");
    writeFileSync(path, "hello\n");
    const st = statSync(path);
    return { path, id: { size: 6, inode: st.ino, mtime: Math.floor(st.mtimeMs / 1000), mode: st.mode & 0o7777, uid: st.uid, gid: st.gid, nlink: st.nlink } };
  };
  test("the measured file is read exactly", () => {
    const { path, id } = setup();
    expect(new TextDecoder().decode(readVerifiedFile(path, id)!)).toBe("hello\n");
  });
  const off: [string, (id: LocalFileIdentity) => LocalFileIdentity][] = [
    ["another inode", (id) => ({ ...id, inode: id.inode + 1 })],
    ["another size", (id) => ({ ...id, size: 5 })],
    ["another mtime", (id) => ({ ...id, mtime: id.mtime - 1 })],
    ["another mode", (id) => ({ ...id, mode: id.mode ^ 0o001 })],
    ["another owner", (id) => ({ ...id, uid: id.uid + 1 })],
    ["another group", (id) => ({ ...id, gid: id.gid + 1 })],
    ["another link count", (id) => ({ ...id, nlink: id.nlink + 1 })],
  ];
  for (const [name, change] of off) {
    test(`${name} than measured: null`, () => {
      const { path, id } = setup();
      expect(readVerifiedFile(path, change(id))).toBeNull();
    });
  }
  test("a relative path, a directory, a symlink to the very file, a missing file: null", () => {
    const { path, id } = setup();
    expect(readVerifiedFile("f.txt", id)).toBeNull();
    expect(readVerifiedFile(join(path, ".."), id)).toBeNull();
    const link = `${path}.lnk`;
    symlinkSync(path, link);
    expect(readVerifiedFile(link, id)).toBeNull();
    renameSync(path, `${path}.gone`);
    expect(readVerifiedFile(path, id)).toBeNull();
  });
});
