/**
 * The package as others install it (docs/library.md "From Node, Deno or Bun"):
 * - as an npm dependency (a tarball, or `npm install git+https://…`): npm runs
 *   `prepare` (scripts/build.ts) and ships `dist/` — JavaScript plus
 *   declaration files, no TypeScript source — with `exports` for `.`,
 *   `./core` and `./ssh`, `types` first. This suite builds that layout in a
 *   temp project (the package's `files`, dist built by the same script, ssh2
 *   linked from this checkout, so no network) and imports every entry under
 *   Node, Deno and Bun; scripts/consumer_check.sh (run by .ci/run) does the
 *   same from the real `npm pack` tarballs installed from the registry, with
 *   tsc, the browser bundle and the bins;
 * - Deno-style: deno.json names the package and its `exports`, and
 *   `deno publish --dry-run` (JSR's own checks: slow types, type check) passes
 *   without network.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO } from "../mcp/stdio_helpers.ts";
import { PINNED_DENO, PINNED_NODE } from "../support/runtimes.ts";

const BIN = join(REPO, "node_modules", ".bin");
const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
  name: string;
  version: string;
  files: string[];
  exports: Record<string, Record<string, string> | string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
  bin: Record<string, string>;
  engines: Record<string, string>;
  sideEffects: boolean;
  license: string;
};
const mcpPkg = JSON.parse(readFileSync(join(REPO, "packages", "mcp", "package.json"), "utf8")) as typeof pkg;

/** What the consumer program prints: where the import resolved, and a LocalShell apply and an SSH connect through it. */
const CONSUMER = `
import { applyPatch, connectSsh, LocalShell } from "ssh-apply-patch";
import { parsePatch } from "ssh-apply-patch/core";
import { parseSshDestination } from "ssh-apply-patch/ssh";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
const root = mkdtempSync(join(tmpdir(), "sap-consumer-"));
writeFileSync(join(root, "a.txt"), "one\\ntwo\\n");
const report = await applyPatch(new LocalShell(), {
  root,
  patch: "*** Begin Patch\\n*** Update File: a.txt\\n@@\\n one\\n-two\\n+TWO\\n*** End Patch\\n",
});
let ssh;
try {
  await connectSsh({ host: "127.0.0.1", port: 1, sshConfigFile: false, agent: false, readyTimeoutMs: 5000 });
  ssh = "connected?";
} catch (error) {
  ssh = error.failure?.code ?? String(error);
}
console.log(JSON.stringify({
  resolved: import.meta.resolve("ssh-apply-patch"),
  core: import.meta.resolve("ssh-apply-patch/core"),
  parsed: parsePatch("*** Begin Patch\\n*** Delete File: gone.txt\\n*** End Patch").ok,
  host: parseSshDestination("u@h:22")?.host,
  ok: report.ok,
  text: readFileSync(join(root, "a.txt"), "utf8"),
  ssh,
}));
`;

describe("installed as a dependency", () => {
  let work: string;
  let app: string;

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), "sap-package-"));
    app = join(work, "app");
    const installed = join(app, "node_modules", pkg.name);
    mkdirSync(installed, { recursive: true });
    for (const entry of [...pkg.files.filter((f) => f !== "dist/"), "package.json"]) {
      // `dir/*.ext` entries (npm's files globs) copy the matching files of that one directory.
      const glob = /^([^*]+)\/\*(\.\w+)$/.exec(entry);
      const paths = glob ? readdirSync(join(REPO, glob[1]!)).filter((n) => n.endsWith(glob[2]!)).map((n) => `${glob[1]}/${n}`) : [entry];
      for (const path of paths) cpSync(join(REPO, path), join(installed, path), { recursive: true });
    }
    const built = spawnSync(join(BIN, "bun"), ["scripts/build.ts", "--out", installed], { cwd: REPO, encoding: "utf8" });
    if (built.status !== 0) throw new Error(`scripts/build.ts failed: ${built.stderr}`);
    for (const dep of Object.keys(pkg.dependencies)) {
      const link = join(app, "node_modules", dep);
      mkdirSync(join(link, ".."), { recursive: true });
      symlinkSync(join(REPO, "node_modules", dep), link);
    }
    writeFileSync(
      join(app, "package.json"),
      JSON.stringify({ name: "consumer", private: true, type: "module", dependencies: { [pkg.name]: pkg.version } }),
    );
    writeFileSync(join(app, "main.mjs"), CONSUMER);
  }, 120_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  test("package.json: prepare builds dist/ with Bun alone, files ship it, exports give types first and JavaScript to every runtime", () => {
    expect(pkg.scripts.prepare).toBe("bun scripts/build.ts");
    // The README's links into docs/, CHANGELOG.md and SECURITY.md resolve inside the tarball too (as in the JSR package).
    expect(pkg.files).toEqual(["dist/", "README.md", "LICENSE", "CHANGELOG.md", "SECURITY.md", "docs/*.md"]);
    for (const [entry, file] of [[".", "mod"], ["./core", "core"], ["./ssh", "ssh"]] as const) {
      expect([entry, pkg.exports[entry]]).toEqual([entry, { types: `./dist/${file}.d.ts`, default: `./dist/${file}.js` }]);
      expect(Object.keys(pkg.exports[entry]!)[0]).toBe("types"); // conditions match in order
    }
    expect(pkg.bin).toEqual({ "ssh-apply-patch": "dist/bin/ssh-apply-patch.js" });
    expect(pkg.sideEffects).toBe(false);
    expect(pkg.engines.node).toMatch(/^>=\d+\.\d+$/);
    expect(Object.keys(pkg.dependencies)).toEqual(["ssh2"]); // the MCP SDK and zod live in ssh-apply-patch-mcp
    expect(pkg.license).toBe("MIT");
    expect(readFileSync(join(REPO, "LICENSE"), "utf8")).toStartWith("MIT License\n\nCopyright (c) 2026 ssh-apply-patch contributors\n");
  });

  test("packages/mcp: ssh-apply-patch-mcp depends on this version, the SDK and zod (as the repo pins them), with its bin and the same license", () => {
    expect(mcpPkg.name).toBe("ssh-apply-patch-mcp");
    expect(mcpPkg.version).toBe(pkg.version);
    expect(mcpPkg.dependencies).toEqual({
      "@modelcontextprotocol/sdk": pkg.devDependencies["@modelcontextprotocol/sdk"]!,
      "ssh-apply-patch": pkg.version,
      zod: pkg.devDependencies.zod!,
    });
    expect(mcpPkg.bin).toEqual({ "ssh-apply-patch-mcp": "dist/bin/ssh-apply-patch-mcp.js" });
    expect(mcpPkg.engines).toEqual(pkg.engines);
    expect(readFileSync(join(REPO, "packages", "mcp", "LICENSE"), "utf8")).toBe(readFileSync(join(REPO, "LICENSE"), "utf8"));
  });

  test("dist/ holds JavaScript and declarations only (and the Bun bundle's bytecode), declarations that name neither ssh2 nor a node: module", () => {
    const files = (spawnSync("find", ["dist", "-type", "f"], { cwd: join(app, "node_modules", pkg.name), encoding: "utf8" }).stdout as string).trim().split("\n");
    expect(files.filter((f) => !/\.(js|d\.ts)$/.test(f))).toEqual(["dist/bun/ssh-apply-patch.js.jsc"]);
    for (const entry of ["mod", "core", "ssh"]) expect(files).toContain(`dist/${entry}.d.ts`);
    const named = files.filter((f) => f.endsWith(".d.ts")).filter((f) => {
      const text = readFileSync(join(app, "node_modules", pkg.name, f), "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
      return /from\s*"(ssh2|node:[^"]*)"|\bBuffer\b/.test(text);
    });
    expect(named).toEqual([]);
  });

  // Its --ssh path (ssh2 loaded from node_modules) is tested in the checkout: test/cli/bun_bundle.test.ts.
  test("bun: the bundled CLI (dist/bun/ssh-apply-patch.js) runs from node_modules: a local apply", () => {
    const cli = join(app, "node_modules", pkg.name, "dist", "bun", "ssh-apply-patch.js");
    const root = mkdtempSync(join(app, "bundle-root-"));
    writeFileSync(join(root, "f.txt"), "one\ntwo\n");
    const env = { ...process.env, HOME: mkdtempSync(join(app, "bundle-home-")), SSH_AUTH_SOCK: "" };
    const patch = "*** Begin Patch\n*** Update File: f.txt\n@@\n one\n-two\n+TWO\n*** End Patch\n";
    const local = spawnSync(join(BIN, "bun"), [cli, "--root", root], { cwd: app, input: patch, encoding: "utf8", env });
    expect(local.stderr).toBe("");
    expect(local.status).toBe(0);
    expect(readFileSync(join(root, "f.txt"), "utf8")).toBe("one\nTWO\n");
  }, 60_000);

  const runners: [string, string[], RegExp][] = [
    ["node", [PINNED_NODE, "main.mjs"], /\/node_modules\/ssh-apply-patch\/dist\/mod\.js$/],
    ["deno", [PINNED_DENO, "run", "-A", "main.mjs"], /\/node_modules\/ssh-apply-patch\/dist\/mod\.js$/],
    ["bun", [join(BIN, "bun"), "main.mjs"], /\/node_modules\/ssh-apply-patch\/dist\/mod\.js$/],
  ];
  for (const [name, [command, ...args], resolved] of runners) {
    test(`${name}: import { applyPatch, connectSsh } from "ssh-apply-patch" works from node_modules`, () => {
      const result = spawnSync(command!, args, { cwd: app, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
      if (result.status !== 0) throw new Error(`${name} main.mjs exited ${result.status}:\n${result.stderr}`);
      const out = JSON.parse(result.stdout.trim().split("\n").pop()!) as { resolved: string; core: string; ok: boolean; text: string; ssh: string };
      expect(out.resolved).toMatch(resolved);
      expect(out.core).toEndWith("/node_modules/ssh-apply-patch/dist/core.js");
      expect(out).toMatchObject({ ok: true, text: "one\nTWO\n", ssh: "connect_failed", parsed: true, host: "h" });
    }, 60_000);
  }
});

describe("Deno, importing the sources by path", () => {
  test("a Deno project imports mod.ts from a checkout, with ssh2 mapped to npm: in its own deno.json", () => {
    const project = mkdtempSync(join(tmpdir(), "sap-deno-path-"));
    try {
      // nodeModulesDir "manual" + a linked ssh2 keeps the test offline; with "auto" Deno downloads npm:ssh2 itself.
      writeFileSync(join(project, "deno.json"), JSON.stringify({ imports: { ssh2: `npm:ssh2@${pkg.dependencies.ssh2}` }, nodeModulesDir: "manual", lock: false }));
      mkdirSync(join(project, "node_modules"));
      symlinkSync(join(REPO, "node_modules", "ssh2"), join(project, "node_modules", "ssh2"));
      const byPath = CONSUMER.replace('from "ssh-apply-patch"', `from ${JSON.stringify(join(REPO, "mod.ts"))}`)
        .replace('from "ssh-apply-patch/core"', `from ${JSON.stringify(join(REPO, "core.ts"))}`)
        .replace('from "ssh-apply-patch/ssh"', `from ${JSON.stringify(join(REPO, "ssh.ts"))}`)
        .replace('import.meta.resolve("ssh-apply-patch")', '"by path"')
        .replace('import.meta.resolve("ssh-apply-patch/core")', '"core by path"');
      writeFileSync(join(project, "main.ts"), byPath);
      const result = spawnSync(PINNED_DENO, ["run", "-A", "main.ts"], { cwd: project, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
      if (result.status !== 0) throw new Error(`deno run main.ts exited ${result.status}:\n${result.stderr}`);
      expect(JSON.parse(result.stdout.trim().split("\n").pop()!)).toEqual({ resolved: "by path", core: "core by path", parsed: true, host: "h", ok: true, text: "one\nTWO\n", ssh: "connect_failed" });
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("Deno-style publishing (deno.json, JSR)", () => {
  const deno = JSON.parse(readFileSync(join(REPO, "deno.json"), "utf8")) as Record<string, unknown>;

  test("deno.json: a scoped name, the package.json version, exports ./mod.ts, npm's node_modules, no lock file", () => {
    expect(deno.name).toMatch(/^@[a-z0-9-]+\/ssh-apply-patch$/);
    expect(deno.version).toBe(pkg.version);
    expect(deno.exports).toEqual({ ".": "./mod.ts", "./core": "./core.ts", "./ssh": "./ssh.ts" });
    expect(deno.description).toBe((JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { description: string }).description);
    expect(deno.nodeModulesDir).toBe("manual");
    expect(deno.lock).toBe(false);
  });

  test("deno publish --dry-run passes JSR's checks (slow types, type check), offline", () => {
    // Root can cut the network off entirely (a fresh network namespace): the dry run must not need it.
    const offline = process.getuid?.() === 0 ? ["unshare", "-n"] : [];
    const [command, ...args] = [...offline, PINNED_DENO, "publish", "--dry-run", "--allow-dirty"];
    const result = spawnSync(command!, args, { cwd: REPO, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
    if (result.status !== 0) throw new Error(`deno publish --dry-run failed:\n${result.stdout}\n${result.stderr}`);
    expect(result.stdout + result.stderr).toContain("Dry run complete");
  }, 120_000);
});
