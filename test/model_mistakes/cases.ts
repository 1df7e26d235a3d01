/**
 * Model mistakes, as a table (issue 15): what models actually sent to the
 * MCP server and the CLI in a trial on real files, each with the exact
 * input, the expected code and location, and the next step the failure
 * must name — or, for the round-2 leniencies, the exact result and the
 * warning. test/model_mistakes/model_mistakes.test.ts runs every row
 * through planPatch, applyPatch (LocalShell), the MCP server (SDK client,
 * in-process) and the CLI (a real process).
 *
 * `why` quotes the bullet of the "Why" a row stands for.
 *
 * @module
 */
import { formatLineId } from "../../lib/text/line_id.ts";
import type { FailureCode, WarningCode } from "../../lib/types.ts";

/** The front ends a row runs through. */
export type FrontEnd = "plan" | "apply" | "mcp" | "cli";
export const FRONT_ENDS: readonly FrontEnd[] = ["plan", "apply", "mcp", "cli"];

/** Words that must not appear in a front end's messages: another front end's vocabulary. */
export const FOREIGN_WORDS: Record<FrontEnd, readonly string[]> = {
  plan: ["read_file", "file_sha256", "content_sha256", "--expect", "--accept-new-host-key"],
  apply: ["read_file", "file_sha256", "content_sha256", "--expect", "--accept-new-host-key"],
  mcp: ["expectedSha256", "--expect", "hostKeyPolicy:", "call reconcile"],
  cli: ["read_file", "file_sha256", "expected_sha256 {", "expectedSha256", "hostKeyPolicy:"],
};

/** The state of the root before the mistake, as path → text (UTF-8) or bytes (legacy encodings). */
export type Files = Record<string, string | Uint8Array>;

/** What a failing row expects of the first failure. */
export interface ExpectedFailure {
  code: FailureCode;
  path?: string;
  hunk?: number;
  /** 1-based file line the failure points at. */
  line?: number;
  patchLine?: number;
  /** Substrings every front end's message contains (the diagnosis and the next step). */
  says: string[];
  /** More substrings for one front end (its words for the next step). */
  frontEnd?: Partial<Record<FrontEnd, string[]>>;
  /** Other fields of the failure, compared by deep equality (`toMatchObject`). */
  fields?: Record<string, unknown>;
}

/** One mistake. */
export interface Mistake {
  why: string;
  name: string;
  files: Files;
  /** The patch as the model sent it; a function gets the root (absolute path mistakes). */
  patch: string | ((root: string) => string);
  /** `expected_sha256` as sent; a function gets the files as they were first read. */
  expectedSha256?: (files: Files) => Record<string, string>;
  /** Apply the same request once first (it succeeds), then send it again: the resend loop. */
  resend?: boolean;
  /** The request's encoding (`encoding`, `--encoding`), when the row needs one. */
  encoding?: "latin1" | "windows-1252";
  /** Front ends to run through (default all). */
  only?: readonly FrontEnd[];
  /** A failure, or success with these files afterwards and these warnings. */
  expect: ExpectedFailure | ExpectedSuccess;
}

/** What a successful row expects. */
export interface ExpectedSuccess {
  ok: true;
  /** Every file of the root afterwards. */
  files: Files;
  warnings: WarningCode[];
  /** The per-file ops of the report, in order, when the row checks them. */
  ops?: string[];
  /** Substrings of the warnings' messages, per front end (tense differs before and after a commit). */
  warningSays?: Partial<Record<FrontEnd, string[]>>;
}

const P = (...lines: string[]): string => lines.join("\n") + "\n";
/** Text as latin-1 bytes (every character below U+0100). */
const latin1 = (text: string): Uint8Array => Uint8Array.from([...text].map((c) => c.charCodeAt(0)));
const LATIN1_INI = latin1("[kunde]\r\nname = Müller\r\nstadt = Köln\r\n");
const id = (text: string, n: number): string => `${formatLineId(text, n)}|${text}`;

const NGINX = "server {\n    listen 80;\n    server_name example.org;\n    root /srv/site;\n}\n";
const TAX = [
  "TAX_RATE = 0.2",
  "",
  "def total_for_vendor(vendor, items):",
  "    subtotal = sum(i.price for i in items)",
  "    return subtotal * (1 + TAX_RATE)",
  "",
  "def total_for_client(client, items):",
  "    subtotal = sum(i.price for i in items)",
  "    return subtotal",
  "",
].join("\n");
const MENU_JS = "function render(items) {\n    let html = \"\";\n    return html;\n}\n";

/** The rows. */
export const MISTAKES: Mistake[] = [
  // --- one- and two-line chunks, anchors (issue 15 item 1, lib/match) ----------------------
  {
    why: "One- and two-line chunks get no closest region: `-    listen 8080;` (file: `    listen 80;`)",
    name: "a one-line chunk with a typo: the closest line and the difference",
    files: { "nginx.conf": NGINX },
    patch: P("*** Begin Patch", "*** Update File: nginx.conf", "@@", "-    listen 8080;", "+    listen 9090;", "*** End Patch"),
    expect: {
      code: "context_mismatch",
      path: "nginx.conf",
      hunk: 1,
      line: 2,
      says: ["The closest region is line 2", "-     listen 8080;\n  +     listen 80;", "Copy the file's current lines exactly as shown above"],
      fields: { closest: { startLine: 2, endLine: 2, difference: "content" } },
      frontEnd: { mcp: ['call read_file {"path": "nginx.conf", "offset": 1, "limit": 5}'], plan: ["read lines 1–5 of nginx.conf again"] },
    },
  },
  {
    why: "… and `TAX_RATES` (file: `TAX_RATE`) both say \"Nothing similar was found\"",
    name: "a one-line chunk naming a constant one letter off: the closest line",
    files: { "tax.py": TAX },
    patch: P("*** Begin Patch", "*** Update File: tax.py", "@@", "-TAX_RATES = 0.2", "+TAX_RATES = 0.25", "*** End Patch"),
    expect: { code: "context_mismatch", path: "tax.py", hunk: 1, line: 1, says: ["The closest region is line 1", "+ TAX_RATE = 0.2"], fields: { closest: { startLine: 1 } } },
  },
  {
    why: "`@@ def total_for_supplier(supplier, items):` → \"No similar line was found\" although `def total_for_vendor(vendor, items):` is in the file",
    name: "an anchor that differs by a word: the similar line is listed",
    files: { "tax.py": TAX },
    patch: P("*** Begin Patch", "*** Update File: tax.py", "@@ def total_for_supplier(supplier, items):", "-    subtotal = sum(i.price for i in items)", "+    subtotal = sum(i.price for i in items if i.price)", "*** End Patch"),
    expect: {
      code: "anchor_not_found",
      path: "tax.py",
      hunk: 1,
      line: 3,
      says: ["Lines that look similar:", `${formatLineId("def total_for_vendor(vendor, items):", 3)}  def total_for_vendor(vendor, items):`, "put one of these lines after @@"],
    },
  },
  // --- N:hh| prefixes copied from read_file -----------------------------------------------
  {
    why: "`N:hh|` prefixes copied from `read_file` into a patch → \"Nothing similar was found\"",
    name: "line ids copied with the lines: stripped, applied",
    files: { "nginx.conf": NGINX },
    patch: P("*** Begin Patch", "*** Update File: nginx.conf", "@@", ` ${id("server {", 1)}`, `-${id("    listen 80;", 2)}`, `+${id("    listen 80;", 2).replace("80;", "8080;")}`, "*** End Patch"),
    expect: { ok: true, files: { "nginx.conf": NGINX.replace("listen 80;", "listen 8080;") }, warnings: ["line_ids_stripped"] },
  },
  {
    why: "`N:hh|` prefixes copied from `read_file` into a patch → \"Nothing similar was found\", no word about the prefix",
    name: "line ids that do not match their lines: the failure names the prefix",
    files: { "nginx.conf": NGINX },
    patch: P("*** Begin Patch", "*** Update File: nginx.conf", "@@", " 1:00|server {", "-2:00|    listen 80;", "+    listen 8080;", "*** End Patch"),
    expect: {
      code: "context_mismatch",
      path: "nginx.conf",
      hunk: 1,
      patchLine: 4,
      says: ['line-id prefix such as "1:00|"', 'remove the "N:hh|" prefix from every line of the chunk'],
    },
  },
  // --- unified diffs and fences -------------------------------------------------------------
  {
    why: "A plain unified diff (`--- a/x`, `+++ b/x`, `@@ -1,4 +1,4 @@`) gets three generic errors and never \"write `*** Update File: x`\"",
    name: "a git-style unified diff: converted, applied by context",
    files: { "nginx.conf": NGINX },
    patch: P("--- a/nginx.conf", "+++ b/nginx.conf", "@@ -1,4 +1,4 @@", " server {", "-    listen 80;", "+    listen 8080;", "     server_name example.org;", "     root /srv/site;"),
    expect: { ok: true, files: { "nginx.conf": NGINX.replace("listen 80;", "listen 8080;") }, warnings: ["unified_diff_converted"] },
  },
  {
    why: "A plain unified diff … gets three generic errors and never \"write `*** Update File: x`\"",
    name: "a unified diff whose counts are short (maybe cut off): one error with the Codex form",
    files: { "nginx.conf": NGINX },
    patch: P("--- a/nginx.conf", "+++ b/nginx.conf", "@@ -1,4 +1,4 @@", " server {", "-    listen 80;", "+    listen 8080;"),
    expect: {
      code: "invalid_patch",
      path: "nginx.conf",
      patchLine: 3,
      says: ["may have been cut off", '"@@ -1,2 +1,2 @@"', "'*** Update File: nginx.conf'"],
    },
  },
  {
    why: "… wrapping it in Begin/End fails again",
    name: "a unified diff wrapped in Begin/End: converted, applied",
    files: { "nginx.conf": NGINX },
    patch: P("*** Begin Patch", "--- a/nginx.conf", "+++ b/nginx.conf", "@@ -1,4 +1,4 @@", " server {", "-    listen 80;", "+    listen 8080;", "*** End Patch"),
    expect: { ok: true, files: { "nginx.conf": NGINX.replace("listen 80;", "listen 8080;") }, warnings: ["unified_diff_converted"] },
  },
  {
    why: "A Markdown-fenced patch is refused while a heredoc wrapper is stripped",
    name: "a patch in a Markdown fence: stripped, applied",
    files: { "nginx.conf": NGINX },
    patch: P("```diff", "*** Begin Patch", "*** Update File: nginx.conf", "@@ server {", "-    listen 80;", "+    listen 8080;", "*** End Patch", "```"),
    expect: { ok: true, files: { "nginx.conf": NGINX.replace("listen 80;", "listen 8080;") }, warnings: ["markdown_fence_stripped"] },
  },
  {
    why: "A plain unified diff … (the diff's file headers kept under a Codex section header)",
    name: "--- a/x / +++ b/x under *** Update File: read as Codex body lines, diagnosed as diff headers",
    files: { "nginx.conf": NGINX },
    patch: P("*** Begin Patch", "*** Update File: nginx.conf", "--- a/nginx.conf", "+++ b/nginx.conf", "@@ -1,4 +1,4 @@", " server {", "-    listen 80;", "+    listen 8080;", "*** End Patch"),
    expect: {
      code: "context_mismatch",
      path: "nginx.conf",
      hunk: 1,
      patchLine: 3,
      says: ["look like the file headers of a unified diff", "remove these two lines"],
    },
  },
  // --- context lines without their ' ' -------------------------------------------------------
  {
    why: "Context lines missing their leading space: only the first bad line is reported, and indented ones are silently read one space short",
    name: "unmarked context lines, one at column 0 and one indented: all named, the reading that matches said",
    files: { "tax.py": TAX },
    patch: P(
      "*** Begin Patch",
      "*** Update File: tax.py",
      "@@",
      "def total_for_client(client, items):",
      "    subtotal = sum(i.price for i in items)",
      "-    return subtotal",
      "+    return subtotal * (1 + TAX_RATE)",
      "*** End Patch",
    ),
    expect: {
      code: "invalid_patch",
      path: "tax.py",
      hunk: 1,
      line: 7,
      says: ["patch line 4 has no ' ', '-' or '+' marker", "indented context line 5, which was read one space short", "matches tax.py exactly at lines 7–9", "put ' ' at the start of patch lines 4 and 5"],
      fields: { unmarkedLines: [4, 5] },
    },
  },
  {
    why: "Context lines missing their leading space: only the first bad line is reported …",
    name: "unmarked context lines that match the file in no reading: every one named in one failure, the indented ones as suspects",
    files: { "tax.py": TAX.replaceAll("i.price for i in", "item.price for item in") },
    patch: P(
      "*** Begin Patch",
      "*** Update File: tax.py",
      "@@",
      "def total_for_client(client, items):",
      "    subtotal = sum(i.price for i in items)",
      "-    return subtotal",
      "+    return subtotal * (1 + TAX_RATE)",
      "*** End Patch",
    ),
    expect: {
      code: "invalid_patch",
      path: "tax.py",
      hunk: 1,
      patchLine: 4,
      says: ['line 4 "def total_for_client(client, items):"', "The indented context line 5 may have lost its ' ' too"],
      fields: { unmarkedLines: [4] },
    },
  },
  {
    why: "… indented ones are silently read one space short, so the next try fails on indentation",
    name: "every context line indented and unmarked (Python): the lost markers are named, not an indentation mismatch",
    files: { "tax.py": TAX },
    patch: P(
      "*** Begin Patch",
      "*** Update File: tax.py",
      "@@ def total_for_client(client, items):",
      "    subtotal = sum(i.price for i in items)",
      "-    return subtotal",
      "+    return subtotal * (1 + TAX_RATE)",
      "*** End Patch",
    ),
    expect: {
      code: "context_mismatch",
      path: "tax.py",
      hunk: 1,
      line: 8,
      says: ["context line 4 looks like it lost the leading ' ' marker", "matches tax.py exactly at lines 8–9", "put ' ' at the start of patch line 4"],
      fields: { unmarkedLines: [4] },
    },
  },
  {
    why: "… indented ones are silently read one space short (a re-indent that would have applied wrongly)",
    name: "unmarked indented context around an insertion (JavaScript): refused instead of re-indenting the + line by one space",
    files: { "menu.js": MENU_JS },
    patch: P("*** Begin Patch", "*** Update File: menu.js", "@@ function render(items) {", "    let html = \"\";", "+    html += \"<ul>\";", "    return html;", "*** End Patch"),
    expect: {
      code: "context_mismatch",
      path: "menu.js",
      hunk: 1,
      line: 2,
      says: ["context lines 4 and 6 look like they lost the leading ' ' marker", "would have been re-indented", "put ' ' at the start of patch lines 4 and 6"],
    },
  },
  {
    why: "A chunk that matches nothing in a tiny file (\"Nothing similar was found\") makes the model read the file, although it is one or a few lines (issue 29.4)",
    name: "a chunk that matches nothing in a 3-line file: the whole file with line ids, no re-read",
    files: { ".tool-versions": "nodejs 20.11.0\npython 3.12.1\nterraform 1.7.4\n" },
    patch: P("*** Begin Patch", "*** Update File: .tool-versions", "@@", "-engines: { node: \">=18\" }", "+engines: { node: \">=20\" }", "*** End Patch"),
    expect: {
      code: "context_mismatch",
      path: ".tool-versions",
      hunk: 1,
      says: [
        "Nothing similar was found",
        "The whole file (3 lines), with line ids:",
        `  ${formatLineId("nodejs 20.11.0", 1)}  nodejs 20.11.0\n  ${formatLineId("python 3.12.1", 2)}  python 3.12.1\n  ${formatLineId("terraform 1.7.4", 3)}  terraform 1.7.4`,
        "Next step: rebuild the chunk from the file's lines above",
      ],
    },
  },
  // --- paths ------------------------------------------------------------------------------------
  {
    why: "An absolute path inside the root gets a generic example instead of the root-relative path",
    name: "an absolute path inside the root: the root-relative path to write",
    files: { "conf/nginx.conf": NGINX },
    patch: (root) => P("*** Begin Patch", `*** Update File: ${root}/conf/nginx.conf`, "@@ server {", "-    listen 80;", "+    listen 8080;", "*** End Patch"),
    only: ["apply", "mcp", "cli"],
    expect: {
      code: "invalid_path",
      patchLine: 2,
      says: ["lies inside the root", 'so write "*** Update File: conf/nginx.conf"'],
      fields: { suggestedPath: "conf/nginx.conf" },
    },
  },
  {
    why: "Wrong path casing (`src/Parse.ts` for `src/parse.ts`) cost 3 calls: the answer led with Add and never named `src/parse.ts` (issue 29.1)",
    name: "a path in the wrong letter case: did you mean the existing file, with the exact header; no Add offered",
    files: { "src/parse.ts": "export const x = 1;\n" },
    patch: P("*** Begin Patch", "*** Update File: src/Parse.ts", "@@", "-export const x = 1;", "+export const x = 2;", "*** End Patch"),
    only: ["apply", "mcp", "cli"],
    expect: {
      code: "not_found",
      path: "src/Parse.ts",
      says: ["not_found: did you mean `src/parse.ts`?", 'Write the section header as "*** Update File: src/parse.ts"', "differs from it only in letter case"],
      frontEnd: {
        apply: ["Next step: send the patch again with that header."],
        mcp: ["Next step: call apply_patch again with that header"],
        cli: ["Next step: fix that header in the patch file and run the command again."],
      },
      fields: { closestPaths: ["src/parse.ts"] },
    },
  },
  {
    why: "A stale read always costs a re-read plus a resend, even when the other writer changed a different part of the file and the chunk still applies uniquely to the current text (issue 29.3)",
    name: "a stale expected SHA-256 whose chunk still applies exactly: current SHA-256 and the one-call path, nothing applied",
    files: { "nginx.conf": NGINX.replace("    root /srv/site;\n", "    root /srv/site;\n    index index.html;\n") },
    patch: P("*** Begin Patch", "*** Update File: nginx.conf", "@@ server {", "-    listen 80;", "+    listen 8080;", "*** End Patch"),
    expectedSha256: () => ({ "nginx.conf": sha(NGINX) }),
    expect: {
      code: "precondition_failed",
      path: "nginx.conf",
      says: ["the file changed since your read", "Your chunks still apply to its current text, each exactly and in one place only (chunk 1 at line 2)", "Nothing was applied."],
      fields: { currentSha256: sha(NGINX.replace("    root /srv/site;\n", "    root /srv/site;\n    index index.html;\n")) },
      frontEnd: {
        plan: [`send the same patch again with this SHA-256 (pass expectedSha256 {"nginx.conf": "${sha(NGINX.replace("    root /srv/site;\n", "    root /srv/site;\n    index index.html;\n"))}"})`],
        apply: [`send the same patch again with this SHA-256 (pass expectedSha256 {"nginx.conf": "${sha(NGINX.replace("    root /srv/site;\n", "    root /srv/site;\n    index index.html;\n"))}"})`],
        mcp: [`send the same patch again with this SHA-256 (send expected_sha256 {"nginx.conf": "${sha(NGINX.replace("    root /srv/site;\n", "    root /srv/site;\n    index index.html;\n"))}"})`, 'call read_file {"path": "nginx.conf", "offset": 2, "limit": 1}'],
        cli: [`send the same patch again with this SHA-256 (pass --expect nginx.conf=${sha(NGINX.replace("    root /srv/site;\n", "    root /srv/site;\n    index index.html;\n"))})`],
      },
    },
  },
  // --- resends ------------------------------------------------------------------------------------
  {
    why: "Resending a call that succeeded, with its original `expected_sha256`, says \"The file changed since you read it\"",
    name: "an Update resent with its original expected SHA-256: already applied, do not resend",
    files: { "nginx.conf": NGINX },
    patch: P("*** Begin Patch", "*** Update File: nginx.conf", "@@ server {", "-    listen 80;", "+    listen 8080;", "*** End Patch"),
    expectedSha256: (files) => ({ "nginx.conf": sha(files["nginx.conf"]!) }),
    resend: true,
    expect: {
      code: "precondition_failed",
      path: "nginx.conf",
      says: ["already holds this patch's result", "do not resend this patch: it is already applied"],
      fields: { alreadyAppliedAt: 2 },
      frontEnd: {
        plan: [`pass expectedSha256 {"nginx.conf": "${sha(NGINX.replace("80;", "8080;"))}"}`],
        apply: [`pass expectedSha256 {"nginx.conf": "${sha(NGINX.replace("80;", "8080;"))}"}`],
        mcp: [`send expected_sha256 {"nginx.conf": "${sha(NGINX.replace("80;", "8080;"))}"}`],
        cli: [`pass --expect nginx.conf=${sha(NGINX.replace("80;", "8080;"))}`],
      },
    },
  },
  {
    why: "Resending a call that succeeded … (an Add)",
    name: "an Add resent: the file already has exactly that content",
    files: { "keep.txt": "x\n" },
    patch: P("*** Begin Patch", "*** Add File: notes/todo.md", "+# Todo", "+- ship", "*** End Patch"),
    resend: true,
    expect: { code: "already_exists", path: "notes/todo.md", says: ["already exists with exactly the content this section adds", "do not resend this section"] },
  },
  {
    why: "Resending a call that succeeded … (a Move)",
    name: "an Update + Move resent: the destination already holds the result",
    files: { "old.conf": NGINX },
    patch: P("*** Begin Patch", "*** Update File: old.conf", "*** Move to: new.conf", "@@ server {", "-    listen 80;", "+    listen 8080;", "*** End Patch"),
    resend: true,
    expect: { code: "not_found", path: "old.conf", says: ["the move looks already applied", "do not resend this section"], fields: { alreadyAppliedAt: 2 } },
  },
  // --- tense and blocks ---------------------------------------------------------------------------
  {
    why: "`parents_created` says \"will be created\" after the commit",
    name: "an Add into a new directory: the plan says will be created, the commit says was created",
    files: { "keep.txt": "x\n" },
    patch: P("*** Begin Patch", "*** Add File: docs/guide/intro.md", "+# Intro", "*** End Patch"),
    expect: {
      ok: true,
      files: { "keep.txt": "x\n", "docs/guide/intro.md": "# Intro\n" },
      warnings: ["parents_created"],
      warningSays: {
        plan: ["docs/guide/ does not exist yet; it will be created."],
        apply: ["docs/guide/ did not exist; it was created for docs/guide/intro.md."],
        mcp: ["docs/guide/ did not exist; it was created for docs/guide/intro.md."],
        cli: ["docs/guide/ did not exist; it was created for docs/guide/intro.md."],
      },
    },
  },
  {
    why: "`ambiguous_hunk` candidates show only their first line, not which function each is in",
    name: "an ambiguous chunk: each candidate names its enclosing block",
    files: { "tax.py": TAX },
    patch: P("*** Begin Patch", "*** Update File: tax.py", "@@", "-    subtotal = sum(i.price for i in items)", "+    subtotal = sum(i.price for i in items if i.price)", "*** End Patch"),
    expect: {
      code: "ambiguous_hunk",
      path: "tax.py",
      hunk: 1,
      line: 4,
      says: [`(in ${formatLineId("def total_for_vendor(vendor, items):", 3)}  def total_for_vendor(vendor, items):)`, `(in ${formatLineId("def total_for_client(client, items):", 7)}  def total_for_client(client, items):)`],
      fields: {
        candidates: [
          { line: 4, enclosing: { line: 3, text: "def total_for_vendor(vendor, items):" } },
          { line: 8, enclosing: { line: 7, text: "def total_for_client(client, items):" } },
        ],
      },
    },
  },
  {
    why: "Delete + Add of the same path in one patch is refused (`duplicate_path`) and the advice is two patches (issue 29)",
    name: "a whole-file rewrite as Delete then Add: one replace, mode kept",
    files: { "app.ini": "[main]\ndebug = 1\n" },
    patch: P("*** Begin Patch", "*** Delete File: app.ini", "*** Add File: app.ini", "+[main]", "+debug = 0", "*** End Patch"),
    expect: { ok: true, files: { "app.ini": "[main]\ndebug = 0\n" }, warnings: [], ops: ["replace"] },
  },
  {
    why: "… (the documented `*** Replace File:` spelling; a CRLF file stays CRLF)",
    name: "*** Replace File: of a CRLF file: rewritten whole, CRLF kept",
    files: { "win.ini": "[main]\r\ndebug = 1\r\n" },
    patch: P("*** Begin Patch", "*** Replace File: win.ini", "+[main]", "+debug = 0", "+port = 80", "*** End Patch"),
    expect: { ok: true, files: { "win.ini": "[main]\r\ndebug = 0\r\nport = 80\r\n" }, warnings: [], ops: ["replace"] },
  },
  {
    why: "… Add then Delete of one path: refused, with the two spellings of a replace",
    name: "Add then Delete of one path: duplicate_path naming Replace File",
    files: { "app.ini": "[main]\n" },
    patch: P("*** Begin Patch", "*** Add File: app.ini", "+[main]", "*** Delete File: app.ini", "*** End Patch"),
    expect: { code: "duplicate_path", path: "app.ini", patchLine: 4, says: ["changes nothing", "'*** Replace File: app.ini'"] },
  },
  {
    why: "… a replace of a file that is not there",
    name: "Replace File of a missing path: not_found saying to use Add",
    files: { "keep.txt": "x\n" },
    patch: P("*** Begin Patch", "*** Replace File: new.ini", "+a = 1", "*** End Patch"),
    expect: { code: "not_found", path: "new.ini", patchLine: 2, says: ['use "*** Add File: new.ini" with the same "+" lines'] },
  },
  {
    why: "The peer overwrote an existing file on Add; ours refuses, and now names the one-step rewrite",
    name: "an Add of an existing file: already_exists naming Replace File",
    files: { "app.ini": "[main]\n" },
    patch: P("*** Begin Patch", "*** Add File: app.ini", "+[main]", "+debug = 0", "*** End Patch"),
    expect: { code: "already_exists", path: "app.ini", says: ['write "*** Replace File: app.ini" in place of the Add header'] },
  },
  {
    why: "Non-UTF-8 files (latin-1) are refused clearly, but they cannot be edited at all (issue 29)",
    name: "a latin-1 file without encoding: invalid_utf8 naming the encoding option in each front end's words",
    files: { "kunde.ini": LATIN1_INI },
    patch: P("*** Begin Patch", "*** Update File: kunde.ini", "@@", "-stadt = Köln", "+stadt = Bonn", "*** End Patch"),
    expect: {
      code: "invalid_utf8",
      path: "kunde.ini",
      line: 2,
      says: ["first bad byte 0xFC at offset 17, line 2", '(or "windows-1252")'],
      frontEnd: {
        plan: ['send the request again with encoding: "latin1"'],
        apply: ['send the request again with encoding: "latin1"'],
        mcp: ['send the request again with the argument "encoding": "latin1"'],
        cli: ["send the request again with --encoding latin1"],
      },
      fields: { hints: [{ kind: "option", option: "encoding", value: "latin1" }] },
    },
  },
  {
    why: "… with `encoding: \"latin1\"` the file is edited, every other byte kept",
    name: "a latin-1 CRLF file with encoding latin1: applied byte-exactly",
    files: { "kunde.ini": LATIN1_INI },
    encoding: "latin1",
    patch: P("*** Begin Patch", "*** Update File: kunde.ini", "@@", " name = Müller", "-stadt = Köln", "+stadt = Düsseldorf", "*** End Patch"),
    expect: { ok: true, files: { "kunde.ini": latin1("[kunde]\r\nname = Müller\r\nstadt = Düsseldorf\r\n") }, warnings: [] },
  },
  {
    why: "… a character the encoding has no byte for is refused, never replaced",
    name: "a + line with € under latin1: unencodable_character naming windows-1252",
    files: { "kunde.ini": LATIN1_INI },
    encoding: "latin1",
    patch: P("*** Begin Patch", "*** Update File: kunde.ini", "@@", "-stadt = Köln", "+preis = 5 €", "*** End Patch"),
    expect: {
      code: "unencodable_character",
      path: "kunde.ini",
      patchLine: 5,
      says: ['has the character "€" (U+20AC) at column 11, which latin1 cannot represent', "nothing was applied"],
      frontEnd: {
        plan: ['send encoding: "windows-1252" instead'],
        apply: ['send encoding: "windows-1252" instead'],
        mcp: ['send the argument "encoding": "windows-1252" instead'],
        cli: ["send --encoding windows-1252 instead"],
      },
      fields: { unencodable: { character: "€", codePoint: 0x20ac, encoding: "latin1", column: 11 } },
    },
  },
];

import { createHash } from "node:crypto";
function sha(text: string | Uint8Array): string {
  return createHash("sha256").update(text).digest("hex");
}
