/**
 * Contract: a whole-file replace (issue 29 item 2: `*** Replace File:` or
 * Delete + Add of one path) commits as one rename over the old file, for
 * every shell under test — mode and owner kept as for an Update, the
 * caller's expected SHA-256 honoured, and at no point of the commit, killed
 * or cancelled there, is the file missing: it is the old or the new one.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { commitRemote } from "../../lib/remote/commit.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { parsePatch } from "../../lib/patch/parse.ts";
import { planPatch } from "../../lib/plan/plan.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import type { Plan } from "../../lib/types.ts";
import type { RemoteShell } from "../../lib/remote/shell.ts";
import { cleanupTemps, HookedShell, makeTree, noLeftoversAfterEach, rootTest, tempDir } from "../support/local_trees.ts";
import { shellsUnderTest } from "../support/shells_under_test.ts";
import { at, pauseUntil, q, read, waitForFile } from "./helpers.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();
const shells = shellsUnderTest({ suite: "contract: replace" });

const OLD = "[main]\ndebug = 1\n";
const NEW = "[main]\ndebug = 0\nworkers = 4\n";
const patch = (...lines: string[]): string => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");
const REPLACE = patch("*** Replace File: app.ini", "+[main]", "+debug = 0", "+workers = 4");
const DELETE_ADD = patch("*** Delete File: app.ini", "*** Add File: app.ini", "+[main]", "+debug = 0", "+workers = 4");

async function planOf(shell: RemoteShell, root: string, text: string): Promise<Plan> {
  const parsed = parsePatch(text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const planned = planPatch(parsed.patch, await readSnapshots(shell, root, ["app.ini"]));
  if (!planned.ok) throw new Error(JSON.stringify(planned.errors));
  return planned.plan;
}

for (const c of shells) {
  describe(`whole-file replace (${c.name})`, () => {
    for (const [form, text] of [["Replace File", REPLACE], ["Delete + Add", DELETE_ADD]] as const) {
      rootTest(`${form}: one rename over the file; mode 0640, owner and group kept; the report says replace`, async () => {
        const root = makeTree({ "app.ini": OLD });
        chownSync(join(root, "app.ini"), 1234, 2345);
        chmodSync(join(root, "app.ini"), 0o640);
        const inoBefore = statSync(join(root, "app.ini")).ino;
        const report = await applyPatch(await c.open(), { root, patch: text, expectedSha256: { "app.ini": sha256Hex(OLD) } });
        expect(report.errors).toBeUndefined();
        expect(report.files).toHaveLength(1);
        expect(report.files[0]).toMatchObject({
          op: "replace",
          path: "app.ini",
          previousSha256: sha256Hex(OLD),
          newSha256: sha256Hex(NEW),
          bytesWritten: NEW.length,
          metadataPreserved: { mode: true, owner: true },
        });
        expect(report.elevated).toBe(c.expectElevated);
        expect(read(root, "app.ini")).toBe(NEW);
        const st = statSync(join(root, "app.ini"));
        expect([st.uid, st.gid, st.mode & 0o7777]).toEqual([1234, 2345, 0o640]);
        expect(st.ino).not.toBe(inoBefore); // a rename of a new inode, never a rewrite in place
      });
    }

    test("a stale expectedSha256 is precondition_failed before anything is uploaded; the file is untouched", async () => {
      const root = makeTree({ "app.ini": OLD });
      const report = await applyPatch(await c.open(), { root, patch: DELETE_ADD, expectedSha256: { "app.ini": sha256Hex("older\n") } });
      expect(report.errors?.[0]).toMatchObject({ code: "precondition_failed", path: "app.ini", actualSha256: sha256Hex(OLD) });
      expect(read(root, "app.ini")).toBe(OLD);
    });

    test("the file changed between snapshot and commit → conflict, the other writer's content kept (hook after staging)", async () => {
      const root = makeTree({ "app.ini": OLD });
      const shell = await c.open();
      const thePlan = await planOf(shell, root, REPLACE);
      const report = await commitRemote(new HookedShell(shell, at("staged", "", `printf 'theirs\\n' > ${q(root, "app.ini")}`)), root, thePlan);
      expect(report.errors?.[0]).toMatchObject({ code: "conflict", path: "app.ini", actualSha256: sha256Hex("theirs\n") });
      expect(read(root, "app.ini")).toBe("theirs\n");
    });

    // Killed at each step of the commit (SIGKILL cannot be trapped): the
    // file is there, old or new, before any reconcile; reconcile settles it.
    const kills: [string, string, "old" | "new"][] = [
      ["locked", "", "old"],
      ["before_finalize", "0", "old"],
      ["after_finalize", "0", "new"],
      ["done", "", "new"],
    ];
    for (const [hook, arg, expected] of kills) {
      test(`killed (SIGKILL via hook) at ${hook}${arg ? ` ${arg}` : ""}: the file is the ${expected} one, never missing; reconcile cleans up`, async () => {
        const root = makeTree({ "app.ini": OLD });
        chmodSync(join(root, "app.ini"), 0o640);
        const shell = await c.open();
        const thePlan = await planOf(shell, root, DELETE_ADD);
        const operationId = `replace_kill_${hook}`;
        const report = await commitRemote(new HookedShell(shell, at(hook, arg, "kill -9 $$")), root, thePlan, { operationId });
        expect(report.ok).toBe(false);
        expect(existsSync(join(root, "app.ini"))).toBe(true);
        expect(readFileSync(join(root, "app.ini"), "utf8")).toBe(expected === "old" ? OLD : NEW);
        const after = await reconcile(shell, root, JSON.parse(JSON.stringify(report.errors![0]!.reconcile)));
        expect(after.ok).toBe(true);
        const content = read(root, "app.ini");
        expect([OLD, NEW]).toContain(content);
        expect(after.files[0]).toMatchObject({ op: "replace", state: content === NEW ? "applied" : "not_applied" });
        expect(statSync(join(root, "app.ini")).mode & 0o777).toBe(0o640);
      });
    }

    test("cancelled while the commit holds its locks (before the go-ahead): cancelled, the old file kept with its mode", async () => {
      const root = makeTree({ "app.ini": OLD });
      chmodSync(join(root, "app.ini"), 0o640);
      const shell = await c.open();
      const thePlan = await planOf(shell, root, REPLACE);
      const dir = tempDir();
      const reached = join(dir, "reached");
      const release = join(dir, "release");
      const controller = new AbortController();
      const pending = commitRemote(new HookedShell(shell, at("locked", "", pauseUntil(reached, release))), root, thePlan, { signal: controller.signal });
      await waitForFile(reached, 15_000);
      controller.abort();
      await Bun.write(release, "");
      const report = await pending;
      expect(report.errors?.[0]?.code).toBe("cancelled");
      expect(read(root, "app.ini")).toBe(OLD);
      expect(statSync(join(root, "app.ini")).mode & 0o777).toBe(0o640);
    }, 30_000);
  });
}
