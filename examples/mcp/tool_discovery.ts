/**
 * The discovery tools, `list_files` and `search`: read-only, bounded, with
 * the path rules and root confinement of every other tool, one remote exec
 * each, symlinks never followed (the library's `listFiles` and
 * `searchFiles`). They answer "where is it?" so a model does not page
 * through a 250,000-line log 800 lines at a time.
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { listFiles, searchFiles } from "../../mod.ts";
import type { ListedEntry, ListFilesResult, PatchFailure, SearchFilesResult } from "../../mod.ts";
import { guardResult } from "./bounds.ts";
import { pickRoot, shellOf } from "./context.ts";
import type { Extra, ToolContext } from "./context.ts";
import { listFilesDescription, searchDescription } from "./descriptions.ts";
import { mcpFailures } from "./hint_words.ts";
import { failureBlocks } from "./render.ts";
import { wireFailures, wireListResult, wireSearchResult } from "../wire/convert.ts";
import { listFilesInput, listFilesOutput, searchInput, searchOutput } from "./schemas_discovery.ts";
import type { ListFilesArgs, ListFilesOutput, SearchArgs, SearchOutput } from "./schemas_discovery.ts";

/** Most entries one list_files returns. */
export const LIST_MAX_ENTRIES = 1000;
/** Most characters of a matching line shown (its id still covers the whole line). */
export const SEARCH_LINE_CHARS = 300;

type Registered = ReturnType<McpServer["registerTool"]>;

/**
 * Register list_files and search on `server`.
 *
 * @example
 * ```ts
 * const [list, search] = registerDiscovery(server, ctx);
 * ```
 */
export function registerDiscovery(server: McpServer, ctx: ToolContext): [Registered, Registered] {
  const annotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
  const list = server.registerTool("list_files", {
    title: "List files",
    description: listFilesDescription(ctx.connection.roots),
    inputSchema: listFilesInput,
    outputSchema: listFilesOutput,
    annotations,
  }, (args: ListFilesArgs, extra: Extra): Promise<CallToolResult> => ctx.connection.run(() => listTool(ctx, args, extra), extra));
  const search = server.registerTool("search", {
    title: "Search files",
    description: searchDescription(ctx.connection.roots),
    inputSchema: searchInput,
    outputSchema: searchOutput,
    annotations,
  }, (args: SearchArgs, extra: Extra): Promise<CallToolResult> => ctx.connection.run(() => searchTool(ctx, args, extra), extra));
  return [list, search];
}

/** A failed discovery result; `structured` is already in the wire format. */
function failedResult(ctx: ToolContext, tool: string, f: PatchFailure, structured: ListFilesOutput | SearchOutput): CallToolResult {
  ctx.connection.line(`${tool} failed: ${f.code}`);
  const errors = mcpFailures([f], { tools: ctx.tools });
  return { isError: true, content: failureBlocks(errors), structuredContent: { ...structured, ok: false, errors: wireFailures(errors) } };
}

async function listTool(ctx: ToolContext, args: ListFilesArgs, extra: Extra): Promise<CallToolResult> {
  const empty: ListFilesOutput = { ok: false, path: args.path ?? "", entries: [], truncated: false, unreadable: [], unreadable_count: 0 };
  const root = pickRoot(ctx, args.root);
  if ("code" in root) return failedResult(ctx, "list_files", root, empty);
  const shell = await shellOf(ctx, root);
  if ("code" in shell) return failedResult(ctx, "list_files", shell, { ...empty, root: root.name });
  const result = await listFiles(shell, root.path, {
    path: args.path,
    depth: args.depth,
    glob: args.glob,
    maxEntries: LIST_MAX_ENTRIES,
    signal: extra.signal,
    timeoutMs: root.options.timeoutMs,
  });
  if (!result.ok) return failedResult(ctx, "list_files", result.errors[0], { ...wireListResult(result), root: root.name });
  ctx.connection.line(`list_files ${root.name}:${result.path || "."} ${result.entries.length} entries${result.truncated ? " (truncated)" : ""}`);
  const out: ListFilesOutput = { ...wireListResult(result), root: root.name };
  return guardResult({ content: [{ type: "text", text: listText(root.name, result, args) }], structuredContent: out });
}

async function searchTool(ctx: ToolContext, args: SearchArgs, extra: Extra): Promise<CallToolResult> {
  const empty: SearchOutput = {
    ok: false,
    path: args.path ?? "",
    pattern: args.pattern,
    matches: [],
    truncated: false,
    files_searched: 0,
    directories_searched: 0,
    skipped: { binary: 0, unreadable: 0, changed: 0, unpinnable: 0, examples: [] },
  };
  const root = pickRoot(ctx, args.root);
  if ("code" in root) return failedResult(ctx, "search", root, empty);
  const shell = await shellOf(ctx, root);
  if ("code" in shell) return failedResult(ctx, "search", shell, { ...empty, root: root.name });
  const result = await searchFiles(shell, root.path, args.pattern, {
    path: args.path,
    glob: args.glob,
    fixedString: args.fixed_string,
    ignoreCase: args.ignore_case,
    maxResults: args.max_results,
    signal: extra.signal,
    timeoutMs: root.options.timeoutMs,
  });
  if (!result.ok) return failedResult(ctx, "search", result.errors[0], { ...wireSearchResult(result), root: root.name });
  const matches = result.matches.map((m) => (m.text.length > SEARCH_LINE_CHARS ? { ...m, text: shorten(m.text), cut: true } : m));
  ctx.connection.line(`search ${root.name}:${result.path || "."} ${matches.length} matches in ${result.filesSearched} files${result.truncated ? " (truncated)" : ""}`);
  const out: SearchOutput = { ...wireSearchResult({ ...result, matches }), root: root.name };
  return guardResult({ content: [{ type: "text", text: searchText(root.name, out) }], structuredContent: out });
}

/** Why the unpinnable files were not read, from their examples' causes. */
function unpinnableWhy(examples: SearchOutput["skipped"]["examples"]): string {
  const words: Record<string, string> = {
    hard_link_refused: "the host refuses this user a hard link to another user's file; search as its owner or with sudo",
    no_space: "the file system there is full",
    read_only_filesystem: "the file system there is read-only",
    permission_denied: "this user may not write that directory; search as its owner or with sudo",
    private_failed: "no private directory could be made there",
  };
  const causes = [...new Set(examples.filter((e) => e.reason === "unpinnable" && e.cause !== undefined).map((e) => e.cause!))];
  return causes.length === 0 ? "they could not be pinned there" : causes.map((c) => words[c] ?? c).join("; ");
}

function shorten(text: string): string {
  let end = SEARCH_LINE_CHARS;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return text.slice(0, end);
}

/** A path as shown in text: quoted when no tool could address it as printed. */
function shownPath(path: string, addressable: boolean): string {
  return addressable ? path : `${JSON.stringify(path)} (unaddressable name)`;
}

function listText(root: string, r: ListFilesResult, args: ListFilesArgs): string {
  const where = r.path === "" ? "the root" : r.path;
  const filters = [args.depth && args.depth > 1 ? `depth ${args.depth}` : "", args.glob ? `glob ${JSON.stringify(args.glob)}` : ""].filter(Boolean).join(", ");
  const lines = [`${r.entries.length} entr${r.entries.length === 1 ? "y" : "ies"} in ${where} of root ${root}${filters ? ` (${filters})` : ""}:`];
  for (const e of r.entries) lines.push(entryLine(e));
  if (r.entries.length === 0) lines.push(args.glob ? "(nothing matches the glob)" : "(empty)");
  if (r.truncated) {
    lines.push(`[more entries exist: only the first ${r.entries.length} are shown (shallower first). Narrow with path, glob or a smaller depth.]`);
  }
  if (r.unreadableCount > 0) {
    lines.push(`${r.unreadableCount} director${r.unreadableCount === 1 ? "y" : "ies"} could not be entered: ${r.unreadable.map((p) => shownPath(p, true)).join(", ")}${r.unreadableCount > r.unreadable.length ? ", …" : ""}`);
  }
  lines.push("Symlinks are listed, never followed. Paths are relative to the root: pass them to read_file, or search inside with search.");
  return lines.join("\n");
}

function entryLine(e: ListedEntry): string {
  const kind = e.kind === "file" ? "f" : e.kind === "directory" ? "d" : e.kind === "symlink" ? "l" : "?";
  const mode = e.mode === null ? "----" : e.mode.toString(8).padStart(4, "0");
  const size = e.size === null ? "" : ` ${e.size}`;
  const suffix = e.kind === "directory" ? "/" : e.kind === "symlink" ? " (symlink, not followed)" : e.kind === "other" ? " (device, socket or FIFO)" : "";
  return `${kind} ${mode}${size} ${shownPath(e.path, e.addressable !== false)}${suffix}`;
}

function searchText(root: string, r: SearchOutput): string {
  const where = r.path === "" ? "" : ` below ${r.path}`;
  const lines = [
    `${r.matches.length}${r.truncated ? "+" : ""} matching line${r.matches.length === 1 ? "" : "s"} for ${JSON.stringify(r.pattern)} in root ${root}${where} (${r.files_searched} files searched):`,
  ];
  for (const m of r.matches) {
    const id = m.id ?? `${m.line}:--`;
    lines.push(`${shownPath(m.path, m.addressable !== false)}:${id} ${m.text}${m.cut ? " …[line cut]" : ""}`);
  }
  if (r.matches.length === 0) lines.push("(no match)");
  if (r.truncated) lines.push(`[more lines match: only the first ${r.matches.length} are shown. Narrow with path or glob, or a more specific pattern.]`);
  const s = r.skipped;
  const skipped = [
    s.binary ? `${s.binary} binary` : "",
    s.unreadable ? `${s.unreadable} unreadable` : "",
    s.changed ? `${s.changed} changed while read` : "",
    s.unpinnable ? `${s.unpinnable} not read safely in a directory other users can write (${unpinnableWhy(s.examples)})` : "",
  ].filter(Boolean);
  if (skipped.length > 0) lines.push(`Skipped: ${skipped.join(", ")}${s.examples.length ? ` (e.g. ${s.examples.slice(0, 5).map((e) => shownPath(e.path, true)).join(", ")})` : ""}.`);
  for (const w of r.warnings ?? []) lines.push(`Note (${w.code}): ${w.message}`);
  lines.push('Each line is path:N:hh (line number and the line\'s id, as in read_file with line_ids). Read around a match with read_file {"path": …, "offset": N - 10, "limit": 30}.');
  return lines.join("\n");
}
