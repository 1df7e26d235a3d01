/**
 * The normalisations of the matching tier ladder (SPEC §5.2).
 *
 * 1. exact;
 * 2. trailing whitespace ignored;
 * 3. leading and trailing whitespace ignored;
 * 4. tier 3 plus Unicode punctuation folded: hyphens, dashes and minus
 *    (U+2010–U+2015, U+2212) → `-`; single quotes and prime (U+2018–U+201B,
 *    U+2032) → `'`; double quotes and double prime (U+201C–U+201F, U+2033)
 *    → `"`; NBSP and odd spaces (U+00A0, U+2000–U+200A, U+202F, U+205F,
 *    U+3000) → space;
 * 5. escaped-literal recovery: the chunk's `\n`, `\t`, `\r`, `\"`, `\'` and
 *    `\\` sequences are unescaped in one left-to-right pass (so a
 *    double-escaped `\\n` stays a backslash + `n`), a line holding `\n`
 *    becomes several lines, and the result is matched with tiers 1–4.
 *
 * Choices where the spec is silent:
 * - "Whitespace" is exactly what `String.prototype.trim` removes (Unicode
 *   White_Space plus U+FEFF), so the fast scanners here and `trim` agree.
 * - The ellipsis U+2026 is NOT folded to `...`: it would change a line's
 *   length, which the matcher's prefilter relies on, and it is rare in the
 *   lines models retype as context. Internal whitespace runs are not
 *   collapsed either (that is a content difference diagnostics point at).
 * - `\r` unescapes to nothing (line endings belong to the file, not the
 *   chunk).
 *
 * @module
 */
import type { MatchingMode, MatchTier } from "../types.ts";

/** A tier whose normalisation applies to single lines (tier 5 reuses 1–4). */
export type LineTier = 1 | 2 | 3 | 4;

/**
 * The tiers a matching mode tries, in order.
 *
 * @example
 * ```ts
 * tiersFor("whitespace"); // [1, 2, 3]
 * ```
 */
export function tiersFor(mode: MatchingMode): MatchTier[] {
  if (mode === "exact") return [1];
  if (mode === "whitespace") return [1, 2, 3];
  if (mode === "lenient") return [1, 2, 3, 4, 5];
  throw new TypeError(`unknown matching mode ${JSON.stringify(mode)}`);
}

const TIER_DESCRIPTIONS: Record<MatchTier, string> = {
  1: "exact",
  2: "ignoring trailing whitespace",
  3: "ignoring leading and trailing whitespace",
  4: "ignoring surrounding whitespace and Unicode punctuation (dashes, curly quotes, odd spaces)",
  5: "after unescaping literal \\n / \\t / \\\" sequences in the chunk",
};

/**
 * A short human description of a tier, for warnings and messages.
 *
 * @example
 * ```ts
 * describeTier(2); // "ignoring trailing whitespace"
 * ```
 */
export function describeTier(tier: MatchTier): string {
  return TIER_DESCRIPTIONS[tier];
}

/**
 * Whether a UTF-16 code unit is whitespace in the sense of `String.prototype.trim`.
 *
 * @example
 * ```ts
 * isWhitespaceCode(0x20); // true
 * isWhitespaceCode(0x61); // false
 * ```
 */
export function isWhitespaceCode(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 ||
    c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/**
 * Index of the first non-whitespace code unit (`line.length` if none).
 *
 * @example
 * ```ts
 * contentStart("  x"); // 2
 * ```
 */
export function contentStart(line: string): number {
  let i = 0;
  const n = line.length;
  while (i < n && isWhitespaceCode(line.charCodeAt(i))) i++;
  return i;
}

/**
 * Index just after the last non-whitespace code unit, not below `from`.
 *
 * @example
 * ```ts
 * contentEnd("x  "); // 1
 * ```
 */
export function contentEnd(line: string, from = 0): number {
  let j = line.length;
  while (j > from && isWhitespaceCode(line.charCodeAt(j - 1))) j--;
  return j;
}

/**
 * The tier-4 fold of one code unit (identity for everything else).
 *
 * @example
 * ```ts
 * foldCode(0x2014); // 0x2d ("-")
 * ```
 */
export function foldCode(c: number): number {
  if (c < 0xa0) return c;
  if (c === 0xa0) return 0x20;
  if (c < 0x2000) return c;
  if (c <= 0x200a) return 0x20;
  if (c <= 0x2015) return c >= 0x2010 ? 0x2d : c;
  if (c <= 0x201b) return c >= 0x2018 ? 0x27 : c;
  if (c <= 0x201f) return 0x22;
  if (c === 0x202f || c === 0x205f || c === 0x3000) return 0x20;
  if (c === 0x2212) return 0x2d;
  if (c === 0x2032) return 0x27;
  if (c === 0x2033) return 0x22;
  return c;
}

const FOLDABLE = /[\u00a0\u2000-\u200a\u2010-\u2015\u2018-\u201f\u202f\u205f\u3000\u2212\u2032\u2033]/;
const FOLDABLE_GLOBAL = new RegExp(FOLDABLE.source, "g");

/**
 * Fold Unicode punctuation and odd spaces to ASCII (tier 4). Length-preserving.
 *
 * @example
 * ```ts
 * foldPunctuation("“a” – ‘b’"); // "\"a\" - 'b'"
 * ```
 */
export function foldPunctuation(text: string): string {
  if (!FOLDABLE.test(text)) return text;
  return text.replace(FOLDABLE_GLOBAL, (ch) => String.fromCharCode(foldCode(ch.charCodeAt(0))));
}

/**
 * A line's key at a tier: lines are equal at that tier iff their keys are.
 *
 * @example
 * ```ts
 * normalizeLine("  a  ", 2); // "  a"
 * normalizeLine("  “a”  ", 4); // "\"a\""
 * ```
 */
export function normalizeLine(line: string, tier: LineTier): string {
  if (tier === 1) return line;
  if (tier === 2) {
    const end = contentEnd(line);
    return end === line.length ? line : line.slice(0, end);
  }
  const start = contentStart(line);
  const end = contentEnd(line, start);
  const trimmed = start === 0 && end === line.length ? line : line.slice(start, end);
  return tier === 3 ? trimmed : foldPunctuation(trimmed);
}

/**
 * A loose key for diagnostics only: all whitespace removed and punctuation
 * folded, so `f(a,b)` and `f( a, b )` meet.
 *
 * @example
 * ```ts
 * looseKey("  f( a, b ) "); // "f(a,b)"
 * ```
 */
export function looseKey(line: string): string {
  return foldPunctuation(line).replace(/\s+/g, "");
}

/**
 * Whether a line contains a backslash escape tier 5 would change.
 *
 * @example
 * ```ts
 * hasEscapes("a\\nb"); // true
 * ```
 */
export function hasEscapes(text: string): boolean {
  // Most lines have no backslash at all: a native search settles them before the regex runs.
  return text.indexOf("\\") >= 0 && ESCAPE.test(text);
}

const ESCAPE = /\\[ntr"'\\]/;

/**
 * Unescape `\n` `\t` `\r` `\"` `\'` `\\` in one left-to-right pass (tier 5).
 * The result may contain newlines; callers split it into lines.
 *
 * @example
 * ```ts
 * unescapeLiterals("if x:\\n\\treturn \\\"y\\\""); // "if x:\n\treturn \"y\""
 * ```
 */
export function unescapeLiterals(text: string): string {
  if (text.indexOf("\\") < 0) return text;
  let out = "";
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch !== "\\" || i + 1 >= text.length) {
      out += ch;
      i++;
      continue;
    }
    const next = text[i + 1]!;
    if (next === "n") out += "\n";
    else if (next === "t") out += "\t";
    else if (next === "r") out += "";
    else if (next === '"' || next === "'" || next === "\\") out += next;
    else out += ch + next;
    i += 2;
  }
  return out;
}

/**
 * The leading whitespace of a line.
 *
 * @example
 * ```ts
 * indentationOf("\t  x"); // "\t  "
 * ```
 */
export function indentationOf(line: string): string {
  return line.slice(0, contentStart(line));
}

// Files where a line's indentation is syntax: re-indenting a `+` line on a
// guess could change meaning, so a non-uniform indentation difference fails.
const INDENTATION_SENSITIVE_EXTENSIONS = new Set([
  "py", "pyi", "pyw", "pyx", "pxd", "rpy", "bzl", "star", "gd", // Python and Python-syntax (Cython, Starlark, GDScript)
  "yaml", "yml", "sls", "cwl", // YAML and YAML dialects
  "mk", "mak", "make", // Makefiles (recipe lines need a tab)
  "hs", "lhs", "elm", "purs", "idr", "agda", "cabal", // Haskell-family layout rules
  "coffee", "litcoffee", "cson", "imba", // CoffeeScript family
  "pug", "jade", "haml", "slim", // indentation-based templates
  "sass", "styl", // indented stylesheets (not .scss)
  "nim", "nims", "nimble", // Nim
  "fs", "fsi", "fsx", "fsscript", // F# (light syntax)
  "rst", // reStructuredText: block structure is indentation
]);
const INDENTATION_SENSITIVE_NAMES = new Set([
  "makefile", "gnumakefile", "bsdmakefile", "build", "build.bazel", "workspace", "workspace.bazel",
  "sconstruct", "sconscript", "snakefile", "tiltfile", // Python / Starlark without an extension
]);

/**
 * Whether indentation is syntax in the file at `path` (by name and
 * extension): Python-like, YAML, Makefiles, Haskell-family, CoffeeScript,
 * Pug/Jade/Haml/Slim, Sass/Stylus, Nim, F#, reStructuredText.
 *
 * @example
 * ```ts
 * isIndentationSensitive("app/main.py"); // true
 * isIndentationSensitive("src/main.ts"); // false
 * ```
 */
export function isIndentationSensitive(path: string): boolean {
  const base = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
  if (INDENTATION_SENSITIVE_NAMES.has(base)) return true;
  const dot = base.lastIndexOf(".");
  if (dot <= 0) return false;
  return INDENTATION_SENSITIVE_EXTENSIONS.has(base.slice(dot + 1));
}
