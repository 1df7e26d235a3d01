/**
 * Scenarios 100–119: the round-2 leniencies (SPEC §3: a Markdown fence, a
 * unified / git diff converted to sections, `N:hh|` line ids copied from a
 * read) at 100–109, and the round-2 diagnoses (SPEC §5.4) at 110–119.
 *
 * @module
 */
import { formatLineId } from "../../lib/text/line_id.ts";
import { lf, patch, type ScenarioCase } from "./_case.ts";

const conf = lf("server {", "    listen 80;", "    server_name example.org;", "    root /srv/site;", "}");
const id = (text: string, n: number): string => `${formatLineId(text, n)}|${text}`;

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
      patch_line: 3,
      message_includes: ["cut off", '"@@ -1,2 +1,2 @@"', "'*** Update File: site.conf'"],
    }],
    warnings: ["unified_diff_converted"],
  },
];
