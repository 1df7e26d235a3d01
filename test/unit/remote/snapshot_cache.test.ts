/**
 * SnapshotCache on its own: content addressing, LRU bounds, hints, and the
 * disk tier's rules (private directory, atomic files, every load hashed
 * again — a tampered or truncated entry is a miss, never bytes).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SnapshotCache, SUPERSEDED_PER_PATH } from "../../../lib/remote/snapshot_cache.ts";
import { sha256Hex } from "../../../lib/text/sha256.ts";
import { ensureTestUsers } from "../../support/sshd.ts";

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const temps: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "sap-cache-test-"));
  temps.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("SnapshotCache in memory", () => {
  test("put returns the SHA-256 it computed; get hands out a copy", () => {
    const cache = new SnapshotCache();
    const bytes = enc("hello\n");
    const sha = cache.put(bytes);
    expect(sha).toBe(sha256Hex(bytes));
    const got = cache.get(sha)!;
    expect(new TextDecoder().decode(got)).toBe("hello\n");
    got[0] = 0x4a; // a caller scribbling on its copy
    bytes[1] = 0x4a; // or on what it put
    expect(new TextDecoder().decode(cache.get(sha)!)).toBe("hello\n");
    expect(cache.get("0".repeat(64))).toBeUndefined();
  });

  test("least recently used contents go first; the bound holds", () => {
    const cache = new SnapshotCache({ maxBytes: 30 });
    const a = cache.put(enc("a".repeat(10)));
    const b = cache.put(enc("b".repeat(10)));
    const c = cache.put(enc("c".repeat(10)));
    cache.get(a); // a is now the most recent
    const d = cache.put(enc("d".repeat(10)));
    expect([a, b, c, d].map((s) => cache.has(s))).toEqual([true, false, true, true]);
    expect(cache.stats).toMatchObject({ entries: 3, bytes: 30, evictions: 1 });
  });

  test("a content larger than the bound is not kept (and evicts nothing)", () => {
    const cache = new SnapshotCache({ maxBytes: 8 });
    const small = cache.put(enc("1234"));
    const big = cache.put(enc("123456789"));
    expect(cache.has(small)).toBe(true);
    expect(cache.has(big)).toBe(false);
  });

  test("hints are per scope and path, replaced and cleared", () => {
    const cache = new SnapshotCache();
    const sha = "a".repeat(64);
    cache.see("host\u0000/srv", "a.txt", { sha256: sha, size: 3 });
    expect(cache.hint("host\u0000/srv", "a.txt")).toEqual({ sha256: sha, size: 3 });
    expect(cache.hint("other\u0000/srv", "a.txt")).toBeUndefined();
    cache.see("host\u0000/srv", "a.txt", null);
    expect(cache.hint("host\u0000/srv", "a.txt")).toBeUndefined();
  });

  test("per path, the last SUPERSEDED_PER_PATH versions stay and older ones no path names leave memory (a long session stays flat)", () => {
    const cache = new SnapshotCache();
    const first = cache.put(enc("version 0\n"));
    cache.see("s", "a.txt", { sha256: first, size: 10 });
    cache.see("s", "copy.txt", { sha256: first, size: 10 }); // another path with the same content
    const versions = [first];
    for (let i = 1; i <= 100; i++) {
      versions.push(cache.put(enc(`version ${i}\n`)));
      cache.see("s", "a.txt", { sha256: versions[i]!, size: 10 });
    }
    const kept = versions.map((sha) => cache.has(sha));
    // the current version, the 4 before it (a caller that read one gets what changed since), and version 0 (copy.txt holds it)
    expect(kept.flatMap((k, i) => (k ? [i] : []))).toEqual([0, 96, 97, 98, 99, 100]);
    expect(SUPERSEDED_PER_PATH).toBe(4);
    expect(cache.stats.entries).toBe(6);
    // copy.txt deleted: version 0 is now one of copy.txt's superseded versions, then pushed out by four more
    cache.see("s", "copy.txt", null);
    expect(cache.has(first)).toBe(true);
    for (let i = 0; i < 4; i++) {
      const other = cache.put(enc(`copy ${i}\n`));
      cache.see("s", "copy.txt", { sha256: other, size: 7 });
    }
    cache.see("s", "copy.txt", null);
    expect(cache.has(first)).toBe(false);
    const unhinted = cache.put(enc("never hinted\n")); // a put without a hint is the caller's: kept
    cache.see("s", "other.txt", null);
    expect(cache.has(unhinted)).toBe(true);
  });

  test("bad arguments are programmer errors", () => {
    expect(() => new SnapshotCache({ maxBytes: -1 })).toThrow(TypeError);
    expect(() => new SnapshotCache().put("text" as unknown as Uint8Array)).toThrow(TypeError);
    expect(() => new SnapshotCache().storeHashed("not a sha", enc("x"))).toThrow(TypeError);
  });
});

describe("SnapshotCache on disk", () => {
  test("entries are files named by their SHA-256, mode 0600, in a 0700 directory; a new cache finds them and their hints", async () => {
    const dir = join(tempDir(), "cache");
    const first = new SnapshotCache({ dir });
    const sha = first.put(enc("content\n"));
    first.see("h\u0000/r", "p", { sha256: sha, size: 8 });
    await first.flush();
    expect(lstatSync(dir).mode & 0o777).toBe(0o700);
    expect(lstatSync(join(dir, sha)).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).filter((n) => n.startsWith(".tmp-"))).toEqual([]);

    const second = new SnapshotCache({ dir });
    expect(second.has(sha)).toBe(false); // not in memory …
    expect(second.hint("h\u0000/r", "p")).toEqual({ sha256: sha, size: 8 });
    expect(new TextDecoder().decode((await second.load(sha))!)).toBe("content\n"); // … but on disk
    expect(second.has(sha)).toBe(true);
  });

  test.each([
    ["tampered (same size, other bytes)", (file: string) => writeFileSync(file, "CONTENT\n")],
    ["truncated", (file: string) => writeFileSync(file, "cont")],
    ["emptied", (file: string) => writeFileSync(file, "")],
  ])("an entry %s is a miss, is removed, and is counted", async (_name, spoil) => {
    const dir = join(tempDir(), "cache");
    const writer = new SnapshotCache({ dir });
    const sha = writer.put(enc("content\n"));
    await writer.flush();
    spoil(join(dir, sha));
    const reader = new SnapshotCache({ dir });
    expect(await reader.load(sha)).toBeUndefined();
    expect(reader.stats.rejectedDiskEntries).toBe(1);
    expect(existsSync(join(dir, sha))).toBe(false);
  });

  test("an entry replaced by a symlink is not followed", async () => {
    const base = tempDir();
    const dir = join(base, "cache");
    const writer = new SnapshotCache({ dir });
    const sha = writer.put(enc("content\n"));
    await writer.flush();
    writeFileSync(join(base, "elsewhere"), "content\n");
    rmSync(join(dir, sha));
    symlinkSync(join(base, "elsewhere"), join(dir, sha));
    expect(await new SnapshotCache({ dir }).load(sha)).toBeUndefined();
  });

  test("the disk tier stays within maxBytes, oldest out", async () => {
    const dir = join(tempDir(), "cache");
    const cache = new SnapshotCache({ dir, maxBytes: 20 });
    const shas = ["a", "b", "c"].map((ch) => cache.put(enc(ch.repeat(10))));
    await cache.flush();
    const names = readdirSync(dir).filter((n) => /^[0-9a-f]{64}$/.test(n));
    expect(names.sort()).toEqual([shas[1]!, shas[2]!].sort());
  });

  test("a directory others can only read is closed; one they can write, one that is not a directory, or a symlink is refused", () => {
    const base = tempDir();
    const readable = join(base, "readable");
    mkdirSync(readable);
    chmodSync(readable, 0o755);
    new SnapshotCache({ dir: readable });
    expect(lstatSync(readable).mode & 0o777).toBe(0o700);
    for (const mode of [0o777, 0o770, 0o1777]) {
      const open = join(base, `open-${mode.toString(8)}`);
      mkdirSync(open);
      chmodSync(open, mode);
      expect(() => new SnapshotCache({ dir: open })).toThrow(/can be written by other users/);
      expect(lstatSync(open).mode & 0o7777).toBe(mode); // refused, not silently "fixed"
    }
    writeFileSync(join(base, "file"), "x");
    expect(() => new SnapshotCache({ dir: join(base, "file") })).toThrow();
    symlinkSync(readable, join(base, "link"));
    expect(() => new SnapshotCache({ dir: join(base, "link") })).toThrow(/symlink/);
  });

  describe.skipIf(process.getuid?.() !== 0)("another local user (the harness's sapu<id>, a second uid)", () => {
    const other = (): { uid: number; gid: number } => {
      const { nopasswdUser } = ensureTestUsers();
      const uid = Number(spawnSync("id", ["-u", nopasswdUser], { encoding: "utf8" }).stdout.trim());
      const gid = Number(spawnSync("id", ["-g", nopasswdUser], { encoding: "utf8" }).stdout.trim());
      return { uid, gid };
    };

    test("a cache directory that user owns is refused", () => {
      const { uid, gid } = other();
      const dir = join(tempDir(), "theirs");
      mkdirSync(dir, { mode: 0o700 });
      chownSync(dir, uid, gid);
      expect(() => new SnapshotCache({ dir })).toThrow(/belongs to uid/);
    });

    test("cannot plant an entry or hints: writing into the directory fails as that user, and files it owns there are never read, even with the right hash", async () => {
      const { uid, gid } = other();
      const base = tempDir();
      chmodSync(base, 0o755);
      const dir = join(base, "cache");
      const cache = new SnapshotCache({ dir });
      await cache.flush();
      const planted = enc("planted\n");
      const sha = sha256Hex(planted);
      // As that user: the 0700 directory cannot be written at all.
      const attempt = spawnSync("setpriv", [`--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", "sh", "-c", `printf planted > '${join(dir, sha)}'`], { encoding: "utf8" });
      expect(attempt.status).not.toBe(0);
      expect(existsSync(join(dir, sha))).toBe(false);
      // Had it got there anyway (a directory that was open once): files that user owns are not entries.
      writeFileSync(join(dir, sha), planted, { mode: 0o600 });
      chownSync(join(dir, sha), uid, gid);
      writeFileSync(join(dir, "paths.json"), JSON.stringify([["h\u0000p", sha, planted.length]]), { mode: 0o600 });
      chownSync(join(dir, "paths.json"), uid, gid);
      const reader = new SnapshotCache({ dir });
      expect(reader.hint("h", "p")).toBeUndefined();
      expect(await reader.load(sha)).toBeUndefined();
      // Nor is one of ours that others can write, or one with a second link.
      chownSync(join(dir, sha), 0, 0);
      chmodSync(join(dir, sha), 0o666);
      expect(await new SnapshotCache({ dir }).load(sha)).toBeUndefined();
      chmodSync(join(dir, sha), 0o600);
      linkSync(join(dir, sha), join(base, "second-link"));
      expect(await new SnapshotCache({ dir }).load(sha)).toBeUndefined();
      rmSync(join(base, "second-link"));
      expect(new TextDecoder().decode((await new SnapshotCache({ dir }).load(sha))!)).toBe("planted\n"); // the control: now it is one
    });
  });

  test("a corrupt hints file is ignored", () => {
    const dir = join(tempDir(), "cache");
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, "paths.json"), "{not json", { mode: 0o600 });
    expect(new SnapshotCache({ dir }).hint("h", "p")).toBeUndefined();
    writeFileSync(join(dir, "paths.json"), JSON.stringify([["h\u0000p", "not-a-sha", 3], ["h\u0000q", "b".repeat(64), -1]]));
    const cache = new SnapshotCache({ dir });
    expect(cache.hint("h", "p")).toBeUndefined();
    expect(cache.hint("h", "q")).toBeUndefined();
  });
});
