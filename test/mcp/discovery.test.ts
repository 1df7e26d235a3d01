/**
 * list_files and search through the SDK client, in-process: results,
 * text format, bounds, refusals, schemas.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { formatLineId } from "../../lib/text/line_id.ts";
import { listFilesOutput, searchOutput } from "../../examples/mcp/schemas_discovery.ts";
import type { ListFilesOutput, SearchOutput } from "../../examples/mcp/schemas_discovery.ts";
import { call, connect, expectValid, localRoots, makeTree, textOf } from "./helpers.ts";
import type { Session } from "./helpers.ts";

let dir: string;
let outside: string;
let session: Session;
beforeAll(async () => {
  outside = makeTree({ "secret.conf": "listen 1;\npassword=hunter2\n" });
  const log = Array.from({ length: 5000 }, (_, i) => (i === 4321 ? "ERROR disk full on /var" : `info line ${i}`)).join("\n") + "\n";
  dir = makeTree({
    "etc/nginx.conf": "server {\n    listen 80;\n}\n",
    "etc/site.conf": "listen 8080;\r\n",
    "var/app.log": log,
    "src/a.py": "def main():\n    pass\n",
    "src/deep/b.py": "x = 1\n",
  });
  symlinkSync(outside, join(dir, "out"));
  writeFileSync(join(dir, "new\nline.txt"), "listen 9;\n");
  session = await connect({ roots: localRoots({ site: dir }) });
});
afterAll(async () => {
  await session.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

describe("list_files", () => {
  test("the root, one level: kinds, sizes and modes in text and structuredContent; the symlink is listed, not followed", async () => {
    const result = await call(session, "list_files", {});
    expect(result.isError).toBeFalsy();
    const out = result.structuredContent as ListFilesOutput;
    expectValid(listFilesOutput, out);
    expect(out.entries.map((e) => `${e.kind} ${e.path}`)).toEqual(["directory etc", "file new\nline.txt", "symlink out", "directory src", "directory var"]);
    const text = textOf(result);
    expect(text).toContain("5 entries in the root of root site:");
    expect(text).toMatch(/^d 0755 etc\/$/m);
    expect(text).toContain("l 0777 out (symlink, not followed)");
    expect(text).toContain('"new\\nline.txt" (unaddressable name)');
    expect(text).not.toContain("secret");
  });

  test("depth and glob; a subdirectory", async () => {
    const result = await call(session, "list_files", { path: "src", depth: 3, glob: "*.py" });
    const out = result.structuredContent as ListFilesOutput;
    expect(out.entries.map((e) => e.path)).toEqual(["src/a.py", "src/deep/b.py"]);
    expect(textOf(result)).toMatch(/^f 0644 21 src\/a\.py$/m);
  });

  test("a path through the symlink, a file, .. and a missing directory are refused as values", async () => {
    for (const [path, code] of [["out", "symlink_rejected"], ["src/a.py", "not_regular_file"], ["../x", "invalid_path"], ["nope", "not_found"]] as const) {
      const result = await call(session, "list_files", { path });
      expect(result.isError).toBe(true);
      const out = result.structuredContent as ListFilesOutput;
      expectValid(listFilesOutput, out);
      expect(out.errors![0]!.code).toBe(code);
      expect(textOf(result)).toStartWith(`${code}: `);
    }
  });
});

describe("search", () => {
  test("matches as path:N:hh text; the symlinked directory is not searched", async () => {
    const result = await call(session, "search", { pattern: "listen [0-9]+" });
    expect(result.isError).toBeFalsy();
    const out = result.structuredContent as SearchOutput;
    expectValid(searchOutput, out);
    expect(out.matches.map((m) => `${m.path}:${m.line}`).sort()).toEqual(["etc/nginx.conf:2", "etc/site.conf:1", "new\nline.txt:1"]);
    const text = textOf(result);
    expect(text).toContain(`etc/nginx.conf:${formatLineId("    listen 80;", 2)}     listen 80;`);
    expect(text).toContain(`etc/site.conf:${formatLineId("listen 8080;", 1)} listen 8080;`);
    expect(text).not.toContain("listen 1;");
  });

  test("one line in a 5000-line log, found in one call; read around it with the offset the text suggests", async () => {
    const found = await call(session, "search", { pattern: "ERROR", fixed_string: true, path: "var" });
    const out = found.structuredContent as SearchOutput;
    expect(out.matches).toEqual([{ path: "var/app.log", line: 4322, id: formatLineId("ERROR disk full on /var", 4322), text: "ERROR disk full on /var", cut: false }]);
    const read = await call(session, "read_file", { path: "var/app.log", offset: 4322 - 10, limit: 30 });
    expect((read.structuredContent as { text: string }).text).toContain("ERROR disk full on /var\n");
  });

  test("max_results bounds the answer and says there is more", async () => {
    const result = await call(session, "search", { pattern: "info line", max_results: 7 });
    const out = result.structuredContent as SearchOutput;
    expect(out.matches).toHaveLength(7);
    expect(out.truncated).toBe(true);
    expect(textOf(result)).toContain("7+ matching lines");
    expect(textOf(result)).toContain("[more lines match: only the first 7 are shown.");
  });

  test("long lines are cut to a few hundred characters, the id still names the whole line", async () => {
    const line = `needle ${"y".repeat(1000)}`;
    mkdirSync(join(dir, "long"));
    writeFileSync(join(dir, "long", "l.txt"), `${line}\n`);
    const result = await call(session, "search", { pattern: "needle", path: "long" });
    const m = (result.structuredContent as SearchOutput).matches[0]!;
    expect(m).toMatchObject({ line: 1, id: formatLineId(line, 1), cut: true });
    expect(m.text).toBe(line.slice(0, 300));
    expect(textOf(result)).toContain("…[line cut]");
  });

  test("bad patterns are values with grep's words", async () => {
    const result = await call(session, "search", { pattern: "([" });
    expect(result.isError).toBe(true);
    const out = result.structuredContent as SearchOutput;
    expectValid(searchOutput, out);
    expect(out.errors![0]!.code).toBe("invalid_argument");
    expect(textOf(result)).toContain("fixed_string: true");
  });
});

describe("messages that pointed to listing now name list_files", () => {
  test("an Update of a missing file and a read_file of one both say: call list_files on the directory", async () => {
    const patched = await call(session, "apply_patch", { patch: "*** Begin Patch\n*** Update File: src/nope.py\n@@\n-a\n+b\n*** End Patch" });
    expect(textOf(patched)).toContain('call list_files {"path": "src"}');
    const read = await call(session, "read_file", { path: "src/nope.py" });
    expect(textOf(read)).toContain('Call list_files {"path": "src"}');
    const dirRead = await call(session, "read_file", { path: "src" });
    expect(textOf(dirRead)).toContain('Call list_files {"path": "src"}');
  });
});
