/**
 * Strict zod objects with the shared "did you mean" words: an unknown key
 * is refused by name with the closest known one (lib/text/closest_name.ts,
 * the same helper as the library's and the CLI's), instead of zod's bare
 * "Unrecognized key". Used by the tools' input schemas (schemas.ts) and the
 * config file's root options (roots.ts).
 *
 * Maps (`expected_sha256`, the config file's `roots`) go through
 * {@linkcode strictRecord}: zod's record skips a `__proto__` key without a
 * word (it guards the result's prototype), so `expected_sha256
 * {"__proto__": "<sha>"}` for a file named `__proto__` dropped the
 * precondition and the patch went ahead unguarded. That key is refused.
 *
 * @module
 */
import { z } from "zod";
import { unknownNames, unknownNamesText } from "../../mod.ts";

/**
 * A strict object (listed with `additionalProperties: false`) whose unknown
 * keys are named: "unknown argument `dryrun`: did you mean `dry_run`?",
 * followed by `after` ("nothing was applied").
 *
 * @example
 * ```ts
 * const input = strictObject({ path: z.string() }, "argument", "nothing was read");
 * ```
 */
export function strictObject<T extends z.ZodRawShape>(shape: T, noun: string, after = ""): z.ZodObject<T, z.core.$strict> {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code !== "unrecognized_keys") return undefined;
      const text = unknownNamesText(unknownNames(issue.keys, known), noun, known);
      return after === "" ? text : `${text}${text.endsWith("?") ? "" : ";"} ${after}`;
    },
  });
}

/**
 * `z.record(key, value)` that refuses an own `__proto__` key instead of
 * dropping it (see the module notes). The advertised JSON schema is the
 * record's.
 *
 * @example
 * ```ts
 * const shas = strictRecord(z.string(), z.string(), "expected_sha256", "nothing was applied");
 * ```
 */
export function strictRecord<K extends z.core.$ZodRecordKey, V extends z.ZodType>(key: K, value: V, name: string, after = ""): z.ZodPreprocess<z.ZodRecord<K, V>, unknown> {
  return z.preprocess((input, ctx) => {
    if (input !== null && typeof input === "object" && Object.hasOwn(input, "__proto__")) {
      ctx.addIssue({
        code: "custom",
        input,
        message: `${name} has the key \`__proto__\`, which cannot be used as a name here (it would be dropped, not checked)${after === "" ? "" : `; ${after}`}`,
      });
    }
    return input;
  }, z.record(key, value));
}
