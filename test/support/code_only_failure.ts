/**
 * A failure of any code that carries only `code`, `message` and
 * `retryable`: for tables that exercise codes (exit codes, "may have run"),
 * not the fields a code guarantees. The library builds its failures with
 * `failure()`, which requires those fields; this helper deliberately does
 * not, so it stays in the tests.
 */
import { isRetryable } from "../../mod.ts";
import type { FailureCode, PatchFailure } from "../../mod.ts";

/**
 * A code-only failure.
 *
 * @example
 * ```ts
 * codeOnlyFailure("host_key_unknown").code; // "host_key_unknown", no fingerprint
 * ```
 */
export function codeOnlyFailure(code: FailureCode, message: string = "m"): PatchFailure {
  return { code, message: `${code}: ${message}`, retryable: isRetryable(code) } as PatchFailure;
}
