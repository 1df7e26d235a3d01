/**
 * `reconcile`: settle an operation whose commit ended `outcome_unknown`
 * (SPEC §7). The program and its state machine are described in
 * lib/remote/programs/reconcile_program.ts and lib/remote/programs/commit_program.ts.
 *
 * @module
 */
import { asFailures, failure, hasFailures, quotedFailure, reconcileHint, warning } from "../failure.ts";
import { DEFAULT_LOCK_WAIT_MS } from "./commit.ts";
import { reconcileProgram } from "./programs/programs.ts";
import { transactionInput, transactionLayout } from "./manifest.ts";
import { parseProgramOutput } from "./protocol.ts";
import type { ProgramOutput } from "./protocol.ts";
import { shasOf } from "./plan_shas.ts";
import { locked, remoteError, remoteWarning, rootFailure, unsafeDirectory, unsupported } from "./failures.ts";
import { randomBytes } from "node:crypto";
import { MAX_REPLY_BYTES, MAX_STDERR_BYTES, replyTooLarge, stdoutOverflow, writeTimeoutMs } from "./exec_bounds.ts";
import { isWriteRefusal, lockedFailure, lockHolder, writeRefused } from "./host_refusals.ts";
import { execProgram } from "./host_wire.ts";
import type { CompressMode } from "./host_wire.ts";
import { unknownKeysFailure } from "./request_keys.ts";
import { badValueFailure, PROGRAM_VALUE_RULES } from "./request_values.ts";
import type { ValueRule } from "./request_values.ts";
import type { NamesEveryKey } from "./request_keys.ts";
import { programMayHaveRun, RemoteShellError } from "./shell.ts";
import type { ExecResult, RemoteShell } from "./shell.ts";
import type { CommitReport, Failures, FileReport, PatchFailure, Plan, PlannedFile, ReconcileTicket, SharedDirectories, Warning } from "../types.ts";
import type { TransactionLayout } from "./manifest.ts";

/**
 * Options of {@linkcode reconcile}.
 *
 * @example
 * ```ts
 * const settled = await reconcile(shell, "/srv/app", ticket, { lockWaitMs: 30_000 });
 * ```
 */
export interface ReconcileOptions {
  /** Longest wait for the operation's locks (e.g. while its commit still runs), default 10 s. */
  lockWaitMs?: number;
  /** Abort the call: the program is killed on the host. */
  signal?: AbortSignal;
  /** Kill the program and report after this long. Default: 5 min + the lock wait (lib/remote/exec_bounds.ts). */
  timeoutMs?: number;
  /** As for the commit: `"allow"` to work in directories others can write (the commit must have been allowed too). Default `"refuse"`. */
  sharedDirectories?: SharedDirectories;
  /** As for the commit: accept a root below a directory others can write (see CommitOptions.trustRootAncestors). Default false. */
  trustRootAncestors?: boolean;
  /** As for the commit: send the program packed when the host can unpack it (lib/remote/host_wire.ts). Default `"auto"`. */
  compress?: CompressMode;
}

/** Every field of {@linkcode ReconcileOptions}: any other key is refused (`invalid_request`). */
const RECONCILE_OPTION_KEYS = ["lockWaitMs", "signal", "timeoutMs", "sharedDirectories", "trustRootAncestors", "compress"] as const satisfies readonly (keyof ReconcileOptions)[];
const everyReconcileKey: NamesEveryKey<ReconcileOptions, (typeof RECONCILE_OPTION_KEYS)[number]> = true;
void everyReconcileKey;
/** What each option's value must be (a mistyped one is refused like an unknown key). */
const RECONCILE_VALUES: Readonly<Record<keyof ReconcileOptions, ValueRule>> = PROGRAM_VALUE_RULES;

/**
 * Find out what the operation of `ticket` did to its files, finish it
 * cleanly and report each file's `state`. The ticket says everything:
 * the operation id and, per file, its paths and SHA-256s (plain JSON). Take
 * it from the `reconcile` field of an `outcome_unknown` / `partial_apply`
 * failure (`reconcileTicketOf(report)`), or build it from the plan that
 * was committed (`reconcileTicket(plan, operationId)`). A malformed ticket
 * fails `invalid_argument` without contacting the host. Each file's `state`:
 * - `applied`: the disk shows the planned result;
 * - `not_applied`: the disk shows the state the plan was built on;
 * - `diverged`: something else (another writer changed it).
 *
 * An operation that died in the middle of finalizing (no commit point in
 * its journal) is rolled back first — every file it began is restored from
 * its backup when the disk still shows what it wrote, including a deleted
 * file renamed aside — so the usual outcome is "all applied" or "all
 * not_applied", and a not_applied patch can simply be sent again. An
 * operation that reached its commit point is left applied. Either way its
 * stages, backups, journal and locks are removed (a backup that is the only
 * copy of a removed file whose name was re-created by someone else is kept
 * and named in a `cleanup_incomplete` warning).
 *
 * Call it after the commit's exec has returned (with `outcome_unknown`):
 * a reconcile racing a commit that is still uploading (before it holds any
 * lock) removes that commit's stages, which makes the commit fail cleanly
 * with nothing changed.
 *
 * `ok` means reconcile itself completed; read each file's `state` for what
 * happened. `ok: false` with `locked` means the commit is still running (or
 * another operation holds a lock): call again later. Safe to call any number
 * of times, also for an operation that succeeded.
 *
 * Like commitRemote it resolves with a report for every outcome of the
 * host (a failure is a value in `errors`); it rejects only for a
 * programmer error (no shell: TypeError).
 *
 * @example
 * ```ts
 * const ticket = reconcileTicketOf(committed); // from the failure alone
 * if (ticket !== null) {
 *   const settled = await reconcile(shell, "/srv/app", ticket);
 *   settled.files.map((f) => `${f.path}: ${f.state}`);
 * }
 * // or from the plan that was committed:
 * await reconcile(shell, "/srv/app", reconcileTicket(plan, "3f2a9c01d4e5b6a7"));
 * ```
 */
export async function reconcile(
  shell: RemoteShell,
  root: string,
  ticket: ReconcileTicket,
  options: ReconcileOptions = {},
): Promise<CommitReport> {
  if (!shell || typeof shell.exec !== "function") throw new TypeError("reconcile: shell must be a RemoteShell");
  // The ticket may have travelled through JSON, a file or a model: an id
  // that is not one (ticketPlan refuses it below) is reported as "".
  const given: unknown = ticket !== null && typeof ticket === "object" ? ticket.operationId : undefined;
  const operationId = typeof given === "string" && OPERATION_ID.test(given) ? given : "";
  const lockWaitMs = options.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS;
  const base = {
    operationId,
    atomicity: "batch_preflight_per_file_commit" as const,
    elevated: shell.elevated ?? false,
  };
  const fail = (errors: Failures, warnings: Warning[] = []): CommitReport => ({
    ok: false,
    ...base,
    files: [],
    warnings,
    errors: asFailures(errors.map((e) => ({ ...e, operationId }))),
  });
  const strange = unknownKeysFailure("reconcile options", options, RECONCILE_OPTION_KEYS, "nothing was reconciled") ??
    badValueFailure("reconcile options", options, RECONCILE_VALUES, "nothing was reconciled");
  if (strange !== null) return fail([strange]);
  // A bad ticket is a typed failure, not a TypeError: it is data.
  const subject = ticketPlan(ticket);
  if ("code" in subject) return fail([subject]);
  const { plan, sizes } = subject;
  let layout: TransactionLayout;
  try {
    layout = transactionLayout(plan, { contentless: true });
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return fail([badTicket(error.message)]);
  }
  const command = reconcileProgram(root, operationId, lockWaitMs, options.sharedDirectories ?? "refuse", options.trustRootAncestors === true);
  if (plan.files.length === 0) return { ok: true, ...base, files: [], warnings: [] };
  // A front end that cannot run reconcile itself rewords this step (hints).
  const settle = reconcileHint(operationId, `call reconcile again with operation id ${operationId}`);
  const again = settle.says;
  const hints = [settle];

  let result: ExecResult;
  const stdin = transactionInput(plan, layout, "SAP-RECONCILE-2", false, randomBytes(16).toString("hex"));
  const tooLarge = (): CommitReport => fail([replyTooLarge("reconcile", MAX_REPLY_BYTES, { again: operationId })]);
  try {
    result = await execProgram(shell, command, {
      stdin,
      signal: options.signal,
      timeoutMs: options.timeoutMs ?? writeTimeoutMs(stdin.length, lockWaitMs),
      maxStdoutBytes: MAX_REPLY_BYTES,
      maxStderrBytes: MAX_STDERR_BYTES,
    }, options.compress);
  } catch (error) {
    if (!(error instanceof RemoteShellError)) throw error;
    if (stdoutOverflow(error)) return tooLarge();
    // Either way the files are as the commit left them, or partly restored
    // by this reconcile; running it again finishes the job.
    const how = programMayHaveRun(error) ? "reconcile may have stopped part-way" : "reconcile did not run";
    return fail([{ ...error.failure, message: `${quotedFailure(error.failure)} (${how}: ${again})`, hints: [...(error.failure.hints ?? []), settle] }]);
  }
  // An adapter that does not honour maxStdoutBytes: the same bound, checked here.
  if (result.stdout.length > MAX_REPLY_BYTES) return tooLarge();
  const out = parseProgramOutput(result.stdout, layout.paths.length, plan.files.length);
  const stderr = new TextDecoder().decode(result.stderr.subarray(0, MAX_STDERR_BYTES));
  const host = shell.label ?? "the host";
  const warnings = out.warns
    .map((w) => remoteWarning(w.code, w.k === null ? null : layout.paths[w.k]!, w.detail, operationId))
    .filter((w): w is Warning => w !== null);
  for (const k of out.kept) {
    const path = layout.paths[k]!;
    warnings.push(warning(
      "cleanup_incomplete",
      `${path} was re-created by someone else after this operation removed it; the removed version was kept next to it as .sap-${operationId}-<n>.bak. Compare the two and delete the backup by hand.`,
      { path },
    ));
  }

  if (out.end === null) {
    const what = result.exitCode === null && result.signal === null
      ? "the connection closed before reconcile reported its result"
      : out.malformed !== null
      ? "reconcile's report was unreadable"
      : `the reconcile program stopped (${result.signal ?? `exit ${result.exitCode}`})`;
    return fail([failure("outcome_unknown", `${what}; ${again}.`, { retryable: true, hints })], warnings);
  }
  switch (out.end) {
    case "ok":
      return { ok: true, ...base, files: fileStates(plan, sizes, layout, out), warnings };
    case "locked": {
      if (out.locked === null) {
        const f = locked(plan.files[0]!.path, 0, lockWaitMs, operationId);
        return fail([{ ...f, message: `${f.message.replace(/ Retry in a few seconds\.$/, "")} The commit may still be running: ${again} in a few seconds.`, hints }], warnings);
      }
      const path = out.locked.k === "op" ? undefined : layout.paths[out.locked.k]!;
      return fail([{ ...lockedFailure(lockHolder(out.locked, path ?? "", operationId), path, lockWaitMs, operationId, "reconcile"), hints }], warnings);
    }
    case "unsupported":
      return fail([unsupported(out.unsupported ?? "a required tool", host)], warnings);
    case "root":
      return fail([rootFailure(out.root ?? "missing", root, host)], warnings);
    case "unsafe":
    {
      const seen = new Set<string>();
      const unsafe = out.unsafe.filter((u) => !seen.has(u.dir.path) && seen.add(u.dir.path)).map((u) => unsafeDirectory(layout.paths[u.k], u.dir, u.ownerName, u.groupName, root));
      // A host that refuses a directory without naming it still gets a true report.
      return fail(hasFailures(unsafe) ? unsafe : [{ ...remoteError(`reconcile refused a directory without saying which; ${again}`, stderr), hints }], warnings);
    }
    default: {
      // Its locks could not be made (a full or read-only file system, no
      // write permission): that happens before reconcile changes anything.
      const refused = out.end === "failed" ? out.fails.find((f) => isWriteRefusal(f.code)) : undefined;
      if (refused !== undefined && isWriteRefusal(refused.code)) {
        const path = refused.k === null ? undefined : layout.paths[refused.k];
        return fail([{
          ...writeRefused(refused.code, {
            root,
            ...(path !== undefined ? { path } : {}),
            what: refused.detail,
            bytesNeeded: null,
            bytesFree: out.space?.free ?? null,
            operationId,
            undone: "reconcile stopped before changing anything: the files are as the commit left them",
            again,
          }),
          hints,
        }], warnings);
      }
      return fail([{ ...remoteError(`reconcile stopped (${out.end}); ${again}`, stderr), hints }], warnings);
    }
  }
}

function fileStates(plan: Plan, sizes: readonly number[], layout: TransactionLayout, out: ProgramOutput): FileReport[] {
  const holds = (k: number, sha: string | null): boolean => {
    const s = out.states.get(k);
    if (!s) return false;
    return sha === null ? s.kind === "missing" : s.kind === "file" && s.sha === sha;
  };
  return plan.files.map((file, i): FileReport => {
    const { src, dst } = layout.files[i]!;
    const { oldSha, newSha } = shasOf(plan, layout, src);
    let state: FileReport["state"];
    if (dst === null) {
      state = holds(src, newSha) ? "applied" : holds(src, oldSha) ? "not_applied" : "diverged";
    } else {
      const dstNew = shasOf(plan, layout, dst).newSha;
      state = holds(src, null) && holds(dst, dstNew)
        ? "applied"
        : holds(src, oldSha) && holds(dst, null)
        ? "not_applied"
        : "diverged";
    }
    return {
      op: file.op,
      path: file.path,
      ...(file.moveTo !== undefined ? { moveTo: file.moveTo } : {}),
      previousSha256: file.expected.state === "sha256" ? file.expected.sha256 : null,
      newSha256: file.op === "delete" ? null : file.newSha256 ?? null,
      bytesWritten: state === "applied" ? sizes[i]! : 0,
      metadataPreserved: null,
      diff: file.diff,
      warnings: [],
      state,
    };
  });
}

const SHA = /^[0-9a-f]{64}$/;
const OPERATION_ID = /^[A-Za-z0-9_]{1,64}$/;

/**
 * The content-less plan a ticket stands for, with each file's new size, or
 * the failure saying what is wrong with the ticket. Paths and SHA-256s are
 * checked again by transactionLayout before anything is sent.
 */
function ticketPlan(ticket: ReconcileTicket): { plan: Plan; sizes: number[] } | PatchFailure {
  if (ticket === null || typeof ticket !== "object" || !Array.isArray(ticket.files)) {
    return badTicket("it needs operationId and a files array");
  }
  if (typeof ticket.operationId !== "string" || !OPERATION_ID.test(ticket.operationId)) {
    return badTicket("its operationId must be 1-64 characters of [A-Za-z0-9_]");
  }
  const files: PlannedFile[] = [];
  const sizes: number[] = [];
  for (const [i, f] of ticket.files.entries()) {
    const at = `files[${i}]`;
    if (f === null || typeof f !== "object" || !["add", "update", "delete", "move", "replace"].includes(f.op)) return badTicket(`${at}.op must be add, update, delete, move or replace`);
    if (typeof f.path !== "string") return badTicket(`${at}.path must be a string`);
    if ((f.op === "move") !== (typeof f.moveTo === "string")) return badTicket(`${at}: a move, and only a move, has moveTo`);
    const wantsPrevious = f.op !== "add";
    if (wantsPrevious ? typeof f.previousSha256 !== "string" || !SHA.test(f.previousSha256) : f.previousSha256 !== null) {
      return badTicket(`${at}.previousSha256 must be ${wantsPrevious ? "a lowercase SHA-256" : "null for an add"}`);
    }
    const wantsNew = f.op !== "delete";
    if (wantsNew ? typeof f.newSha256 !== "string" || !SHA.test(f.newSha256) : f.newSha256 !== null) {
      return badTicket(`${at}.newSha256 must be ${wantsNew ? "a lowercase SHA-256" : "null for a delete"}`);
    }
    const size = f.newSize ?? 0;
    if (!Number.isSafeInteger(size) || size < 0) return badTicket(`${at}.newSize must be a byte count or null`);
    files.push({
      op: f.op,
      path: f.path,
      ...(f.op === "move" ? { moveTo: f.moveTo! } : {}),
      expected: f.previousSha256 === null ? { state: "missing" } : { state: "sha256", sha256: f.previousSha256 },
      ...(f.newSha256 !== null ? { newSha256: f.newSha256 } : {}),
      diff: "",
      hunks: [],
      warnings: [],
    });
    sizes.push(size);
  }
  return { plan: { files, warnings: [], createParents: false }, sizes };
}

function badTicket(problem: string): PatchFailure {
  return failure(
    "invalid_argument",
    `this reconcile ticket cannot be used: ${problem}. Pass the "reconcile" object of the outcome_unknown or partial_apply failure unchanged, with its operationId.`,
  );
}
