/**
 * The CLI's side of `reconcile`: reading a ticket back from a file, the
 * exit code and text of a reconcile report, and what to do when reconcile
 * itself could not finish.
 *
 * The CLI reconciles by itself right after an `outcome_unknown` or
 * `partial_apply` (examples/apply.ts); `--reconcile FILE` repeats that later
 * from the ticket the failure carries, saved from `--json` output or from
 * the ticket line the text output prints.
 *
 * @module
 */
import { reconcileTicketOf } from "../../mod.ts";
import type { CommitReport, ReconcileTicket } from "../../mod.ts";
import { formatFailure, formatFileLine, formatWarning } from "./report_text.ts";
import { applyReportFromWire, ticketFromWire, wireTicket } from "../wire/convert.ts";

/**
 * The ticket in `text`: a ticket itself, or a `--json` report whose failure
 * carries one. Returns a reason when there is none; the ticket's fields are
 * checked by `reconcile` itself.
 *
 * @example
 * ```ts
 * const ticket = readReconcileTicket(readFileSync("report.json", "utf8"));
 * if (typeof ticket === "string") throw new Error(ticket);
 * ```
 */
export function readReconcileTicket(text: string): ReconcileTicket | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `it is not JSON (${(error as Error).message})`;
  }
  if (value === null || typeof value !== "object") return "it is not a JSON object";
  // Every report has `ok`; a ticket never does. Either comes in the wire
  // spelling (this CLI's --json and ticket line) or the library's.
  if (!("ok" in value)) return ticketFromWire(value);
  const ticket = reconcileTicketOf(applyReportFromWire(value));
  if (ticket !== null) return ticket;
  return "it is neither a reconcile ticket nor a report whose failure carries one (only outcome_unknown, partial_apply and a commit that left temporary files do)";
}

/**
 * The exit code after a reconcile: 0 every file applied, 1 none applied
 * (nothing changed: the patch may be sent again), 3 anything else — files
 * changed by someone else (`diverged`), a mix, or reconcile did not finish.
 *
 * @example
 * ```ts
 * reconcileExitCode(await reconcile(shell, root, ticket)); // 0 | 1 | 3
 * ```
 */
export function reconcileExitCode(report: CommitReport): 0 | 1 | 3 {
  if (!report.ok) return 3;
  if (report.files.every((f) => f.state === "applied")) return 0;
  if (report.files.every((f) => f.state === "not_applied")) return 1;
  return 3;
}

/**
 * A reconcile report as text: the verdict, one line per file with its
 * state, warnings, and what to do next.
 *
 * @example
 * ```ts
 * formatReconcile(report, "local /srv/site");
 * // "Reconciled operation 3f2a…: the patch IS applied (every file). Do not send it again.\n…"
 * ```
 */
export function formatReconcile(report: CommitReport, where: string): string {
  const op = `operation ${report.operationId}`;
  const out: string[] = [];
  const code = reconcileExitCode(report);
  if (!report.ok) {
    out.push(`Reconcile of ${op} in ${where} did not finish: the outcome is still unknown.`);
  } else if (code === 0) {
    out.push(`Reconciled ${op} in ${where}: the patch IS applied (every file). Do not send it again.`);
  } else if (code === 1) {
    out.push(`Reconciled ${op} in ${where}: the patch was NOT applied; nothing was changed. Send it again if you still want it.`);
  } else {
    out.push(
      `Reconciled ${op} in ${where}: not a clean outcome. "diverged" files were changed by someone else and were not`,
      "touched; read them before patching again. \"applied\" files hold the patch's version, \"not_applied\" ones the old one.",
    );
  }
  if (report.files.length > 0) {
    // Loops, never a spread into a call: a report may list thousands of files.
    const width = report.files.reduce((most, f) => Math.max(most, (f.moveTo !== undefined ? `${f.path} → ${f.moveTo}` : f.path).length), 0);
    out.push("");
    for (const f of report.files) out.push(formatFileLine(f, width));
  }
  if (report.warnings.length > 0) {
    out.push("", "Warnings:");
    for (const w of report.warnings) out.push(`  - ${formatWarning(w)}`);
  }
  (report.errors ?? []).forEach((e, i) => out.push("", formatFailure(e, i + 1)));
  return out.join("\n") + "\n";
}

/**
 * What to do when reconcile did not finish (the host is unreachable, or the
 * commit still runs and holds its locks): run it again later from the
 * ticket, printed here on one line (in the wire format of `--json`) so it
 * can be saved as a file.
 *
 * @example
 * ```ts
 * reconcileLater(ticket, "bun examples/apply.ts --root /srv/site");
 * ```
 */
export function reconcileLater(ticket: ReconcileTicket, command: string): string {
  return [
    "Next step: do NOT resend the patch yet. Save the reconcile ticket below as a file (or keep this run's --json",
    "output) and settle the operation once the host answers (a commit that still runs is waited for):",
    `  ${command} --reconcile TICKET.json`,
    "Reconcile ticket:",
    JSON.stringify(wireTicket(ticket)),
  ].join("\n") + "\n";
}
