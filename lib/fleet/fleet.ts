/**
 * Layer `lib/fleet/` (above `lib/apply.ts`): one patch to many hosts —
 * `applyFleet` (this file) and `reconcileFleet` (reconcile_fleet.ts), with
 * their shapes (types.ts), summary (summary.ts), per-host judgement
 * (host_state.ts) and connection handling (connections.ts). It may import
 * `lib/apply.ts`, the remote layer, the pure layers, `lib/types.ts`,
 * `lib/failure.ts` and `node:` modules; never `lib/ssh/` or `ssh2`: a host
 * is whatever `RemoteShell` its target gives or connects.
 *
 * This file: the rollout — canaries one at a time, then the rest at most
 * `concurrency` at once, stopping on failures, on the abort signal and on
 * the stop signal; every host's truth in the report.
 *
 * @module
 */
import { applyPatch } from "../apply.ts";
import { failure } from "../failure.ts";
import { parsePatch } from "../patch/parse.ts";
import { newOperationId } from "../remote/commit.ts";
import type { ApplyReport, Patch, PatchFailure } from "../types.ts";
import { holdShell } from "./connections.ts";
import { fleetKeysFailure } from "./fleet_keys.ts";
import { countsAsFailure, endedWell, hostResult } from "./host_state.ts";
import { notRunReport } from "./report_fields.ts";
import { summarizeFleet } from "./summary.ts";
import type { FleetHost, FleetOptions, FleetPhase, FleetProgress, FleetReport, FleetRequest, FleetStopped, FleetTarget } from "./types.ts";

/**
 * Hosts in flight at once unless `concurrency` says otherwise.
 *
 * @example
 * ```ts
 * await applyFleet(targets, { patch }, { concurrency: DEFAULT_FLEET_CONCURRENCY * 2 });
 * ```
 */
export const DEFAULT_FLEET_CONCURRENCY = 8;

/**
 * Apply one patch to many hosts: each host gets its own snapshot, plan and
 * preconditions (the same patch may land at different lines on each), the
 * canaries go first, one at a time, then the rest, at most `concurrency` at
 * once, each through {@linkcode applyPatch}.
 *
 * Stopping: a canary that fails stops the rollout; after the canaries, once
 * more than `maxFailures` hosts have failed (default 0: the first failure),
 * no new host starts, the running ones finish, and the rest are
 * `not_started`. A host whose outcome is unknown counts as failed. A dry
 * run plans every host and never stops on failures.
 *
 * Never throws for a host's failure: connection, authentication and host-key
 * failures, timeouts, refusals and unknown outcomes are that host's state in
 * the report, and each host's `applyPatch` report is kept whole. A field
 * the fleet does not read (in the request, the options or a target: a
 * misspelt `dryrun`) refuses the call before any host starts: `refused`
 * holds the `invalid_request` failure naming the closest field. Only
 * programmer errors throw (a `TypeError` before anything starts: no
 * targets, duplicate names, a bad option value). Hosts in `outcome_unknown` carry
 * their operation id and reconcile ticket: {@linkcode reconcileFleet} settles
 * them. The report is plain JSON and its `summary` says the next step.
 *
 * @example
 * ```ts
 * const targets = ["web1", "web2", "web3"].map((host) => ({
 *   name: host,
 *   root: "/etc/nginx",
 *   connect: () => connectSsh({ host }),
 * }));
 * const report = await applyFleet(targets, {
 *   patch: "*** Begin Patch\n*** Update File: nginx.conf\n@@\n-worker_connections 512;\n+worker_connections 4096;\n*** End Patch",
 * }, { canary: 1, concurrency: 8, maxFailures: 0 });
 * console.log(report.summary.text);
 * if (report.summary.reconcile.length > 0) await reconcileFleet(report, targets);
 * ```
 */
export async function applyFleet(targets: readonly FleetTarget[], request: FleetRequest, options: FleetOptions = {}): Promise<FleetReport> {
  checkArguments(targets, request, options);
  const dryRun = request.dryRun === true || options.dryRun === true;
  const refused = fleetKeysFailure(targets, request, options);
  if (refused !== null) {
    const partial = { dryRun, hosts: targets.map((t): FleetHost => ({ name: t.name, state: "not_started" })), refused };
    return { ok: false, ...partial, summary: summarizeFleet(partial, options.words) };
  }
  const concurrency = options.concurrency ?? DEFAULT_FLEET_CONCURRENCY;
  const maxFailures = options.maxFailures ?? 0;
  const canaries = dryRun ? [] : canaryIndices(targets, options.canary ?? 1);
  const parsed = parsePatch(request.patch, { limits: request.limits });
  const patch: Patch | null = parsed.ok ? parsed.patch : null;
  const never = new AbortController().signal;
  const signal = options.signal ?? never;

  const hosts: FleetHost[] = targets.map((t) => ({ name: t.name, state: "not_started" }));
  let running = 0;
  let done = 0;
  let finished = 0;
  let failures = 0;
  let lastStarted: string | null = null;
  let stopped: FleetStopped | undefined;

  const progress = (event: FleetProgress): void => {
    try {
      options.onProgress?.(event);
    } catch {
      // A display bug must not abandon hosts half-way (see FleetOptions.onProgress).
    }
  };
  const stop = (reason: FleetStopped["reason"], after: string | null): void => {
    if (stopped !== undefined) return;
    stopped = { reason, after, failures };
    progress({ type: "stopped", stopped, running, done, total: targets.length });
  };
  /** Whether the next host may start; records why not. */
  const mayStart = (): boolean => {
    if (signal.aborted) stop("cancelled", lastStarted);
    else if (options.stopSignal?.aborted) stop("stopped", lastStarted);
    return stopped === undefined;
  };

  const runHost = async (index: number, phase: FleetPhase): Promise<FleetHost> => {
    const target = targets[index]!;
    lastStarted = target.name;
    running++;
    progress({ type: "host_started", name: target.name, phase, running, done, total: targets.length });
    const started = performance.now();
    const operationId = newOperationId();
    const report = await hostReport(target, request, { dryRun, signal, operationId, connectTimeoutMs: options.connectTimeoutMs });
    running--;
    done++;
    const host = hostResult({ name: target.name, phase, ms: Math.round(performance.now() - started), order: ++finished, report }, patch);
    hosts[index] = host;
    if (countsAsFailure(host)) failures++;
    progress({ type: "host_finished", name: target.name, phase, host, running, done, total: targets.length });
    return host;
  };

  // Canaries: one at a time, in order; the first that does not end well stops everything.
  for (const index of canaries) {
    if (!mayStart()) break;
    const host = await runHost(index, "canary");
    if (!endedWell(host) && host.state !== "cancelled") stop("canary_failed", host.name);
  }

  // The rest: a queue in target order, drained by at most `concurrency` workers.
  const isCanary = new Set(canaries);
  const queue = targets.map((_, i) => i).filter((i) => !isCanary.has(i));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < queue.length && mayStart()) {
      const host = await runHost(queue[next++]!, "rollout");
      if (!dryRun && countsAsFailure(host) && failures > maxFailures) stop("max_failures", host.name);
    }
  };
  if (stopped === undefined) await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));

  const partial = { dryRun, hosts, ...(stopped !== undefined ? { stopped } : {}) };
  return { ok: hosts.every(endedWell), ...partial, summary: summarizeFleet(partial, options.words) };
}

/** One host's `applyPatch` report, or one standing for why it could not run. */
async function hostReport(
  target: FleetTarget,
  request: FleetRequest,
  run: { dryRun: boolean; signal: AbortSignal; operationId: string; connectTimeoutMs: number | undefined },
): Promise<ApplyReport> {
  const notRun = (cause: PatchFailure): ApplyReport => notRunReport(cause, run.operationId, run.dryRun);
  const held = await holdShell(target, run.signal, run.connectTimeoutMs);
  if ("code" in held) return notRun(held);
  try {
    if (run.signal.aborted) return notRun(failure("cancelled", `the rollout was cancelled before ${target.name} started; nothing was changed there.`));
    const expected = request.expectedSha256 === undefined && target.expectedSha256 === undefined
      ? undefined
      : { ...request.expectedSha256, ...target.expectedSha256 };
    return await applyPatch(held.shell, {
      ...request,
      ...target.options,
      root: target.root,
      dryRun: run.dryRun,
      operationId: run.operationId,
      signal: run.signal,
      ...(expected !== undefined ? { expectedSha256: expected } : {}),
    });
  } catch (error) {
    // applyPatch throws only for bugs; one host's must not leave the others
    // running unobserved, so it is that host's failure (and stops the rollout).
    const what = error instanceof Error ? error.message : String(error);
    return notRun(failure("remote_error", `applying the patch on ${target.name} hit an unexpected error (${what}); read the patch's files there to see their state before sending it again.`, { retryable: false }));
  } finally {
    await held.release();
  }
}

/** The indices of the canary hosts, in the order they run. */
function canaryIndices(targets: readonly FleetTarget[], canary: number | readonly string[]): number[] {
  if (typeof canary === "number") return targets.slice(0, Math.min(canary, targets.length)).map((_, i) => i);
  return canary.map((name) => targets.findIndex((t) => t.name === name));
}

/** Programmer errors, before anything starts. */
function checkArguments(targets: readonly FleetTarget[], request: FleetRequest, options: FleetOptions): void {
  if (!Array.isArray(targets) || targets.length === 0) throw new TypeError("applyFleet: targets must be a non-empty array");
  const names = new Set<string>();
  for (const t of targets) {
    if (!t || typeof t.name !== "string" || t.name === "") throw new TypeError("applyFleet: every target needs a non-empty string name");
    if (names.has(t.name)) throw new TypeError(`applyFleet: two targets are named ${JSON.stringify(t.name)}; names must be unique`);
    names.add(t.name);
    if (typeof t.root !== "string" || t.root === "") throw new TypeError(`applyFleet: target ${JSON.stringify(t.name)} needs a string root`);
    const hasShell = t.shell !== undefined;
    const hasConnect = t.connect !== undefined;
    if (hasShell === hasConnect) throw new TypeError(`applyFleet: target ${JSON.stringify(t.name)} needs exactly one of shell and connect`);
    if (hasShell && typeof t.shell.exec !== "function") throw new TypeError(`applyFleet: target ${JSON.stringify(t.name)}: shell must be a RemoteShell`);
    if (hasConnect && typeof t.connect !== "function") throw new TypeError(`applyFleet: target ${JSON.stringify(t.name)}: connect must be a function`);
    if (t.options !== undefined && (typeof t.options !== "object" || "patch" in t.options || "root" in t.options)) {
      throw new TypeError(`applyFleet: target ${JSON.stringify(t.name)}: options are apply options (no patch, no root)`);
    }
  }
  if (!request || typeof request.patch !== "string") throw new TypeError("applyFleet: request needs a string patch");
  if ("root" in request) throw new TypeError("applyFleet: the request has no root: each target names its own");
  const { concurrency, maxFailures, canary, connectTimeoutMs } = options;
  if (connectTimeoutMs !== undefined && !(connectTimeoutMs > 0)) throw new TypeError("applyFleet: connectTimeoutMs must be a positive number of milliseconds");
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1)) throw new TypeError("applyFleet: concurrency must be a whole number ≥ 1");
  if (maxFailures !== undefined && !((Number.isInteger(maxFailures) || maxFailures === Infinity) && maxFailures >= 0)) {
    throw new TypeError("applyFleet: maxFailures must be a whole number ≥ 0 (or Infinity)");
  }
  if (typeof canary === "number" && !(Number.isInteger(canary) && canary >= 0)) throw new TypeError("applyFleet: canary must be a whole number ≥ 0 or a list of target names");
  if (Array.isArray(canary)) {
    const seen = new Set<string>();
    for (const name of canary) {
      if (!names.has(name)) throw new TypeError(`applyFleet: canary ${JSON.stringify(name)} is not the name of a target`);
      if (seen.has(name)) throw new TypeError(`applyFleet: canary ${JSON.stringify(name)} is listed twice`);
      seen.add(name);
    }
  } else if (canary !== undefined && typeof canary !== "number") throw new TypeError("applyFleet: canary must be a whole number ≥ 0 or a list of target names");
}
