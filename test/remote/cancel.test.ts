/**
 * Cancel means what it says (issue 26 item 4), and a host program whose
 * client is gone stops soon (issue 28 item 7), under every local shell.
 * A cancel before the go-ahead stops the commit: `cancelled` with the
 * operation id, nothing applied, nothing of ours left in the root. A cancel
 * after it lets the commit finish (`cancel_too_late`). A program whose
 * go-ahead never comes gives up after clientGoneMs and removes everything.
 * The pauses are hook points of the program (test/contract/helpers.ts).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { commitRemote } from "../../lib/remote/commit.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";
import { at, pauseUntil, read, waitForFile } from "../contract/helpers.ts";
import { ownerRecord, plantLock } from "../support/lock_records.ts";
import { assertNoLeftovers, cleanupTemps, HookedShell, makeTree, noLeftoversAfterEach, P, plan, shellCases, tempDir } from "../support/local_trees.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();

/** Entries of ours (`.sap-…`) anywhere under root. */
function ours(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: "utf8" }).filter((p) => p.split("/").some((c) => c.startsWith(".sap-")));
}

/** FAULT INJECTION: an adapter whose answer to the program's prompt never comes (a client gone without a word, stdin still open). */
class SilentClient implements RemoteShell {
  readonly stdinGate = true;
  readonly label = "silent";
  readonly #inner: RemoteShell;
  constructor(inner: RemoteShell) {
    this.#inner = inner;
  }
  exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    return this.#inner.exec(command, { ...options, ...(options.stdinGate ? { stdinGate: { prompt: "NEVER-ASKED", reply: options.stdinGate.reply } } : {}) });
  }
}

for (const c of shellCases()) {
  describe(`cancel (${c.name})`, () => {
    const shell = (): LocalShell => new LocalShell({ ...c.options, cwd: tempDir("sap-cwd-") });

    test("a cancel while the commit waits for a live lock: cancelled at once, nothing applied, nothing of ours left", async () => {
      const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
      const lock = plantLock(root, "b.txt", ownerRecord(), "holder_op");
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 400);
      const started = performance.now();
      const report = await commitRemote(shell(), root, plan([P.update("a.txt", "a1\n", "a2\n"), P.update("b.txt", "b1\n", "b2\n")]), { lockWaitMs: 8000, signal: controller.signal, operationId: "cancel_wait" });
      expect(performance.now() - started).toBeLessThan(3000);
      expect(report.ok).toBe(false);
      expect(report.errors![0]).toMatchObject({ code: "cancelled", operationId: "cancel_wait" });
      expect(report.errors![0]!.message).toContain("nothing was applied");
      expect([read(root, "a.txt"), read(root, "b.txt")]).toEqual(["a1\n", "b1\n"]);
      rmSync(lock, { recursive: true });
      expect(ours(root)).toEqual([]);
    });

    test("a cancel at the go-ahead (everything staged, locked, checked): cancelled, nothing applied, nothing left", async () => {
      const root = makeTree({ "a.txt": "a1\n", "sub/b.txt": "b1\n" });
      const signals = tempDir();
      const controller = new AbortController();
      const hooked = new HookedShell(shell(), at("gate", "", pauseUntil(join(signals, "reached"), join(signals, "never"))));
      const pending = commitRemote(hooked, root, plan([P.update("a.txt", "a1\n", "a2\n"), P.update("sub/b.txt", "b1\n", "b2\n"), P.add("sub/new/c.txt", "c\n")]), { signal: controller.signal, operationId: "cancel_gate" });
      await waitForFile(join(signals, "reached"));
      expect(ours(root).length).toBeGreaterThan(0); // stages, private directories, locks
      controller.abort();
      const report = await pending;
      expect(report.errors![0]).toMatchObject({ code: "cancelled", operationId: "cancel_gate" });
      expect([read(root, "a.txt"), read(root, "sub/b.txt")]).toEqual(["a1\n", "b1\n"]);
      expect(ours(root)).toEqual([]);
      assertNoLeftovers(root);
    });

    test("a cancel during the upload of 8 MiB: cancelled, nothing applied, nothing left", async () => {
      const root = makeTree({ "keep.txt": "k\n" });
      const controller = new AbortController();
      const big = "x".repeat(1023) + "\n";
      const report = await commitRemote(shell(), root, plan([P.add("big.txt", big.repeat(8 * 1024))]), {
        signal: controller.signal,
        operationId: "cancel_upload",
        onProgress: (sent, total) => {
          if (sent > total / 4) controller.abort();
        },
      });
      expect(report.errors![0]).toMatchObject({ code: "cancelled", operationId: "cancel_upload" });
      expect(readdirSync(root)).toEqual(["keep.txt"]);
    });

    test("a cancel after the go-ahead is too late: the commit finishes, and says so", async () => {
      const root = makeTree({ "a.txt": "a1\n" });
      const signals = tempDir();
      const controller = new AbortController();
      const hooked = new HookedShell(shell(), at("compared", "", pauseUntil(join(signals, "reached"), join(signals, "go"))));
      const pending = commitRemote(hooked, root, plan([P.update("a.txt", "a1\n", "a2\n")]), { signal: controller.signal, operationId: "too_late" });
      await waitForFile(join(signals, "reached"));
      controller.abort();
      await Bun.sleep(200);
      Bun.write(join(signals, "go"), "");
      const report = await pending;
      expect(report.ok).toBe(true);
      expect(report.warnings.map((w) => w.code)).toContain("cancel_too_late");
      expect(read(root, "a.txt")).toBe("a2\n");
      assertNoLeftovers(root);
    });

    test("FAULT INJECTION: a go-ahead that never comes (the client gone, stdin open): the host gives up after clientGoneMs and removes everything", async () => {
      const root = makeTree({ "a.txt": "a1\n" });
      const started = performance.now();
      const report = await commitRemote(new SilentClient(shell()), root, plan([P.update("a.txt", "a1\n", "a2\n")]), { clientGoneMs: 1000, operationId: "gone" });
      expect(performance.now() - started).toBeLessThan(4000);
      expect(report.errors![0]).toMatchObject({ code: "remote_error", operationId: "gone" });
      expect(report.errors![0]!.message).toContain("go-ahead did not arrive within 1 s");
      expect(read(root, "a.txt")).toBe("a1\n");
      assertNoLeftovers(root);
    });
  });
}
