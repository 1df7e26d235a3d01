/**
 * Scenarios 020–039: patches rejected for their form, their paths or the
 * parse limits (SPEC §3, §6), before any file content is looked at.
 *
 * @module
 */
import { lf, patch, type ScenarioCase } from "./_case.ts";

const simple = { "a.txt": lf("one", "two", "three") };
const simpleChunk = ["@@", " one", "-two", "+TWO"];
const LONG_PATCH = patch("*** Add File: notes.txt", "+Une ligne avec des caractères non ASCII: é, ü, –, ✓.");

/** The rejected-patch scenarios. */
export const REJECTED_CASES: ScenarioCase[] = [
  {
    id: 20,
    name: "missing_begin_patch",
    readme: "A patch must start with `*** Begin Patch` (§3); the error points at patch line 1 and names the marker.",
    input: simple,
    patch: lf("*** Update File: a.txt", ...simpleChunk, "*** End Patch"),
    failure: [{ code: "invalid_patch", patchLine: 1, messageIncludes: ["*** Begin Patch"] }],
  },
  {
    id: 21,
    name: "missing_end_patch",
    readme:
      "A patch must end with `*** End Patch` (§3): a truncated patch (a model cut off mid-output) is rejected, never applied in part.",
    input: simple,
    patch: lf("*** Begin Patch", "*** Update File: a.txt", ...simpleChunk),
    failure: [{ code: "invalid_patch", messageIncludes: ["*** End Patch"] }],
  },
  {
    id: 22,
    name: "bad_body_line",
    readme:
      "A body line without ` `, `+` or `-` is a parse error carrying the 1-based patch line and the offending text, saying what was expected (§3, example message).",
    input: { "app.txt": lf("first", "second", "third") },
    patch: patch(
      "*** Update File: app.txt",
      "@@",
      " first",
      "-second",
      "+SECOND",
      "this line has no marker",
      " third",
    ),
    failure: [{
      code: "invalid_patch",
      patchLine: 7,
      messageIncludes: ["this line has no marker", "' ', '+' or '-'"],
    }],
  },
  {
    id: 23,
    name: "add_line_without_plus",
    readme: "Every line of an `*** Add File:` section starts with `+`; another line is a parse error at its patch line (§3).",
    patch: patch("*** Add File: new.txt", "+first", "second line", "+third"),
    failure: [{ code: "invalid_patch", patchLine: 4, messageIncludes: ["second line"] }],
  },
  {
    id: 24,
    name: "update_without_chunk",
    readme:
      "An Update with no chunk is rejected (§3). Choice: the error points at the `*** Update File:` line (patch line 2) and names the file.",
    input: simple,
    patch: patch("*** Update File: a.txt"),
    failure: [{ code: "invalid_patch", patchLine: 2, messageIncludes: ["a.txt"] }],
  },
  {
    id: 25,
    name: "duplicate_path",
    readme: "Two operations on the same path are rejected with `duplicate_path` (§3); one failure, for the repeated path.",
    input: simple,
    patch: patch("*** Update File: a.txt", ...simpleChunk, "*** Delete File: a.txt"),
    failure: [{ code: "duplicate_path", path: "a.txt" }],
  },
  {
    id: 26,
    name: "move_destination_is_another_op_path",
    readme: "A Move destination equal to another operation's path is a `duplicate_path` (§3 \"including a Move destination\").",
    input: simple,
    patch: patch("*** Update File: a.txt", "*** Move to: b.txt", ...simpleChunk, "*** Add File: b.txt", "+new"),
    failure: [{ code: "duplicate_path", path: "b.txt" }],
  },
  {
    id: 27,
    name: "move_to_same_path",
    readme:
      "Move to the same path is rejected (§3; Codex deletes the file, #34210). Choice: `invalid_patch` (a malformed instruction, not two colliding operations), for path a.txt.",
    input: simple,
    patch: patch("*** Update File: a.txt", "*** Move to: a.txt", ...simpleChunk),
    failure: [{ code: "invalid_patch", path: "a.txt" }],
  },
  {
    id: 28,
    name: "absolute_path",
    readme: "An absolute path is `invalid_path` (§6): paths are root-relative.",
    patch: patch("*** Update File: /etc/hosts", ...simpleChunk),
    failure: [{ code: "invalid_path", path: "/etc/hosts" }],
  },
  {
    id: 29,
    name: "dotdot_path",
    readme: "A `..` component is `invalid_path` (§6), even when it would stay inside the root lexically.",
    input: simple,
    patch: patch("*** Add File: docs/../../secret.txt", "+x"),
    failure: [{ code: "invalid_path", path: "docs/../../secret.txt" }],
  },
  {
    id: 30,
    name: "backslash_path",
    readme: "A backslash in a path is `invalid_path` (§6).",
    patch: patch("*** Add File: src\\main.c", "+int main(void) { return 0; }"),
    failure: [{ code: "invalid_path", path: "src\\main.c" }],
  },
  {
    id: 31,
    name: "dot_component_path",
    readme: "A `.` component is `invalid_path` (§6): one spelling per file, so duplicate detection cannot be dodged.",
    input: simple,
    patch: patch("*** Update File: ./a.txt", ...simpleChunk),
    failure: [{ code: "invalid_path", path: "./a.txt" }],
  },
  {
    id: 32,
    name: "empty_component_path",
    readme: "An empty component (`//`) is `invalid_path` (§6).",
    patch: patch("*** Add File: docs//notes.txt", "+x"),
    failure: [{ code: "invalid_path", path: "docs//notes.txt" }],
  },
  {
    id: 33,
    name: "limit_max_files",
    readme: "More file sections than `limits.maxFiles` is `limit_exceeded` naming the limit, its value and what was asked (types.ts `limit`).",
    options: { limits: { maxFiles: 1 } },
    patch: patch("*** Add File: one.txt", "+1", "*** Add File: two.txt", "+2"),
    failure: [{ code: "limit_exceeded", limit: { name: "maxFiles", max: 1, actual: 2 } }],
  },
  {
    id: 34,
    name: "limit_max_chunks_per_file",
    readme: "More chunks in one Update than `limits.maxChunksPerFile` is `limit_exceeded` (types.ts Limits).",
    options: { limits: { maxChunksPerFile: 1 } },
    input: simple,
    patch: patch("*** Update File: a.txt", "@@", "-one", "+ONE", "@@", "-three", "+THREE"),
    failure: [{ code: "limit_exceeded", limit: { name: "maxChunksPerFile", max: 1, actual: 2 } }],
  },
  {
    id: 35,
    name: "control_character_path",
    readme: "A control character (here a tab) in a path is `invalid_path` (§6).",
    patch: patch("*** Add File: bad\tname.txt", "+x"),
    failure: [{ code: "invalid_path", path: "bad\tname.txt" }],
  },
  {
    id: 36,
    name: "component_too_long_path",
    readme: "A path component over 255 bytes is `invalid_path` (§6).",
    patch: patch(`*** Add File: docs/${"a".repeat(252)}.txt`, "+x"),
    failure: [{ code: "invalid_path", path: `docs/${"a".repeat(252)}.txt` }],
  },
  {
    id: 37,
    name: "limit_max_patch_bytes",
    readme: "A patch text larger than `limits.maxPatchBytes` (UTF-8 bytes of the text as sent) is `limit_exceeded` (types.ts Limits).",
    options: { limits: { maxPatchBytes: 64 } },
    patch: LONG_PATCH,
    failure: [{ code: "limit_exceeded", limit: { name: "maxPatchBytes", max: 64, actual: new TextEncoder().encode(LONG_PATCH).length } }],
  },
];
