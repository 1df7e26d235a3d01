/**
 * Planning a large input is announced by a progress notification (issue 29
 * item 5), not only the upload: the real SDK client with a progressToken
 * (its `onprogress`), in-process and over stdio.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { PLAN_PROGRESS_MIN_BYTES } from "../../examples/mcp/progress.ts";
import type { ApplyPatchOutput } from "../../examples/mcp/schemas.ts";
import { connect, localRoots, makeTree } from "./helpers.ts";
import type { Session } from "./helpers.ts";
import { startStdio } from "./stdio_helpers.ts";
import type { StdioSession } from "./stdio_helpers.ts";

let session: Session | StdioSession | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await session?.close();
  session = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A file of about `bytes` bytes, one short line each. */
function big(bytes: number): string {
  return Array.from({ length: Math.ceil(bytes / 12) }, (_, i) => `row ${String(i).padStart(7, "0")}`).join("\n") + "\n";
}
const CHANGE = "*** Begin Patch\n*** Update File: big.txt\n@@\n-row 0000100\n+row one hundred\n@@\n-row 0050000\n+row fifty thousand\n*** End Patch";

async function callWithProgress(s: Session | StdioSession, args: Record<string, unknown>): Promise<{ out: ApplyPatchOutput; seen: Progress[] }> {
  const seen: Progress[] = [];
  const result = await s.client.callTool({ name: "apply_patch", arguments: args }, undefined, { onprogress: (p) => seen.push(p) });
  return { out: result.structuredContent as ApplyPatchOutput, seen };
}

function checkOrder(seen: Progress[]): void {
  for (let i = 1; i < seen.length; i++) expect(seen[i]!.progress).toBeGreaterThan(seen[i - 1]!.progress);
}

const PLANNING = /^planning: matching 2 chunks of 1 file against \d+\.\d MB \(nothing is written until every chunk matches\)$/;

describe("progress while planning a large input", () => {
  test("in-process: planning first (progress 0, no total), then the upload's bytes, increasing, the last one the bytes uploaded", async () => {
    const text = big(2 * PLAN_PROGRESS_MIN_BYTES);
    const dir = makeTree({ "big.txt": text });
    dirs.push(dir);
    session = await connect({ roots: localRoots({ site: dir }) });
    const { out, seen } = await callWithProgress(session, { patch: CHANGE });
    expect(out.ok).toBe(true);
    expect(seen[0]).toEqual({ progress: 0, message: expect.stringMatching(PLANNING) });
    expect(seen[0]!.message).toContain(`${((text.length + CHANGE.length) / 1e6).toFixed(1)} MB`);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.at(-1)).toMatchObject({ progress: out.files[0]!.bytes_uploaded, total: out.files[0]!.bytes_uploaded });
    checkOrder(seen);
    expect(readFileSync(join(dir, "big.txt"), "utf8")).toBe(text.replace("row 0000100\n", "row one hundred\n").replace("row 0050000\n", "row fifty thousand\n"));
  });

  test("a dry run of a large input: the planning notification alone", async () => {
    const dir = makeTree({ "big.txt": big(2 * PLAN_PROGRESS_MIN_BYTES) });
    dirs.push(dir);
    session = await connect({ roots: localRoots({ site: dir }) });
    const { out, seen } = await callWithProgress(session, { patch: CHANGE, dry_run: true });
    expect(out.ok).toBe(true);
    expect(seen.map((p) => p.message)).toEqual([expect.stringMatching(PLANNING)]);
  });

  test(`a small input (under ${PLAN_PROGRESS_MIN_BYTES} bytes) is not announced: only its upload`, async () => {
    const dir = makeTree({ "big.txt": big(PLAN_PROGRESS_MIN_BYTES / 4) });
    dirs.push(dir);
    session = await connect({ roots: localRoots({ site: dir }) });
    const { out, seen } = await callWithProgress(session, { patch: CHANGE.replace("row 0050000", "row 0020000").replace("fifty", "twenty") });
    expect(out.ok).toBe(true);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((p) => p.message?.startsWith("uploading the new contents"))).toBe(true);
  });

  test("over stdio: the example server sends it too, before the result", async () => {
    const dir = makeTree({ "big.txt": big(2 * PLAN_PROGRESS_MIN_BYTES) });
    dirs.push(dir);
    session = await startStdio(process.execPath, ["examples/mcp_server.ts", "--root", `site=${dir}`]);
    const { out, seen } = await callWithProgress(session, { patch: CHANGE });
    expect(out.ok).toBe(true);
    expect(seen[0]!.message).toMatch(PLANNING);
    checkOrder(seen);
  }, 20_000);
});
