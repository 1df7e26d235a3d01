/**
 * Lexical rules for root-relative patch paths (SPEC §6) and the helpers the
 * rest of the system needs to reason about them.
 *
 * A valid path is already canonical: the rules reject every form that could
 * name the same file two ways (`a//b`, `./a`, `a/`), so two valid paths name
 * the same file exactly when their strings are equal. Nothing is normalised
 * silently — not even Unicode (NFC and NFD spellings are different files on
 * Linux). What the remote side checks (symlinks, the parent staying inside
 * the root) is not lexical and lives in the remote layer.
 *
 * Names that look like command options (`-rf`, `--help`) or contain shell
 * metacharacters (`$x`, `'`, `;`) are legal file names: they pass here and
 * the remote layer must treat them as data, never as code or options.
 *
 * @module
 */
import { failure } from "../failure.ts";
import type { PatchFailure } from "../types.ts";

/** Longest accepted path, in UTF-8 bytes (Linux `PATH_MAX` is 4096 with its NUL). */
export const MAX_PATH_BYTES = 4096;

/** Longest accepted component, in UTF-8 bytes (`NAME_MAX` on Linux, macOS and BSD). */
export const MAX_COMPONENT_BYTES = 255;

const EXAMPLE = "src/app.ts";

/**
 * Which §6 rule a path breaks and the exact fix, as one sentence, or `null`
 * when the path is valid. Rules are checked in a fixed order and only the
 * first broken one is named, so the fix is always actionable on its own.
 *
 * @example
 * ```ts
 * pathProblem("src/app.ts"); // null
 * pathProblem("/etc/hosts"); // "absolute paths are not allowed: …"
 * ```
 */
export function pathProblem(path: string): string | null {
  if (typeof path !== "string") {
    throw new TypeError(`path must be a string, got ${typeof path}`);
  }
  if (path.length === 0) {
    return `the path is empty: give a root-relative path such as ${EXAMPLE}`;
  }
  const bad = firstBadCharacter(path);
  if (bad !== null) return bad;
  if (/^[A-Za-z]:\\/.test(path)) {
    return `this is a Windows drive path: paths are relative to the configured root and use '/', such as ${EXAMPLE}`;
  }
  if (path.includes("\\")) {
    const suggestion = path.replaceAll("\\", "/");
    return `backslashes are not allowed ('/' separates directories): write ${
      suggestionOrExample(suggestion)
    }`;
  }
  if (path.startsWith("/")) {
    return `absolute paths are not allowed: paths are relative to the configured root, so use a root-relative path such as ${EXAMPLE} (no leading '/')`;
  }
  const parts = path.split("/");
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part === "") {
      const suggestion = parts.filter((p) => p !== "").join("/");
      const where = i === parts.length - 1
        ? "a trailing '/'"
        : "'//' (an empty component)";
      return `the path has ${where}: a file path names a file, not a directory, and has no empty components; write ${
        suggestionOrExample(suggestion)
      }`;
    }
    if (part === "..") {
      return `'..' components are not allowed (they could leave the root): name the file by its path from the root, such as ${EXAMPLE}`;
    }
    if (part === ".") {
      const suggestion = parts.filter((p) => p !== ".").join("/");
      return `'.' components are not allowed: write ${suggestionOrExample(suggestion)}`;
    }
  }
  const total = utf8Length(path);
  if (total > MAX_PATH_BYTES) {
    return `the path is ${total} UTF-8 bytes long; at most ${MAX_PATH_BYTES} are allowed: use a shorter path`;
  }
  for (const part of parts) {
    const bytes = utf8Length(part);
    if (bytes > MAX_COMPONENT_BYTES) {
      return `the component "${
        part.slice(0, 40)
      }…" is ${bytes} UTF-8 bytes long; at most ${MAX_COMPONENT_BYTES} are allowed per component: use a shorter name`;
    }
  }
  return null;
}

/**
 * Check a patch path against the lexical rules of SPEC §6.
 *
 * Returns `null` for a valid path, otherwise an `invalid_path` failure whose
 * message names the rule broken and the exact fix. The failure carries the
 * offending `path`; callers that know where the path came from (a patch line)
 * add that themselves.
 *
 * @example
 * ```ts
 * validatePath("src/app.ts"); // null
 * validatePath("../etc/passwd")?.code; // "invalid_path"
 * validatePath("-rf"); // null: a legal name, passed to remote programs as data
 * ```
 */
export function validatePath(path: string): PatchFailure | null {
  const problem = pathProblem(path);
  if (problem === null) return null;
  return failure(
    "invalid_path",
    `invalid_path: ${quotePath(path)}: ${problem}.`,
    { path },
  );
}

/**
 * The components of a valid path, outermost first.
 *
 * @example
 * ```ts
 * components("src/lib/a.ts"); // ["src", "lib", "a.ts"]
 * ```
 */
export function components(path: string): string[] {
  return path.split("/");
}

/**
 * The parent directory of a valid path, as a root-relative path; `""` (the
 * root itself) for a top-level path.
 *
 * @example
 * ```ts
 * parentOf("src/lib/a.ts"); // "src/lib"
 * parentOf("a.ts"); // ""
 * ```
 */
export function parentOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "" : path.slice(0, slash);
}

/**
 * Every proper ancestor directory of a valid path, outermost first (the root
 * itself, `""`, is not listed). These are the directories the remote side
 * checks for symlinks and creates for a new file.
 *
 * @example
 * ```ts
 * ancestors("a/b/c.txt"); // ["a", "a/b"]
 * ancestors("c.txt"); // []
 * ```
 */
export function ancestors(path: string): string[] {
  const out: string[] = [];
  let slash = path.indexOf("/");
  while (slash >= 0) {
    out.push(path.slice(0, slash));
    slash = path.indexOf("/", slash + 1);
  }
  return out;
}

/**
 * The sort key used to order paths (lock order, deterministic finalize
 * order): the lowercase hex of the path's UTF-8 bytes. Comparing keys with
 * `<` compares the paths byte by byte, as `LC_ALL=C sort` does on the remote
 * side — unlike comparing JS strings, which orders by UTF-16 code units and
 * puts U+FF00 after U+1F600.
 *
 * @example
 * ```ts
 * canonicalPathKey("a/b"); // "612f62"
 * ```
 */
export function canonicalPathKey(path: string): string {
  const bytes = encoder.encode(path);
  let hex = "";
  for (let i = 0; i < bytes.length; i++) {
    hex += HEX[bytes[i]!];
  }
  return hex;
}

/**
 * Compare two paths by their UTF-8 bytes (for `Array.prototype.sort`).
 *
 * @example
 * ```ts
 * ["b", "a/c", "a"].sort(compareCanonicalPaths); // ["a", "a/c", "b"]
 * ```
 */
export function compareCanonicalPaths(a: string, b: string): number {
  const ka = canonicalPathKey(a);
  const kb = canonicalPathKey(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/**
 * The UTF-8 length of a string without encoding it. Lone surrogates count as
 * the three bytes of U+FFFD, as `TextEncoder` would write them.
 *
 * @example
 * ```ts
 * utf8Length("é"); // 2
 * ```
 */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else {
        bytes += 3;
      }
    } else bytes += 3;
  }
  return bytes;
}

const encoder = new TextEncoder();
const HEX: readonly string[] = Array.from(
  { length: 256 },
  (_, i) => i.toString(16).padStart(2, "0"),
);

/**
 * Control characters (C0, DEL, C1) cannot be typed back reliably, break
 * terminal output and shell programs; lone surrogates would be written as
 * U+FFFD, so two different strings could name one file.
 */
function firstBadCharacter(path: string): string | null {
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c === 0) {
      return `the path contains a NUL character at offset ${i}: remove it`;
    }
    if (c < 0x20 || c === 0x7f || (c >= 0x80 && c <= 0x9f)) {
      return `the path contains the control character ${codePoint(c)} at offset ${i}: file names here may not contain control characters (C0, DEL, C1); remove it`;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const pairOk = c <= 0xdbff && i + 1 < path.length &&
        path.charCodeAt(i + 1) >= 0xdc00 && path.charCodeAt(i + 1) <= 0xdfff;
      if (!pairOk) {
        return `the path contains an unpaired surrogate ${codePoint(c)} at offset ${i}, which is not valid Unicode: send the name as valid UTF-8 text`;
      }
      i++;
    }
  }
  return null;
}

function codePoint(c: number): string {
  return `U+${c.toString(16).toUpperCase().padStart(4, "0")}`;
}

function suggestionOrExample(suggestion: string): string {
  return suggestion !== "" && pathProblem(suggestion) === null
    ? suggestion
    : `a root-relative path such as ${EXAMPLE}`;
}

/** Quote a path for a message: JSON escapes make control characters visible; long paths are cut. */
function quotePath(path: string): string {
  const cut = path.length > 120 ? path.slice(0, 120) + "…" : path;
  return JSON.stringify(cut);
}
