/**
 * Issue 26 item 3, the library: a request or options key no function reads
 * is an `invalid_request` failure naming the closest known key (camelCase),
 * before anything is sent to the host — never a silently ignored
 * `dryrun: true` that commits, or an `expected_sha256` precondition that is
 * not checked. Real files through LocalShell; CountingShell counts the
 * programs run (zero).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { commitRemote } from "../../lib/remote/commit.ts";
import { listFiles } from "../../lib/remote/list_files.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import { searchFiles } from "../../lib/remote/search_files.ts";
import { RemoteShellError } from "../../lib/remote/shell.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { connectSsh } from "../../lib/ssh/shell.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import type { PatchFailure } from "../../lib/types.ts";
import { cleanupTemps, CountingShell, leftovers, makeTree, P, plan } from "../support/local_trees.ts";

afterAll(cleanupTemps, 30_000);

const BEFORE = "listen 80;\ndebug on;\n";
const patch = "*** Begin Patch\n*** Update File: app.conf\n@@\n-debug on;\n+debug off;\n*** End Patch";

function expectRefused(f: PatchFailure | undefined, key: string, closest: string | null): void {
  expect(f?.code).toBe("invalid_request");
  expect(f?.retryable).toBe(false);
  expect(f?.unknown).toEqual([{ name: key, closest }]);
  expect(f?.message).toContain(`\`${key}\``);
  if (closest !== null) expect(f?.message).toContain(`did you mean \`${closest}\`?`);
}

describe("applyPatch refuses a request key it does not know; nothing is read or written", () => {
  const cases: { name: string; extra: Record<string, unknown>; key: string; closest: string }[] = [
    { name: "dryrun (lower case)", extra: { dryrun: true }, key: "dryrun", closest: "dryRun" },
    { name: "dry_run (snake_case)", extra: { dry_run: true }, key: "dry_run", closest: "dryRun" },
    { name: "DryRun (PascalCase)", extra: { DryRun: true }, key: "DryRun", closest: "dryRun" },
    { name: "expected_sha256 (snake_case)", extra: { expected_sha256: { "app.conf": "0".repeat(64) } }, key: "expected_sha256", closest: "expectedSha256" },
    { name: "expectedsha256 (lower case)", extra: { expectedsha256: { "app.conf": "0".repeat(64) } }, key: "expectedsha256", closest: "expectedSha256" },
    { name: "requireShaForDeletes (a typo)", extra: { requireShaForDeletes: true }, key: "requireShaForDeletes", closest: "requireShaForDelete" },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const root = makeTree({ "app.conf": BEFORE });
      const shell = new CountingShell(new LocalShell());
      const report = await applyPatch(shell, { root, patch, ...c.extra } as Parameters<typeof applyPatch>[1]);
      expect(report.ok).toBe(false);
      expect(report.errors).toHaveLength(1);
      expectRefused(report.errors![0], c.key, c.closest);
      expect(report.errors![0]!.message).toContain("Nothing was applied");
      expect(report.files).toEqual([]);
      expect(shell.count).toBe(0); // refused before any program reached the host
      expect(readFileSync(join(root, "app.conf"), "utf8")).toBe(BEFORE);
      expect(leftovers(root)).toEqual([]);
    });
  }

  test("a misspelt limits key too (maxFileByte)", async () => {
    const root = makeTree({ "app.conf": BEFORE });
    const shell = new CountingShell(new LocalShell());
    const report = await applyPatch(shell, { root, patch, limits: { maxFileByte: 1 } as never });
    expectRefused(report.errors?.[0], "maxFileByte", "maxFileBytes");
    expect(report.errors![0]!.message).toContain("applyPatch limits field");
    expect(shell.count).toBe(0);
    expect(readFileSync(join(root, "app.conf"), "utf8")).toBe(BEFORE);
  });

  test("several unknown keys in one failure; a stranger lists the known fields", async () => {
    const root = makeTree({ "app.conf": BEFORE });
    const report = await applyPatch(new LocalShell(), { root, patch, dryrun: true, colour: "red" } as never);
    const f = report.errors![0]!;
    expect(f.unknown).toEqual([{ name: "dryrun", closest: "dryRun" }, { name: "colour", closest: null }]);
    expect(f.message).toContain("`dryrun` (did you mean `dryRun`?), `colour`; the applyPatch request fields are `root`, `patch`, `dryRun`");
    expect(readFileSync(join(root, "app.conf"), "utf8")).toBe(BEFORE);
  });

  test("the known keys, even undefined, are accepted: the same patch applies", async () => {
    const root = makeTree({ "app.conf": BEFORE });
    const report = await applyPatch(new LocalShell(), { root, patch, dryRun: undefined, expectedSha256: { "app.conf": sha256Hex(new TextEncoder().encode(BEFORE)) } });
    expect(report.ok).toBe(true);
    expect(readFileSync(join(root, "app.conf"), "utf8")).toBe("listen 80;\ndebug off;\n");
  });
});

describe("the other option objects a user passes", () => {
  test("commitRemote: nothing committed", async () => {
    const root = makeTree({ "a.txt": "v1\n" });
    const shell = new CountingShell(new LocalShell());
    const report = await commitRemote(shell, root, plan([P.update("a.txt", "v1\n", "v2\n")]), { lockwaitms: 5 } as never);
    expectRefused(report.errors?.[0], "lockwaitms", "lockWaitMs");
    expect(report.errors![0]!.message).toContain("Nothing was committed");
    expect(shell.count).toBe(0);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("v1\n");
  });

  test("reconcile: nothing reconciled", async () => {
    const root = makeTree({ "a.txt": "v1\n" });
    const shell = new CountingShell(new LocalShell());
    const report = await reconcile(shell, root, reconcileTicket(plan([P.update("a.txt", "v1\n", "v2\n")]), "0123456789abcdef"), { timeout_ms: 5 } as never);
    expectRefused(report.errors?.[0], "timeout_ms", "timeoutMs");
    expect(shell.count).toBe(0);
  });

  test("readSnapshots: rejects with RemoteShellError(invalid_request), nothing read", async () => {
    const root = makeTree({ "a.txt": "v1\n" });
    const shell = new CountingShell(new LocalShell());
    const error = await readSnapshots(shell, root, ["a.txt"], { maxfilebytes: 5 } as never).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteShellError);
    expectRefused((error as RemoteShellError).failure, "maxfilebytes", "maxFileBytes");
    expect((error as RemoteShellError).started).toBe(false);
    expect(shell.count).toBe(0);
  });

  test("listFiles and searchFiles: a failed result", async () => {
    const root = makeTree({ "a.txt": "v1\n" });
    const shell = new CountingShell(new LocalShell());
    const listed = await listFiles(shell, root, { max_entries: 5 } as never);
    expect(listed.ok).toBe(false);
    expectRefused(listed.errors?.[0], "max_entries", "maxEntries");
    const found = await searchFiles(shell, root, "v1", { ignorecase: true } as never);
    expect(found.ok).toBe(false);
    expectRefused(found.errors?.[0], "ignorecase", "ignoreCase");
    expect(shell.count).toBe(0);
  });

  test("connectSsh: rejects before any connection (port 1 would give connect_failed)", async () => {
    const error = await connectSsh({ host: "127.0.0.1", port: 1, known_hosts_file: "/nonexistent" } as never).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteShellError);
    expectRefused((error as RemoteShellError).failure, "known_hosts_file", "knownHostsFile");
  });
});
