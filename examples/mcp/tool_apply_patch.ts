/**
 * The `apply_patch` tool: this library's `applyPatch` on a root, with the
 * unknown outcomes settled at once by `reconcile`, progress notifications
 * on long uploads, commits and reconciles logged as MCP events, and the
 * diffs of the result bounded (bounds.ts).
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { applyPatch, failure, newOperationId, parseFailurePaths, parsePatch, patchPaths, reconcile, reconcileTicketOf } from "../../mod.ts";
import type { CommitReport, PatchFailure, RemoteShell } from "../../mod.ts";
import { posix } from "node:path";
import { DEFAULT_QUEUE_WAIT_MS } from "./apply_queue.ts";
import type { RootConfig } from "./roots.ts";
import { boundFileDiffs, guardResult } from "./bounds.ts";
import { shellOf, unexpected } from "./context.ts";
import { applyProgress } from "./progress.ts";
import { pickRootProbing } from "./root_probe.ts";
import type { ProbeTarget } from "./root_probe.ts";
import type { Extra, ToolContext } from "./context.ts";
import { applyPatchDescription } from "./descriptions.ts";
import { mcpFailures } from "./hint_words.ts";
import { failedApplyResult, failureBlocks, reportBlocks, settledSummary } from "./render.ts";
import type { ApplyOutcome } from "../wire/types.ts";
import { wireApplyOutcome, wireFailures } from "../wire/convert.ts";
import { applyPatchInput, applyPatchOutput } from "./schemas.ts";
import type { ApplyPatchArgs, ApplyPatchOutput } from "./schemas.ts";

/**
 * Register apply_patch on `server`.
 *
 * @example
 * ```ts
 * registerApplyPatch(server, ctx);
 * ```
 */
export function registerApplyPatch(server: McpServer, ctx: ToolContext): ReturnType<McpServer["registerTool"]> {
  return server.registerTool("apply_patch", {
    title: "Apply patch",
    description: applyPatchDescription(ctx.connection.roots),
    inputSchema: applyPatchInput,
    outputSchema: applyPatchOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  }, (args: ApplyPatchArgs, extra: Extra): Promise<CallToolResult> => ctx.connection.run(() => applyTool(ctx, args, extra), extra));
}

async function applyTool(ctx: ToolContext, args: ApplyPatchArgs, extra: Extra): Promise<CallToolResult> {
  const dryRun = args.dry_run === true;
  const failed = (f: PatchFailure): CallToolResult => {
    ctx.connection.line(`apply_patch failed before starting: ${f.code}`);
    const errors = mcpFailures([f], { tools: ctx.tools });
    const out: ApplyPatchOutput = { ok: false, dry_run: dryRun, files: [], warnings: [], errors: wireFailures(errors) };
    return { isError: true, content: failureBlocks(errors), structuredContent: out };
  };
  // Parsed only when the call names no configured root.
  let about: ReturnType<typeof patchTargets> | undefined;
  const root = await pickRootProbing(ctx, args.root, () => (about = patchTargets(args.patch)).targets, extra, {
    tool: "apply_patch",
    rest: (prefix) => {
      if (prefix === null || about === undefined) return "the same patch";
      const headers = about.headers.slice(0, 3).map(([word, path]) => `*** ${word}: ${path.startsWith(`${prefix}/`) ? path.slice(prefix.length + 1) : path}`);
      return `the patch's paths without their "${prefix}/": ${headers.join(", ")}${about.headers.length > 3 ? ", …" : ""}`;
    },
  });
  if ("code" in root) return failed(root);
  const shell = await shellOf(ctx, root);
  if ("code" in shell) return failed(shell);
  // Applies to the same files wait for each other here, in arrival order
  // (apply_queue.ts): each is planned when its turn comes, against the file
  // as the ones before it left it. A dry run writes nothing: not queued.
  const keys = dryRun ? null : queueKeys(root, args.patch, root.options.limits);
  if (keys === null || ctx.applyQueue === undefined) return await applyQueued(ctx, args, extra, root, shell, dryRun, failed);
  const signal = ctx.connection.signalOf(extra);
  const waitMs = root.options.timeoutMs ?? DEFAULT_QUEUE_WAIT_MS;
  const entry = await ctx.applyQueue.enter(keys.map((k) => k.key), {
    waitMs,
    signal,
    onQueued: (ahead, key) => ctx.connection.line(`apply_patch ${root.name}: queued behind ${ahead} ${ahead === 1 ? "apply" : "applies"} to ${pathOfKey(keys, key)}`),
  });
  if (!entry.ok) {
    const path = pathOfKey(keys, entry.key);
    const max = ctx.applyQueue.maxWaiting;
    if (entry.reason === "cancelled") {
      const message = `the call was cancelled while it waited for its turn behind ${entry.waiting} other ${entry.waiting === 1 ? "apply" : "applies"} to ${path}: not applied, nothing was written.`;
      // A cancelled request gets no answer (MCP): the log is where it says so.
      ctx.connection.event({ level: "info", event: "cancelled", message: `apply_patch ${root.name} cancelled while queued: not applied (${path})`, data: { root: root.name, ok: false, codes: ["cancelled"], path } }, extra);
      return failed(failure("cancelled", message, { path }));
    }
    const seconds = (entry.retryAfterMs / 1000).toFixed(1);
    const message = entry.reason === "full"
      ? `${path} already has ${entry.waiting} applies queued on this server (the most one file's queue holds: ${max}), so this patch was not queued and nothing was applied. Send the same patch again in about ${seconds} s (queue.retry_after_ms), or work on another file meanwhile.`
      : `this patch waited ${(entry.waitedMs / 1000).toFixed(1)} s for its turn behind ${entry.waiting} other ${entry.waiting === 1 ? "apply" : "applies"} to ${path} on this server (the root's wait is ${waitMs} ms) and was not applied. Send the same patch again in about ${seconds} s (queue.retry_after_ms); if it keeps waiting, tell the user this file is busy.`;
    return failed(failure("locked", message, {
      path,
      operationId: newOperationId(),
      queue: { path, reason: entry.reason, waiting: entry.waiting, maxWaiting: max, waitedMs: entry.waitedMs, retryAfterMs: entry.retryAfterMs },
    }));
  }
  try {
    return await applyQueued(ctx, args, extra, root, shell, dryRun, failed);
  } finally {
    entry.release();
  }
}

/** The queue keys of a patch's paths (target + absolute path), or null when it does not parse (applyPatch reports why, at once). */
function queueKeys(root: RootConfig, patch: string, limits: RootConfig["options"]["limits"]): { key: string; path: string }[] | null {
  if (typeof patch !== "string") return null;
  const parsed = parsePatch(patch, limits === undefined ? {} : { limits });
  if (!parsed.ok) return null;
  const target = root.kind === "local" ? "local" : `ssh://${root.ssh?.user ?? ""}@${root.ssh?.host ?? ""}:${root.ssh?.port ?? ""}`;
  return patchPaths(parsed.patch).map((path) => ({ key: `${target}\0${posix.join(root.path, path)}`, path }));
}

function pathOfKey(keys: readonly { key: string; path: string }[], key: string): string {
  return keys.find((k) => k.key === key)?.path ?? keys[0]?.path ?? "";
}

async function applyQueued(
  ctx: ToolContext,
  args: ApplyPatchArgs,
  extra: Extra,
  root: RootConfig,
  shell: RemoteShell,
  dryRun: boolean,
  failed: (f: PatchFailure) => CallToolResult,
): Promise<CallToolResult> {
  let report: ApplyOutcome;
  try {
    report = await applyPatch(shell, {
      root: root.path,
      patch: args.patch,
      dryRun,
      expectedSha256: args.expected_sha256,
      matching: root.options.matching,
      ...(args.encoding !== undefined ? { encoding: args.encoding } : {}),
      requireShaForDelete: root.options.requireShaForDelete,
      createParents: root.options.createParents,
      sharedDirectories: root.options.sharedDirectories,
      trustRootAncestors: root.options.trustRootAncestors,
      limits: root.options.limits,
      timeoutMs: root.options.timeoutMs,
      signal: ctx.connection.signalOf(extra),
      ...applyProgress(extra),
      cache: ctx.connection.snapshots,
    });
  } catch (error) {
    return failed(unexpected(error, ctx));
  }
  const files = report.files.map((f) => `${f.op} ${f.path}${f.moveTo !== undefined ? ` -> ${f.moveTo}` : ""}`).join(", ");
  if (!report.ok) {
    const codes = (report.errors ?? []).map((e) => e.code);
    const started = report.operationId !== undefined && !dryRun;
    // A cancelled request gets no answer (MCP): the log is where it says so.
    const cancelled = codes[0] === "cancelled";
    ctx.connection.event({
      level: started ? "warning" : "info",
      event: cancelled ? "cancelled" : "commit",
      message: cancelled
        ? `apply_patch ${root.name} cancelled before any file changed: not applied (operation ${report.operationId}): ${report.errors![0]!.message}`
        : `apply_patch ${root.name} failed: ${codes.join(", ")}${report.operationId ? ` (operation ${report.operationId})` : ""}`,
      data: { root: root.name, ok: false, dry_run: dryRun, codes, ...(report.operationId ? { operation_id: report.operationId } : {}) },
    }, extra);
    // An unknown outcome (or leftovers) is settled here at once, on the same
    // shell (an SSH shell reconnects after a drop): the model gets "applied"
    // or "not applied" instead of a question it has no tool to answer.
    const ticket = reconcileTicketOf(report);
    if (ticket !== null) {
      const reconciled = await reconcile(shell, root.path, ticket, { timeoutMs: root.options.timeoutMs, signal: ctx.connection.signalOf(extra), sharedDirectories: root.options.sharedDirectories, trustRootAncestors: root.options.trustRootAncestors })
        .catch((error: unknown): CommitReport => ({
          ok: false,
          operationId: ticket.operationId,
          atomicity: "batch_preflight_per_file_commit",
          elevated: shell.elevated ?? false,
          files: [],
          warnings: [],
          errors: [unexpected(error, ctx)],
        }));
      ctx.connection.event({
        level: reconciled.ok ? "notice" : "error",
        event: "reconcile",
        message: `apply_patch ${root.name} reconciled operation ${ticket.operationId}: ${settledSummary(reconciled)}`,
        data: { root: root.name, operation_id: ticket.operationId, ok: reconciled.ok, files: reconciled.files.map((f) => ({ path: f.path, state: f.state })) },
      }, extra);
      report = { ...report, reconciled };
    }
    const errors = (report.errors ?? []).map((e) => ctx.reads?.explain(root.name, e) ?? e);
    const result = failedApplyResult({ ...report, errors }, { tools: ctx.tools });
    const structuredContent: ApplyPatchOutput = { ...result.structuredContent, files: boundFileDiffs(result.structuredContent.files, ctx.diffBudgetBytes) };
    return guardResult({ isError: true, content: result.content, structuredContent });
  }
  const late = report.warnings.some((w) => w.code === "cancel_too_late");
  ctx.connection.event({
    level: late ? "warning" : "info",
    event: dryRun ? "dry_run" : "commit",
    message: `apply_patch ${root.name} ${dryRun ? "dry run" : "applied"}: ${files} (operation ${report.operationId})${late ? "; the cancel came after its go-ahead, so it was let finish" : ""}`,
    data: { root: root.name, ok: true, dry_run: dryRun, operation_id: report.operationId, files: report.files.map((f) => ({ op: f.op, path: f.path, new_sha256: f.newSha256 })) },
  }, extra);
  const wire = wireApplyOutcome(report);
  const structured: ApplyPatchOutput = { ...wire, files: boundFileDiffs(wire.files, ctx.diffBudgetBytes) };
  return guardResult({ content: reportBlocks(report, root.name, ctx.diffBudgetBytes), structuredContent: { ...structured } });
}

/**
 * What the patch is about, for a call that named no configured root: the
 * files it updates, deletes or moves, and the directories its Adds go in
 * (a patch that does not parse: the paths its headers name); and its
 * section headers as written, to show them corrected.
 */
function patchTargets(patch: string): { targets: ProbeTarget[]; headers: [string, string][] } {
  const parsed = parsePatch(patch);
  if (!parsed.ok) return { targets: parseFailurePaths(patch, parsed.errors).map((path) => ({ path, kind: "file" })), headers: [] };
  const targets: ProbeTarget[] = [];
  const headers: [string, string][] = [];
  const words = { add: "Add File", update: "Update File", delete: "Delete File", replace: "Replace File" } as const;
  for (const op of parsed.patch.ops) {
    // A Delete + Add the parser joined into one replace: both headers as the model wrote them.
    if (op.type === "replace" && op.addLine !== undefined) headers.push(["Delete File", op.path], ["Add File", op.path]);
    else headers.push([words[op.type], op.path]);
    if (op.type !== "add") targets.push({ path: op.path, kind: "file" });
    else if (op.path.includes("/")) targets.push({ path: op.path.slice(0, op.path.lastIndexOf("/")), kind: "directory" });
  }
  return { targets, headers };
}
