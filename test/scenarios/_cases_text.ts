/**
 * Scenarios 070–079: the text model — line endings, BOM, final newline
 * (SPEC §5.3).
 *
 * @module
 */
import { lf, patch, type ScenarioCase } from "./_case.ts";

/** The text-model scenarios. */
export const TEXT_CASES: ScenarioCase[] = [
  {
    id: 70,
    name: "crlf_file_kept_crlf",
    readme: "A CRLF file stays CRLF: untouched and context lines keep `\\r\\n`, new lines take the dominant `\\r\\n` (§5.3).",
    input: { "windows.ini": "[core]\r\nname = old\r\nlevel = 1\r\n" },
    patch: patch("*** Update File: windows.ini", "@@", " [core]", "-name = old", "+name = new", "+extra = yes", " level = 1"),
    expected: { "windows.ini": "[core]\r\nname = new\r\nextra = yes\r\nlevel = 1\r\n" },
  },
  {
    id: 71,
    name: "mixed_endings_kept_per_line",
    readme:
      "In a mixed file each untouched and context line keeps its own ending (CRLF lines 1 and 4 stay CRLF); new lines take the dominant ending, LF (3 of 5) (§5.3).",
    input: { "mixed.txt": "one\r\ntwo\nthree\nfour\r\nfive\n" },
    patch: patch("*** Update File: mixed.txt", "@@", " two", "-three", "+THREE", "+three and a half", " four"),
    expected: { "mixed.txt": "one\r\ntwo\nTHREE\nthree and a half\nfour\r\nfive\n" },
  },
  {
    id: 72,
    name: "lone_cr_file",
    readme: "Lone CR is a line ending too (classic Mac): the file is matched in logical lines and new lines take `\\r` (§5.3).",
    input: { "classic.txt": "alpha\rbeta\rgamma\r" },
    patch: patch("*** Update File: classic.txt", "@@", " alpha", "-beta", "+BETA", "+beta two", " gamma"),
    expected: { "classic.txt": "alpha\rBETA\rbeta two\rgamma\r" },
  },
  {
    id: 73,
    name: "bom_kept",
    readme: "A UTF-8 BOM is not part of line 1's text (line 1 matches and is replaced) and is kept (§5.3).",
    input: { "bom.txt": "\uFEFFtitle = Old\nbody = text\n" },
    patch: patch("*** Update File: bom.txt", "@@", "-title = Old", "+title = New", " body = text"),
    expected: { "bom.txt": "\uFEFFtitle = New\nbody = text\n" },
  },
  {
    id: 74,
    name: "no_final_newline_last_line_replaced",
    readme: "A file without a final newline keeps none when its last line is replaced, here by two lines (§5.3).",
    input: { "vars.txt": "x = 1\ny = 2\nz = 3" },
    patch: patch("*** Update File: vars.txt", "@@", " y = 2", "-z = 3", "+z = 4", "+w = 5"),
    expected: { "vars.txt": "x = 1\ny = 2\nz = 4\nw = 5" },
  },
  {
    id: 75,
    name: "no_final_newline_append_at_eof",
    readme:
      "Appending after the last line of a file without a final newline: the old last line gets the dominant ending, the new last line has none (§5.3 keeps the final-newline state).",
    input: { "tail.txt": "first\nlast" },
    patch: patch("*** Update File: tail.txt", "@@", " last", "+appended", "*** End of File"),
    expected: { "tail.txt": "first\nlast\nappended" },
  },
  {
    id: 76,
    name: "final_newline_append",
    readme: "Appending to a file with a final newline keeps one: the new last line ends with `\\n` (§5.3).",
    input: { "tail.txt": "first\nlast\n" },
    patch: patch("*** Update File: tail.txt", "@@", " last", "+appended", "*** End of File"),
    expected: { "tail.txt": "first\nlast\nappended\n" },
  },
  {
    id: 77,
    name: "dominant_ending_mostly_crlf",
    readme:
      "New lines take the file's dominant ending (CRLF, 4 of 5), even next to the one LF line, which keeps its LF (§5.3).",
    input: { "mostly.txt": "one\r\ntwo\r\nthree\nfour\r\nfive\r\n" },
    patch: patch("*** Update File: mostly.txt", "@@", " three", "+three and a half", " four"),
    expected: { "mostly.txt": "one\r\ntwo\r\nthree\nthree and a half\r\nfour\r\nfive\r\n" },
  },
  {
    id: 78,
    name: "empty_file_pure_insertion",
    readme:
      "An empty file is updated by a pure insertion (no anchor, no context). Choice (SPEC silent on an empty file's final-newline state): the result ends with `\\n` like an added file, LF by default.",
    input: { "empty.txt": "" },
    patch: patch("*** Update File: empty.txt", "@@", "+hello", "+world"),
    expected: { "empty.txt": lf("hello", "world") },
  },
  {
    id: 79,
    name: "crlf_patch_on_crlf_file",
    readme: "A CRLF patch (model copied the file's endings) against a CRLF file: `\r` stripped from the patch, the file stays CRLF (§3, §5.3).",
    input: { "dos.txt": "first\r\nsecond\r\n" },
    patch: patch("*** Update File: dos.txt", "@@", " first", "-second", "+SECOND", "+third").replaceAll("\n", "\r\n"),
    expected: { "dos.txt": "first\r\nSECOND\r\nthird\r\n" },
    warnings: ["carriage_return_stripped"],
  },
];
