/**
 * The ssh2 package, loaded on first use. Importing it takes ~90 ms, which a
 * process that never opens an SSH connection (a local apply, `--help`, the
 * pure core through mod.ts) should not pay at start-up.
 *
 * @module
 */
import type * as Ssh2 from "ssh2";

/** The ssh2 module's exports (`Client`, `utils`, …). */
export type Ssh2Module = typeof Ssh2;

let loading: Promise<Ssh2Module> | undefined;

/**
 * ssh2, imported once (later calls share the first import).
 *
 * @example
 * ```ts
 * const { Client } = await loadSsh2();
 * const client = new Client();
 * ```
 */
export function loadSsh2(): Promise<Ssh2Module> {
  // A CommonJS package: its exports are the namespace's default.
  loading ??= import("ssh2").then((m) => (m as unknown as { default?: Ssh2Module }).default ?? (m as unknown as Ssh2Module));
  return loading;
}
