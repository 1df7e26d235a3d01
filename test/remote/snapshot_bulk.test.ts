/**
 * The snapshot program's bulk read (programs/sh_snapshot_bulk.ts): many
 * small regular files in trusted directories read by one run of each tool.
 * On every shell: the bulk read gives exactly what the per-path program
 * gives; anything it does not prove plain (a symlink, a FIFO, a symlinked
 * directory, a missing path, a large file, a directory others can write)
 * sends the whole read to the per-path program, whose answer stands; a file
 * changed or swapped while the bulk read runs is told truly. Whether the
 * bulk block was used is read off the real program's output (an observer
 * around a real LocalShell, not a mock).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { shQuote } from "../../lib/remote/shell.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import type { FileSnapshot } from "../../lib/types.ts";
import { cleanupTemps, HookedShell, makeTree, noLeftoversAfterEach, shellCases, tempDir } from "../support/local_trees.ts";
import type { ShellCase, TreeEntry } from "../support/local_trees.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();

/** Records whether each snapshot exec answered with a bulk block. */
class WireWatch implements RemoteShell {
  readonly label = "local";
  readonly bulk: boolean[] = [];
  readonly #inner: RemoteShell;
  constructor(inner: RemoteShell) {
    this.#inner = inner;
  }
  async exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    const r = await this.#inner.exec(command, options);
    this.bulk.push(new TextDecoder("latin1").decode(r.stdout).includes("\nBULK "));
    return r;
  }
}

/** 80 small files in four directories, one nested, and two in the root. */
function plainTree(): Record<string, TreeEntry> {
  const tree: Record<string, TreeEntry> = { "top1.txt": "top one\n", "-dash.txt": "dash\n" };
  for (let i = 0; i < 78; i++) tree[`${["a", "b", "c/deep", "-d"][i % 4]}/f${i}.txt`] = `file ${i}\n${"x".repeat(i)}\n`;
  return tree;
}

const shellOf = (c: ShellCase): LocalShell => new LocalShell({ ...c.options, cwd: tempDir("sap-cwd-") });

/** The fields a snapshot's reader relies on. */
function fields(s: FileSnapshot | undefined): unknown {
  if (s === undefined) return undefined;
  return { kind: s.kind, size: s.size, mode: s.mode, uid: s.uid, gid: s.gid, nlink: s.nlink, sha256: s.sha256, rejected: s.rejected?.code, bytes: s.bytes === undefined ? undefined : sha256Hex(s.bytes) };
}

/** The same paths read eight at a time: always the per-path program (fewer than 64). */
async function perPath(shell: RemoteShell, root: string, paths: string[]): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  for (let i = 0; i < paths.length; i += 8) {
    for (const [p, s] of await readSnapshots(shell, root, paths.slice(i, i + 8))) out.set(p, fields(s));
  }
  return out;
}

/** One odd entry among the plain files, and what the per-path program says of it. */
const declines: { name: string; odd: Record<string, TreeEntry>; setup?: (root: string) => void; path: string; expect: (s: FileSnapshot) => void }[] = [
  { name: "a final symlink", odd: { "a/link.txt": { symlink: "f0.txt" } }, path: "a/link.txt", expect: (s) => expect(s.rejected?.code).toBe("symlink_rejected") },
  { name: "a symlinked directory on the way", odd: { "ln": { symlink: "a" } }, path: "ln/f0.txt", expect: (s) => expect(s.rejected?.code).toBe("symlink_rejected") },
  { name: "a FIFO (never opened: the read would hang)", odd: {}, setup: (root) => void Bun.spawnSync(["mkfifo", join(root, "a/fifo")]), path: "a/fifo", expect: (s) => { expect(s.kind).toBe("other"); expect(s.bytes).toBeUndefined(); } },
  { name: "a missing path", odd: {}, path: "b/new.txt", expect: (s) => expect(s.kind).toBe("missing") },
  { name: "a file of 64 KiB", odd: { "c/big.txt": "y".repeat(65536) }, path: "c/big.txt", expect: (s) => expect(s.sha256).toBe(sha256Hex("y".repeat(65536))) },
  { name: "a directory others can write", odd: { "open/f.txt": "in an open directory\n" }, setup: (root) => chmodSync(join(root, "open"), 0o777), path: "open/f.txt", expect: (s) => expect(s.rejected?.code).toBe("unsafe_directory") },
];

for (const c of shellCases()) {
  describe(`bulk snapshot read (${c.name})`, () => {
    test("80 plain files: one bulk block, and exactly what the per-path program reads (content, hash, size, mode, owner, links)", async () => {
      const tree = plainTree();
      const root = makeTree(tree);
      chmodSync(join(root, "b/f1.txt"), 0o640);
      const paths = Object.keys(tree);
      const watch = new WireWatch(shellOf(c));
      const snaps = await readSnapshots(watch, root, paths);
      expect(watch.bulk).toEqual([true]);
      const reference = await perPath(watch, root, paths);
      expect(watch.bulk.slice(1).every((b) => !b)).toBe(true);
      for (const p of paths) {
        expect(snaps.get(p)?.rejected).toBeUndefined();
        expect(fields(snaps.get(p))).toEqual(reference.get(p));
        expect(snaps.get(p)!.sha256).toBe(sha256Hex(tree[p] as string));
      }
      expect(snaps.get("b/f1.txt")!.mode).toBe(0o640);
    }, 60_000);

    for (const d of declines) {
      test(`${d.name} among 80 plain files: no bulk block; the per-path program's answer for it, the others read`, async () => {
        const tree = { ...plainTree(), ...d.odd };
        const root = makeTree(tree);
        d.setup?.(root);
        const paths = [...Object.keys(plainTree()), d.path];
        const watch = new WireWatch(shellOf(c));
        const snaps = await readSnapshots(watch, root, paths);
        expect(watch.bulk).toEqual([false]);
        d.expect(snaps.get(d.path)!);
        for (const p of Object.keys(plainTree())) expect(snaps.get(p)!.sha256).toBe(sha256Hex(tree[p] as string));
      }, 60_000);
    }

    test("a file that grows between the hash and the read is a conflict, one rewritten at the same size a conflict or its new content; every file after the grown one (its piece moved) is read again and read right (hook)", async () => {
      const tree = plainTree();
      const root = makeTree(tree);
      const paths = Object.keys(tree).sort();
      const same = "a/f0.txt";
      const grows = "-d/f3.txt";
      const hook = `case "$1:$2" in snapshot_read:bulk) printf 'FILE 0\\n\\n' > ${shQuote(join(root, same))}; printf 'more\\n' >> ${shQuote(join(root, grows))} ;; esac`;
      const watch = new WireWatch(new HookedShell(shellOf(c), hook));
      const snaps = await readSnapshots(watch, root, paths);
      expect(watch.bulk[0]).toBe(true);
      // the second exec: the paths whose pieces missed their hashes
      expect(watch.bulk.length).toBe(2);
      expect(snaps.get(grows)!.rejected?.code).toBe("conflict");
      expect(snaps.get(grows)!.bytes).toBeUndefined();
      // same size: a conflict when the second stat sees its mtime move (a
      // new second), else read again as it is now — never the old bytes
      const s = snaps.get(same)!;
      if (s.rejected === undefined) expect(new TextDecoder().decode(s.bytes)).toBe("FILE 0\n\n");
      else expect(s.rejected.code).toBe("conflict");
      for (const p of paths.filter((p) => p !== same && p !== grows)) expect(snaps.get(p)!.sha256).toBe(sha256Hex(tree[p] as string));
    }, 60_000);

    test("a file swapped for another (rename over it) while the bulk read runs is a conflict; the others are read (hook)", async () => {
      const tree = plainTree();
      const root = makeTree(tree);
      writeFileSync(join(root, "side.txt"), "SWAPPED IN\n");
      const paths = Object.keys(tree);
      const hook = `case "$1:$2" in snapshot_read:bulk) mv -f ${shQuote(join(root, "side.txt"))} ${shQuote(join(root, "c/deep/f2.txt"))} ;; esac`;
      const snaps = await readSnapshots(new HookedShell(shellOf(c), hook), root, paths);
      expect(snaps.get("c/deep/f2.txt")!.rejected?.code).toBe("conflict");
      expect(snaps.get("c/deep/f2.txt")!.bytes).toBeUndefined();
      for (const p of paths.filter((p) => p !== "c/deep/f2.txt")) expect(snaps.get(p)!.sha256).toBe(sha256Hex(tree[p] as string));
    }, 60_000);
  });
}

test("the bulk read's renames: a file renamed away from the root's view between the two stats (mv of a directory) is told, never read from elsewhere (dash)", async () => {
  const tree = plainTree();
  const root = makeTree(tree);
  const paths = Object.keys(tree);
  const hook = `case "$1:$2" in snapshot_read:bulk) mv ${shQuote(join(root, "a"))} ${shQuote(join(root, "a.moved"))} ;; esac`;
  const snaps = await readSnapshots(new HookedShell(shellOf(shellCases().find((c) => c.name === "dash")!), hook), root, paths);
  for (const p of paths.filter((p) => p.startsWith("a/"))) {
    const s = snaps.get(p)!;
    // gone before the read: a conflict, or read again as missing — never bytes from somewhere else
    expect(s.bytes === undefined || s.sha256 === sha256Hex(tree[p] as string)).toBe(true);
    expect(s.rejected?.code === "conflict" || s.kind === "missing").toBe(true);
  }
  renameSync(join(root, "a.moved"), join(root, "a"));
}, 60_000);
