/**
 * The `invalid_utf8` failure, which names the opt-in encoding option
 * (issue 29 item 6), and the check of that option's value.
 *
 * Which encoding the failure suggests: `windows-1252` when the file has a
 * byte in 0x80–0x9F (in latin1 those are C1 control characters, which
 * real text hardly ever holds; in windows-1252 they are € ‘ ’ “ ” – — …),
 * else `latin1`. Only a suggestion: the bytes are kept exactly either way,
 * and only the user or model knows the file's encoding.
 *
 * @module
 */
import { failure, optionHint } from "../failure.ts";
import { TEXT_ENCODINGS } from "../text/encoding.ts";
import type { PatchFailure, TextEncodingName } from "../types.ts";

/**
 * The encoding option's value, checked: a name other than those of
 * {@linkcode TEXT_ENCODINGS} is a programmer error (TypeError). Default UTF-8.
 *
 * @example
 * ```ts
 * checkedEncoding(undefined); // "utf-8"
 * checkedEncoding("latin1"); // "latin1"
 * ```
 */
export function checkedEncoding(value: unknown): TextEncodingName {
  if (value === undefined) return "utf-8";
  if (typeof value === "string" && (TEXT_ENCODINGS as readonly string[]).includes(value)) return value as TextEncodingName;
  throw new TypeError(`encoding must be one of ${TEXT_ENCODINGS.map((e) => JSON.stringify(e)).join(", ")}; got ${JSON.stringify(value)}`);
}

/**
 * The single-byte encoding to suggest for bytes that are not UTF-8.
 *
 * @example
 * ```ts
 * suggestedEncoding(new Uint8Array([0x93, 0x61, 0x94])); // "windows-1252" (curly quotes)
 * ```
 */
export function suggestedEncoding(bytes: Uint8Array): "latin1" | "windows-1252" {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b >= 0x80 && b <= 0x9f) return "windows-1252";
  }
  return "latin1";
}

/**
 * `invalid_utf8` for `path`, whose first bad byte is at `byteOffset`
 * (line `line`), with the next step: the encoding option, in the front
 * end's words (a hint).
 *
 * @example
 * ```ts
 * notUtf8("menu.txt", bytes, 3, 1).hints?.[0]; // { kind: "option", option: "encoding", value: "latin1", … }
 * ```
 */
export function notUtf8(path: string, bytes: Uint8Array, byteOffset: number, line: number): PatchFailure {
  const suggested = suggestedEncoding(bytes);
  const other = suggested === "latin1" ? "windows-1252" : "latin1";
  const hint = optionHint("encoding", suggested);
  const bad = bytes[byteOffset];
  const shown = bad === undefined ? "" : ` 0x${bad.toString(16).toUpperCase().padStart(2, "0")}`;
  return failure(
    "invalid_utf8",
    `${path} is not valid UTF-8 (first bad byte${shown} at offset ${byteOffset}, line ${line}); files are read as UTF-8 unless the request names another encoding. If it is a legacy single-byte text file, send the request again with ${hint.says} (or ${JSON.stringify(other)}): every byte is kept exactly and new text is written in that encoding. Otherwise it is binary: use another tool, or convert it to UTF-8 first.`,
    { path, line, hints: [hint] },
  );
}
