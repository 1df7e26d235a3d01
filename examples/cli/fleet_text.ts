/**
 * What `examples/apply.ts --hosts` shows: the progress on stderr (a line
 * per host as it finishes, and on a terminal a bar kept below them), the
 * human report on stdout, the summary's next steps in CLI words, and the
 * exit code of a fleet report.
 *
 * @module
 */
import { FLEET_HOST_STATES, shQuote } from "../../mod.ts";
import type { FleetHost, FleetProgress, FleetReport, FleetWords } from "../../mod.ts";
import type { HostEntry } from "./hosts.ts";
import { formatFailure, formatFileLine } from "./report_text.ts";

/**
 * The CLI's words for a fleet summary's next steps: `--hosts` lists that
 * re-create the hosts as they were given.
 *
 * @example
 * ```ts
 * cliFleetWords(hosts).rerun(["web4", "web5"]); // "run it again with --hosts web4,web5"
 * ```
 */
export function cliFleetWords(hosts: readonly HostEntry[]): FleetWords {
  const text = new Map(hosts.map((h) => [h.name, h.text]));
  const list = (names: readonly string[]): string => quoteWord(names.map((n) => text.get(n) ?? n).join(","));
  return {
    rerun: (names) => `run it again with --hosts ${list(names)}`,
    reconcile: (unknown) =>
      `the CLI ran reconcile right after and it did not settle ${unknown.map((u) => `${u.host} (operation ${u.operationId})`).join(", ")}: run this command again with --reconcile and this run's --json report and --hosts ${list(unknown.map((u) => u.host))}`,
    applyForReal: () => "run it again without --dry-run; to refuse any host whose files changed in between, add the --host-expect flags printed above",
  };
}

/**
 * The exit code of a fleet run: 0 every host applied or already held the
 * change (dry run: would apply); 3 some host's files may have changed
 * uncleanly (still `outcome_unknown`, or reconcile found them diverged);
 * 1 otherwise (failed, cancelled or not started, nothing in doubt).
 *
 * @example
 * ```ts
 * process.exitCode = fleetExitCode(report);
 * ```
 */
export function fleetExitCode(report: FleetReport): 0 | 1 | 3 {
  if (report.ok) return 0;
  const doubtful = report.hosts.some((h) => h.state === "outcome_unknown" || (h.state === "failed" && h.reconciled?.state === "diverged"));
  return doubtful ? 3 : 1;
}

/** Where the progress goes (process.stderr, or a test's collector). */
export interface ProgressSink {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/**
 * Progress of a rollout on stderr: one line per host as it finishes (name,
 * state, time, and for a failure its code and where), a line when the
 * rollout stops, and on a terminal a bar below the lines, redrawn in place.
 *
 * @example
 * ```ts
 * const view = new FleetProgressView(process.stderr);
 * await applyFleet(targets, request, { onProgress: (e) => view.update(e) });
 * view.end();
 * ```
 */
export class FleetProgressView {
  readonly #sink: ProgressSink;
  readonly #counts = new Map<string, number>();
  #bar = false;
  #width = 1;

  constructor(sink: ProgressSink) {
    this.#sink = sink;
  }

  /** Take one progress event. */
  update(event: FleetProgress): void {
    this.#width = Math.max(this.#width, String(event.total).length);
    if (event.type === "host_finished") {
      this.#counts.set(event.host.state, (this.#counts.get(event.host.state) ?? 0) + 1);
      this.#line(`[${String(event.done).padStart(this.#width)}/${event.total}] ${hostLine(event.host)}`);
    } else if (event.type === "stopped") {
      const s = event.stopped;
      const why = s.reason === "canary_failed" ? `the canary ${s.after} failed` : s.reason === "max_failures" ? `${s.failures} host(s) failed (more than --max-failures)` : s.reason === "cancelled" ? "cancelled (Ctrl-C twice)" : "stopped (Ctrl-C)";
      this.#line(`stopping: ${why}; no new host starts${event.running > 0 ? `, ${event.running} running finish` : ""}`);
    }
    if (this.#sink.isTTY) this.#drawBar(event);
  }

  /** Clear the bar (before the report is printed). */
  end(): void {
    if (this.#bar) this.#sink.write("\r\x1b[K");
    this.#bar = false;
  }

  #line(text: string): void {
    if (this.#bar) this.#sink.write("\r\x1b[K");
    this.#bar = false;
    this.#sink.write(text + "\n");
  }

  #drawBar(event: FleetProgress): void {
    const slots = 20;
    const filled = event.total === 0 ? slots : Math.round((event.done / event.total) * slots);
    const counts = FLEET_HOST_STATES.filter((s) => (this.#counts.get(s) ?? 0) > 0).map((s) => `${this.#counts.get(s)} ${s}`);
    const text = `[${"#".repeat(filled)}${"-".repeat(slots - filled)}] ${event.done}/${event.total}  ${[...counts, `${event.running} running`].join(", ")}`;
    const max = (this.#sink.columns ?? 80) - 1;
    this.#sink.write(`\r\x1b[K${text.length > max ? text.slice(0, max) : text}`);
    this.#bar = true;
  }
}

/** One host as a progress line: name, state, time, and for a failure its code and where. */
function hostLine(host: FleetHost): string {
  if (host.state === "not_started") return `${host.name}  not_started`;
  const label = host.state === "failed" ? "FAILED" : host.state === "outcome_unknown" ? "OUTCOME UNKNOWN" : host.state === "skipped" ? "skipped (already applied)" : host.state;
  const parts = [`${host.name}  ${label}  ${host.ms} ms`];
  if (host.state === "failed" || host.state === "outcome_unknown") {
    parts.push([host.error.code, host.error.path].filter((p) => p !== undefined).join(" "));
  }
  if (host.state === "outcome_unknown") parts.push(`operation ${host.operationId}`);
  return parts.join("  ");
}

/**
 * The human report of a fleet run: per host its state and files (or its
 * first failure's code), for a dry run the `--host-expect` flags that pin
 * each host's files to the versions planned on, each distinct failure once
 * with its recovery message, then the summary.
 *
 * @example
 * ```ts
 * process.stdout.write(formatFleetReport(report));
 * ```
 */
export function formatFleetReport(report: FleetReport): string {
  const out: string[] = [];
  let width = 0;
  for (const h of report.hosts) width = Math.max(width, h.name.length);
  out.push(`${report.dryRun ? "Dry run over" : "Fleet of"} ${report.hosts.length} host${report.hosts.length === 1 ? "" : "s"}:`);
  for (const host of report.hosts) {
    out.push(`  ${host.name.padEnd(width)}  ${host.state}${detail(host)}`);
    if (host.state === "applied" || host.state === "planned") {
      for (const file of host.report.files) out.push(`  ${" ".repeat(width)}  ${formatFileLine(file).trimStart()}`);
    }
  }
  if (report.dryRun) {
    const flags = report.hosts.flatMap((h) =>
      h.state === "planned" ? h.report.files.flatMap((f) => (f.previousSha256 === null ? [] : [`--host-expect ${quoteWord(`${h.name}=${f.path}=${f.previousSha256}`)}`])) : []
    );
    if (flags.length > 0) out.push("", "To apply exactly these versions (a host whose file changed first is refused), run it again without --dry-run and with:", `  ${flags.join(" ")}`);
  }
  // Each distinct failure once (500 hosts failing alike print it once), with the hosts it hit.
  const failures = new Map<string, { hosts: string[]; host: Extract<FleetHost, { error: unknown }> }>();
  for (const host of report.hosts) {
    if (host.state !== "failed" && host.state !== "outcome_unknown") continue;
    const key = `${host.error.code}\u0000${host.error.message.replace(/\b[0-9a-f]{16}\b/g, "")}`;
    const seen = failures.get(key);
    if (seen) seen.hosts.push(host.name);
    else failures.set(key, { hosts: [host.name], host });
  }
  let n = 0;
  for (const { hosts, host } of failures.values()) {
    out.push("", `On ${hosts.join(", ")}:`, formatFailure(host.error, ++n, { reconciled: host.reconciled !== undefined }));
  }
  // The failures are printed above in full: the summary's headline and next step suffice here.
  out.push("", `${report.summary.headline} Next step: ${report.summary.nextStep}`);
  return out.join("\n") + "\n";
}

function detail(host: FleetHost): string {
  switch (host.state) {
    case "failed":
      return `  ${host.error.code}${host.reconciled ? ` (reconciled: ${host.reconciled.state})` : ""}`;
    case "outcome_unknown":
      return `  operation ${host.operationId}${host.reconciled ? ` (reconcile: ${host.reconciled.state})` : ""}`;
    case "applied":
      return host.reconciled ? ` (reconciled after an unknown outcome, operation ${host.reconciled.operationId})` : "";
    case "skipped":
      return " (already holds the change)";
    default:
      return "";
  }
}

function quoteWord(word: string): string {
  return /^[A-Za-z0-9_./=@%+:,-]+$/.test(word) ? word : shQuote(word);
}
