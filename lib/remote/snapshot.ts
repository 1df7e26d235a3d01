/**
 * `readSnapshots`: the state of every path of a patch, in one exec (SPEC
 * §2, §6, §7).
 *
 * @module
 */
import { failure } from "../failure.ts";
import { resolveLimits } from "../patch/limits.ts";
import { remotePathProblem, snapshotInput } from "./manifest.ts";
import { pathRefusal, remoteError, rootFailure, tooLarge, unsupported } from "./failures.ts";
import { snapshotProgram } from "./programs/programs.ts";
import { sha256Hex } from "../text/sha256.ts";
import { DEFAULT_READ_TIMEOUT_MS, MAX_STDERR_BYTES, replyTooLarge, snapshotReplyBytes, stdoutOverflow } from "./exec_bounds.ts";
import { RemoteShellError } from "./shell.ts";
import type { RemoteShell } from "./shell.ts";
import type { FileKind, FileSnapshot, PatchFailure, Snapshots } from "../types.ts";

/** Options of {@linkcode readSnapshots}. */
export interface ReadSnapshotsOptions {
  signal?: AbortSignal;
  /** Kill the program and fail after this long. Default 5 min (lib/remote/exec_bounds.ts). */
  timeoutMs?: number;
  /** Files larger than this are refused (`limit_exceeded`) without being sent. Default: DEFAULT_LIMITS.maxFileBytes. */
  maxFileBytes?: number;
}

const KINDS: ReadonlySet<string> = new Set(["missing", "file", "directory", "symlink", "other"]);
const FIELD = /^(-|[0-9]{1,15})$/;

/**
 * Read the kind, bytes, SHA-256 (computed here, from the bytes received),
 * mode, uid, gid and nlink of every path below `root`, with the §6 checks
 * done on the remote side. One exec whatever the number of paths.
 *
 * Refusals are values: a path that fails the lexical rules (not sent at
 * all), a symlink, a symlinked or non-directory component, a parent outside
 * the root, no permission, a file over `maxFileBytes` — each gets a
 * snapshot with `rejected` set. A root that does not exist rejects every
 * path with the same failure.
 *
 * Rejects (throws asynchronously) only with {@linkcode RemoteShellError}:
 * transport failures from the adapter (connection, timeout, cancel, output
 * cap; a connection dropped mid-read becomes `remote_error`, never
 * `outcome_unknown`), a missing remote tool (`remote_unsupported`) and
 * output that breaks the protocol (`remote_error`) — none of which leaves a
 * `Snapshots` to return. Errors raised after the program ran carry
 * `started: true`. Reading changes nothing, so every one of them is safe to
 * retry.
 *
 * @example
 * ```ts
 * const snaps = await readSnapshots(new LocalShell(), "/srv/app", ["src/a.ts", "new.txt"]);
 * snaps.get("src/a.ts")?.sha256;
 * ```
 */
export async function readSnapshots(
  shell: RemoteShell,
  root: string,
  paths: readonly string[],
  options: ReadSnapshotsOptions = {},
): Promise<Snapshots> {
  if (!shell || typeof shell.exec !== "function") throw new TypeError("readSnapshots: shell must be a RemoteShell");
  if (!Array.isArray(paths)) throw new TypeError("readSnapshots: paths must be an array of strings");
  const maxFileBytes = options.maxFileBytes ?? resolveLimits(undefined).maxFileBytes;
  const command = snapshotProgram(root, maxFileBytes); // validates root and the limit
  const result = new Map<string, FileSnapshot>();
  const send: string[] = [];
  for (const path of paths) {
    if (typeof path !== "string") throw new TypeError("readSnapshots: paths must be strings");
    if (result.has(path) || send.includes(path)) continue;
    const problem = remotePathProblem(path);
    if (problem !== null) {
      result.set(path, { path, kind: "other", rejected: failure("invalid_path", problem, { path }) });
    } else {
      send.push(path);
    }
  }
  if (send.length === 0) return result;

  const host = shell.label ?? "the host";
  const limit = snapshotReplyBytes(send.length, maxFileBytes);
  const violation = (): RemoteShellError => new RemoteShellError(replyTooLarge("snapshot", limit), { started: true });
  const { stdout, stderr, exitCode, signal } = await shell.exec(command, {
    stdin: snapshotInput(send),
    signal: options.signal,
    timeoutMs: options.timeoutMs ?? DEFAULT_READ_TIMEOUT_MS,
    maxStdoutBytes: limit,
    maxStderrBytes: MAX_STDERR_BYTES,
  }).catch((error: unknown) => {
    if (stdoutOverflow(error)) throw violation();
    return readFailure(error, host);
  });
  // An adapter that does not honour maxStdoutBytes: the same bound, checked here.
  if (stdout.length > limit) throw violation();
  // From here on the snapshot program ran (read-only: still nothing changed).
  const problem = (what: string): RemoteShellError =>
    new RemoteShellError(
      remoteError(
        `${what} (exit ${exitCode ?? "none"}${signal ? `, signal ${signal}` : ""}); nothing was changed: retry`,
        new TextDecoder().decode(stderr.subarray(0, MAX_STDERR_BYTES)),
      ),
      { started: true },
    );

  const reader = new FrameReader(stdout);
  if (reader.line() !== "SAP-BEGIN snapshot") throw problem("the snapshot program did not start");
  const seen = new Set<number>();
  for (;;) {
    const line = reader.line();
    if (line === null) {
      throw problem(exitCode === null && signal === null
        ? "the connection closed while reading the files"
        : "the snapshot output ended early");
    }
    const f = line.split(" ");
    if (f[0] === "SAP-END") {
      if (f.length !== 2 || !reader.atEnd()) throw problem("malformed end of the snapshot output");
      if (f[1] === "ok") break;
      throw problem(`the snapshot program stopped (${f[1]})`);
    }
    if (f[0] === "UNSUPPORTED" && f.length === 2) throw new RemoteShellError(unsupported(f[1]!, host), { started: true });
    if (f[0] === "ROOT" && f.length === 2) {
      const rejected = rootFailure(f[1]!, root, host);
      for (const path of send) result.set(path, { path, kind: "other", rejected: { ...rejected, path } });
      return result;
    }
    const k = f[1] !== undefined && /^[0-9]{1,9}$/.test(f[1]) ? Number(f[1]) : -1;
    if (k < 0 || k >= send.length) throw problem(`unexpected snapshot line ${JSON.stringify(line.slice(0, 80))}`);
    const path = send[k]!;
    if (f[0] === "S" && f.length === 9 && KINDS.has(f[2]!) && f.slice(3, 8).every((x) => FIELD.test(x)) && /^[01]$/.test(f[8]!)) {
      if (seen.has(k)) throw problem("a path was reported twice");
      seen.add(k);
      const snap: FileSnapshot = { path, kind: f[2] as FileKind };
      const num = (x: string): number | undefined => x === "-" ? undefined : Number(x);
      const size = num(f[3]!);
      if (f[4] !== "-") {
        snap.mode = num(f[4]!);
        snap.uid = num(f[5]!);
        snap.gid = num(f[6]!);
        snap.nlink = num(f[7]!);
      }
      if (snap.kind === "missing") snap.parentExists = f[8] === "1";
      if (size !== undefined) {
        if (snap.kind !== "file") throw problem("bytes for a path that is not a file");
        const bytes = reader.bytes(size);
        if (bytes === null) throw problem("the snapshot output ended inside a file");
        snap.bytes = bytes;
        snap.size = size;
        snap.sha256 = sha256Hex(bytes);
      }
      result.set(path, snap);
    } else if (f[0] === "R" && f.length === 4 && /^[a-z_]+$/.test(f[2]!) && /^[0-9]{1,15}$/.test(f[3]!)) {
      const prior = result.get(path);
      const code = f[2]!;
      let rejected: PatchFailure;
      if (code === "limit_exceeded") rejected = tooLarge(path, Number(f[3]), maxFileBytes);
      else if (code === "remote_error") rejected = remoteError(`the host could not read ${path}; retry`, "");
      else rejected = pathRefusal(code, path, Number(f[3]), root);
      if (!seen.has(k)) seen.add(k);
      result.set(path, { ...(prior ?? { path, kind: "other" as FileKind }), rejected: { ...rejected, path } });
    } else {
      throw problem(`unexpected snapshot line ${JSON.stringify(line.slice(0, 80))}`);
    }
  }
  if (seen.size !== send.length) throw problem("the snapshot output missed some paths");
  return result;
}

/**
 * A transport failure of the snapshot exec. A connection that dropped
 * while the program may have been running is `outcome_unknown` for the
 * adapter, but the snapshot program only reads: report it as a retryable
 * `remote_error` that says nothing changed (keeping `started`), so nobody
 * goes looking for a commit to reconcile. Other failures pass unchanged.
 */
function readFailure(error: unknown, host: string): never {
  if (error instanceof RemoteShellError && error.failure.code === "outcome_unknown") {
    throw new RemoteShellError(
      remoteError(`the connection to ${host} dropped while the files were being read; reading changes nothing, so nothing was changed: retry`, ""),
      error.started === undefined ? {} : { started: error.started },
    );
  }
  throw error;
}

const LATIN1 = new TextDecoder("latin1");

/** Reads header lines and raw byte runs from one buffer. */
class FrameReader {
  #at = 0;
  readonly #buf: Uint8Array;
  constructor(buf: Uint8Array) {
    this.#buf = buf;
  }
  /** The next line (ASCII, without `\n`), or null when there is no complete line. */
  line(): string | null {
    const end = this.#buf.indexOf(0x0a, this.#at);
    if (end < 0) return null;
    const bytes = this.#buf.subarray(this.#at, end);
    this.#at = end + 1;
    for (const b of bytes) if (b < 0x20 || b > 0x7e) return "\u0000invalid";
    return LATIN1.decode(bytes);
  }
  /**
   * Exactly `n` bytes, or null when fewer remain: a view of the reply, not a
   * copy (the reply holds little but the files' bytes, so a copy would only
   * add a third full-size buffer to the adapter's chunks and their join).
   */
  bytes(n: number): Uint8Array | null {
    if (this.#at + n > this.#buf.length) return null;
    const out = this.#buf.subarray(this.#at, this.#at + n);
    this.#at += n;
    return out;
  }
  atEnd(): boolean {
    return this.#at === this.#buf.length;
  }
}
