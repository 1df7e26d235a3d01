/**
 * Running test/scale/huge_inputs.ts in a child process under a given
 * runtime (a fresh heap per run: a million-line shape must not share one
 * with the rest of the suite), and reading its JSON lines back.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { PINNED_NODE } from "../support/runtimes.ts";
import type { HugeCheckLine, HugeSizes } from "./huge_inputs.ts";

const REPO = join(import.meta.dirname, "..", "..");

/** The pinned Node 26 (tools/package.json, see test/support/runtimes.ts). */
export const NODE_BINARY: string = PINNED_NODE;

/** The summary line of a run. */
export interface HugeSummary {
  passed: number;
  failed: number;
  runtime: string;
  maxRssKiB: number;
  argumentLimit: number;
  sizes: HugeSizes;
}

/** What one child run printed. */
export interface HugeRun {
  checks: HugeCheckLine[];
  done: HugeSummary | null;
  stderr: string;
  wallMs: number;
}

/**
 * Run the huge-input checks under `binary` with `sizes`.
 *
 * @example
 * ```ts
 * const run = runHugeInputsUnder(NODE_BINARY, { lines: 200_000, chunks: 130_000, files: 130_000, seed: 28 });
 * run.done?.failed; // 0
 * ```
 */
export function runHugeInputsUnder(binary: string, sizes: HugeSizes, timeoutMs = 420_000): HugeRun {
  const started = performance.now();
  const args = ["test/scale/huge_inputs.ts", `--lines=${sizes.lines}`, `--chunks=${sizes.chunks}`, `--files=${sizes.files}`, `--seed=${sizes.seed}`];
  const out = spawnSync(binary, args, { cwd: REPO, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs });
  const lines = (out.stdout ?? "").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as HugeCheckLine & { done?: boolean });
  const done = lines.find((l) => l.done === true) as unknown as HugeSummary | undefined;
  return {
    checks: lines.filter((l) => l.done !== true),
    done: done ?? null,
    stderr: (out.stderr ?? "") + (out.error ? String(out.error) : ""),
    wallMs: performance.now() - started,
  };
}
