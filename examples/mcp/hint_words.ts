/**
 * The MCP server's words for the library's hints (SPEC §5.4 round 2): a
 * failure's next step names this server's tools and arguments (`read_file`
 * with `offset` / `limit`, `expected_sha256` with `file_sha256`), never a
 * library option the model cannot set or a tool the server does not have.
 *
 * Options are the user's, not the model's: a root's `matching`, limits or
 * host-key policy are set in the server's configuration, so the words say
 * so instead of suggesting an argument that does not exist. The exception
 * is `encoding`, which apply_patch and read_file take as an argument.
 *
 * @module
 */
import { rewordFailure } from "../../mod.ts";
import type { FailureHint, HintWords, PatchFailure, Warning } from "../../mod.ts";

/** What the words depend on in one tool result. */
export interface McpWordsContext {
  /** The server ran reconcile for this result (an unknown outcome it settled at once). */
  reconciled?: boolean;
  /** Tools this server has (a hint to list a directory names `list_files` only when it exists). */
  tools?: ReadonlySet<string>;
}

/**
 * The MCP words for hints, for one tool result.
 *
 * @example
 * ```ts
 * const words = mcpWords({ reconciled: true });
 * words({ kind: "read", path: "a.py", startLine: 3, endLine: 12, says: "read lines 3–12 of a.py again" });
 * // 'call read_file {"path": "a.py", "offset": 3, "limit": 10}'
 * ```
 */
export function mcpWords(context: McpWordsContext = {}): HintWords {
  return (hint: FailureHint): string | undefined => {
    switch (hint.kind) {
      case "read": {
        const range = hint.startLine !== undefined && hint.endLine !== undefined
          ? `, "offset": ${hint.startLine}, "limit": ${hint.endLine - hint.startLine + 1}`
          : "";
        return `call read_file {"path": ${JSON.stringify(hint.path)}${range}}`;
      }
      case "expectedSha256":
        return hint.sha256 === null
          ? `send the file_sha256 that read_file returns as expected_sha256 {${JSON.stringify(hint.path)}: "<file_sha256>"}`
          : `send expected_sha256 {${JSON.stringify(hint.path)}: "${hint.sha256}"}`;
      case "option": {
        // The one option a model sends itself, per call (apply_patch and read_file).
        if (hint.option === "encoding") return `the argument "encoding": ${JSON.stringify(hint.value ?? "latin1")}`;
        const setting = hint.value === undefined ? hint.option : `${hint.option}=${String(hint.value)}`;
        return `the root option ${setting} (only the user can set it, in this server's configuration)`;
      }
      case "reconcile":
        return reconcileWords(hint, context);
      case "path":
        return "call apply_patch again with that header (the rest of the patch unchanged)";
      case "list":
        if (!context.tools?.has("list_files")) return undefined;
        return `call list_files {"path": ${JSON.stringify(hint.path === "" ? "." : hint.path)}}`;
    }
  };
}

/**
 * The server has no reconcile tool: it settles unknown outcomes itself. A
 * whole-sentence step (the outcome_unknown one) becomes a pointer to the
 * verdict; a phrase (leftover files after a success) says who can settle it.
 */
function reconcileWords(hint: Extract<FailureHint, { kind: "reconcile" }>, context: McpWordsContext): string {
  const sentence = hint.says.endsWith(".");
  if (context.reconciled) {
    return sentence
      ? "The server has already run reconcile for this operation: act on its verdict above, not on this message."
      : "the server has already run reconcile for it (see its verdict above)";
  }
  return sentence
    ? `This server has no reconcile tool: read_file each file of the patch before anything else, and tell the user the operation id ${hint.operationId}.`
    : `tell the user the operation id ${hint.operationId} (this server has no reconcile tool; the CLI's --reconcile settles it)`;
}

/**
 * Failures in this server's words (messages reworded, hints kept).
 *
 * @example
 * ```ts
 * const errors = mcpFailures(report.errors ?? [], { reconciled: true });
 * ```
 */
export function mcpFailures(errors: readonly PatchFailure[], context: McpWordsContext = {}): PatchFailure[] {
  const words = mcpWords(context);
  return errors.map((e) => rewordFailure(e, words));
}

/**
 * Warnings in this server's words.
 *
 * @example
 * ```ts
 * const warnings = mcpWarnings(report.warnings);
 * ```
 */
export function mcpWarnings(warnings: readonly Warning[], context: McpWordsContext = {}): Warning[] {
  const words = mcpWords(context);
  return warnings.map((w) => rewordFailure(w, words));
}
