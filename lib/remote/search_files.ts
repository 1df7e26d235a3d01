/**
 * `searchFiles`: grep on the host, in one exec, below a directory of the
 * root, never following a symlink and never reading a file outside the
 * root (SPEC §9 round 2; how, in lib/remote/programs/search_program.ts).
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { failure } from "../failure.ts";
import { formatLineId } from "../text/line_id.ts";
import type { Failures, PatchFailure, Warning } from "../types.ts";
import { brokenOutput, countOption, decodeName, directoryArg, earlyEnd, globProblem, runDiscovery } from "./discovery.ts";
import { searchProgram } from "./programs/search_program.ts";
import { isWriteRefusal, writeRefused } from "./host_refusals.ts";
import { leftoversRemoved, privateKept } from "./leftovers.ts";
import { RecordReader } from "./records.ts";
import { unknownKeysFailure } from "./request_keys.ts";
import { badValueFailure, PROGRAM_VALUE_RULES } from "./request_values.ts";
import type { ValueRule } from "./request_values.ts";
import type { NamesEveryKey } from "./request_keys.ts";
import type { ExecResult, RemoteShell } from "./shell.ts";
import { appendAll } from "../text/append_all.ts";

/**
 * Options of {@linkcode searchFiles}.
 *
 * @example
 * ```ts
 * await searchFiles(shell, "/srv/app", "TODO", { path: "src", glob: "*.ts", fixedString: true, maxResults: 50 });
 * ```
 */
export interface SearchFilesOptions {
  /** Root-relative directory to search below; default the root. */
  path?: string;
  /** Only files whose name matches this shell glob (`*.py`); with a `/`, matched against the path below `path`. */
  glob?: string;
  /** The pattern is a literal string (grep -F) instead of an extended regular expression (grep -E). */
  fixedString?: boolean;
  /** ASCII letters match either case (grep -i; the host's C locale). */
  ignoreCase?: boolean;
  /** Most matching lines returned (default 100, at most 10000); `truncated` says when there were more. */
  maxResults?: number;
  /** Lines longer than this many bytes are cut (`cut: true`, no line id). Default 4096, at most 65536. */
  maxLineBytes?: number;
  /** Abort the call: the program is killed on the host and the result fails `cancelled`. */
  signal?: AbortSignal;
  /** Default 60 s. */
  timeoutMs?: number;
}

/**
 * One matching line.
 *
 * @example
 * ```ts
 * for (const m of result.matches) console.log(`${m.path}:${m.id ?? m.line} ${m.text}`); // "src/app.ts:12:5e  // TODO: retry"
 * ```
 */
export interface SearchMatch {
  /** Root-relative path of the file. */
  path: string;
  /** 1-based line number. */
  line: number;
  /** The line's `N:hh` id (SPEC §5.6), or null when the line was cut or is not valid UTF-8 (its hash needs the whole line). */
  id: string | null;
  /** The line without its ending (a trailing `\r` of a CRLF line removed), cut to `maxLineBytes`. */
  text: string;
  /** The line is longer than `maxLineBytes`; `text` is its beginning. */
  cut: boolean;
  /** Present and false when the file's name cannot be addressed by the other tools (control characters, invalid UTF-8). */
  addressable?: false;
}

/**
 * Why a file was not searched: `binary` (it holds a NUL byte),
 * `unreadable` (no read permission; a directory that could not be
 * entered), `changed` (swapped or changed while it was being read),
 * `unpinnable` (in a directory other users can write, and it could not be
 * pinned there, so it is not read at all: see {@linkcode SkipCause}).
  *
  * @example
  * ```ts
  * const binaries = result.skipped.examples.filter((e) => e.reason === ("binary" satisfies SkipReason));
  * ```
 */
export type SkipReason = "binary" | "unreadable" | "changed" | "unpinnable";

/**
 * Why an `unpinnable` file could not be pinned (hard-linked into the
 * search's private directory next to it): `hard_link_refused` (the host
 * refuses the link: fs.protected_hardlinks, for another user's file this
 * user may not write), or the private directory could not be written
 * there — `no_space`, `read_only_filesystem`, `permission_denied` (the
 * directory is not writable by this user), `private_failed` (anything
 * else).
  *
  * @example
  * ```ts
  * for (const e of result.skipped.examples) if (e.cause === ("hard_link_refused" satisfies SkipCause)) console.error(`${e.path}: search it as its owner or with sudo`);
  * ```
 */
export type SkipCause = "hard_link_refused" | "no_space" | "read_only_filesystem" | "permission_denied" | "private_failed";

/**
 * A file (or directory) left out, named.
 *
 * @example
 * ```ts
 * const skipped: SkippedExample = { path: "uploads/report.pdf", reason: "binary" };
 * ```
 */
export interface SkippedExample {
  /** Root-relative path of the file or directory. */
  path: string;
  /** Why it was left out. */
  reason: SkipReason;
  /** For `unpinnable`: why. */
  cause?: SkipCause;
}

/**
 * What every {@linkcode SearchFilesResult} carries (empty counts when it failed).
 *
 * @example
 * ```ts
 * const found = await searchFiles(shell, "/srv/app", "TODO");
 * const fields: SearchFilesFields = found; // path, pattern, matches, counts and skips, whatever the outcome
 * ```
 */
export interface SearchFilesFields {
  /** The searched directory, root-relative (`""` for the root). */
  path: string;
  /** The pattern as given. */
  pattern: string;
  /** In the order found: files breadth first by directory, lines in file order. */
  matches: SearchMatch[];
  /** More lines matched than `maxResults` (the search stopped). */
  truncated: boolean;
  /** Files read and searched. */
  filesSearched: number;
  /** Directories walked. */
  directoriesSearched: number;
  /** Files (or directories) left out, by reason; `examples` names at most 20 per reason. */
  skipped: { binary: number; unreadable: number; changed: number; unpinnable: number; examples: SkippedExample[] };
  /**
   * `leftovers_removed`, one per directory (at most 20, then one for the
   * rest): the search removed there the private directories of killed
   * snapshot or search programs (programs/sh_reap.ts). Absent when none.
   */
  warnings?: Warning[];
}

/**
 * What {@linkcode searchFiles} returns: `ok` narrows it, so after
 * `if (!r.ok)` the failure is `r.errors[0]`.
 *
 * @example
 * ```ts
 * const result: SearchFilesResult = await searchFiles(shell, "/srv/app", "listen\\s+80");
 * if (result.ok) console.log(`${result.matches.length} lines in ${result.filesSearched} files${result.truncated ? " (more: narrow the search)" : ""}`);
 * else console.error(result.errors[0].message);
 * ```
 */
export type SearchFilesResult = (SearchFilesFields & { ok: true; errors?: undefined }) | (SearchFilesFields & { ok: false; errors: Failures });

/** Most bytes of a pattern. */
export const MAX_PATTERN_BYTES = 4096;

const RECORDS: ReadonlyMap<string, number> = new Map([["F", 1], ["B", 0], ["U", 0], ["X", 0], ["P", 1], ["BADPATTERN", 0], ["TMPFAIL", 2], ["REAP", 1], ["KEPT", 1]]);
const CAUSES: ReadonlySet<string> = new Set(["hard_link_refused", "no_space", "read_only_filesystem", "permission_denied", "private_failed"]);
const NUM = /^[0-9]{1,15}$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });
const lossy = new TextDecoder("utf-8");
const encoder = new TextEncoder();
const REASONS: Record<string, SkipReason> = { B: "binary", U: "unreadable", X: "changed" };

/** Every field of {@linkcode SearchFilesOptions}: any other key is refused (`invalid_request`). */
const SEARCH_OPTION_KEYS = ["path", "glob", "fixedString", "ignoreCase", "maxResults", "maxLineBytes", "signal", "timeoutMs"] as const satisfies readonly (keyof SearchFilesOptions)[];
const everySearchKey: NamesEveryKey<SearchFilesOptions, (typeof SEARCH_OPTION_KEYS)[number]> = true;
void everySearchKey;
/** What each option's value must be (a mistyped one is refused like an unknown key). */
const SEARCH_VALUES: Readonly<Record<keyof SearchFilesOptions, ValueRule>> = {
  path: "string",
  glob: "string",
  fixedString: "boolean",
  ignoreCase: "boolean",
  maxResults: "count",
  maxLineBytes: "count",
  signal: PROGRAM_VALUE_RULES.signal,
  timeoutMs: PROGRAM_VALUE_RULES.timeoutMs,
};

/**
 * Search the regular files below `root` (or `options.path` in it) for
 * `pattern`, with grep on the host: matching lines with their path, line
 * number and `N:hh` line id, at most `maxResults`. Binary files are
 * skipped; symlinks are never followed (nor `.git`, `.hg`, `.svn`
 * directories entered); a file in a directory other users can write is
 * first pinned — hard-linked into the search's private directory there —
 * and read from the pin, so a name swapped for a symlink cannot make it
 * read outside the root, nor one swapped for a FIFO make it wait; a file
 * that cannot be pinned there is skipped (`unpinnable`, with its cause:
 * the same files read_file refuses). The pattern is data: it reaches grep
 * through a private pattern file, never on a command line.
 *
 * Failures are values (`ok: false`): an empty or multi-line pattern, a
 * pattern grep rejects (`invalid_argument` with grep's message), a bad
 * path, a directory that is missing or not a directory, a missing `grep`
 * (`remote_unsupported`), a temporary directory on the host (`$TMPDIR` or
 * `/tmp`) that is full, read-only or closed to the user (`no_space`,
 * `read_only_filesystem`, `permission_denied`, naming it), the transport.
 * Only wrong argument types throw.
 *
 * @example
 * ```ts
 * const found = await searchFiles(new LocalShell(), "/srv/app", "listen 80", { fixedString: true, glob: "*.conf" });
 * if (found.ok) for (const m of found.matches) console.log(`${m.path}:${m.id} ${m.text}`);
 * ```
 */
export async function searchFiles(shell: RemoteShell, root: string, pattern: string, options: SearchFilesOptions = {}): Promise<SearchFilesResult> {
  if (!shell || typeof shell.exec !== "function") throw new TypeError("searchFiles: shell must be a RemoteShell");
  if (typeof pattern !== "string") throw new TypeError("searchFiles: pattern must be a string");
  const maxResults = countOption("maxResults", options.maxResults, 100, 10_000);
  const maxLineBytes = countOption("maxLineBytes", options.maxLineBytes, 4096, 65_536);
  const fixedString = options.fixedString === true;
  const command = searchProgram(root, { maxLines: maxResults, lineBytes: maxLineBytes, fixedString, ignoreCase: options.ignoreCase === true });
  const dir = directoryArg(options.path);
  const out: SearchFilesResult = {
    ok: true,
    path: typeof dir === "string" ? dir : options.path ?? "",
    pattern,
    matches: [],
    truncated: false,
    filesSearched: 0,
    directoriesSearched: 0,
    skipped: { binary: 0, unreadable: 0, changed: 0, unpinnable: 0, examples: [] },
  };
  const failed = (f: PatchFailure): SearchFilesResult => ({ ...out, ok: false, matches: [], errors: [f] });
  if (typeof dir !== "string") return failed(dir);
  const strange = unknownKeysFailure("searchFiles options", options, SEARCH_OPTION_KEYS, "nothing was searched") ??
    badValueFailure("searchFiles options", options, SEARCH_VALUES, "nothing was searched");
  if (strange !== null) return failed(strange);
  const problem = patternProblem(pattern) ?? globProblem(options.glob ?? "");
  if (problem !== null) return failed(problem);

  // The secret marks the program's private directories (sh_private.ts); it travels only on stdin.
  const stdin = encoder.encode(`SAP-SEARCH-2\nK ${randomBytes(16).toString("hex")}\n${dir}\n${options.glob ?? ""}\n${pattern}\n`);
  const result = await runDiscovery(shell, command, stdin, options);
  if ("code" in result) return failed(result);
  const host = shell.label ?? "the host";
  const reader = new RecordReader(result.stdout, RECORDS);
  const begin = reader.next();
  if (begin?.type !== "SAP-BEGIN" || begin.fields[0] !== "search") return failed(brokenOutput("the search program did not start", result));
  let lines = 0;
  const reapRest = { count: 0, dirs: 0 };
  for (;;) {
    const record = reader.next();
    if (record === null) {
      return failed(brokenOutput(reader.broken ? `the search output broke the protocol (${reader.broken})` : "the search output ended early", result));
    }
    const early = earlyEnd(record, dir, root, host);
    if (early !== null) return failed(early);
    const f = record.fields;
    if (record.type === "F" && NUM.test(f[0]!)) {
      const count = Number(f[0]);
      lines += count;
      if (count === 0 || lines > maxResults + 1) return failed(brokenOutput("the host sent more matching lines than asked for", result));
      const name = decodeName(record.raw!);
      const found: SearchMatch[] = [];
      let binary = false;
      for (let i = 0; i < count; i++) {
        const raw = reader.rawLine();
        if (raw === null) return failed(brokenOutput("the search output ended inside a file's lines", result));
        const match = matchOf(name.path, raw, maxLineBytes);
        // A line that is not `N:text` (BusyBox cut turns NUL bytes into line breaks) or holds a NUL: a binary file.
        if (match === null) binary = true;
        else found.push(name.addressable ? match : { ...match, addressable: false });
      }
      if (binary) skip(out, "binary", name.path);
      else appendAll(out.matches, found);
    } else if (REASONS[record.type] !== undefined && record.raw !== undefined) {
      const reason = REASONS[record.type]!;
      skip(out, reason, decodeName(record.raw).path, false);
    } else if (record.type === "P" && CAUSES.has(f[0]!) && record.raw !== undefined) {
      skip(out, "unpinnable", decodeName(record.raw).path, false, f[0] as SkipCause);
    } else if (record.type === "BADPATTERN") {
      const message = lossy.decode(record.raw!).trim().replace(/\s+/g, " ").slice(0, 300);
      return failed(failure(
        "invalid_argument",
        `grep on the host rejects the pattern ${JSON.stringify(pattern)}${message ? ` (${message})` : ""}. ${
          fixedString ? "" : "It is an extended regular expression (grep -E): escape ( ) [ ] { } . * + ? | ^ $ \\ to match them literally, or pass fixed_string: true. "
        }`.trim(),
      ));
    } else if (record.type === "TMPFAIL" && f.length === 2 && /^[a-z_]{1,40}$/.test(f[0]!) && /^(-|[0-9]{1,18})$/.test(f[1]!)) {
      return failed(tmpRefused(f[0]!, f[1] === "-" ? null : Number(f[1]), lossy.decode(record.raw!), root, result));
    } else if (record.type === "REAP" && f.length === 1 && /^[1-9][0-9]{0,3}$/.test(f[0]!) && record.raw !== undefined) {
      noteReaped(out, reapRest, Number(f[0]), decodeName(record.raw).path);
    } else if (record.type === "KEPT" && f.length === 1 && f[0] === "1" && record.raw !== undefined) {
      if ((out.warnings ??= []).filter((w) => w.code === "cleanup_incomplete").length < MAX_REAP_WARNINGS) out.warnings.push(privateKept(decodeName(record.raw).path));
    } else if (record.type === "FULL" && f.length === 0) {
      out.truncated = true;
    } else if (record.type === "C" && f.length === 6 && f.every((x) => NUM.test(x))) {
      const [u, b, x, files, dirs, p] = f.map(Number) as [number, number, number, number, number, number];
      out.skipped.unreadable = u;
      out.skipped.unpinnable = p;
      out.skipped.binary += b;
      out.skipped.changed = x;
      out.filesSearched = files;
      out.directoriesSearched = dirs;
    } else if (record.type === "SAP-END" && f.length === 1) {
      if (f[0] !== "ok" || !reader.atEnd()) return failed(brokenOutput(`the search program stopped (${f[0]})`, result));
      break;
    } else {
      return failed(brokenOutput(`unexpected search output ${JSON.stringify(record.type)}`, result));
    }
  }
  if (out.matches.length > maxResults) {
    out.matches.length = maxResults;
    out.truncated = true;
  }
  return out;
}

/**
 * The search's temporaries (pattern, grep's output) could not be made or
 * written in `directory` ($TMPDIR or /tmp on the host): no_space,
 * read_only_filesystem or permission_denied told as such (sh_faults.ts),
 * anything else a retryable remote_error quoting the program's stderr.
 */
function tmpRefused(code: string, free: number | null, directory: string, root: string, result: ExecResult): PatchFailure {
  if (isWriteRefusal(code)) return writeRefused(code, { root, directory, what: "tmp", bytesNeeded: null, bytesFree: free, again: "send the same request again" });
  return brokenOutput(`the search could not make or write its temporary files in ${directory} on the host`, result);
}

/** Why a pattern cannot be searched for, or null. */
function patternProblem(pattern: string): PatchFailure | null {
  if (pattern === "") return failure("invalid_argument", "the pattern is empty; give the text (or regular expression) to look for.");
  if (/[\n\r\0]/.test(pattern)) {
    return failure("invalid_argument", "the pattern spans several lines; grep matches one line at a time. Search for one line (with a regular expression, a|b finds either).");
  }
  if (encoder.encode(pattern).length > MAX_PATTERN_BYTES) return failure("invalid_argument", `the pattern is longer than ${MAX_PATTERN_BYTES} bytes; search for a shorter, distinctive part.`);
  return null;
}

/** Most `leftovers_removed` warnings naming their directory; the rest are folded into one. */
const MAX_REAP_WARNINGS = 20;

/** Record `count` leftovers removed in `dir`; past MAX_REAP_WARNINGS directories, `rest` sums them into one last warning. */
function noteReaped(out: SearchFilesResult, rest: { count: number; dirs: number }, count: number, dir: string): void {
  const warnings = out.warnings ??= [];
  if (warnings.length < MAX_REAP_WARNINGS) {
    warnings.push(leftoversRemoved(count, dir));
    return;
  }
  rest.count += count;
  rest.dirs += 1;
  warnings[MAX_REAP_WARNINGS] = {
    code: "leftovers_removed",
    message: `removed ${rest.count} more private directories (.sap-snap.-* / .sap-srch.-*) that killed snapshot or search programs had left, in ${rest.dirs} more directories; their programs were gone.`,
  };
}

function skip(out: SearchFilesResult, reason: SkipReason, path: string, count = true, cause?: SkipCause): void {
  if (count) out.skipped[reason]++;
  if (out.skipped.examples.filter((e) => e.reason === reason).length < 20) out.skipped.examples.push({ path, reason, ...(cause !== undefined ? { cause } : {}) });
}

/** One `N:text` line as a match, or null when it is not one (or holds a NUL: binary). */
function matchOf(path: string, raw: Uint8Array, maxLineBytes: number): SearchMatch | null {
  let at = 0;
  let n = 0;
  while (at < raw.length && at < 16 && raw[at]! >= 0x30 && raw[at]! <= 0x39) n = n * 10 + (raw[at++]! - 0x30);
  if (at === 0 || raw[at] !== 0x3a || n < 1 || raw.includes(0)) return null;
  let bytes = raw.subarray(at + 1);
  const cut = bytes.length > maxLineBytes;
  if (cut) bytes = bytes.subarray(0, maxLineBytes);
  else if (bytes.at(-1) === 0x0d) bytes = bytes.subarray(0, bytes.length - 1);
  if (cut) return { path, line: n, id: null, text: lossy.decode(wholeChars(bytes)), cut };
  try {
    const text = utf8.decode(bytes);
    return { path, line: n, id: formatLineId(text, n), text, cut };
  } catch {
    return { path, line: n, id: null, text: lossy.decode(bytes), cut };
  }
}

/** `bytes` without a UTF-8 sequence cut at its end. */
function wholeChars(bytes: Uint8Array): Uint8Array {
  let end = bytes.length;
  let back = 0;
  while (end > 0 && back < 4 && (bytes[end - 1]! & 0xc0) === 0x80) {
    end--;
    back++;
  }
  if (end > 0 && bytes[end - 1]! >= 0xc0) {
    const lead = bytes[end - 1]!;
    const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    if (back + 1 < need) return bytes.subarray(0, end - 1);
  }
  return bytes;
}
