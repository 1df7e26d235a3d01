/**
 * zod schemas of the discovery tools, `list_files` and `search`: inputs,
 * and outputs that mirror lib/remote/list_files.ts and search_files.ts.
 *
 * @module
 */
import { z } from "zod";
import type { ListedEntry, SearchMatch, SkipCause, SkipReason } from "../../mod.ts";
import type { WireListResult, WireSearchResult } from "../wire/types.ts";
import { failureSchema, strictInput, warningSchema } from "./schemas.ts";

/** list_files arguments. */
export type ListFilesArgs = { root?: string; path?: string; depth?: number; glob?: string };

/** search arguments. */
export type SearchArgs = {
  root?: string;
  pattern: string;
  path?: string;
  glob?: string;
  fixed_string?: boolean;
  ignore_case?: boolean;
  max_results?: number;
};

/** Most entries one list_files returns. */
export const MAX_LIST_DEPTH = 10;
/** Most matches one search returns. */
export const MAX_SEARCH_RESULTS = 1000;

const root = z.string().optional().describe("the root name; may be omitted when the server has a single root");
const dir = z.string().optional().describe('a directory relative to the root (default: the root itself, "" or ".")');
const glob = z.string().optional().describe('a shell glob on file names, e.g. "*.py" or "[Mm]akefile"; with a "/", on the path below `path` ("src/*.ts")');

/** list_files input. */
export const listFilesInput: z.ZodType<ListFilesArgs> = strictInput({
  root,
  path: dir,
  depth: z.number().int().min(1).max(MAX_LIST_DEPTH).optional().describe(`1 (default) lists the directory's own entries; 2 also its subdirectories', … up to ${MAX_LIST_DEPTH}`),
  glob,
}, "nothing was listed");

/** search input. */
export const searchInput: z.ZodType<SearchArgs> = strictInput({
  root,
  pattern: z.string().min(1).describe("one line: a POSIX extended regular expression (grep -E), or a literal with fixed_string"),
  path: dir,
  glob,
  fixed_string: z.boolean().optional().describe("match the pattern literally (grep -F)"),
  ignore_case: z.boolean().optional().describe("ASCII letters match either case"),
  max_results: z.number().int().min(1).max(MAX_SEARCH_RESULTS).optional().describe("most matching lines (default 100)"),
}, "nothing was searched");

const entry = z.looseObject({
  path: z.string().describe("relative to the root: pass it to read_file or use it in a patch"),
  kind: z.enum(["file", "directory", "symlink", "other"]).describe("symlinks are never followed"),
  depth: z.number(),
  size: z.number().nullable().describe("bytes, files only"),
  mode: z.number().nullable().describe("permission bits, e.g. 420 = 0644"),
  mtime: z.number().nullable().describe("modification time, seconds since 1970"),
  addressable: z.literal(false).optional().describe("present when the name has control characters or invalid UTF-8: no tool can address it"),
}) satisfies z.ZodType<ListedEntry>;

/** list_files output (wire format). */
export type ListFilesOutput = WireListResult & { root?: string };

/** list_files output schema. */
export const listFilesOutput: z.ZodType<ListFilesOutput> = z.looseObject({
  ok: z.boolean(),
  root: z.string().optional(),
  path: z.string(),
  entries: z.array(entry),
  truncated: z.boolean().describe("more entries exist: narrow with path, glob or a smaller depth"),
  unreadable: z.array(z.string()).describe("directories that could not be entered (at most 20 named)"),
  unreadable_count: z.number(),
  errors: z.array(failureSchema).optional(),
});

const match = z.looseObject({
  path: z.string(),
  line: z.number(),
  id: z.string().nullable().describe("the whole line's N:hh id; null when the line is too long to hash here or not UTF-8"),
  text: z.string().describe("the line without its ending, cut to a few hundred characters"),
  cut: z.boolean(),
  addressable: z.literal(false).optional(),
}) satisfies z.ZodType<SearchMatch>;

/** search output (wire format). */
export type SearchOutput = WireSearchResult & { root?: string };

/** search output schema. */
export const searchOutput: z.ZodType<SearchOutput> = z.looseObject({
  ok: z.boolean(),
  root: z.string().optional(),
  path: z.string(),
  pattern: z.string(),
  matches: z.array(match),
  truncated: z.boolean().describe("more lines matched than max_results"),
  files_searched: z.number(),
  directories_searched: z.number(),
  skipped: z.looseObject({
    binary: z.number(),
    unreadable: z.number(),
    changed: z.number().describe("files that changed or were swapped while being read (never followed)"),
    unpinnable: z.number().describe("files in a directory other users can write that could not be pinned there, so were not read (see the example's cause)"),
    examples: z.array(z.looseObject({
      path: z.string(),
      reason: z.enum(["binary", "unreadable", "changed", "unpinnable"]),
      cause: z.enum(["hard_link_refused", "no_space", "read_only_filesystem", "permission_denied", "private_failed"]).optional()
        .describe("unpinnable: the host refused the hard link (another user's file, fs.protected_hardlinks), or the search's private directory could not be written there"),
    })),
  }),
  warnings: z.array(warningSchema).optional().describe("leftovers_removed: private directories of killed reads removed on the way"),
  errors: z.array(failureSchema).optional(),
});
