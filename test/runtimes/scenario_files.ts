/**
 * Scenario trees on real disk, runtime-neutral (only `node:` modules): the
 * runtime matrix materialises a scenario's `input/` + `setup.json` under a
 * fresh temp root and compares whole trees, as test/contract/scenarios.test.ts
 * does under Bun.
 *
 * @module
 */
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import type { Scenario } from "../support/scenarios.ts";

/**
 * Write a scenario's input (modes and symlinks from setup.json) under a new
 * temp directory and return it; the caller removes it.
 *
 * @example
 * ```ts
 * const root = materialise(scenario);
 * ```
 */
export function materialise(s: Scenario): string {
  const root = mkdtempSync(join(tmpdir(), "sap-runtime-scenario-"));
  for (const [path, bytes] of s.input) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), bytes);
    chmodSync(join(root, path), Number.parseInt(s.setup.modes?.[path] ?? "644", 8));
  }
  for (const [link, target] of Object.entries(s.setup.symlinks ?? {})) {
    mkdirSync(dirname(join(root, link)), { recursive: true });
    symlinkSync(target, join(root, link));
  }
  return root;
}

/**
 * Every entry below root: files as mode + base64 bytes, symlinks as their
 * target, directories as `dir` — so a refused patch can be shown to have
 * changed nothing.
 *
 * @example
 * ```ts
 * const before = treeState(root);
 * ```
 */
export function treeState(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      const rel = relative(root, full);
      if (entry.isSymbolicLink()) out[rel] = `link ${readlinkSync(full)}`;
      else if (entry.isDirectory()) {
        out[rel] = "dir";
        walk(full);
      } else out[rel] = `${(lstatSync(full).mode & 0o7777).toString(8)} ${readFileSync(full).toString("base64")}`;
    }
  };
  walk(root);
  return out;
}
