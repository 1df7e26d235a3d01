/**
 * What `listFiles` and `searchFiles` share: argument checks, the one exec
 * (transport failures become failure values: both only read, so nothing
 * ever needs reconciling), and the records that end a program early.
 *
 * @module
 */
import { failure } from "../failure.ts";
import { validatePath } from "../patch/paths.ts";
import type { PatchFailure } from "../types.ts";
import { remotePathProblem } from "./manifest.ts";
import { pathRefusal, remoteError, rootFailure, unsupported } from "./failures.ts";
import type { OutputRecord } from "./records.ts";
import { MAX_STDERR_BYTES } from "./exec_bounds.ts";
import { execChecked, RemoteShellError } from "./shell.ts";
import type { ExecResult, RemoteShell } from "./shell.ts";

/** Default timeout of one discovery program when the caller gives none. */
export const DEFAULT_DISCOVERY_TIMEOUT_MS = 60_000;

/** The tools only the discovery programs need, as unsupported() names them. */
const DISCOVERY_TOOLS: Record<string, string> = {
  grep: "grep (with -E, -F, -f, -l, -n)",
  cut: "cut -b",
  tr: "tr (to tell binary files, where grep has no -I)",
  "test-ef": "a sh whose test has -ef (dash, bash, BusyBox, ksh, BSD sh)",
};

/** Most bytes of a glob. */
export const MAX_GLOB_BYTES = 1024;

const utf8 = new TextDecoder("utf-8", { fatal: true });
const lossy = new TextDecoder("utf-8");
const encoder = new TextEncoder();

/**
 * The directory argument: `""` for the root (also for `"."`, `"/"` or
 * nothing), else a root-relative path checked by the §6 rules.
 *
 * @example
 * ```ts
 * directoryArg(undefined); // ""
 * directoryArg("src/lib"); // "src/lib"
 * ```
 */
export function directoryArg(path: string | undefined): string | PatchFailure {
  if (path === undefined) return "";
  if (typeof path !== "string") throw new TypeError("path must be a string");
  const trimmed = path.replace(/\/+$/, "");
  if (trimmed === "" || trimmed === ".") return "";
  const problem = remotePathProblem(trimmed);
  return problem === null ? trimmed : failure("invalid_path", problem, { path });
}

/**
 * Why a glob cannot be used, or null: at most {@linkcode MAX_GLOB_BYTES},
 * no control characters (it travels as one stdin line).
 *
 * @example
 * ```ts
 * globProblem("*.ts"); // null
 * ```
 */
export function globProblem(glob: string): PatchFailure | null {
  if (typeof glob !== "string") throw new TypeError("glob must be a string");
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(glob)) return failure("invalid_argument", "the glob contains control characters; write it on one line, e.g. *.conf.");
  if (encoder.encode(glob).length > MAX_GLOB_BYTES) return failure("invalid_argument", `the glob is longer than ${MAX_GLOB_BYTES} bytes.`);
  return null;
}

/**
 * A checked positive integer option, or its default; throws on a wrong type or range (a programmer error).
 *
 * @example
 * ```ts
 * countOption("depth", undefined, 1, 32); // 1
 * ```
 */
export function countOption(name: string, value: number | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1 || value > max) throw new RangeError(`${name} must be an integer between 1 and ${max}`);
  return value;
}

/** A path read from the host: its text, and whether the other tools can address it. */
export interface DecodedName {
  path: string;
  /** False when the name is not valid UTF-8 or breaks the §6 rules (control characters, …). */
  addressable: boolean;
}

/**
 * Decode a root-relative path the host printed.
 *
 * @example
 * ```ts
 * decodeName(new TextEncoder().encode("a/b.txt")); // { path: "a/b.txt", addressable: true }
 * ```
 */
export function decodeName(raw: Uint8Array): DecodedName {
  let path: string;
  try {
    path = utf8.decode(raw);
  } catch {
    return { path: lossy.decode(raw), addressable: false };
  }
  return { path, addressable: validatePath(path) === null };
}

/** Options both programs take. */
export interface DiscoveryExecOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * Run a discovery program. Resolves with the result, or with the failure
 * of the transport (connection, timeout, cancel) — a dropped connection is
 * a retryable `remote_error`: the programs only read.
 *
 * @example
 * ```ts
 * const result = await runDiscovery(shell, listProgram("/srv", 10, 1), stdin, {});
 * if ("code" in result) return failed(result);
 * ```
 */
export async function runDiscovery(
  shell: RemoteShell,
  command: string,
  stdin: Uint8Array,
  options: DiscoveryExecOptions,
): Promise<ExecResult | PatchFailure> {
  try {
    return await execChecked(shell, command, {
      stdin,
      signal: options.signal,
      timeoutMs: options.timeoutMs ?? DEFAULT_DISCOVERY_TIMEOUT_MS,
      maxStderrBytes: MAX_STDERR_BYTES,
    });
  } catch (error) {
    if (!(error instanceof RemoteShellError)) throw error;
    if (error.failure.code === "outcome_unknown") {
      return remoteError(`the connection to ${shell.label ?? "the host"} dropped while reading; reading changes nothing: retry`, "");
    }
    return error.failure;
  }
}

/**
 * The failure a record that ends the program early stands for, or null
 * when the record is not one of them.
 *
 * @example
 * ```ts
 * earlyEnd({ type: "NOTDIR", fields: ["file"] }, "a.txt", "/srv", "web1")?.code; // "not_regular_file"
 * ```
 */
export function earlyEnd(record: OutputRecord, dir: string, root: string, host: string): PatchFailure | null {
  const [a, b] = record.fields;
  const where = dir === "" ? "the root" : dir;
  switch (record.type) {
    case "ROOT":
      return rootFailure(a ?? "missing", root, host);
    case "UNSUPPORTED":
      return unsupported(DISCOVERY_TOOLS[a ?? ""] ?? a ?? "?", host);
    case "BAD_INPUT":
      return remoteError(`the host's program refused its input (${a}); this is a bug in ssh-apply-patch`, "");
    case "REJECT": {
      if (a === "conflict") return failure("conflict", `${where} changed while it was being read (a directory swapped); read again.`, { path: dir });
      return pathRefusal(a ?? "remote_error", dir, Number(b ?? 0), root);
    }
    case "NOTDIR":
      if (a === "missing") {
        return failure("not_found", `${dir} does not exist in the root. List its parent directory to see what is there.`, { path: dir, actualState: "missing", closestPaths: [] });
      }
      return failure("not_regular_file", `${dir} is not a directory (it is ${a === "file" ? "a file" : "a " + a}). Name a directory.`, {
        path: dir,
        actualState: a === "file" ? "file" : a === "symlink" ? "symlink" : "other",
      });
    default:
      return null;
  }
}

/**
 * A protocol violation of the host's output: a retryable remote_error saying nothing changed.
 *
 * @example
 * ```ts
 * brokenOutput("the list output ended early", result).code; // "remote_error"
 * ```
 */
export function brokenOutput(what: string, result: ExecResult): PatchFailure {
  const how = `exit ${result.exitCode ?? "none"}${result.signal ? `, signal ${result.signal}` : ""}`;
  return remoteError(`${what} (${how}); nothing was changed: retry`, lossy.decode(result.stderr.subarray(0, 2000)));
}
