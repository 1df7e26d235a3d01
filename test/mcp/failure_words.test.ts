/**
 * The MCP server's failure results speak MCP (issue 15 items 4 and 5): one
 * coherent unknown-outcome result once the server has reconciled (no block
 * sends the model to a tool the server does not have, each code said once),
 * and next steps that name read_file / expected_sha256, never library
 * options or CLI flags. FAULT INJECTION: the shells below lose a result or
 * drop "the connection" on purpose.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { failure } from "../../lib/failure.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { RemoteShellError } from "../../lib/remote/shell.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";
import type { ApplyPatchOutput } from "../../examples/mcp/schemas.ts";
import { call, connect, localRoots, makeTree, sourceOf, textOf } from "./helpers.ts";
import type { Session } from "./helpers.ts";

const APP = "def main():\n    setup()\n    run(debug=True)\n";
const FIX = "*** Begin Patch\n*** Update File: app.py\n@@ def main():\n     setup()\n-    run(debug=True)\n+    run(debug=False)\n*** End Patch";
const CODES = ["outcome_unknown", "connect_failed", "context_mismatch", "precondition_failed", "remote_error", "partial_apply"];

let dir: string;
let session: Session | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/**
 * FAULT INJECTION: exec 2 (the commit) loses its result, or "drops" before
 * it ran; with `unreachable`, exec 3 (the server's reconcile) cannot connect.
 */
function faulty(fault: "lose-result" | "drop-before-run", unreachable = false): RemoteShell {
  const inner = new LocalShell();
  let n = 0;
  return {
    label: "local",
    elevated: false,
    async exec(command: string, options?: ExecOptions): Promise<ExecResult> {
      if (++n === 3 && unreachable) {
        throw new RemoteShellError(failure("connect_failed", "127.0.0.1:1 refused the connection", { retryable: true }), { started: false });
      }
      if (n === 2 && fault === "drop-before-run") {
        throw new RemoteShellError(failure("connect_failed", "the connection dropped", { retryable: true }), { started: true });
      }
      const result = await inner.exec(command, options);
      if (n !== 2) return result;
      const text = new TextDecoder().decode(result.stdout);
      return { stdout: new TextEncoder().encode(text.slice(0, text.indexOf("DONE"))), stderr: result.stderr, exitCode: null, signal: null };
    },
  };
}

function allText(result: Awaited<ReturnType<typeof call>>): string[] {
  return result.content.map((_, i) => textOf(result, i));
}

describe("MCP failure results in MCP words", () => {
  for (const fault of ["lose-result", "drop-before-run"] as const) {
    test(`outcome_unknown (${fault}), reconciled at once: one coherent result, no "call reconcile", each code once`, async () => {
      dir = makeTree({ "app.py": APP });
      session = await connect({ roots: localRoots({ site: dir }), shells: sourceOf(faulty(fault)) });
      const result = await call(session, "apply_patch", { patch: FIX });
      const out = result.structuredContent as ApplyPatchOutput;
      expect(out.errors![0]!.code).toBe("outcome_unknown");
      const blocks = allText(result);
      expect(blocks[0]).toContain(fault === "lose-result" ? "the patch IS applied" : "the patch was NOT applied");
      const all = blocks.join("\n");
      expect(all).not.toContain("call reconcile");
      expect(all).not.toContain("Do not resend it yet");
      expect(blocks[1]).toContain("The server has already run reconcile for this operation: act on its verdict above, not on this message.");
      for (const code of CODES) expect(all.split(`${code}:`).length - 1).toBeLessThanOrEqual(1);
      // structuredContent says the same as the text.
      expect(out.errors![0]!.message).toBe(blocks[1]!);
      expect(out.errors![0]!.hints).toEqual([expect.objectContaining({ kind: "reconcile", operation_id: out.operation_id })]);
    });
  }

  test("outcome_unknown and the reconcile cannot connect either: no block says to call reconcile (the server has none)", async () => {
    dir = makeTree({ "app.py": APP });
    session = await connect({ roots: localRoots({ site: dir }), shells: sourceOf(faulty("drop-before-run", true)) });
    const result = await call(session, "apply_patch", { patch: FIX });
    const out = result.structuredContent as ApplyPatchOutput;
    expect(out.reconciled).toMatchObject({ ok: false, errors: [{ code: "connect_failed" }] });
    const blocks = allText(result);
    const all = blocks.join("\n");
    expect(blocks[0]).toContain("reconcile did not finish: connect_failed: 127.0.0.1:1 refused the connection");
    expect(blocks[0]).toContain("read_file each file of the patch to see its real state");
    expect(blocks[1]).toContain(`This server has no reconcile tool: read_file each file of the patch before anything else, and tell the user the operation id ${out.operation_id}.`);
    expect(all).not.toContain("call reconcile");
    for (const code of CODES) for (const block of blocks) expect(block.split(`${code}:`).length - 1).toBeLessThanOrEqual(1);
  });

  test("a wrong expected_sha256 whose chunk still applies exactly: current_sha256, expected_sha256 and read_file in MCP words (issue 29.3)", async () => {
    dir = makeTree({ "app.py": APP });
    session = await connect({ roots: localRoots({ site: dir }) });
    const result = await call(session, "apply_patch", { patch: FIX, expected_sha256: { "app.py": "0".repeat(64) } });
    const out = result.structuredContent as ApplyPatchOutput;
    const current = out.errors![0]!.current_sha256!;
    expect(current).toMatch(/^[0-9a-f]{64}$/);
    expect(out.errors![0]).toMatchObject({ code: "precondition_failed", actual_sha256: current });
    const text = textOf(result);
    expect(text).toContain("Your chunks still apply to its current text");
    expect(text).toContain(`send the same patch again with this SHA-256 (send expected_sha256 {"app.py": "${current}"})`);
    expect(text).toMatch(/call read_file \{"path": "app\.py", "offset": \d+, "limit": \d+\} \(the lines your chunks touch\)/);
    expect(text).not.toContain("expectedSha256");
    expect(text).not.toContain("--expect");
  });

  test("a wrong expected_sha256 whose chunk no longer applies: read_file and expected_sha256 with file_sha256, no library option names", async () => {
    dir = makeTree({ "app.py": APP });
    session = await connect({ roots: localRoots({ site: dir }) });
    const result = await call(session, "apply_patch", { patch: FIX.replace("run(debug=True)", "run(debug=1)"), expected_sha256: { "app.py": "0".repeat(64) } });
    const text = textOf(result);
    expect(text).toStartWith("precondition_failed: app.py: ");
    expect(text).toContain('call read_file {"path": "app.py"}');
    expect(text).toContain('send the file_sha256 that read_file returns as expected_sha256 {"app.py": "<file_sha256>"}');
    expect(text).not.toContain("expectedSha256");
    expect(text).not.toContain("--expect");
  });

  test("a content_sha256 from read_file sent as expected_sha256: recognised, with the file_sha256 to send instead", async () => {
    dir = makeTree({ "app.py": APP });
    session = await connect({ roots: localRoots({ site: dir }) });
    const read = (await call(session, "read_file", { path: "app.py", offset: 2, limit: 2 })).structuredContent as { content_sha256: string; file_sha256: string };
    const result = await call(session, "apply_patch", { patch: FIX, expected_sha256: { "app.py": read.content_sha256 } });
    const out = result.structuredContent as ApplyPatchOutput;
    expect(out.errors![0]).toMatchObject({ code: "precondition_failed", path: "app.py", expected_sha256: read.content_sha256, actual_sha256: read.file_sha256 });
    const text = textOf(result);
    expect(text).toContain(`is the content_sha256 that read_file returned for lines 2–3 of app.py: the hash of those lines only`);
    expect(text).toContain(`The file has not changed since that read: its file_sha256 is ${read.file_sha256}. Next step: send expected_sha256 {"app.py": "${read.file_sha256}"} with the same patch.`);
    expect(text).not.toContain("the file changed since");
    expect(out.errors![0]!.message).toBe(text);
    // Following the advice works.
    const retried = await call(session, "apply_patch", { patch: FIX, expected_sha256: { "app.py": read.file_sha256 } });
    expect(retried.isError).toBeFalsy();
  });

  test("a content_sha256 of a file that changed since: read again (not the old file_sha256)", async () => {
    dir = makeTree({ "app.py": APP });
    session = await connect({ roots: localRoots({ site: dir }) });
    const read = (await call(session, "read_file", { path: "app.py", limit: 1 })).structuredContent as { content_sha256: string };
    writeFileSync(join(dir, "app.py"), APP + "# edited by someone else\n");
    const result = await call(session, "apply_patch", { patch: FIX, expected_sha256: { "app.py": read.content_sha256 } });
    const text = textOf(result);
    expect(text).toContain("is the content_sha256 that read_file returned for line 1 of app.py");
    expect(text).toContain('Next step: call read_file {"path": "app.py"}, build the patch on what it returns, and send the file_sha256 that read_file returns as expected_sha256');
  });

  test("a chunk that does not match: read_file with offset and limit of the closest region", async () => {
    dir = makeTree({ "app.py": APP });
    session = await connect({ roots: localRoots({ site: dir }) });
    const result = await call(session, "apply_patch", { patch: FIX.replace("setup()", "prepare()") });
    expect(textOf(result)).toMatch(/call read_file \{"path": "app\.py", "offset": 1, "limit": 3\}/);
  });
});
