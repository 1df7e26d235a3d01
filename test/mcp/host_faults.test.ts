/**
 * The read-only tools (read_file, list_files, search) on a host whose file
 * system is full or read-only, through the SDK client (issue 13 item 3):
 * the failures are the library's no_space / read_only_filesystem, shown as
 * MCP failures — the text starts with the code, structuredContent carries
 * `no_space` and validates against the tools' output schemas. FAULT
 * INJECTION: a small tmpfs filled to the last byte, a read-only bind mount
 * (root only).
 */
import { afterAll, describe, expect } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { listFilesOutput, searchOutput } from "../../examples/mcp/schemas_discovery.ts";
import type { ListFilesOutput, SearchOutput } from "../../examples/mcp/schemas_discovery.ts";
import { readFileOutput } from "../../examples/mcp/schemas.ts";
import type { ReadFileOutput } from "../../examples/mcp/schemas.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { readOnlyBind, smallTmpfs, unmountAll } from "../support/fault_mounts.ts";
import { cleanupTemps, rootTest, tempDir } from "../support/local_trees.ts";
import { call, connect, expectValid, localRoots, sourceOf, textOf } from "./helpers.ts";

afterAll(() => {
  unmountAll();
  cleanupTemps();
}, 30_000);

function populate(root: string): void {
  chmodSync(root, 0o755);
  mkdirSync(join(root, "up"));
  writeFileSync(join(root, "up", "a.txt"), "needle\n");
  chmodSync(join(root, "up"), 0o777);
}

describe("MCP read-only tools on a full or read-only host file system", () => {
  rootTest("read_file in a shared directory of a full disk: no_space with the directory and free bytes; list_files still lists", async () => {
    const fs = smallTmpfs(512);
    populate(fs.dir);
    fs.fill(0);
    const session = await connect({ roots: localRoots({ site: `${fs.dir}?sharedDirectories=allow` }) });
    try {
      const read = await call(session, "read_file", { path: "up/a.txt" });
      expect(read.isError).toBe(true);
      const out = read.structuredContent as ReadFileOutput;
      expectValid(readFileOutput, out);
      expect(out.errors![0]!.code).toBe("no_space");
      expect(out.errors![0]!.no_space).toMatchObject({ directory: `${fs.dir}/up`, bytes_needed: null });
      expect(textOf(read)).toStartWith(`no_space: the file system of ${fs.dir}/up on the host is full`);
      expect(textOf(read)).toContain("then send the same request again");
      const list = await call(session, "list_files", { path: "up" });
      expect(list.isError).toBeFalsy();
      expectValid(listFilesOutput, list.structuredContent);
      expect((list.structuredContent as ListFilesOutput).entries.map((e) => e.path)).toEqual(["up/a.txt"]);
    } finally {
      await session.close();
    }
  });

  rootTest("read_file in a shared directory of a read-only mount: read_only_filesystem, not 'ask for write access'", async () => {
    const source = tempDir("sap-mcp-ro-");
    populate(source);
    const ro = readOnlyBind(source);
    const session = await connect({ roots: localRoots({ site: `${ro}?sharedDirectories=allow` }) });
    try {
      const read = await call(session, "read_file", { path: "up/a.txt" });
      const out = read.structuredContent as ReadFileOutput;
      expectValid(readFileOutput, out);
      expect(out.errors![0]!.code).toBe("read_only_filesystem");
      expect(textOf(read)).toStartWith(`read_only_filesystem: ${ro}/up is on a read-only file system`);
      expect(textOf(read)).not.toContain("write access");
    } finally {
      await session.close();
    }
  });

  rootTest("search in a shared directory of a full disk: its file is skipped unpinnable (no_space) and the text says why", async () => {
    const fs = smallTmpfs(512);
    populate(fs.dir);
    fs.fill(0);
    const session = await connect({ roots: localRoots({ site: fs.dir }) });
    try {
      const found = await call(session, "search", { pattern: "needle" });
      expect(found.isError).toBeFalsy();
      const out = found.structuredContent as SearchOutput;
      expectValid(searchOutput, out);
      expect(out.skipped).toMatchObject({ unpinnable: 1, examples: [{ path: "up/a.txt", reason: "unpinnable", cause: "no_space" }] });
      expect(textOf(found)).toContain("Skipped: 1 not read safely in a directory other users can write (the file system there is full) (e.g. up/a.txt).");
    } finally {
      await session.close();
    }
  });

  rootTest("search with a full and a read-only temporary directory on the host: no_space / read_only_filesystem naming it", async () => {
    const root = tempDir("sap-mcp-search-");
    populate(root);
    const fs = smallTmpfs(512);
    fs.fill(0);
    const ro = readOnlyBind(tempDir("sap-mcp-rotmp-"));
    for (const [tmp, code, start] of [
      [fs.dir, "no_space", `no_space: the file system of ${fs.dir} on the host is full`],
      [ro, "read_only_filesystem", `read_only_filesystem: ${ro} is on a read-only file system`],
    ] as const) {
      const shell = new LocalShell({ env: { ...(process.env as Record<string, string>), TMPDIR: tmp } });
      const session = await connect({ roots: localRoots({ site: root }), shells: sourceOf(shell) });
      try {
        const found = await call(session, "search", { pattern: "needle" });
        expect(found.isError).toBe(true);
        const out = found.structuredContent as SearchOutput;
        expectValid(searchOutput, out);
        expect(out.errors![0]!.code).toBe(code);
        expect(textOf(found)).toStartWith(start);
        if (code === "no_space") expect(out.errors![0]!.no_space).toMatchObject({ directory: fs.dir, bytes_needed: null });
      } finally {
        await session.close();
      }
    }
  });
});
