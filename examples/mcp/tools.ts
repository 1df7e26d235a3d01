/**
 * The MCP server and its two tools, `read_file` and `apply_patch`, over the
 * configured roots. Transport-agnostic: the entry connects it to stdio,
 * tests to an in-memory pair.
 *
 * @module
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { RemoteShellError, applyPatch, failure, readSnapshots, readWindow, reconcile, reconcileTicketOf } from "../../mod.ts";
import type { CommitReport, FileSnapshot, PatchFailure, RemoteShell } from "../../mod.ts";
import { applyPatchDescription, readFileDescription } from "./descriptions.ts";
import type { ShellSource } from "./pool.ts";
import { mcpFailures } from "./hint_words.ts";
import { failedApplyResult, failureBlocks, readBlocks, reportBlocks, settledSummary } from "./render.ts";
import type { RootConfig } from "./roots.ts";
import { applyPatchInput, applyPatchOutput, readFileInput, readFileOutput } from "./schemas.ts";
import type { ApplyPatchArgs, ApplyPatchOutput, ReadFileArgs, ReadFileOutput } from "./schemas.ts";

/** What {@linkcode createServer} needs. */
export interface ServerOptions {
  roots: readonly RootConfig[];
  shells: ShellSource;
  /** One line per tool call and per problem (the entry writes them to stderr). */
  log?: (line: string) => void;
  /** Most bytes of text one read_file returns (default 128 KiB; whole lines). */
  readMaxBytes?: number;
  /** Most diff bytes in apply_patch's text block (default 64 KiB; structuredContent keeps them all). */
  diffBudgetBytes?: number;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The tools registered below: failure messages name only these (examples/mcp/hint_words.ts). */
const TOOL_NAMES: ReadonlySet<string> = new Set(["read_file", "apply_patch"]);

/**
 * Build the server with both tools registered.
 *
 * @example
 * ```ts
 * const server = createServer({ roots, shells: new ShellPool() });
 * await server.connect(new StdioServerTransport());
 * ```
 */
export function createServer(options: ServerOptions): McpServer {
  const { roots, shells } = options;
  const log = options.log ?? (() => {});
  const readMaxBytes = options.readMaxBytes ?? 128 * 1024;
  const diffBudget = options.diffBudgetBytes ?? 64 * 1024;
  const server = new McpServer({ name: "ssh-apply-patch", version: "0.1.0" });

  /** The named root, or the only one; otherwise a failure listing the roots. */
  const pickRoot = (name: string | undefined): RootConfig | PatchFailure => {
    const names = roots.map((r) => r.name).join(", ");
    if (name === undefined) {
      if (roots.length === 1) return roots[0]!;
      return failure("invalid_argument", `several roots are configured (${names}): pass "root" with one of these names.`);
    }
    return roots.find((r) => r.name === name) ??
      failure("invalid_argument", `there is no root named ${JSON.stringify(name)}; the configured roots are: ${names}. Pass one of these as "root".`);
  };

  /** A shell, or the typed reason there is none (SSH connect, auth, host key). */
  const shellOf = async (root: RootConfig): Promise<RemoteShell | PatchFailure> => {
    try {
      return await shells.shellFor(root);
    } catch (error) {
      return error instanceof RemoteShellError ? error.failure : unexpected(error, log);
    }
  };

  server.registerTool("read_file", {
    title: "Read file",
    description: readFileDescription(roots),
    inputSchema: readFileInput,
    outputSchema: readFileOutput,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  }, async (args: ReadFileArgs, extra: Extra): Promise<CallToolResult> => {
    const failed = (f: PatchFailure, rootName?: string): CallToolResult => {
      log(`read_file ${rootName ?? "?"}:${args.path} failed: ${f.code}`);
      const errors = mcpFailures([f], { tools: TOOL_NAMES });
      const out: ReadFileOutput = { ok: false, ...(rootName ? { root: rootName } : {}), path: args.path, errors };
      return { isError: true, content: failureBlocks(errors), structuredContent: out };
    };
    const root = pickRoot(args.root);
    if ("code" in root) return failed(root);
    const shell = await shellOf(root);
    if ("code" in shell) return failed(shell, root.name);
    let snapshot: FileSnapshot | undefined;
    try {
      const snapshots = await readSnapshots(shell, root.path, [args.path], {
        signal: extra.signal,
        timeoutMs: root.options.timeoutMs,
        maxFileBytes: root.options.limits?.maxFileBytes,
      });
      snapshot = snapshots.get(args.path);
    } catch (error) {
      return failed(error instanceof RemoteShellError ? error.failure : unexpected(error, log), root.name);
    }
    const problem = snapshotProblem(args.path, snapshot, root);
    if (problem !== null) return failed(problem, root.name);
    const window = readWindow(snapshot!.bytes!, {
      offset: args.offset,
      limit: args.limit,
      lineIds: args.line_ids,
      maxBytes: readMaxBytes,
      path: args.path,
    });
    if ("code" in window) return failed(window, root.name);
    log(`read_file ${root.name}:${args.path} lines ${window.start_line}-${window.end_line} of ${window.total_lines}`);
    const out: ReadFileOutput = { ok: true, root: root.name, path: args.path, ...window };
    return { content: readBlocks(root.name, args.path, window, args.line_ids === true), structuredContent: out };
  });

  server.registerTool("apply_patch", {
    title: "Apply patch",
    description: applyPatchDescription(roots),
    inputSchema: applyPatchInput,
    outputSchema: applyPatchOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  }, async (args: ApplyPatchArgs, extra: Extra): Promise<CallToolResult> => {
    const dryRun = args.dry_run === true;
    const failed = (f: PatchFailure): CallToolResult => {
      log(`apply_patch failed before starting: ${f.code}`);
      const errors = mcpFailures([f], { tools: TOOL_NAMES });
      const out: ApplyPatchOutput = { ok: false, dry_run: dryRun, files: [], warnings: [], errors };
      return { isError: true, content: failureBlocks(errors), structuredContent: out };
    };
    const root = pickRoot(args.root);
    if ("code" in root) return failed(root);
    const shell = await shellOf(root);
    if ("code" in shell) return failed(shell);
    let report: ApplyPatchOutput;
    try {
      report = await applyPatch(shell, {
        root: root.path,
        patch: args.patch,
        dryRun,
        expectedSha256: args.expected_sha256,
        matching: root.options.matching,
        requireShaForDelete: root.options.requireShaForDelete,
        createParents: root.options.createParents,
        limits: root.options.limits,
        timeoutMs: root.options.timeoutMs,
        signal: extra.signal,
        onProgress: progressReporter(extra),
      });
    } catch (error) {
      return failed(unexpected(error, log));
    }
    const files = report.files.map((f) => `${f.op} ${f.path}`).join(", ");
    if (!report.ok) {
      log(`apply_patch ${root.name} failed: ${(report.errors ?? []).map((e) => e.code).join(", ")} (operation ${report.operation_id})`);
      // An unknown outcome (or leftovers) is settled here at once, on the same
      // shell (an SSH shell reconnects after a drop): the model gets "applied"
      // or "not applied" instead of a question it has no tool to answer.
      const ticket = reconcileTicketOf(report);
      if (ticket !== null) {
        const reconciled = await reconcile(shell, root.path, ticket, ticket.operation_id, { timeoutMs: root.options.timeoutMs, signal: extra.signal })
          .catch((error: unknown): CommitReport => ({
            ok: false,
            operation_id: ticket.operation_id,
            atomicity: "batch_preflight_per_file_commit",
            elevated: shell.elevated ?? false,
            files: [],
            warnings: [],
            errors: [unexpected(error, log)],
          }));
        log(`apply_patch ${root.name} reconciled operation ${ticket.operation_id}: ${settledSummary(reconciled)}`);
        report = { ...report, reconciled };
      }
      return { isError: true, ...failedApplyResult(report, { tools: TOOL_NAMES }) };
    }
    log(`apply_patch ${root.name} ${dryRun ? "dry run" : "applied"}: ${files} (operation ${report.operation_id})`);
    return { content: reportBlocks(report, root.name, diffBudget), structuredContent: { ...report } };
  });

  return server;
}

/** Why a snapshot cannot be read as a text file, or null when it can. */
function snapshotProblem(path: string, snap: FileSnapshot | undefined, root: RootConfig): PatchFailure | null {
  if (snap === undefined) return failure("remote_error", `the host did not report ${path}; retry.`, { path, retryable: true });
  if (snap.rejected) return { ...snap.rejected, path: snap.rejected.path ?? path };
  switch (snap.kind) {
    case "file":
      return snap.bytes ? null : failure("remote_error", `the host sent no content for ${path}; retry.`, { path, retryable: true });
    case "missing":
      return failure(
        "not_found",
        `${path} does not exist in root ${root.name}. Check the spelling and the directory; to create it, send apply_patch with "*** Add File: ${path}".`,
        { path, actual_state: "missing" },
      );
    case "directory":
      return failure("not_regular_file", `${path} is a directory; read_file reads files. Name a file inside it.`, { path, actual_state: "directory" });
    case "symlink":
      return failure(
        "symlink_rejected",
        `${path} is a symbolic link; links are not followed (that could reach outside the root). Read the file it points to by its real path below the root.`,
        { path, actual_state: "symlink" },
      );
    default:
      return failure("not_regular_file", `${path} is not a regular file (a device, socket or FIFO); it cannot be read here.`, { path, actual_state: "other" });
  }
}

/**
 * Upload progress as MCP progress notifications, when the client asked for
 * them (a progressToken): at most about one per 5% of the bytes, so a 40 MB
 * upload does not flood the client, and always the last one.
 */
function progressReporter(extra: Extra): ((sent: number, total: number) => void) | undefined {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return undefined;
  let lastSent = -1;
  let lastStep = -1;
  return (sent, total) => {
    if (total === 0 || sent <= lastSent) return;
    const step = Math.floor((sent * 20) / total);
    if (sent < total && step === lastStep) return;
    lastSent = sent;
    lastStep = step;
    extra.sendNotification({
      method: "notifications/progress",
      params: { progressToken, progress: sent, total, message: `uploading the new contents: ${sent} of ${total} bytes` },
    }).catch(() => {});
  };
}

/** A bug or an unforeseen error: logged with its stack, reported as a typed failure. */
function unexpected(error: unknown, log: (line: string) => void): PatchFailure {
  log(`unexpected error: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
  const what = error instanceof Error ? error.message : String(error);
  return failure(
    "remote_error",
    `the server hit an unexpected error (${what}). After apply_patch, read_file the patch's files to see their state before retrying; if it persists, tell the user.`,
    { retryable: false },
  );
}
