import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { lineHash } from "../../lib/text/line_id.ts";
import { EXAMPLE_PATCH } from "../../examples/mcp/descriptions.ts";
import { readFileOutput } from "../../examples/mcp/schemas.ts";
import type { ReadFileOutput } from "../../examples/mcp/schemas.ts";
import { parsePatch } from "../../lib/patch/parse.ts";
import { call, connect, expectValid, localRoots, makeTree, sha256, textOf } from "./helpers.ts";
import type { Session } from "./helpers.ts";

const CRLF_FILE = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\r\n") + "\r\n";

describe("MCP server in-process: tool listing", () => {
  let dir: string;
  let session: Session;
  beforeAll(async () => {
    dir = makeTree({ "a.txt": "a\n" });
    session = await connect({ roots: localRoots({ site: dir, other: dir }) });
  });
  afterAll(async () => {
    await session.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("lists read_file, apply_patch, list_files and search (not the hidden alias) with input and output schemas and annotations", async () => {
    const { tools } = await session.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["apply_patch", "list_files", "read_file", "search"]);
    const read = tools.find((t) => t.name === "read_file")!;
    const apply = tools.find((t) => t.name === "apply_patch")!;
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
      expect(tool.description).toContain("site (local directory), other (local directory)");
    }
    expect(read.inputSchema.required).toEqual(["path"]);
    expect(Object.keys(read.inputSchema.properties ?? {}).sort()).toEqual(["column", "encoding", "limit", "line_ids", "offset", "path", "root"]);
    expect(apply.inputSchema.required).toEqual(["patch"]);
    expect(Object.keys(apply.inputSchema.properties ?? {}).sort()).toEqual(["dry_run", "encoding", "expected_sha256", "patch", "root"]);
    expect(Object.keys(apply.outputSchema?.properties ?? {})).toContain("errors");
    expect(read.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(apply.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    for (const name of ["list_files", "search"]) {
      expect(tools.find((t) => t.name === name)!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    }
  });

  test("the description's example patch is a valid patch with every operation", () => {
    const parsed = parsePatch(EXAMPLE_PATCH);
    if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.message).join("\n"));
    expect(parsed.warnings).toEqual([]);
    expect(parsed.patch.ops.map((op) => op.type + (op.type === "update" && op.moveTo ? "+move" : ""))).toEqual(["add", "update", "update+move", "delete"]);
  });
});

describe("MCP server in-process: read_file", () => {
  let dir: string;
  let session: Session;
  beforeAll(async () => {
    dir = makeTree({
      "crlf.txt": CRLF_FILE,
      "src/app.py": "def main():\n    return 1\n",
      "bin.dat": new Uint8Array([0x61, 0x0a, 0xff, 0xfe, 0x0a]),
      "empty.txt": "",
      "wide.txt": "x".repeat(100) + "\n" + "y".repeat(100) + "\n",
    });
    mkdirSync(join(dir, "adir"));
    symlinkSync(join(dir, "src/app.py"), join(dir, "link.py"));
    session = await connect({ roots: localRoots({ site: dir }), readMaxBytes: 150 });
  });
  afterAll(async () => {
    await session.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function read(args: Record<string, unknown>): Promise<{ out: ReadFileOutput; result: Awaited<ReturnType<typeof call>> }> {
    const result = await call(session, "read_file", args);
    const out = result.structuredContent as ReadFileOutput;
    expectValid(readFileOutput, out);
    return { out, result };
  }

  test("a window: offset/limit, truncated, the window text as its own block, both hashes", async () => {
    const { out, result } = await read({ path: "crlf.txt", offset: 3, limit: 4 });
    expect(result.isError).toBeFalsy();
    expect(out).toMatchObject({ ok: true, root: "site", path: "crlf.txt", start_line: 3, end_line: 6, total_lines: 10, truncated: true, eol: "crlf", bom: false, final_newline: true });
    expect(out.text).toBe("line 3\nline 4\nline 5\nline 6\n");
    expect(textOf(result, 1)).toBe(out.text!);
    expect(out.file_sha256).toBe(sha256(CRLF_FILE));
    // content_sha256: the window's bytes exactly as stored, CRLF endings included.
    expect(out.content_sha256).toBe(sha256("line 3\r\nline 4\r\nline 5\r\nline 6\r\n"));
    const summary = textOf(result);
    expect(summary).toContain(`file_sha256: ${out.file_sha256}`);
    expect(summary).toContain("lines 3-6 of 10");
    expect(summary).toContain("offset 7");
  });

  test("the whole file by default: not truncated, window hash equals file hash", async () => {
    const { out } = await read({ path: "src/app.py" });
    expect(out).toMatchObject({ start_line: 1, end_line: 2, total_lines: 2, truncated: false, eol: "lf" });
    expect(out.content_sha256).toBe(out.file_sha256!);
  });

  test("line_ids prefixes every line with N:hh|", async () => {
    const { out, result } = await read({ path: "src/app.py", line_ids: true });
    expect(out.text).toBe(`1:${lineHash("def main():")}|def main():\n2:${lineHash("    return 1")}|    return 1\n`);
    expect(textOf(result)).toContain("never copy the prefix");
  });

  test("an empty file is an empty window", async () => {
    const { out, result } = await read({ path: "empty.txt" });
    expect(out).toMatchObject({ ok: true, text: "", start_line: 1, end_line: 0, total_lines: 0, truncated: false });
    expect(result.content).toHaveLength(1);
  });

  test("the server's byte bound cuts by whole lines and says how to read on", async () => {
    const { out, result } = await read({ path: "wide.txt" });
    expect(out).toMatchObject({ end_line: 1, total_lines: 2, truncated: true });
    expect(out.text).toBe("x".repeat(100) + "\n");
    expect(textOf(result)).toContain("offset 2");
  });

  const failures: { name: string; args: Record<string, unknown>; code: string; says: RegExp }[] = [
    { name: "a missing file", args: { path: "nope.txt" }, code: "not_found", says: /does not exist in root site.*\*\*\* Add File: nope\.txt/s },
    { name: "a directory", args: { path: "adir" }, code: "not_regular_file", says: /is a directory/ },
    { name: "a symlink", args: { path: "link.py" }, code: "symlink_rejected", says: /symbolic link/ },
    { name: "invalid UTF-8", args: { path: "bin.dat" }, code: "invalid_utf8", says: /not valid UTF-8 .*line 2/ },
    { name: "an offset past the end", args: { path: "crlf.txt", offset: 11 }, code: "invalid_argument", says: /total_lines is 10, so offset must be between 1 and 10/ },
    { name: "a path escaping the root", args: { path: "../etc/passwd" }, code: "invalid_path", says: /\.\./ },
    { name: "an absolute path", args: { path: "/etc/passwd" }, code: "invalid_path", says: /absolute|relative/ },
    { name: "an unknown root", args: { root: "prod", path: "a.txt" }, code: "invalid_argument", says: /no root named "prod".*site/ },
  ];
  for (const f of failures) {
    test(`failure: ${f.name} → ${f.code}, isError, message first, typed structuredContent`, async () => {
      const { out, result } = await read(f.args);
      expect(result.isError).toBe(true);
      expect(out.ok).toBe(false);
      expect(out.errors?.map((e) => e.code)).toEqual([f.code as never]);
      expect(textOf(result)).toMatch(f.says);
      expect(textOf(result).startsWith(`${f.code}:`)).toBe(true);
    });
  }
});
