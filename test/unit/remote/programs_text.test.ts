/**
 * The programs travel without their whole-line comments
 * (lib/remote/programs/programs.ts `withoutCommentLines`). That is only
 * a no-op if no such line is inside a quoted string: a small sh lexer
 * walks each program's source and fails on a `#` line that starts inside
 * quotes. Then the shells under test must still parse the sent text
 * (`sh -n`), and the text must really be smaller.
 */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { commitProgram, PROGRAM_SOURCES, reconcileProgram, snapshotProgram, withoutCommentLines } from "../../../lib/remote/programs/programs.ts";
import { busyboxBinary } from "../../support/local_trees.ts";

/** Lines (1-based) that begin with `#` (after blanks) while a quoted string is open. */
function commentLinesInsideQuotes(source: string): number[] {
  const found: number[] = [];
  let quote: "'" | '"' | null = null;
  let line = 1;
  let lineStart = true;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\n") {
      line++;
      lineStart = true;
      continue;
    }
    if (lineStart && (c === " " || c === "\t")) continue;
    if (lineStart && c === "#" && quote !== null) found.push(line);
    const wasLineStart = lineStart;
    lineStart = false;
    if (quote === "'") {
      if (c === "'") quote = null;
      continue;
    }
    if (c === "\\") {
      i++; // the escaped character, also inside double quotes
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = null;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === "#" && (wasLineStart || /[\s;&|()]/.test(source[i - 1] ?? "\n"))) {
      // a comment outside quotes: skip to the end of the line
      while (i + 1 < source.length && source[i + 1] !== "\n") i++;
    }
  }
  if (quote !== null) found.push(-1); // an unclosed quote
  return found;
}

describe("the programs' text without comment lines", () => {
  test.each(Object.entries(PROGRAM_SOURCES))("%s: no comment line inside a quoted string, and the lexer sees every quote closed", (_name, source) => {
    expect(commentLinesInsideQuotes(source)).toEqual([]);
  });

  test("the lexer does catch a '#' line inside a quoted string (so the check above can fail)", () => {
    expect(commentLinesInsideQuotes("x='a\n# not a comment\n'\n")).toEqual([2]);
    expect(commentLinesInsideQuotes('x="a\n  # not a comment\n"\n')).toEqual([2]);
    expect(commentLinesInsideQuotes("# a comment with an apostrophe: don't\nx=1 # and here ' too\n")).toEqual([]);
  });

  test("comment lines are gone, code lines are kept in order", () => {
    expect(withoutCommentLines("a=1\n  # why\n\t#x\nb='#no'\nc=2 # kept\n")).toBe("a=1\nb='#no'\nc=2 # kept\n");
  });

  const programs = {
    snapshot: snapshotProgram("/srv/app", 1 << 20, "allow"),
    commit: commitProgram("/srv/app", "abc123", 1000, 10, true),
    reconcile: reconcileProgram("/srv/app", "abc123", 1000),
  };
  const shells: [string, string[]][] = [["dash", ["dash"]], ["bash", ["bash", "--posix"]], ["busybox", [busyboxBinary(), "sh"]]];
  for (const [name, text] of Object.entries(programs)) {
    test(`${name}: the sent text is at least a fifth smaller than its source, with no comment line`, () => {
      const source = PROGRAM_SOURCES[name as keyof typeof PROGRAM_SOURCES];
      expect(text.length).toBeLessThan(source.length * 0.8);
      expect(text.split("\n").some((l) => /^[ \t]*#/.test(l))).toBe(false);
    });
    for (const [shellName, argv] of shells) {
      test(`${name}: ${shellName} parses the sent text (sh -n)`, () => {
        const r = spawnSync(argv[0]!, [...argv.slice(1), "-n"], { input: text, encoding: "utf8" });
        expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
      });
    }
  }
});
