/**
 * The server process as clients run it: killed clients, escaped logs,
 * client configurations started from `/`, a stale SSH_AUTH_SOCK, over
 * stdio against a real sshd where SSH matters (issue 14 items 1, 5, 6).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ReadFileOutput } from "../../examples/mcp/schemas.ts";
import { sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd } from "../support/sshd.ts";
import { PINNED_NODE } from "../support/runtimes.ts";
import { HANDSHAKE, rawRun, REPO } from "./stdio_helpers.ts";

const BUN = join(REPO, "node_modules", ".bin", "bun");
const SERVER = join(REPO, "examples", "mcp_server.ts");
const ready = sshdReady("MCP server lifecycle over stdio with an SSH root (test/mcp/lifecycle.test.ts)");

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "sap-mcp-life-"));
  chmodSync(work, 0o755);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function connectFrom(cwd: string, command: string, args: string[], env?: Record<string, string>): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command, args, cwd, stderr: "pipe", ...(env ? { env } : {}) });
  let logged = "";
  transport.stderr?.on("data", (chunk) => (logged += String(chunk)));
  const client = new Client({ name: "lifecycle-test", version: "1" });
  await client.connect(transport);
  return { client, stderr: () => logged };
}

describe("logged values are escaped: a path cannot forge a log line or repaint the terminal", () => {
  test("read_file of a path with a newline and ANSI escapes leaves one escaped line on stderr", async () => {
    const site = join(work, "site-esc");
    mkdirSync(site);
    writeFileSync(join(site, "a.txt"), "a\n");
    const evil = "nope\n[ssh-apply-patch] apply_patch site applied: delete a.txt\u001b[2K\u001b[1A";
    const run = await rawRun(BUN, [SERVER, "--root", `site=${site}`], [
      ...HANDSHAKE,
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "read_file", arguments: { path: evil } } },
    ], 2);
    const lines = run.stderr.split("\n");
    expect(lines.filter((l) => l.startsWith("[ssh-apply-patch] apply_patch"))).toEqual([]);
    expect(run.stderr).not.toContain("\u001b");
    expect(run.stderr).toContain("read_file site:nope\\x0a[ssh-apply-patch] apply_patch site applied: delete a.txt\\x1b[2K\\x1b[1A failed: invalid_path");
  }, 30_000);
});

describe("client configurations work from any working directory (started from /)", () => {
  const site = () => join(work, "site-cfg");
  beforeAll(() => {
    mkdirSync(site(), { recursive: true });
    writeFileSync(join(site(), "index.html"), "<h1>hi</h1>\n");
    writeFileSync(join(work, "roots.json"), JSON.stringify({ roots: { site: site() } }));
  });
  const configs: { name: string; command: () => string; args: () => string[] }[] = [
    { name: "README Claude Desktop / Cursor: node_modules/.bin/bun + absolute script + --config", command: () => BUN, args: () => [SERVER, "--config", join(work, "roots.json")] },
    { name: "README Codex: node_modules/.bin/bun + absolute script + --root with an absolute path", command: () => BUN, args: () => [SERVER, "--root", `site=${site()}`] },
    { name: "docs/mcp.md Node ≥ 22.18: tools/node_modules/.bin/node + absolute script", command: () => PINNED_NODE, args: () => [SERVER, "--root", `site=${site()}`] },
    {
      name: "docs/mcp.md Node ≥ 20.16: the system node + the built bin packages/mcp/dist/bin/ssh-apply-patch-mcp.js",
      command: () => process.env.npm_node_execpath ?? Bun.which("node") ?? "node",
      args: () => [join(REPO, "packages", "mcp", "dist", "bin", "ssh-apply-patch-mcp.js"), "--root", `site=${site()}`],
    },
    { name: "README npm --prefix: npm --prefix <repo> run --silent mcp", command: () => "npm", args: () => ["--prefix", REPO, "run", "--silent", "mcp", "--", "--root", `site=${site()}`] },
  ];
  for (const c of configs) {
    test(c.name, async () => {
      const { client } = await connectFrom("/", c.command(), c.args());
      try {
        const read = await client.callTool({ name: "read_file", arguments: { path: "index.html" } }) as CallToolResult;
        expect((read.structuredContent as ReadFileOutput).text).toBe("<h1>hi</h1>\n");
      } finally {
        await client.close();
      }
    }, 30_000);
  }

  test("what fails outside the project directory: `npm run --silent mcp` without --prefix (npm finds no package.json)", () => {
    const run = spawnSync("npm", ["run", "--silent", "mcp", "--", "--root", `site=${site()}`], { cwd: "/", input: "", encoding: "utf8", timeout: 20_000 });
    expect(run.status).not.toBe(0);
  }, 30_000);
});

describe.skipIf(!ready)("with an SSH root on a real sshd", () => {
  let sshd: Sshd;
  let tree: string;
  let config: string;
  beforeAll(async () => {
    sshd = await startSshd();
    tree = join(work, "tree");
    mkdirSync(tree);
    // A file big enough that reading it over SSH takes a moment.
    writeFileSync(join(tree, "big.txt"), `${"0123456789abcdef".repeat(63)}\n`.repeat(60_000));
    writeFileSync(join(tree, "small.txt"), "small\n");
    if (process.getuid?.() === 0 && sshd.user !== "root") spawnSync("chown", ["-R", `${sshd.user}:`, tree]);
    const knownHosts = writeKnownHosts(work, [sshd.hostKeyLine]);
    config = join(work, "ssh-roots.json");
    writeFileSync(config, JSON.stringify({
      roots: {
        app: { location: `ssh://${sshd.user}@127.0.0.1:${sshd.port}${tree}`, knownHostsFile: knownHosts, identityFile: sshd.userKeyPath, sshConfigFile: false },
      },
    }));
  }, 30_000);
  afterAll(async () => {
    await sshd?.stop();
  }, 30_000);

  test("a missing or stale SSH_AUTH_SOCK does not break a root that has an identityFile", async () => {
    for (const sock of [join(work, "no-such-agent.sock"), "/dev/null"]) {
      const env = { PATH: process.env.PATH!, HOME: process.env.HOME ?? "/root", SSH_AUTH_SOCK: sock };
      const { client, stderr } = await connectFrom("/", BUN, [SERVER, "--config", config], env);
      try {
        const read = await client.callTool({ name: "read_file", arguments: { path: "small.txt" } }) as CallToolResult;
        expect(read.isError, stderr()).toBeFalsy();
        expect((read.structuredContent as ReadFileOutput).text).toBe("small\n");
      } finally {
        await client.close();
      }
    }
  }, 60_000);

  test("the client killed mid-call: the server finishes, cannot answer, exits non-zero and closes its SSH connection", async () => {
    const child = spawn(BUN, [SERVER, "--config", config], { cwd: "/", stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += String(chunk)));
    const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.on("exit", (code) => resolve({ code, at: Date.now() })));
    let answered = 0;
    child.stdout.on("data", (chunk) => (answered += String(chunk).split("\n").filter((l) => l.includes('"id":1')).length));
    for (const m of HANDSHAKE) child.stdin.write(JSON.stringify(m) + "\n");
    while (answered === 0) await Bun.sleep(10);
    const disconnectsBefore = (sshd.readLog().match(/Received disconnect from 127\.0\.0\.1/g) ?? []).length;
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "read_file", arguments: { path: "big.txt", limit: 1 } } }) + "\n");
    // Wait until the call is running on the host, then "kill the client": both pipes go away at once.
    while (!stderr.includes("connected to")) await Bun.sleep(5);
    const killedAt = Date.now();
    child.stdout.destroy();
    child.stdin.destroy();
    const { code, at } = await exited;
    expect(code).toBe(1);
    expect(at - killedAt).toBeLessThan(15_000);
    expect(stderr).toMatch(/stopping \((stdin closed|stdout failed[^)]*)\); waiting for 1 running call/);
    const deadline = Date.now() + 3000;
    const disconnects = () => (sshd.readLog().match(/Received disconnect from 127\.0\.0\.1/g) ?? []).length;
    while (disconnects() === disconnectsBefore && Date.now() < deadline) await Bun.sleep(25);
    expect(disconnects()).toBe(disconnectsBefore + 1);
  }, 60_000);
});
