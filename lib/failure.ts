/**
 * Constructors for typed failures and warnings, and the retryable table.
 *
 * @module
 */
import type { FailureCode, FailureFields, FailureHint, FailureOf, Failures, HintOption, PatchFailure, RequiredFieldsOfEvery, Warning, WarningCode } from "./types.ts";

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
 * What {@linkcode failure} takes for code `C` besides the message: any
 * optional field, and the fields `C` always carries as required (for a
 * union of codes, those of every code in it).
 *
 * @example
 * ```ts
 * const fields: FailureInput<"no_space"> = { path: "a.txt", noSpace: { directory: "/srv", bytesNeeded: 10, bytesFree: 0 } };
 * ```
 */
export type FailureInput<C extends FailureCode> = Partial<Omit<FailureFields, "code" | "message">> & RequiredFieldsOfEvery<C>;

/**
 * The `fields` argument of {@linkcode failure}: optional when code `C` guarantees no field.
 *
 * @example
 * ```ts
 * const none: FailureInputArgs<"timeout"> = []; // failure("timeout", "no answer")
 * const some: FailureInputArgs<"locked"> = [{ operationId: "op1" }];
 * ```
 */
export type FailureInputArgs<C extends FailureCode> = {} extends RequiredFieldsOfEvery<C> ? [fields?: FailureInput<C>] : [fields: FailureInput<C>];

/**
 * Build a failure value, typed by its code: the fields the code always
 * carries (lib/types.ts `FailureCodeFields`) are required arguments, so a
 * `locked` failure cannot be built without its `lock`. `retryable` follows
 * the code unless given; `message` gets the code in front unless it
 * already starts with it.
 *
 * @example
 * ```ts
 * const f = failure("not_found", "src/a.ts does not exist. Use *** Add File: to create it.", { path: "src/a.ts" });
 * f.message; // "not_found: src/a.ts does not exist. …"
 * const p = failure("precondition_failed", "a.py changed", { path: "a.py", expectedSha256: null, actualSha256: null });
 * p.path; // string, not string | undefined
 * ```
 */
export function failure<C extends FailureCode>(code: C, message: string, ...fields: FailureInputArgs<C>): FailureOf<C> {
  // Every message starts with its code, so a model reading only the text
  // (an MCP text block, a CLI line) still sees which failure it is.
  const text = message.startsWith(`${code}: `) ? message : `${code}: ${message}`;
  return { code, message: text, retryable: isRetryable(code), ...fields[0] } as FailureOf<C>;
}

/**
 * Whether a list of failures has at least one (so it can be a failed
 * report's `errors`).
 *
 * @example
 * ```ts
 * if (hasFailures(errors)) return { ok: false, ...base, errors };
 * ```
 */
export function hasFailures(errors: readonly PatchFailure[]): errors is Failures {
  return errors.length > 0;
}

/**
 * `errors` as a failed report's `errors`, for a list that is non-empty by
 * construction (a non-empty list sorted, capped, folded or refined). An
 * empty one is a bug in this library, never something a host or a patch
 * can cause: where those decide, use {@linkcode hasFailures} and say what
 * happened instead.
 *
 * @example
 * ```ts
 * return { ok: false, errors: asFailures(foldFailures(errors)), warnings };
 * ```
 */
export function asFailures(errors: readonly PatchFailure[]): Failures {
  if (!hasFailures(errors)) throw new TypeError("internal error: a failed report without a failure");
  return [...errors] as Failures;
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

// ---------------------------------------------------------------------------
// Hints: next steps as data (SPEC §5.4 round 2)
// ---------------------------------------------------------------------------

/**
 * A hint to look at a file (or some of its lines) again; `says` is in the
 * library's words, e.g. `read lines 3–12 of app.py again`.
 *
 * @example
 * ```ts
 * const h = readHint("app.py", 3, 12);
 * `Next step: ${h.says} and rebuild the chunk.`; // "Next step: read lines 3–12 of app.py again and rebuild the chunk."
 * ```
 */
export function readHint(path: string, startLine?: number, endLine?: number): FailureHint {
  if (startLine === undefined || endLine === undefined) return { kind: "read", path, says: `read ${path} again` };
  const lines = startLine === endLine ? `line ${startLine}` : `lines ${startLine}–${endLine}`;
  return { kind: "read", path, startLine, endLine, says: `read ${lines} of ${path} again` };
}

/**
 * A hint to send a revision precondition: `sha256` itself, or (`null`) the
 * SHA-256 a fresh read of the file gives.
 *
 * @example
 * ```ts
 * shaHint("app.py", null).says; // 'pass the SHA-256 of the version you read as expectedSha256 {"app.py": "<sha256>"}'
 * ```
 */
export function shaHint(path: string, sha256: string | null): FailureHint {
  const key = JSON.stringify(path);
  return {
    kind: "expectedSha256",
    path,
    sha256,
    says: sha256 === null
      ? `pass the SHA-256 of the version you read as expectedSha256 {${key}: "<sha256>"}`
      : `pass expectedSha256 {${key}: "${sha256}"}`,
  };
}

/**
 * A hint naming a caller option and the value that changes the outcome;
 * `says` is the bare setting, for a message to put words around.
 *
 * @example
 * ```ts
 * const h = optionHint("hostKeyPolicy", "accept-new");
 * `connect once with ${h.says}`; // 'connect once with hostKeyPolicy: "accept-new"'
 * ```
 */
export function optionHint(option: HintOption, value?: string | number | boolean): FailureHint {
  return {
    kind: "option",
    option,
    ...(value !== undefined ? { value } : {}),
    says: value === undefined ? `the option ${option}` : `${option}: ${JSON.stringify(value)}`,
  };
}

/**
 * A hint to settle an operation with `reconcile` before anything else.
 *
 * `says` may be a whole sentence that contains the call, so a front end
 * that settles the operation itself can replace the step in full.
 *
 * @example
 * ```ts
 * reconcileHint("op1").says; // "call reconcile with operation id op1"
 * ```
 */
export function reconcileHint(operationId: string, says?: string): FailureHint {
  return { kind: "reconcile", operationId, says: says ?? `call reconcile with operation id ${operationId}` };
}

/**
 * A failure's message for quoting inside another message: it starts with
 * its code exactly once (failure() already puts the code first; this keeps
 * a nested cause from saying `connect_failed: connect_failed: …`).
 *
 * @example
 * ```ts
 * quotedFailure(failure("timeout", "no answer")); // "timeout: no answer"
 * ```
 */
export function quotedFailure(f: Pick<PatchFailure, "code" | "message">): string {
  let message = f.message;
  while (message.startsWith(`${f.code}: ${f.code}: `)) message = message.slice(f.code.length + 2);
  return message.startsWith(`${f.code}: `) ? message : `${f.code}: ${message}`;
}

/**
 * A hint to list a directory (`""`: the root) to find the right name.
 *
 * @example
 * ```ts
 * listHint("src").says; // "list the directory src/"
 * ```
 */
export function listHint(directory: string): FailureHint {
  return { kind: "list", path: directory, says: directory === "" ? "list the root directory" : `list the directory ${directory}/` };
}

/**
 * A hint to send the patch again with a corrected section header: the
 * existing path `suggested` in place of the missing `path` (issue 29.1).
 * `header` is the exact header line to write.
 *
 * @example
 * ```ts
 * const h = pathHint("src/Parse.ts", "src/parse.ts", "Update");
 * h.header; // "*** Update File: src/parse.ts"
 * h.says; // "send the patch again with that header"
 * ```
 */
export function pathHint(path: string, suggested: string, section: "Update" | "Delete" | "Replace"): FailureHint {
  return { kind: "path", path, suggested, header: `*** ${section} File: ${suggested}`, says: "send the patch again with that header" };
}

/**
 * What a front end says for a hint: its own words, or `undefined` to keep
 * the library's (`hint.says`).
  *
  * @example
  * ```ts
  * const cliWords: HintWords = (hint) => hint.kind === "expectedSha256" && hint.sha256 ? `pass --expect ${hint.path}=${hint.sha256}` : undefined;
  * rewordFailure(f, cliWords);
  * ```
 */
export type HintWords = (hint: FailureHint) => string | undefined;

/**
 * A failure or warning with each hint's words replaced by a front end's
 * (`words(hint)`; `undefined` keeps them). Only the span `hint.says` of
 * the message changes; code, fields and hints stay as they are. Returns
 * the same object when nothing changes.
 *
 * @example
 * ```ts
 * const cli = rewordFailure(f, (h) => h.kind === "option" && h.option === "hostKeyPolicy" ? "pass --accept-new-host-key" : undefined);
 * ```
 */
export function rewordFailure<T extends PatchFailure | Warning>(item: T, words: HintWords): T {
  const hints = item.hints;
  if (hints === undefined || hints.length === 0) return item;
  let message = item.message;
  for (const hint of hints) {
    const said = words(hint);
    if (said === undefined || said === hint.says) continue;
    const at = message.indexOf(hint.says);
    if (at < 0) continue;
    message = message.slice(0, at) + said + message.slice(at + hint.says.length);
  }
  return message === item.message ? item : { ...item, message };
}
