/**
 * The marker lines of the Codex patch format and how a line is classified
 * as one (compared after trimming, SPEC §3).
 *
 * @module
 */

/** What a marker line is. */
export type MarkerKind = "begin" | "end" | "eof" | "add" | "delete" | "update" | "replace" | "move" | "unknown";

/** A marker line, classified. */
export interface Marker {
  kind: MarkerKind;
  /** The path after `Add File:` / `Delete File:` / `Update File:` / `Replace File:` / `Move to:`, trimmed. */
  rest: string;
}

const MARKERS: readonly [string, MarkerKind][] = [
  ["*** Add File:", "add"],
  ["*** Delete File:", "delete"],
  ["*** Update File:", "update"],
  // Not Codex: the documented whole-file replace (docs/patch-format.md).
  ["*** Replace File:", "replace"],
  ["*** Move to:", "move"],
];

/** The part of a message that says how a new section starts. */
export const SECTION_HEADERS: string =
  "a new file section starts with '*** Add File: ', '*** Update File: ' or '*** Delete File: '";

/**
 * Classify a line as a patch marker after trimming, or `null` for a line
 * that is not one.
 *
 * @example
 * ```ts
 * markerOf("  *** Update File: a.ts ")?.rest; // "a.ts"
 * markerOf(" foo"); // null
 * ```
 */
export function markerOf(line: string): Marker | null {
  const t = line.trim();
  if (!t.startsWith("***")) return null;
  if (t === "*** Begin Patch") return { kind: "begin", rest: "" };
  if (t === "*** End Patch") return { kind: "end", rest: "" };
  if (t === "*** End of File") return { kind: "eof", rest: "" };
  for (const [prefix, kind] of MARKERS) {
    if (t.startsWith(prefix)) return { kind, rest: t.slice(prefix.length).trim() };
  }
  return { kind: "unknown", rest: "" };
}

/**
 * Whether a line starts with a chunk body prefix (' ', '+' or '-'); inside an
 * Update section such a line is always a body line.
 *
 * @example
 * ```ts
 * startsWithBodyPrefix(" *** End Patch"); // true
 * ```
 */
export function startsWithBodyPrefix(line: string): boolean {
  const c = line.charCodeAt(0);
  return c === 0x20 || c === 0x2b || c === 0x2d;
}

/**
 * The correctly spelled marker for a line that has a marker's words in the
 * wrong case, e.g. `*** update file: a`; `null` otherwise.
 *
 * @example
 * ```ts
 * misspelledMarker("*** update file: a"); // "*** Update File: "
 * ```
 */
export function misspelledMarker(line: string): string | null {
  const t = line.trim().toLowerCase();
  for (
    const m of [
      "*** Begin Patch",
      "*** End Patch",
      "*** End of File",
      "*** Add File: ",
      "*** Delete File: ",
      "*** Update File: ",
      "*** Replace File: ",
      "*** Move to: ",
    ]
  ) {
    if (t.startsWith(m.trimEnd().toLowerCase())) return m;
  }
  return null;
}
