/**
 * The closest known name to a misspelt one: one helper behind every
 * "unknown argument `dryrun`: did you mean `dry_run`?" — the library's
 * request fields (camelCase), the MCP tools' arguments (snake_case) and the
 * CLI's flags (kebab-case) all ask it, each in its own spelling.
 *
 * Names are compared folded: case, `_`, `-` and spaces ignored, so
 * `dryRun`, `dry_run`, `DRY-RUN` and `dryrun` are the same name and the
 * suggestion comes back in the caller's own spelling. Beyond that, the
 * optimal string alignment distance (Damerau–Levenshtein without
 * overlapping edits: one adjacent swap counts as one edit) decides, within
 * a third of the longer name (at least one edit); a folded name of at least
 * three characters that begins the other (`dry` → `dry_run`, `expected` →
 * `expected_sha256`) also counts as close.
 *
 * Bounded: names longer than {@linkcode MAX_COMPARED_CHARS} are never
 * compared (a megabyte-long key costs nothing), so the work is at most
 * known.length × 64².
 *
 * @module
 */
import type { UnknownKey } from "../types.ts";

/** Longest folded name compared; longer ones get no suggestion. */
export const MAX_COMPARED_CHARS = 64;

/**
 * Fold a name for comparison: lower case, without `_`, `-` and spaces.
 *
 * @example
 * ```ts
 * foldName("expected_SHA-256"); // "expectedsha256"
 * ```
 */
export function foldName(name: string): string {
  return name.toLowerCase().replace(/[-_\s]/g, "");
}

/**
 * The entry of `known` closest to `given`, or `null` when none is close
 * enough to be a plausible misspelling. Ties go to the earlier entry.
 *
 * @example
 * ```ts
 * closestName("dryrun", ["patch", "root", "dry_run", "expected_sha256"]); // "dry_run"
 * closestName("expectedSha256", ["dry_run", "expected_sha256"]); // "expected_sha256"
 * closestName("colour", ["patch", "root"]); // null
 * ```
 */
export function closestName(given: string, known: readonly string[]): string | null {
  const a = foldName(given);
  if (a.length === 0 || a.length > MAX_COMPARED_CHARS) return null;
  let best: string | null = null;
  let bestScore = Infinity;
  for (const name of known) {
    const b = foldName(name);
    if (b.length === 0 || b.length > MAX_COMPARED_CHARS) continue;
    const score = nameDistance(a, b);
    if (score < bestScore) {
      best = name;
      bestScore = score;
    }
  }
  return best;
}

/** The distance of two folded names, or Infinity when they are not close. */
function nameDistance(a: string, b: string): number {
  if (a === b) return 0;
  const edits = osaDistance(a, b);
  if (edits <= Math.max(1, Math.floor(Math.max(a.length, b.length) / 3))) return edits;
  const [shorter, longer] = a.length <= b.length ? [a, b] : [b, a];
  // A prefix is a plausible abbreviation; it ranks after every near miss.
  if (shorter.length >= 3 && longer.startsWith(shorter)) return MAX_COMPARED_CHARS + (longer.length - shorter.length);
  return Infinity;
}

/** Optimal string alignment distance (insert, delete, substitute, swap adjacent), O(|a|·|b|). */
function osaDistance(a: string, b: string): number {
  const width = b.length + 1;
  let before = new Array<number>(width).fill(0);
  let previous = Array.from({ length: width }, (_, j) => j);
  let current = new Array<number>(width).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      current[j] = d;
    }
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length]!;
}

/**
 * The names of `given` that are not in `known`, each with its closest known name.
 *
 * @example
 * ```ts
 * unknownNames(["patch", "dryrun"], ["patch", "dry_run"]); // [{ name: "dryrun", closest: "dry_run" }]
 * ```
 */
export function unknownNames(given: Iterable<string>, known: readonly string[]): UnknownKey[] {
  const out: UnknownKey[] = [];
  for (const name of given) if (!known.includes(name)) out.push({ name, closest: closestName(name, known) });
  return out;
}

/** Most unknown names one message shows (the rest are counted). */
const SHOWN_NAMES = 5;

/**
 * The sentence for unknown names, in a front end's words: its noun
 * ("argument", "flag", "request field") and how it writes a name (the
 * default quotes it in backticks). Names are cut to 64 characters and
 * control characters escaped, so a hostile key cannot flood or forge a
 * message. Without a suggestion for some name, the known names are listed.
 *
 * @example
 * ```ts
 * unknownNamesText([{ name: "dryrun", closest: "dry_run" }], "argument", ["patch", "dry_run"]);
 * // "unknown argument `dryrun`: did you mean `dry_run`?"
 * ```
 */
export function unknownNamesText(
  found: readonly UnknownKey[],
  noun: string,
  known: readonly string[],
  write: (name: string) => string = (name) => `\`${name}\``,
): string {
  const show = (name: string): string => write(safeName(name));
  if (found.length === 1 && found[0]!.closest !== null) return `unknown ${noun} ${show(found[0]!.name)}: did you mean ${write(found[0]!.closest)}?`;
  const parts = found.slice(0, SHOWN_NAMES).map((u) => (u.closest === null ? show(u.name) : `${show(u.name)} (did you mean ${write(u.closest)}?)`));
  if (found.length > SHOWN_NAMES) parts.push(`${found.length - SHOWN_NAMES} more`);
  const head = `unknown ${noun}${found.length === 1 ? "" : "s"} ${parts.join(", ")}`;
  return found.some((u) => u.closest === null) ? `${head}; the ${noun}s are ${known.map(write).join(", ")}` : head;
}

function safeName(name: string): string {
  const cut = name.length > MAX_COMPARED_CHARS ? `${name.slice(0, MAX_COMPARED_CHARS)}…` : name;
  // deno-lint-ignore no-control-regex
  return cut.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069`]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
