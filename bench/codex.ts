/**
 * Codex's native `apply_patch`, the whole-process peer SPEC §11.1 names:
 * the npm package `@openai/codex` (a pinned version), installed at bench
 * time into a bench-local cache directory with the ordinary npm client from
 * the npm registry — never a dependency of the project or its tests. The
 * package ships one native binary that runs `apply_patch` when invoked under
 * that name, reading the patch from stdin (its arg0 dispatch), so the bench
 * runs it through a symlink named `apply_patch`.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where bench tools (Codex) are cached: beside the fixture caches, kept across generator versions. */
export function toolsCacheDir(): string {
  return join(tmpdir(), "ssh-apply-patch-bench", "tools");
}

/** The Codex version measured (bump deliberately; docs/performance.md names it). */
export const CODEX_VERSION = "0.171.0";

/** Where Codex is, or why not. */
export type CodexInstall = { ok: true; applyPatch: string; version: string } | { ok: false; reason: string };

/** The native binary inside an installed `@openai/codex`, if the platform package brought one. */
function nativeBinary(prefix: string): string | undefined {
  const vendor = join(prefix, "node_modules", "@openai");
  if (!existsSync(vendor)) return undefined;
  for (const pkg of readdirSync(vendor)) {
    if (!pkg.startsWith("codex-")) continue;
    const triples = join(vendor, pkg, "vendor");
    if (!existsSync(triples)) continue;
    for (const triple of readdirSync(triples)) {
      const bin = join(triples, triple, "bin", "codex");
      if (existsSync(bin)) return bin;
    }
  }
  return undefined;
}

/**
 * Install (once; later runs reuse the cache) `@openai/codex@CODEX_VERSION`
 * under `cacheDir` and return an `apply_patch` path for it.
 *
 * @example
 * ```ts
 * const codex = ensureCodex(defaultCacheDir());
 * if (codex.ok) spawnSync(codex.applyPatch, [], { input: patchText, cwd: dir });
 * ```
 */
export function ensureCodex(cacheDir: string): CodexInstall {
  const prefix = join(cacheDir, `codex-${CODEX_VERSION}`);
  const link = join(prefix, "apply_patch");
  if (existsSync(link)) return { ok: true, applyPatch: link, version: CODEX_VERSION };
  mkdirSync(prefix, { recursive: true });
  if (nativeBinary(prefix) === undefined) {
    console.error(`installing @openai/codex@${CODEX_VERSION} into ${prefix} (npm registry, bench only) …`);
    const npm = spawnSync("npm", ["install", "--prefix", prefix, "--no-audit", "--no-fund", "--no-save", "--ignore-scripts", `@openai/codex@${CODEX_VERSION}`], {
      stdio: ["ignore", "inherit", "inherit"],
      timeout: 600_000,
    });
    if (npm.status !== 0) return { ok: false, reason: `npm install @openai/codex@${CODEX_VERSION} failed (exit ${npm.status ?? npm.signal})` };
  }
  const binary = nativeBinary(prefix);
  if (binary === undefined) return { ok: false, reason: `@openai/codex@${CODEX_VERSION} brought no native binary for ${process.platform}-${process.arch}` };
  symlinkSync(binary, link);
  return { ok: true, applyPatch: link, version: CODEX_VERSION };
}
