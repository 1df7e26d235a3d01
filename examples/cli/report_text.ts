/**
 * Human-readable text of an `ApplyReport` (the CLI's default output and the
 * demo's), and the CLI's exit code for a report.
 *
 * @module
 */
import { shQuote } from "../../mod.ts";
import type { ApplyReport, FileReport, PatchFailure, Warning } from "../../mod.ts";
import { cliFailure, cliWarning } from "./hint_words.ts";
import type { CliWordsContext } from "./hint_words.ts";

/** Failure codes after which files MAY have changed (exit code 3). */
const MAYBE_CHANGED: ReadonlySet<string> = new Set(["outcome_unknown", "partial_apply"]);

/**
 * The CLI exit code of a report: 0 ok, 1 refused with nothing changed,
 * 3 files may have changed (`outcome_unknown`, `partial_apply`).
 *
 * @example
 * ```ts
 * exitCodeFor({ ok: true } as ApplyReport); // 0
 * ```
 */
export function exitCodeFor(report: ApplyReport): 0 | 1 | 3 {
  if (report.ok) return 0;
  return (report.errors ?? []).some((e) => MAYBE_CHANGED.has(e.code)) ? 3 : 1;
}

/**
 * The first 8 hex digits of a SHA-256, or `(none)` for a missing file.
 *
 * @example
 * ```ts
 * shortSha("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"); // "9f86d081"
 * ```
 */
export function shortSha(sha: string | null | undefined): string {
  return sha ? sha.slice(0, 8) : "(none)";
}

/**
 * One line per file: op, path, previous → new SHA prefix, bytes written and
 * what metadata was kept, then the file's warnings. `pathWidth` pads the
 * path column so several lines align.
 *
 * @example
 * ```ts
 * formatFileLine(report.files[0]!); // "  update  index.html  1a2b3c4d → 5e6f7a8b  1043 bytes  mode+owner kept"
 * ```
 */
export function formatFileLine(file: FileReport, pathWidth = 0): string {
  const parts = [
    `  ${file.op.padEnd(6)}  ${shownPath(file).padEnd(pathWidth)}`,
    `${shortSha(file.previousSha256)} → ${shortSha(file.newSha256)}`,
  ];
  if (file.bytesWritten > 0) parts.push(`${file.bytesWritten} bytes`);
  const kept = file.metadataPreserved;
  if (kept) {
    parts.push(kept.mode && kept.owner ? "mode+owner kept" : `mode ${kept.mode ? "kept" : "NOT kept"}, owner ${kept.owner ? "kept" : "NOT kept"}`);
  }
  if (file.state !== undefined) parts.push(file.state);
  const lines = [parts.join("  ")];
  for (const w of file.warnings) lines.push(`      ! ${formatWarning(w)}`);
  return lines.join("\n");
}

/**
 * One warning: `code (path): message`.
 *
 * @example
 * ```ts
 * formatWarning({ code: "parents_created", message: "docs/ will be created.", path: "docs/a.md" });
 * // "parents_created (docs/a.md): docs/ will be created."
 * ```
 */
export function formatWarning(w: Warning, context: CliWordsContext = {}): string {
  return `${w.code}${w.path !== undefined ? ` (${w.path})` : ""}: ${cliWarning(w, context).message}`;
}

/**
 * One failure: a heading with code, path and chunk, then its recovery
 * message indented (it is written for the model and may span lines).
 *
 * @example
 * ```ts
 * if (!report.ok) formatFailure(report.errors[0], 1); // "[1] conflict · index.html\n    index.html changed …"
 * ```
 */
export function formatFailure(failure: PatchFailure, index: number, context: CliWordsContext = {}): string {
  failure = cliFailure(failure, context);
  const where = [failure.code, failure.path, failure.hunk !== undefined ? `chunk ${failure.hunk}` : undefined]
    .filter((part) => part !== undefined)
    .join(" · ");
  // The header already names the code; the message starts with it too.
  const message = failure.message.startsWith(`${failure.code}: `) ? failure.message.slice(failure.code.length + 2) : failure.message;
  const lines = [`[${index}] ${where}`, indent(message, "    ")];
  if (failure.planned && failure.planned.length > 0) {
    lines.push("    Planned result (SHA-256 of each path once applied):");
    for (const p of failure.planned) lines.push(`      ${p.path}  ${p.sha256 ?? "(removed)"}`);
  }
  if (failure.outcomes && failure.outcomes.length > 0) {
    lines.push("    State of each path now:");
    for (const o of failure.outcomes) lines.push(`      ${o.path}  ${o.state}  ${o.sha256 ?? ""}`.trimEnd());
  }
  return lines.join("\n");
}

/**
 * The whole report as text: a headline, the per-file table, warnings, the
 * diffs (success) or every failure with its recovery message, in the CLI's
 * words (examples/cli/hint_words.ts). A dry run ends its table with the
 * ready `--expect` flags of the versions it planned on (full SHA-256s: the
 * table shows prefixes only), a commit with those of the new versions.
 * `where` names the target, e.g. `local /tmp/site`.
 *
 * @example
 * ```ts
 * console.log(formatReport(await applyPatch(shell, request), "local /srv/site"));
 * ```
 */
export function formatReport(report: ApplyReport, where: string, context: CliWordsContext = {}): string {
  const op = `operation ${report.operationId}${report.elevated ? ", sudo" : ""}`;
  const out: string[] = [];
  const errors = report.errors ?? [];
  if (report.ok) {
    const verb = report.dryRun ? "Dry run: would change" : "Applied";
    const count = `${report.files.length} file${report.files.length === 1 ? "" : "s"}`;
    out.push(`${verb} ${count} in ${where} (${op}; ${report.atomicity})`);
    if (report.dryRun) out.push("Nothing was written. The SHAs on the left are the versions the plan was built on.");
    // Loops, never a spread into a call: a report may list thousands of files.
    const width = report.files.reduce((most, f) => Math.max(most, shownPath(f).length), 0);
    out.push("");
    for (const f of report.files) out.push(formatFileLine(f, width));
    const expect = expectFlags(report);
    if (expect !== "") {
      out.push(
        "",
        report.dryRun
          ? "To apply exactly these versions (refused if any file changes first), run it again without --dry-run and with:"
          : "To patch these files again on top of this result, pass:",
        `  ${expect}`,
      );
    }
  } else if (exitCodeFor(report) === 3) {
    out.push(`OUTCOME UNKNOWN: files under ${where} MAY have changed (${op}).`);
  } else {
    const count = `${errors.length} problem${errors.length === 1 ? "" : "s"}`;
    out.push(`Refused: nothing was changed in ${where} (${op}; ${count}).`);
  }
  if (report.warnings.length > 0) {
    out.push("", "Warnings:");
    for (const w of report.warnings) out.push(`  - ${formatWarning(w, context)}`);
  }
  if (report.ok) {
    for (const file of report.files) if (file.diff !== "") out.push("", file.diff.trimEnd());
  } else {
    errors.forEach((e, i) => out.push("", formatFailure(e, i + 1, context)));
  }
  return out.join("\n") + "\n";
}

/**
 * The `--expect PATH=SHA256` flags of a successful report, shell-quoted
 * where needed: for a dry run the versions the plan was built on (what
 * the real run must still find), after a commit the new versions (what a
 * next patch of these files starts from). Empty when no file has one.
 *
 * @example
 * ```ts
 * expectFlags(dryRunReport); // "--expect index.html=9f86d081…0a08"
 * ```
 */
export function expectFlags(report: ApplyReport): string {
  const flags: string[] = [];
  for (const file of report.files) {
    const sha = report.dryRun ? file.previousSha256 : file.newSha256;
    const path = report.dryRun ? file.path : file.moveTo ?? file.path;
    if (sha === null) continue;
    const item = `${path}=${sha}`;
    flags.push(`--expect ${/^[A-Za-z0-9_./=@%+:,-]+$/.test(item) ? item : shQuote(item)}`);
  }
  return flags.join(" ");
}

function shownPath(file: FileReport): string {
  return file.moveTo !== undefined ? `${file.path} → ${file.moveTo}` : file.path;
}

function indent(text: string, prefix: string): string {
  return text.split("\n").map((line) => prefix + line).join("\n");
}
