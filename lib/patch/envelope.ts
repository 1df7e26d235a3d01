/**
 * The envelope of a patch text: splitting into lines, the whole-text trim,
 * the heredoc wrapper, a Markdown code fence (round 2) and trailing
 * carriage returns (SPEC §3 leniencies).
 *
 * Wrappers are peeled from the outside in, each at most once per pass and
 * only as whole first and last lines, so a fence inside an Add File's `+`
 * lines is content: a Markdown fence around a heredoc (```` ```bash ````,
 * `apply_patch <<'EOF'`, …, `EOF`, ```` ``` ````) loses both.
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
 * A Markdown code fence opener: three or more backticks or tildes and an
 * optional info string (```` ```diff ````, ```` ```patch ````, `~~~`). An info
 * string with a backtick is not a fence (CommonMark).
 */
const FENCE_OPENER = /^(`{3,}|~{3,})[^`]*$/;

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

  // Outside in: a fence around a heredoc, a heredoc around a fence.
  for (let pass = 0; pass < 2 && first < last; pass++) {
    const before: [number, number] = [first, last];
    [first, last] = stripFence(lines, first, last, warnings);
    [first, last] = stripHeredoc(lines, first, last, warnings);
    if (first === before[0] && last === before[1]) break;
  }

  let carriageReturns = 0;
  for (let i = first; i <= last; i++) carriageReturns += hadCarriageReturn[i]!;
  if (carriageReturns > 0) {
    warnings.push(warning(
      "carriage_return_stripped",
      `${carriageReturns} patch line${
        carriageReturns === 1 ? "" : "s"
      } ended in "\\r\\n"; the "\\r" was dropped from each, so patch lines are compared without it (the file's own line endings are kept).`,
      { patchLine: firstFlagged(hadCarriageReturn, first, last) + 1 },
    ));
  }
  return { lines, first, last, warnings };
}

/**
 * A Markdown code fence on the first line, with its closing fence on the
 * last (or, when that is missing, a patch that ends with `*** End Patch`;
 * or only a closing fence after `*** End Patch`).
 */
function stripFence(lines: string[], first: number, last: number, warnings: Warning[]): [number, number] {
  const opener = FENCE_OPENER.exec(lines[first]!);
  const closes = (line: string, fence: string): boolean => {
    const t = line.trim();
    return t.length >= fence.length && t === t[0]!.repeat(t.length) && t[0] === fence[0];
  };
  if (opener !== null) {
    const fence = opener[1]!;
    if (closes(lines[last]!, fence)) {
      warnings.push(warning(
        "markdown_fence_stripped",
        `The Markdown code fence around the patch (line ${first + 1} ${JSON.stringify(lines[first]!.slice(0, 80))} and line ${last + 1}) was removed; the patch itself starts at the next line. Send the patch text alone next time, without a fence.`,
        { patchLine: first + 1 },
      ));
      return trimRange(lines, first + 1, last - 1);
    }
    if (lines[last]!.trim() === END_PATCH) {
      warnings.push(warning(
        "markdown_fence_stripped",
        `The Markdown code fence opener on line ${first + 1} was removed (its closing fence was missing). Send the patch text alone next time, without a fence.`,
        { patchLine: first + 1 },
      ));
      return trimRange(lines, first + 1, last);
    }
    return [first, last];
  }
  if (closes(lines[last]!, "`") || closes(lines[last]!, "~")) {
    const fenceOnly = /^(`{3,}|~{3,})$/.test(lines[last]!.trim());
    if (fenceOnly && last > first && lines[last - 1]!.trim() === END_PATCH) {
      warnings.push(warning(
        "markdown_fence_stripped",
        `The closing Markdown code fence on line ${last + 1} was removed (there was no opening fence). Send the patch text alone next time, without a fence.`,
        { patchLine: last + 1 },
      ));
      return trimRange(lines, first, last - 1);
    }
  }
  return [first, last];
}

/** A shell here-document wrapper: opener on the first line, its delimiter on the last. */
function stripHeredoc(lines: string[], first: number, last: number, warnings: Warning[]): [number, number] {
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
          { patchLine: first + 1 },
        ));
        [first, last] = trimRange(lines, first + 1, last - 1);
      } else if (lines[last]!.trim() === END_PATCH) {
        warnings.push(warning(
          "heredoc_stripped",
          `The shell here-document opener on line ${first + 1} was removed (its closing ${delimiter} line was missing). Send the patch text alone next time.`,
          { patchLine: first + 1 },
        ));
        [first, last] = trimRange(lines, first + 1, last);
      }
    }
  }
  return [first, last];
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
