/**
 * The text blocks of tool results, built from the result objects (never by
 * re-parsing JSON). Clients that show the model only `content` still give
 * it everything it needs: SHAs in full, recovery messages first, diffs
 * bounded.
 *
 * @module
 */
import type { CommitReport, FileReport, PatchFailure, ReadWindowResult, Warning } from "../../mod.ts";
import { mcpFailures, mcpWarnings } from "./hint_words.ts";
import type { McpWordsContext } from "./hint_words.ts";
import type { ApplyOutcome, WireApplyOutcome } from "../wire/types.ts";
import { wireApplyOutcome } from "../wire/convert.ts";
import { cutText, diffCutNote } from "./bounds.ts";

/** A text content block. */
export type TextBlock = { type: "text"; text: string };

const text = (value: string): TextBlock => ({ type: "text", text: value });
const short = (sha: string | null): string => (sha === null ? "none" : sha.slice(0, 12));

/**
 * read_file's blocks: a summary with the hashes and what to do next, then
 * the window's text exactly (omitted for an empty file).
 *
 * @example
 * ```ts
 * readBlocks("site", "index.html", window, false);
 * ```
 */
export function readBlocks(root: string, path: string, w: ReadWindowResult, lineIds: boolean): TextBlock[] {
  const format = `eol ${w.eol}, ${w.finalNewline ? "final newline" : "no final newline"}${w.bom ? ", UTF-8 BOM" : ""}`;
  let range: string;
  if (w.totalLines === 0) range = "is empty (0 lines)";
  else if (w.startLine === 1 && !w.truncated) range = `lines 1-${w.endLine} of ${w.totalLines} (the whole file)`;
  else range = `lines ${w.startLine}-${w.endLine} of ${w.totalLines}`;
  const lines = [
    `${path} in root ${root}: ${range}; ${format}.`,
    `file_sha256: ${w.fileSha256}  (send as expected_sha256 {"${path}": "…"} when patching this file)`,
    `content_sha256: ${w.contentSha256}  (these lines' bytes as stored)`,
  ];
  if (w.truncated) lines.push(`More lines follow: call read_file with offset ${w.endLine + 1} to read on.`);
  if (lineIds) lines.push(`Each line is prefixed "N:hh|" (line number : content hash); never copy the prefix into a patch.`);
  return w.text === "" ? [text(lines.join("\n"))] : [text(lines.join("\n")), text(w.text)];
}

/**
 * The failure blocks of any tool: the recovery messages first (the block a
 * model reads), then the warnings, if any — each in this server's words
 * (examples/mcp/hint_words.ts).
 *
 * @example
 * ```ts
 * failureBlocks(report.errors ?? [], report.warnings);
 * ```
 */
export function failureBlocks(errors: readonly PatchFailure[], warnings: readonly Warning[] = [], context: McpWordsContext = {}): TextBlock[] {
  // Library messages start with their code (lib/failure.ts), so the text alone says which failure it is.
  const items = mcpFailures(errors, context).map((e) => e.message);
  const head = errors.length > 1 ? `${errors.length} problems:\n\n` : "";
  const blocks = [text(head + items.join("\n\n"))];
  if (warnings.length > 0) blocks.push(text(warningLines(mcpWarnings(warnings, context))));
  return blocks;
}

/**
 * A failed apply_patch as one coherent result: when the server reconciled
 * an unknown outcome, the verdict comes first and no later block sends the
 * model elsewhere (the failure's "call reconcile" step becomes a pointer to
 * the verdict); messages in the text and in `structuredContent` are in this
 * server's words, and each code is said once per message. `structuredContent`
 * is in the wire format (examples/wire/convert.ts), diffs not yet bounded.
 *
 * @example
 * ```ts
 * return { isError: true, ...failedApplyResult(report, { tools: new Set(["read_file", "apply_patch"]) }) };
 * ```
 */
export function failedApplyResult(report: ApplyOutcome, context: McpWordsContext = {}): { content: TextBlock[]; structuredContent: WireApplyOutcome } {
  const words: McpWordsContext = { ...context, reconciled: report.reconciled?.ok === true };
  const errors = mcpFailures(report.errors ?? [], words);
  const warnings = mcpWarnings(report.warnings, words);
  const blocks = failureBlocks(errors, warnings, words);
  const content = report.reconciled ? [reconciledBlock(report.reconciled), ...blocks] : blocks;
  return { content, structuredContent: wireApplyOutcome({ ...report, errors, warnings }) };
}

/**
 * A reconcile on one log line: `path: state` per file, or why it did not finish.
 *
 * @example
 * ```ts
 * settledSummary(reconciled); // "app.py: applied, new.txt: applied"
 * ```
 */
export function settledSummary(settled: CommitReport): string {
  if (!settled.ok) return `did not finish (${(settled.errors ?? []).map((e) => e.code).join(", ")})`;
  return settled.files.map((f) => `${f.moveTo !== undefined ? `${f.path} -> ${f.moveTo}` : f.path}: ${f.state}`).join(", ");
}

/**
 * The verdict of the reconcile the server ran after an unknown outcome:
 * the first block of such a result, because it replaces the question the
 * failure below asks ("call reconcile") with the answer.
 *
 * @example
 * ```ts
 * reconciledBlock(report.reconciled!).text; // "The server has already reconciled operation …: the patch IS applied …"
 * ```
 */
export function reconciledBlock(settled: CommitReport): TextBlock {
  const op = `operation ${settled.operationId}`;
  if (!settled.ok) {
    // In this server's words: it has no reconcile tool to "call again".
    const why = mcpFailures(settled.errors ?? []).map((e) => e.message).join(" ");
    return text(
      `The server tried to settle ${op} at once, but reconcile did not finish: ${why}\nThe outcome is still unknown: do not resend the patch. read_file each file of the patch to see its real state, and tell the user the operation id ${settled.operationId}.`,
    );
  }
  const states = settled.files.map((f) => f.state);
  const lines = [];
  if (states.every((s) => s === "applied")) {
    lines.push(`The server has already reconciled ${op}: the patch IS applied, every file holds its new version. Do not send it again.`);
  } else if (states.every((s) => s === "not_applied")) {
    lines.push(`The server has already reconciled ${op}: the patch was NOT applied and nothing was changed (its temporary files are removed). Send the same patch again.`);
  } else {
    lines.push(
      `The server has already reconciled ${op}: not a clean outcome. "diverged" files were changed by someone else and were left as they are; "applied" ones hold this patch's version, "not_applied" ones the old one. read_file the files that are not applied and send a new patch for what is still missing.`,
    );
  }
  for (const f of settled.files) {
    const target = f.moveTo !== undefined ? `${f.path} -> ${f.moveTo}` : f.path;
    lines.push(`- ${target}: ${f.state}${f.state === "applied" && f.newSha256 !== null ? ` (sha256 ${f.newSha256})` : ""}`);
  }
  if (settled.warnings.length > 0) lines.push(warningLines(mcpWarnings(settled.warnings)));
  return text(lines.join("\n"));
}

function warningLines(warnings: readonly Warning[]): string {
  return ["Warnings:", ...warnings.map((w) => `- [${w.code}] ${w.message}`)].join("\n");
}

function describeFile(file: FileReport, dryRun: boolean): string {
  const target = file.moveTo !== undefined ? `${file.path} -> ${file.moveTo}` : file.path;
  const parts: string[] = [];
  if (file.newSha256 !== null) parts.push(`${dryRun ? "would get" : "new"} sha256 ${file.newSha256}`);
  if (file.previousSha256 !== null) parts.push(`was ${short(file.previousSha256)}`);
  if (!dryRun && file.bytesWritten > 0) parts.push(`${file.bytesWritten} bytes written`);
  const kept = file.metadataPreserved;
  if (kept !== null) parts.push(`mode ${kept.mode ? "kept" : "NOT kept"}, owner ${kept.owner ? "kept" : "NOT kept"}`);
  return `- ${file.op} ${target}${parts.length > 0 ? `: ${parts.join(", ")}` : ""}`;
}

/**
 * The blocks of a successful apply_patch: what changed (or would change),
 * the warnings, then the diffs cut at `diffBudget` UTF-8 bytes.
 *
 * @example
 * ```ts
 * reportBlocks(report, "site", 64 * 1024);
 * ```
 */
export function reportBlocks(report: ApplyOutcome, root: string, diffBudget: number): TextBlock[] {
  const count = `${report.files.length} file${report.files.length === 1 ? "" : "s"}`;
  const head = report.dryRun
    ? `Dry run on root ${root}: the patch applies cleanly to ${count}; nothing was changed.`
    : `Applied the patch to root ${root}: ${count} changed (operation ${report.operationId}${report.elevated ? ", elevated with sudo" : ""}).`;
  const lines = [head, ...report.files.map((f) => describeFile(f, report.dryRun))];
  if (report.dryRun) {
    lines.push("To apply it, send the same patch without dry_run, with expected_sha256 set to each file's current sha256 so nothing can change in between.");
  } else {
    lines.push("A new sha256 is the file's file_sha256 now: use it as expected_sha256 for a further patch of that file.");
  }
  const blocks = [text(lines.join("\n"))];
  if (report.warnings.length > 0 || report.files.some((f) => f.warnings.length > 0)) {
    blocks.push(text(warningLines(mcpWarnings([...report.warnings, ...report.files.flatMap((f) => f.warnings)]))));
  }
  const diff = report.files.map((f) => f.diff).filter((d) => d !== "").join("\n");
  if (diff !== "") blocks.push(text(boundedDiff(diff, diffBudget)));
  return blocks;
}

/**
 * The diff, cut within `budget` UTF-8 bytes (at a line boundary, see
 * bounds.ts), with a note saying what was cut and how to see more.
 *
 * @example
 * ```ts
 * boundedDiff(hugeDiff, 256 * 1024); // "...\n[diff cut: 262100 of 900000 bytes shown. …]"
 * ```
 */
export function boundedDiff(diff: string, budget: number): string {
  const cut = cutText(diff, budget);
  if (!cut.cut) return diff;
  return `${cut.text}${cut.text.endsWith("\n") || cut.text === "" ? "" : "\n"}${diffCutNote(cut.bytes, cut.total)}`;
}
