/**
 * The bench writes its own figures into `docs/performance.md`, so no figure
 * there is ever typed by hand: `npm run bench -- --write-docs` replaces the
 * text between `<!-- bench:begin NAME -->` and `<!-- bench:end NAME -->` for
 * every section the run produced, and leaves everything outside the markers
 * (the prose) byte for byte as it was.
 *
 * Pure: text in, text out. The runner (`bench/run.ts`) reads and writes the
 * file. Malformed markers are an error, not a guess: a begin without its end
 * would otherwise swallow the prose after it.
 *
 * @module
 */
import type { RatioRow, TargetResult } from "./report.ts";
import { formatMedians, formatRatios } from "./report.ts";

/** The file the bench writes into, relative to the repository root. */
export const BENCH_DOC_PATH = "docs/performance.md";

/** The sections a full run writes, in the order they appear in the doc. */
export const BENCH_SECTIONS: readonly BenchSection[] = ["summary", "targets", "ratios", "process", "remote", "wire", "fleet", "medians"];

/**
 * Sections a standalone bench writes from its own run, not the full run:
 * `load` (`bench/load.ts --write-docs`: it takes minutes of its own, so
 * `npm run bench -- --load` runs it instead of the suite, never inside it).
 */
export const STANDALONE_BENCH_SECTIONS: readonly string[] = ["load"];

/** A section the bench writes. */
export type BenchSection = "summary" | "targets" | "ratios" | "process" | "remote" | "wire" | "fleet" | "medians";

/** Where one marked section's content lies in a doc (offsets of the content, between the two marker lines). */
export interface MarkedSection {
  name: string;
  /** Offset of the first character after the begin marker's line. */
  contentStart: number;
  /** Offset of the end marker's line. */
  contentEnd: number;
}

const MARKER = /^<!-- bench:(begin|end) ([a-z][a-z0-9_-]*) -->[ \t]*$/;

/**
 * Every marked section of a doc, in order. Throws on a begin without an end,
 * an end without a begin, a section opened inside another, a name used twice,
 * or a line that looks like a marker but is not one.
 *
 * @example
 * ```ts
 * markedSections("a\n<!-- bench:begin x -->\nold\n<!-- bench:end x -->\n").map((s) => s.name); // ["x"]
 * ```
 */
export function markedSections(doc: string): MarkedSection[] {
  const sections: MarkedSection[] = [];
  const seen = new Set<string>();
  let open: { name: string; contentStart: number; line: number } | null = null;
  let offset = 0;
  let lineNo = 0;
  for (const line of doc.split("\n")) {
    lineNo++;
    const lineStart = offset;
    offset += line.length + 1;
    if (!line.includes("bench:")) continue;
    if (!line.startsWith("<!--")) continue;
    const m = MARKER.exec(line);
    if (!m) throw new Error(`${BENCH_DOC_PATH} line ${lineNo}: not a bench marker: ${JSON.stringify(line)} (write <!-- bench:begin NAME --> or <!-- bench:end NAME -->)`);
    const [, kind, name] = m as unknown as [string, "begin" | "end", string];
    if (kind === "begin") {
      if (open) throw new Error(`${BENCH_DOC_PATH} line ${lineNo}: bench:begin ${name} inside ${open.name} (opened on line ${open.line}); close it first`);
      if (seen.has(name)) throw new Error(`${BENCH_DOC_PATH} line ${lineNo}: a second section named ${name}`);
      open = { name, contentStart: offset, line: lineNo };
    } else {
      if (!open || open.name !== name) throw new Error(`${BENCH_DOC_PATH} line ${lineNo}: bench:end ${name} without its bench:begin${open ? ` (${open.name} is open)` : ""}`);
      sections.push({ name, contentStart: open.contentStart, contentEnd: lineStart });
      seen.add(name);
      open = null;
    }
  }
  if (open) throw new Error(`${BENCH_DOC_PATH} line ${open.line}: bench:begin ${open.name} has no bench:end ${open.name}`);
  return sections;
}

/**
 * Replace the content of the named sections. Every section given must have
 * its markers in the doc (a figure with nowhere to go is an error, not a
 * silent skip); sections of the doc not given keep their content. Content is
 * written with exactly one trailing newline.
 *
 * @example
 * ```ts
 * replaceMarkedSections("<!-- bench:begin x -->\nold\n<!-- bench:end x -->\n", { x: "new" });
 * // "<!-- bench:begin x -->\nnew\n<!-- bench:end x -->\n"
 * ```
 */
export function replaceMarkedSections(doc: string, contents: Readonly<Record<string, string>>): string {
  const sections = markedSections(doc);
  const names = new Set(sections.map((s) => s.name));
  const missing = Object.keys(contents).filter((name) => !names.has(name));
  if (missing.length > 0) {
    throw new Error(`${BENCH_DOC_PATH} has no markers for ${missing.join(", ")}: add <!-- bench:begin NAME --> … <!-- bench:end NAME --> where each belongs`);
  }
  let out = "";
  let at = 0;
  for (const section of sections) {
    const content = contents[section.name];
    if (content === undefined) continue;
    out += doc.slice(at, section.contentStart) + content.replace(/\n+$/, "") + "\n";
    at = section.contentEnd;
  }
  return out + doc.slice(at);
}

/** What one bench run produced, as the doc shows it. */
export interface BenchRunForDocs {
  /** e.g. `AMD EPYC 7B13, 2 cores, 24 GiB, bun 1.4.4`. */
  machine: string;
  /** The commit measured, with `(+ local changes)` when the work tree was dirty. */
  commit: string;
  /** When the run ended, ISO 8601 UTC. */
  finishedAt: string;
  minutes: number;
  verdictLines: readonly string[];
  checks: { passed: number; total: number };
  targets: readonly TargetResult[];
  ratios: readonly RatioRow[];
  medians: ReadonlyMap<string, number>;
  /** The whole-process comparison's Markdown (a leading heading is dropped: the doc has its own). */
  process: string;
  remote: string;
  wire: string;
  /** The fleet bench's Markdown (bench/fleet.ts). */
  fleet: string;
}

/** A part's Markdown without the heading its standalone output starts with. */
function body(markdown: string): string {
  return markdown.replace(/^#{1,6} [^\n]*\n+/, "").trim();
}

/** A table cell: no pipe or newline breaks the row. */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

/**
 * The doc sections of one run, keyed by section name.
 *
 * @example
 * ```ts
 * const sections = benchDocSections(run);
 * replaceMarkedSections(readFileSync(BENCH_DOC_PATH, "utf8"), sections);
 * ```
 */
export function benchDocSections(run: BenchRunForDocs): Record<BenchSection, string> {
  const summary = [
    `\`npm run bench -- --write-docs\` at ${run.commit}, finished ${run.finishedAt} after ${run.minutes.toFixed(1)} min, on ${run.machine}.`,
    "",
    "```",
    `correctness checks: ${run.checks.passed}/${run.checks.total} passed`,
    ...run.verdictLines,
    "```",
  ].join("\n");
  const targets = [
    "| target (measured value in the label) | kind | verdict |",
    "|---|---|---|",
    ...run.targets.map((t) => `| ${cell(t.label)} | ${t.kind} | ${t.pass ? "PASS" : t.kind === "goal" ? "goal missed" : "FAIL"} |`),
  ].join("\n");
  return {
    summary,
    targets,
    ratios: formatRatios(run.ratios),
    process: body(run.process),
    remote: body(run.remote),
    wire: body(run.wire),
    fleet: body(run.fleet),
    medians: formatMedians(run.medians),
  };
}
