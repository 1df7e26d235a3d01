/**
 * Round-2 leniencies of parsePatch (SPEC §3): a Markdown fence around the
 * patch, unified / git diff input converted to Codex sections, and `N:hh|`
 * line-id prefixes copied from a read with line ids. Each changes the
 * meaning of the text only with a warning; each has its limits tested (the
 * readings that must stay as they were).
 */
import { describe, expect, test } from "bun:test";
import { parsePatch } from "../../../lib/patch/parse.ts";
import { formatLineId } from "../../../lib/text/line_id.ts";
import type { Chunk, FileOp, PatchFailure, Warning, WarningCode } from "../../../lib/types.ts";

const P = (...lines: string[]): string => lines.join("\n");
const id = (text: string, n: number): string => `${formatLineId(text, n)}|${text}`;
const ctx = (text: string, patchLine: number) => ({ kind: "context" as const, text, patchLine });
const del = (text: string, patchLine: number) => ({ kind: "delete" as const, text, patchLine });
const ins = (text: string, patchLine: number) => ({ kind: "insert" as const, text, patchLine });
const chunk = (patchLine: number, lines: Chunk["lines"], anchors: string[] = []): Chunk => ({ anchors, lines, endOfFile: false, patchLine });

function ok(text: string): { ops: FileOp[]; warnings: Warning[] } {
  const r = parsePatch(text);
  if (!r.ok) throw new Error(`expected ok, got ${JSON.stringify(r.errors, null, 1)}`);
  return { ops: r.patch.ops, warnings: r.warnings };
}
function errors(text: string): PatchFailure[] {
  const r = parsePatch(text);
  if (r.ok) throw new Error(`expected errors, got ${JSON.stringify(r.patch)}`);
  return r.errors;
}
const codes = (warnings: Warning[]): WarningCode[] => warnings.map((w) => w.code);

const CODEX = ["*** Begin Patch", "*** Update File: a.txt", "@@", "-old", "+new", "*** End Patch"];
const CODEX_OPS: FileOp[] = [{ type: "update", path: "a.txt", chunks: [chunk(3, [del("old", 4), ins("new", 5)])], patchLine: 2 }];
const shift = (ops: FileOp[], by: number): FileOp[] => JSON.parse(JSON.stringify(ops), (k, v) => (k === "patchLine" ? v + by : v));

describe("Markdown code fence around the patch", () => {
  const table: { name: string; text: string; shiftBy: number; warnings: WarningCode[] }[] = [
    { name: "```diff … ```", text: P("```diff", ...CODEX, "```"), shiftBy: 1, warnings: ["markdown_fence_stripped"] },
    { name: "``` … ``` with blank lines and spaces around", text: P("", "  ```", "", ...CODEX, "```  ", ""), shiftBy: 3, warnings: ["markdown_fence_stripped"] },
    { name: "~~~~ closed by a longer ~~~~~", text: P("~~~~", ...CODEX, "~~~~~"), shiftBy: 1, warnings: ["markdown_fence_stripped"] },
    { name: "an opener without its closer, the patch ending in End Patch", text: P("```patch", ...CODEX), shiftBy: 1, warnings: ["markdown_fence_stripped"] },
    { name: "a closer without its opener, after End Patch", text: P(...CODEX, "```"), shiftBy: 0, warnings: ["markdown_fence_stripped"] },
    { name: "a fence around a heredoc", text: P("```bash", "apply_patch <<'EOF'", ...CODEX, "EOF", "```"), shiftBy: 2, warnings: ["markdown_fence_stripped", "heredoc_stripped"] },
    { name: "a heredoc around a fence", text: P("cat <<EOF", "```", ...CODEX, "```", "EOF"), shiftBy: 2, warnings: ["heredoc_stripped", "markdown_fence_stripped"] },
  ];
  for (const c of table) {
    test(c.name, () => {
      const r = ok(c.text);
      expect(r.ops).toEqual(shift(CODEX_OPS, c.shiftBy));
      expect(codes(r.warnings)).toEqual(c.warnings);
    });
  }

  test("a fence inside an Add File is content, not a wrapper", () => {
    const r = ok(P("*** Begin Patch", "*** Add File: README.md", "+```", "+code", "+```", "*** End Patch"));
    expect(r.ops).toEqual([{ type: "add", path: "README.md", lines: ["```", "code", "```"], patchLine: 2 }]);
    expect(r.warnings).toEqual([]);
  });

  test("text before the fence is still refused (only a whole wrapper is stripped)", () => {
    expect(errors(P("Here is the patch:", "```", ...CODEX, "```"))[0]!.message).toContain("before '*** Begin Patch'");
  });
});

describe("unified / git diff converted to Codex sections", () => {
  type Case = { name: string; text: string; ops: FileOp[]; warning?: string };
  const table: Case[] = [
    {
      name: "plain unified diff: --- a/x, +++ b/x, one hunk",
      text: P("--- a/src/app.py", "+++ b/src/app.py", "@@ -1,3 +1,3 @@", " def f():", "-    return 1", "+    return 2", " # end"),
      ops: [{ type: "update", path: "src/app.py", chunks: [chunk(3, [ctx("def f():", 4), del("    return 1", 5), ins("    return 2", 6), ctx("# end", 7)])], patchLine: 1 }],
      warning: "read as *** Update File: src/app.py (1 chunk)",
    },
    {
      name: "git diff with headers, two hunks, git's function context after @@ ignored",
      text: P(
        "diff --git a/x.js b/x.js",
        "index 83db48f..bf269f4 100644",
        "--- a/x.js",
        "+++ b/x.js",
        "@@ -1,2 +1,2 @@ function top() {",
        "-a",
        "+A",
        " b",
        "@@ -10,2 +10,2 @@",
        " y",
        "-z",
        "+Z",
      ),
      ops: [{ type: "update", path: "x.js", chunks: [chunk(5, [del("a", 6), ins("A", 7), ctx("b", 8)]), chunk(9, [ctx("y", 10), del("z", 11), ins("Z", 12)])], patchLine: 1 }],
    },
    {
      name: "new file from /dev/null is an Add; deleted file to /dev/null a Delete",
      text: P(
        "diff --git a/new.txt b/new.txt",
        "new file mode 100644",
        "index 0000000..3b18e51",
        "--- /dev/null",
        "+++ b/new.txt",
        "@@ -0,0 +1,2 @@",
        "+hello",
        "+world",
        "diff --git a/old.txt b/old.txt",
        "deleted file mode 100644",
        "--- a/old.txt",
        "+++ /dev/null",
        "@@ -1 +0,0 @@",
        "-bye",
      ),
      ops: [{ type: "add", path: "new.txt", lines: ["hello", "world"], patchLine: 1 }, { type: "delete", path: "old.txt", patchLine: 9 }],
      warning: "*** Add File: new.txt; *** Delete File: old.txt",
    },
    {
      name: "rename from / rename to with a hunk is a Move",
      text: P(
        "diff --git a/lib/old.py b/lib/new.py",
        "similarity index 90%",
        "rename from lib/old.py",
        "rename to lib/new.py",
        "--- a/lib/old.py",
        "+++ b/lib/new.py",
        "@@ -1 +1 @@",
        "-VERSION = 1",
        "+VERSION = 2",
      ),
      ops: [{ type: "update", path: "lib/old.py", moveTo: "lib/new.py", chunks: [chunk(7, [del("VERSION = 1", 8), ins("VERSION = 2", 9)])], patchLine: 1 }],
    },
    {
      name: "no a/ b/ prefixes (diff -u, --no-prefix), timestamps after a tab",
      text: P("--- conf/site.conf\t2024-01-01 10:00:00.000000000 +0100", "+++ conf/site.conf\t2024-01-02 10:00:00.000000000 +0100", "@@ -1 +1 @@", "-listen 80;", "+listen 8080;"),
      ops: [{ type: "update", path: "conf/site.conf", chunks: [chunk(3, [del("listen 80;", 4), ins("listen 8080;", 5)])], patchLine: 1 }],
    },
    {
      name: "git-quoted names with octal escapes",
      text: P('--- "a/docs/r\\303\\251sum\\303\\251 v2.md"', '+++ "b/docs/r\\303\\251sum\\303\\251 v2.md"', "@@ -1 +1 @@", "-x", "+y"),
      ops: [{ type: "update", path: "docs/résumé v2.md", chunks: [chunk(3, [del("x", 4), ins("y", 5)])], patchLine: 1 }],
    },
    {
      name: "\\ No newline at end of file is dropped (the file keeps its own final-newline state); empty lines are empty context",
      text: P("--- a/t.txt", "+++ b/t.txt", "@@ -1,3 +1,3 @@", " a", "", "-b", "\\ No newline at end of file", "+c", "\\ No newline at end of file"),
      ops: [{ type: "update", path: "t.txt", chunks: [chunk(3, [ctx("a", 4), ctx("", 5), del("b", 6), ins("c", 8)])], patchLine: 1 }],
    },
    {
      name: "wrapped in *** Begin Patch / *** End Patch, after a Codex section",
      text: P("*** Begin Patch", "*** Delete File: gone.txt", "--- a/x", "+++ b/x", "@@ -5,4 +5,4 @@", "-a", "+b", "*** End Patch"),
      ops: [{ type: "delete", path: "gone.txt", patchLine: 2 }, { type: "update", path: "x", chunks: [chunk(5, [del("a", 6), ins("b", 7)])], patchLine: 3 }],
    },
    {
      name: "wrapped, with counts that are wrong: not checked (End Patch proves the end)",
      text: P("*** Begin Patch", "--- a/x", "+++ b/x", "@@ -1,9 +1,9 @@", "-a", "+b", "*** End Patch"),
      ops: [{ type: "update", path: "x", chunks: [chunk(4, [del("a", 5), ins("b", 6)])], patchLine: 2 }],
    },
    {
      name: "a diff --git line ends a Codex Update section and starts a converted one",
      text: P("*** Begin Patch", "*** Update File: a", "@@", "-1", "+2", "diff --git a/b b/b", "--- a/b", "+++ b/b", "@@ -1 +1 @@", "-3", "+4", "*** End Patch"),
      ops: [
        { type: "update", path: "a", chunks: [chunk(3, [del("1", 4), ins("2", 5)])], patchLine: 2 },
        { type: "update", path: "b", chunks: [chunk(9, [del("3", 10), ins("4", 11)])], patchLine: 6 },
      ],
    },
  ];
  for (const c of table) {
    test(c.name, () => {
      const r = ok(c.text);
      expect(r.ops).toEqual(c.ops);
      const converted = r.warnings.filter((w) => w.code === "unified_diff_converted");
      expect(converted).toHaveLength(1);
      expect(converted[0]!.message).toContain("line numbers were not used");
      expect(converted[0]!.message).toContain("Next time send the Codex format: '*** Begin Patch'");
      if (c.warning) expect(converted[0]!.message).toContain(c.warning);
      expect(codes(r.warnings)).not.toContain("unified_header_ignored");
    });
  }

  test("the Codex reading stands inside an Update section: '--- a/x' is 'delete -- a/x' (no conversion, no warning)", () => {
    const r = ok(P("*** Begin Patch", "*** Update File: x", "--- a/x", "+++ b/x", "@@ -1 +1 @@", "-old", "+new", "*** End Patch"));
    expect(r.ops).toEqual([{
      type: "update",
      path: "x",
      chunks: [chunk(3, [del("-- a/x", 3), ins("++ b/x", 4)]), chunk(5, [del("old", 6), ins("new", 7)])],
      patchLine: 2,
    }]);
    expect(codes(r.warnings)).toEqual(["first_chunk_without_anchor", "unified_header_ignored"]);
  });

  const refused: { name: string; text: string; includes: string[]; line: number }[] = [
    {
      name: "a bare diff whose last hunk is shorter than its header says (maybe cut off)",
      text: P("--- a/n.conf", "+++ b/n.conf", "@@ -1,4 +1,4 @@", " server {", "-    listen 80;", "+    listen 8080;"),
      includes: ["ends inside its last hunk", "announces 4 old and 4 new lines, but 2 and 2 follow", '"@@ -1,2 +1,2 @@"', "'*** Update File: n.conf'"],
      line: 3,
    },
    {
      name: "a binary git diff",
      text: P("diff --git a/logo.png b/logo.png", "index 1..2 100644", "Binary files a/logo.png and b/logo.png differ"),
      includes: ["binary diff"],
      line: 3,
    },
    {
      name: "an add from /dev/null with a context line",
      text: P("--- /dev/null", "+++ b/new.txt", "@@ -0,0 +1,2 @@", "+a", " b"),
      includes: ["a new file (--- /dev/null) has only '+' lines"],
      line: 5,
    },
    {
      name: "a pure rename without a hunk",
      text: P("diff --git a/a.txt b/b.txt", "similarity index 100%", "rename from a.txt", "rename to b.txt"),
      includes: ["'*** Update File: a.txt', '*** Move to: b.txt'"],
      line: 1,
    },
    {
      name: "a hunk that changes nothing",
      text: P("--- a/x", "+++ b/x", "@@ -1,2 +1,2 @@", " a", " b"),
      includes: ["changes nothing"],
      line: 3,
    },
  ];
  for (const c of refused) {
    test(`refused: ${c.name}`, () => {
      const e = errors(c.text);
      expect(e[0]!.code).toBe("invalid_patch");
      expect(e[0]!.patchLine).toBe(c.line);
      for (const s of c.includes) expect(e[0]!.message).toContain(s);
    });
  }

  test("a bare diff whose short last hunk is explained by blank lines trimmed from the end is accepted", () => {
    const r = ok(P("--- a/x", "+++ b/x", "@@ -1,3 +1,3 @@", "-a", "+b", " c", " ", ""));
    expect((r.ops[0] as { chunks: Chunk[] }).chunks[0]!.lines).toEqual([del("a", 4), ins("b", 5), ctx("c", 6)]);
  });

  test("a bare diff with a longer last hunk than announced is accepted (only a shortfall looks cut off)", () => {
    ok(P("--- a/x", "+++ b/x", "@@ -1 +1 @@", " z", "-a", "+b"));
  });
});

describe("N:hh| line-id prefixes copied from a read with line ids", () => {
  test("every old-side id matches and the numbers run on: all prefixes go, the anchor's too, with one warning", () => {
    const r = ok(P(
      "*** Begin Patch",
      "*** Update File: n.conf",
      `@@ ${id("server {", 1)}`,
      ` ${id("    listen 80;", 2)}`,
      `-${id("    server_name a;", 3)}`,
      `+${id("    server_name a;", 3).replace("a;", "b;")}`,
      "",
      ` ${id("    root /srv;", 5)}`,
      "*** End Patch",
    ));
    expect(r.ops).toEqual([{
      type: "update",
      path: "n.conf",
      chunks: [chunk(3, [ctx("    listen 80;", 4), del("    server_name a;", 5), ins("    server_name b;", 6), ctx("", 7), ctx("    root /srv;", 8)], ["server {"])],
      patchLine: 2,
    }]);
    expect(codes(r.warnings)).toEqual(["line_ids_stripped"]);
    expect(r.warnings[0]!.message).toContain(`such as "${formatLineId("    listen 80;", 2)}|"`);
  });

  const kept: { name: string; lines: string[] }[] = [
    { name: "an id that does not match its line's text", lines: [` ${formatLineId("other", 2)}|    listen 80;`, `-${id("    server_name a;", 3)}`, "+x"] },
    { name: "numbers that do not run on", lines: [` ${id("    listen 80;", 2)}`, `-${id("    server_name a;", 7)}`, "+x"] },
    { name: "only some old-side lines have a prefix", lines: [" plain line", `-${id("    server_name a;", 3)}`, "+x"] },
  ];
  for (const c of kept) {
    test(`kept as sent (the planner names the prefix if the chunk fails): ${c.name}`, () => {
      const r = ok(P("*** Begin Patch", "*** Update File: n.conf", "@@", ...c.lines, "*** End Patch"));
      const lines = (r.ops[0] as { chunks: Chunk[] }).chunks[0]!.lines;
      expect(lines.map((l) => l.text)).toEqual(c.lines.map((l) => l.slice(1)));
      expect(codes(r.warnings)).not.toContain("line_ids_stripped");
    });
  }

  test("a pure insertion: '+' prefixes go only when every one matches its text", () => {
    const proven = ok(P("*** Begin Patch", "*** Update File: f", "@@ a", `+${id("x", 4)}`, `+${id("y", 5)}`, "*** End Patch"));
    expect((proven.ops[0] as { chunks: Chunk[] }).chunks[0]!.lines.map((l) => l.text)).toEqual(["x", "y"]);
    const unproven = ok(P("*** Begin Patch", "*** Update File: f", "@@ a", `+${id("x", 4)}`, `+${formatLineId("z", 5)}|y`, "*** End Patch"));
    expect((unproven.ops[0] as { chunks: Chunk[] }).chunks[0]!.lines.map((l) => l.text)).toEqual([id("x", 4), `${formatLineId("z", 5)}|y`]);
  });

  test("an Add File copied whole from a read (ids 1, 2, 3 matching) loses them; any other Add keeps its text", () => {
    const whole = ok(P("*** Begin Patch", "*** Add File: copy.txt", `+${id("a", 1)}`, `+${id("", 2)}`, `+${id("c", 3)}`, "*** End Patch"));
    expect(whole.ops).toEqual([{ type: "add", path: "copy.txt", lines: ["a", "", "c"], patchLine: 2 }]);
    expect(codes(whole.warnings)).toEqual(["line_ids_stripped"]);
    const partial = ok(P("*** Begin Patch", "*** Add File: notes.txt", `+${id("a", 4)}`, "*** End Patch"));
    expect(partial.ops).toEqual([{ type: "add", path: "notes.txt", lines: [id("a", 4)], patchLine: 2 }]);
  });
});
