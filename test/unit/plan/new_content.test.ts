/**
 * lib/plan/new_content.ts: planPatch leaves an update's new content as
 * parts (views of the snapshot and the new stretches) until someone reads
 * `newBytes`. Counted work: a delta commit through LocalShell of a large
 * file never joins them (newContentJoins), and transactionLayout does not
 * hash them again; behaviour: every range read from the parts equals the
 * joined bytes, reading joins once and gives the bytes renderText gives,
 * and bytes read or assigned by the caller are checked as any hand-made
 * plan's (a mismatching SHA is refused before anything runs).
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parsePatch } from "../../../lib/patch/parse.ts";
import { copyNewContent, isUnjoined, newContentJoins, newContentLength, newContentSlice } from "../../../lib/plan/new_content.ts";
import { planPatch } from "../../../lib/plan/plan.ts";
import { commitRemote } from "../../../lib/remote/commit.ts";
import { LocalShell } from "../../../lib/remote/local_shell.ts";
import { transactionLayout } from "../../../lib/remote/manifest.ts";
import { readSnapshots, snapshotRootId } from "../../../lib/remote/snapshot.ts";
import { sha256Hex } from "../../../lib/text/sha256.ts";
import type { FileSnapshot, PlannedFile, Snapshots } from "../../../lib/types.ts";

const LINES = 20_000; // ~400 KB: past the delta threshold (64 KiB)
const OLD = Array.from({ length: LINES }, (_, i) => `const value${i} = compute(${i}, "line ${i}");`).join("\n") + "\n";
const PATCH = [
  "*** Begin Patch",
  "*** Update File: src/big.ts",
  "@@",
  "-const value10 = compute(10, \"line 10\");",
  "+const value10 = compute(10, \"ten\");",
  "@@",
  " const value9999 = compute(9999, \"line 9999\");",
  "+// inserted after 9999",
  "@@",
  "-const value19999 = compute(19999, \"line 19999\");",
  "*** End Patch",
].join("\n");
const NEW = OLD.replace('compute(10, "line 10")', 'compute(10, "ten")')
  .replace('compute(9999, "line 9999");\n', 'compute(9999, "line 9999");\n// inserted after 9999\n')
  .replace('const value19999 = compute(19999, "line 19999");\n', "");

function planned(): PlannedFile {
  const bytes = new TextEncoder().encode(OLD);
  const snaps: Snapshots = new Map<string, FileSnapshot>([["src/big.ts", { path: "src/big.ts", kind: "file", bytes, size: bytes.length, sha256: sha256Hex(bytes), mode: 0o644 }]]);
  const parsed = parsePatch(PATCH);
  if (!parsed.ok) throw new Error("fixture patch does not parse");
  const result = planPatch(parsed.patch, snaps);
  if (!result.ok) throw new Error(result.errors.map((e) => e.message).join("\n"));
  return result.plan.files[0]!;
}

describe("planPatch's unjoined new content", () => {
  test("length, SHA-256 and every range read from the parts equal the joined bytes", () => {
    const file = planned();
    const expected = new TextEncoder().encode(NEW);
    expect(isUnjoined(file)).toBe(true);
    expect(newContentLength(file)).toBe(expected.length);
    expect(file.newSha256).toBe(sha256Hex(expected));
    const ranges: [number, number][] = [[0, 0], [0, 1], [0, expected.length], [expected.length, expected.length]];
    for (const piece of file.pieces!) {
      const [a, b] = "source" in piece ? [0, 0] : piece.fresh;
      ranges.push([a, b], [Math.max(0, a - 5), Math.min(expected.length, b + 5)]);
    }
    for (let k = 1; k < 38; k++) ranges.push([Math.floor(expected.length * (k / 41)), Math.floor(expected.length * ((k + 3) / 41))]);
    const joinsBefore = newContentJoins();
    for (const [a, b] of ranges) {
      expect(newContentSlice(file, a, b)).toEqual(expected.subarray(a, b));
      const out = new Uint8Array(b - a + 3);
      copyNewContent(file, a, b, out, 3);
      expect(out.subarray(3) as Uint8Array).toEqual(expected.subarray(a, b) as Uint8Array);
    }
    expect(() => newContentSlice(file, 0, expected.length + 1)).toThrow(RangeError);
    expect(newContentJoins()).toBe(joinsBefore);
    expect(isUnjoined(file)).toBe(true);
  });

  test("reading newBytes joins once; from then on the file is an ordinary one", () => {
    const file = planned();
    const before = newContentJoins();
    const bytes = file.newBytes!;
    expect(new TextDecoder().decode(bytes)).toBe(NEW);
    expect(file.newBytes).toBe(bytes);
    expect(newContentJoins()).toBe(before + 1);
    expect(isUnjoined(file)).toBe(false);
    expect(Object.keys(file)).toContain("newBytes");
  });

  test("bytes the caller changed or assigned are checked again: a mismatching SHA-256 is refused", () => {
    const changed = planned();
    changed.newBytes![0] = 0x21; // read (joined), then changed in place
    expect(() => transactionLayout({ files: [changed], warnings: [], createParents: true })).toThrow(/does not match its newBytes/);
    const assigned = planned();
    assigned.newBytes = new TextEncoder().encode(NEW + "x");
    expect(isUnjoined(assigned)).toBe(false);
    expect(() => transactionLayout({ files: [assigned], warnings: [], createParents: true })).toThrow(/does not match its newBytes/);
    expect(() => transactionLayout({ files: [planned()], warnings: [], createParents: true })).not.toThrow();
  });

  test("a delta commit through LocalShell writes the planned bytes and joins nothing", async () => {
    const root = mkdtempSync(join(tmpdir(), "sap-new-content-"));
    try {
      mkdirSync(join(root, "src"));
      writeFileSync(join(root, "src", "big.ts"), OLD);
      const shell = new LocalShell();
      const snaps = await readSnapshots(shell, root, ["src/big.ts"]);
      const parsed = parsePatch(PATCH);
      if (!parsed.ok) throw new Error("fixture patch does not parse");
      const result = planPatch(parsed.patch, snaps);
      if (!result.ok) throw new Error(result.errors.map((e) => e.message).join("\n"));
      const before = newContentJoins();
      const report = await commitRemote(shell, root, result.plan, { expectRootId: snapshotRootId(snaps) });
      expect(report.ok).toBe(true);
      expect(report.files[0]!.bytesWritten).toBe(new TextEncoder().encode(NEW).length);
      expect(report.files[0]!.bytesUploaded).toBeLessThan(1000);
      expect(newContentJoins()).toBe(before);
      expect(readFileSync(join(root, "src", "big.ts"), "utf8")).toBe(NEW);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
