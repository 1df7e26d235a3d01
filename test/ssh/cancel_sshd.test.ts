/**
 * Cancel and client-gone over a real sshd (issue 26 item 4, issue 28 item
 * 7). A cancel before the go-ahead leaves nothing applied and nothing in
 * the root, whatever phase the program was in; the 12 MiB Add cancelled
 * after 700 ms of the issue ends either cancelled (nothing written) or
 * applied with `cancel_too_late` — never written with a failure. A link
 * that goes silent (a partition: no data, no close, through
 * test/support/tcp_proxy.ts) while the commit holds its locks: the client
 * gives up on its own timeout, the host program notices within
 * clientGoneMs and removes everything, and reconcile then says
 * `not_applied`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commitRemote, DEFAULT_CLIENT_GONE_MS } from "../../lib/remote/commit.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import { connectSsh } from "../../lib/ssh/shell.ts";
import type { SshShell } from "../../lib/ssh/shell.ts";
import { at, pauseUntil, waitForFile } from "../contract/helpers.ts";
import { HookedShell, makeTree, P, plan, tempDir } from "../support/local_trees.ts";
import { sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd } from "../support/sshd.ts";
import { startTcpProxy } from "../support/tcp_proxy.ts";
import type { TcpProxy } from "../support/tcp_proxy.ts";
import { sshOptions } from "./helpers.ts";

const ready = sshdReady("cancel and client gone over a real sshd (test/ssh/cancel_sshd.test.ts)", true);

/** Entries of ours (`.sap-…`) anywhere under root. */
function ours(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: "utf8" }).filter((p) => p.split("/").some((c) => c.startsWith(".sap-")));
}

async function until(check: () => boolean, timeoutMs: number): Promise<number> {
  const start = performance.now();
  while (!check()) {
    if (performance.now() - start > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
  return performance.now() - start;
}

describe.skipIf(!ready)("cancel and client gone over a real sshd", () => {
  let sshd: Sshd;
  let work: string;
  let knownHosts: string;
  let shell: SshShell;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "sap-cancel-"));
    sshd = await startSshd();
    knownHosts = writeKnownHosts(work, [sshd.hostKeyLine]);
    shell = await connectSsh(sshOptions(sshd, knownHosts, { sudo: true }));
  }, 30_000);
  afterAll(async () => {
    await shell?.close();
    await sshd?.stop();
    rmSync(work, { recursive: true, force: true });
  }, 30_000);

  function tree(files: Record<string, string>): string {
    const root = makeTree(files);
    chmodSync(root, 0o755);
    return root;
  }

  test("a cancel at the go-ahead (staged, locked, checked): cancelled, nothing applied, nothing left", async () => {
    const root = tree({ "a.txt": "a1\n" });
    const signals = tempDir();
    const controller = new AbortController();
    const hooked = new HookedShell(shell, at("gate", "", pauseUntil(join(signals, "reached"), join(signals, "never"))));
    const pending = commitRemote(hooked, root, plan([P.update("a.txt", "a1\n", "a2\n"), P.add("new/b.txt", "b\n")]), { signal: controller.signal, operationId: "ssh_gate" });
    await waitForFile(join(signals, "reached"), 10_000);
    controller.abort();
    const report = await pending;
    expect(report.errors![0]).toMatchObject({ code: "cancelled", operationId: "ssh_gate" });
    expect(report.errors![0]!.message).toContain("its temporary files and locks were removed");
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a1\n");
    expect(existsSync(join(root, "new"))).toBe(false);
    expect(ours(root)).toEqual([]);
  }, 30_000);

  test("the issue's case: a 12 MiB Add cancelled mid-upload or after 700 ms is either cancelled with nothing written, or applied and says the cancel came too late", async () => {
    const content = ("y".repeat(1023) + "\n").repeat(12 * 1024);
    for (const when of ["upload", 700, 1500] as const) {
      const root = tree({ "keep.txt": "k\n" });
      const controller = new AbortController();
      let abortedAt = Infinity;
      const abort = (): void => {
        if (!controller.signal.aborted) abortedAt = performance.now();
        controller.abort();
      };
      if (when !== "upload") setTimeout(abort, when);
      const report = await commitRemote(shell, root, plan([P.add("big.txt", content)]), {
        signal: controller.signal,
        operationId: `ssh_big_${when}`,
        onProgress: (sent, total) => when === "upload" && sent > total / 4 && abort(),
      });
      const finishedAt = performance.now();
      const written = existsSync(join(root, "big.txt"));
      if (report.ok) {
        expect(written).toBe(true);
        // a cancel that came while it ran is reported, never silently dropped
        if (abortedAt < finishedAt) expect(report.warnings.map((w) => w.code)).toContain("cancel_too_late");
        expect(when).not.toBe("upload");
      } else {
        expect(report.errors![0]).toMatchObject({ code: "cancelled", operationId: `ssh_big_${when}` });
        expect(written).toBe(false);
      }
      // nothing of ours, either way, once the host program ended. What the
      // program promises is "within clientGoneMs" of losing its client (the
      // default here), plus slack for a loaded machine: 5 s flaked in full
      // runs beside other work, while it passes alone in well under 1 s.
      await until(() => ours(root).length === 0, DEFAULT_CLIENT_GONE_MS + 5000);
    }
  }, 120_000);

  test("a link that goes silent while the commit holds its locks: the host removes everything within clientGoneMs, reconcile says not_applied", async () => {
    const proxy: TcpProxy = await startTcpProxy({ targetPort: sshd.port });
    const viaProxy = await connectSsh(sshOptions(sshd, join(work, "known_hosts_proxy"), { port: proxy.port, sudo: true, hostKeyPolicy: "accept-new" }));
    try {
      const root = tree({ "a.txt": "a1\n", "b.txt": "b1\n" });
      const signals = tempDir();
      const thePlan = plan([P.update("a.txt", "a1\n", "a2\n"), P.update("b.txt", "b1\n", "b2\n")]);
      const hooked = new HookedShell(viaProxy, at("locked", "", pauseUntil(join(signals, "reached"), join(signals, "go"))));
      const pending = commitRemote(hooked, root, thePlan, { timeoutMs: 3000, clientGoneMs: 2000, operationId: "ssh_stall" });
      await waitForFile(join(signals, "reached"), 10_000);
      expect(readdirSync(root).filter((n) => n.startsWith(".sap-lock-")).length).toBe(3); // a, b and the operation's own
      proxy.partitionAll();
      Bun.write(join(signals, "go"), "");
      const freed = until(() => ours(root).length === 0, 8000);
      const report = await pending;
      // the client gave up on its own: it cannot know more than "not applied yet"
      expect(report.ok).toBe(false);
      expect(report.errors![0]!.code).toBe("timeout");
      expect(report.errors![0]!.message).toContain("nothing was applied");
      // the host noticed the silent client by itself: locks and stages gone
      expect(await freed).toBeLessThan(2000 + 3000);
      expect(ours(root)).toEqual([]);
      const settled = await reconcile(shell, root, reconcileTicket(thePlan, "ssh_stall"));
      expect(settled.ok).toBe(true);
      expect(settled.files.map((f) => f.state)).toEqual(["not_applied", "not_applied"]);
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a1\n");
    } finally {
      await proxy.close();
      await viaProxy.close();
    }
  }, 60_000);
});
