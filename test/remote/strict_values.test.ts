/**
 * Strict values, the library: a known `applyPatch` request key whose value
 * has the wrong type is an `invalid_request` failure naming the field, what
 * it must be and what it is — before anything reaches the host. Measured
 * before the check (a JavaScript caller has no compiler to stop it):
 * `dryRun: "true"` and `dryRun: 1` WROTE the file, an `expectedSha256` Map
 * (or number) dropped the precondition and wrote it, a `limits` Map was
 * ignored, and `signal: {}` left a program running that nothing stopped.
 * Real files through LocalShell; CountingShell counts the programs (zero).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { commitRemote } from "../../lib/remote/commit.ts";
import { listFiles } from "../../lib/remote/list_files.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { searchFiles } from "../../lib/remote/search_files.ts";
import { RemoteShellError } from "../../lib/remote/shell.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { cleanupTemps, CountingShell, leftovers, makeTree, P, plan } from "../support/local_trees.ts";

afterAll(cleanupTemps, 30_000);

const BEFORE = "listen 80;\ndebug on;\n";
const patch = "*** Begin Patch\n*** Update File: app.conf\n@@\n-debug on;\n+debug off;\n*** End Patch";
const WRONG_SHA = "0".repeat(64);

describe("applyPatch refuses a known field with a value of the wrong type; nothing is read or written", () => {
  const cases: { extra: Record<string, unknown>; says: string }[] = [
    { extra: { dryRun: "true" }, says: 'field `dryRun` must be true or false, not the string "true"' },
    { extra: { dryRun: 1 }, says: "field `dryRun` must be true or false, not number 1" },
    { extra: { requireShaForDelete: "yes" }, says: "field `requireShaForDelete` must be true or false" },
    { extra: { trustRootAncestors: "false" }, says: "field `trustRootAncestors` must be true or false" },
    { extra: { createParents: 0 }, says: "field `createParents` must be true or false" },
    { extra: { delta: "no" }, says: "field `delta` must be true or false" },
    { extra: { expectedSha256: new Map([["app.conf", WRONG_SHA]]) }, says: "field `expectedSha256` must be a plain object of path → SHA-256 strings, e.g. {\"app.conf\": \"<sha256>\"}, not a Map" },
    { extra: { expectedSha256: 5 }, says: "field `expectedSha256` must be a plain object" },
    { extra: { expectedSha256: [WRONG_SHA] }, says: "field `expectedSha256` must be a plain object of path → SHA-256 strings, e.g. {\"app.conf\": \"<sha256>\"}, not an array" },
    { extra: { expectedSha256: { "app.conf": 7 } }, says: "field `expectedSha256` must be a plain object of path → SHA-256 strings" },
    { extra: { limits: new Map([["maxFileBytes", 1]]) }, says: "field `limits` must be a plain object of limit name → whole number ≥ 0" },
    { extra: { limits: { maxFiles: "20" } }, says: "field `limits` must be a plain object of limit name → whole number ≥ 0" },
    { extra: { matching: "Exact" }, says: 'field `matching` must be one of "exact", "whitespace", "lenient", not the string "Exact"' },
    { extra: { sharedDirectories: "Refuse" }, says: 'field `sharedDirectories` must be one of "refuse", "allow"' },
    { extra: { compress: "yes" }, says: 'field `compress` must be one of "auto", true, false' },
    { extra: { lockWaitMs: "5" }, says: "field `lockWaitMs` must be a whole number ≥ 0 (milliseconds)" },
    { extra: { timeoutMs: -1 }, says: "field `timeoutMs` must be a number > 0 (milliseconds)" },
    { extra: { signal: {} }, says: "field `signal` must be an AbortSignal, not an object" },
    { extra: { onProgress: "x" }, says: "field `onProgress` must be a function" },
    { extra: { onPhase: true }, says: "field `onPhase` must be a function" },
    { extra: { cache: {} }, says: "field `cache` must be a SnapshotCache" },
    { extra: { operationId: "../x" }, says: "field `operationId` must be 1 to 64 characters of A-Z, a-z, 0-9 and _" },
  ];
  for (const c of cases) {
    test(`${Object.keys(c.extra)[0]}: ${String(Object.values(c.extra)[0] instanceof Map ? "a Map" : JSON.stringify(Object.values(c.extra)[0]))}`, async () => {
      const root = makeTree({ "app.conf": BEFORE });
      const shell = new CountingShell(new LocalShell());
      const report = await applyPatch(shell, { root, patch, ...c.extra } as Parameters<typeof applyPatch>[1]);
      expect(report.ok).toBe(false);
      expect(report.errors?.map((e) => e.code)).toEqual(["invalid_request"]);
      expect(report.errors![0]!.message).toContain(c.says);
      expect(report.errors![0]!.message).toContain("Nothing was applied");
      expect(shell.count).toBe(0);
      expect(readFileSync(join(root, "app.conf"), "utf8")).toBe(BEFORE);
      expect(leftovers(root)).toEqual([]);
    });
  }

  // The functions read fields through the prototype, so the checks look there too.
  const inherited: { name: string; proto: Record<string, unknown>; says: string }[] = [
    { name: 'an inherited dryRun: "true"', proto: { dryRun: "true" }, says: 'field `dryRun` must be true or false, not the string "true"' },
    { name: "an inherited misspelt dryrun", proto: { dryrun: true }, says: "unknown applyPatch request field `dryrun`: did you mean `dryRun`?" },
  ];
  for (const c of inherited) {
    test(c.name, async () => {
      const root = makeTree({ "app.conf": BEFORE });
      const shell = new CountingShell(new LocalShell());
      const request = Object.assign(Object.create(c.proto) as Record<string, unknown>, { root, patch });
      const report = await applyPatch(shell, request as unknown as Parameters<typeof applyPatch>[1]);
      expect(report.errors?.map((e) => e.code)).toEqual(["invalid_request"]);
      expect(report.errors![0]!.message).toContain(c.says);
      expect(shell.count).toBe(0);
      expect(readFileSync(join(root, "app.conf"), "utf8")).toBe(BEFORE);
    });
  }

  test("the right types still work, undefined counts as absent, and a null-prototype map is a map", async () => {
    const root = makeTree({ "app.conf": BEFORE });
    const expectedSha256 = Object.assign(Object.create(null) as Record<string, string>, { "app.conf": WRONG_SHA });
    const guarded = await applyPatch(new LocalShell(), { root, patch, expectedSha256, dryRun: undefined, limits: { maxFiles: 5 }, signal: new AbortController().signal });
    expect(guarded.errors?.map((e) => e.code)).toEqual(["precondition_failed"]); // the precondition was checked
    const report = await applyPatch(new LocalShell(), { root, patch, dryRun: false, matching: "exact", compress: false, timeoutMs: 30_000.5 });
    expect(report.ok).toBe(true);
    expect(readFileSync(join(root, "app.conf"), "utf8")).toBe("listen 80;\ndebug off;\n");
  });
});

describe("LocalShell.exec checks its signal before it starts the program", () => {
  test("signal: {} is a TypeError and no program is left running", async () => {
    const shell = new LocalShell();
    // before the fix the program started, then the signal threw, and `sleep` ran on with nothing to stop it
    expect(() => shell.exec("exec sleep 30", { signal: {} as AbortSignal })).toThrow("signal must be an AbortSignal");
  });
});

describe("the other option objects: a mistyped value is refused before any program runs", () => {
  const errorOf = async (run: (shell: CountingShell, root: string) => Promise<unknown>): Promise<{ code?: string; message?: string; count: number; file: string }> => {
    const root = makeTree({ "a.txt": "v1\n" });
    const shell = new CountingShell(new LocalShell());
    const got = await run(shell, root).then((r) => r, (e: unknown) => e);
    const f = got instanceof RemoteShellError ? got.failure : (got as { errors?: { code: string; message: string }[] }).errors?.[0];
    return { code: f?.code, message: f?.message, count: shell.count, file: readFileSync(join(root, "a.txt"), "utf8") };
  };
  const cases: { name: string; run: (shell: CountingShell, root: string) => Promise<unknown>; says: string }[] = [
    // fixedString: "false" searched for the literal text instead of the pattern, without a word
    { name: 'searchFiles fixedString: "false"', run: (s, r) => searchFiles(s, r, "v[0-9]", { fixedString: "false" } as never), says: "searchFiles options field `fixedString` must be true or false" },
    { name: 'listFiles glob: ["*.txt"] (an array where a string goes)', run: (s, r) => listFiles(s, r, { glob: ["*.txt"] } as never), says: "listFiles options field `glob` must be a string, not an array" },
    { name: "readSnapshots maxFileBytes: -1 (rejects)", run: (s, r) => readSnapshots(s, r, ["a.txt"], { maxFileBytes: -1 }), says: "readSnapshots options field `maxFileBytes` must be a whole number ≥ 0" },
    { name: 'commitRemote delta: "no"', run: (s, r) => commitRemote(s, r, plan([P.update("a.txt", "v1\n", "v2\n")]), { delta: "no" } as never), says: "commitRemote options field `delta` must be true or false" },
    {
      name: 'reconcile trustRootAncestors: "yes"',
      run: (s, r) => reconcile(s, r, reconcileTicket(plan([P.update("a.txt", "v1\n", "v2\n")]), "0123456789abcdef"), { trustRootAncestors: "yes" } as never),
      says: "reconcile options field `trustRootAncestors` must be true or false",
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const got = await errorOf(c.run);
      expect([got.code, got.count, got.file]).toEqual(["invalid_request", 0, "v1\n"]);
      expect(got.message).toContain(c.says);
    });
  }
});
