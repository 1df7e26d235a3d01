/**
 * Constructors for typed failures and warnings, and the retryable table.
 *
 * @module
 */
import type { FailureCode, PatchFailure, Warning, WarningCode } from "./types.ts";

/**
 * Codes for which sending the same request again, unchanged, may succeed:
 * the file moved under us, a lock was held, or the transport failed before
 * anything started. Everything else needs a different request (a fixed patch,
 * a fresh read, a different path).
 */
const RETRYABLE: ReadonlySet<FailureCode> = new Set<FailureCode>([
  "conflict",
  "locked",
  "timeout",
  "connect_failed",
]);

/**
 * Whether a failure code is retryable unchanged.
 *
 * @example
 * ```ts
 * isRetryable("locked"); // true
 * isRetryable("context_mismatch"); // false
 * ```
 */
export function isRetryable(code: FailureCode): boolean {
  return RETRYABLE.has(code);
}

/**
 * Build a failure value; `retryable` follows the code unless given.
 *
 * @example
 * ```ts
 * const f = failure("not_found", "src/a.ts does not exist. Use *** Add File: to create it.", { path: "src/a.ts" });
 * f.message; // "not_found: src/a.ts does not exist. …"
 * ```
 */
export function failure(
  code: FailureCode,
  message: string,
  fields: Omit<Partial<PatchFailure>, "code" | "message"> = {},
): PatchFailure {
  // Every message starts with its code, so a model reading only the text
  // (an MCP text block, a CLI line) still sees which failure it is.
  const text = message.startsWith(`${code}: `) ? message : `${code}: ${message}`;
  return { code, message: text, retryable: isRetryable(code), ...fields };
}

/**
 * Build a warning value.
 *
 * @example
 * ```ts
 * const w = warning("fuzzy_match", "chunk 2 matched ignoring trailing whitespace", { path: "a.py", hunk: 2 });
 * ```
 */
export function warning(
  code: WarningCode,
  message: string,
  fields: Omit<Partial<Warning>, "code" | "message"> = {},
): Warning {
  return { code, message, ...fields };
}
