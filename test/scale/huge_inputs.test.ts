/**
 * Huge inputs (issue 28 item 2), the `npm test` sizes: the property checks
 * of test/scale/huge_inputs.ts run in a child process under Node (V8
 * refuses a call with more than about 125,000 arguments) and under Bun
 * (JSC: about 640,000), at sizes past each engine's limit; and the example
 * MCP server, started under Node over stdio, applies a million-line Add and
 * refuses one over maxPatchBytes with a typed failure. `npm run hardening`
 * runs the heavy sizes (1M lines, 150k chunks and files).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ApplyPatchOutput } from "../../examples/mcp/schemas.ts";
import { startStdio } from "../mcp/stdio_helpers.ts";
import type { StdioSession } from "../mcp/stdio_helpers.ts";
import type { HugeSizes } from "./huge_inputs.ts";
import { NODE_BINARY, runHugeInputsUnder } from "./run_under.ts";

const NODE = NODE_BINARY;
const BUN = process.execPath;

/** Which sizes must be past the engine's argument limit (measured in the child: 125,221 under Node 26.10, 638,484 under Bun 1.4.4). */
const table: { runtime: string; binary: string; sizes: HugeSizes; past: ("lines" | "chunks" | "files")[] }[] = [
  { runtime: "node", binary: NODE, sizes: { lines: 200_000, chunks: 130_000, files: 130_000, seed: 28 }, past: ["lines", "chunks", "files"] },
  // Chunks and files past JSC's limit cost a minute: npm run hardening has them; Node covers them here.
  { runtime: "bun", binary: BUN, sizes: { lines: 700_000, chunks: 5000, files: 5000, seed: 28 }, past: ["lines"] },
];

describe("huge inputs never throw and come out right (property checks in a child process)", () => {
  for (const { runtime, binary, sizes, past } of table) {
    test(`under ${runtime} (${sizes.lines} lines, ${sizes.chunks} chunks, ${sizes.files} files): every check passes`, () => {
      const run = runHugeInputsUnder(binary, sizes);
      const failed = run.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
      expect(failed).toEqual([]);
      // No summary: the child died or ran out of time (the checks it finished are in the failure).
      if (run.done === null) throw new Error(`no summary line after ${Math.round(run.wallMs / 1000)} s; checks: ${run.checks.map((c) => `${c.name} ${c.ms} ms`).join(", ")}; stderr: ${run.stderr.slice(0, 2000)}`);
      expect(run.done).toMatchObject({ failed: 0, runtime });
      // Every shape ran: the plan checks and the commits.
      expect(run.checks.length).toBe(18);
      // The sizes are past what a spread into a call survives on this engine, or the run proves nothing.
      for (const size of past) expect(run.done.sizes[size]).toBeGreaterThan(run.done.argumentLimit);
    }, 450_000); // about 25 s (Node) and 16 s (Bun) on 2 quiet cores; 170 s seen under a load average of 13
  }
});

describe("a file whose text is longer than V8's longest string (Node), issue 28 item 3", () => {
  test("512 MiB + 4 KiB of ASCII: decodeText says too_long (not invalid_utf8), an Update and a read are refused limit_exceeded with the engine's bound, a Delete is planned", () => {
    const out = spawnSync(NODE, ["test/scale/too_long_text.ts"], { cwd: join(import.meta.dir, "..", ".."), encoding: "utf8", timeout: 170_000 });
    expect(out.stderr).toBe("");
    const r = JSON.parse(out.stdout) as { decoded: unknown; update: { ok: boolean; errors: { code: string; limit: unknown; message: string }[] }; remove: unknown; read: { code: string; limit: unknown } };
    expect(r.decoded).toEqual({ ok: false, reason: "too_long", byteLength: 2 ** 29 + 4096, maxChars: 2 ** 29 - 24 });
    const limit = { name: "maxFileBytes", max: 2 ** 29 - 24, actual: 2 ** 29 + 4096 };
    expect(r.update.errors).toEqual([expect.objectContaining({ code: "limit_exceeded", limit })]);
    expect(r.update.errors[0]!.message).toContain("Run the tool under Bun");
    expect(r.read).toMatchObject({ code: "limit_exceeded", limit });
    expect(r.remove).toEqual({ ok: true, ops: ["delete"] });
  }, 180_000);
});

describe("the example MCP server under Node (V8's limit), over stdio", () => {
  let dir: string;
  let s: StdioSession;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sap-huge-mcp-"));
    s = await startStdio(NODE, ["examples/mcp_server.ts", "--root", `site=${dir}`]);
  }, 30_000);
  afterAll(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("an Add of 1,000,000 short lines (9 MB) is applied, not `remote_error`", async () => {
    const lines: string[] = ["*** Begin Patch", "*** Add File: big.txt"];
    for (let i = 0; i < 1_000_000; i++) lines.push(`+l${i}`);
    lines.push("*** End Patch");
    const result = await s.call("apply_patch", { patch: lines.join("\n") });
    const out = result.structuredContent as ApplyPatchOutput;
    expect(out.errors ?? []).toEqual([]);
    expect(out.ok).toBe(true);
    const content = readFileSync(join(dir, "big.txt"), "utf8");
    expect(content.length).toBe(lines.slice(2, -1).reduce((n, l) => n + l.length, 0));
    expect(content.endsWith("l999999\n")).toBe(true);
  }, 120_000);

  test("an Add of 1,000,000 code-like lines (48 MB) is refused `limit_exceeded` maxPatchBytes before anything is read; the next call is answered", async () => {
    const lines: string[] = ["*** Begin Patch", "*** Add File: refused.txt"];
    for (let i = 0; i < 1_000_000; i++) lines.push(`+    const value${i} = compute(${i}, options);`);
    lines.push("*** End Patch");
    const result = await s.call("apply_patch", { patch: lines.join("\n") });
    expect(result.isError).toBe(true);
    const out = result.structuredContent as ApplyPatchOutput;
    expect(out.errors![0]).toMatchObject({ code: "limit_exceeded", limit: { name: "maxPatchBytes", max: 16 * 1024 * 1024 } });
    expect(existsSync(join(dir, "refused.txt"))).toBe(false);
    expect((await s.call("list_files", {})).isError).toBeFalsy();
    expect(s.protocolErrors).toEqual([]);
  }, 120_000);
});
