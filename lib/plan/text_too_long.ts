/**
 * The failure for a file whose text this JavaScript engine cannot hold in
 * one string (see `DecodeResult` in lib/text/text.ts): under Node and Deno
 * (V8) a file past about 512 MiB of ASCII, under Bun past 2 GiB. Planning
 * works on the decoded text, so such a file cannot be patched or read as
 * text in this process; it is reported as a limit, never as bad UTF-8.
 *
 * @module
 */
import { failure } from "../failure.ts";
import type { PatchFailure } from "../types.ts";

/**
 * `limit_exceeded` for `path`, whose `byteLength` bytes decode to more
 * characters than the engine's longest string (`maxChars` when known).
 *
 * @example
 * ```ts
 * textTooLong("big.log", 1073741860, 536870888).code; // "limit_exceeded"
 * ```
 */
export function textTooLong(path: string, byteLength: number, maxChars: number | undefined, patchLine?: number): PatchFailure {
  const bound = maxChars !== undefined ? ` (${maxChars.toLocaleString("en")} characters here)` : "";
  return failure(
    "limit_exceeded",
    `${path} is ${byteLength.toLocaleString("en")} bytes of valid UTF-8, but its text is longer than this JavaScript runtime can hold in one string${bound}: ` +
      `V8 (Node, Deno) holds at most 536,870,888 characters, about 512 MiB of ASCII; Bun (JavaScriptCore) 2,147,483,647. ` +
      `Nothing was changed. Run the tool under Bun for files up to 2 GiB, or split the file into smaller ones.`,
    {
      path,
      ...(patchLine !== undefined ? { patchLine } : {}),
      ...(maxChars !== undefined ? { limit: { name: "maxFileBytes" as const, max: maxChars, actual: byteLength } } : {}),
    },
  );
}
