/**
 * Scenarios 100–119: the round-2 leniencies (SPEC §3: a Markdown fence, a
 * unified / git diff converted to sections, `N:hh|` line ids copied from a
 * read) at 100–109, and the round-2 diagnoses (SPEC §5.4) at 110–119.
 *
 * @module
 */
import { formatLineId } from "../../lib/text/line_id.ts";
import { lf, patch, type ScenarioCase, sha256Of } from "./_case.ts";

const conf = lf("server {", "    listen 80;", "    server_name example.org;", "    root /srv/site;", "}");
const id = (text: string, n: number): string => `${formatLineId(text, n)}|${text}`;
const py = lf("def a():", "    x = 1", "    return x", "", "def b():", "    y = 2", "    return y");

/** The round-2 scenarios. */
export const ROUND2_CASES: ScenarioCase[] = [
  {
    id: 100,
    name: "markdown_fence_stripped",
    readme: "A Markdown code fence around the patch (here around a heredoc, as chat models wrap a shell command) is stripped like the heredoc, with a warning each (§3 round 2).",
    input: { "site.conf": conf },
    patch: lf("```bash", "apply_patch <<'EOF'", "*** Begin Patch", "*** Update File: site.conf", "@@ server {", "-    listen 80;", "+    listen 8080;", "*** End Patch", "EOF", "```"),
    expected: { "site.conf": conf.replace("listen 80;", "listen 8080;") },
    warnings: ["markdown_fence_stripped", "heredoc_stripped"],
  },
  {
    id: 101,
    name: "git_diff_converted",
    readme:
      "A `git diff` is converted to Codex sections (§3 round 2): `a/` `b/` prefixes dropped, an Update per `---`/`+++` pair located by context (its hunk numbers are deliberately wrong here and never used), `/dev/null` for Add and Delete, `rename from/to` as a Move.",
    input: { "site.conf": conf, "old.txt": lf("bye"), "lib/v1.py": lf("VERSION = 1", "NAME = 'x'") },
    patch: lf(
      "diff --git a/site.conf b/site.conf",
      "index 83db48f..bf269f4 100644",
      "--- a/site.conf",
      "+++ b/site.conf",
      "@@ -40,3 +40,3 @@ server {",
      "     listen 80;",
      "-    server_name example.org;",
      "+    server_name example.org www.example.org;",
      "     root /srv/site;",
      "diff --git a/docs/new.md b/docs/new.md",
      "new file mode 100644",
      "--- /dev/null",
      "+++ b/docs/new.md",
      "@@ -0,0 +1,2 @@",
      "+# New",
      "+text",
      "diff --git a/old.txt b/old.txt",
      "deleted file mode 100644",
      "--- a/old.txt",
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "-bye",
      "diff --git a/lib/v1.py b/lib/v2.py",
      "similarity index 60%",
      "rename from lib/v1.py",
      "rename to lib/v2.py",
      "--- a/lib/v1.py",
      "+++ b/lib/v2.py",
      "@@ -1,2 +1,2 @@",
      "-VERSION = 1",
      "+VERSION = 2",
      " NAME = 'x'",
    ),
    expected: {
      "site.conf": conf.replace("example.org;", "example.org www.example.org;"),
      "docs/new.md": lf("# New", "text"),
      "lib/v2.py": lf("VERSION = 2", "NAME = 'x'"),
    },
    warnings: ["unified_diff_converted", "parents_created"],
  },
  {
    id: 102,
    name: "unified_diff_in_begin_end",
    readme: "A unified diff wrapped in `*** Begin Patch` / `*** End Patch` is converted too; its counts are not checked there (End Patch proves the end), so wrong ones are harmless (§3 round 2).",
    input: { "site.conf": conf },
    patch: patch("--- a/site.conf", "+++ b/site.conf", "@@ -1,4 +1,4 @@", " server {", "-    listen 80;", "+    listen 8080;"),
    expected: { "site.conf": conf.replace("listen 80;", "listen 8080;") },
    warnings: ["unified_diff_converted"],
  },
  {
    id: 103,
    name: "unified_diff_without_prefixes",
    readme: "`diff -u` output (no `a/` `b/`, timestamps after a tab) is converted with the paths as written (§3 round 2).",
    input: { "conf/site.conf": conf },
    patch: lf(
      "--- conf/site.conf\t2026-12-01 10:00:00.000000000 +0100",
      "+++ conf/site.conf\t2026-12-01 10:05:00.000000000 +0100",
      "@@ -2,2 +2,2 @@",
      "-    listen 80;",
      "+    listen 8080;",
      "     server_name example.org;",
    ),
    expected: { "conf/site.conf": conf.replace("listen 80;", "listen 8080;") },
    warnings: ["unified_diff_converted"],
  },
  {
    id: 104,
    name: "line_ids_stripped",
    readme:
      "`N:hh|` prefixes copied from a read with line ids are stripped when every old-side id matches its line and the numbers run on; the edited `+` line's stale id goes too (§3 round 2, §5.6).",
    input: { "site.conf": conf },
    patch: patch("*** Update File: site.conf", "@@", ` ${id("    listen 80;", 2)}`, `-${id("    server_name example.org;", 3)}`, `+${id("    server_name example.org;", 3).replace("org;", "net;")}`),
    expected: { "site.conf": conf.replace("example.org;", "example.net;") },
    warnings: ["line_ids_stripped"],
  },
  {
    id: 110,
    name: "bare_unified_diff_cut_off",
    readme:
      "A unified diff without Begin/End has no end marker: when its last hunk is shorter than its header announces it may have been cut off, so it is refused like a missing `*** End Patch`, with the corrected header and the Codex form in the message (§3 round 2).",
    input: { "site.conf": conf },
    patch: lf("--- a/site.conf", "+++ b/site.conf", "@@ -1,4 +1,4 @@", " server {", "-    listen 80;", "+    listen 8080;"),
    failure: [{
      code: "invalid_patch",
      path: "site.conf",
      patchLine: 3,
      messageIncludes: ["cut off", '"@@ -1,2 +1,2 @@"', "'*** Update File: site.conf'"],
    }],
    warnings: ["unified_diff_converted"],
  },
  {
    id: 111,
    name: "unmarked_chunk_lines_named_together",
    readme:
      "Chunk lines without a ' ', '-' or '+' marker are named in one failure per chunk, with the indented context lines that may have lost theirs too (read one space short) (§5.4 round 2). applyPatch also tries both readings against the file (test/model_mistakes).",
    input: { "app.py": py },
    patch: patch("*** Update File: app.py", "@@", "def b():", "    y = 2", "-    return y", "+    return y + 1", "zzz"),
    failure: [{
      code: "invalid_patch",
      path: "app.py",
      hunk: 1,
      patchLine: 4,
      unmarkedLines: [4, 8],
      messageIncludes: ['line 8 "zzz" of the same chunk has none either', "indented context line 5 may have lost its ' ' too"],
    }],
  },
  {
    id: 112,
    name: "indented_context_lost_markers",
    readme:
      "Indented context lines whose ' ' marker was lost are read one space short; when reading them with the marker as content matches exactly and only once, the failure says which lines lack it instead of an indentation mismatch (§5.4 round 2).",
    input: { "app.py": py },
    patch: patch("*** Update File: app.py", "@@ def b():", "    y = 2", "-    return y", "+    return y + 1"),
    failure: [{ code: "context_mismatch", path: "app.py", hunk: 1, line: 6, unmarkedLines: [4], messageIncludes: ["lost the leading ' ' marker", "put ' ' at the start of patch line 4"] }],
  },
  {
    id: 113,
    name: "diff_headers_under_update_section",
    readme:
      "Under `*** Update File:`, `--- a/x` / `+++ b/x` stay Codex body lines (delete `-- a/x`, insert `++ b/x`); when that chunk does not match, the failure says they look like diff headers to remove (§3 round 2 decision, §5.4).",
    input: { "site.conf": conf },
    patch: patch("*** Update File: site.conf", "--- a/site.conf", "+++ b/site.conf", "@@ -1,3 +1,3 @@", " server {", "-    listen 80;", "+    listen 8080;"),
    failure: [{ code: "context_mismatch", path: "site.conf", hunk: 1, patchLine: 3, messageIncludes: ["look like the file headers of a unified diff", "remove these two lines"] }],
    warnings: ["first_chunk_without_anchor"],
  },
  {
    id: 114,
    name: "line_id_prefix_not_matching_diagnosed",
    readme: "`N:hh|` prefixes whose ids do not match their lines are kept as text; when the chunk then does not match, the failure names the prefix (§3 round 2).",
    input: { "site.conf": conf },
    patch: patch("*** Update File: site.conf", "@@", " 1:00|server {", "-2:00|    listen 80;", "+    listen 8080;"),
    failure: [{ code: "context_mismatch", path: "site.conf", hunk: 1, patchLine: 4, messageIncludes: ['line-id prefix such as "1:00|"', 'remove the "N:hh|" prefix'] }],
  },
  {
    id: 115,
    name: "resend_with_original_sha_already_applied",
    readme:
      "A patch sent again after it succeeded, with its original expected SHA-256: `precondition_failed` says the current file already holds the result and not to resend, instead of \"the file changed since you read it\" (§5.4 round 2).",
    input: { "site.conf": conf.replace("listen 80;", "listen 8080;") },
    patch: patch("*** Update File: site.conf", "@@ server {", "-    listen 80;", "+    listen 8080;"),
    options: { expectedSha256: { "site.conf": sha256Of(conf) } },
    failure: [{
      code: "precondition_failed",
      path: "site.conf",
      alreadyAppliedAt: 2,
      expectedSha256: sha256Of(conf),
      actualSha256: sha256Of(conf.replace("listen 80;", "listen 8080;")),
      messageIncludes: ["already holds this patch's result", "do not resend this patch"],
    }],
  },
  {
    id: 116,
    name: "ambiguous_candidates_name_their_block",
    readme: "`ambiguous_hunk` candidates name their enclosing block, the nearest less-indented line above each (§5.4 round 2).",
    input: { "app.py": lf("def a():", "    x = 1", "    return x", "", "def b():", "    x = 1", "    return x") },
    patch: patch("*** Update File: app.py", "@@", "     x = 1", "-    return x", "+    return x + 1"),
    failure: [{ code: "ambiguous_hunk", path: "app.py", hunk: 1, candidates: [2, 6], messageIncludes: ["(in 1:26  def a():)", "(in 5:43  def b():)"] }],
  },
];
