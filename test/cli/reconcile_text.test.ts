/**
 * The CLI's reconcile helpers (examples/cli/reconcile_text.ts) on
 * hand-built tickets and reports: reading a ticket back from what a user
 * saved, the exit-code table after a reconcile, and the text.
 */
import { describe, expect, test } from "bun:test";
import { formatReconcile, readReconcileTicket, reconcileExitCode, reconcileLater } from "../../examples/cli/reconcile_text.ts";
import { failure } from "../../mod.ts";
import type { CommitReport, CommitReportFields, Failures, FileReport, ReconcileTicket } from "../../mod.ts";
import { wireCommitReport, wireTicket } from "../../examples/wire/convert.ts";

const OLD = "1".repeat(64);
const NEW = "2".repeat(64);
const TICKET: ReconcileTicket = {
  operationId: "op123",
  files: [{ op: "update", path: "a.txt", previousSha256: OLD, newSha256: NEW, newSize: 3 }],
};

function settled(states: FileReport["state"][], errors?: Failures): CommitReport {
  const report: CommitReportFields = {
    operationId: "op123",
    atomicity: "batch_preflight_per_file_commit",
    elevated: false,
    files: states.map((state, i) => ({
      op: "update",
      path: `f${i}.txt`,
      previousSha256: OLD,
      newSha256: NEW,
      bytesWritten: state === "applied" ? 3 : 0,
      metadataPreserved: null,
      diff: "",
      warnings: [],
      state,
    })),
    warnings: [],
  };
  return errors === undefined ? { ...report, ok: true } : { ...report, ok: false, errors };
}

describe("readReconcileTicket", () => {
  // What --json prints: the wire format (snake_case).
  const applyReport = {
    ok: false,
    operation_id: "op123",
    dry_run: false,
    files: [],
    warnings: [],
    errors: [{ code: "outcome_unknown", message: "m", retryable: false, reconcile: wireTicket(TICKET) }],
  };
  const cases: { name: string; text: string; want: ReconcileTicket | RegExp }[] = [
    { name: "the printed ticket line (wire spelling)", text: JSON.stringify(wireTicket(TICKET)), want: TICKET },
    { name: "a library caller's ticket (camelCase)", text: JSON.stringify(TICKET), want: TICKET },
    { name: "a saved --json report", text: JSON.stringify(applyReport, null, 2), want: TICKET },
    { name: "a saved --json report with its reconcile result", text: JSON.stringify({ ...applyReport, reconciled: wireCommitReport(settled(["applied"])) }), want: TICKET },
    { name: "a report that asks for no reconcile", text: JSON.stringify({ ...applyReport, errors: [{ code: "conflict", message: "m", retryable: true }] }), want: /neither a reconcile ticket/ },
    { name: "a reconcile report (it has no ticket)", text: JSON.stringify(wireCommitReport(settled(["applied"]))), want: /neither a reconcile ticket/ },
    { name: "not JSON", text: "operation op123", want: /not JSON/ },
    { name: "a JSON string", text: '"op123"', want: /not a JSON object/ },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const got = readReconcileTicket(c.text);
      if (c.want instanceof RegExp) expect(got).toMatch(c.want);
      else expect(got).toEqual(c.want);
    });
  }
});

describe("reconcileExitCode", () => {
  const cases: { name: string; report: CommitReport; exit: 0 | 1 | 3 }[] = [
    { name: "every file applied", report: settled(["applied", "applied"]), exit: 0 },
    { name: "no file applied", report: settled(["not_applied", "not_applied"]), exit: 1 },
    { name: "a mix", report: settled(["applied", "not_applied"]), exit: 3 },
    { name: "a file diverged", report: settled(["diverged"]), exit: 3 },
    { name: "reconcile did not finish", report: settled([], [failure("locked", "m", { operationId: "op123" })]), exit: 3 },
  ];
  for (const c of cases) test(`${c.name} → ${c.exit}`, () => expect(reconcileExitCode(c.report)).toBe(c.exit));
});

describe("formatReconcile and reconcileLater", () => {
  test("the verdict first, then one line per file with its state", () => {
    expect(formatReconcile(settled(["applied"]), "local /srv")).toStartWith("Reconciled operation op123 in local /srv: the patch IS applied (every file). Do not send it again.");
    expect(formatReconcile(settled(["not_applied"]), "local /srv")).toContain("the patch was NOT applied; nothing was changed. Send it again");
    const mixed = formatReconcile(settled(["applied", "diverged"]), "local /srv");
    expect(mixed).toContain("not a clean outcome");
    expect(mixed).toContain("  update  f1.txt  11111111 → 22222222  diverged");
  });

  test("an unfinished reconcile shows its failure, and the retry keeps the ticket re-readable", () => {
    const text = formatReconcile(settled([], [failure("locked", "a.txt is locked by operation op123", { operationId: "op123" })]), "local /srv");
    expect(text).toStartWith("Reconcile of operation op123 in local /srv did not finish: the outcome is still unknown.");
    expect(text).toContain("[1] locked\n    a.txt is locked by operation op123");
    const later = reconcileLater(TICKET, "bun examples/apply.ts --root /srv");
    expect(later).toContain("bun examples/apply.ts --root /srv --reconcile TICKET.json");
    const line = later.trimEnd().split("\n").at(-1)!;
    expect(JSON.parse(line)).toEqual(wireTicket(TICKET));
    expect(line).toContain('"operation_id":"op123"');
    expect(readReconcileTicket(line)).toEqual(TICKET);
  });
});
