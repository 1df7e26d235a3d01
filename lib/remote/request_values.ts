/**
 * The values of a request object, checked by type before anything runs —
 * the companion of request_keys.ts (a known key with a value of the wrong
 * type is as dangerous as a misspelt key). Measured before this check, as
 * a JavaScript caller (no compiler to catch it) would write them:
 * `dryRun: "true"` and `dryRun: 1` WROTE the file (only `=== true` was a
 * dry run), `expectedSha256: new Map([[path, sha]])` (or a number) dropped
 * the precondition and wrote the file, `limits: new Map(…)` was ignored,
 * and `signal: {}` started a program that was then never stopped (the
 * caller hung). Each is now a typed `invalid_request` failure naming the
 * field, what it must be and what it is, before anything is read or
 * written.
 *
 * @module
 */
import { failure } from "../failure.ts";
import type { PatchFailure } from "../types.ts";

/** What a field's value must be. */
export type ValueRule =
  | "boolean"
  | "string"
  | "string-list"
  | "string-map"
  | "count-map"
  | "count"
  | "positive"
  | "function"
  | "signal"
  | "operation-id"
  | { oneOf: readonly (string | boolean)[] }
  | { has: readonly string[]; what: string };


function isMap(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === "object") {
    const name = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor?.name;
    return name && name !== "Object" ? `a ${name}` : "an object";
  }
  return `${typeof value} ${String(value).slice(0, 40)}`;
}

/** What `rule` asks for, in words; null when `value` satisfies it. */
function problem(rule: ValueRule, value: unknown): string | null {
  const count = (v: unknown): boolean => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
  switch (rule) {
    case "boolean":
      return typeof value === "boolean" ? null : "true or false";
    case "string":
      return typeof value === "string" ? null : "a string";
    case "string-list":
      return Array.isArray(value) && value.every((v) => typeof v === "string") ? null : "an array of strings";
    case "string-map":
      return isMap(value) && Object.values(value).every((v) => typeof v === "string") ? null : "a plain object of path → SHA-256 strings, e.g. {\"app.conf\": \"<sha256>\"}";
    case "count-map":
      return isMap(value) && Object.values(value).every(count) ? null : "a plain object of limit name → whole number ≥ 0, e.g. {\"maxFiles\": 20}";
    case "count":
      return count(value) ? null : "a whole number ≥ 0 (milliseconds)";
    case "positive":
      return typeof value === "number" && Number.isFinite(value) && value > 0 ? null : "a number > 0 (milliseconds)";
    case "function":
      return typeof value === "function" ? null : "a function";
    case "signal": {
      const s = value as { aborted?: unknown; addEventListener?: unknown } | null;
      return s !== null && typeof s === "object" && typeof s.aborted === "boolean" && typeof s.addEventListener === "function" ? null : "an AbortSignal";
    }
    case "operation-id":
      return typeof value === "string" && /^[A-Za-z0-9_]{1,64}$/.test(value) ? null : "1 to 64 characters of A-Z, a-z, 0-9 and _";
    default:
      if ("oneOf" in rule) return rule.oneOf.includes(value as string | boolean) ? null : `one of ${rule.oneOf.map((v) => JSON.stringify(v)).join(", ")}`;
      return value !== null && typeof value === "object" && rule.has.every((m) => typeof (value as Record<string, unknown>)[m] === "function") ? null : rule.what;
  }
}

/**
 * The `invalid_request` failure for the first field of `value` (among
 * those `rules` names, and present: `undefined` is absent) whose value
 * breaks its rule, or null. Its `unknown` list is empty: the key is known,
 * its value is not what it must be.
 *
 * @example
 * ```ts
 * const bad = badValueFailure("applyPatch request", { root, patch, dryRun: "true" }, APPLY_VALUE_RULES, "nothing was applied");
 * bad?.message; // 'invalid_request: applyPatch request field `dryRun` must be true or false, not the string "true". Nothing was applied: …'
 * ```
 */
export function badValueFailure(what: string, value: unknown, rules: Readonly<Record<string, ValueRule>>, nothing: string): PatchFailure | null {
  if (value === null || typeof value !== "object") return null;
  for (const [field, rule] of Object.entries(rules)) {
    // `in`, not hasOwn: the functions read a field through the prototype too
    // (`Object.create({ dryRun: "true" })` was a real run).
    if (!(field in value)) continue;
    const given = (value as Record<string, unknown>)[field];
    if (given === undefined) continue;
    const wanted = problem(rule, given);
    if (wanted === null) continue;
    return failure(
      "invalid_request",
      `${what} field \`${field}\` must be ${wanted}, not ${describe(given)}. ${nothing.charAt(0).toUpperCase()}${nothing.slice(1)}: no value is ever taken for what it is not, so a mistyped option cannot quietly turn a check off. Fix the value and call again.`,
      { unknown: [] },
    );
  }
  return null;
}

/**
 * The rules of the options every remote program takes (signal, timeout,
 * directory policy, compression), for the option tables of the functions.
 *
 * @example
 * ```ts
 * const rules = { ...PROGRAM_VALUE_RULES, maxEntries: "count" } as const;
 * ```
 */
export const PROGRAM_VALUE_RULES: {
  readonly signal: ValueRule;
  readonly timeoutMs: ValueRule;
  readonly sharedDirectories: ValueRule;
  readonly trustRootAncestors: ValueRule;
  readonly compress: ValueRule;
  readonly lockWaitMs: ValueRule;
} = {
  signal: "signal",
  timeoutMs: "positive",
  sharedDirectories: { oneOf: ["refuse", "allow"] },
  trustRootAncestors: "boolean",
  compress: { oneOf: ["auto", true, false] },
  lockWaitMs: "count",
};
