/**
 * Contract: names near a missing path (issue 29.1), found by the snapshot
 * program in the same exec (programs/sh_near.ts), for every shell under
 * test (dash, bash, BusyBox userland, ssh-root, ssh-sudo): letter case,
 * Unicode NFC/NFD, the same base name elsewhere, a near spelling; never a
 * symlink, a FIFO or a directory others can write followed; bounded by
 * entries and depth, counted.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { applyPatch } from "../../lib/apply.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { missingFileFailure } from "../../lib/plan/not_found.ts";
import type { ReadSnapshotsOptions } from "../../lib/remote/snapshot.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";
import { cleanupTemps, CountingShell, makeTree } from "../support/local_trees.ts";
import { shellsUnderTest } from "../support/shells_under_test.ts";

afterAll(cleanupTemps, 30_000);
const shells = shellsUnderTest({ suite: "contract: closest paths" });

/** Passes every exec through and keeps its stdout, to count what the program printed. */
class RecordingShell implements RemoteShell {
  readonly outputs: Uint8Array[] = [];
  readonly label: string;
  readonly elevated: boolean;
  readonly #inner: RemoteShell;
  constructor(inner: RemoteShell) {
    this.#inner = inner;
    this.label = inner.label ?? "recording";
    this.elevated = inner.elevated ?? false;
  }
  async exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    const r = await this.#inner.exec(command, options);
    this.outputs.push(r.stdout);
    return r;
  }
}

/** The walk's NF records and NEAR line in one snapshot output. */
function walkOf(stdout: Uint8Array): { records: number; near: string | null } {
  const text = new TextDecoder().decode(stdout);
  return { records: text.split("\nNF ").length - 1, near: /\nNEAR ([0-9]+ [01])\n/.exec(text)?.[1] ?? null };
}

async function closest(shell: RemoteShell, root: string, path: string, options: ReadSnapshotsOptions = {}): Promise<string[] | undefined> {
  const snaps = await readSnapshots(shell, root, [path], { closestFor: [path], ...options });
  const snap = snaps.get(path)!;
  expect(snap.kind).toBe("missing");
  return snap.closestPaths;
}

const update = (path: string): string => `*** Begin Patch\n*** Update File: ${path}\n@@\n-a\n+b\n*** End Patch`;

for (const c of shells) {
  describe(`closest paths (${c.name})`, () => {
    test("case, NFC/NFD, the same base name elsewhere, a near spelling: ranked, in one exec", async () => {
      const root = makeTree({
        "src/parse.ts": "a\n",
        "lib/util/parse.ts": "b\n",
        "src/cafe\u0301.ts": "c\n",
        "README.md": "r\n",
      });
      const shell = new CountingShell(await c.open());
      expect(await closest(shell, root, "src/Parse.ts")).toEqual(["src/parse.ts", "lib/util/parse.ts"]);
      expect(await closest(shell, root, "SRC/PARSE.TS")).toEqual(["src/parse.ts", "lib/util/parse.ts"]);
      expect(await closest(shell, root, "src/caf\u00e9.ts")).toEqual(["src/cafe\u0301.ts"]);
      expect(await closest(shell, root, "app/parse.ts")).toEqual(["src/parse.ts", "lib/util/parse.ts"]);
      expect(await closest(shell, root, "src/prase.ts")).toEqual(["src/parse.ts"]);
      expect(await closest(shell, root, "src/lexer.ts")).toEqual([]);
      expect(shell.count).toBe(6);
    });

    test("applyPatch: did you mean, the exact header, no Add offered; one exec; resent with it, it applies", async () => {
      const root = makeTree({ "src/parse.ts": "a\n" });
      const shell = new CountingShell(await c.open());
      const r = await applyPatch(shell, { root, patch: update("src/Parse.ts") });
      expect(shell.count).toBe(1);
      expect(r.ok).toBe(false);
      const e = r.errors![0]!;
      expect(e.code).toBe("not_found");
      if (e.code !== "not_found") return;
      expect(e.closestPaths).toEqual(["src/parse.ts"]);
      expect(e.message).toStartWith('not_found: did you mean `src/parse.ts`? Write the section header as "*** Update File: src/parse.ts"');
      expect(e.message).not.toContain("Add File");
      const again = await applyPatch(shell, { root, patch: update("src/parse.ts") });
      expect(again.ok).toBe(true);
    });

    test("an Add, or an Update of a file that exists, walks nothing", async () => {
      const root = makeTree({ "a.txt": "a\n", "d/x.txt": "x\n" });
      const shell = new RecordingShell(await c.open());
      const add = await applyPatch(shell, { root, patch: "*** Begin Patch\n*** Add File: new.txt\n+n\n*** End Patch", dryRun: true });
      expect(add.ok).toBe(true);
      const upd = await applyPatch(shell, { root, patch: update("a.txt"), dryRun: true });
      expect(upd.ok).toBe(true);
      for (const out of shell.outputs) expect(walkOf(out)).toEqual({ records: 0, near: null });
    });

    test("never follows a symlink, never opens a FIFO, never lists a directory others can write (refuse) nor enters one (allow)", async () => {
      const outside = makeTree({ "parse.ts": "outside\n", "deep/parse.ts": "outside\n" });
      const root = makeTree({ "src/keep.txt": "k\n", "shared/": { dir: true }, "shared/parse.ts": "s\n", "shared/sub/parse.ts": "s\n" });
      chmodSync(join(root, "shared"), 0o777);
      symlinkSync(outside, join(root, "linked"));
      symlinkSync(join(outside, "parse.ts"), join(root, "src", "PARSE.TS"));
      expect(spawnSync("mkfifo", [join(root, "src", "Parse.ts")]).status).toBe(0);
      const shell = await c.open();
      // refuse: the shared directory is not listed (a path there would be refused anyway)
      expect(await closest(shell, root, "src/parse.ts")).toEqual([]);
      // allow: its files are listed, nothing below it entered (its names are someone else's to swap)
      expect(await closest(shell, root, "src/parse.ts", { sharedDirectories: "allow" })).toEqual(["shared/parse.ts"]);
    }, 30_000);

    test("bounded: entries looked at and depth, counted in the program's own output", async () => {
      const files: Record<string, string> = {};
      for (let i = 0; i < 120; i++) files[`many/f${String(i).padStart(3, "0")}.txt`] = "";
      files["a/b/c/d/e/f/target.ts"] = "t\n";
      const root = makeTree(files);
      const shell = new RecordingShell(await c.open());
      const deep = { closestSearch: { maxDepth: 12 } };
      expect(await closest(shell, root, "target.ts", deep)).toEqual(["a/b/c/d/e/f/target.ts"]);
      // 2 names in the root, 120 in many/, one per level a/ … f/ (6): 128 looked at, 121 files printed
      expect(walkOf(shell.outputs.at(-1)!)).toEqual({ records: 121, near: "128 1" });
      // depth: six levels down is past a walk of three
      expect(await closest(shell, root, "target.ts", { closestSearch: { maxDepth: 3 } })).toEqual([]);
      // entries: 40 looked at, 40 at most printed, the walk says it stopped
      expect(await closest(shell, root, "target.ts", { closestSearch: { maxEntries: 40, maxDepth: 12 } })).toEqual([]);
      const cut = walkOf(shell.outputs.at(-1)!);
      expect(cut.near).toBe("40 0");
      expect(cut.records).toBeLessThanOrEqual(40);
      // …and the snapshot says so, so that "no similar file" is not taken for the whole root's answer
      const cutSnap = (await readSnapshots(shell, root, ["target.ts"], { closestFor: ["target.ts"], closestSearch: { maxEntries: 40, maxDepth: 12 } })).get("target.ts")!;
      expect({ closest: cutSnap.closestPaths, cut: cutSnap.closestSearchCut }).toEqual({ closest: [], cut: true });
      expect(missingFileFailure(cutSnap, "Update").message).toContain("that search stopped at its bound before it had seen the whole root");
      const wholeSnap = (await readSnapshots(shell, root, ["nothing-like-it.md"], { closestFor: ["nothing-like-it.md"], closestSearch: { maxDepth: 12 } })).get("nothing-like-it.md")!;
      expect({ closest: wholeSnap.closestPaths, cut: wholeSnap.closestSearchCut }).toEqual({ closest: [], cut: undefined });
      expect(missingFileFailure(wholeSnap, "Update").message).toContain(", and no file of a similar name was found.");
      // time: with 0 seconds the clock, read every 16 directories, stops the walk at the 16th
      const wide: Record<string, string> = {};
      for (let i = 0; i < 40; i++) wide[`d${String(i).padStart(2, "0")}/f.txt`] = "";
      const timed = makeTree(wide);
      expect(await closest(shell, timed, "f.txt", { closestSearch: { maxSeconds: 0 } })).toEqual(Array.from({ length: 5 }, (_, i) => `d${String(i).padStart(2, "0")}/f.txt`));
      // the root (40 names) and 14 directories below it (one name each), then stopped
      expect(walkOf(shell.outputs.at(-1)!)).toEqual({ records: 14, near: "54 0" });
      // the missing path's own directory is listed first, whatever the budget
      mkdirSync(join(root, "a/b/c/d/e/f/g"));
      writeFileSync(join(root, "a/b/c/d/e/f/g/Thing.ts"), "x\n");
      expect(await closest(shell, root, "a/b/c/d/e/f/g/thing.ts", { closestSearch: { maxEntries: 3, maxDepth: 1 } })).toEqual(["a/b/c/d/e/f/g/Thing.ts"]);
    }, 30_000);
  });
}
