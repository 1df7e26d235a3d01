/**
 * Contract: the snapshot wire of SPEC §11.1 on every shell under test —
 * the snapshot cache (a hash proof instead of a download, a change since
 * the read downloads again and the plan is built on the new bytes,
 * eviction, a tampered disk entry), compression on and off (zstd where the
 * userland has it, gzip under BusyBox), and programs sent packed once the
 * host has said it can unpack them.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { newContentJoins } from "../../lib/plan/new_content.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { SnapshotCache } from "../../lib/remote/snapshot_cache.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import { cleanupTemps, makeTree, noLeftoversAfterEach, tempDir } from "../support/local_trees.ts";
import { shellsUnderTest } from "../support/shells_under_test.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();
const shells = shellsUnderTest({ suite: "contract: snapshot wire" });

/** Code-like text that compresses well, ~200 KiB. */
function bigText(tag: string): string {
  const lines: string[] = [];
  for (let i = 0; i < 5000; i++) lines.push(`  const value_${i} = compute(${i}, "${tag}"); // line ${i}`);
  return lines.join("\n") + "\n";
}

/** Records what each exec sent and received; forwards `link` (a well-behaved wrapper). */
class RecordingShell implements RemoteShell {
  readonly commands: string[] = [];
  readonly received: number[] = [];
  readonly #inner: RemoteShell;
  constructor(inner: RemoteShell) {
    this.#inner = inner;
  }
  get label(): string | undefined {
    return this.#inner.label;
  }
  get elevated(): boolean | undefined {
    return this.#inner.elevated;
  }
  get link(): "local" | "network" | undefined {
    return this.#inner.link;
  }
  async exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    this.commands.push(command);
    const result = await this.#inner.exec(command, options);
    this.received.push(result.stdout.length);
    return result;
  }
}

const patchOf = (path: string, from: string, to: string): string => `*** Begin Patch\n*** Update File: ${path}\n@@\n-${from}\n+${to}\n*** End Patch\n`;

for (const c of shells) {
  describe(`snapshot wire (${c.name})`, () => {
    test("a content the cache holds is proved by hash, not sent again; one exec each", async () => {
      const text = bigText("a");
      const root = makeTree({ "big.ts": text, "small.txt": "small\n", "dir/x": "x" });
      const shell = new RecordingShell(await c.open());
      const cache = new SnapshotCache();
      const first = await readSnapshots(shell, root, ["big.ts", "small.txt", "dir", "none.txt"], { cache, compress: false });
      expect(first.get("big.ts")).toMatchObject({ transfer: "downloaded", sha256: sha256Hex(text) });
      expect(first.get("small.txt")!.transfer).toBe("downloaded");
      expect(first.get("dir")!.transfer).toBeUndefined();
      const second = await readSnapshots(shell, root, ["big.ts", "small.txt", "none.txt"], { cache, compress: false });
      const big = second.get("big.ts")!;
      expect(big.transfer).toBe("cached");
      expect(new TextDecoder().decode(big.bytes)).toBe(text);
      expect(big.sha256).toBe(sha256Hex(text));
      expect(big.size).toBe(text.length);
      expect(second.get("small.txt")).toMatchObject({ transfer: "cached", sha256: sha256Hex("small\n") });
      expect(second.get("none.txt")!.kind).toBe("missing");
      expect(shell.commands.length).toBe(2);
      expect(shell.received[1]!).toBeLessThan(4096); // no file bytes the second time
      expect(cache.stats).toMatchObject({ hits: 2, misses: 0 });
    });

    test("a file changed since it was read (same size, other bytes) is downloaded and the plan is built on the new bytes", async () => {
      const before = bigText("b");
      const root = makeTree({ "big.ts": before });
      const shell = await c.open();
      const cache = new SnapshotCache();
      await readSnapshots(shell, root, ["big.ts"], { cache });
      // Another writer: same length, one line different.
      const after = before.replace("const value_10 = compute(10, \"b\");", "const value_10 = compute(99, \"b\");");
      expect(after.length).toBe(before.length);
      writeFileSync(join(root, "big.ts"), after);
      const report = await applyPatch(shell, {
        root,
        cache,
        patch: patchOf("big.ts", '  const value_10 = compute(99, "b"); // line 10', '  const value_10 = compute(100, "b"); // line 10'),
      });
      expect(report.errors).toBeUndefined();
      expect(report.files[0]).toMatchObject({ snapshot: c.transport === "ssh" ? "compressed" : "downloaded", previousSha256: sha256Hex(after) });
      expect(readFileSync(join(root, "big.ts"), "utf8")).toBe(after.replace("compute(99,", "compute(100,"));
      expect(cache.stats.misses).toBe(1);
      // And the patch that only fits the old bytes is a context failure, not applied to the cached copy.
      writeFileSync(join(root, "big.ts"), before.replace("compute(20,", "compute(21,"));
      const stale = await applyPatch(shell, { root, cache, patch: patchOf("big.ts", '  const value_20 = compute(20, "b"); // line 20', "  changed();") });
      expect(stale.ok).toBe(false);
      // (the line was changed on the host after the read: the plan sees the host's text)
      expect(["anchor_not_found", "context_mismatch"]).toContain(stale.errors![0]!.code);
      expect(stale.files).toEqual([]);
    });

    test("after a commit the new content is cached: the next patch of the file downloads nothing", async () => {
      const text = bigText("c");
      const root = makeTree({ "big.ts": text });
      const shell = new RecordingShell(await c.open());
      const cache = new SnapshotCache();
      const joins = newContentJoins();
      const one = await applyPatch(shell, { root, cache, patch: patchOf("big.ts", '  const value_1 = compute(1, "c"); // line 1', "  one();") });
      expect(one.ok).toBe(true);
      // Caching the new content copies it once; it never joins the plan's lazy newBytes.
      expect(newContentJoins()).toBe(joins);
      expect(one.files[0]!.snapshot).not.toBe("cached");
      const two = await applyPatch(shell, { root, cache, patch: patchOf("big.ts", "  one();", "  two();") });
      expect(two.ok).toBe(true);
      expect(two.files[0]!.snapshot).toBe("cached");
      expect(shell.received[2]!).toBeLessThan(4096);
      expect(readFileSync(join(root, "big.ts"), "utf8")).toBe(text.replace('  const value_1 = compute(1, "c"); // line 1', "  two();"));
    });

    test("an evicted content is downloaded again", async () => {
      const root = makeTree({ "a.ts": bigText("a"), "b.ts": bigText("b") });
      const shell = await c.open();
      const cache = new SnapshotCache({ maxBytes: 300 * 1024 }); // room for one of the two
      await readSnapshots(shell, root, ["a.ts"], { cache });
      await readSnapshots(shell, root, ["b.ts"], { cache });
      expect(cache.stats.evictions).toBe(1);
      const again = await readSnapshots(shell, root, ["a.ts", "b.ts"], { cache, compress: false });
      expect(again.get("a.ts")!.transfer).toBe("downloaded");
      expect(again.get("b.ts")!.transfer).toBe("cached");
      expect(new TextDecoder().decode(again.get("a.ts")!.bytes)).toBe(bigText("a"));
    });

    test("a tampered disk cache entry is a download of the true bytes, never the tampered ones", async () => {
      const text = bigText("d");
      const root = makeTree({ "big.ts": text });
      const dir = join(tempDir(), "cache");
      const shell = await c.open();
      const writer = new SnapshotCache({ dir });
      await readSnapshots(shell, root, ["big.ts"], { cache: writer });
      await writer.flush();
      const entry = readdirSync(dir).find((n) => n === sha256Hex(text))!;
      chmodSync(join(dir, entry), 0o600);
      writeFileSync(join(dir, entry), text.replace("compute(3,", "compute(4,"));
      const reader = new SnapshotCache({ dir });
      const snaps = await readSnapshots(shell, root, ["big.ts"], { cache: reader, compress: false });
      expect(snaps.get("big.ts")!.transfer).toBe("downloaded");
      expect(new TextDecoder().decode(snaps.get("big.ts")!.bytes)).toBe(text);
      expect(reader.stats.rejectedDiskEntries).toBe(1);
      // An intact entry written by another process is used.
      await reader.flush();
      const third = await readSnapshots(shell, root, ["big.ts"], { cache: new SnapshotCache({ dir }) });
      expect(third.get("big.ts")!.transfer).toBe("cached");
    });

    test("compression on: large files travel compressed (zstd, or gzip without it) and arrive exact; off: as they are", async () => {
      const text = bigText("e");
      const binary = new Uint8Array(100_000).map((_, i) => (i * 7919 + (i >> 3)) % 256);
      const root = makeTree({ "big.ts": text, "data.bin": binary, "small.txt": "tiny\n", "empty": "" });
      const shell = await c.open();
      const on = await readSnapshots(shell, root, ["big.ts", "data.bin", "small.txt", "empty"], { compress: true });
      expect(on.get("big.ts")!.transfer).toBe("compressed");
      expect(new TextDecoder().decode(on.get("big.ts")!.bytes)).toBe(text);
      expect(on.get("big.ts")!.sha256).toBe(sha256Hex(text));
      expect(on.get("data.bin")!.bytes).toEqual(binary);
      expect(on.get("data.bin")!.transfer).toBe("compressed");
      expect(on.get("small.txt")!.transfer).toBe("downloaded"); // below the threshold
      expect(on.get("empty")!.bytes).toEqual(new Uint8Array(0));
      const off = await readSnapshots(shell, root, ["big.ts", "data.bin"], { compress: false });
      expect(off.get("big.ts")!.transfer).toBe("downloaded");
      expect(off.get("data.bin")!.bytes).toEqual(binary);
    });

    test("with compression on, programs go packed once the host has said it can unpack them, and work", async () => {
      const text = bigText("f");
      const root = makeTree({ "big.ts": text });
      const shell = new RecordingShell(await c.open());
      const cache = new SnapshotCache();
      const report = await applyPatch(shell, { root, cache, compress: true, patch: patchOf("big.ts", '  const value_5 = compute(5, "f"); // line 5', "  five();") });
      expect(report.ok).toBe(true);
      const again = await applyPatch(shell, { root, cache, compress: true, patch: patchOf("big.ts", "  five();", "  six();") });
      expect(again.errors).toBeUndefined();
      expect(shell.commands.length).toBe(4);
      expect(shell.commands[0]).not.toContain("sap_z=");
      for (const command of shell.commands.slice(1)) expect(command).toContain("sap_z=");
      expect(shell.commands[3]!.length).toBeLessThan(shell.commands[0]!.length);
      expect(readFileSync(join(root, "big.ts"), "utf8")).toBe(text.replace('  const value_5 = compute(5, "f"); // line 5', "  six();"));
    });
  });
}
