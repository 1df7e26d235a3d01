import { describe, expect, test } from "bun:test";
import { MAX_PARSE_ERRORS, parsePatch } from "../../../lib/patch/parse.ts";
import type { Chunk, FailureCode, FileOp, ParseOptions, PatchFailure, Warning } from "../../../lib/types.ts";

/** Join lines with "\n" (patch texts read best as arrays). */
const P = (...lines: string[]): string => lines.join("\n");

function parsedOps(text: string, options?: ParseOptions): { ops: FileOp[]; warnings: Warning[] } {
  const r = parsePatch(text, options);
  if (!r.ok) throw new Error(`expected ok, got ${JSON.stringify(r.errors, null, 1)}`);
  return { ops: r.patch.ops, warnings: r.warnings };
}

function parseErrors(text: string, options?: ParseOptions): PatchFailure[] {
  const r = parsePatch(text, options);
  if (r.ok) throw new Error(`expected errors, got ${JSON.stringify(r.patch)}`);
  expect(JSON.parse(JSON.stringify(r))).toEqual(r); // plain JSON data
  return r.errors;
}

const ctx = (text: string, patchLine: number) => ({ kind: "context" as const, text, patchLine });
const del = (text: string, patchLine: number) => ({ kind: "delete" as const, text, patchLine });
const ins = (text: string, patchLine: number) => ({ kind: "insert" as const, text, patchLine });
const chunk = (patchLine: number, lines: Chunk["lines"], anchors: string[] = [], endOfFile = false): Chunk => ({
  anchors,
  lines,
  endOfFile,
  patchLine,
});

describe("parsePatch: valid patches give the exact AST", () => {
  const table: [string, string, FileOp[]][] = [
    [
      "all four operations",
      P(
        "*** Begin Patch",
        "*** Add File: path/new.txt",
        "+line",
        "+",
        "*** Update File: path/file.py",
        "*** Move to: path/renamed.py",
        "@@ class Foo",
        " context",
        "-old",
        "+new",
        "*** Delete File: path/gone.txt",
        "*** End Patch",
      ),
      [
        { type: "add", path: "path/new.txt", lines: ["line", ""], patchLine: 2 },
        {
          type: "update",
          path: "path/file.py",
          moveTo: "path/renamed.py",
          chunks: [chunk(7, [ctx("context", 8), del("old", 9), ins("new", 10)], ["class Foo"])],
          patchLine: 5,
        },
        { type: "delete", path: "path/gone.txt", patchLine: 11 },
      ],
    ],
    [
      "an Add with no lines is an empty file",
      P("*** Begin Patch", "*** Add File: empty.txt", "*** End Patch"),
      [{ type: "add", path: "empty.txt", lines: [], patchLine: 2 }],
    ],
    [
      "an Add line '+*** Update File: x' is content, not a marker",
      P("*** Begin Patch", "*** Add File: doc.md", "+*** Update File: x", "+*** End Patch", "*** End Patch"),
      [{ type: "add", path: "doc.md", lines: ["*** Update File: x", "*** End Patch"], patchLine: 2 }],
    ],
    [
      "consecutive @@ anchors narrow; a bare @@ between them is fine",
      P("*** Begin Patch", "*** Update File: a.py", "@@ class A", "@@", "@@ def f(self):", "-x", "+y", "*** End Patch"),
      [{
        type: "update",
        path: "a.py",
        chunks: [chunk(3, [del("x", 6), ins("y", 7)], ["class A", "def f(self):"])],
        patchLine: 2,
      }],
    ],
    [
      "several chunks, End of File, blank lines between chunks skipped after End of File",
      P(
        "*** Begin Patch",
        "*** Update File: a",
        "@@",
        "-1",
        "+one",
        "@@ x",
        " tail",
        "+end",
        "*** End of File",
        "",
        "@@",
        "-z",
        "*** End Patch",
      ),
      [{
        type: "update",
        path: "a",
        chunks: [
          chunk(3, [del("1", 4), ins("one", 5)]),
          chunk(6, [ctx("tail", 7), ins("end", 8)], ["x"], true),
          chunk(11, [del("z", 12)]),
        ],
        patchLine: 2,
      }],
    ],
    [
      "an empty line inside a chunk is an empty context line, also trailing before a marker",
      P("*** Begin Patch", "*** Update File: a", "@@", " a", "", "-b", "", "", "*** Delete File: c", "*** End Patch"),
      [
        {
          type: "update",
          path: "a",
          chunks: [chunk(3, [ctx("a", 4), ctx("", 5), del("b", 6), ctx("", 7), ctx("", 8)])],
          patchLine: 2,
        },
        { type: "delete", path: "c", patchLine: 9 },
      ],
    ],
    [
      "an empty line right after @@ starts the body (Codex)",
      P("*** Begin Patch", "*** Update File: a", "@@", "", "+x", "*** End Patch"),
      [{ type: "update", path: "a", chunks: [chunk(3, [ctx("", 4), ins("x", 5)])], patchLine: 2 }],
    ],
    [
      "a whitespace-only line without the ' ' prefix is an empty context line",
      P("*** Begin Patch", "*** Update File: a", "@@", " a", "\t", "+x", "*** End Patch"),
      [{ type: "update", path: "a", chunks: [chunk(3, [ctx("a", 4), ctx("", 5), ins("x", 6)])], patchLine: 2 }],
    ],
    [
      "body lines keep their whitespace: only the one prefix character is removed",
      P("*** Begin Patch", "*** Update File: a", "@@", "     indented  ", "-\ttab", "+  two", "*** End Patch"),
      [{
        type: "update",
        path: "a",
        chunks: [chunk(3, [ctx("    indented  ", 4), del("\ttab", 5), ins("  two", 6)])],
        patchLine: 2,
      }],
    ],
    [
      "marker-like content in a chunk stays a body line (editing a README about patches)",
      P(
        "*** Begin Patch",
        "*** Update File: README.md",
        "@@",
        " *** Begin Patch",
        " *** Update File: x",
        "-*** End of File",
        "+*** Delete File: y",
        " *** End Patch",
        "*** End Patch",
      ),
      [{
        type: "update",
        path: "README.md",
        chunks: [chunk(3, [
          ctx("*** Begin Patch", 4),
          ctx("*** Update File: x", 5),
          del("*** End of File", 6),
          ins("*** Delete File: y", 7),
          ctx("*** End Patch", 8),
        ])],
        patchLine: 2,
      }],
    ],
    [
      "'--- a/x' and '+++ b/x' are not stripped: they are valid Codex body lines",
      P("*** Begin Patch", "*** Update File: x", "--- a/x", "+++ b/x", "*** End Patch"),
      [{ type: "update", path: "x", chunks: [chunk(3, [del("-- a/x", 3), ins("++ b/x", 4)])], patchLine: 2 }],
    ],
    [
      "anchor text keeps what follows '@@ ' (a tab also separates); '@@ ' alone is bare",
      P("*** Begin Patch", "*** Update File: a", "@@  indented()", "@@\tfn x", "@@   ", "-q", "*** End Patch"),
      [{ type: "update", path: "a", chunks: [chunk(3, [del("q", 6)], [" indented()", "fn x"])], patchLine: 2 }],
    ],
    [
      "a Move with a context-only chunk moves a file unchanged, checking its content",
      P("*** Begin Patch", "*** Update File: a.txt", "*** Move to: b/a.txt", "@@", " first line", "*** End Patch"),
      [{ type: "update", path: "a.txt", moveTo: "b/a.txt", chunks: [chunk(4, [ctx("first line", 5)])], patchLine: 2 }],
    ],
    [
      "Unicode and option-like paths are data",
      P("*** Begin Patch", "*** Delete File: -rf", "*** Delete File: документы/отчёт.md", "*** Delete File: a b/$x;'q'", "*** End Patch"),
      [
        { type: "delete", path: "-rf", patchLine: 2 },
        { type: "delete", path: "документы/отчёт.md", patchLine: 3 },
        { type: "delete", path: "a b/$x;'q'", patchLine: 4 },
      ],
    ],
    [
      "blank lines between sections after a Delete or Begin are skipped",
      P("*** Begin Patch", "", "*** Delete File: a", "", "", "*** Delete File: b", "", "*** End Patch"),
      [{ type: "delete", path: "a", patchLine: 3 }, { type: "delete", path: "b", patchLine: 6 }],
    ],
    [
      "'*** Add File:x' without the space after the colon still names x",
      P("*** Begin Patch", "*** Add File:x", "+1", "*** End Patch"),
      [{ type: "add", path: "x", lines: ["1"], patchLine: 2 }],
    ],
  ];
  for (const [name, text, ops] of table) {
    test(name, () => {
      expect(parsedOps(text).ops).toEqual(ops);
    });
  }

  test("a clean patch has no warnings", () => {
    expect(parsedOps(table[0]![1]).warnings).toEqual([]);
  });
});

describe("parsePatch: leniencies, their warnings and original line numbers", () => {
  const body = ["*** Begin Patch", "*** Update File: a.py", "@@", "-x", "+y", "*** End Patch"];

  const wrappers: [string, string, number][] = [
    ["<<EOF", P("<<EOF", ...body, "EOF"), 1],
    ["<<'EOF'", P("<<'EOF'", ...body, "EOF", ""), 1],
    ['<<"EOF"', P('<<"EOF"', ...body, "EOF"), 1],
    ["a command before it", P("apply_patch <<'EOF'", ...body, "EOF"), 1],
    ["any delimiter word, <<- and a pipe", P("cat <<-PATCH | apply_patch", ...body, "PATCH"), 1],
    ["blank lines around and inside", P("", "  ", "apply_patch <<'EOF'", "", ...body, "", "EOF", "", ""), 4],
  ];
  for (const [name, text, shift] of wrappers) {
    test(`heredoc wrapper stripped: ${name}`, () => {
      const { ops, warnings } = parsedOps(text);
      const op = ops[0] as Extract<FileOp, { type: "update" }>;
      expect(op.patchLine).toBe(2 + shift);
      expect(op.chunks[0]!.lines.map((l) => l.patchLine)).toEqual([4 + shift, 5 + shift]);
      expect(warnings.map((w) => w.code)).toEqual(["heredoc_stripped"]);
    });
  }

  test("heredoc with mismatched quotes is not a wrapper (Codex)", () => {
    const errors = parseErrors(P(`<<"EOF'`, ...body, "EOF"));
    expect(errors[0]!.message).toContain("'*** Begin Patch'");
    expect(errors[0]!.patchLine).toBe(1);
  });

  test("heredoc opener without its closing line, ending in End Patch, is stripped with a warning", () => {
    const { ops, warnings } = parsedOps(P("apply_patch <<'EOF'", ...body));
    expect(ops[0]!.patchLine).toBe(3);
    expect(warnings[0]!.code).toBe("heredoc_stripped");
    expect(warnings[0]!.message).toContain("closing EOF line was missing");
  });

  test("heredoc around a patch without End Patch is still rejected for the missing end", () => {
    const errors = parseErrors(P("<<EOF", "*** Begin Patch", "*** Update File: a", "@@", "+x", "EOF"));
    expect(errors.map((e) => e.patchLine)).toEqual([5]);
    expect(errors[0]!.message).toContain("without '*** End Patch'");
  });

  test("leading blank lines and indentation before Begin shift line numbers", () => {
    const { ops, warnings } = parsedOps("\n\n   " + P(...body) + "\n\n  ");
    expect(ops[0]!.patchLine).toBe(4);
    expect(warnings).toEqual([]); // trimming the whole text changes no meaning
  });

  test("a leading byte-order mark is trimmed", () => {
    expect(parsedOps("\uFEFF" + P(...body)).ops).toHaveLength(1);
  });

  test("CRLF lines: the \\r is dropped from every line, one warning with the count", () => {
    const { ops, warnings } = parsedOps(body.join("\r\n") + "\r\n");
    const op = ops[0] as Extract<FileOp, { type: "update" }>;
    expect(op.chunks[0]!.lines).toEqual([del("x", 4), ins("y", 5)]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.code).toBe("carriage_return_stripped");
    expect(warnings[0]!.message).toContain("6 patch lines");
  });

  test("a lone \\r inside a line is content, not a line break", () => {
    const { ops } = parsedOps(P("*** Begin Patch", "*** Update File: a", "@@", "-a\rb", "*** End Patch"));
    expect((ops[0] as Extract<FileOp, { type: "update" }>).chunks[0]!.lines[0]!.text).toBe("a\rb");
  });

  test("padded markers are markers; path whitespace trimmed; one patch_trimmed warning", () => {
    const { ops, warnings } = parsedOps(P(
      "*** Begin Patch ",
      "*** Add File: a.txt  ",
      "+x",
      "  *** Update File: b",
      "@@",
      "-1",
      "\t*** End of File",
      "*** Delete File:   c  ",
      "  *** End Patch",
    ));
    expect(ops.map((o) => o.path)).toEqual(["a.txt", "b", "c"]);
    expect((ops[1] as Extract<FileOp, { type: "update" }>).chunks[0]!.endOfFile).toBe(true);
    expect(warnings.map((w) => w.code)).toEqual(["patch_trimmed"]);
    expect(warnings[0]!.message).toContain("6 marker lines (first: line 1)");
  });

  test("the first chunk may omit @@ (warning)", () => {
    const { ops, warnings } = parsedOps(P("*** Begin Patch", "*** Update File: file2.py", " import foo", "+bar", "*** End Patch"));
    expect(ops).toEqual([{
      type: "update",
      path: "file2.py",
      chunks: [chunk(3, [ctx("import foo", 3), ins("bar", 4)])],
      patchLine: 2,
    }]);
    expect(warnings).toEqual([expect.objectContaining({ code: "first_chunk_without_anchor", path: "file2.py", hunk: 1, patchLine: 3 })]);
  });

  test("unified-diff headers are bare @@: numbers and function context ignored, one warning per file", () => {
    const { ops, warnings } = parsedOps(P(
      "*** Begin Patch",
      "*** Update File: a.py",
      "@@ -1,3 +1,4 @@ def foo():",
      "-a",
      "@@ -12,7 +12,8 @@",
      "-b",
      "@@ -3 +3 @@",
      "-c",
      "*** End Patch",
    ));
    const op = ops[0] as Extract<FileOp, { type: "update" }>;
    expect(op.chunks.map((c) => c.anchors)).toEqual([[], [], []]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ code: "unified_header_ignored", path: "a.py", patchLine: 3 });
    expect(warnings[0]!.message).toContain("3 unified-diff hunk headers");
  });

  test("a unified header followed by a Codex anchor: the anchor still narrows", () => {
    const { ops } = parsedOps(P("*** Begin Patch", "*** Update File: a", "@@ -1,2 +1,2 @@", "@@ def f():", "-a", "*** End Patch"));
    expect((ops[0] as Extract<FileOp, { type: "update" }>).chunks[0]!.anchors).toEqual(["def f():"]);
  });
});

describe("parsePatch: rejections name the line, the offending text and what was expected", () => {
  // [name, text, expected errors as [code, patchLine, fragments...]]
  const table: [string, string, [FailureCode, number | undefined, ...string[]][]][] = [
    ["empty text", "  \n\n ", [["invalid_patch", undefined, "the patch is empty"]]],
    [
      "no Begin Patch anywhere",
      P("Here is the patch:", "*** Delete File: a", "*** End Patch"),
      [["invalid_patch", 1, `line 1 "Here is the patch:"`, "must be '*** Begin Patch'"]],
    ],
    [
      "text before Begin Patch",
      P("Sure!", "", "```", "*** Begin Patch", "*** Delete File: a", "*** End Patch"),
      [["invalid_patch", 1, `line 1 "Sure!"`, "up to line 3", "(line 4)"]],
    ],
    [
      "a patch starting at a section marker is missing only Begin",
      P("*** Delete File: a", "*** End Patch"),
      [["invalid_patch", 1, "must be '*** Begin Patch'"]],
    ],
    [
      "missing End Patch (a cut-off patch is never applied)",
      P("*** Begin Patch", "*** Add File: a", "+half"),
      [["invalid_patch", 3, `line 3 "+half"`, "without '*** End Patch'", "cut off"]],
    ],
    [
      "text after End Patch",
      P("*** Begin Patch", "*** Delete File: a", "*** End Patch", "", "Let me know!"),
      [["invalid_patch", 5, `line 5 "Let me know!"`, "after '*** End Patch' on line 3"]],
    ],
    [
      "a second Begin Patch",
      P("*** Begin Patch", "*** Delete File: a", "*** Begin Patch", "*** Delete File: b", "*** End Patch"),
      [["invalid_patch", 3, "second '*** Begin Patch'"]],
    ],
    [
      "an unknown line where a section header was expected (reported once, then resync)",
      P("*** Begin Patch", "*** Delete File: a", "foo", "bar", " baz", "*** Delete File: b", "*** End Patch"),
      [["invalid_patch", 3, `line 3 "foo"`, "not a file section header", "'*** Add File: '"]],
    ],
    [
      "a marker in the wrong case",
      P("*** Begin Patch", "*** update file: a", "@@", "-x", "*** End Patch"),
      [["invalid_patch", 2, "case-sensitive", "'*** Update File: '"]],
    ],
    [
      "an unknown marker",
      P("*** Begin Patch", "*** Modify File: a", "@@", "-x", "*** Delete File: b", "*** End Patch"),
      [["invalid_patch", 2, "not a file section header"]],
    ],
    [
      "chunk lines without a prefix (the SPEC example): every one of the chunk named in one error",
      P("*** Begin Patch", "*** Update File: a", "@@", " ok", "-old", "+new", "foo", " ok", "bar", "*** End Patch"),
      [
        ["invalid_patch", 7, `line 7 "foo"`, "every line of a chunk starts with ' ', '+' or '-'", "'*** Add File: ', '*** Update File: ' or '*** Delete File: '", `Line 9 "bar" of the same chunk has none either`],
      ],
    ],
    [
      "unmarked lines of two chunks: one error each",
      P("*** Begin Patch", "*** Update File: a", "@@", "foo", "-old", "+new", "@@", "-x", "bar", "+y", "*** End Patch"),
      [
        ["invalid_patch", 4, `line 4 "foo" (chunk 1 of "a")`],
        ["invalid_patch", 9, `line 9 "bar" (chunk 2 of "a")`],
      ],
    ],
    [
      "unmarked lines with indented context lines: those are named as maybe read one space short",
      P("*** Begin Patch", "*** Update File: a.py", "@@", "def b():", "    x = 1", "-    return x", "+    return x + 1", "*** End Patch"),
      [["invalid_patch", 4, "The indented context line 5 may have lost its ' ' too", "read as context one space shorter than written"]],
    ],
    [
      "a tab-indented context line gets a hint",
      P("*** Begin Patch", "*** Update File: a", "@@", "\tindented", "+x", "*** End Patch"),
      [["invalid_patch", 4, "starts with a tab", "' ' before the file's own indentation"]],
    ],
    [
      "Add lines without '+', including an empty one",
      P("*** Begin Patch", "*** Add File: a", "+1", "two", "", "+3", "*** End Patch"),
      [
        ["invalid_patch", 4, `line 4 "two"`, "does not start with '+'"],
        ["invalid_patch", 5, "is empty", "write a lone '+'"],
      ],
    ],
    [
      "an Update with no chunk",
      P("*** Begin Patch", "*** Update File: a", "*** Delete File: b", "*** End Patch"),
      [["invalid_patch", 2, "has no chunk", "'*** Delete File: a'"]],
    ],
    [
      "an Update + Move with no chunk says how to move unchanged",
      P("*** Begin Patch", "*** Update File: a", "*** Move to: b", "*** End Patch"),
      [["invalid_patch", 2, "has no chunk", "To move a file unchanged"]],
    ],
    [
      "a chunk with no body lines",
      P("*** Begin Patch", "*** Update File: a", "@@", "-x", "@@ def f():", "*** End Patch"),
      [["invalid_patch", 5, `chunk 2 of "a"`, "has no lines before the end of the patch"]],
    ],
    [
      "a chunk that changes nothing",
      P("*** Begin Patch", "*** Update File: a", "@@", " x", " y", "*** End Patch"),
      [["invalid_patch", 3, `chunk 1 of "a"`, "changes nothing"]],
    ],
    [
      "End of File right after @@",
      P("*** Begin Patch", "*** Update File: a", "@@", "*** End of File", "*** End Patch"),
      [["invalid_patch", 4, "wrong place"]],
    ],
    [
      "End of File between sections",
      P("*** Begin Patch", "*** Delete File: a", "*** End of File", "*** End Patch"),
      [["invalid_patch", 3, "'*** End of File' ends a chunk"]],
    ],
    [
      "End of File inside an Add",
      P("*** Begin Patch", "*** Add File: a", "+x", "*** End of File", "*** End Patch"),
      [["invalid_patch", 4, "'*** End of File' ends a chunk"]],
    ],
    [
      "End of File twice",
      P("*** Begin Patch", "*** Update File: a", "@@", "-x", "*** End of File", "*** End of File", "*** End Patch"),
      [["invalid_patch", 6, "wrong place"]],
    ],
    [
      "body lines after End of File",
      P("*** Begin Patch", "*** Update File: a", "@@", "-x", "*** End of File", "+y", "+z", "*** End Patch"),
      [["invalid_patch", 6, "follows '*** End of File' (line 5)", "start a new chunk with '@@'"]],
    ],
    [
      "'@@foo' is not a chunk header",
      P("*** Begin Patch", "*** Update File: a", "@@foo()", "-x", "*** End Patch"),
      [["invalid_patch", 3, "'@@ ' (with a space)", "'@@ foo()'"]],
    ],
    [
      "Move to away from its Update line",
      P("*** Begin Patch", "*** Update File: a", "@@", "-x", "*** Move to: b", "*** End Patch"),
      [["invalid_patch", 5, "right after the '*** Update File: ' line"]],
    ],
    [
      "Move to the same path",
      P("*** Begin Patch", "*** Update File: a", "*** Move to: a", "@@", "-x", "*** End Patch"),
      [["invalid_patch", 3, "onto itself", "would delete the file", "Remove the '*** Move to:' line"]],
    ],
    [
      "no file section",
      P("*** Begin Patch", "", "*** End Patch"),
      [["invalid_patch", 1, "no file section"]],
    ],
  ];
  for (const [name, text, expected] of table) {
    test(name, () => {
      const errors = parseErrors(text);
      expect(errors.map((e): unknown[] => [e.code, e.patchLine])).toEqual(expected.map(([c, l]) => [c, l]));
      expected.forEach(([, , ...fragments], i) => {
        for (const f of fragments) expect(errors[i]!.message).toContain(f);
        expect(errors[i]!.retryable).toBe(false);
      });
    });
  }
});

describe("parsePatch: paths and duplicates", () => {
  test("every bad path and move target is reported, with its patch line", () => {
    const errors = parseErrors(P(
      "*** Begin Patch",
      "*** Add File: /etc/passwd",
      "+x",
      "*** Delete File: ../up",
      "*** Update File: dir/",
      "*** Move to: a\\b",
      "@@",
      "-x",
      "*** Delete File: ok.txt",
      "*** Delete File: a\u0007b",
      "*** End Patch",
    ));
    expect(errors.map((e) => [e.code, e.patchLine, e.path])).toEqual([
      ["invalid_path", 2, "/etc/passwd"],
      ["invalid_path", 4, "../up"],
      ["invalid_path", 5, "dir/"],
      ["invalid_path", 6, "a\\b"],
      ["invalid_path", 10, "a\u0007b"],
    ]);
    expect(errors[0]!.message).toContain(`line 2 "*** Add File: /etc/passwd"`);
    expect(errors[0]!.message).toContain("root-relative path such as src/app.ts");
    expect(errors[3]!.message).toContain("write a/b");
    expect(errors[4]!.message).not.toContain("\u0007");
  });

  test("an empty path after a marker", () => {
    const errors = parseErrors(P("*** Begin Patch", "*** Delete File:  ", "*** End Patch"));
    expect(errors).toEqual([expect.objectContaining({ code: "invalid_path", patchLine: 2, path: "" })]);
  });

  const dupes: [string, string[], [number, number, string][]][] = [
    ["Add and Update", ["*** Add File: a", "+1", "*** Update File: a", "@@", "-x"], [[4, 2, "a"]]],
    ["Update and Delete", ["*** Update File: a", "@@", "-x", "*** Delete File: a"], [[5, 2, "a"]]],
    ["Move destination onto another section's path", ["*** Delete File: b", "*** Update File: a", "*** Move to: b", "@@", "-x"], [[4, 2, "b"]]],
    ["Add onto an earlier Move destination", ["*** Update File: a", "*** Move to: b", "@@", "-x", "*** Add File: b"], [[6, 3, "b"]]],
    ["two Moves to one destination", ["*** Update File: a", "*** Move to: c", "@@", "-x", "*** Update File: b", "*** Move to: c", "@@", "-y"], [[7, 3, "c"]]],
    ["several duplicates at once", ["*** Delete File: a", "*** Delete File: a", "*** Delete File: b", "*** Delete File: b"], [[3, 2, "a"], [5, 4, "b"]]],
  ];
  for (const [name, sections, expected] of dupes) {
    test(`duplicate_path: ${name}`, () => {
      const errors = parseErrors(P("*** Begin Patch", ...sections, "*** End Patch"));
      expect(errors.map((e) => [e.code, e.patchLine, e.path])).toEqual(
        expected.map(([line, , path]) => ["duplicate_path", line, path]),
      );
      expected.forEach(([line, earlier], i) => {
        expect(errors[i]!.message).toContain(`line ${line} `);
        expect(errors[i]!.message).toContain(`line ${earlier} `);
      });
    });
  }

  test("moving a away and adding a new a is still one path touched twice", () => {
    const errors = parseErrors(P("*** Begin Patch", "*** Update File: a", "*** Move to: b", "@@", "-x", "*** Add File: a", "+y", "*** End Patch"));
    expect(errors.map((e) => e.code)).toEqual(["duplicate_path"]);
  });

  test("different Unicode spellings are different paths (no normalisation)", () => {
    const { ops } = parsedOps(P("*** Begin Patch", "*** Delete File: \u00e9", "*** Delete File: e\u0301", "*** End Patch"));
    expect(ops).toHaveLength(2);
  });
});

describe("parsePatch: limits", () => {
  test("maxPatchBytes counts UTF-8 bytes, not UTF-16 units, and stops before parsing", () => {
    const text = P("*** Begin Patch", "*** Add File: a", "+" + "é".repeat(100), "*** End Patch");
    const bytes = new TextEncoder().encode(text).length;
    expect(text.length).toBeLessThan(bytes);
    expect(parsePatch(text, { limits: { maxPatchBytes: bytes } }).ok).toBe(true);
    const errors = parseErrors(text, { limits: { maxPatchBytes: text.length } });
    expect(errors).toEqual([expect.objectContaining({
      code: "limit_exceeded",
      limit: { name: "maxPatchBytes", max: text.length, actual: bytes },
    })]);
  });

  test("maxFiles", () => {
    const text = P("*** Begin Patch", "*** Delete File: a", "*** Delete File: b", "*** Delete File: c", "*** End Patch");
    expect(parsePatch(text, { limits: { maxFiles: 3 } }).ok).toBe(true);
    const errors = parseErrors(text, { limits: { maxFiles: 2 } });
    expect(errors).toEqual([expect.objectContaining({ code: "limit_exceeded", limit: { name: "maxFiles", max: 2, actual: 3 } })]);
    expect(errors[0]!.message).toContain("at most 2");
  });

  test("maxChunksPerFile, per file", () => {
    const chunks = (n: number) => Array.from({ length: n }, (_, i) => [`@@ f${i}`, `-x${i}`]).flat();
    const text = P("*** Begin Patch", "*** Update File: a", ...chunks(3), "*** Update File: b", ...chunks(2), "*** End Patch");
    expect(parsePatch(text, { limits: { maxChunksPerFile: 3 } }).ok).toBe(true);
    const errors = parseErrors(text, { limits: { maxChunksPerFile: 2 } });
    expect(errors).toEqual([expect.objectContaining({
      code: "limit_exceeded",
      path: "a",
      patchLine: 2,
      limit: { name: "maxChunksPerFile", max: 2, actual: 3 },
    })]);
  });
});

describe("parsePatch: all errors together", () => {
  test("errors of different kinds come back together, in patch order", () => {
    const errors = parseErrors(P(
      "*** Begin Patch",
      "*** Update File: a",
      "@@",
      "oops",
      "*** Add File: /abs",
      "+x",
      "*** Delete File: a",
      "*** End Patch",
    ));
    expect(errors.map((e) => [e.code, e.patchLine])).toEqual([
      ["invalid_patch", 4],
      ["invalid_path", 5],
      ["duplicate_path", 7],
    ]);
  });

  test(`at most ${MAX_PARSE_ERRORS} errors, then a summary`, () => {
    const bad = Array.from({ length: 80 }, (_, i) => ["@@", `-x${i}`, `bad ${i}`]).flat();
    const errors = parseErrors(P("*** Begin Patch", "*** Update File: a", ...bad, "*** End Patch"));
    expect(errors).toHaveLength(MAX_PARSE_ERRORS + 1);
    expect(errors.at(-1)!.message).toContain("30 more errors");
  });

  test("offending text is bounded in messages", () => {
    const errors = parseErrors(P("*** Begin Patch", "*** Update File: a", "@@", "x".repeat(10_000), "*** End Patch"));
    expect(errors[0]!.message.length).toBeLessThan(600);
  });

  test("a non-string is a programmer error and throws", () => {
    expect(() => parsePatch(undefined as unknown as string)).toThrow(TypeError);
  });
});
