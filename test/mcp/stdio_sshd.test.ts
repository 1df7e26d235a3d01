import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ApplyPatchOutput, ReadFileOutput } from "../../examples/mcp/schemas.ts";
import { sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd } from "../support/sshd.ts";
import { sha256 } from "./helpers.ts";
import { startStdio } from "./stdio_helpers.ts";
import type { StdioSession } from "./stdio_helpers.ts";

const ready = sshdReady("MCP server over stdio with an SSH root (test/mcp/stdio_sshd.test.ts)");

const CONF = "server {\r\n    listen 80;\r\n    root /srv/site;\r\n}\r\n";

describe.skipIf(!ready)("the example server over stdio with roots on a real sshd (config file)", () => {
  let sshd: Sshd;
  let work: string;
  let tree: string;
  let session: StdioSession;

  beforeAll(async () => {
    sshd = await startSshd();
    work = mkdtempSync(join(tmpdir(), "sap-mcp-ssh-"));
    tree = join(work, "tree");
    mkdirSync(join(tree, "etc"), { recursive: true });
    mkdirSync(join(tree, "www"));
    writeFileSync(join(tree, "etc", "site.conf"), CONF);
    chmodSync(join(tree, "etc", "site.conf"), 0o640);
    writeFileSync(join(tree, "www", "index.html"), "<h1>Old</h1>\n");
    writeFileSync(join(tree, "etc", "dup.conf"), "allow all;\ndeny none;\nallow all;\n");
    chmodSync(work, 0o755);
    // As root the harness logs in as a non-root user: hand it the tree.
    if (process.getuid?.() === 0 && sshd.user !== "root") {
      const chown = spawnSync("chown", ["-R", `${sshd.user}:`, tree]); // and the user's group
      if (chown.status !== 0) throw new Error(`chown failed: ${String(chown.stderr)}`);
    }
    const knownHosts = writeKnownHosts(work, [sshd.hostKeyLine]);
    const common = { knownHostsFile: knownHosts, identityFile: sshd.userKeyPath, sshConfigFile: false, hostKeyPolicy: "strict" };
    const config = join(work, "roots.json");
    writeFileSync(config, JSON.stringify({
      roots: {
        conf: { location: `ssh://${sshd.user}@127.0.0.1:${sshd.port}${tree}/etc`, matching: "exact", ...common },
        www: { location: `ssh://${sshd.user}@127.0.0.1:${sshd.port}${tree}/www/`, ...common },
      },
    }));
    session = await startStdio(process.execPath, ["examples/mcp_server.ts", "--config", config]);
  }, 30_000);

  afterAll(async () => {
    await session?.close();
    await sshd?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  }, 30_000);

  test("read → patch → read on a CRLF file over SSH: endings and mode kept; both roots share one connection", async () => {
    const before = (await session.call("read_file", { root: "conf", path: "site.conf" })).structuredContent as ReadFileOutput;
    expect(before).toMatchObject({ ok: true, eol: "crlf", total_lines: 4, file_sha256: sha256(CONF), snapshot: "downloaded" });

    const patch = "*** Begin Patch\n*** Update File: site.conf\n@@ server {\n-    listen 80;\n+    listen 8080;\n*** End Patch";
    const applied = await session.call("apply_patch", { root: "conf", patch, expected_sha256: { "site.conf": before.file_sha256 } });
    expect(applied.isError).toBeFalsy();
    const report = applied.structuredContent as ApplyPatchOutput;
    const expected = CONF.replace("listen 80;", "listen 8080;");
    expect(readFileSync(join(tree, "etc", "site.conf"), "utf8")).toBe(expected);
    expect(statSync(join(tree, "etc", "site.conf")).mode & 0o7777).toBe(0o640);
    // read_file filled the connection's cache: the host only proved the hash.
    expect(report.files[0]).toMatchObject({ new_sha256: sha256(expected), metadata_preserved: { mode: true, owner: true }, snapshot: "cached" });

    const after = (await session.call("read_file", { root: "conf", path: "site.conf", offset: 2, limit: 1 })).structuredContent as ReadFileOutput;
    expect(after).toMatchObject({ file_sha256: sha256(expected), text: "    listen 8080;\n", content_sha256: sha256("    listen 8080;\r\n"), snapshot: "cached" });

    const add = await session.call("apply_patch", { root: "www", patch: "*** Begin Patch\n*** Add File: about.html\n+<h1>About</h1>\n*** End Patch" });
    expect(add.isError).toBeFalsy();
    expect(readFileSync(join(tree, "www", "about.html"), "utf8")).toBe("<h1>About</h1>\n");

    const connected = session.stderr().split("\n").filter((line) => line.includes("connected to"));
    expect(connected).toEqual([expect.stringContaining(`${sshd.user}@127.0.0.1:${sshd.port}`)]);
    expect(session.protocolErrors).toEqual([]);
  }, 30_000);

  test("failures over SSH are typed too, all at once: ambiguity, and a whitespace-only difference refused by the exact-matching root", async () => {
    const patch = [
      "*** Begin Patch",
      "*** Update File: dup.conf",
      "@@",
      "-allow all;",
      "+allow local;",
      "*** Update File: site.conf",
      "@@",
      "-    root /srv/site;  ",
      "+    root /srv/www;",
      "*** End Patch",
    ].join("\n");
    const result = await session.call("apply_patch", { root: "conf", patch });
    expect(result.isError).toBe(true);
    const errors = (result.structuredContent as ApplyPatchOutput).errors!;
    expect(errors.map((e) => [e.code, e.path])).toEqual([["ambiguous_hunk", "dup.conf"], ["context_mismatch", "site.conf"]]);
    expect(errors[0]!.candidates!.map((c) => c.line)).toEqual([1, 3]);
    expect(readFileSync(join(tree, "etc", "dup.conf"), "utf8")).toBe("allow all;\ndeny none;\nallow all;\n");
  }, 30_000);

  test("one pooled connection served both roots; closing stdin closes it cleanly (SSH disconnect, not a dropped socket)", async () => {
    const exited = session.stderr();
    await session.close();
    expect(session.stderr().slice(exited.length)).toContain("stopping (stdin closed)");
    const deadline = Date.now() + 3000;
    while (!/Received disconnect from 127\.0\.0\.1/.test(sshd.readLog()) && Date.now() < deadline) await Bun.sleep(25);
    expect(sshd.readLog()).toMatch(/Received disconnect from 127\.0\.0\.1 port \d+:11:/);
    // One TCP connection served every call of both roots.
    expect(sshd.readLog().match(/^Connection from 127\.0\.0\.1/gm)).toHaveLength(1);
  }, 30_000);
});
