/**
 * `listFiles`: the entries of a directory below the root, in one exec,
 * never following a symlink (SPEC §9 round 2).
 *
 * @module
 */
import type { Failures, PatchFailure } from "../types.ts";
import { unknownKeysFailure } from "./request_keys.ts";
import { badValueFailure, PROGRAM_VALUE_RULES } from "./request_values.ts";
import type { ValueRule } from "./request_values.ts";
import type { NamesEveryKey } from "./request_keys.ts";
import { brokenOutput, countOption, decodeName, directoryArg, earlyEnd, globProblem, runDiscovery } from "./discovery.ts";
import { listProgram } from "./programs/list_program.ts";
import { RecordReader } from "./records.ts";
import type { RemoteShell } from "./shell.ts";

/**
 * Options of {@linkcode listFiles}.
 *
 * @example
 * ```ts
 * await listFiles(shell, "/etc/nginx", { path: "sites-enabled", depth: 1, glob: "*.conf", maxEntries: 200 });
 * ```
 */
export interface ListFilesOptions {
  /** Root-relative directory to list; default the root. */
  path?: string;
  /** How deep to go: 1 lists the directory's own entries (default), 2 also its subdirectories' … (at most 32). */
  depth?: number;
  /**
   * Only entries whose name matches this shell glob (`*.conf`, `[Mm]akefile`);
   * with a `/`, matched against the path below the listed directory, where `*`
   * also matches `/` (`src/*.ts`). Subdirectories are walked either way.
   */
  glob?: string;
  /** Most entries returned (default 1000, at most 100000); `truncated` says when there were more. */
  maxEntries?: number;
  /** Abort the call: the program is killed on the host and the result fails `cancelled`. */
  signal?: AbortSignal;
  /** Default 60 s. */
  timeoutMs?: number;
}

/**
 * The kind of a listed entry; a symlink is never followed, so it is never a directory or file here.
 *
 * @example
 * ```ts
 * const dirs = listing.entries.filter((e) => e.kind === ("directory" satisfies ListedKind));
 * ```
 */
export type ListedKind = "file" | "directory" | "symlink" | "other";

/**
 * One entry of {@linkcode ListFilesResult}.
 *
 * @example
 * ```ts
 * const entry: ListedEntry = { path: "src/app.ts", kind: "file", depth: 2, size: 1234, mode: 0o644, mtime: 1764633600 };
 * ```
 */
export interface ListedEntry {
  /** Root-relative path (what read_file and patches take). */
  path: string;
  /** File, directory, symlink (never followed) or other. */
  kind: ListedKind;
  /** 1 = directly inside the listed directory. */
  depth: number;
  /** Bytes, for regular files; null otherwise. */
  size: number | null;
  /** Permission bits (e.g. 0o644 = 420), or null when the host could not stat it. */
  mode: number | null;
  /** Modification time, seconds since the epoch, or null. */
  mtime: number | null;
  /** Present and false when the name is not valid UTF-8 or breaks the path rules (control characters…): no tool can address it. */
  addressable?: false;
}

/**
 * What every {@linkcode ListFilesResult} carries (empty when it failed).
 *
 * @example
 * ```ts
 * const fields: ListFilesFields = { path: "src", entries: [], truncated: false, unreadable: [], unreadableCount: 0 };
 * ```
 */
export interface ListFilesFields {
  /** The listed directory, root-relative (`""` for the root). */
  path: string;
  /** Sorted by path. */
  entries: ListedEntry[];
  /** More entries exist than `maxEntries` (the walk is breadth first, so shallower ones come first). */
  truncated: boolean;
  /** Directories that could not be entered (root-relative; at most 20 named). */
  unreadable: string[];
  /** How many directories could not be entered. */
  unreadableCount: number;
}

/**
 * What {@linkcode listFiles} returns: `ok` narrows it, so after
 * `if (!r.ok)` the failure is `r.errors[0]`.
 *
 * @example
 * ```ts
 * const listing: ListFilesResult = await listFiles(shell, "/srv/app");
 * if (!listing.ok) console.error(listing.errors[0].message);
 * else if (listing.truncated) console.error("more entries: narrow path or glob");
 * ```
 */
export type ListFilesResult = (ListFilesFields & { ok: true; errors?: undefined }) | (ListFilesFields & { ok: false; errors: Failures });

const KINDS: ReadonlySet<string> = new Set(["file", "directory", "symlink", "other"]);
const NUM = /^[0-9]{1,15}$/;
const RECORDS: ReadonlyMap<string, number> = new Map([["E", 5], ["U", 0]]);
const MAX_DEPTH = 32;
const MAX_ENTRIES = 100_000;

/** Every field of {@linkcode ListFilesOptions}: any other key is refused (`invalid_request`). */
const LIST_OPTION_KEYS = ["path", "depth", "glob", "maxEntries", "signal", "timeoutMs"] as const satisfies readonly (keyof ListFilesOptions)[];
const everyListKey: NamesEveryKey<ListFilesOptions, (typeof LIST_OPTION_KEYS)[number]> = true;
void everyListKey;
/** What each option's value must be (a mistyped one is refused like an unknown key). */
const LIST_VALUES: Readonly<Record<keyof ListFilesOptions, ValueRule>> = {
  path: "string",
  depth: "count",
  glob: "string",
  maxEntries: "count",
  signal: PROGRAM_VALUE_RULES.signal,
  timeoutMs: PROGRAM_VALUE_RULES.timeoutMs,
};

/**
 * List a directory below `root` on the host: each entry's kind, size
 * (files), permission bits and mtime, breadth first to `depth`, at most
 * `maxEntries` (then `truncated`). Symlinks are listed as symlinks and
 * never followed; a directory swapped for a symlink during the walk is
 * skipped (reported in `unreadable`). Path rules and root confinement are
 * those of every other operation (SPEC §6).
 *
 * Failures are values (`ok: false`, `errors`): an invalid path, a path
 * through a symlink, a path that is not a directory, a missing root, the
 * transport (connection, timeout, cancel). Only wrong argument types throw.
 *
 * @example
 * ```ts
 * const listing = await listFiles(new LocalShell(), "/srv/app", { path: "src", depth: 2, glob: "*.ts" });
 * if (listing.ok) for (const e of listing.entries) console.log(e.kind, e.path, e.size);
 * ```
 */
export async function listFiles(shell: RemoteShell, root: string, options: ListFilesOptions = {}): Promise<ListFilesResult> {
  if (!shell || typeof shell.exec !== "function") throw new TypeError("listFiles: shell must be a RemoteShell");
  const depth = countOption("depth", options.depth, 1, MAX_DEPTH);
  const maxEntries = countOption("maxEntries", options.maxEntries, 1000, MAX_ENTRIES);
  const command = listProgram(root, maxEntries, depth); // validates root
  const dir = directoryArg(options.path);
  const failed = (f: PatchFailure, path = typeof dir === "string" ? dir : options.path ?? ""): ListFilesResult => ({
    ok: false,
    path,
    entries: [],
    truncated: false,
    unreadable: [],
    unreadableCount: 0,
    errors: [f],
  });
  if (typeof dir !== "string") return failed(dir);
  const strange = unknownKeysFailure("listFiles options", options, LIST_OPTION_KEYS, "nothing was listed") ??
    badValueFailure("listFiles options", options, LIST_VALUES, "nothing was listed");
  if (strange !== null) return failed(strange);
  const glob = options.glob ?? "";
  const globFailure = globProblem(glob);
  if (globFailure !== null) return failed(globFailure);

  const stdin = new TextEncoder().encode(`SAP-LIST-1\n${dir}\n${glob}\n`);
  const result = await runDiscovery(shell, command, stdin, options);
  if ("code" in result) return failed(result);
  const host = shell.label ?? "the host";
  const reader = new RecordReader(result.stdout, RECORDS);
  const begin = reader.next();
  if (begin?.type !== "SAP-BEGIN" || begin.fields[0] !== "list") return failed(brokenOutput("the list program did not start", result));
  const out: ListFilesResult = { ok: true, path: dir, entries: [], truncated: false, unreadable: [], unreadableCount: 0 };
  for (;;) {
    const record = reader.next();
    if (record === null) {
      return failed(brokenOutput(reader.broken ? `the list output broke the protocol (${reader.broken})` : "the list output ended early", result));
    }
    const early = earlyEnd(record, dir, root, host);
    if (early !== null) return failed(early);
    const f = record.fields;
    if (record.type === "E" && KINDS.has(f[0]!) && NUM.test(f[1]!) && f.slice(2, 5).every((x) => x === "-" || NUM.test(x))) {
      if (out.entries.length >= maxEntries) return failed(brokenOutput("the host listed more entries than asked for", result));
      const name = decodeName(record.raw!);
      const num = (x: string): number | null => (x === "-" ? null : Number(x));
      out.entries.push({
        path: name.path,
        kind: f[0] as ListedKind,
        depth: Number(f[1]),
        size: num(f[2]!),
        mode: num(f[3]!),
        mtime: num(f[4]!),
        ...(name.addressable ? {} : { addressable: false as const }),
      });
    } else if (record.type === "U") {
      if (out.unreadable.length < 20) out.unreadable.push(decodeName(record.raw!).path);
      out.unreadableCount++;
    } else if (record.type === "UCOUNT" && f.length === 1 && NUM.test(f[0]!)) {
      out.unreadableCount = Math.max(out.unreadableCount, Number(f[0]));
    } else if (record.type === "MORE" && f.length === 0) {
      out.truncated = true;
    } else if (record.type === "SAP-END" && f.length === 1) {
      if (f[0] !== "ok" || !reader.atEnd()) return failed(brokenOutput(`the list program stopped (${f[0]})`, result));
      break;
    } else {
      return failed(brokenOutput(`unexpected list output ${JSON.stringify(record.type)}`, result));
    }
  }
  out.entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return out;
}
