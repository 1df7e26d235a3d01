/**
 * FAULT INJECTION helpers for the regression tests: local shells whose
 * tools kill the program at an exact moment.
 *
 * @module
 */
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { tempDir } from "../support/local_trees.ts";

/**
 * FAULT INJECTION: a LocalShell whose PATH starts with a wrapper for
 * `tool` that runs the real one, then SIGKILLs the whole process group
 * (the commit program included) when its arguments match `pattern`
 * (a `case` pattern).
 *
 * @example
 * ```ts
 * const shell = killAfterTool("mkdir", "*.sap-lock-*");
 * ```
 */
export function killAfterTool(tool: string, pattern: string): LocalShell {
  const bin = tempDir("sap-wrap-");
  const real = Bun.which(tool);
  if (real === null) throw new Error(`${tool} not found`);
  const script = [
    "#!/bin/sh",
    `${real} "$@"`,
    "rc=$?",
    `case "$*" in ${pattern}) kill -9 0 ;; esac`,
    "exit $rc",
    "",
  ].join("\n");
  writeFileSync(join(bin, tool), script);
  chmodSync(join(bin, tool), 0o755);
  return new LocalShell({ cwd: tempDir("sap-cwd-"), env: { ...process.env as Record<string, string>, PATH: `${bin}:${process.env.PATH}` } });
}

/**
 * A plain LocalShell with a private working directory.
 *
 * @example
 * ```ts
 * await plainShell().exec("true");
 * ```
 */
export function plainShell(): LocalShell {
  return new LocalShell({ cwd: tempDir("sap-cwd-") });
}
