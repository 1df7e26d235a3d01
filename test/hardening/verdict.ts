/**
 * The invariants every fault trial is judged by ("nothing is lost"):
 * 1. every path is byte-for-byte its old or its new version;
 * 2. the commit's result is either definite and matches the disk (`ok` →
 *    all new; a failure that says nothing changed → all old;
 *    `partial_apply` → each path as its `outcomes` say) or `outcome_unknown`;
 * 3. `reconcile` completes, reports each file as the disk shows it
 *    (applied = new, not_applied = old), settles the batch to all-applied
 *    or all-not-applied, and leaves no `.sap-` stage, lock, backup,
 *    journal or blob behind;
 * 4. after it, nothing is locked: the next commit of the same paths gets
 *    its locks at once (checkNothingLocked).
 *
 * @module
 */
import { existsSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { CommitReport } from "../../lib/types.ts";
import { leftovers } from "../support/local_trees.ts";
import { fileStates, pathStates } from "./fixture.ts";
import type { PathState, TxFixture } from "./fixture.ts";

/** How a commit report classifies. */
export type ResultKind = "ok" | "nothing_changed" | "partial" | "unknown";

/**
 * The kind of a commit (or apply) report: `ok`, a definite failure that
 * changed nothing, a `partial_apply` with per-path outcomes, or
 * `outcome_unknown`.
 *
 * @example
 * ```ts
 * classify(report); // "unknown"
 * ```
 */
export function classify(report: CommitReport): ResultKind {
  if (report.ok) return "ok";
  const codes = (report.errors ?? []).map((e) => e.code);
  if (codes.includes("outcome_unknown")) return "unknown";
  if (codes.includes("partial_apply")) return "partial";
  return "nothing_changed";
}

/** A short label of a report for histograms: `ok` or the first error code. */
export function resultLabel(report: CommitReport): string {
  return report.ok ? "ok" : report.errors?.[0]?.code ?? "failed_without_errors";
}

/**
 * Invariants 1 and 2 right after the commit returned. Returns violations
 * (empty when all hold).
 *
 * @example
 * ```ts
 * const violations = checkCommit(root, fx, report);
 * ```
 */
export function checkCommit(root: string, fx: TxFixture, report: CommitReport): string[] {
  const out: string[] = [];
  const paths = pathStates(root, fx);
  for (const [path, state] of paths) {
    if (state === "other") out.push(`${path} is neither its old nor its new version after the commit (${resultLabel(report)})`);
  }
  const files = fileStates(root, fx);
  const kind = classify(report);
  if (kind === "ok" && files.some((s) => s !== "new")) {
    out.push(`the commit reported ok but the disk shows [${files.join(", ")}]`);
  }
  if (kind === "nothing_changed" && files.some((s) => s !== "old")) {
    out.push(`the commit reported ${resultLabel(report)} (nothing changed) but the disk shows [${files.join(", ")}]`);
  }
  if (kind === "partial") {
    const outcomes = report.errors!.find((e) => e.code === "partial_apply")!.outcomes ?? [];
    for (const o of outcomes) {
      const actual = paths.get(o.path);
      const want: PathState | null = o.state === "new" ? "new" : o.state === "old" ? "old" : null;
      if (want !== null && actual !== want) out.push(`partial_apply says ${o.path} is ${o.state}, the disk shows ${actual}`);
    }
  }
  return out;
}

/**
 * Invariant 3 after `reconcile`. Returns violations (empty when all hold)
 * and the settled outcome.
 *
 * @example
 * ```ts
 * const { violations, settled } = checkReconcile(root, fx, await reconcile(shell, root, reconcileTicket(fx.plan, op)));
 * ```
 */
export function checkReconcile(
  root: string,
  fx: TxFixture,
  report: CommitReport,
): { violations: string[]; settled: "applied" | "not_applied" | "mixed" } {
  const out: string[] = [];
  if (!report.ok) {
    const e = report.errors?.[0];
    out.push(`reconcile failed: ${e?.code}: ${e?.message}`);
    return { violations: out, settled: "mixed" };
  }
  const files = fileStates(root, fx);
  report.files.forEach((f, i) => {
    const disk = files[i];
    const want = f.state === "applied" ? "new" : f.state === "not_applied" ? "old" : "diverged";
    if (want !== disk) out.push(`reconcile reports ${fx.files[i]!.join(" → ")} ${f.state}, the disk shows ${disk}`);
  });
  const states = new Set(report.files.map((f) => f.state));
  const settled = states.size === 1 && (states.has("applied") || states.has("not_applied"))
    ? (report.files[0]!.state as "applied" | "not_applied")
    : "mixed";
  if (settled === "mixed") out.push(`reconcile left the batch mixed: [${report.files.map((f) => f.state).join(", ")}]`);
  const left = leftovers(root);
  if (left.length > 0) out.push(`leftovers after reconcile: ${left.map((p) => p.slice(root.length + 1)).join(", ")}`);
  return { violations: out, settled };
}

/**
 * Invariant 4 (issue 13): after reconcile nothing is locked. `probe` is a
 * commit of the same paths by another operation, run right after
 * reconcile: it must not answer `locked` (it applies the plan, or reports
 * the paths changed), and it must leave no `.sap-` entry behind.
 *
 * @example
 * ```ts
 * const violations = checkNothingLocked(root, await commitRemote(shell, root, fx.plan, { lockWaitMs: 1000 }));
 * ```
 */
export function checkNothingLocked(root: string, probe: CommitReport): string[] {
  const out: string[] = [];
  const lockedError = probe.errors?.find((e) => e.code === "locked");
  if (lockedError) out.push(`still locked after reconcile: ${lockedError.message}`);
  const left = leftovers(root);
  if (left.length > 0) out.push(`leftovers after the commit that follows reconcile: ${left.map((p) => p.slice(root.length + 1)).join(", ")}`);
  return out;
}

/**
 * Directories below root that belong to neither the before nor the after
 * tree of the fixture's settled outcome (e.g. a parent created for an Add
 * that was then undone).
 *
 * @example
 * ```ts
 * strayDirectories(root, fx, "not_applied"); // ["n"] if the undo left it
 * ```
 */
export function strayDirectories(root: string, fx: TxFixture, settled: "applied" | "not_applied"): string[] {
  const tree = settled === "applied" ? fx.after : fx.before;
  const wanted = new Set<string>();
  for (const path of tree.keys()) {
    const parts = path.split("/");
    for (let i = 1; i < parts.length; i++) wanted.add(parts.slice(0, i).join("/"));
  }
  const stray: string[] = [];
  const walk = (rel: string): void => {
    const dir = rel === "" ? root : join(root, rel);
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir)) {
      const child = rel === "" ? name : `${rel}/${name}`;
      if (lstatSync(join(root, child)).isDirectory()) {
        if (!wanted.has(child)) stray.push(child);
        walk(child);
      }
    }
  };
  walk("");
  return stray;
}
