/**
 * The shape of one generated scenario and small text helpers for writing
 * them. Only `_generate.ts` and the `_cases_*.ts` tables use this; the suite
 * reads the committed files.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { PlanOptions, WarningCode } from "../../lib/types.ts";
import type { ExpectedFailure, ScenarioSetup } from "../support/scenarios.ts";

/** Root-relative path → content (a string is written as UTF-8). */
export type Files = Record<string, string | Uint8Array>;

/** One scenario, written to `NNN_name/` by `_generate.ts`. */
export interface ScenarioCase {
  id: number;
  name: string;
  /** One or two lines: the rule under test and its §, plus any choice made where the SPEC is silent. */
  readme: string;
  input?: Files;
  patch: string;
  /** The whole root after the patch (exclusive with `failure`). */
  expected?: Files;
  failure?: ExpectedFailure[];
  options?: PlanOptions;
  warnings?: WarningCode[];
  setup?: ScenarioSetup;
}

/**
 * LF-terminated text from lines (every line, including the last, ends in `\n`).
 *
 * @example
 * ```ts
 * lf("a", "b"); // "a\nb\n"
 * ```
 */
export function lf(...lines: string[]): string {
  return lines.map((line) => `${line}\n`).join("");
}

/**
 * A patch: `*** Begin Patch`, the given lines, `*** End Patch`, LF endings.
 *
 * @example
 * ```ts
 * patch("*** Delete File: a.txt"); // "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\n"
 * ```
 */
export function patch(...lines: string[]): string {
  return lf("*** Begin Patch", ...lines, "*** End Patch");
}

/**
 * Lowercase hex SHA-256 of a string's UTF-8 bytes or of bytes.
 *
 * @example
 * ```ts
 * sha256Of("abc"); // "ba7816bf…"
 * ```
 */
export function sha256Of(content: string | Uint8Array): string {
  return createHash("sha256").update(content).digest("hex");
}
