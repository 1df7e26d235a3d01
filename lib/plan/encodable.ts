/**
 * New text must be writable in the request's encoding (issue 29 item 6):
 * under a single-byte `encoding`, a `+` line with a character that
 * encoding has no byte for is refused before anything is planned, with the
 * file, the patch line and the character, so nothing of the patch is
 * applied. Context and `-` lines are not checked here: they only have to
 * match the file, and a character the file cannot hold simply does not
 * match.
 *
 * @module
 */
import { failure, optionHint } from "../failure.ts";
import { characterAt, firstUnencodable } from "../text/encoding.ts";
import type { FileOp, PatchFailure } from "../types.ts";

/** The new lines of an op with their 1-based patch lines. */
function* newLines(op: FileOp): Generator<{ text: string; patchLine: number }> {
  if (op.type === "add" || op.type === "replace") {
    const first = (op.type === "replace" && op.addLine !== undefined ? op.addLine : op.patchLine) + 1;
    for (let i = 0; i < op.lines.length; i++) yield { text: op.lines[i]!, patchLine: first + i };
  } else if (op.type === "update") {
    for (const chunk of op.chunks) for (const line of chunk.lines) if (line.kind === "insert") yield { text: line.text, patchLine: line.patchLine };
  }
}

/**
 * The `unencodable_character` failure for the first new line of `op` that
 * `encoding` cannot write, or null. Linear in the new text.
 *
 * @example
 * ```ts
 * unencodableIn({ type: "add", path: "a.ini", lines: ["price = 5 €"], patchLine: 2 }, "latin1")?.unencodable.character; // "€"
 * ```
 */
export function unencodableIn(op: FileOp, encoding: "latin1" | "windows-1252"): (PatchFailure & { code: "unencodable_character" }) | null {
  for (const { text, patchLine } of newLines(op)) {
    const at = firstUnencodable(text, encoding);
    if (at < 0) continue;
    const { character, codePoint } = characterAt(text, at);
    const u = `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`;
    const shown = text.length > 80 ? `${text.slice(Math.max(0, at - 30), at + 30)}` : text;
    // The other single-byte encoding may have it (€ is in windows-1252, not latin1).
    const other = encoding === "latin1" ? "windows-1252" : "latin1";
    const otherHas = firstUnencodable(character, other) < 0;
    const hint = otherHas ? optionHint("encoding", other) : undefined;
    const next = otherHas
      ? `write the line without it, or, if the file really is ${other}, send ${hint!.says} instead`
      : "write the line without it (spell it in characters the file can hold, e.g. ASCII)";
    return failure(
      "unencodable_character",
      `${op.path}: patch line ${patchLine} ${JSON.stringify(shown)} has the character ${JSON.stringify(character)} (${u}) at column ${at + 1}, which ${encoding} cannot represent: the file is read and written as ${encoding}, one byte per character, so nothing was applied. Next step: ${next}.`,
      {
        path: op.path,
        patchLine,
        unencodable: { character, codePoint, encoding, column: at + 1 },
        ...(hint ? { hints: [hint] } : {}),
      },
    );
  }
  return null;
}
