/**
 * FAULT INJECTION, run as its own process by hostile_output.test.ts: one
 * engine call against a "compromised host" — LocalShell running, in place
 * of the engine's program of the chosen kind, a program that floods stdout
 * (`yes ''`: newlines without end, or a valid snapshot header announcing a
 * file followed by more bytes than it said). Prints one JSON line: the
 * failure, and how far the process's peak RSS rose above its RSS just
 * before the call, in KiB. The peak is the kernel's `VmHWM` of this process
 * (/proc/self/status), reset just before the call by writing 5 to
 * /proc/self/clear_refs. `process.resourceUsage().maxRSS` would do where
 * no parent is involved, but on Linux it carries the parent's peak over
 * fork and exec (the test runner holds a 200 MiB flood of its own); and a
 * sampler cannot run during synchronous work (FIELD_NOTES).
 *
 * Usage: bun test/remote/flood_child.ts commit|reconcile|snapshot|snapshot-bytes [maxFileBytes]
 *
 * @module
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { RemoteShellError } from "../../lib/remote/shell.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";

const mode = process.argv[2] ?? "commit";
const maxFileBytes = Number(process.argv[3] ?? 8 * 1024 * 1024);
const root = mkdtempSync(join(tmpdir(), "sap-flood-"));
writeFileSync(join(root, "a.txt"), "one\ntwo\n");
const local = new LocalShell({ cwd: root });
const marker = mode.startsWith("snapshot") ? "SAP-BEGIN snapshot" : `SAP-BEGIN ${mode}`;
// A header of a file of maxFileBytes bytes, then bytes without end.
const flood = mode === "snapshot-bytes"
  ? `printf 'SAP-BEGIN snapshot\\nS 0 file ${maxFileBytes} 420 0 0 1 1\\n'; exec yes xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`
  : "exec yes ''";
const hostile: RemoteShell = {
  label: "hostile",
  exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    return local.exec(command.includes(marker) ? flood : command, options);
  },
};
const patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+three\n*** End Patch\n";

// Warm up every code path once (a dry run), so that loading and compiling do not count.
await applyPatch(local, { root, patch, dryRun: true });
Bun.gc(true);
const status = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync("/proc/self/status", "latin1"))![1]);
writeFileSync("/proc/self/clear_refs", "5"); // VmHWM := the current RSS
const before = status("VmRSS");
let code = "";
let message = "";
try {
  if (mode === "commit") {
    const report = await applyPatch(hostile, { root, patch });
    code = report.errors?.[0]?.code ?? "ok";
    message = report.errors?.[0]?.message ?? "";
  } else if (mode === "reconcile") {
    const sha = "0".repeat(64);
    const ticket = { operationId: "flood_1", files: [{ op: "update" as const, path: "a.txt", previousSha256: sha, newSha256: sha, newSize: 6 }] };
    const report = await reconcile(hostile, root, ticket);
    code = report.errors?.[0]?.code ?? "ok";
    message = report.errors?.[0]?.message ?? "";
  } else {
    await readSnapshots(hostile, root, ["a.txt"], { maxFileBytes });
    code = "ok";
  }
} catch (error) {
  if (!(error instanceof RemoteShellError)) throw error;
  code = error.failure.code;
  message = error.failure.message;
}
const growthKiB = status("VmHWM") - before;
rmSync(root, { recursive: true, force: true });
console.log(JSON.stringify({ mode, code, message, growthKiB }));
