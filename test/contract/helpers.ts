/**
 * Small helpers shared by the contract suite (test/contract/).
 *
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { shQuote } from "../../lib/remote/shell.ts";

/** A file below root as UTF-8 text. */
export function read(root: string, path: string): string {
  return readFileSync(join(root, path), "utf8");
}

/** A path below root as one quoted sh word (for hook bodies). */
export function q(root: string, path: string): string {
  return shQuote(join(root, path));
}

/**
 * A hook body (see HookedShell) that runs `code` at hook `name` with
 * argument `arg` (`""` for hooks without one).
 *
 * @example
 * ```ts
 * new HookedShell(shell, at("after_finalize", "0", "kill -9 $$"));
 * ```
 */
export function at(name: string, arg: string, code: string): string {
  return `case "$1:$2" in ${shQuote(`${name}:${arg}`)}) ${code} ;; esac`;
}

/**
 * Hook code that signals the test (creates `reached`) and then waits until
 * the test creates `release` (at most `maxSeconds`, so a failed test leaves
 * no program behind for long).
 */
export function pauseUntil(reached: string, release: string, maxSeconds = 15): string {
  return `: > ${shQuote(reached)}; sap_w=0; while [ ! -e ${shQuote(release)} ] && [ $sap_w -lt ${maxSeconds * 20} ]; do sleep 0.05; sap_w=$((sap_w + 1)); done`;
}

/** Wait until `path` exists (polling), or throw after `timeoutMs`. */
export async function waitForFile(path: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${path}`);
    await Bun.sleep(10);
  }
}
