/**
 * The summary of a fleet report: what a model needs to act in one step —
 * hosts per state, why the rollout stopped, the first failure's message
 * verbatim, and the next step in the words of the front end that shows it.
 *
 * @module
 */
import type { FleetHost, FleetHostState, FleetReport, FleetStopped, FleetSummary, FleetWords } from "./types.ts";
import { FLEET_HOST_STATES } from "./types.ts";

/** Most host names a sentence lists before "and N more". */
const LISTED = 20;

/**
 * Host names for a sentence: up to 20, then how many more.
 *
 * @example
 * ```ts
 * listHosts(["web1", "web2"]); // "web1, web2"
 * ```
 */
export function listHosts(names: readonly string[], max: number = LISTED): string {
  if (names.length <= max) return names.join(", ");
  return `${names.slice(0, max).join(", ")} and ${names.length - max} more`;
}

/**
 * The library's words: the next steps name `applyFleet` and `reconcileFleet`.
 *
 * @example
 * ```ts
 * LIBRARY_FLEET_WORDS.rerun(["web4", "web5"]); // "call applyFleet again with only the targets web4, web5"
 * ```
 */
export const LIBRARY_FLEET_WORDS: FleetWords = {
  rerun: (hosts) => `call applyFleet again with only the targets ${listHosts(hosts)}`,
  reconcile: (hosts) =>
    `call reconcileFleet with this report to settle ${listHosts(hosts.map((h) => `${h.host} (operation ${h.operationId})`))}`,
  applyForReal: () =>
    "call applyFleet again without dryRun to apply it; to make sure nothing changed in between, pass as each target's expectedSha256 the SHA-256s its files were planned on (in that host's report)",
};

/**
 * The summary of a fleet's hosts (see {@linkcode FleetSummary}).
 *
 * @example
 * ```ts
 * const summary = summarizeFleet(report); // or, in a front end's words:
 * const cli = summarizeFleet(report, { rerun: (h) => `re-run with --hosts ${h.join(",")}`, reconcile: …, applyForReal: … });
 * ```
 */
export function summarizeFleet(report: Pick<FleetReport, "hosts" | "stopped" | "dryRun" | "refused">, words: FleetWords = LIBRARY_FLEET_WORDS): FleetSummary {
  const { hosts, stopped } = report;
  const counts = Object.fromEntries(FLEET_HOST_STATES.map((s) => [s, 0])) as Record<FleetHostState, number>;
  for (const host of hosts) counts[host.state]++;
  if (report.refused !== undefined) {
    const { code, message } = report.refused;
    const headline = `The call was refused before any host started (${code}); ${hosts.length} host${hosts.length === 1 ? "" : "s"} not_started.`;
    const nextStep = "Fix what the failure names and call again; no host was contacted.";
    return { total: hosts.length, counts, firstFailure: { host: null, code, message }, reconcile: [], rerun: [], nextStep, headline, text: `${headline} Next step: ${nextStep} The failure, verbatim:\n${message}` };
  }
  const first = firstFailure(hosts);
  // A report that came back from a file or a model may have lost a host's error: say so rather than fail.
  const firstError = first === null ? null : first.error ?? { code: first.state === "failed" ? "remote_error" as const : "outcome_unknown" as const, message: "(the report holds no failure for this host)" };
  const firstFailureOut = first === null ? null : { host: first.name, code: firstError!.code, message: firstError!.message };
  const reconcile = hosts.flatMap((h) => (h.state === "outcome_unknown" ? [{ host: h.name, operationId: h.operationId }] : []));
  // A host reconcile found diverged holds neither the old nor the new files:
  // sending the patch again there would be planned on a state nobody chose.
  const diverged = hosts.filter((h) => h.state === "failed" && h.reconciled?.state === "diverged").map((h) => h.name);
  const rerun = hosts
    .filter((h) => (h.state === "failed" && h.reconciled?.state !== "diverged") || h.state === "cancelled" || h.state === "not_started")
    .map((h) => h.name);

  let nextStep: string;
  const failedToRerun = counts.failed - diverged.length > 0;
  const then = rerun.length === 0 ? "" : failedToRerun ? `; then fix the cause of the failures and ${words.rerun(rerun)}` : `; then ${words.rerun(rerun)}`;
  const look = diverged.length === 0 ? "" : `Read the patch's files on ${listHosts(diverged)} first: reconcile found them neither as they were nor as the patch makes them (changed by someone else, or mixed); `;
  if (reconcile.length > 0) nextStep = capital(`${look}${words.reconcile(reconcile)}${then}.`);
  else if (failedToRerun) nextStep = `${look}Fix the cause of the first failure (on ${first!.name}), then ${words.rerun(rerun)}.`;
  else if (diverged.length > 0) nextStep = `${look.replace(/; $/, ".")}${rerun.length > 0 ? ` Then ${words.rerun(rerun)}.` : ""}`;
  else if (rerun.length > 0) nextStep = capital(`${words.rerun(rerun)} to finish the rollout.`);
  else if (report.dryRun) nextStep = capital(`${words.applyForReal()}.`);
  else nextStep = "Nothing to do: every host holds the change.";

  const head = [countsSentence(hosts.length, counts, report.dryRun)];
  if (stopped !== undefined) head.push(stoppedSentence(stopped));
  if (reconcile.length > 0) head.push(`Files may have changed on ${listHosts(reconcile.map((h) => h.host))}.`);
  const headline = head.join(" ");
  // The fleet's next step comes before the failure's own message, which
  // ends with that host's next step: read in this order, each says whose it is.
  let text = `${headline} Next step: ${nextStep}`;
  if (first !== null) {
    const since = first.state === "failed" && first.reconciled !== undefined ? ` (Reconciled since: ${first.reconciled.state}${first.reconciled.state === "not_applied" ? ", nothing of the patch is there" : ""}.)` : "";
    text += ` The first failure (on ${first.name})${since}, verbatim:\n${firstError!.message}`;
  }
  return { total: hosts.length, counts, firstFailure: firstFailureOut, reconcile, rerun, nextStep, headline, text };
}

type FailedHost = Extract<FleetHost, { state: "failed" | "outcome_unknown" }>;

/** The failed (or unknown) host that finished first. */
function firstFailure(hosts: readonly FleetHost[]): FailedHost | null {
  let first: FailedHost | null = null;
  for (const host of hosts) {
    if (host.state !== "failed" && host.state !== "outcome_unknown") continue;
    if (first === null || (host.order ?? Infinity) < (first.order ?? Infinity)) first = host;
  }
  return first;
}

function countsSentence(total: number, counts: Record<FleetHostState, number>, dryRun: boolean): string {
  const shown = FLEET_HOST_STATES.filter((s) => counts[s] > 0).map((s) => `${counts[s]} ${s === "skipped" ? "skipped (already applied)" : s}`);
  return `${dryRun ? "Dry run, " : ""}${total} host${total === 1 ? "" : "s"}: ${shown.join(", ") || "none"}.`;
}

function stoppedSentence(stopped: FleetStopped): string {
  const after = stopped.after ?? "(none)";
  const failed = `${stopped.failures} host${stopped.failures === 1 ? "" : "s"} failed`;
  switch (stopped.reason) {
    case "canary_failed":
      return `Stopped after the canary ${after} failed: a canary that does not apply stops the rollout.`;
    case "max_failures":
      return `Stopped after ${after}: ${failed}, more than allowed; the hosts that were running finished.`;
    case "cancelled":
      return stopped.after === null ? "Cancelled before any host started." : `Cancelled after ${after} started: no host started after that.`;
    case "stopped":
      return stopped.after === null ? "Stopped on request before any host started." : `Stopped on request after ${after} started; the hosts that were running finished.`;
  }
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
