/**
 * Strict request and options objects: a key the function does not read is
 * a typed `invalid_request` failure, never silently ignored. A misspelt
 * `dryrun: true` or `expected_sha256: {...}` would otherwise run the real,
 * unguarded change — the opposite of what the caller asked for.
 *
 * Each function lists the keys it reads next to its options type; the
 * list is checked against the type at compile time (`NamesEveryKey`), so a
 * new option cannot be forgotten here.
 *
 * @module
 */
import { failure } from "../failure.ts";
import { unknownNames, unknownNamesText } from "../text/closest_name.ts";
import type { PatchFailure } from "../types.ts";

/**
 * `true` when the names `K` cover every key of `T`; assert it with a
 * `const x: NamesEveryKey<Options, (typeof KEYS)[number]> = true`, which
 * fails the type check when an option is missing from the list.
 */
export type NamesEveryKey<T, K extends PropertyKey> = [Exclude<keyof T, K>] extends [never] ? true : false;

/**
 * The `invalid_request` failure for the own keys of `value` that are not
 * in `known`, or null when there are none. `what` names the object
 * ("applyPatch request"), `nothing` says what did not happen ("nothing was
 * applied").
 *
 * @example
 * ```ts
 * const bad = unknownKeysFailure("applyPatch request", { root, patch, dryrun: true }, ["root", "patch", "dryRun"], "nothing was applied");
 * bad?.message; // "invalid_request: unknown applyPatch request field `dryrun`: did you mean `dryRun`? Nothing was applied: …"
 * ```
 */
export function unknownKeysFailure(what: string, value: unknown, known: readonly string[], nothing: string): PatchFailure | null {
  if (value === null || typeof value !== "object") return null;
  // Inherited enumerable keys too (`Object.create({ dryrun: true })`): they are as misspelt as own ones.
  const keys: string[] = [];
  for (const key in value) keys.push(key);
  const found = unknownNames(keys, known);
  if (found.length === 0) return null;
  const text = unknownNamesText(found, `${what} field`, known);
  return failure(
    "invalid_request",
    `${text} ${nothing.charAt(0).toUpperCase()}${nothing.slice(1)}: no field is ever ignored, so a misspelt option cannot quietly turn a check off. Fix the name and call again.`,
    { unknown: found },
  );
}
