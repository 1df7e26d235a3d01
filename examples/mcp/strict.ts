/**
 * Strict zod objects with the shared "did you mean" words: an unknown key
 * is refused by name with the closest known one (lib/text/closest_name.ts,
 * the same helper as the library's and the CLI's), instead of zod's bare
 * "Unrecognized key". Used by the tools' input schemas (schemas.ts) and the
 * config file's root options (roots.ts).
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
