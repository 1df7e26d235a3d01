/**
 * Sizes coherent end to end, over stdio with the SDK client and raw pipes
 * (issue 14 item 1): a 12 MB patch, a 20 MB one-line file, a 13 MB delete,
 * requests over the limit — each answered, and the next call answered too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ApplyPatchOutput, ReadFileOutput } from "../../examples/mcp/schemas.ts";
import { sha256 } from "./helpers.ts";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { httpClient, startHttpServer } from "./http_helpers.ts";
import { HANDSHAKE, RawLine, rawRun, startStdio } from "./stdio_helpers.ts";

const MB = 1_000_000;
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "sap-mcp-sizes-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The size of a result as the client received it (JSON). */
const size = (value: unknown): number => JSON.stringify(value).length;

/** What the size tests need of a client session, over either transport. */
interface Caller {
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
  protocolErrors: Error[];
}

const transports: { name: string; start(root: string): Promise<Caller> }[] = [
  { name: "stdio", start: (root) => startStdio(process.execPath, ["examples/mcp_server.ts", "--root", `site=${root}`]) },
  {
    name: "Streamable HTTP",
    start: async (root) => {
      const server = await startHttpServer(["--root", `site=${root}`]);
      const client = await httpClient(server.url, server.auth);
      const protocolErrors: Error[] = [];
      client.onerror = (error) => protocolErrors.push(error);
      await client.listTools();
      return {
        call: async (name, args) => await client.callTool({ name, arguments: args }) as CallToolResult,
        close: async () => {
          await client.close();
          expect(await server.stop()).toBe(0);
        },
        protocolErrors,
      };
    },
  },
];

for (const transport of transports) describe(`over ${transport.name} with the default limits (16 MiB patches)`, () => {
  let s: Caller;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sap-mcp-sizes-"));
    s = await transport.start(dir);
  }, 20_000);
  afterAll(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a 12 MB Add patch is applied; the answer is small; the next call is answered", async () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `+line ${i} ${"abcdefghij".repeat(5)}`);
    const patch = `*** Begin Patch\n*** Add File: big/added.txt\n${lines.join("\n")}\n*** End Patch`;
    expect(patch.length).toBeGreaterThan(12 * MB);
    const result = await s.call("apply_patch", { patch });
    expect(result.isError).toBeFalsy();
    const report = result.structuredContent as ApplyPatchOutput;
    const content = readFileSync(join(dir, "big/added.txt"), "utf8");
    expect(report.files[0]!.new_sha256).toBe(sha256(content));
    expect(size(result)).toBeLessThan(700 * 1024);
    expect((report.files[0] as { diff_truncated?: boolean }).diff_truncated).toBe(true);
    const next = await s.call("list_files", { path: "big" });
    expect(next.isError).toBeFalsy();
    expect(s.protocolErrors).toEqual([]);
  }, 60_000);

  test("a 20 MB file of one line: read_file cuts it to its budget and says how to read on (column)", async () => {
    const line = "0123456789".repeat(2 * MB);
    writeFileSync(join(dir, "one-line.json"), line);
    const first = await s.call("read_file", { path: "one-line.json" });
    expect(first.isError).toBeFalsy();
    const out = first.structuredContent as ReadFileOutput;
    expect(size(first)).toBeLessThan(400 * 1024);
    expect(out).toMatchObject({ start_line: 1, end_line: 1, total_lines: 1, truncated: true, file_sha256: sha256(line) });
    expect(out.line_cut).toEqual({ line: 1, line_chars: 20 * MB, from_column: 1, to_column: 128 * 1024, next_column: 128 * 1024 + 1 });
    expect(out.text).toBe(line.slice(0, 128 * 1024));
    expect((first.content[0] as { text: string }).text).toContain("call read_file with offset 1 and column 131073");
    const second = await s.call("read_file", { path: "one-line.json", offset: 1, column: out.line_cut!.next_column! });
    const next = second.structuredContent as ReadFileOutput;
    expect(next.line_cut).toMatchObject({ from_column: 131073, to_column: 262144, next_column: 262145 });
    expect(next.text).toBe(line.slice(131072, 262144));
    const last = await s.call("read_file", { path: "one-line.json", column: 20 * MB - 9 });
    expect((last.structuredContent as ReadFileOutput)).toMatchObject({ text: "0123456789", line_cut: { next_column: null } });
    const past = await s.call("read_file", { path: "one-line.json", column: 20 * MB + 5 });
    expect(past.isError).toBe(true);
    expect((past.content[0] as { text: string }).text).toContain(`which has ${20 * MB} characters`);
  }, 60_000);

  test("a 13 MB Delete: deleted, the diff bounded in text and structuredContent, the next call answered", async () => {
    const text = Array.from({ length: 260_000 }, (_, i) => `row ${i} ${"x".repeat(40)}`).join("\n") + "\n";
    expect(text.length).toBeGreaterThan(13 * MB);
    writeFileSync(join(dir, "huge.log"), text);
    const result = await s.call("apply_patch", { patch: "*** Begin Patch\n*** Delete File: huge.log\n*** End Patch", expected_sha256: { "huge.log": sha256(text) } });
    expect(result.isError).toBeFalsy();
    expect(existsSync(join(dir, "huge.log"))).toBe(false);
    expect(size(result)).toBeLessThan(700 * 1024);
    const file = (result.structuredContent as ApplyPatchOutput).files[0] as { op: string; diff: string; diff_truncated?: boolean; diff_bytes?: number };
    expect(file).toMatchObject({ op: "delete", diff_truncated: true });
    expect(file.diff_bytes).toBeGreaterThan(13 * MB);
    expect(result.content.map((b) => (b as { text: string }).text).join("\n")).toMatch(/\[diff cut: \d+ of \d+ bytes shown/);
    const next = await s.call("read_file", { path: "big/added.txt", limit: 1 });
    expect(next.isError).toBeFalsy();
  }, 60_000);
});

describe("requests over the limit (a root with maxPatchBytes 1000000: messages up to 7 MiB)", () => {
  const args = () => ["examples/mcp_server.ts", "--root", `site=${dir}?maxPatchBytes=1000000`];

  test("an 8 MB call (SDK key order: id last) gets a JSON-RPC error naming the limit; the next request is answered", async () => {
    const patch = `*** Begin Patch\n*** Add File: x.txt\n+${"y".repeat(8 * MB)}\n*** End Patch`;
    const messages = [
      ...HANDSHAKE,
      { method: "tools/call", params: { name: "apply_patch", arguments: { patch } }, jsonrpc: "2.0", id: 2 },
      { jsonrpc: "2.0", id: 3, method: "tools/list" },
    ];
    const run = await rawRun(process.execPath, args(), messages, 3, "stdin", 30_000);
    const answers = run.stdout.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { id?: number; error?: { code: number; message: string; data?: unknown } });
    const error = answers.find((m) => m.id === 2)!;
    expect(error.error!.code).toBe(-32600);
    expect(error.error!.message).toContain(`this server accepts messages of at most ${6 * MB + 1024 * 1024} bytes (patches up to 1000000 bytes)`);
    expect(error.error!.data).toMatchObject({ limit_bytes: 6 * MB + 1024 * 1024 });
    expect(answers.find((m) => m.id === 3)).toHaveProperty("result");
    expect(run.stderr).toContain("exceeds the limit");
    expect(run.code).toBe(0);
    expect(existsSync(join(dir, "x.txt"))).toBe(false);
  }, 60_000);

  test("through the SDK client: the call rejects with that error, the session goes on", async () => {
    const s = await startStdio(process.execPath, args());
    try {
      const patch = `*** Begin Patch\n*** Add File: x.txt\n+${"y".repeat(8 * MB)}\n*** End Patch`;
      await expect(s.call("apply_patch", { patch })).rejects.toThrow(/Request too large: this tools\/call request is \d+ bytes/);
      // Under the transport limit but over maxPatchBytes: a tool result that says the limit.
      const twoMb = await s.call("apply_patch", { patch: `*** Begin Patch\n*** Add File: x.txt\n+${"y".repeat(2 * MB)}\n*** End Patch` });
      expect(twoMb.isError).toBe(true);
      expect((twoMb.structuredContent as ApplyPatchOutput).errors![0]).toMatchObject({ code: "limit_exceeded", limit: { name: "maxPatchBytes", max: 1000000 } });
      expect((await s.call("list_files", {})).isError).toBeFalsy();
    } finally {
      await s.close();
    }
  }, 60_000);

  test("lines that are not JSON or not JSON-RPC get the standard errors; the next request is answered", async () => {
    const run = await rawRun(process.execPath, args(), [...HANDSHAKE, new RawLine("not json at all {"), { jsonrpc: "2.0", id: 5, nonsense: true }, { jsonrpc: "2.0", id: 6, method: "ping" }], 4);
    const answers = run.stdout.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { id?: number | null; error?: { code: number } });
    expect(answers.filter((m) => m.error).map((m) => [m.id, m.error!.code])).toEqual([[null, -32700], [5, -32600]]);
    expect(answers.find((m) => m.id === 6)).toHaveProperty("result");
  }, 30_000);
});
