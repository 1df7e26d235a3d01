/**
 * Contract: SPEC §10's regressions end to end through applyPatch (parse →
 * one snapshot exec → plan → one commit exec) on real files, for every
 * shell under test. Failures must leave the tree byte-for-byte untouched
 * (and, as in every contract test, without engine leftovers).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import type { RemoteShell } from "../../lib/remote/shell.ts";
import type { ApplyReport } from "../../lib/types.ts";
import { cleanupTemps, CountingShell, HookedShell, makeTree, noLeftoversAfterEach } from "../support/local_trees.ts";
import type { TreeEntry } from "../support/local_trees.ts";
import { shellsUnderTest } from "../support/shells_under_test.ts";
import { at, q, read } from "./helpers.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();
const shells = shellsUnderTest({ suite: "contract: applyPatch" });

/** A patch from its body lines. */
const patch = (...lines: string[]): string => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");

/** Every file below root (relative path → bytes), to prove "nothing changed". */
function treeBytes(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string, prefix: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const rel = prefix + name;
      const st = statSync(full, { throwIfNoEntry: false });
      if (st?.isDirectory()) walk(full, rel + "/");
      else out.set(rel, st?.isFile() ? `${st.ino}:${(st.mode & 0o7777).toString(8)}:${readFileSync(full).toString("base64")}` : "link");
    }
  };
  walk(root, "");
  return out;
}

const FUNCS = "function f() {\n  return 1;\n}\nfunction g() {\n  return 1;\n}\n";

for (const c of shells) {
  describe(`applyPatch end to end (${c.name})`, () => {
    const apply = async (root: string, text: string, extra: Partial<Parameters<typeof applyPatch>[1]> = {}, shell?: RemoteShell): Promise<ApplyReport> =>
      applyPatch(shell ?? (await c.open()), { root, patch: text, ...extra });

    test("unique context applies; missing context → context_mismatch; ambiguous context → ambiguous_hunk with both candidates; failures change nothing", async () => {
      const root = makeTree({ "code.js": FUNCS });
      const missing = await apply(root, patch("*** Update File: code.js", "@@", "-  return 3;", "+  return 4;"));
      expect(missing.ok).toBe(false);
      expect(missing.errors!.map((e) => [e.code, e.path])).toEqual([["context_mismatch", "code.js"]]);
      expect(missing.errors![0]!.message).toContain("code.js");
      const ambiguous = await apply(root, patch("*** Update File: code.js", "@@", "-  return 1;", "+  return 2;"));
      expect(ambiguous.ok).toBe(false);
      expect(ambiguous.errors![0]).toMatchObject({ code: "ambiguous_hunk", path: "code.js" });
      expect(ambiguous.errors![0]!.candidates!.map((x) => x.line)).toEqual([2, 5]);
      expect(read(root, "code.js")).toBe(FUNCS);
      const unique = await apply(root, patch("*** Update File: code.js", "@@ function g() {", "-  return 1;", "+  return 2;"));
      expect(unique.errors).toBeUndefined();
      expect(unique).toMatchObject({ ok: true, dryRun: false, elevated: c.expectElevated, atomicity: "batch_preflight_per_file_commit" });
      expect(read(root, "code.js")).toBe(FUNCS.replace(/return 1;\n}\n$/, "return 2;\n}\n"));
      expect(unique.files[0]).toMatchObject({ op: "update", path: "code.js", previousSha256: sha256Hex(FUNCS), newSha256: sha256Hex(read(root, "code.js")) });
    });

    test("CRLF line endings, a missing final newline and a BOM are kept", async () => {
      const crlf = "[server]\r\nport = 80\r\nhost = a\r\nlast line";
      const bom = "\uFEFFalpha\nbeta\ngamma";
      const root = makeTree({ "win.ini": crlf, "bom.txt": bom });
      const report = await apply(root, patch(
        "*** Update File: win.ini",
        "@@",
        " [server]",
        "-port = 80",
        "+port = 8080",
        "*** Update File: bom.txt",
        "@@",
        " beta",
        "-gamma",
        "+GAMMA",
      ));
      expect(report.errors).toBeUndefined();
      expect(read(root, "win.ini")).toBe("[server]\r\nport = 8080\r\nhost = a\r\nlast line");
      expect(read(root, "bom.txt")).toBe("\uFEFFalpha\nbeta\nGAMMA");
    });

    test("$, backticks, \\, quotes and Unicode in patch lines and file names stay literal; nothing runs", async () => {
      const shell = await c.open();
      const cwd = new TextDecoder().decode((await shell.exec("pwd")).stdout).trim();
      const root = makeTree({ "conf/$(touch pwned) 'x'.sh": "echo start\n" });
      const lines = ["echo \"$HOME\" '$PATH' `touch pwned` $(touch pwned) \\n \\\\ ünïcödé 🚀", "a='b'\"c\"; rm -rf \"$x\"*"];
      const report = await apply(root, patch(
        "*** Update File: conf/$(touch pwned) 'x'.sh",
        "@@",
        " echo start",
        ...lines.map((l) => `+${l}`),
        "*** Add File: ü dir/`new` $x.txt",
        ...lines.map((l) => `+${l}`),
      ), {}, shell);
      expect(report.errors).toBeUndefined();
      expect(read(root, "conf/$(touch pwned) 'x'.sh")).toBe(`echo start\n${lines.join("\n")}\n`);
      expect(read(root, "ü dir/`new` $x.txt")).toBe(`${lines.join("\n")}\n`);
      expect(Bun.spawnSync(["find", root, "-name", "pwned"]).stdout.toString()).toBe("");
      expect(existsSync(join(cwd, "pwned"))).toBe(false);
    });

    test("`../` and absolute paths are rejected before anything runs (no exec), nothing outside is touched", async () => {
      const outside = makeTree({ "victim.txt": "safe\n" });
      const root = makeTree({ "a.txt": "a\n" });
      const shell = new CountingShell(await c.open());
      for (const bad of [`../${outside.split("/").at(-1)}/victim.txt`, join(outside, "victim.txt"), "a/../../x.txt"]) {
        const report = await apply(root, patch(`*** Update File: ${bad}`, "@@", "-safe", "+owned"), {}, shell);
        expect(report.ok).toBe(false);
        expect(report.errors!.map((e) => e.code)).toEqual(["invalid_path"]);
        const added = await apply(root, patch(`*** Add File: ${bad}`, "+owned"), {}, shell);
        expect(added.errors!.map((e) => e.code)).toEqual(["invalid_path"]);
      }
      expect(shell.count).toBe(0);
      expect(read(outside, "victim.txt")).toBe("safe\n");
      expect(readdirSync(root)).toEqual(["a.txt"]);
    });

    test("a final symlink is rejected; a symlinked directory component cannot escape the root", async () => {
      const outside = makeTree({ "target.txt": "outside\n" });
      const root = makeTree({ "real.txt": "real\n" });
      symlinkSync("real.txt", join(root, "link.txt"));
      symlinkSync(outside, join(root, "escape"));
      const before = treeBytes(root);
      const viaLink = await apply(root, patch("*** Update File: link.txt", "@@", "-real", "+hijacked"));
      expect(viaLink.errors!.map((e) => [e.code, e.path])).toEqual([["symlink_rejected", "link.txt"]]);
      const viaDir = await apply(root, patch("*** Add File: escape/new.txt", "+x", "*** Update File: escape/target.txt", "@@", "-outside", "+hijacked"));
      expect(viaDir.ok).toBe(false);
      expect(viaDir.errors!.map((e) => e.code)).toEqual(["symlink_rejected", "symlink_rejected"]);
      expect(treeBytes(root)).toEqual(before);
      expect(read(outside, "target.txt")).toBe("outside\n");
      expect(existsSync(join(outside, "new.txt"))).toBe(false);
    });

    test("Add never overwrites; Delete with a wrong expected SHA keeps the file", async () => {
      const root = makeTree({ "exists.txt": "precious\n", "keep.txt": "current\n" });
      const before = treeBytes(root);
      const add = await apply(root, patch("*** Add File: exists.txt", "+clobber"));
      expect(add.errors!.map((e) => [e.code, e.path])).toEqual([["already_exists", "exists.txt"]]);
      const del = await apply(root, patch("*** Delete File: keep.txt"), { expectedSha256: { "keep.txt": sha256Hex("what the model read\n") } });
      expect(del.errors![0]).toMatchObject({ code: "precondition_failed", path: "keep.txt", expectedSha256: sha256Hex("what the model read\n"), actualSha256: sha256Hex("current\n") });
      expect(treeBytes(root)).toEqual(before);
    });

    test("wrong-SHA preview: a dry run with a stale expectedSha256 fails precondition_failed; a dry run uploads nothing; the previewed SHA then commits", async () => {
      const root = makeTree({ "app.conf": "workers 2\n" });
      const shell = new CountingShell(await c.open());
      const before = treeBytes(root);
      const text = patch("*** Update File: app.conf", "@@", "-workers 2", "+workers 8");
      const stale = await apply(root, text, { dryRun: true, expectedSha256: { "app.conf": sha256Hex("workers 1\n") } }, shell);
      expect(stale).toMatchObject({ ok: false, dryRun: true });
      expect(stale.errors![0]).toMatchObject({ code: "precondition_failed", actualSha256: sha256Hex("workers 2\n") });
      const preview = await apply(root, text, { dryRun: true, expectedSha256: { "app.conf": sha256Hex("workers 2\n") } }, shell);
      expect(preview).toMatchObject({ ok: true, dryRun: true });
      expect(preview.files[0]).toMatchObject({ previousSha256: sha256Hex("workers 2\n"), newSha256: sha256Hex("workers 8\n"), bytesWritten: 0 });
      expect(preview.files[0]!.diff).toContain("+workers 8");
      expect(shell.count).toBe(2); // one snapshot exec per dry run, no commit
      expect(treeBytes(root)).toEqual(before);
      const real = await apply(root, text, { expectedSha256: { "app.conf": preview.files[0]!.previousSha256! } }, shell);
      expect(real.files[0]!.newSha256).toBe(preview.files[0]!.newSha256);
      expect(read(root, "app.conf")).toBe("workers 8\n");
      expect(shell.count).toBe(4);
    });

    test("a change during the upload → conflict, nothing written (hook after staging writes the file)", async () => {
      const root = makeTree({ "a.txt": "one\ntwo\n", "b.txt": "b\n" });
      const shell = new HookedShell(await c.open(), at("staged", "", `printf 'one\\nTWO by someone else\\n' > ${q(root, "a.txt")}`));
      const report = await apply(root, patch("*** Update File: a.txt", "@@", " one", "-two", "+2", "*** Update File: b.txt", "@@", "-b", "+B"), {}, shell);
      expect(report.ok).toBe(false);
      expect(report.errors!.map((e) => [e.code, e.path])).toEqual([["conflict", "a.txt"]]);
      expect(report.errors![0]!.actualSha256).toBe(sha256Hex("one\nTWO by someone else\n"));
      expect(read(root, "b.txt")).toBe("b\n");
    });

    test("re-applying a patch → context failure saying it looks already applied, nothing changed; a restart (new adapter / connection) changes nothing: the same patch on an unchanged copy applies identically", async () => {
      const files: Record<string, TreeEntry> = { "src/app.py": { content: "import os\n\ndef main():\n    print('v1')\n", mode: 0o750 }, "README": "old readme\n" };
      const text = patch(
        "*** Update File: src/app.py",
        "@@ def main():",
        "-    print('v1')",
        "+    print('v2')",
        "*** Delete File: README",
        "*** Add File: docs/NEW.md",
        "+# new",
      );
      const first = await c.openNew();
      const rootA = makeTree(files);
      const rootB = makeTree(files);
      const preview = await apply(rootA, text, { dryRun: true }, first);
      const applied = await apply(rootA, text, {}, first);
      expect(applied.errors).toBeUndefined();
      const afterFirst = treeBytes(rootA);
      const again = await apply(rootA, text, {}, first);
      expect(again.ok).toBe(false);
      const update = again.errors!.find((e) => e.path === "src/app.py")!;
      expect(update.code).toBe("context_mismatch");
      expect(update.message).toContain("already applied");
      expect(update.alreadyAppliedAt).toBe(4);
      expect(treeBytes(rootA)).toEqual(afterFirst);
      await first.close?.();

      const restarted = await c.openNew();
      const replay = await apply(rootB, text, {}, restarted);
      expect(replay.errors).toBeUndefined();
      const shas = (r: ApplyReport): (string | null)[] => r.files.map((f) => f.newSha256);
      expect(shas(replay)).toEqual(shas(applied));
      expect(shas(replay)).toEqual(shas(preview));
      expect(replay.files.map((f) => f.diff)).toEqual(applied.files.map((f) => f.diff));
      const content = (root: string): string[] => [...treeBytes(root).values()].map((v) => v.split(":").slice(1).join(":"));
      expect(content(rootB)).toEqual(content(rootA)); // same bytes and modes, inodes aside
      const afterRestart = await apply(rootA, text, {}, restarted);
      expect(afterRestart.errors!.find((e) => e.path === "src/app.py")!.code).toBe("context_mismatch");
      expect(treeBytes(rootA)).toEqual(afterFirst);
      await restarted.close?.();
    });
  });
}
