/**
 * Run the example programs as real processes (`bun examples/….ts`) with an
 * environment that touches nothing of this machine's SSH setup.
 *
 * @module
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const REPO: string = fileURLToPath(new URL("../../", import.meta.url));

/** What a finished process left. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const temps: string[] = [];

/** A fresh temp dir, removed by {@linkcode removeTemps}. */
export function tempDir(prefix = "sap-cli-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/** Remove every temp dir made by this module. */
export function removeTemps(): void {
  while (temps.length > 0) rmSync(temps.pop()!, { recursive: true, force: true });
}

/** A temp copy of examples/site/ (the copy is the returned dir itself). */
export function siteCopy(): string {
  const root = tempDir("sap-cli-site-");
  cpSync(join(REPO, "examples/site"), root, { recursive: true });
  return root;
}

/** Every file's bytes under `root`, by relative path (to prove "nothing changed"). */
export function treeBytes(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const path of readdirSync(root, { recursive: true, encoding: "utf8" }).sort()) {
    try {
      out[path] = readFileSync(join(root, path)).toString("base64");
    } catch {
      out[path] = "(directory)";
    }
  }
  return out;
}

/**
 * Run `bun <script> ...args` from the repository root with `stdin`. HOME is
 * a fresh empty dir and SSH_AUTH_SOCK is cleared, so no ~/.ssh/config,
 * known_hosts, key or agent of the machine can take part; Bun's transpiler
 * cache is off (it would fill each fresh HOME).
 */
export async function runScript(script: string, args: string[], stdin = "", env: Record<string, string> = {}): Promise<Run> {
  const home = tempDir("sap-cli-home-");
  const proc = Bun.spawn([process.execPath, script, ...args], {
    cwd: REPO,
    stdin: new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
    // No transpiler cache: in a fresh HOME each run wrote ~80 cache files
    // (1.6 MB), and removing them all after the file took over bun's 5 s
    // hook timeout under load.
    env: { ...process.env, HOME: home, SSH_AUTH_SOCK: "", BUN_RUNTIME_TRANSPILER_CACHE_PATH: "0", ...env },
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/**
 * `bun examples/apply.ts ...args` with the patch on stdin — or, with
 * `SAP_TEST_CLI` set to the bundled CLI (`dist/bun/ssh-apply-patch.js`,
 * scripts/bun_cli.ts), that bundle: `SAP_TEST_CLI=dist/bun/ssh-apply-patch.js
 * npx bun test test/cli/` runs every CLI test against what users run.
 */
export function runApply(args: string[], patch = "", env: Record<string, string> = {}): Promise<Run> {
  return runScript(process.env.SAP_TEST_CLI || "examples/apply.ts", args, patch, env);
}
