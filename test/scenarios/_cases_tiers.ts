/**
 * Scenarios 080–089: the tier ladder and where insertions go (SPEC §3, §5.1, §5.2).
 *
 * @module
 */
import { lf, patch, type ScenarioCase } from "./_case.ts";

const ini = lf("[server]", "port = 80", "", "[client]", "timeout = 5");

/** The tier and insertion scenarios. */
export const TIER_CASES: ScenarioCase[] = [
  {
    id: 80,
    name: "tier2_trailing_whitespace",
    readme:
      "Tier 2 ignores trailing whitespace; the file's own text is kept for context lines (trailing spaces and tab stay, Codex #30505) (§5.2).",
    input: { "server.conf": "listen 80;   \nserver_name example.org;\t\nroot /var/www;\n" },
    patch: patch(
      "*** Update File: server.conf",
      "@@",
      " listen 80;",
      " server_name example.org;",
      "-root /var/www;",
      "+root /srv/www;",
    ),
    expected: { "server.conf": "listen 80;   \nserver_name example.org;\t\nroot /srv/www;\n" },
    warnings: ["fuzzy_match"],
  },
  {
    id: 81,
    name: "tier3_uniform_indent_js",
    readme:
      "Tier 3 ignores leading whitespace; the match differs from the file by a uniform +4 indentation, so the `+` lines get the same +4 (§5.2).",
    input: {
      "app.js": lf("function start(ready) {", "    if (ready) {", "        launch();", "    }", "    return ready;", "}"),
    },
    patch: patch(
      "*** Update File: app.js",
      "@@",
      " if (ready) {",
      "-    launch();",
      "+    prepare();",
      "+    launch();",
      " }",
    ),
    expected: {
      "app.js": lf(
        "function start(ready) {",
        "    if (ready) {",
        "        prepare();",
        "        launch();",
        "    }",
        "    return ready;",
        "}",
      ),
    },
    warnings: ["fuzzy_match", "indentation_adjusted"],
  },
  {
    id: 82,
    name: "tier4_unicode_punctuation",
    readme:
      "Tier 4 folds Unicode punctuation: curly quotes and an en dash in the patch match the file's ASCII; the context line keeps the file's ASCII text (§5.2).",
    input: { "greet.py": lf("# Greeting module", `print("Don't panic - it's fine")`, "print('done')") },
    patch: patch(
      "*** Update File: greet.py",
      "@@",
      " # Greeting module",
      "-print(“Don’t panic – it’s fine”)",
      `+print("Don't panic: it's fine")`,
      " print(‘done’)",
    ),
    expected: { "greet.py": lf("# Greeting module", `print("Don't panic: it's fine")`, "print('done')") },
    warnings: ["fuzzy_match"],
  },
  {
    id: 83,
    name: "tier5_escaped_newline",
    readme:
      "Tier 5: a chunk whose lines were collapsed with literal `\\n` is unescaped (both sides) and applied because that matches uniquely (§5.2).",
    input: { "setup.py": lf("def setup():", "    a = 1", "    b = 2", "    return a + b") },
    patch: patch(
      "*** Update File: setup.py",
      "@@",
      " def setup():",
      String.raw`-    a = 1\n    b = 2`,
      String.raw`+    a = 10\n    b = 20`,
      "     return a + b",
    ),
    expected: { "setup.py": lf("def setup():", "    a = 10", "    b = 20", "    return a + b") },
    warnings: ["escaped_literals_recovered"],
  },
  {
    id: 84,
    name: "exact_tier_wins_over_fuzzy",
    readme:
      "Candidates come from the first tier that finds any (§5.1): `retries: 3` matches line 3 exactly, so the indented line 2 (a tier-3 match) is not a second candidate.",
    input: { "conf.yaml": lf("defaults:", "  retries: 3", "retries: 3") },
    patch: patch("*** Update File: conf.yaml", "@@", "-retries: 3", "+retries: 5"),
    expected: { "conf.yaml": lf("defaults:", "  retries: 3", "retries: 5") },
  },
  {
    id: 85,
    name: "pure_insertion_after_anchor",
    readme: "A pure insertion under an `@@` anchor goes right after the anchor line, not at EOF (§3 beyond Codex, issue #30946).",
    input: { "app.ini": ini },
    patch: patch("*** Update File: app.ini", '@@ [server]', '+host = "0.0.0.0"'),
    expected: { "app.ini": lf("[server]", 'host = "0.0.0.0"', "port = 80", "", "[client]", "timeout = 5") },
  },
  {
    id: 86,
    name: "pure_insertion_appends_at_eof",
    readme: "A pure insertion without anchor or context appends at EOF, with a warning (§3).",
    input: { "notes.txt": lf("line one", "line two") },
    patch: patch("*** Update File: notes.txt", "@@", "+line three"),
    expected: { "notes.txt": lf("line one", "line two", "line three") },
    warnings: ["appended_at_eof"],
  },
  {
    id: 87,
    name: "trailing_blank_context_dropped",
    readme:
      "A trailing empty context line at the end of a chunk that the file lacks (gamma is the last line) is dropped with a warning, then the chunk matches (§5 leniency).",
    input: { "abc.txt": lf("alpha", "beta", "gamma") },
    patch: patch("*** Update File: abc.txt", "@@", " beta", "-gamma", "+GAMMA", ""),
    expected: { "abc.txt": lf("alpha", "beta", "GAMMA") },
    warnings: ["trailing_blank_context_dropped"],
  },
  {
    id: 88,
    name: "anchor_matched_ignoring_indentation",
    readme:
      "Anchors are matched under the tier ladder (§5.1): `@@ def load(self):` without the file's indentation finds the method, which makes the otherwise ambiguous `return {}` unique.",
    input: {
      "config.py": lf("class Config:", "    def dump(self):", "        return {}", "", "    def load(self):", "        return {}"),
    },
    patch: patch(
      "*** Update File: config.py",
      "@@ def load(self):",
      "-        return {}",
      '+        return {"debug": False}',
    ),
    expected: {
      "config.py": lf(
        "class Config:",
        "    def dump(self):",
        "        return {}",
        "",
        "    def load(self):",
        '        return {"debug": False}',
      ),
    },
  },
  {
    id: 89,
    name: "tier4_nbsp_folded",
    readme: "Tier 4 folds NBSP to a space: the patch's plain spaces match the file's NBSPs, and the context line keeps its NBSPs (§5.2).",
    input: { "notice.txt": "Total\u00a0: 10\u00a0€\nStatus: open\n" },
    patch: patch("*** Update File: notice.txt", "@@", " Total : 10 €", "-Status: open", "+Status: paid"),
    expected: { "notice.txt": "Total\u00a0: 10\u00a0€\nStatus: paid\n" },
    warnings: ["fuzzy_match"],
  },
  {
    id: 90,
    name: "whitespace_mode_accepts_indentation",
    readme: "`matching: \"whitespace\"` still includes tier 3 (§5.2): a uniform +2 indentation matches and the `+` line is re-indented.",
    input: { "config.js": lf("module.exports = {", "  debug: true,", "  port: 80,", "};") },
    options: { matching: "whitespace" },
    patch: patch("*** Update File: config.js", "@@", " debug: true,", "-port: 80,", "+port: 8080,"),
    expected: { "config.js": lf("module.exports = {", "  debug: true,", "  port: 8080,", "};") },
    warnings: ["fuzzy_match", "indentation_adjusted"],
  },
  {
    id: 91,
    name: "path_with_spaces_and_unicode",
    readme: "Spaces, parentheses, quotes and non-ASCII letters are valid path characters (§6 rejects only the listed forms); they stay literal.",
    input: { "src/my file.txt": lf("draft") },
    patch: patch(
      "*** Add File: docs/Release notes – v2 (final) 'ok'.md",
      "+# v2",
      "*** Update File: src/my file.txt",
      "@@",
      "-draft",
      "+final",
    ),
    expected: { "docs/Release notes – v2 (final) 'ok'.md": lf("# v2"), "src/my file.txt": lf("final") },
  },
];
