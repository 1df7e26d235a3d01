/**
 * The bundled CLI for Bun (scripts/bun_cli.ts → dist/bun/ssh-apply-patch.js
 * with its bytecode) behaves exactly like `bun examples/apply.ts`: the same
 * exit code, stdout, stderr and files, case by case, locally and over a
 * real sshd (ssh2 stays an external package, loaded only for --ssh). The
 * whole CLI suite runs against the bundle with
 * `SAP_TEST_CLI=dist/bun/ssh-apply-patch.js npx bun test test/cli/`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { buildBunCli } from "../../scripts/bun_cli.ts";
import { sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd } from "../support/sshd.ts";
import { REPO, removeTemps, runScript, siteCopy, tempDir, treeBytes } from "./run_cli.ts";

// Under the repository so the bundle finds ssh2 in its node_modules, as it does from dist/bun/.
const out = mkdtempSync(join(REPO, "node_modules", ".sap-bun-cli-test-"));
let bundle = "";
beforeAll(async () => {
  bundle = await buildBunCli(out, REPO);
}, 30_000);
afterAll(() => {
  rmSync(out, { recursive: true, force: true });
  removeTemps();
}, 30_000);

const CONF_PATCH = [
  "*** Begin Patch",
  "*** Update File: site.conf",
  "@@ server {",
  "     listen 80;",
  "-    server_name harbour.example;",
  "+    server_name harbour.example www.harbour.example;",
  "*** End Patch",
].join("\n");
const FAILING_PATCH = CONF_PATCH.replace("listen 80;", "listen 8080;");

/**
 * Run one CLI on a fresh site copy (readable by others: the sshd's login
 * user reads it in a dry run). In what it printed, the copy's path becomes
 * <root> and operation ids <id>; the bundle is named like the installed bin,
 * so it calls itself ssh-apply-patch where the source says bun
 * examples/apply.ts (examples/cli/args.ts PROGRAM).
 */
async function run(cli: string, args: (root: string) => string[], stdin: string) {
  const root = siteCopy();
  chmodSync(root, 0o755);
  const r = await runScript(cli, args(root), stdin);
  const clean = (s: string) => s.split(root).join("<root>").replace(/\b[0-9a-f]{16}\b/g, "<id>").replaceAll("bun examples/apply.ts", "ssh-apply-patch");
  return { code: r.code, stdout: clean(r.stdout), stderr: clean(r.stderr), files: treeBytes(root) };
}

describe("the bundled CLI", () => {
  test("is one file with its bytecode", () => {
    expect(existsSync(bundle)).toBe(true);
    expect(existsSync(`${bundle}.jsc`)).toBe(true);
    expect(readFileSync(bundle, "utf8")).toStartWith("#!/usr/bin/env bun\n// @bun @bytecode @bun-cjs");
  });

  test.each([
    ["a local apply", (r: string) => ["--root", r], CONF_PATCH, 0],
    ["a local apply, --json", (r: string) => ["--root", r, "--json"], CONF_PATCH, 0],
    ["a dry run", (r: string) => ["--root", r, "--dry-run"], CONF_PATCH, 0],
    ["a chunk that does not match (exit 1, nothing changed)", (r: string) => ["--root", r], FAILING_PATCH, 1],
    ["a usage error (exit 2)", (r: string) => ["--root", r, "--sudo"], CONF_PATCH, 2],
    ["--help", () => ["--help"], "", 0],
  ] as const)("%s: the same as bun examples/apply.ts", async (_name, args, stdin, code) => {
    const unbundled = await run("examples/apply.ts", args, stdin);
    const bundled = await run(bundle, args, stdin);
    expect(unbundled.code).toBe(code);
    expect(bundled).toEqual(unbundled);
  }, 20_000);
});

const sshReady = sshdReady("bundled CLI over ssh (test/cli/bun_bundle.test.ts)");

describe.skipIf(!sshReady)("the bundled CLI over a real sshd", () => {
  let sshd: Sshd;
  let knownHosts: string;
  beforeAll(async () => {
    sshd = await startSshd();
    knownHosts = writeKnownHosts(tempDir(), [sshd.hostKeyLine]);
  }, 30_000);
  afterAll(async () => {
    await sshd?.stop();
  }, 30_000);

  test("a --dry-run over ssh (ssh2 loaded from node_modules): the same as bun examples/apply.ts", async () => {
    // A dry run reads and plans but changes nothing, so the login user needs only read access to the copy.
    const args = (r: string) => ["--root", r, "--dry-run", "--ssh", `${sshd.user}@127.0.0.1:${sshd.port}`, "--identity", sshd.userKeyPath, "--known-hosts", knownHosts];
    const unbundled = await run("examples/apply.ts", args, CONF_PATCH);
    const bundled = await run(bundle, args, CONF_PATCH);
    expect(unbundled.code).toBe(0);
    expect(bundled).toEqual(unbundled);
  }, 30_000);
});
