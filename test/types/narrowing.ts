/**
 * Type-level tests of the public API (issue 32): results narrow on `ok`,
 * failures narrow on `code`, and `failure()` demands what a code always
 * carries. Nothing here runs; `npm run check` compiles it (tsconfig
 * includes test/**), and test/types/narrowing.test.ts proves that every
 * `@ts-expect-error` below is a real error, so a broken expectation fails
 * the check in both directions: a positive case stops compiling, or an
 * expected error disappears (TS2578, unused directive).
 *
 * Each function takes the value it narrows, so no case depends on how a
 * value was built.
 */
import { failure } from "../../mod.ts";
import type {
  ApplyReport,
  ChunkFailureCode,
  CommitReport,
  FailureOf,
  FileReport,
  ListFilesResult,
  LockHolder,
  NoSpace,
  ParseResult,
  PatchFailure,
  PathOutcome,
  PlanResult,
  ReconcileTicket,
  SearchFilesResult,
  UnknownKey,
} from "../../mod.ts";

// ---------------------------------------------------------------------------
// Results narrow on `ok` (strict mode, no `!`)
// ---------------------------------------------------------------------------

export function applyReportNarrows(r: ApplyReport): string {
  if (!r.ok) return r.errors[0].code;
  const files: FileReport[] = r.files;
  const durable: boolean | undefined = r.durable;
  return `${files.length} ${durable}`;
}

export function applyReportErrorsNeedNarrowing(r: ApplyReport): string {
  // @ts-expect-error: errors may be absent until `ok` is known to be false
  return r.errors[0].code;
}

export function okReportHasNoErrors(r: ApplyReport): void {
  if (r.ok) {
    // @ts-expect-error: a report that is ok has no failure to index
    r.errors[0];
  }
}

export function commitReportNarrows(r: CommitReport): string {
  if (r.ok === false) {
    const [first, ...rest] = r.errors;
    return `${first.message} and ${rest.length} more`;
  }
  return r.operationId;
}

export function parseAndPlanNarrow(p: ParseResult, q: PlanResult): string {
  const a = p.ok ? String(p.patch.ops.length) : p.errors[0].message;
  const b = q.ok ? String(q.plan.files.length) : q.errors[0].message;
  return a + b;
}

export function discoveryResultsNarrow(l: ListFilesResult, s: SearchFilesResult): string {
  const a = l.ok ? String(l.entries.length) : l.errors[0].code;
  const b = s.ok ? String(s.matches.length) : s.errors[0].code;
  return a + b;
}

export function listErrorsNeedNarrowing(l: ListFilesResult): string {
  // @ts-expect-error: errors may be absent until `ok` is known to be false
  return l.errors[0].code;
}

// ---------------------------------------------------------------------------
// Failures narrow on `code`: each code's guaranteed fields are required
// ---------------------------------------------------------------------------

export function failureNarrows(f: PatchFailure): string {
  switch (f.code) {
    case "precondition_failed": {
      const path: string = f.path;
      return path;
    }
    case "locked": {
      const id: string = f.operationId;
      return id;
    }
    case "no_space": {
      const where: NoSpace = f.noSpace;
      return where.directory;
    }
    case "partial_apply": {
      const outcomes: PathOutcome[] = f.outcomes;
      const ticket: ReconcileTicket = f.reconcile;
      return `${f.operationId} ${outcomes.length} ${ticket.files.length}`;
    }
    case "remote_unsupported": {
      const tool: string = f.tool;
      return tool;
    }
    case "invalid_request": {
      const unknown: UnknownKey[] = f.unknown;
      return unknown.map((k) => `${k.name} -> ${k.closest ?? "?"}`).join(", ");
    }
    case "host_key_unknown": {
      const line: string = f.knownHostsLine;
      return `${f.fingerprint} ${line}`;
    }
    case "host_key_mismatch": {
      const fingerprint: string = f.fingerprint;
      return fingerprint;
    }
    case "ambiguous_hunk":
    case "context_mismatch": {
      const at: [string, number] = [f.path, f.hunk];
      return at.join(":");
    }
    default:
      return f.message;
  }
}

export function chunkFailuresNameTheirChunk(f: FailureOf<ChunkFailureCode>): number {
  return f.hunk;
}

export function lockIsOnlySometimesThere(f: PatchFailure): number | null {
  if (f.code !== "locked") return null;
  // @ts-expect-error: a `locked` failure names its lock holder only when the host reported one
  const holder: LockHolder = f.lock;
  return holder.pid;
}

export function candidatesAreOnlySometimesThere(f: PatchFailure): number {
  if (f.code !== "ambiguous_hunk") return 0;
  // @ts-expect-error: a folded or compact ambiguous_hunk has no candidates
  return f.candidates.length;
}

export function otherCodesGuaranteeNothing(f: PatchFailure): string {
  if (f.code !== "conflict") return "";
  // @ts-expect-error: a conflict about the root names no path
  const path: string = f.path;
  return path;
}

export function outcomeUnknownNeedNotCarryATicket(f: PatchFailure): string {
  if (f.code !== "outcome_unknown") return "";
  // @ts-expect-error: an adapter's outcome_unknown (a dropped connection) has no ticket; a commit's has
  return f.reconcile.operationId;
}

// ---------------------------------------------------------------------------
// failure() is typed per code
// ---------------------------------------------------------------------------

export function failureBuildsNarrowValues(ticket: ReconcileTicket): string[] {
  const precondition = failure("precondition_failed", "a.py changed", { path: "a.py", expectedSha256: null });
  const path: string = precondition.path;
  const plain = failure("timeout", "no answer"); // a code that guarantees nothing needs no fields
  const partial = failure("partial_apply", "restore failed", { operationId: "op1", outcomes: [], reconcile: ticket });
  const outcomes: PathOutcome[] = partial.outcomes;
  return [path, plain.message, String(outcomes.length)];
}

export function failureDemandsGuaranteedFields(): void {
  // @ts-expect-error: a locked failure needs its operationId
  failure("locked", "busy");
  // @ts-expect-error: no_space needs where the space ran out
  failure("no_space", "full", { path: "a.txt" });
  // @ts-expect-error: a chunk failure needs its chunk number
  failure("context_mismatch", "no match", { path: "a.py" });
}

export function literalsAreCheckedToo(): PatchFailure[] {
  return [
    { code: "timeout", message: "timeout: no answer", retryable: true },
    // @ts-expect-error: partial_apply without outcomes and ticket is not a PatchFailure
    { code: "partial_apply", message: "partial_apply: m", retryable: false, operationId: "op1" },
  ];
}
