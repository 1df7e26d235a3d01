/**
 * Whole-file replace in the parser (issue 29 item 2): `*** Replace File:`
 * and Delete + later Add of one path become one `replace` op; the shapes
 * that stay refused each get their own message.
 */
import { describe, expect, test } from "bun:test";
import { parsePatch } from "../../../lib/patch/parse.ts";
import type { FileOp, PatchFailure } from "../../../lib/types.ts";

const P = (...lines: string[]): string => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");

function ops(text: string): FileOp[] {
  const r = parsePatch(text);
  if (!r.ok) throw new Error(`expected ok, got ${JSON.stringify(r.errors, null, 1)}`);
  return r.patch.ops;
}

function errors(text: string): PatchFailure[] {
  const r = parsePatch(text);
  if (r.ok) throw new Error(`expected errors, got ${JSON.stringify(r.patch)}`);
  return r.errors;
}

describe("parsePatch: whole-file replace is one op", () => {
  const table: [string, string, FileOp[]][] = [
    [
      "*** Replace File: with its + lines",
      P("*** Replace File: conf/app.ini", "+[main]", "+", "+debug = 0"),
      [{ type: "replace", path: "conf/app.ini", lines: ["[main]", "", "debug = 0"], patchLine: 2 }],
    ],
    [
      "Delete then Add of the same path, adjacent",
      P("*** Delete File: a.txt", "*** Add File: a.txt", "+new"),
      [{ type: "replace", path: "a.txt", lines: ["new"], patchLine: 2, addLine: 3 }],
    ],
    [
      "Delete then Add with another section between; the replace takes the Delete's place",
      P("*** Delete File: a.txt", "*** Update File: b.txt", "@@", "-x", "+y", "*** Add File: a.txt", "+new"),
      [
        { type: "replace", path: "a.txt", lines: ["new"], patchLine: 2, addLine: 7 },
        { type: "update", path: "b.txt", chunks: [{ anchors: [], lines: [{ kind: "delete", text: "x", patchLine: 5 }, { kind: "insert", text: "y", patchLine: 6 }], endOfFile: false, patchLine: 4 }], patchLine: 3 },
      ],
    ],
    [
      "a Replace with no lines empties the file",
      P("*** Replace File: a.txt"),
      [{ type: "replace", path: "a.txt", lines: [], patchLine: 2 }],
    ],
    [
      "padded marker",
      P("  *** Replace File:  a.txt ", "+x"),
      [{ type: "replace", path: "a.txt", lines: ["x"], patchLine: 2 }],
    ],
  ];
  for (const [name, text, expected] of table) {
    test(name, () => expect(ops(text)).toEqual(expected));
  }

  test("a Replace File section's lines must start with '+', named as such", () => {
    const [e] = errors(P("*** Replace File: a.txt", "+ok", "oops"));
    expect(e).toMatchObject({ code: "invalid_patch", patchLine: 4, path: "a.txt" });
    expect(e!.message).toContain("every line of a Replace File section does");
  });

  test("the wrong case of the marker is named", () => {
    const [e] = errors(P("*** replace file: a.txt", "+x"));
    expect(e!.message).toContain("did you mean '*** Replace File: '");
  });

  test("line ids copied into a Replace File's lines are stripped as for an Add", () => {
    const r = parsePatch(P("*** Replace File: a.txt", "+1:9c|x"));
    // One line with a wrong id is kept as content (the prefix is text).
    expect(r.ok && r.patch.ops[0]).toMatchObject({ type: "replace", lines: ["1:9c|x"] });
  });
});

describe("parsePatch: what stays refused, each with its own next step", () => {
  const table: [string, string, { line: number; says: string[] }[]][] = [
    [
      "Add then Delete",
      P("*** Add File: a.txt", "+x", "*** Delete File: a.txt"),
      [{ line: 4, says: ["deletes \"a.txt\", which line 2", "changes nothing", "'*** Replace File: a.txt'", "'*** Delete File: a.txt' before '*** Add File: a.txt'"] }],
    ],
    [
      "two Adds",
      P("*** Add File: a.txt", "+x", "*** Add File: a.txt", "+y"),
      [{ line: 4, says: ["adds a file once", "one '*** Add File: a.txt' section"] }],
    ],
    [
      "Delete + Add of a Move destination",
      P("*** Update File: b.txt", "*** Move to: a.txt", "@@", "-x", "*** Delete File: a.txt", "*** Add File: a.txt", "+y"),
      [
        { line: 6, says: ["cannot be combined with a Move", "two patches"] },
        { line: 7, says: ["cannot be combined with a Move"] },
      ],
    ],
    [
      "Delete + Add of a Move source",
      P("*** Delete File: a.txt", "*** Update File: a.txt", "*** Move to: c.txt", "@@", "-x", "*** Add File: a.txt", "+y"),
      [
        { line: 3, says: ["cannot be combined with a Move"] },
        { line: 7, says: ["cannot be combined with a Move"] },
      ],
    ],
    [
      "Delete + Add + Add",
      P("*** Delete File: a.txt", "*** Add File: a.txt", "+x", "*** Add File: a.txt", "+y"),
      [
        { line: 3, says: ["replaced or deleted file takes no other section", "'*** Replace File: a.txt'"] },
        { line: 5, says: ["replaced or deleted file takes no other section"] },
      ],
    ],
    [
      "Replace + Update",
      P("*** Replace File: a.txt", "+x", "*** Update File: a.txt", "@@", "-x", "+y"),
      [{ line: 4, says: ["replaced or deleted file takes no other section"] }],
    ],
    [
      "Delete + Replace",
      P("*** Delete File: a.txt", "*** Replace File: a.txt", "+x"),
      [{ line: 3, says: ["replaced or deleted file takes no other section"] }],
    ],
    [
      "Replace + Move onto it",
      P("*** Replace File: a.txt", "+x", "*** Update File: b.txt", "*** Move to: a.txt", "@@", "-x"),
      [{ line: 5, says: ["cannot be combined with a Move"] }],
    ],
  ];
  for (const [name, text, expected] of table) {
    test(name, () => {
      const got = errors(text);
      expect(got.map((e) => [e.code, e.patchLine, e.path])).toEqual(expected.map((x) => ["duplicate_path", x.line, "a.txt"]));
      expected.forEach((x, i) => {
        for (const s of x.says) expect(got[i]!.message).toContain(s);
      });
    });
  }
});
