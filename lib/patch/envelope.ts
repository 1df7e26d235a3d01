/**
 * The envelope of a patch text: splitting into lines, the whole-text trim,
 * the heredoc wrapper and trailing carriage returns (SPEC §3 leniencies).
 *
 * Nothing here copies or re-joins the text: the result indexes the original
 * lines, so every later error can name the line number as the model sent it,
 * however much wrapping was stripped.
 *
 * @module
 */
import { warning } from "../failure.ts";
import type { Warning } from "../types.ts";

/** The lines of a patch text and the range that holds the patch itself. */
export interface PatchLines {
  /**
   * Every line of the original text split on `\n`, one trailing `\r`
   * removed; the first and last lines of the range are also trimmed. Index
   * `i` is patch line `i + 1` of the original text.
   */
  lines: string[];
  /** Index of the first line of the patch (after trimming and the heredoc). */
  first: number;
  /** Index of the last line of the patch, inclusive; `last < first` when there is none. */
  last: number;
  warnings: Warning[];
}

/**
 * A shell here-document opener on the first line, possibly after a command:
 * `<<EOF`, `<<'EOF'`, `<<"EOF"`, `apply_patch <<'PATCH'`, `cat <<-EOF | x`.
 * The quotes must match; the delimiter is any word.
 */
const HEREDOC_OPENER = /^[^<]*<<-?\s*(['"]?)([A-Za-z0-9_.-]+)\1(?:\s.*)?$/;

const END_PATCH = "*** End Patch";

/**
 * Split a patch text into lines and find the patch inside its wrapping.
 * Never throws for a string input; linear in the text length.
 *
 * @example
 * ```ts
 * const p = preparePatchLines("apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF\n");
 * p.first; // 1 (patch line 2)
 * p.warnings[0]?.code; // "heredoc_stripped"
 * ```
 */
export function preparePatchLines(text: string): PatchLines {
  const lines = text.split("\n");
  const hadCarriageReturn = new Uint8Array(lines.length);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.endsWith("\r")) {
      lines[i] = line.slice(0, -1);
      hadCarriageReturn[i] = 1;
    }
  }
  const warnings: Warning[] = [];
  let [first, last] = trimRange(lines, 0, lines.length - 1);

  if (first < last) {
    const opener = HEREDOC_OPENER.exec(lines[first]!);
    if (opener !== null) {
      const delimiter = opener[2]!;
      if (lines[last]!.trim() === delimiter) {
        warnings.push(warning(
          "heredoc_stripped",
          `The shell here-document wrapper (line ${first + 1} ${
            JSON.stringify(lines[first]!.slice(0, 80))
          } and the closing ${delimiter} on line ${last + 1}) was removed; the patch itself starts at the next line. Send the patch text alone next time.`,
          { patch_line: first + 1 },
        ));
        [first, last] = trimRange(lines, first + 1, last - 1);
      } else if (lines[last]!.trim() === END_PATCH) {
        warnings.push(warning(
          "heredoc_stripped",
          `The shell here-document opener on line ${first + 1} was removed (its closing ${delimiter} line was missing). Send the patch text alone next time.`,
          { patch_line: first + 1 },
        ));
        [first, last] = trimRange(lines, first + 1, last);
      }
    }
  }

  let carriageReturns = 0;
  for (let i = first; i <= last; i++) carriageReturns += hadCarriageReturn[i]!;
  if (carriageReturns > 0) {
    warnings.push(warning(
      "carriage_return_stripped",
      `${carriageReturns} patch line${
        carriageReturns === 1 ? "" : "s"
      } ended in "\\r\\n"; the "\\r" was dropped from each, so patch lines are compared without it (the file's own line endings are kept).`,
      { patch_line: firstFlagged(hadCarriageReturn, first, last) + 1 },
    ));
  }
  return { lines, first, last, warnings };
}

/**
 * Quote a patch line for a message: JSON escapes keep control characters
 * visible and harmless; long lines are cut to a bounded excerpt.
 *
 * @example
 * ```ts
 * quoteLine("foo"); // "\"foo\""
 * ```
 */
export function quoteLine(text: string, max = 120): string {
  return JSON.stringify(text.length > max ? text.slice(0, max) + "…" : text);
}

/**
 * Narrow `[from, to]` to its non-blank lines and trim the ends of the text,
 * as `String.prototype.trim` on the whole text would, without copying it.
 */
function trimRange(lines: string[], from: number, to: number): [number, number] {
  let first = from;
  while (first <= to && lines[first]!.trim() === "") first++;
  let last = to;
  while (last >= first && lines[last]!.trim() === "") last--;
  if (first <= last) {
    lines[first] = lines[first]!.trimStart();
    lines[last] = lines[last]!.trimEnd();
  }
  return [first, last];
}

function firstFlagged(flags: Uint8Array, from: number, to: number): number {
  for (let i = from; i <= to; i++) if (flags[i]) return i;
  return from;
}
