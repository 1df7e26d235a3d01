/**
 * The shapes of a fleet rollout: targets, options, the per-host results and
 * the report. Every report value is plain JSON (`JSON.parse(JSON.stringify(
 * report))` gives an equal value), so it can be logged, saved, shown to a
 * model and handed back to {@linkcode reconcileFleet} later.
 *
 * @module
 */
import type { ApplyRequest } from "../apply.ts";
import type { RemoteShell } from "../remote/shell.ts";
import type { ReconcileOptions } from "../remote/reconcile.ts";
import type { ApplyReport, CommitReport, FailureCode, PatchFailure, ReconcileTicket } from "../types.ts";

/**
 * One host of a fleet (or, for tests and benches, one root standing in for
 * one): a unique `name`, the `root` the patch paths are relative to, and a
 * shell — given open, or opened lazily.
 *
 * - `{ shell }`: the caller's shell. The fleet never closes it (several
 *   targets may share one, e.g. several roots on one host).
 * - `{ connect }`: the fleet calls `connect(signal)` when the host's turn
 *   comes and closes the shell when the host is done (`release(shell)` when
 *   given, else `shell.close()`), so at most `concurrency` connections are
 *   open at a time however many targets there are. A rejected `connect`
 *   (`connect_failed`, `auth_failed`, `host_key_*`, or any other error) is
 *   that host's failure, never an exception out of the fleet.
 *
 * `expectedSha256` is this host's revision precondition (root-relative path
 * → SHA-256 of the version planned on), merged over the request's own for
 * every host: hosts whose files differ each get their own. `options` are
 * this host's apply options over the request's (e.g. a slower host's
 * `timeoutMs`).
 *
 * @example
 * ```ts
 * const targets: FleetTarget[] = [
 *   { name: "web1", root: "/srv/app", connect: () => connectSsh({ host: "web1" }) },
 *   { name: "local", root: "/srv/app", shell: new LocalShell(), expectedSha256: { "app.conf": "9f86d0…" } },
 * ];
 * ```
 */
export type FleetTarget = FleetTargetCommon & ({ shell: RemoteShell; connect?: never } | { connect: (signal: AbortSignal) => Promise<RemoteShell>; shell?: never; release?: (shell: RemoteShell) => Promise<void> });

/**
 * What every {@linkcode FleetTarget} has, however its shell comes.
 *
 * @example
 * ```ts
 * const common: FleetTargetCommon = { name: "web1", root: "/etc/nginx", options: { timeoutMs: 60_000 } };
 * ```
 */
export interface FleetTargetCommon {
  /** Unique within the fleet; used in the report, in progress events and for `reconcileFleet`. */
  name: string;
  /** Absolute root directory on the host; chosen by configuration, never by a model. */
  root: string;
  /** This host's revision preconditions, merged over the request's `expectedSha256`. */
  expectedSha256?: Readonly<Record<string, string>>;
  /** This host's apply options over the request's (its own timeout, matching, shared-directory policy, limits, …). */
  options?: FleetHostOptions;
}

/**
 * The apply options a target may set for its host alone.
 *
 * @example
 * ```ts
 * const slowHost: FleetHostOptions = { timeoutMs: 120_000, sharedDirectories: "allow" };
 * ```
 */
export type FleetHostOptions = Omit<FleetRequest, "patch" | "dryRun" | "expectedSha256">;

/**
 * The patch and the per-host apply options: `applyPatch`'s request without
 * what is per host or per rollout (`root`, `operationId`, `signal`,
 * `onPhase`, and `onProgress`: see {@linkcode FleetOptions}). `expectedSha256` here holds
 * for every host (per-host ones go on the targets).
 *
 * @example
 * ```ts
 * const request: FleetRequest = { patch, matching: "exact", expectedSha256: { "nginx.conf": "9f86d0…" } };
 * ```
 */
export type FleetRequest = Omit<ApplyRequest, "root" | "operationId" | "signal" | "onProgress" | "onPhase">;

/**
 * How a rollout proceeds: canary, concurrency, when to stop.
 *
 * @example
 * ```ts
 * const options: FleetOptions = { canary: ["web1"], concurrency: 16, maxFailures: 2, onProgress: (e) => console.error(e.type) };
 * ```
 */
export interface FleetOptions {
  /**
   * Hosts done first, one at a time, before any other starts: a number (the
   * first N targets, default 1; 0: no canary) or the names of the canary
   * hosts. Any canary that does not end applied (or skipped: already
   * applied) stops the rollout, whatever `maxFailures` says: a canary is
   * there to prove the patch on a real host before it goes wide, so its
   * failure means the patch or its assumptions are wrong. `maxFailures`
   * counts only the failures after the canaries.
   */
  canary?: number | readonly string[];
  /** Most hosts in flight at once — connections open and programs running (default 8). */
  concurrency?: number;
  /**
   * Longest wait for a target's `connect` (default 60 s): past it the host
   * fails `timeout` (nothing was done there) and a shell that arrives later
   * is closed at once. Each program's own limit is the request's `timeoutMs`.
   */
  connectTimeoutMs?: number;
  /**
   * How many failed hosts are tolerated (default 0): once more than this many
   * have failed, no new host starts; the running ones finish; the rest are
   * `not_started`. A host whose outcome is unknown counts as failed here (it
   * may be half-way, and the same cause may be hitting the others).
   */
  maxFailures?: number;
  /**
   * Plan every host and write nothing: every host is planned (the canary
   * and `maxFailures` do not stop a dry run: its point is to find every host
   * the patch would fail on), each host ends `planned`, `skipped` or
   * `failed`.
   */
  dryRun?: boolean;
  /**
   * Abort: no new host starts, and the running ones get the signal —
   * `applyPatch`'s cancel semantics: a host not yet committing stops with
   * nothing changed (`cancelled`); a commit the signal cuts is
   * `outcome_unknown`.
   */
  signal?: AbortSignal;
  /**
   * Stop gently: no new host starts, the running ones finish (a commit is
   * never cut). What a first Ctrl-C should do.
   */
  stopSignal?: AbortSignal;
  /**
   * Called as hosts start and finish, and when the rollout stops. An
   * exception thrown here is ignored: a display bug must not abandon
   * hosts half-way.
   */
  onProgress?: (event: FleetProgress) => void;
  /** The words of the report's summary (default: the library's, naming `applyFleet` and `reconcileFleet`). */
  words?: FleetWords;
}

/**
 * A progress event of `applyFleet`: a host started, a host finished (with
 * its result), or the rollout stopped starting hosts. Each carries the
 * hosts running now, done so far, and in all.
 *
 * @example
 * ```ts
 * const onProgress = (e: FleetProgress): void => {
 *   if (e.type === "host_finished") console.error(`[${e.done}/${e.total}] ${e.name} ${e.host.state}`);
 * };
 * ```
 */
export type FleetProgress =
  | { type: "host_started"; name: string; phase: FleetPhase; running: number; done: number; total: number }
  | { type: "host_finished"; name: string; phase: FleetPhase; host: FleetHost; running: number; done: number; total: number }
  | { type: "stopped"; stopped: FleetStopped; running: number; done: number; total: number };

/**
 * Whether a host ran as a canary (alone, first) or in the wide rollout.
 *
 * @example
 * ```ts
 * const phase: FleetPhase = "canary";
 * ```
 */
export type FleetPhase = "canary" | "rollout";

/**
 * What happened on one host:
 * - `applied`: the patch is committed there;
 * - `planned`: dry run: it would apply, nothing was written;
 * - `skipped`: the host already holds the patch's result (every file section
 *   is reported already applied: usually an earlier run of the same rollout),
 *   so nothing was written and it is not a failure — re-running a partly
 *   applied rollout on every host is safe;
 * - `failed`: refused or failed and nothing changed (the patch does not fit,
 *   a precondition, a lock, the connection, the host key, a timeout before
 *   the commit);
 * - `outcome_unknown`: files may have changed (the commit was cut, or failed
 *   part-way and could not restore): settle it with `reconcileFleet`;
 * - `cancelled`: the abort signal stopped it before its commit: nothing changed;
 * - `not_started`: the rollout stopped before its turn: nothing was done.
 *
 * @example
 * ```ts
 * const again = report.hosts.filter((h) => (["failed", "cancelled", "not_started"] as FleetHostState[]).includes(h.state));
 * ```
 */
export type FleetHostState = "applied" | "planned" | "skipped" | "failed" | "outcome_unknown" | "cancelled" | "not_started";

/**
 * Every state, in the order summaries count them.
 *
 * @example
 * ```ts
 * FLEET_HOST_STATES.filter((s) => report.summary.counts[s] > 0);
 * ```
 */
export const FLEET_HOST_STATES: readonly FleetHostState[] = ["applied", "planned", "skipped", "failed", "outcome_unknown", "cancelled", "not_started"];

/**
 * What every host that started has.
 *
 * @example
 * ```ts
 * const run: FleetHostRun = { name: "web1", phase: "canary", ms: 180, order: 1, report };
 * ```
 */
export interface FleetHostRun {
  /** The target's name. */
  name: string;
  /** Canary or rollout. */
  phase: FleetPhase;
  /** Wall time of this host: connect, read, plan, commit, close. */
  ms: number;
  /** 1 for the first host to finish, 2 for the next, …: the order things happened in. */
  order: number;
  /** The host's `applyPatch` report (for a host whose connection failed: a report with that failure and no files). */
  report: ApplyReport;
}

/**
 * One host's result: a union on `state` (see {@linkcode FleetHostState}).
 * `failed` and `outcome_unknown` carry the `error` that decided it (the
 * report's first failure, or its unknown outcome); `outcome_unknown` also
 * its operation id and reconcile ticket; after `reconcileFleet`, a host
 * that was unknown carries `reconciled`.
 *
 * @example
 * ```ts
 * for (const h of report.hosts) {
 *   if (h.state === "failed") console.error(h.name, h.error.message);
 *   if (h.state === "outcome_unknown") console.error(h.name, "reconcile operation", h.operationId);
 * }
 * ```
 */
export type FleetHost =
  | (FleetHostRun & { state: "applied"; reconciled?: FleetReconciledHost })
  | (FleetHostRun & { state: "planned" | "cancelled" })
  | (FleetHostRun & { state: "skipped"; reason: "already_applied" })
  | (FleetHostRun & { state: "failed"; error: PatchFailure; reconciled?: FleetReconciledHost })
  | (FleetHostRun & { state: "outcome_unknown"; error: PatchFailure; operationId: string; reconcile: ReconcileTicket; reconciled?: FleetReconciledHost })
  | { name: string; state: "not_started" };

/**
 * Why a rollout stopped before every host had its turn.
 *
 * @example
 * ```ts
 * const stopped: FleetStopped = { reason: "max_failures", after: "web4", failures: 1 };
 * ```
 */
export interface FleetStopped {
  /**
   * `canary_failed`: a canary did not apply; `max_failures`: more than
   * `maxFailures` hosts failed; `cancelled`: the abort signal;
   * `stopped`: the stop signal.
   */
  reason: "canary_failed" | "max_failures" | "cancelled" | "stopped";
  /** The host whose result stopped it; for a signal, the last host started before it (`null`: none). */
  after: string | null;
  /** Hosts failed (or of unknown outcome) when it stopped. */
  failures: number;
}

/**
 * The result of `applyFleet`: plain JSON.
 *
 * @example
 * ```ts
 * const report: FleetReport = await applyFleet(targets, { patch });
 * if (!report.ok) console.error(report.summary.text);
 * ```
 */
export interface FleetReport {
  /** Every host `applied` or `skipped` (dry run: `planned` or `skipped`). */
  ok: boolean;
  /** Every host was only planned; nothing was written. */
  dryRun: boolean;
  /** One entry per target, in the targets' order. */
  hosts: FleetHost[];
  /** Present when the rollout stopped before every host had its turn. */
  stopped?: FleetStopped;
  /**
   * Present when the call was refused before any host started (a field the
   * fleet does not read: `invalid_request`); every host is `not_started`.
   */
  refused?: PatchFailure;
  /** What to do next, for a model or a person. */
  summary: FleetSummary;
}

/**
 * What a model (or a person) needs to act in one step.
 *
 * @example
 * ```ts
 * report.summary.counts.failed; // 1
 * report.summary.rerun; // ["web4", "web5"]
 * report.summary.nextStep; // "Fix the cause of the first failure (on web4), then call applyFleet again with only the targets web4, web5."
 * ```
 */
export interface FleetSummary {
  /** Hosts in the report. */
  total: number;
  /** Hosts per state (every state present, 0 included). */
  counts: Record<FleetHostState, number>;
  /** The first failure to happen (by time), its message verbatim; `host` null for a refused call. */
  firstFailure: { host: string | null; code: FailureCode; message: string } | null;
  /** Hosts whose files may have changed: reconcile them before anything else. */
  reconcile: { host: string; operationId: string }[];
  /**
   * Hosts to send the patch to again once the first failure's cause is
   * fixed: `failed`, `cancelled` and `not_started`, in target order (hosts
   * that already hold the change would be skipped anyway).
   */
  rerun: string[];
  /** The next step, in the words of the front end that made the summary. */
  nextStep: string;
  /** Hosts per state and why the rollout stopped, in a sentence or two. */
  headline: string;
  /** The headline, the next step, then the first failure's message verbatim. */
  text: string;
}

/**
 * How one host of a `reconcileFleet` settled.
 *
 * @example
 * ```ts
 * const settled: FleetReconciledHost = { name: "web5", operationId: "3f2a9c01d4e5b6a7", state: "applied", report };
 * ```
 */
export interface FleetReconciledHost {
  /** The target's name. */
  name: string;
  /** The operation reconciled. */
  operationId: string;
  /**
   * `applied`: every file holds the patch's result; `not_applied`: every file
   * is as it was (nothing changed: the patch may be sent again);
   * `diverged`: mixed, or changed by someone else — look before acting;
   * `unsettled`: reconcile could not finish (unreachable, still locked):
   * run it again later.
   */
  state: "applied" | "not_applied" | "diverged" | "unsettled";
  /** The reconcile report (per file `state`), or the failure that stopped it. */
  report: CommitReport;
}

/**
 * Options of `reconcileFleet`: reconcile's own (lock wait, timeouts, shared
 * directories) for every host, and how many hosts at once.
 *
 * @example
 * ```ts
 * await reconcileFleet(report, targets, { concurrency: 4, lockWaitMs: 30_000 });
 * ```
 */
export interface ReconcileFleetOptions extends Omit<ReconcileOptions, "signal"> {
  /** Most hosts reconciled at once (default 8). */
  concurrency?: number;
  /** As for {@linkcode FleetOptions.connectTimeoutMs}. */
  connectTimeoutMs?: number;
  /** Abort: no new host starts; running reconciles get the signal (reconcile may be run again). */
  signal?: AbortSignal;
  /** The words of the summary of the updated report (see {@linkcode FleetWords}). */
  words?: FleetWords;
}

/**
 * The result of `reconcileFleet`.
 *
 * @example
 * ```ts
 * const settled: FleetReconcileReport = await reconcileFleet(report, targets);
 * console.log(settled.fleet.summary.text);
 * ```
 */
export interface FleetReconcileReport {
  /** Every host settled (`applied` or `not_applied`). */
  ok: boolean;
  /** One entry per host that was `outcome_unknown`, in target order. */
  hosts: FleetReconciledHost[];
  /**
   * The fleet report with those hosts' states updated: `applied` → applied;
   * `not_applied` and `diverged` → failed (nothing of the patch there, or not
   * cleanly: the `reconciled` field says which); `unsettled` stays
   * `outcome_unknown`. Its summary is made again.
   */
  fleet: FleetReport;
}

/**
 * A front end's words for the next steps of a summary: how to send the
 * patch again to some hosts, how to settle unknown outcomes, and how to go
 * from a dry run to the real run. The library's own words name its functions.
 *
 * @example
 * ```ts
 * const cli: FleetWords = {
 *   rerun: (hosts) => `run it again with --hosts ${hosts.join(",")}`,
 *   reconcile: (hosts) => `run --reconcile for ${hosts.map((h) => h.host).join(", ")}`,
 *   applyForReal: () => "run it again without --dry-run",
 * };
 * ```
 */
export interface FleetWords {
  /** Send the patch again to `hosts` (all names, in order). */
  rerun(hosts: readonly string[]): string;
  /** Settle the unknown outcomes of `hosts`. */
  reconcile(hosts: readonly { host: string; operationId: string }[]): string;
  /** After a dry run that planned every host: how to apply it. */
  applyForReal(): string;
}
