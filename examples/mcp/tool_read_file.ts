/**
 * The `read_file` tool: a window of a file's lines with the hashes a patch
 * needs, bounded in bytes — a line longer than the budget is cut and the
 * result says how to read the rest (`column`).
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { RemoteShellError, failure, readSnapshots, readWindow } from "../../mod.ts";
import type { FileSnapshot, PatchFailure, ReadWindowResult } from "../../mod.ts";
import { shellOf, unexpected } from "./context.ts";
import { pickRootProbing } from "./root_probe.ts";
import type { Extra, ToolContext } from "./context.ts";
import { readFileDescription } from "./descriptions.ts";
import { mcpFailures } from "./hint_words.ts";
import { failureBlocks, readBlocks } from "./render.ts";
import { wireFailures, wireReadWindow, wireWarnings } from "../wire/convert.ts";
import type { RootConfig } from "./roots.ts";
import { readFileInput, readFileOutput } from "./schemas.ts";
import type { LineCut, ReadFileArgs, ReadFileOutput } from "./schemas.ts";

const encoder = new TextEncoder();

/**
 * Register read_file on `server`.
 *
 * @example
 * ```ts
 * const tool = registerReadFile(server, ctx);
 * tool.update({ description: readFileDescription(newRoots) });
 * ```
 */
export function registerReadFile(server: McpServer, ctx: ToolContext): ReturnType<McpServer["registerTool"]> {
  return server.registerTool("read_file", {
    title: "Read file",
    description: readFileDescription(ctx.connection.roots),
    inputSchema: readFileInput,
    outputSchema: readFileOutput,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  }, (args: ReadFileArgs, extra: Extra): Promise<CallToolResult> => ctx.connection.run(() => readFile(ctx, args, extra), extra));
}

async function readFile(ctx: ToolContext, args: ReadFileArgs, extra: Extra): Promise<CallToolResult> {
  const failed = (f: PatchFailure, rootName?: string): CallToolResult => {
    ctx.connection.line(`read_file ${rootName ?? "?"}:${args.path} failed: ${f.code}`);
    const errors = mcpFailures([f], { tools: ctx.tools });
    const out: ReadFileOutput = { ok: false, ...(rootName ? { root: rootName } : {}), path: args.path, errors: wireFailures(errors) };
    return { isError: true, content: failureBlocks(errors), structuredContent: out };
  };
  const root = await pickRootProbing(ctx, args.root, () => [{ path: args.path, kind: "file" }], extra, {
    tool: "read_file",
    rest: (prefix) => `"path": ${JSON.stringify(prefix === null ? args.path : args.path.slice(prefix.length + 1))}`,
  });
  if ("code" in root) return failed(root);
  const shell = await shellOf(ctx, root);
  if ("code" in shell) return failed(shell, root.name);
  let snapshot: FileSnapshot | undefined;
  try {
    const snapshots = await readSnapshots(shell, root.path, [args.path], {
      signal: extra.signal,
      timeoutMs: root.options.timeoutMs,
      maxFileBytes: root.options.limits?.maxFileBytes,
      sharedDirectories: root.options.sharedDirectories,
      trustRootAncestors: root.options.trustRootAncestors,
      cache: ctx.connection.snapshots,
    });
    snapshot = snapshots.get(args.path);
  } catch (error) {
    return failed(error instanceof RemoteShellError ? error.failure : unexpected(error, ctx), root.name);
  }
  const problem = snapshotProblem(args.path, snapshot, root);
  if (problem !== null) return failed(problem, root.name);
  const window = readWindow(snapshot!.bytes!, {
    offset: args.offset,
    // With a column, the window is that one line.
    limit: args.column !== undefined ? 1 : args.limit,
    lineIds: args.line_ids,
    maxBytes: ctx.readMaxBytes,
    path: args.path,
    ...(args.encoding !== undefined ? { encoding: args.encoding } : {}),
  });
  if ("code" in window) return failed(window, root.name);
  const cut = cutLongLine(window, args, ctx.readMaxBytes);
  if ("code" in cut) return failed(cut, root.name);
  const shown = cut.window;
  ctx.connection.line(
    `read_file ${root.name}:${args.path} lines ${shown.startLine}-${shown.endLine} of ${shown.totalLines}${cut.lineCut ? ` (line cut: columns ${cut.lineCut.from_column}-${cut.lineCut.to_column} of ${cut.lineCut.line_chars})` : ""}`,
  );
  ctx.reads?.remember(root.name, args.path, shown);
  const out: ReadFileOutput = {
    ok: true,
    root: root.name,
    path: args.path,
    ...wireReadWindow(shown),
    ...(cut.lineCut ? { line_cut: cut.lineCut } : {}),
    ...(snapshot!.transfer ? { snapshot: snapshot!.transfer } : {}),
    ...(snapshot!.warnings ? { warnings: wireWarnings(snapshot!.warnings) } : {}),
  };
  for (const w of snapshot!.warnings ?? []) ctx.connection.line(`read_file ${root.name}:${args.path} ${w.code}: ${w.message}`);
  // readBlocks' "more lines follow" is about whole lines; the cut line gets its own note.
  const blocks = readBlocks(root.name, args.path, cut.lineCut ? { ...shown, truncated: shown.endLine < shown.totalLines } : shown, args.line_ids === true);
  if (cut.lineCut) blocks[0] = { type: "text", text: `${blocks[0]!.text}\n${lineCutNote(cut.lineCut, shown)}` };
  for (const w of snapshot!.warnings ?? []) blocks[0] = { type: "text", text: `${blocks[0]!.text}\nNote (${w.code}): ${w.message}` };
  return { content: blocks, structuredContent: out };
}

/**
 * A one-line window whose line is longer than the budget (or read from a
 * column) is cut to the budget; the returned `lineCut` says which
 * characters are shown. `column` counts UTF-16 code units from 1, the way
 * the text is shown; a cut never splits a surrogate pair.
 */
function cutLongLine(
  window: ReadWindowResult,
  args: ReadFileArgs,
  budget: number,
): { window: ReadWindowResult; lineCut: LineCut | null } | PatchFailure {
  const oneLine = window.endLine === window.startLine;
  if (!oneLine || (args.column === undefined && encoder.encode(window.text).length <= budget)) {
    if (args.column !== undefined && !oneLine) {
      return failure("invalid_argument", `column needs a line to read: offset ${window.startLine} is past the end (total_lines is ${window.totalLines}).`);
    }
    return { window, lineCut: null };
  }
  const prefix = args.line_ids ? window.text.slice(0, window.text.indexOf("|") + 1) : "";
  const body = window.text.slice(prefix.length);
  const ending = body.endsWith("\n") ? "\n" : "";
  const line = ending ? body.slice(0, -1) : body;
  const from = (args.column ?? 1) - 1;
  if (from > line.length || (from === line.length && line.length > 0)) {
    return failure(
      "invalid_argument",
      `column ${args.column} is past the end of line ${window.startLine}, which has ${line.length} characters; use a column between 1 and ${Math.max(1, line.length)}.`,
      { line: window.startLine },
    );
  }
  let bytes = encoder.encode(prefix).length;
  let to = from;
  while (to < line.length) {
    const code = line.charCodeAt(to);
    const width = code >= 0xd800 && code <= 0xdbff ? 2 : 1;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : width === 2 ? 4 : 3;
    if (bytes + size > budget && to > from) break;
    bytes += size;
    to += width;
  }
  const whole = to >= line.length;
  const text = prefix + line.slice(from, to) + (whole ? ending : "");
  const lineCut: LineCut = {
    line: window.startLine,
    line_chars: line.length,
    from_column: from + 1,
    to_column: to,
    next_column: whole ? null : to + 1,
  };
  return { window: { ...window, text, truncated: window.truncated || !whole }, lineCut };
}

function lineCutNote(cut: LineCut, w: ReadWindowResult): string {
  const shown = `Line ${cut.line} has ${cut.line_chars} characters; this result shows characters ${cut.from_column}-${cut.to_column} of it (the text block holds only those).`;
  const next = cut.next_column !== null
    ? ` To read on, call read_file with offset ${cut.line} and column ${cut.next_column}.`
    : cut.line < w.totalLines
    ? ` That is the end of the line; call read_file with offset ${cut.line + 1} for the next lines.`
    : " That is the end of the file.";
  return `${shown}${next} content_sha256 covers the whole line as stored.`;
}

/** Why a snapshot cannot be read as a text file, or null when it can. */
function snapshotProblem(path: string, snap: FileSnapshot | undefined, root: RootConfig): PatchFailure | null {
  if (snap === undefined) return failure("remote_error", `the host did not report ${path}; retry.`, { path, retryable: true });
  if (snap.rejected) return { ...snap.rejected, path: snap.rejected.path ?? path };
  const parent = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ".";
  switch (snap.kind) {
    case "file":
      return snap.bytes ? null : failure("remote_error", `the host sent no content for ${path}; retry.`, { path, retryable: true });
    case "missing":
      return failure(
        "not_found",
        `${path} does not exist in root ${root.name}. Call list_files {"path": ${JSON.stringify(parent)}} to see what is there, or search for a name or text; to create it, send apply_patch with "*** Add File: ${path}".`,
        { path, actualState: "missing", closestPaths: [] },
      );
    case "directory":
      return failure(
        "not_regular_file",
        `${path} is a directory; read_file reads files. Call list_files {"path": ${JSON.stringify(path)}} to see its files.`,
        { path, actualState: "directory" },
      );
    case "symlink":
      return failure(
        "symlink_rejected",
        `${path} is a symbolic link; links are not followed (that could reach outside the root). Read the file it points to by its real path below the root.`,
        { path, actualState: "symlink" },
      );
    default:
      return failure("not_regular_file", `${path} is not a regular file (a device, socket or FIFO); it cannot be read here.`, { path, actualState: "other" });
  }
}
