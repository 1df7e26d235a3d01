/**
 * Contract: delta uploads (lib/remote/delta.ts, lib/remote/programs/commit_delta.ts)
 * on every shell under test. A change in a multi-MB file sends only its new
 * stretches and the host rebuilds the rest from the current file; the
 * result must be byte for byte the planned content, and a source that
 * changed since the snapshot (content, or swapped for a symlink to an
 * identical outside file) must end as a conflict with nothing changed.
 * Faults are injected at hook points of the real program (HookedShell);
 * every test name says which. Every test ends with the no-leftovers check.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, lstatSync, readFileSync, statSync } from "node:fs";
import type { Stats } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { commitRemote } from "../../lib/remote/commit.ts";
import { parsePatch } from "../../lib/patch/parse.ts";
import { planPatch } from "../../lib/plan/plan.ts";
import { DELTA_MAX_SOURCE_PIECES, deltaUpload } from "../../lib/remote/delta.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import { shQuote } from "../../lib/remote/shell.ts";
import type { RemoteShell } from "../../lib/remote/shell.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import type { ApplyReport } from "../../lib/types.ts";
import { cleanupTemps, CountingShell, HookedShell, makeTree, noLeftoversAfterEach, P, plan, tempDir } from "../support/local_trees.ts";
import { shellsUnderTest } from "../support/shells_under_test.ts";
import { q } from "./helpers.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();
const shells = shellsUnderTest({ suite: "contract: delta upload" });

const enc = new TextEncoder();

/** Line `i` of the big test files: distinct, of varying length. */
const lineOf = (i: number): string => `row ${i}: ${"abcdefghij".repeat(i % 7)} value=${(i * 7919) % 100003}`;

/** `count` lines joined with `eol`, with a final ending unless told otherwise. */
function bigText(count: number, eol = "\n", finalNewline = true): string {
  const lines: string[] = [];
  for (let i = 1; i <= count; i++) lines.push(lineOf(i));
  return lines.join(eol) + (finalNewline ? eol : "");
}

/** A patch replacing each listed line `i` by `lineOf(i) + suffix`. */
function linesPatch(path: string, rows: number[], suffix = " CHANGED", moveTo?: string): string {
  const body = rows.flatMap((i) => ["@@", `-${lineOf(i)}`, `+${lineOf(i)}${suffix}`]);
  return ["*** Begin Patch", `*** Update File: ${path}`, ...(moveTo ? [`*** Move to: ${moveTo}`] : []), ...body, "*** End Patch"].join("\n");
}

/** The expected text after {@linkcode linesPatch}. */
function changed(text: string, rows: number[], suffix = " CHANGED"): string {
  let out = text;
  for (const i of rows) out = out.replace(new RegExp(`(^|[\\r\\n])${lineOf(i).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?=[\\r\\n]|$)`), `$1${lineOf(i)}${suffix}`);
  return out;
}

const bytesOf = (root: string, path: string): Uint8Array => new Uint8Array(readFileSync(join(root, path)));

/** Hook code writing "#" over byte `at` of root/big.txt, in place (same inode, same size). */
const overwrite = (root: string, at: number): string => `printf '#' | dd of=${q(root, "big.txt")} bs=1 seek=${at} conv=notrunc 2>/dev/null`;

/** `text` after {@linkcode overwrite} (ASCII text: characters are bytes). */
const overwritten = (text: string, at: number): string => text.slice(0, at) + "#" + text.slice(at + 1);

/** Hook code for several hook points at once: `{ "delta_read:0": "…", "staged:": "…" }`. */
function hooks(points: Record<string, string>): string {
  return `case "$1:$2" in ${Object.entries(points).map(([point, code]) => `${shQuote(point)}) ${code} ;;`).join(" ")} esac`;
}

async function applyCounted(shell: RemoteShell, root: string, patch: string, delta?: boolean): Promise<{ report: ApplyReport; commitStdin: number }> {
  const counting = new CountingShell(shell);
  const report = await applyPatch(counting, { root, patch, ...(delta === undefined ? {} : { delta }) });
  return { report, commitStdin: counting.stdinBytes[1] ?? 0 };
}

for (const c of shells) {
  describe(`delta upload (${c.name})`, () => {
    test("a 1-line change in a 3 MB file uploads under 1% of it and writes the exact bytes; delta off uploads it whole with the same result", async () => {
      const text = bigText(60_000);
      const size = enc.encode(text).length;
      expect(size).toBeGreaterThan(3_000_000);
      const patch = linesPatch("data/big.txt", [31_415]);
      const expected = enc.encode(changed(text, [31_415]));
      const root = makeTree({ "data/big.txt": { content: text, mode: 0o640 } });
      const ino = statSync(join(root, "data/big.txt")).ino;

      const { report, commitStdin } = await applyCounted(await c.open(), root, patch);
      expect(report.errors).toBeUndefined();
      expect(commitStdin).toBeLessThan(size / 100);
      expect(report.files[0]!.bytesUploaded!).toBeLessThan(size / 100);
      expect(report.files[0]!.bytesUploaded!).toBeGreaterThan(0);
      expect(report.files[0]!.bytesWritten).toBe(expected.length);
      expect(sha256Hex(bytesOf(root, "data/big.txt"))).toBe(sha256Hex(expected));
      expect(report.files[0]!.newSha256).toBe(sha256Hex(expected));
      expect(statSync(join(root, "data/big.txt")).mode & 0o777).toBe(0o640);
      expect(statSync(join(root, "data/big.txt")).ino).not.toBe(ino); // replaced by rename
      expect(statSync(join(root, "data/big.txt")).nlink).toBe(1);
      // the pin (a hard link of the source) was gone before step 4 looked at the link count
      expect(report.files[0]!.warnings).toEqual([]);
      expect(report.files[0]!.metadataPreserved).toEqual({ mode: true, owner: true });

      const whole = makeTree({ "data/big.txt": { content: text, mode: 0o640 } });
      const off = await applyCounted(await c.open(), whole, patch, false);
      expect(off.report.errors).toBeUndefined();
      expect(off.commitStdin).toBeGreaterThan(size);
      expect(off.report.files[0]!.bytesUploaded).toBe(expected.length);
      expect(bytesOf(whole, "data/big.txt")).toEqual(bytesOf(root, "data/big.txt"));
    }, 30_000);

    test("delta off, two files over 1 MiB in one upload: each is cut from the blob at an unaligned offset, whole blocks by dd, byte for byte", async () => {
      const a = new Uint8Array(1_234_567).map((_, i) => (i * 31 + 7) % 251);
      const b = new Uint8Array(2_100_003).map((_, i) => (i * 17 + 3) % 253);
      const root = makeTree({ "a.bin": "x", "b.bin": "y" });
      const report = await commitRemote(await c.open(), root, plan([P.update("a.bin", "x", a), P.update("b.bin", "y", b)]), { delta: false });
      expect(report.errors).toBeUndefined();
      expect(sha256Hex(bytesOf(root, "a.bin"))).toBe(sha256Hex(a));
      expect(sha256Hex(bytesOf(root, "b.bin"))).toBe(sha256Hex(b));
    }, 30_000);

    test("140 chunks spread through the file: only the 128 largest ranges are copied on the host, the rest is uploaded; exact bytes", async () => {
      const text = bigText(30_000);
      const rows = Array.from({ length: 140 }, (_, k) => 100 + k * 211 + (k % 5) * 17);
      const root = makeTree({ "big.txt": text });
      const shell = await c.open();
      const snaps = await readSnapshots(shell, root, ["big.txt"]);
      const parsed = parsePatch(linesPatch("big.txt", rows));
      if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
      const planned = planPatch(parsed.patch, snaps);
      if (!planned.ok) throw new Error(planned.errors[0]!.message);
      const upload = deltaUpload(planned.plan.files[0]!)!;
      expect(upload).not.toBeNull();
      expect(upload.pieces.filter((p) => p.kind === "source").length).toBe(DELTA_MAX_SOURCE_PIECES);
      expect(upload.pieces.filter((p) => p.kind === "blob").length).toBeGreaterThan(0); // merged ranges too long to inline
      const report = await commitRemote(shell, root, planned.plan);
      expect(report.errors).toBeUndefined();
      const expected = enc.encode(changed(text, rows));
      expect(sha256Hex(bytesOf(root, "big.txt"))).toBe(sha256Hex(expected));
      expect(report.files[0]!.bytesUploaded!).toBe(upload.blobBytes + upload.lineBytes);
      expect(report.files[0]!.bytesUploaded!).toBeLessThan(expected.length / 2);
    }, 30_000);

    test("CRLF endings, a BOM and no final newline are kept exactly; a file under 64 KiB in the same batch is uploaded whole", async () => {
      const crlf = "\uFEFF" + bigText(4_000, "\r\n", false);
      const small = bigText(100);
      const root = makeTree({ "win.txt": crlf, "small.txt": small });
      const patch = [
        "*** Begin Patch",
        "*** Update File: win.txt",
        "@@",
        `-${lineOf(1)}`,
        `+${lineOf(1)} first`,
        "@@",
        `-${lineOf(4_000)}`,
        `+${lineOf(4_000)} last`,
        "*** End of File",
        "*** Update File: small.txt",
        "@@",
        `-${lineOf(50)}`,
        `+${lineOf(50)} small`,
        "*** End Patch",
      ].join("\n");
      const { report } = await applyCounted(await c.open(), root, patch);
      expect(report.errors).toBeUndefined();
      const winAfter = crlf.replace(`\uFEFF${lineOf(1)}\r\n`, `\uFEFF${lineOf(1)} first\r\n`).replace(new RegExp(`${lineOf(4_000)}$`), `${lineOf(4_000)} last`);
      expect(new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytesOf(root, "win.txt"))).toBe(winAfter);
      expect(bytesOf(root, "win.txt").slice(0, 3)).toEqual(new Uint8Array([0xef, 0xbb, 0xbf]));
      expect(readFileSync(join(root, "small.txt"), "utf8")).toBe(changed(small, [50], " small"));
      const [win, smallReport] = report.files;
      expect(win!.bytesUploaded!).toBeLessThan(1000);
      expect(smallReport!.bytesUploaded).toBe(smallReport!.bytesWritten);
    }, 30_000);

    test("a Move with a change: the destination is rebuilt from the source, the source removed, mode kept", async () => {
      const text = bigText(20_000);
      const root = makeTree({ "src/old.txt": { content: text, mode: 0o604 } });
      const { report } = await applyCounted(await c.open(), root, linesPatch("src/old.txt", [10_000], " moved", "dst/deep/new.txt"));
      expect(report.errors).toBeUndefined();
      expect(report.files[0]).toMatchObject({ op: "move", moveTo: "dst/deep/new.txt", metadataPreserved: { mode: true, owner: true } });
      expect(report.files[0]!.bytesUploaded!).toBeLessThan(1000);
      expect(readFileSync(join(root, "dst/deep/new.txt"), "utf8")).toBe(changed(text, [10_000], " moved"));
      expect(statSync(join(root, "dst/deep/new.txt")).mode & 0o777).toBe(0o604);
      expect(() => lstatSync(join(root, "src/old.txt"))).toThrow();
    }, 30_000);

    test("the source rewritten in place before it is pinned (hook overwrites a byte inside a copied range) → the rebuilt stage does not match: conflict with expected and actual SHA from the content comparison under the locks, nothing written", async () => {
      const text = bigText(10_000);
      const root = makeTree({ "big.txt": text, "other.txt": "o1\n" });
      const marker = join(tempDir(), "locked");
      const ino = statSync(join(root, "big.txt")).ino;
      const shell = new HookedShell(await c.open(), hooks({ "delta_pin:0": overwrite(root, 100), "locked:": `: > ${shQuote(marker)}` }));
      const patch = linesPatch("big.txt", [5_000]).replace("*** End Patch", "*** Update File: other.txt\n@@\n-o1\n+o2\n*** End Patch");
      const report = await applyPatch(shell, { root, patch });
      const now = overwritten(text, 100);
      expect(report.ok).toBe(false);
      expect(report.errors!.map((e) => [e.code, e.path])).toEqual([["conflict", "big.txt"]]);
      expect(report.errors![0]).toMatchObject({ expectedSha256: sha256Hex(text), actualSha256: sha256Hex(now), actualState: "file", retryable: true });
      // found with the content comparison under the locks (the stages are
      // hashed in the background meanwhile and judged there too)
      expect(existsSync(marker)).toBe(true);
      expect(readFileSync(join(root, "big.txt"), "utf8")).toBe(now);
      expect(statSync(join(root, "big.txt")).ino).toBe(ino);
      expect(statSync(join(root, "big.txt")).nlink).toBe(1);
      expect(readFileSync(join(root, "other.txt"), "utf8")).toBe("o1\n");
    }, 30_000);

    test("the pinned source rewritten in place while the stage is assembled (hook after the pin) → conflict, nothing written", async () => {
      const text = bigText(10_000);
      const root = makeTree({ "big.txt": text });
      const shell = new HookedShell(await c.open(), hooks({ "delta_read:0": overwrite(root, 200_000) }));
      const report = await applyPatch(shell, { root, patch: linesPatch("big.txt", [5_000]) });
      expect(report.errors!.map((e) => e.code)).toEqual(["conflict"]);
      expect(report.errors![0]!.actualSha256).toBe(sha256Hex(overwritten(text, 200_000)));
      expect(readFileSync(join(root, "big.txt"), "utf8")).toBe(overwritten(text, 200_000));
    }, 30_000);

    test("bytes appended past the copied ranges before the pin (hook): the stage is still exactly the planned content, and the re-check under the locks sees the change → conflict", async () => {
      const text = bigText(10_000);
      const root = makeTree({ "big.txt": text });
      const marker = join(tempDir(), "locked");
      const shell = new HookedShell(await c.open(), hooks({ "delta_pin:0": `printf 'appended\\n' >> ${q(root, "big.txt")}`, "locked:": `: > ${shQuote(marker)}` }));
      const report = await applyPatch(shell, { root, patch: linesPatch("big.txt", [5_000]) });
      expect(report.errors!.map((e) => [e.code, e.actualSha256])).toEqual([["conflict", sha256Hex(text + "appended\n")]]);
      expect(existsSync(marker)).toBe(true); // found by step 3
      expect(readFileSync(join(root, "big.txt"), "utf8")).toBe(text + "appended\n");
    }, 30_000);

    test("rewritten while read and restored before the verdict (hooks overwrite, then restore) → remote_error, retryable, nothing written", async () => {
      const text = bigText(10_000);
      const root = makeTree({ "big.txt": text });
      const saved = join(tempDir(), "saved.txt");
      copyFileSync(join(root, "big.txt"), saved);
      const ino = statSync(join(root, "big.txt")).ino;
      const shell = new HookedShell(await c.open(), hooks({
        "delta_read:0": overwrite(root, 100),
        "staged:": `cat ${shQuote(saved)} > ${q(root, "big.txt")}`,
      }));
      const report = await applyPatch(shell, { root, patch: linesPatch("big.txt", [5_000]) });
      expect(report.ok).toBe(false);
      expect(report.errors!.map((e) => e.code)).toEqual(["remote_error"]);
      expect(report.errors![0]!.retryable).toBe(true);
      expect(report.errors![0]!.message).toContain("changed while it was being read");
      expect(readFileSync(join(root, "big.txt"), "utf8")).toBe(text);
      expect(statSync(join(root, "big.txt")).ino).toBe(ino);
    }, 30_000);

    describe("the source swapped for a symlink to an identical file outside the root", () => {
      /** Root with big.txt, and outside the root an exact copy of it. */
      const setup = (): { text: string; root: string; outside: string; swap: string; marker: string; stageAccepted: string; before: Stats } => {
        const text = bigText(10_000);
        const root = makeTree({ "big.txt": text });
        const outside = join(makeTree({ "copy.txt": text }), "copy.txt");
        const swap = `mv ${q(root, "big.txt")} ${q(root, "big.real")} && ln -s ${shQuote(outside)} ${q(root, "big.txt")}`;
        const marker = join(tempDir(), "stage-accepted");
        // white box: at the stage_hashed hook (the background hash of step 1
        // collected, under the locks), SAP_DELTA_BAD is empty when every
        // rebuilt stage had its planned SHA-256
        const stageAccepted = `[ -n "$SAP_DELTA_BAD" ] || : > ${shQuote(marker)}`;
        return { text, root, outside, swap, marker, stageAccepted, before: statSync(outside) };
      };
      const untouched = (s: ReturnType<typeof setup>): void => {
        const after = statSync(s.outside);
        expect(readFileSync(s.outside, "utf8")).toBe(s.text);
        expect([after.ino, after.nlink, after.mode, after.uid, after.mtimeMs]).toEqual([s.before.ino, s.before.nlink, s.before.mode, s.before.uid, s.before.mtimeMs]);
        expect(lstatSync(join(s.root, "big.txt")).isSymbolicLink()).toBe(true);
        expect(readFileSync(join(s.root, "big.real"), "utf8")).toBe(s.text);
      };

      test("swapped just before the pin (hook): the pin is the symlink itself, nothing is read through it → conflict (symlink)", async () => {
        const s = setup();
        const shell = new HookedShell(await c.open(), hooks({ "delta_pin:0": s.swap, "stage_hashed:": s.stageAccepted }));
        const report = await applyPatch(shell, { root: s.root, patch: linesPatch("big.txt", [5_000]) });
        expect(report.errors!.map((e) => [e.code, e.path, e.actualState])).toEqual([["conflict", "big.txt", "symlink"]]);
        expect(existsSync(s.marker)).toBe(false); // refused in step 1, at the pin: no stage was hashed
        untouched(s);
      }, 30_000);

      test("swapped after the stage was built from the pin and the locks were taken (hook): the step-3 re-check under the locks refuses it → conflict (symlink)", async () => {
        const s = setup();
        const shell = new HookedShell(await c.open(), hooks({ "stage_hashed:": s.stageAccepted, "locked:": s.swap }));
        const report = await applyPatch(shell, { root: s.root, patch: linesPatch("big.txt", [5_000]) });
        expect(report.errors!.map((e) => [e.code, e.path, e.actualState])).toEqual([["conflict", "big.txt", "symlink"]]);
        expect(existsSync(s.marker)).toBe(true);
        untouched(s);
      }, 30_000);

      test("no hard link possible (FAULT INJECTED: sap_link fails) and swapped between the check and the read: the stage is read through the symlink (identical content, so its SHA-256 alone would pass), yet the path checks before the locks refuse the symlinked source → conflict", async () => {
        const s = setup();
        const shell = new HookedShell(await c.open(), hooks({ "delta_pin:0": "sap_link() { return 1; }", "delta_read:0": s.swap, "stage_hashed:": s.stageAccepted }));
        const report = await applyPatch(shell, { root: s.root, patch: linesPatch("big.txt", [5_000]) });
        expect(report.errors!.map((e) => [e.code, e.path, e.actualState])).toEqual([["conflict", "big.txt", "symlink"]]);
        expect(existsSync(s.marker)).toBe(false); // refused before the stages' SHA-256s are judged (under the locks)
        untouched(s);
      }, 30_000);
    });
  });
}

// The cutter for a dd without byte-range flags (iflag=skip_bytes,count_bytes:
// older BusyBox, BSD): forced here by clearing the probe's verdict at the
// start hook, since every userland under test has the flags (and a dd with
// them would fail the cut there).
for (const c of shells) {
  describe(`ranges cut by dd | tail | head, as where dd has no byte-range flags (${c.name}; forced at the start hook)`, () => {
    test("a delta update (ranges at 0, unaligned, past 1 MiB) and a whole upload of several files across directories come out byte for byte", async () => {
      const text = bigText(60_000);
      const rows = [200, 31_415, 59_000];
      const small = Array.from({ length: 6 }, (_, i) => [`d${i % 3}/f${i}.txt`, `file ${i}\n`.repeat(100 + i)] as const);
      const root = makeTree({ "big.txt": text, ...Object.fromEntries(small) });
      const shell = new HookedShell(await c.open(), hooks({ "start:": `SAP_DDB=; dd() { case "$*" in *count_bytes*) return 99 ;; esac; command dd "$@"; }` }));
      const { report, commitStdin } = await applyCounted(shell, root, linesPatch("big.txt", rows));
      expect(report.errors?.map((e) => e.message)).toBeUndefined();
      expect(commitStdin).toBeLessThan(text.length / 100);
      expect(sha256Hex(bytesOf(root, "big.txt"))).toBe(sha256Hex(enc.encode(changed(text, rows))));
      const whole = await commitRemote(shell, root, plan(small.map(([p, old]) => P.update(p, old, `${old}one more\n`))));
      expect(whole.errors).toBeUndefined();
      for (const [p, old] of small) expect(readFileSync(join(root, p), "utf8")).toBe(`${old}one more\n`);
    }, 30_000);
  });
}
