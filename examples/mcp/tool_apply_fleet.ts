/**
 * The `apply_patch_fleet` tool: the library's `applyFleet` over a host group
 * of configured roots (`--group web=web1,web2`), with a progress
 * notification per host as it finishes, each host's commit logged as an MCP
 * event, unknown outcomes settled at once by `reconcileFleet`, and every
 * message in this server's words.
 *
 * Decisions:
 * - The hosts' shells come from the server's pool (one connection per host,
 *   kept for later calls, as for apply_patch); the fleet never closes them.
 * - Each member keeps its own root options (matching, timeouts, sudo,
 *   shared-directory policy, limits): they are that target's options.
 * - A client's cancel aborts the rollout: no new host starts, a host not yet
 *   committing stops with nothing changed; a commit the cancel cuts is
 *   reconciled at once (with no signal: settling is cleanup the server owes
 *   the hosts even when nobody waits for the answer).
 * - `isError` is true unless every host applied or already held the change
 *   (dry run: would apply): a partly done rollout is a failure to act on.
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { applyFleet, failure, reconcileFleet, summarizeFleet } from "../../mod.ts";
import type { ApplyReport, FleetHost, FleetProgress, FleetReconcileReport, FleetReport, FleetTarget, FleetWords, PatchFailure } from "../../mod.ts";
import { wireFleetReconciled, wireFleetReport } from "../wire/fleet.ts";
import type { WireFleetReport } from "../wire/fleet.ts";
import { boundFileDiffs, guardResult } from "./bounds.ts";
import { unexpected } from "./context.ts";
import type { Extra, ToolContext } from "./context.ts";
import { applyPatchFleetDescription } from "./descriptions.ts";
import type { GroupConfig } from "./groups.ts";
import { mcpFailures, mcpWarnings } from "./hint_words.ts";
import type { McpWordsContext } from "./hint_words.ts";
import { failureBlocks } from "./render.ts";
import type { RootConfig } from "./roots.ts";
import { applyPatchFleetInput, applyPatchFleetOutput } from "./schemas_fleet.ts";
import type { ApplyPatchFleetArgs } from "./schemas_fleet.ts";

/**
 * Register apply_patch_fleet on `server` for `groups`.
 *
 * @example
 * ```ts
 * registerApplyFleet(server, ctx, groups);
 * ```
 */
export function registerApplyFleet(server: McpServer, ctx: ToolContext, groups: readonly GroupConfig[]): ReturnType<McpServer["registerTool"]> {
  return server.registerTool("apply_patch_fleet", {
    title: "Apply patch to a host group",
    description: applyPatchFleetDescription(groups),
    inputSchema: applyPatchFleetInput,
    outputSchema: applyPatchFleetOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  }, (args: ApplyPatchFleetArgs, extra: Extra): Promise<CallToolResult> => ctx.connection.run(() => fleetTool(ctx, groups, args, extra), extra));
}

async function fleetTool(ctx: ToolContext, groups: readonly GroupConfig[], args: ApplyPatchFleetArgs, extra: Extra): Promise<CallToolResult> {
  const dryRun = args.dry_run === true;
  const refused = (f: PatchFailure): CallToolResult => {
    ctx.connection.line(`apply_patch_fleet refused: ${f.code}`);
    const errors = mcpFailures([f], { tools: ctx.tools });
    return { isError: true, content: failureBlocks(errors), structuredContent: { ok: false, group: args.group, dry_run: dryRun, hosts: [], summary: emptySummary(errors[0]!), errors } };
  };
  const group = groups.find((g) => g.name === args.group);
  if (group === undefined) {
    return refused(failure("invalid_argument", `there is no host group named ${JSON.stringify(args.group)}; the groups are: ${groups.map((g) => g.name).join(", ")}. Pass one of these as "group".`));
  }
  const members = chosenMembers(group, args.hosts);
  if ("code" in members) return refused(members);
  for (const host of Object.keys(args.expected_sha256 ?? {})) {
    if (!members.some((m) => m.name === host)) {
      return refused(failure("invalid_argument", `expected_sha256 names ${JSON.stringify(host)}, which is not a host of this call (${members.map((m) => m.name).join(", ")}). Key it by host name: {"<host>": {"<path>": "<file_sha256>"}}.`));
    }
  }

  const targets: FleetTarget[] = members.map((root) => ({
    name: root.name,
    root: root.path,
    // The pool's connection: kept for later calls, never closed by the fleet.
    connect: () => ctx.shells.shellFor(root),
    release: () => Promise.resolve(),
    options: rootApplyOptions(root),
    // own keys only: a host named `constructor` must not pick up Object's
    ...(args.expected_sha256 !== undefined && Object.hasOwn(args.expected_sha256, root.name) ? { expectedSha256: args.expected_sha256[root.name] } : {}),
  }));
  const words = mcpFleetWords(group.name);
  let report: FleetReport;
  let reconciled: FleetReconcileReport | undefined;
  try {
    report = await applyFleet(targets, { patch: args.patch, dryRun, cache: ctx.connection.snapshots, ...(args.encoding !== undefined ? { encoding: args.encoding } : {}) }, {
      ...(args.canary !== undefined ? { canary: args.canary } : {}),
      ...(args.max_failures !== undefined ? { maxFailures: args.max_failures } : {}),
      ...(args.concurrency !== undefined ? { concurrency: args.concurrency } : {}),
      signal: extra.signal,
      onProgress: progressReporter(ctx, group.name, extra),
      words,
    });
    if (report.summary.reconcile.length > 0) {
      reconciled = await reconcileFleet(report, targets, { words });
      for (const host of reconciled.hosts) {
        ctx.connection.event({
          level: host.state === "unsettled" || host.state === "diverged" ? "error" : "notice",
          event: "reconcile",
          message: `apply_patch_fleet ${group.name}/${host.name} reconciled operation ${host.operationId}: ${host.state}`,
          data: { group: group.name, root: host.name, operation_id: host.operationId, state: host.state },
        }, extra);
      }
      report = reconciled.fleet;
    }
  } catch (error) {
    return refused(unexpected(error, ctx));
  }

  const shown = inMcpWords(report, words, ctx);
  ctx.connection.event({
    level: report.ok ? "info" : "warning",
    event: dryRun ? "dry_run" : "fleet",
    message: `apply_patch_fleet ${group.name}${dryRun ? " (dry run)" : ""}: ${shown.summary.headline}`,
    data: { group: group.name, ok: report.ok, dry_run: dryRun, counts: report.summary.counts, ...(report.stopped ? { stopped: report.stopped } : {}) },
  }, extra);
  const structured = {
    ...boundedDiffs(wireFleetReport(shown), ctx.diffBudgetBytes),
    group: group.name,
    ...(reconciled !== undefined ? { reconciled: wireFleetReconciled(reconciled.hosts) } : {}),
  };
  return guardResult({
    ...(report.ok ? {} : { isError: true }),
    content: [{ type: "text", text: shown.summary.text }, { type: "text", text: hostLines(shown) }],
    structuredContent: structured,
  });
}

/** The group's members the call names (all by default), in the group's order. */
function chosenMembers(group: GroupConfig, hosts: readonly string[] | undefined): RootConfig[] | PatchFailure {
  if (hosts === undefined) return group.members;
  const names = group.members.map((m) => m.name);
  const unknown = hosts.find((h) => !names.includes(h));
  if (unknown !== undefined) {
    return failure("invalid_argument", `${JSON.stringify(unknown)} is not a host of group ${group.name} (${names.join(", ")}). Pass "hosts" with names of the group, or leave it out for every host.`);
  }
  if (new Set(hosts).size !== hosts.length) return failure("invalid_argument", `"hosts" lists a host twice; list each once.`);
  return group.members.filter((m) => hosts.includes(m.name));
}

/** The apply options a root's configuration sets (each host keeps its own). */
function rootApplyOptions(root: RootConfig): NonNullable<FleetTarget["options"]> {
  const o = root.options;
  return {
    ...(o.matching !== undefined ? { matching: o.matching } : {}),
    ...(o.requireShaForDelete !== undefined ? { requireShaForDelete: o.requireShaForDelete } : {}),
    ...(o.createParents !== undefined ? { createParents: o.createParents } : {}),
    ...(o.sharedDirectories !== undefined ? { sharedDirectories: o.sharedDirectories } : {}),
    ...(o.trustRootAncestors !== undefined ? { trustRootAncestors: o.trustRootAncestors } : {}),
    ...(o.limits !== undefined ? { limits: o.limits } : {}),
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
  };
}

/**
 * This server's words for a fleet summary's next steps: the call to make.
 *
 * @example
 * ```ts
 * mcpFleetWords("web").rerun(["web4"]); // 'call apply_patch_fleet again with {"group": "web", "hosts": ["web4"]}'
 * ```
 */
export function mcpFleetWords(group: string): FleetWords {
  return {
    rerun: (hosts) => `call apply_patch_fleet again with {"group": ${JSON.stringify(group)}, "hosts": ${JSON.stringify(hosts)}}`,
    reconcile: (hosts) =>
      `the server ran reconcile right away and could not settle ${hosts.map((h) => `${h.host} (operation ${h.operationId})`).join(", ")}: read_file the patch's files on those hosts before anything else, and tell the user the operation ids`,
    applyForReal: () =>
      `call apply_patch_fleet again without dry_run; to refuse a host whose file changed in between, send expected_sha256 {"<host>": {"<path>": "<previous_sha256 of that host's file>"}}`,
  };
}

/** Every host report's messages in this server's words, and the summary made again from them. */
function inMcpWords(report: FleetReport, words: FleetWords, ctx: ToolContext): FleetReport {
  const hosts = report.hosts.map((host): FleetHost => {
    if (host.state === "not_started") return host;
    const context: McpWordsContext = { tools: ctx.tools, reconciled: "reconciled" in host && host.reconciled !== undefined };
    const reworded = { ...host, report: mcpReport(host.report, context) };
    if (reworded.state === "failed" || reworded.state === "outcome_unknown") return { ...reworded, error: mcpFailures([reworded.error], context)[0]! };
    return reworded;
  });
  const partial = {
    dryRun: report.dryRun,
    hosts,
    ...(report.stopped !== undefined ? { stopped: report.stopped } : {}),
    ...(report.refused !== undefined ? { refused: mcpFailures([report.refused], { tools: ctx.tools })[0]! } : {}),
  };
  return { ...report, ...partial, summary: summarizeFleet(partial, words) };
}

function mcpReport(report: ApplyReport, context: McpWordsContext): ApplyReport {
  const files = report.files.map((f) => ({ ...f, warnings: mcpWarnings(f.warnings, context) }));
  const warnings = mcpWarnings(report.warnings, context);
  if (report.ok) return { ...report, files, warnings };
  const [first, ...rest] = mcpFailures(report.errors, context);
  return { ...report, files, warnings, errors: [first!, ...rest] };
}

/** The wire report with every host's diffs cut to a share of the result's budget (bounds.ts). */
function boundedDiffs(wire: WireFleetReport, budget: number): WireFleetReport {
  const share = Math.floor(budget / Math.max(1, wire.hosts.length));
  return { ...wire, hosts: wire.hosts.map((h) => (h.report === undefined ? h : { ...h, report: { ...h.report, files: boundFileDiffs(h.report.files, share) } })) };
}

/** One line per host: state, and its files (SHA prefixes) or its failure's code and path. */
function hostLines(report: FleetReport): string {
  const short = (sha: string | null): string => (sha === null ? "none" : sha.slice(0, 12));
  return report.hosts.map((host) => {
    if (host.state === "not_started") return `${host.name}: not_started`;
    const files = host.report.files.map((f) => `${f.op} ${f.path}${f.moveTo !== undefined ? ` -> ${f.moveTo}` : ""} ${short(f.previousSha256)} -> ${short(f.newSha256)}`).join("; ");
    switch (host.state) {
      case "failed":
        return `${host.name}: failed ${host.error.code}${host.error.path !== undefined ? ` (${host.error.path})` : ""}${host.reconciled ? `, reconciled: ${host.reconciled.state}` : ""}`;
      case "outcome_unknown":
        return `${host.name}: outcome_unknown, operation ${host.operationId}${host.reconciled ? `, reconcile: ${host.reconciled.state}` : ""}`;
      case "skipped":
        return `${host.name}: skipped (already holds the change)`;
      default:
        return `${host.name}: ${host.state}${files !== "" ? ` — ${files}` : ""}`;
    }
  }).join("\n");
}

/**
 * Progress notifications, one per host as it finishes (`progress` = hosts
 * done of `total`), when the client asked for them; and the host's commit
 * as an MCP log event.
 */
function progressReporter(ctx: ToolContext, group: string, extra: Extra): (event: FleetProgress) => void {
  const progressToken = extra._meta?.progressToken;
  return (event) => {
    if (event.type !== "host_finished") return;
    const host = event.host;
    const code = host.state === "failed" || host.state === "outcome_unknown" ? ` (${host.error.code})` : "";
    if (host.state !== "not_started" && host.state !== "planned") {
      ctx.connection.event({
        level: host.state === "applied" || host.state === "skipped" ? "info" : "warning",
        event: "commit",
        message: `apply_patch_fleet ${group}/${host.name}: ${host.state}${code} (operation ${host.report.operationId})`,
        data: { group, root: host.name, state: host.state, operation_id: host.report.operationId },
      }, extra);
    }
    if (progressToken === undefined) return;
    extra.sendNotification({
      method: "notifications/progress",
      params: { progressToken, progress: event.done, total: event.total, message: `${host.name}: ${host.state}${code} (${event.done} of ${event.total} hosts)` },
    }).catch(() => {});
  };
}

/** The summary of a call refused before any host started. */
function emptySummary(error: PatchFailure): Record<string, unknown> {
  return { total: 0, counts: {}, first_failure: null, reconcile: [], rerun: [], next_step: error.message, headline: "No host was contacted.", text: error.message };
}
