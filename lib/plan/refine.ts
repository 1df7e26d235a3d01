/**
 * Parse failures made precise with what the layer above the parser knows
 * (SPEC §5.4 round 2): the root, and the files the patch names.
 *
 * - An absolute path inside the root: the root-relative path to write
 *   (`suggestedPath`), instead of a generic example. `./x` likewise.
 * - Chunk lines without a marker (lib/patch/chunks.ts): the chunk is read
 *   again with ' ' added before those lines, and also before its indented
 *   context lines (which may have been read one space short); when one
 *   reading matches the file exactly and only there, the failure says so
 *   and names every line to fix.
 *
 * Pure: applyPatch reads the snapshots (one exec, only when a failure can
 * use them) and passes them in; a framework calling parsePatch itself can
 * do the same (both functions are exported from mod.ts).
 *
 * @module
 */
import { locateChunks } from "../match/locate.ts";
import { isIndentationSensitive } from "../match/normalize.ts";
import { parsePatch } from "../patch/parse.ts";
import { pathProblem } from "../patch/paths.ts";
import { decodeText } from "../text/text.ts";
import type { Chunk, MatchingMode, Patch, PatchFailure, Snapshots, TextEncodingName } from "../types.ts";

/**
 * What the refinements may use.
 *
 * @example
 * ```ts
 * const context: RefineContext = { root: "/srv/app", snapshots };
 * const sharper = refineParseFailures(text, parsed.errors, context);
 * ```
 */
export interface RefineContext {
  /** The root the patch paths are relative to (absolute, on the target host). */
  root?: string;
  /** Snapshots of {@linkcode parseFailurePaths}' paths. */
  snapshots?: Snapshots;
  /** Accepted for symmetry with planPatch; the marker readings always match exactly. */
  matching?: MatchingMode;
  /** How the snapshots' bytes are decoded, as planPatch's `encoding` (default UTF-8). */
  encoding?: TextEncodingName;
}

/**
 * The paths whose snapshots {@linkcode refineParseFailures} can use: the
 * files of chunks with unmarked lines. Empty when no failure needs a file.
 *
 * @example
 * ```ts
 * const paths = parseFailurePaths(text, parsed.errors); // ["app.py"]
 * ```
 */
export function parseFailurePaths(text: string, errors: readonly PatchFailure[]): string[] {
  const reading = markedReading(text, errors);
  if (reading === null) return [];
  return [...new Set(reading.targets.map((t) => t.path))];
}

/**
 * Parse failures with the root-relative path for absolute ones and the
 * readings of unmarked chunk lines checked against the files.
 *
 * @example
 * ```ts
 * const errors = refineParseFailures(text, parsed.errors, { root: "/srv/app", snapshots });
 * ```
 */
export function refineParseFailures(text: string, errors: readonly PatchFailure[], context: RefineContext = {}): PatchFailure[] {
  const reading = context.snapshots ? markedReading(text, errors) : null;
  const found = reading !== null && context.snapshots ? locateReadings(reading.targets, context.snapshots, context.encoding ?? "utf-8") : new Map<Target, Found>();
  return errors.map((e) => {
    if (e.code === "invalid_path" && e.path !== undefined) return relativePath(text, e, context.root) ?? e;
    const target = reading?.targets.find((t) => t.failure === e);
    if (target !== undefined) return unmarked(e, target, found.get(target)) ?? e;
    return e;
  });
}

/** Most chunks with unmarked lines whose readings are tried against their files. */
const MAX_TARGETS = 20;

/** Where a target's two readings match exactly (0-based line ranges, end exclusive). */
interface Found {
  marked?: { start: number; end: number };
  both?: { start: number; end: number };
}

/**
 * Both readings of every target, located per file in one pass each (all
 * targets of a file together, in file order), at most MAX_TARGETS targets.
 */
function locateReadings(targets: readonly Target[], snapshots: Snapshots, encoding: TextEncodingName): Map<Target, Found> {
  const out = new Map<Target, Found>();
  const byPath = new Map<string, Target[]>();
  for (const t of targets.slice(0, MAX_TARGETS)) byPath.set(t.path, [...(byPath.get(t.path) ?? []), t]);
  for (const [path, list] of byPath) {
    const snap = snapshots.get(path);
    if (snap?.kind !== "file" || snap.bytes === undefined || snap.rejected) continue;
    const decoded = decodeText(snap.bytes, encoding);
    if (!decoded.ok) continue;
    const exact = (chunks: Chunk[]): Map<number, { start: number; end: number }> => {
      const r = locateChunks(decoded.file, chunks, {
        matching: "exact",
        path,
        indentationSensitive: isIndentationSensitive(path),
        excerptLines: 1,
        excerptBytes: 256,
        detail: 0,
      });
      return new Map(r.placements.map((p) => [p.index, { start: p.start, end: p.end }]));
    };
    const marked = exact(list.map((t) => t.marked));
    const withIndented = list.filter((t) => t.indented.length > 0);
    const both = withIndented.length > 0 ? exact(withIndented.map((t) => t.both)) : new Map();
    list.forEach((t, k) => {
      const b = withIndented.indexOf(t);
      out.set(t, { marked: marked.get(k + 1), ...(b >= 0 ? { both: both.get(b + 1) } : {}) });
    });
  }
  return out;
}

/** An absolute path under the root, or `./path`: the path to write instead. */
function relativePath(text: string, e: PatchFailure, root: string | undefined): PatchFailure | null {
  const path = e.path!;
  let suggested: string | null = null;
  let why = "";
  if (path.startsWith("/") && root !== undefined && root.startsWith("/")) {
    const base = root.replace(/\/+$/, "");
    if (path.startsWith(`${base}/`)) {
      suggested = path.slice(base.length + 1).replace(/^\/+/, "");
      why = `the path is absolute, and it lies inside the root ${base === "" ? "/" : base}: patch paths are relative to the root`;
    }
  } else if (path.startsWith("./")) {
    suggested = path.replace(/^(\.\/)+/, "");
    why = `a patch path has no "./" in front: it is already relative to the root`;
  }
  if (suggested === null || suggested === "" || pathProblem(suggested) !== null) return null;
  const line = e.patchLine !== undefined ? text.split("\n")[e.patchLine - 1]?.replace(/\r$/, "").trim() : undefined;
  const header = line !== undefined && line.includes(path) ? line.replace(path, suggested) : undefined;
  const at = line !== undefined ? `line ${e.patchLine} ${JSON.stringify(line.slice(0, 120))}: ` : "";
  return {
    ...e,
    message: `invalid_path: ${at}${why}, so write ${header !== undefined ? JSON.stringify(header) : JSON.stringify(suggested)}.`,
    suggestedPath: suggested,
  };
}

/** One chunk with unmarked lines, as found in the reading with those lines marked. */
interface Target {
  failure: PatchFailure;
  path: string;
  /** The chunk with ' ' added before its unmarked lines. */
  marked: Chunk;
  /** The same, with its other indented context lines' markers read as content too. */
  both: Chunk;
  /** Patch lines of those indented context lines. */
  indented: number[];
}

/** The patch re-parsed with ' ' before every unmarked line, and the chunks of the failures. */
function markedReading(text: string, errors: readonly PatchFailure[]): { patch: Patch; targets: Target[] } | null {
  const failures = errors.filter((e) => e.unmarkedLines !== undefined && e.path !== undefined && e.hunk !== undefined);
  if (failures.length === 0) return null;
  const lines = text.split("\n");
  for (const e of failures) for (const n of e.unmarkedLines!) if (lines[n - 1] !== undefined) lines[n - 1] = " " + lines[n - 1];
  const parsed = parsePatch(lines.join("\n"));
  if (!parsed.ok) return null;
  const targets: Target[] = [];
  for (const e of failures) {
    const op = parsed.patch.ops.find((o) => o.type === "update" && o.path === e.path);
    const chunk = op?.type === "update" ? op.chunks[e.hunk! - 1] : undefined;
    if (chunk === undefined) continue;
    const unmarkedSet = new Set(e.unmarkedLines);
    const indented: number[] = [];
    const both: Chunk = {
      ...chunk,
      lines: chunk.lines.map((l) => {
        if (l.kind !== "context" || unmarkedSet.has(l.patchLine) || !/^[ \t]/.test(l.text)) return l;
        indented.push(l.patchLine);
        return { ...l, text: " " + l.text };
      }),
    };
    targets.push({ failure: e, path: e.path!, marked: chunk, both, indented });
  }
  return { patch: parsed.patch, targets };
}

function unmarked(e: PatchFailure, target: Target, found: Found | undefined): PatchFailure | null {
  if (found === undefined) return null;
  const missing = e.unmarkedLines!;
  let at = found.marked;
  let lines = missing;
  let also = "";
  if (at === undefined && target.indented.length > 0) {
    at = found.both;
    if (at !== undefined) {
      lines = [...missing, ...target.indented].sort((a, b) => a - b);
      also = `, and so do the indented context ${target.indented.length === 1 ? "line" : "lines"} ${list(target.indented)}, which ${target.indented.length === 1 ? "was" : "were"} read one space short (${target.indented.length === 1 ? "its" : "their"} first space taken for the marker)`;
    }
  }
  if (at === undefined) return null;
  const range = at.end - at.start <= 1 ? `line ${at.start + 1}` : `lines ${at.start + 1}–${at.end}`;
  return {
    ...e,
    message: `invalid_patch: chunk ${e.hunk} of ${JSON.stringify(target.path)} (patch line ${target.marked.patchLine}): patch ${missing.length === 1 ? "line" : "lines"} ${list(missing)} ${missing.length === 1 ? "has" : "have"} no ' ', '-' or '+' marker${also}. Read with ' ' added before ${lines.length === 1 ? "it" : "them"}, the chunk matches ${target.path} exactly at ${range}, and nowhere else. Next step: put ' ' at the start of patch ${lines.length === 1 ? "line" : "lines"} ${list(lines)} (before the file's own indentation) and send the patch again.`,
    line: at.start + 1,
    unmarkedLines: lines,
  };
}

function list(lines: readonly number[]): string {
  const shown = lines.slice(0, 8);
  const more = lines.length > 8 ? ` and ${lines.length - 8} more` : "";
  if (shown.length <= 1) return shown.join("") + more;
  return more !== "" ? `${shown.join(", ")}${more}` : `${shown.slice(0, -1).join(", ")} and ${shown.at(-1)}`;
}
