/**
 * `examples/apply.ts --hosts …`: one patch to many hosts with the library's
 * `applyFleet` — progress on stderr, the report on stdout (text, or the
 * fleet report as JSON with `--json`), unknown outcomes reconciled at once
 * with `reconcileFleet` — and `--hosts … --reconcile FILE` to settle a saved
 * report later.
 *
 * Decisions:
 * - Local directories in `--hosts` share one LocalShell (the CLI's own, never
 *   closed by the fleet); every SSH host gets its own connection, opened
 *   when its turn comes and closed when it is done, so `--concurrency`
 *   bounds the connections too.
 * - Ctrl-C once stops gently (no new host starts, the running ones finish:
 *   a commit is never cut by the first Ctrl-C, as for one host); twice
 *   cancels the running ones (a commit cut part-way is reconciled right
 *   after); three times quits at once.
 * - As for one host, an unknown outcome is settled at once: the exit code
 *   says what is true whenever the hosts can tell.
 *
 * @module
 */
import { applyFleet, LocalShell, reconcileFleet, summarizeFleet } from "../../mod.ts";
import type { FleetHost, FleetReconcileReport, FleetReport, FleetRequest, FleetTarget, SnapshotCache } from "../../mod.ts";
import { fleetReportFromWire, wireFleetReconciled, wireFleetReport } from "../wire/fleet.ts";
import type { ApplyCliOptions, FleetCliOptions } from "./args.ts";
import { FleetProgressView, cliFleetWords, fleetExitCode, formatFleetReport } from "./fleet_text.ts";
import { cliFailure, cliReport } from "./hint_words.ts";
import { formatReconcile } from "./reconcile_text.ts";
import { connectWithNotes } from "./ssh_options.ts";

/**
 * Run the patch on every host of `--hosts`; resolves the exit code.
 *
 * @example
 * ```ts
 * process.exitCode = await runFleetCli(options, patch);
 * ```
 */
export async function runFleetCli(options: ApplyCliOptions & { fleet: FleetCliOptions }, patch: string, cache?: SnapshotCache): Promise<number> {
  const targets = fleetTargets(options);
  const request: FleetRequest = {
    patch,
    dryRun: options.dryRun,
    expectedSha256: options.expectedSha256,
    requireShaForDelete: options.requireShaForDelete,
    ...(options.matching !== undefined ? { matching: options.matching } : {}),
    ...(options.encoding !== undefined ? { encoding: options.encoding } : {}),
    ...(options.sharedDirectories !== undefined ? { sharedDirectories: options.sharedDirectories } : {}),
    ...(options.trustRootAncestors !== undefined ? { trustRootAncestors: options.trustRootAncestors } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.compress !== undefined ? { compress: options.compress } : {}),
    ...(cache !== undefined ? { cache } : {}),
  };
  const view = new FleetProgressView(process.stderr);
  const interrupt = interrupts();
  let report: FleetReport;
  let reconciled: FleetReconcileReport | undefined;
  try {
    report = await applyFleet(targets, request, {
      canary: options.fleet.canary,
      maxFailures: options.fleet.maxFailures,
      concurrency: options.fleet.concurrency,
      signal: interrupt.cancel,
      stopSignal: interrupt.stop,
      onProgress: (event) => view.update(event),
    });
    await cache?.flush();
    if (report.summary.reconcile.length > 0) {
      view.end();
      process.stderr.write(`reconciling ${report.summary.reconcile.map((r) => r.host).join(", ")} (outcome unknown) …\n`);
      reconciled = await reconcileFleet(report, targets, reconcileOptions(options));
      report = reconciled.fleet;
    }
  } finally {
    view.end();
    interrupt.dispose();
  }
  return printFleet(report, options, reconciled);
}

/**
 * `--hosts … --reconcile FILE`: settle the unknown outcomes of a saved
 * `--json` fleet report on the hosts it names (their roots and connections
 * come from this command line, never from the file). Prints each settled
 * host's reconcile report (or, with `--json`, the updated fleet report and
 * `reconciled`) and returns the exit code: 0 every one applied (or nothing
 * to settle), 1 some not applied (nothing changed there: send the patch
 * again), 3 some diverged or still unsettled. A file that holds no fleet
 * report is a usage error: its message is returned.
 *
 * @example
 * ```ts
 * const code = await reconcileFleetCli(options, readFileSync("fleet.json", "utf8"));
 * ```
 */
export async function reconcileFleetCli(options: ApplyCliOptions & { fleet: FleetCliOptions }, text: string): Promise<number | string> {
  const saved = savedFleet(text);
  if (typeof saved === "string") return saved;
  const settled = await reconcileFleet(saved, fleetTargets(options), reconcileOptions(options));
  const summary = summarizeFleet(settled.fleet, cliFleetWords(options.fleet.hosts));
  if (options.json) {
    process.stdout.write(JSON.stringify({ ...wireFleetReport({ ...settled.fleet, summary }), reconciled: wireFleetReconciled(settled.hosts) }, null, 2) + "\n");
  } else {
    const roots = new Map(options.fleet.hosts.map((h) => [h.name, h.root]));
    if (settled.hosts.length === 0) process.stdout.write("No host of that report has an unknown outcome: nothing to reconcile.\n");
    for (const host of settled.hosts) process.stdout.write(formatReconcile(host.report, `${host.name} ${roots.get(host.name) ?? ""}`.trimEnd()) + "\n");
    process.stdout.write(summary.text + "\n");
  }
  const states = settled.hosts.map((h) => h.state);
  return states.some((s) => s === "diverged" || s === "unsettled") ? 3 : states.includes("not_applied") ? 1 : 0;
}

/** The library's targets for the hosts of the command line. */
function fleetTargets(options: ApplyCliOptions & { fleet: FleetCliOptions }): FleetTarget[] {
  const local = new LocalShell();
  return options.fleet.hosts.map((host): FleetTarget => {
    const expectedSha256 = options.fleet.hostExpect[host.name];
    const common = { name: host.name, root: host.root, ...(expectedSha256 !== undefined ? { expectedSha256 } : {}) };
    const ssh = host.ssh;
    return ssh === undefined ? { ...common, shell: local } : { ...common, connect: () => connectWithNotes(options, ssh, `${host.name}: `) };
  });
}

function reconcileOptions(options: ApplyCliOptions & { fleet: FleetCliOptions }) {
  return {
    concurrency: options.fleet.concurrency,
    words: cliFleetWords(options.fleet.hosts),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.sharedDirectories !== undefined ? { sharedDirectories: options.sharedDirectories } : {}),
    ...(options.trustRootAncestors !== undefined ? { trustRootAncestors: options.trustRootAncestors } : {}),
  };
}

/** Print the report (text or JSON, messages in CLI words) and return the exit code. */
function printFleet(report: FleetReport, options: ApplyCliOptions & { fleet: FleetCliOptions }, reconciled?: FleetReconcileReport): number {
  const shown = inCliWords(report, options.fleet);
  if (options.json) {
    const out = reconciled === undefined ? wireFleetReport(shown) : { ...wireFleetReport(shown), reconciled: wireFleetReconciled(reconciled.hosts) };
    process.stdout.write(JSON.stringify(out, null, 2) + "\n");
  } else {
    process.stdout.write(formatFleetReport(shown));
  }
  return fleetExitCode(report);
}

/** Every message of the report in the CLI's words, and the summary made again in them. */
function inCliWords(report: FleetReport, fleet: FleetCliOptions): FleetReport {
  const hosts = report.hosts.map((host): FleetHost => {
    if (host.state === "not_started") return host;
    const context = { reconciled: "reconciled" in host && host.reconciled !== undefined };
    const reworded = { ...host, report: cliReport(host.report, context) };
    if (reworded.state === "failed" || reworded.state === "outcome_unknown") return { ...reworded, error: cliFailure(reworded.error, context) };
    return reworded;
  });
  const partial = { dryRun: report.dryRun, hosts, ...(report.stopped !== undefined ? { stopped: report.stopped } : {}) };
  return { ...report, hosts, summary: summarizeFleet(partial, cliFleetWords(fleet.hosts)) };
}

/**
 * The fleet report of a saved `--json` output, in the library's spelling
 * (examples/wire/fleet.ts), or why there is none. Its contents are not
 * trusted here or later: reconcileFleet checks each ticket, and the roots
 * and shells come from this command line.
 */
function savedFleet(text: string): FleetReport | string {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return `not JSON (${(error as Error).message}); give the --json output of a --hosts run`;
  }
  const hosts = (data as { hosts?: unknown })?.hosts;
  if (!Array.isArray(hosts) || !hosts.every((h) => typeof h?.name === "string" && typeof h?.state === "string")) {
    return "no fleet report in it (a hosts list of {name, state}); give the --json output of a --hosts run";
  }
  const report = fleetReportFromWire(data);
  return { ...report, dryRun: report.dryRun === true };
}

/** Ctrl-C: once stop (running hosts finish), twice cancel them, three times quit. */
function interrupts(): { stop: AbortSignal; cancel: AbortSignal; dispose: () => void } {
  const stop = new AbortController();
  const cancel = new AbortController();
  let presses = 0;
  const onInterrupt = (): void => {
    presses++;
    if (presses === 1) {
      stop.abort();
      process.stderr.write("Ctrl-C: no new host starts; the running ones finish. Ctrl-C again cancels them (a commit cut part-way is reconciled right after).\n");
    } else if (presses === 2) {
      cancel.abort();
      process.stderr.write("Ctrl-C: cancelling the running hosts. Ctrl-C again quits at once (their outcome is then unknown).\n");
    } else {
      process.exit(130);
    }
  };
  process.on("SIGINT", onInterrupt);
  return { stop: stop.signal, cancel: cancel.signal, dispose: () => process.off("SIGINT", onInterrupt) };
}
