/**
 * The CLI's report text and exit codes (examples/cli/report_text.ts) on
 * hand-built reports, for the cases a real run rarely reaches
 * (partial_apply) and the exit-code table as a whole.
 */
import { describe, expect, test } from "bun:test";
import { exitCodeFor, formatReport } from "../../examples/cli/report_text.ts";
import { failure } from "../../mod.ts";
import type { ApplyReport, ApplySucceeded, FailureCode, PatchFailure } from "../../mod.ts";
import { codeOnlyFailure } from "../support/code_only_failure.ts";

const OLD = "1".repeat(64);
const NEW = "2".repeat(64);

function report(fields: Partial<ApplySucceeded>): ApplySucceeded {
  return { ok: true, operationId: "op123", atomicity: "batch_preflight_per_file_commit", elevated: false, dryRun: false, files: [], warnings: [], ...fields };
}
const failed = (first: PatchFailure, ...rest: PatchFailure[]): ApplyReport => {
  const { durable: _, ...base } = report({});
  return { ...base, ok: false, errors: [first, ...rest] };
};

describe("exitCodeFor", () => {
  const cases: { codes: FailureCode[]; exit: 0 | 1 | 3 }[] = [
    { codes: ["context_mismatch"], exit: 1 },
    { codes: ["conflict", "conflict"], exit: 1 },
    { codes: ["locked"], exit: 1 },
    { codes: ["host_key_unknown"], exit: 1 },
    { codes: ["timeout"], exit: 1 },
    { codes: ["outcome_unknown"], exit: 3 },
    { codes: ["partial_apply"], exit: 3 },
    { codes: ["conflict", "outcome_unknown"], exit: 3 },
  ];
  for (const c of cases) {
    test(`${c.codes.join(" + ")} → ${c.exit}`, () => {
      expect(exitCodeFor(failed(codeOnlyFailure(c.codes[0]!), ...c.codes.slice(1).map((code) => codeOnlyFailure(code))))).toBe(c.exit);
    });
  }
  test("ok → 0, dry run included", () => {
    expect(exitCodeFor(report({}))).toBe(0);
    expect(exitCodeFor(report({ dryRun: true }))).toBe(0);
  });
});

describe("formatReport", () => {
  test("success: aligned table, metadata kept or not, state, warnings and diffs", () => {
    const text = formatReport(report({
      elevated: true,
      files: [
        { op: "update", path: "a.txt", previousSha256: OLD, newSha256: NEW, bytesWritten: 12, metadataPreserved: { mode: true, owner: false }, diff: "diff --git a/a.txt b/a.txt\n", warnings: [] },
        { op: "delete", path: "long/name.txt", previousSha256: OLD, newSha256: null, bytesWritten: 0, metadataPreserved: null, diff: "", warnings: [{ code: "hard_link_broken", message: "had 2 links", path: "long/name.txt" }] },
      ],
      warnings: [{ code: "patch_trimmed", message: "whitespace around the patch was removed" }],
    }), "deploy@web1:22 /srv");
    expect(text).toContain("Applied 2 files in deploy@web1:22 /srv (operation op123, sudo; batch_preflight_per_file_commit)");
    expect(text).toContain("  update  a.txt          11111111 → 22222222  12 bytes  mode kept, owner NOT kept");
    expect(text).toContain("  delete  long/name.txt  11111111 → (none)\n      ! hard_link_broken (long/name.txt): had 2 links");
    expect(text).toContain("Warnings:\n  - patch_trimmed: whitespace around the patch was removed");
    expect(text).toContain("diff --git a/a.txt b/a.txt");
  });

  test("partial_apply: MAY have changed, each path's real state listed", () => {
    const text = formatReport(failed(failure("partial_apply", "restoring failed", {
      operationId: "op123",
      outcomes: [{ path: "a.txt", state: "new", sha256: NEW }, { path: "b.txt", state: "old", sha256: OLD }],
      reconcile: { operationId: "op123", files: [] },
    })), "local /srv");
    expect(text).toStartWith("OUTCOME UNKNOWN: files under local /srv MAY have changed (operation op123).");
    expect(text).toContain(`[1] partial_apply\n    restoring failed\n    State of each path now:\n      a.txt  new  ${NEW}\n      b.txt  old  ${OLD}`);
  });

  test("a refusal: nothing changed, every failure with its indented multi-line message", () => {
    const text = formatReport(failed(
      failure("ambiguous_hunk", "two places:\n  3:aa x\n  9:aa x", { path: "m.js", hunk: 2 }),
      failure("not_found", "gone.txt does not exist", { path: "gone.txt", closestPaths: [] }),
    ), "local /srv");
    expect(text).toStartWith("Refused: nothing was changed in local /srv (operation op123; 2 problems).");
    expect(text).toContain("[1] ambiguous_hunk · m.js · chunk 2\n    two places:\n      3:aa x\n      9:aa x");
    expect(text).toContain("[2] not_found · gone.txt\n    gone.txt does not exist");
  });
});
