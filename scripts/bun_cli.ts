/**
 * The CLI as one bundled file with its bytecode, for Bun (issue 31): `bun
 * dist/bun/ssh-apply-patch.js` starts about 20 ms sooner than `bun
 * examples/apply.ts`, which makes Bun find, read and transpile ~140 modules
 * and compile their top level at every start — a tenth of a local apply's
 * whole process on a large file, measured by bench/peers_process.ts.
 *
 * `Bun.build` with `bytecode: true` (CommonJS: Bun's bytecode cache needs
 * it) writes `ssh-apply-patch.js` and `ssh-apply-patch.js.jsc`. JavaScriptCore
 * checks the cache against its own build and the source, and silently
 * parses the source instead when they differ (another Bun version): the
 * bundle then still runs, only without the head start. Packages (ssh2)
 * stay external: they load, lazily, from `node_modules` as they do for
 * the unbundled CLI, only when `--ssh` or `--hosts` needs them.
 *
 * Used by scripts/build.ts (into `dist/bun/`) and by the whole-process
 * bench, which builds it from the sources it measures.
 *
 * @module
 */
import { join } from "node:path";

/** The bundle's file name. */
export const BUN_CLI_NAME = "ssh-apply-patch.js";

/**
 * Bundle `examples/apply.ts` with its bytecode into `outDir`; returns the
 * bundle's path.
 *
 * @example
 * ```ts
 * const cli = await buildBunCli("/tmp/cli"); // "/tmp/cli/ssh-apply-patch.js" (+ ".jsc")
 * ```
 */
export async function buildBunCli(outDir: string, repo: string = join(import.meta.dir, "..")): Promise<string> {
  const result = await Bun.build({
    entrypoints: [join(repo, "examples", "apply.ts")],
    outdir: outDir,
    naming: BUN_CLI_NAME,
    target: "bun",
    format: "cjs",
    bytecode: true,
    packages: "external",
    banner: "#!/usr/bin/env bun",
  });
  if (!result.success) throw new Error(`bundling the CLI failed: ${result.logs.map(String).join("\n")}`);
  return join(outDir, BUN_CLI_NAME);
}
