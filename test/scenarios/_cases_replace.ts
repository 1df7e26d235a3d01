/**
 * Scenarios 140–149: whole-file replace (issue 29 item 2) — `*** Replace
 * File:` and Delete + Add of one path as one atomic rewrite.
 *
 * @module
 */
import { lf, patch, type ScenarioCase, sha256Of } from "./_case.ts";

const ini = lf("[main]", "debug = 1", "port = 8080");

/** The whole-file replace scenarios. */
export const REPLACE_CASES: ScenarioCase[] = [
  {
    id: 140,
    name: "replace_file_rewrites_whole_file",
    readme: "`*** Replace File: X` rewrites an existing file whole in one rename; its mode (0640 here) is kept as for an Update (issue 29.2).",
    input: { "app.ini": ini, "other.txt": lf("bystander") },
    patch: patch("*** Replace File: app.ini", "+[main]", "+debug = 0", "+port = 9090", "+workers = 4"),
    expected: { "app.ini": lf("[main]", "debug = 0", "port = 9090", "workers = 4"), "other.txt": lf("bystander") },
    setup: { modes: { "app.ini": "640" } },
  },
  {
    id: 141,
    name: "delete_then_add_is_one_replace",
    readme: "`*** Delete File: X` followed by `*** Add File: X` in one patch is the same whole-file replace (not `duplicate_path`); another section may sit between them.",
    input: { "app.ini": ini, "notes.md": lf("# Notes") },
    patch: patch("*** Delete File: app.ini", "*** Update File: notes.md", "@@", " # Notes", "+rewrote app.ini", "*** Add File: app.ini", "+[main]", "+debug = 0"),
    expected: { "app.ini": lf("[main]", "debug = 0"), "notes.md": lf("# Notes", "rewrote app.ini") },
    setup: { modes: { "app.ini": "640" } },
  },
  {
    id: 142,
    name: "replace_keeps_crlf_bom_and_final_newline_state",
    readme: "A replace's lines take the old file's dominant ending and BOM, and its final-newline state, as an Update replacing every line would (decision recorded in docs/patch-format.md).",
    input: { "win.ini": "\ufeff[main]\r\ndebug = 1", "other.txt": lf("x") },
    patch: patch("*** Replace File: win.ini", "+[main]", "+debug = 0"),
    expected: { "win.ini": "\ufeff[main]\r\ndebug = 0", "other.txt": lf("x") },
  },
  {
    id: 143,
    name: "replace_missing_file_is_not_found",
    readme: "A replace needs an existing file: a missing one is `not_found`, and the message says to use Add.",
    input: { "other.txt": lf("x") },
    patch: patch("*** Delete File: new.ini", "*** Add File: new.ini", "+a = 1"),
    failure: [{ code: "not_found", path: "new.ini", patchLine: 2, messageIncludes: ['use "*** Add File: new.ini"'] }],
  },
  {
    id: 144,
    name: "replace_expected_sha_mismatch",
    readme: "A replace honours `expectedSha256` for its path: another version is `precondition_failed`, nothing written.",
    input: { "app.ini": ini },
    patch: patch("*** Replace File: app.ini", "+[main]"),
    options: { expectedSha256: { "app.ini": sha256Of("something else\n") } },
    failure: [{ code: "precondition_failed", path: "app.ini", expectedSha256: sha256Of("something else\n"), actualSha256: sha256Of(ini) }],
  },
  {
    id: 145,
    name: "add_then_delete_refused",
    readme: "Add then Delete of one path stays `duplicate_path` (it would change nothing); the message shows the two ways to write a replace.",
    input: { "app.ini": ini },
    patch: patch("*** Add File: app.ini", "+x", "*** Delete File: app.ini"),
    failure: [{ code: "duplicate_path", path: "app.ini", patchLine: 4, messageIncludes: ["'*** Replace File: app.ini'"] }],
  },
  {
    id: 146,
    name: "replace_with_move_refused",
    readme: "A Delete + Add of a path that is also a Move destination stays `duplicate_path`: a rewrite is not combined with a Move.",
    input: { "app.ini": ini, "old.ini": ini },
    patch: patch("*** Update File: old.ini", "*** Move to: app.ini", "@@", "-debug = 1", "+debug = 2", "*** Delete File: app.ini", "*** Add File: app.ini", "+x"),
    failure: [
      { code: "duplicate_path", path: "app.ini", patchLine: 7, messageIncludes: ["cannot be combined with a Move"] },
      { code: "duplicate_path", path: "app.ini", patchLine: 8 },
    ],
  },
];
