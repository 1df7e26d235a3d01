/**
 * Bounded hostile input (SPEC §7 round 2, issue 13 item 4): a host that
 * answers with more than the protocol allows costs the client at most about
 * twice what was asked for, and the report says `remote_error` (protocol
 * violation). Every engine exec carries a timeout and output bounds
 * (lib/remote/exec_bounds.ts).
 *
 * FAULT INJECTION throughout: the "compromised host" is either a fake
 * RemoteShell returning a flood, or LocalShell running a flooding program
 * in place of the engine's (test/remote/flood_child.ts, in its own process
 * so its peak RSS can be read).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { commitRemote } from "../../lib/remote/commit.ts";
import { MAX_REPLY_BYTES, MAX_STDERR_BYTES, nearReplyBytes, snapshotReplyBytes } from "../../lib/remote/exec_bounds.ts";
import { listFiles } from "../../lib/remote/list_files.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket } from "../../lib/remote/plan_shas.ts";
import { searchFiles } from "../../lib/remote/search_files.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";
import { CLOSEST_SEARCH_DEFAULTS, readSnapshots } from "../../lib/remote/snapshot.ts";
import { cleanupTemps, makeTree, P, plan } from "../support/local_trees.ts";

const MiB = 1024 * 1024;
/** 200 MiB of newlines, made once and released after this file (bun runs every test file in one process). */
let flood: Uint8Array | null = null;
const newlines = (): Uint8Array => (flood ??= new Uint8Array(200 * MiB).fill(0x0a));
afterAll(() => {
  flood = null;
  cleanupTemps();
});

/** A fake host that answers every program with `stdout`, ignoring every bound it is given (FAULT INJECTION). */
function floodingShell(stdout: Uint8Array): RemoteShell & { calls: number } {
  return {
    label: "hostile",
    calls: 0,
    exec(): Promise<ExecResult> {
      this.calls++;
      return Promise.resolve({ stdout, stderr: new Uint8Array(0), exitCode: 0, signal: null });
    },
  };
}

describe("a fake hostile RemoteShell that ignores maxStdoutBytes and answers with 200 MiB of newlines (fault-injected)", () => {
  test("commit: remote_error (protocol violation) with the reconcile ticket, without parsing the flood", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    const thePlan = plan([P.update("a.txt", "a1\n", "a2\n")]);
    const started = performance.now();
    const report = await commitRemote(floodingShell(newlines()), root, thePlan, { operationId: "flood_c" });
    expect(performance.now() - started).toBeLessThan(2000); // today's split of 200 M lines took minutes and 6.76 GB
    expect(report.ok).toBe(false);
    const error = report.errors![0]!;
    expect(error.code).toBe("remote_error");
    expect(error.message).toContain("protocol violation");
    expect(error.message).toContain(`${MAX_REPLY_BYTES} bytes`);
    expect(error.reconcile?.operationId).toBe("flood_c");
    expect(error.hints?.[0]?.kind).toBe("reconcile");
  });

  test("reconcile: remote_error (protocol violation) saying to reconcile again", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    const thePlan = plan([P.update("a.txt", "a1\n", "a2\n")]);
    const report = await reconcile(floodingShell(newlines()), root, reconcileTicket(thePlan, "flood_r"));
    expect(report.errors![0]!.code).toBe("remote_error");
    expect(report.errors![0]!.message).toContain("protocol violation");
    expect(report.errors![0]!.message).toContain("reconcile with operation id flood_r again");
  });

  test("snapshot: rejects remote_error (protocol violation), nothing changed, started true", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    const error = await readSnapshots(floodingShell(newlines()), root, ["a.txt"], { maxFileBytes: 1 * MiB }).catch((e) => e);
    expect(error.failure.code).toBe("remote_error");
    expect(error.failure.message).toContain("protocol violation");
    expect(error.failure.message).toContain(`${snapshotReplyBytes(1, MiB)} bytes`);
    expect(error.started).toBe(true);
  });

  test("applyPatch: the first exec's violation is the report", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    const shell = floodingShell(newlines());
    const report = await applyPatch(shell, { root, patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-a1\n+a2\n*** End Patch\n" });
    expect(report.errors![0]!.code).toBe("remote_error");
    expect(shell.calls).toBe(1);
  });

  test("within the bound, a reply of newlines stops at its first line: the commit's report is unreadable (outcome_unknown), parsed in no time", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    const thePlan = plan([P.update("a.txt", "a1\n", "a2\n")]);
    const started = performance.now();
    const report = await commitRemote(floodingShell(newlines().subarray(0, MAX_REPLY_BYTES)), root, thePlan, { operationId: "flood_w" });
    expect(performance.now() - started).toBeLessThan(500);
    expect(report.errors![0]!.code).toBe("outcome_unknown");
    expect(report.errors![0]!.message).toContain("unreadable");
  });
});

describe("a compromised host flooding stdout through LocalShell (fault-injected program, own process): peak memory stays near what was asked for", () => {
  // Before this bound, 20 MiB of newlines answering the commit raised the
  // peak RSS by 305 MiB here (200 MiB: 6.76 GB); the programs now die at
  // their protocol's limit.
  const child = (mode: string, maxFileBytes?: number): { code: string; message: string; growthKiB: number } => {
    const run = spawnSync(process.execPath, [join(import.meta.dir, "flood_child.ts"), mode, ...(maxFileBytes ? [String(maxFileBytes)] : [])], {
      encoding: "utf8",
      timeout: 60_000,
    });
    if (run.status !== 0) throw new Error(`flood_child ${mode} failed: ${run.stderr}`);
    return JSON.parse(run.stdout.trim().split("\n").at(-1)!);
  };
  /** Twice the allowed reply, plus what a Bun process's heap and chunk bookkeeping move by anyway. */
  const bound = (allowed: number): number => (2 * allowed + 16 * MiB) / 1024;

  test.each([
    ["commit", MAX_REPLY_BYTES],
    ["reconcile", MAX_REPLY_BYTES],
  ])("%s answered with endless newlines: remote_error (protocol violation), peak RSS within 2 x 1 MiB + 16 MiB", (mode, allowed) => {
    const result = child(mode);
    expect(result.code).toBe("remote_error");
    expect(result.message).toContain("protocol violation");
    expect(result.growthKiB).toBeLessThan(bound(allowed));
  }, 60_000);

  test.each([
    ["snapshot", "endless newlines"],
    ["snapshot-bytes", "a valid header for an 8 MiB file, then bytes without end"],
  ])("%s answered with %s: remote_error, peak RSS within 2 x the requested 8 MiB + 16 MiB", (mode) => {
    const result = child(mode, 8 * MiB);
    expect(result.code).toBe("remote_error");
    expect(result.message).toContain("protocol violation");
    expect(result.growthKiB).toBeLessThan(bound(snapshotReplyBytes(1, 8 * MiB)));
  }, 60_000);
});

describe("every engine exec is bounded in time and output", () => {
  test("snapshot, commit, reconcile, list and search each pass a timeout and a stderr bound; the first three their protocol's stdout bound", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    const seen: { program: string; options: ExecOptions }[] = [];
    const inner = new LocalShell();
    const recording: RemoteShell = {
      label: "recording",
      exec(command: string, options: ExecOptions = {}) {
        const program = /sap_out "SAP-BEGIN ([a-z]+)"/.exec(command)?.[1] ?? "?";
        seen.push({ program, options });
        return inner.exec(command, options);
      },
    };
    const report = await applyPatch(recording, { root, patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-a1\n+a2\n*** End Patch\n", operationId: "bounded_1" });
    expect(report.ok).toBe(true);
    await reconcile(recording, root, reconcileTicket(plan([P.update("a.txt", "a1\n", "a2\n")]), "bounded_1"));
    await listFiles(recording, root);
    await searchFiles(recording, root, "a2");
    expect(seen.map((s) => s.program)).toEqual(["snapshot", "commit", "reconcile", "list", "search"]);
    for (const { program, options } of seen) {
      expect({ program, timeout: options.timeoutMs! > 0 }).toEqual({ program, timeout: true });
      expect(options.maxStderrBytes).toBe(MAX_STDERR_BYTES);
    }
    const stdoutBound = Object.fromEntries(seen.map((s) => [s.program, s.options.maxStdoutBytes]));
    // the Update's source must exist: room for the walk near it, were it missing (sh_near.ts)
    expect(stdoutBound).toMatchObject({ snapshot: snapshotReplyBytes(1, 128 * MiB) + nearReplyBytes(CLOSEST_SEARCH_DEFAULTS.maxEntries), commit: MAX_REPLY_BYTES, reconcile: MAX_REPLY_BYTES });
  });

  test("the default timeouts: snapshot 5 min; commit 5 min + the lock wait + 1 s per MiB sent", async () => {
    const root = makeTree({ "a.txt": "a1\n" });
    const timeouts: number[] = [];
    const inner = new LocalShell();
    const recording: RemoteShell = {
      exec(command: string, options: ExecOptions = {}) {
        timeouts.push(options.timeoutMs!);
        return inner.exec(command, options);
      },
    };
    const big = "x".repeat(3 * MiB);
    await readSnapshots(recording, root, ["a.txt"]);
    await commitRemote(recording, root, plan([P.update("a.txt", "a1\n", big)]), { lockWaitMs: 2000 });
    expect(timeouts).toEqual([300_000, 300_000 + 2000 + 4000]); // 3 MiB and the framing: 4 started MiB
  });
});
