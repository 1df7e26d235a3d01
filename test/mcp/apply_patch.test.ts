import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { failure } from "../../lib/failure.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { RemoteShellError } from "../../lib/remote/shell.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";
import { applyPatchOutput } from "../../examples/mcp/schemas.ts";
import type { ApplyPatchOutput, ReadFileOutput } from "../../examples/mcp/schemas.ts";
import type { RootConfig } from "../../examples/mcp/roots.ts";
import { loadRoots } from "../../examples/mcp/roots.ts";
import { call, connect, expectValid, FaultShell, localRoots, makeTree, sha256, sourceOf, textOf } from "./helpers.ts";
import type { Session } from "./helpers.ts";

const APP = "def main():\n    setup()\n    run(debug=True)\n";
const FIX_DEBUG = "*** Begin Patch\n*** Update File: app.py\n@@ def main():\n     setup()\n-    run(debug=True)\n+    run(debug=False)\n*** End Patch";
const TWICE = "for x in a:\n    print(x)\n\nfor x in b:\n    print(x)\n";

let dir: string;
let session: Session | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function start(files: Record<string, string>, extra: Parameters<typeof connect>[0] | Record<string, never> = {}): Promise<Session> {
  dir = makeTree(files);
  session = await connect({ roots: localRoots({ site: dir }), ...extra });
  return session;
}

async function apply(args: Record<string, unknown>, s: Session = session!): Promise<{ out: ApplyPatchOutput; result: Awaited<ReturnType<typeof call>> }> {
  const result = await call(s, "apply_patch", args);
  const out = result.structuredContent as ApplyPatchOutput;
  expectValid(applyPatchOutput, out);
  return { out, result };
}

const disk = (path: string): string => readFileSync(join(dir, path), "utf8");

describe("MCP server in-process: apply_patch", () => {
  test("read → patch with expected_sha256 → read: the file changes on disk, its mode is kept, the new sha chains", async () => {
    await start({ "app.py": APP });
    chmodSync(join(dir, "app.py"), 0o640);
    const before = (await call(session!, "read_file", { path: "app.py" })).structuredContent as ReadFileOutput;
    const { out, result } = await apply({ patch: FIX_DEBUG, expected_sha256: { "app.py": before.file_sha256 } });
    expect(result.isError).toBeFalsy();
    const expected = "def main():\n    setup()\n    run(debug=False)\n";
    expect(disk("app.py")).toBe(expected);
    expect(statSync(join(dir, "app.py")).mode & 0o7777).toBe(0o640);
    expect(out).toMatchObject({ ok: true, dry_run: false, atomicity: "batch_preflight_per_file_commit", elevated: false });
    expect(out.files).toHaveLength(1);
    expect(out.files[0]).toMatchObject({ op: "update", path: "app.py", previous_sha256: before.file_sha256, new_sha256: sha256(expected) });
    expect(out.files[0]!.metadata_preserved).toEqual({ mode: true, owner: true });
    expect(textOf(result)).toContain(`new sha256 ${sha256(expected)}`);
    expect(textOf(result, 1)).toContain("+    run(debug=False)");
    const after = (await call(session!, "read_file", { path: "app.py" })).structuredContent as ReadFileOutput;
    expect(after.file_sha256).toBe(out.files[0]!.new_sha256!);
  });

  test("the connection's snapshot cache: read_file fills it, apply_patch plans on it after a hash proof, a file changed meanwhile is downloaded", async () => {
    await start({ "app.py": APP });
    const first = (await call(session!, "read_file", { path: "app.py" })).structuredContent as ReadFileOutput;
    expect(first.snapshot).toBe("downloaded");
    const second = (await call(session!, "read_file", { path: "app.py" })).structuredContent as ReadFileOutput;
    expect(second.snapshot).toBe("cached");
    const { out } = await apply({ patch: FIX_DEBUG });
    expect(out.files[0]!.snapshot).toBe("cached");
    // Someone else edits the file: the hash differs, the new bytes are downloaded and planned on.
    writeFileSync(join(dir, "app.py"), disk("app.py").replace("setup()", "init()"));
    const back = "*** Begin Patch\n*** Update File: app.py\n@@ def main():\n     init()\n-    run(debug=False)\n+    run(debug=True)\n*** End Patch";
    const { out: again } = await apply({ patch: back });
    expect(again.ok).toBe(true);
    expect(again.files[0]!.snapshot).toBe("downloaded");
    expect(disk("app.py")).toBe(APP.replace("setup()", "init()"));
  });

  test("dry run: the report and diff, nothing changed on disk", async () => {
    await start({ "app.py": APP });
    const { out, result } = await apply({ patch: FIX_DEBUG, dry_run: true });
    expect(out).toMatchObject({ ok: true, dry_run: true });
    expect(out.files[0]).toMatchObject({ bytes_written: 0, previous_sha256: sha256(APP), metadata_preserved: null });
    expect(textOf(result)).toMatch(/^Dry run on root site: .*nothing was changed/);
    expect(textOf(result, 1)).toContain("-    run(debug=True)");
    expect(disk("app.py")).toBe(APP);
  });

  test("the hidden alias apply-patch reaches apply_patch", async () => {
    await start({ "app.py": APP });
    const result = await session!.client.callTool({ name: "apply-patch", arguments: { patch: FIX_DEBUG, dry_run: true } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ ok: true, dry_run: true, files: [{ op: "update", path: "app.py" }] });
  });

  const failures: {
    name: string;
    files: Record<string, string>;
    args: (d: string) => Record<string, unknown>;
    code: string;
    check?: (out: ApplyPatchOutput, text: string) => void;
  }[] = [
    {
      name: "expected_sha256 of another version → precondition_failed",
      files: { "app.py": APP },
      args: () => ({ patch: FIX_DEBUG, expected_sha256: { "app.py": sha256("an older version\n") } }),
      code: "precondition_failed",
      check: (out) => expect(out.errors![0]).toMatchObject({ path: "app.py", actual_sha256: sha256(APP) }),
    },
    {
      name: "a chunk matching twice → ambiguous_hunk with both candidates",
      files: { "loop.py": TWICE },
      args: () => ({ patch: "*** Begin Patch\n*** Update File: loop.py\n@@\n-    print(x)\n+    print(x * 2)\n*** End Patch" }),
      code: "ambiguous_hunk",
      check: (out) => expect(out.errors![0]!.candidates?.map((c) => c.line)).toEqual([2, 5]),
    },
    {
      name: "lines not in the file → context_mismatch with the closest region",
      files: { "app.py": APP },
      args: () => ({ patch: "*** Begin Patch\n*** Update File: app.py\n@@\n     setup()\n-    run(debug=Maybe)\n+    run(debug=False)\n*** End Patch" }),
      code: "context_mismatch",
      check: (out, text) => {
        expect(out.errors![0]!.closest?.start_line).toBe(2);
        expect(text).toContain("run(debug=True)");
      },
    },
    {
      name: "a path leaving the root → invalid_path",
      files: { "app.py": APP },
      args: () => ({ patch: "*** Begin Patch\n*** Add File: ../evil.txt\n+x\n*** End Patch" }),
      code: "invalid_path",
    },
    {
      name: "an unknown root → invalid_argument listing the roots and naming the one that holds the patch's file",
      files: { "app.py": APP },
      args: () => ({ root: "prod", patch: FIX_DEBUG }),
      code: "invalid_argument",
      check: (out, text) => {
        expect(text).toContain(`there is no root named "prod" (the roots are: site); app.py is in root "site". Next step: call apply_patch again with "root": "site" and the same patch.`);
        expect(out.errors![0]!.suggested_root).toBe("site");
      },
    },
  ];
  for (const f of failures) {
    test(`failure: ${f.name}; isError, recovery message first, nothing changed`, async () => {
      await start(f.files);
      const { out, result } = await apply(f.args(dir));
      expect(result.isError).toBe(true);
      expect(out.ok).toBe(false);
      expect(out.errors!.map((e) => e.code)).toEqual([f.code as never]);
      expect(textOf(result)).toContain(out.errors![0]!.message);
      f.check?.(out, textOf(result));
      for (const [path, content] of Object.entries(f.files)) expect(disk(path)).toBe(content);
    });
  }

  test("several roots and none named → invalid_argument listing them", async () => {
    dir = makeTree({ "app.py": APP });
    session = await connect({ roots: localRoots({ site: dir, docs: dir }) });
    const { out, result } = await apply({ patch: FIX_DEBUG });
    expect(out.errors![0]!.code).toBe("invalid_argument");
    expect(textOf(result)).toContain("several roots are configured (site, docs)");
  });

  test("the diff is bounded in the text block and again in structuredContent (cut marked, full size given)", async () => {
    const big = Array.from({ length: 400 }, (_, i) => `row ${i}`).join("\n") + "\n";
    await start({ "big.txt": big }, { diffBudgetBytes: 1024 } as never);
    const body = Array.from({ length: 400 }, (_, i) => `-row ${i}\n+ROW ${i}`).join("\n");
    const { out, result } = await apply({ patch: `*** Begin Patch\n*** Update File: big.txt\n@@\n${body}\n*** End Patch`, dry_run: true });
    const shown = textOf(result, 1);
    expect(new TextEncoder().encode(shown).length).toBeLessThan(1024 + 300);
    expect(shown).toMatch(/\[diff cut: \d+ of \d+ bytes shown\. To see one file's change whole, send the same patch with only that file's section and dry_run: true/);
    const file = out.files[0]! as (typeof out.files)[0] & { diff_truncated?: boolean; diff_bytes?: number };
    expect(new TextEncoder().encode(file.diff).length).toBeLessThanOrEqual(1024);
    expect(file.diff.endsWith("\n")).toBe(true);
    expect(file).toMatchObject({ diff_truncated: true });
    expect(file.diff_bytes).toBeGreaterThan(5000);
    expect(file.diff).not.toContain("+ROW 399");
  });

  test("an unreachable SSH root → connect_failed as a typed failure (127.0.0.1, closed port)", async () => {
    dir = makeTree({});
    const roots = loadRoots(["--root", "app=ssh://nobody@127.0.0.1:1/srv/app?sshConfigFile=none&hostKeyPolicy=strict"]) as RootConfig[];
    session = await connect({ roots });
    const { out, result } = await apply({ patch: FIX_DEBUG });
    expect(result.isError).toBe(true);
    expect(out.errors![0]!.code).toBe("connect_failed");
    expect(session.logs.some((l) => l.includes("cannot connect for root app"))).toBe(true);
  });
});

describe("MCP server in-process: concurrency, cancellation, progress", () => {
  test("fault-injected: the file changes between snapshot and commit → conflict, the other writer's content kept", async () => {
    dir = makeTree({ "app.py": APP });
    const theirs = "def main():\n    setup()\n    run(debug=True)  # changed by someone else\n";
    // exec 1 reads the snapshot; exec 2 is the commit: change the file right before it.
    const shell = new FaultShell(new LocalShell(), { before: (n) => (n === 2 ? writeFileSync(join(dir, "app.py"), theirs) : undefined) });
    session = await connect({ roots: localRoots({ site: dir }), shells: sourceOf(shell) });
    const { out, result } = await apply({ patch: FIX_DEBUG });
    expect(result.isError).toBe(true);
    expect(out.errors![0]).toMatchObject({ code: "conflict", path: "app.py", expected_sha256: sha256(APP), actual_sha256: sha256(theirs), retryable: true });
    expect(shell.execs).toBe(2);
    expect(disk("app.py")).toBe(theirs);
  });

  test("fault-injected: a client cancel after the snapshot stops the call before the commit exec; nothing changes", async () => {
    dir = makeTree({ "app.py": APP });
    const controller = new AbortController();
    const shell = new FaultShell(new LocalShell(), {
      after: async (n, options) => {
        if (n !== 1) return;
        controller.abort(); // the client cancels while the snapshot is being read…
        const signal = options.signal!;
        if (!signal.aborted) await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true })); // …and the server has seen it
      },
    });
    session = await connect({ roots: localRoots({ site: dir }), shells: sourceOf(shell) });
    const cancelled = session.client.callTool({ name: "apply_patch", arguments: { patch: FIX_DEBUG } }, undefined, { signal: controller.signal });
    await expect(cancelled).rejects.toThrow();
    const deadline = Date.now() + 3000;
    while (!session.logs.some((l) => l.includes("site cancelled")) && Date.now() < deadline) await Bun.sleep(10);
    expect(session.logs.filter((l) => l.startsWith("apply_patch"))).toEqual([expect.stringContaining("apply_patch site cancelled before any file changed")]);
    expect(shell.execs).toBe(1);
    expect(disk("app.py")).toBe(APP);
  });

  /**
   * FAULT INJECTION: a LocalShell whose exec `n` goes wrong as `fault` says —
   * `lose-result`: the program runs for real, then the result is lost as
   * when the channel dies (no exit status, output cut before the end);
   * `drop-before-run`: the connection "drops" after the program was sent but
   * before it ran (started, nothing done); `unreachable`: connecting fails.
   */
  function faultyShell(faults: Record<number, "lose-result" | "drop-before-run" | "unreachable">): RemoteShell & { execs: number } {
    const inner = new LocalShell();
    const shell = {
      label: "local",
      elevated: false,
      execs: 0,
      async exec(command: string, options?: ExecOptions): Promise<ExecResult> {
        const fault = faults[++shell.execs];
        if (fault === "unreachable") throw new RemoteShellError(failure("connect_failed", "connect_failed: 127.0.0.1:1 refused the connection", { retryable: true }), { started: false });
        if (fault === "drop-before-run") throw new RemoteShellError(failure("connect_failed", "connect_failed: the connection dropped", { retryable: true }), { started: true });
        const result = await inner.exec(command, options);
        if (fault !== "lose-result") return result;
        const text = new TextDecoder().decode(result.stdout);
        return { stdout: new TextEncoder().encode(text.slice(0, text.indexOf("DONE"))), stderr: result.stderr, exitCode: null, signal: null };
      },
    };
    return shell;
  }

  const unknownOutcomes: { name: string; faults: Record<number, "lose-result" | "drop-before-run" | "unreachable">; disk: string; verdict: string; isApplied: boolean | null }[] = [
    {
      name: "the commit ran but its result was lost → reconciled at once: applied, do not resend",
      faults: { 2: "lose-result" },
      disk: APP.replace("True", "False"),
      verdict: "the patch IS applied, every file holds its new version. Do not send it again.",
      isApplied: true,
    },
    {
      name: "the connection dropped as the commit was sent → reconciled at once: not applied, send again",
      faults: { 2: "drop-before-run" },
      disk: APP,
      verdict: "the patch was NOT applied and nothing was changed (its temporary files are removed). Send the same patch again.",
      isApplied: false,
    },
    {
      name: "the host is unreachable for the reconcile too → still unknown: read before anything else",
      faults: { 2: "drop-before-run", 3: "unreachable" },
      disk: APP,
      verdict: "but reconcile did not finish: connect_failed: 127.0.0.1:1 refused the connection",
      isApplied: null,
    },
  ];
  for (const c of unknownOutcomes) {
    test(`fault-injected outcome_unknown: ${c.name}`, async () => {
      dir = makeTree({ "app.py": APP });
      const shell = faultyShell(c.faults);
      session = await connect({ roots: localRoots({ site: dir }), shells: sourceOf(shell) });
      const { out, result } = await apply({ patch: FIX_DEBUG });
      expect(result.isError).toBe(true);
      expect(out.errors![0]!.code).toBe("outcome_unknown");
      expect(out.errors![0]!.reconcile).toMatchObject({ operation_id: out.operation_id, files: [{ op: "update", path: "app.py", previous_sha256: sha256(APP) }] });
      expect(shell.execs).toBe(3); // snapshot, commit, reconcile
      expect(textOf(result, 0)).toStartWith(`The server ${c.isApplied === null ? "tried to settle" : "has already reconciled"} operation ${out.operation_id}`);
      expect(textOf(result, 0)).toContain(c.verdict);
      expect(textOf(result, 1)).toContain(out.errors![0]!.message);
      if (c.isApplied === null) {
        expect(out.reconciled).toMatchObject({ ok: false, errors: [{ code: "connect_failed" }] });
        expect(textOf(result, 0)).toContain("do not resend the patch. read_file each file");
      } else {
        expect(out.reconciled).toMatchObject({ ok: true, operation_id: out.operation_id });
        expect(out.reconciled!.files.map((f) => [f.path, f.state])).toEqual([["app.py", c.isApplied ? "applied" : "not_applied"]]);
        expect(readdirSync(dir).filter((name) => name.startsWith(".sap-"))).toEqual([]);
      }
      expect(disk("app.py")).toBe(c.disk);
      expect(session.logs.some((l) => l.includes(`reconciled operation ${out.operation_id}`))).toBe(true);
    });
  }

  test("progress notifications arrive while a large content uploads", async () => {
    // An added file is uploaded whole (an update of a big file would be a
    // delta of a few hundred bytes), so this is ~4 MB on stdin.
    const big = "x".repeat(99);
    await start({});
    const added = "*** Begin Patch\n*** Add File: big.txt\n+FIRST LINE\n" + ("+" + big + "\n").repeat(40_000) + "*** End Patch";
    const seen: { progress: number; total?: number }[] = [];
    const result = await session!.client.callTool(
      { name: "apply_patch", arguments: { patch: added } },
      undefined,
      { onprogress: (p) => seen.push({ progress: p.progress, total: p.total }) },
    );
    expect(result.isError).toBeFalsy();
    const total = seen.at(-1)?.total ?? 0;
    expect(total).toBeGreaterThanOrEqual(4_000_000);
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(seen.length).toBeLessThanOrEqual(22); // throttled to ~5% steps
    expect(seen.at(-1)!.progress).toBe(total);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
    expect(disk("big.txt").startsWith("FIRST LINE\n")).toBe(true);
  });
});
