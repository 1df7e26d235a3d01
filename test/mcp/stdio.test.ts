import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ApplyPatchOutput, ReadFileOutput } from "../../examples/mcp/schemas.ts";
import { sha256 } from "./helpers.ts";
import { HANDSHAKE, rawRun, REPO, startStdio } from "./stdio_helpers.ts";
import type { StdioSession } from "./stdio_helpers.ts";

/** The demo site's menu.js renders two lists with the same loop body: an anchor picks the second. */
const PATCH = `*** Begin Patch
*** Update File: assets/menu.js
@@ function renderSpecials(list) {
-    ul.appendChild(li);
+    ul.append(li);
*** End Patch`;

let site: string;
beforeAll(() => {
  site = mkdtempSync(join(tmpdir(), "sap-mcp-site-"));
  cpSync(join(REPO, "examples", "site"), site, { recursive: true });
});
afterAll(() => rmSync(site, { recursive: true, force: true }));

describe("the example server over stdio, spawned as `bun examples/mcp_server.ts --root site=<dir>`", () => {
  let session: StdioSession;
  beforeAll(async () => {
    session = await startStdio(process.execPath, ["examples/mcp_server.ts", "--root", `site=${site}`]);
  }, 30_000);
  afterAll(async () => {
    await session?.close();
  }, 30_000);

  test("read → patch (expected_sha256 from the read) → read", async () => {
    const before = (await session.call("read_file", { path: "assets/menu.js" })).structuredContent as ReadFileOutput;
    expect(before.ok).toBe(true);
    expect(before.file_sha256).toBe(sha256(readFileSync(join(site, "assets/menu.js"))));

    const applied = await session.call("apply_patch", { patch: PATCH, expected_sha256: { "assets/menu.js": before.file_sha256 } });
    expect(applied.isError).toBeFalsy();
    const report = applied.structuredContent as ApplyPatchOutput;
    const onDisk = readFileSync(join(site, "assets/menu.js"), "utf8");
    expect(report.files[0]!.new_sha256).toBe(sha256(onDisk));
    // Only the second loop changed.
    expect(onDisk.match(/ul\.appendChild\(li\);/g)).toHaveLength(1);
    expect(onDisk.match(/ul\.append\(li\);/g)).toHaveLength(1);

    const after = (await session.call("read_file", { path: "assets/menu.js", line_ids: true })).structuredContent as ReadFileOutput;
    expect(after.file_sha256).toBe(report.files[0]!.new_sha256!);
    expect(after.text).toContain("|    ul.append(li);\n");

    const again = await session.call("apply_patch", { patch: PATCH, expected_sha256: { "assets/menu.js": before.file_sha256 } });
    expect(again.isError).toBe(true);
    expect((again.structuredContent as ApplyPatchOutput).errors![0]!.code).toBe("precondition_failed");
    expect(session.protocolErrors).toEqual([]);
    expect(session.stderr()).toContain("ready; roots: site=");
  }, 30_000);
});

describe("stdout carries nothing but protocol", () => {
  test("every stdout line is a JSON-RPC message; logs go to stderr; closing stdin stops the server cleanly", async () => {
    const messages = [
      ...HANDSHAKE,
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "read_file", arguments: { path: "index.html", limit: 3 } } },
      { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "apply_patch", arguments: { patch: "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch" } } },
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "apply-patch", arguments: { patch: PATCH, dry_run: true } } },
    ];
    const run = await rawRun(process.execPath, ["examples/mcp_server.ts", "--root", `site=${site}`], messages, 5);
    const lines = run.stdout.split("\n").filter((line) => line !== "");
    const parsed = lines.map((line) => JSON.parse(line) as { jsonrpc: string; id?: number; result?: { isError?: boolean; tools?: unknown[] } });
    for (const message of parsed) expect(message.jsonrpc).toBe("2.0");
    expect(parsed.map((m) => m.id).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(parsed.find((m) => m.id === 2)!.result!.tools).toHaveLength(4);
    expect(parsed.find((m) => m.id === 3)!.result!.isError).toBeUndefined();
    expect(parsed.find((m) => m.id === 4)!.result!.isError).toBe(true);
    expect(run.stdout.endsWith("\n")).toBe(true);
    expect(run.stderr).toContain("[ssh-apply-patch] ready");
    expect(run.stderr).toContain("stopping (stdin closed)");
    expect(run.code).toBe(0);
  }, 30_000);

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    test(`${signal} stops the server cleanly (exit 0)`, async () => {
      const run = await rawRun(process.execPath, ["examples/mcp_server.ts", "--root", `site=${site}`], HANDSHAKE, 1, signal);
      expect(run.stderr).toContain(`stopping (${signal})`);
      expect(run.code).toBe(0);
    }, 30_000);
  }

  test("a configuration error goes to stderr with exit code 2 and nothing on stdout", async () => {
    const run = await rawRun(process.execPath, ["examples/mcp_server.ts", "--root", "site=./no/such/dir"], [], 0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("the local directory");
    expect(run.code).toBe(2);
  }, 30_000);
});

describe("`npm run mcp -- --root site=./examples/site`", () => {
  test("starts and answers tools/list and a read over stdio (exactly the documented command)", async () => {
    const session = await startStdio("npm", ["run", "mcp", "--", "--root", "site=./examples/site"]);
    try {
      const { tools } = await session.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["apply_patch", "list_files", "read_file", "search"]);
      const read = await session.call("read_file", { path: "index.html", limit: 1 });
      expect((read.structuredContent as ReadFileOutput).text).toBe("<!doctype html>\n");
    } finally {
      await session.close();
    }
  }, 30_000);

  test("`npm run --silent mcp` (the form for client configs: plain npm run prints a banner on stdout) keeps stdout pure protocol", async () => {
    const messages = [...HANDSHAKE, { jsonrpc: "2.0", id: 2, method: "tools/list" }];
    const run = await rawRun("npm", ["run", "--silent", "mcp", "--", "--root", "site=./examples/site"], messages, 2);
    const lines = run.stdout.split("\n").filter((line) => line !== "");
    // The two answers, and perhaps already the server's log notification of the connection.
    const messages2 = lines.map((line) => JSON.parse(line) as { id?: number; method?: string });
    expect(messages2.filter((m) => m.id !== undefined).map((m) => m.id)).toEqual([1, 2]);
    for (const m of messages2) if (m.id === undefined) expect(m.method).toBe("notifications/message");
    for (const line of lines) expect(JSON.parse(line).jsonrpc).toBe("2.0");
  }, 30_000);
});
