/**
 * `readSnapshots`: the state of every path of a patch, in one exec (SPEC
 * §2, §6, §7).
 *
 * @module
 */
import { failure } from "../failure.ts";
import { resolveLimits } from "../patch/limits.ts";
import { remotePathProblem, snapshotInput } from "./manifest.ts";
import { randomBytes } from "node:crypto";
import { pathRefusal, remoteError, rootFailure, tooLarge, unpinnable, unsafeDirectory, unsupported } from "./failures.ts";
import { writeRefused } from "./host_refusals.ts";
import { leftoversRemoved, privateKept } from "./leftovers.ts";
import { parseUnsafe } from "./protocol.ts";
import type { UnsafeLine } from "./protocol.ts";
import { snapshotProgram } from "./programs/programs.ts";
import { sha256Hex } from "../text/sha256.ts";
import { closestPaths } from "../text/closest_path.ts";
import { DEFAULT_READ_TIMEOUT_MS, MAX_STDERR_BYTES, NEAR_RECORD_MAX_BYTES, nearReplyBytes, replyTooLarge, snapshotReplyBytes, stdoutOverflow } from "./exec_bounds.ts";
import { COMPRESS_MIN_BYTES, execProgram, noteBrokenCodec, noteHostTools, offeredCodecs } from "./host_wire.ts";
import type { CompressMode } from "./host_wire.ts";
import type { Codec } from "./inflate.ts";
import { unknownKeysFailure } from "./request_keys.ts";
import { badValueFailure, PROGRAM_VALUE_RULES } from "./request_values.ts";
import type { ValueRule } from "./request_values.ts";
import type { NamesEveryKey } from "./request_keys.ts";
import { RemoteShellError } from "./shell.ts";
import type { LocalFileIdentity, RemoteShell } from "./shell.ts";
import type { SnapshotCache } from "./snapshot_cache.ts";
import { cacheScope, compressedBound, FrameReader, heldContents, rememberSnapshots, unpackFile } from "./snapshot_wire.ts";
import type { CompressedFile } from "./snapshot_wire.ts";
import type { FileKind, FileSnapshot, PatchFailure, SharedDirectories, Snapshots } from "../types.ts";

/**
 * Options of {@linkcode readSnapshots}.
 *
 * @example
 * ```ts
 * const snapshots = await readSnapshots(shell, "/srv/app", ["config.yml"], { timeoutMs: 60_000, cache, sharedDirectories: "refuse" });
 * ```
 */
export interface ReadSnapshotsOptions {
  /** Abort the call: the program is killed on the host and the call fails `cancelled`. */
  signal?: AbortSignal;
  /** Kill the program and fail after this long. Default 5 min (lib/remote/exec_bounds.ts). */
  timeoutMs?: number;
  /** Files larger than this are refused (`limit_exceeded`) without being sent. Default: DEFAULT_LIMITS.maxFileBytes. */
  maxFileBytes?: number;
  /**
   * A directory on a path (or above the root) that users other than the
   * remote user and root can write: `"refuse"` (default) rejects the path
   * `unsafe_directory` without reading it; `"allow"` reads it anyway, from
   * a pinned inode (SPEC §6.1), and marks the snapshot `directoryTrust:
   * "shared"`.
   */
  sharedDirectories?: SharedDirectories;
  /**
   * Accept a root below a directory that another user can write (no
   * sticky bit protecting the root's name). Default false: such a root is
   * refused `unsafe_directory` (naming that directory, its owner and mode)
   * in every policy, because that user can put another directory at the
   * root's path at any moment. With true, every directory is handled as
   * shared (so `sharedDirectories: "allow"` is needed too) and each
   * program checks, at every directory it enters, that the root is still
   * the very directory (device:inode) it pinned at its start; the commit
   * also checks it against the snapshot's (`expectRootId`).
   */
  trustRootAncestors?: boolean;
  /**
   * Contents this client has seen (SPEC §11.1). For each path whose last
   * seen content the cache holds, the request names its SHA-256; the host
   * hashes the file (the inode it verified inside the root) and, when
   * equal, sends no bytes: the snapshot is the cached content
   * (`transfer: "cached"`). Everything downloaded is added to the cache.
   */
  cache?: SnapshotCache;
  /**
   * Compress files of 64 KiB or more on the host (zstd, else gzip) and the
   * programs' text: `"auto"` (default: only when `shell.link` is
   * `"network"`), `true`, `false`. See lib/remote/host_wire.ts.
   */
  compress?: CompressMode;
  /**
   * Paths the caller needs to exist (applyPatch passes its Update and
   * Delete sources). When one of them is missing, the same exec walks the
   * root for names (bounded: {@linkcode ReadSnapshotsOptions.closestSearch};
   * names only, never a file opened, never a symlink or a directory others
   * can write entered: programs/sh_near.ts) and its snapshot's
   * `closestPaths` names the existing files closest to it. Default: none.
   */
  closestFor?: readonly string[];
  /**
   * Bounds of that walk: directory entries looked at (default 4000),
   * levels below the root (default 8), seconds (default 3).
   */
  closestSearch?: { maxEntries?: number; maxDepth?: number; maxSeconds?: number };
}

/** The default bounds of the walk for names near a missing path. */
export const CLOSEST_SEARCH_DEFAULTS: { maxEntries: number; maxDepth: number; maxSeconds: number } = { maxEntries: 4000, maxDepth: 8, maxSeconds: 3 };

/** How far past its files' sizes a group's end marker may come (files that grew meanwhile) before the reply is refused. */
const GROUP_SLACK_BYTES = 64 * 1024;

const KINDS: ReadonlySet<string> = new Set(["missing", "file", "directory", "symlink", "other"]);
const FIELD = /^(-|[0-9]{1,15})$/;
/** A bulk block's stat line: hex mode of a regular file, size, uid, gid, nlink, mtime, inode. */
const BULK_STAT = /^(8[0-9a-f]{3}) ([0-9]{1,15}) ([0-9]{1,15}) ([0-9]{1,15}) ([0-9]{1,15}) [0-9]{1,15} [0-9]{1,20}$/;
/** A bulk block's sha256sum line (a leading backslash when the name needed escapes). */
const BULK_SHA = /^\\?([0-9a-f]{64}) /;

/** The root a snapshot was read under (device:inode on the host), per returned map. */
const ROOT_IDS = new WeakMap<Snapshots, string>();

/**
 * The identity (`device:inode`) of the root directory the snapshots were
 * read in, as the host reported it; pass it to commitRemote as
 * `expectRootId` so that a root replaced between the two calls (by someone
 * who can write above it) is refused instead of written to. Undefined for
 * maps not made by readSnapshots.
 *
 * @example
 * ```ts
 * const snaps = await readSnapshots(shell, root, paths);
 * await commitRemote(shell, root, plan, { expectRootId: snapshotRootId(snaps) });
 * ```
 */
export function snapshotRootId(snapshots: Snapshots): string | undefined {
  return ROOT_IDS.get(snapshots);
}

/** Every field of {@linkcode ReadSnapshotsOptions}: any other key is refused (`invalid_request`). */
const SNAPSHOT_OPTION_KEYS = ["signal", "timeoutMs", "maxFileBytes", "sharedDirectories", "trustRootAncestors", "cache", "compress", "closestFor", "closestSearch"] as const satisfies readonly (keyof ReadSnapshotsOptions)[];
const everySnapshotKey: NamesEveryKey<ReadSnapshotsOptions, (typeof SNAPSHOT_OPTION_KEYS)[number]> = true;
void everySnapshotKey;
/** What each option's value must be (a mistyped one is refused like an unknown key). */
const SNAPSHOT_VALUES: Readonly<Record<keyof ReadSnapshotsOptions, ValueRule>> = {
  signal: PROGRAM_VALUE_RULES.signal,
  timeoutMs: PROGRAM_VALUE_RULES.timeoutMs,
  sharedDirectories: PROGRAM_VALUE_RULES.sharedDirectories,
  trustRootAncestors: PROGRAM_VALUE_RULES.trustRootAncestors,
  compress: PROGRAM_VALUE_RULES.compress,
  maxFileBytes: "count",
  cache: { has: ["hint", "get", "put"], what: "a SnapshotCache" },
  closestFor: "string-list",
  closestSearch: "count-map",
};

/**
 * Read the kind, bytes, SHA-256 (computed here, from the bytes received),
 * mode, uid, gid and nlink of every path below `root`, with the §6 checks
 * and the directory trust policy (§6.1) done on the remote side. One exec
 * whatever the number of paths. Through a shell with `localFiles`
 * (LocalShell) the program hands large files over instead of sending them
 * and this process reads them, checked to be the inode the program
 * measured; if one is not (it changed since), everything is read again
 * through a second exec without the hand-over.
 *
 * Refusals are values: a path that fails the lexical rules (not sent at
 * all), a symlink, a symlinked or non-directory component, a parent outside
 * the root, no permission, a file over `maxFileBytes`, a directory others
 * can write (unless `sharedDirectories: "allow"`; with it, a file whose
 * pin cannot be written there: `no_space`, `read_only_filesystem`,
 * `permission_denied`, or `unsafe_directory` when the host refuses the
 * hard link itself), a file that changed
 * while it was read (`conflict`) — each gets a snapshot with `rejected`
 * set. A root that does not exist rejects every path with the same
 * failure.
 *
 * Rejects (throws asynchronously) only with {@linkcode RemoteShellError}:
 * transport failures from the adapter (connection, timeout, cancel, output
 * cap; a connection dropped mid-read becomes `remote_error`, never
 * `outcome_unknown`), a missing remote tool (`remote_unsupported`) and
 * output that breaks the protocol (`remote_error`, also when a file shrank
 * while it was being sent) — none of which leaves a `Snapshots` to return.
 * Errors raised after the program ran carry `started: true`; an adapter
 * that rejects with anything else gets a `remote_error` RemoteShellError
 * in its place. Reading changes nothing, so every one of them is safe to
 * retry. Wrong argument types throw a TypeError (a programmer error).
 *
 * @example
 * ```ts
 * const snaps = await readSnapshots(new LocalShell(), "/srv/app", ["src/a.ts", "new.txt"]);
 * snaps.get("src/a.ts")?.sha256;
 * ```
 */
export function readSnapshots(
  shell: RemoteShell,
  root: string,
  paths: readonly string[],
  options: ReadSnapshotsOptions = {},
): Promise<Snapshots> {
  const strange = unknownKeysFailure("readSnapshots options", options, SNAPSHOT_OPTION_KEYS, "nothing was read") ??
    badValueFailure("readSnapshots options", options, SNAPSHOT_VALUES, "nothing was read");
  if (strange !== null) return Promise.reject(new RemoteShellError(strange, { started: false }));
  return readOnce(shell, root, paths, options, shell?.localFiles !== undefined).then((snaps) => inPathOrder(snaps, paths));
}

/** The snapshots in the order of the request's paths (the program reads them sorted). */
function inPathOrder(snaps: Snapshots, paths: readonly string[]): Snapshots {
  const ordered = new Map<string, FileSnapshot>();
  for (const path of paths) {
    const snap = snaps.get(path);
    if (snap !== undefined && !ordered.has(path)) ordered.set(path, snap);
  }
  const rootId = ROOT_IDS.get(snaps);
  if (rootId !== undefined) ROOT_IDS.set(ordered, rootId);
  return ordered;
}

/**
 * Files of at least this size are offered to be read by the client itself
 * when the shell can (RemoteShell.localFiles): below it the pipe costs less
 * than it saves, and small files keep the one path every test exercises.
 */
export const LOCAL_READ_MIN_BYTES: number = 64 * 1024;

/**
 * One snapshot exec. `local`: offer the hand-over of large files; a file
 * handed over that the client then cannot read as measured (changed, or
 * the shell's programs do not see this process's files) makes the whole
 * read run once more without the offer, so the result is always what one
 * program run saw.
 */
async function readOnce(
  shell: RemoteShell,
  root: string,
  paths: readonly string[],
  options: ReadSnapshotsOptions,
  local: boolean,
  bulkRetry = true,
): Promise<Snapshots> {
  if (!shell || typeof shell.exec !== "function") throw new TypeError("readSnapshots: shell must be a RemoteShell");
  if (!Array.isArray(paths)) throw new TypeError("readSnapshots: paths must be an array of strings");
  const maxFileBytes = options.maxFileBytes ?? resolveLimits(undefined).maxFileBytes;
  const need = new Set(options.closestFor ?? []);
  const search = { ...CLOSEST_SEARCH_DEFAULTS, ...options.closestSearch };
  const near = { entries: search.maxEntries, depth: search.maxDepth, seconds: search.maxSeconds };
  const command = snapshotProgram(root, maxFileBytes, options.sharedDirectories ?? "refuse", options.trustRootAncestors === true, near); // validates root, limit, policy, bounds
  const result = new Map<string, FileSnapshot>();
  const send: string[] = [];
  const sending = new Set<string>();
  for (const path of paths) {
    if (typeof path !== "string") throw new TypeError("readSnapshots: paths must be strings");
    if (result.has(path) || sending.has(path)) continue;
    const problem = remotePathProblem(path);
    if (problem !== null) {
      result.set(path, { path, kind: "other", rejected: failure("invalid_path", problem, { path }) });
    } else {
      send.push(path);
      sending.add(path);
    }
  }
  if (send.length === 0) return result;
  // Sorted, so that the paths of one directory (of one subtree) come
  // together: the program then finds each path's directory in its table at
  // once (programs/sh_private.ts, sap_dir_index).
  send.sort();

  const host = shell.label ?? "the host";
  const scope = cacheScope(shell, root);
  const held = await heldContents(options.cache, scope, send);
  const codecs = offeredCodecs(shell, options.compress);
  // A compressed stream may be a little longer than its file (stored blocks).
  const wanted = send.some((path) => need.has(path));
  // the walk's records: at most one per entry looked at, each a path of at most 4096 bytes
  const limit = snapshotReplyBytes(send.length, codecs.length > 0 ? compressedBound(maxFileBytes) : maxFileBytes) + (wanted ? nearReplyBytes(near.entries) : 0);
  const violation = (): RemoteShellError => new RemoteShellError(replyTooLarge("snapshot", limit), { started: true });
  // The nonce closes each file's bytes; no file can contain it on purpose:
  // it exists only here and on the program's stdin.
  const nonce = randomBytes(16).toString("hex");
  const entries = send.map((path, k) => ({ path, ...(held.has(k) ? { hint: held.get(k)!.hint } : {}), ...(need.has(path) ? { need: true } : {}) }));
  // Not with compression on: that asks for the bytes to travel (a shell
  // that is local only by name, or a test of the host's codecs).
  const access = local && codecs.length === 0 ? shell.localFiles : undefined;
  const offer = { codecs, minBytes: COMPRESS_MIN_BYTES, ...(access ? { localEuid: access.euid, localMinBytes: LOCAL_READ_MIN_BYTES } : {}) };
  const { stdout, stderr, exitCode, signal } = await execProgram(shell, command, {
    stdin: snapshotInput(entries, randomBytes(16).toString("hex"), nonce, offer),
    signal: options.signal,
    timeoutMs: options.timeoutMs ?? DEFAULT_READ_TIMEOUT_MS,
    maxStdoutBytes: limit,
    maxStderrBytes: MAX_STDERR_BYTES,
  }, options.compress).catch((error: unknown) => {
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
  const changed = new Set<number>();
  const shared = new Set<number>();
  /** `H k` / `Z k …` lines: how the next S line's bytes travel. */
  const proved = new Set<number>();
  const announced = new Map<number, { codec: Codec; sha256: string }>();
  const compressed = new Map<number, CompressedFile>();
  /** `G k <sha256>` lines: the next S line's bytes travel in a group (`GROUP n`), cut by size and checked by this hash. */
  const grouped = new Map<number, string>();
  /** Grouped files whose S line came, waiting for their `GROUP` line. */
  let pendingGroup: { k: number; size: number; sha256: string }[] = [];
  /** `L k …` lines: files handed over, read here after the program ended. */
  const handed = new Map<number, { inode: number; mtime: number }>();
  const toRead: { k: number; identity: LocalFileIdentity }[] = [];
  const endMarker = new TextEncoder().encode(`\nE ${nonce}\n`);
  let rootId: string | undefined;
  const unsafeLines: UnsafeLine[] = [];
  /** `SPACE k <free|->`: free bytes where a pin ran out of space. */
  const spaceFree = new Map<number, number | null>();
  /** `REAP k <n>`: leftovers of killed programs removed in path k's directory. */
  const reaped = new Map<number, number>();
  /** `KEPT k`: the private directory of path k's directory could not be removed (moved by someone else). */
  const kept = new Set<number>();
  /**
   * The bytes of a group: the files' bytes one after the other (one cat
   * on the host), then the end marker. Each piece, cut by the size its S
   * line gave, must hash to what the host computed before the cat; one
   * that does not (the file changed in between, or one before it changed
   * size and moved it) is refused as changed, like a `C k`.
   */
  /** Bulk pieces that missed their hash: read again once (below), since one file that changed size moves every piece after it. */
  const bulkMissed = new Set<number>();
  const takeGroup = (files: readonly { k: number; size: number; sha256: string }[], missed: Set<number> = changed): void => {
    const total = files.reduce((sum, file) => sum + file.size, 0);
    const data = reader.until(endMarker, total + GROUP_SLACK_BYTES);
    if (data === null) throw problem(`the bytes of ${files.length} files did not end where their sizes said (one changed size while it was being read?)`);
    let at = 0;
    for (const { k, size, sha256 } of files) {
      const piece = data.subarray(at, Math.min(data.length, at + size));
      at += size;
      const snap = result.get(send[k]!)!;
      if (piece.length === size && sha256Hex(piece) === sha256) {
        snap.bytes = piece;
        snap.sha256 = sha256;
      } else {
        missed.add(k);
      }
    }
  };
  /** `NF <path>` records of the walk near missing paths (sh_near.ts), and its `NEAR` line. */
  const nearNames: string[] = [];
  let nearDone = false;
  /** The walk's `NEAR` line said it stopped at a bound (entries, depth or time) before it saw every name. */
  let nearCut = false;
  /**
   * A `BULK n` block (programs/sh_snapshot_bulk.ts): every path, in order,
   * a small regular file; the host's `stat` lines, its `sha256sum` lines,
   * then the files' bytes as one group.
   */
  const takeBulk = (n: number): void => {
    const files: { k: number; size: number; sha256: string }[] = [];
    const stats = reader.lines(n);
    const hashes = reader.lines(n);
    if (stats === null || hashes === null) throw problem("the snapshot's bulk block ended early");
    for (let k = 0; k < n; k++) {
      const m = BULK_STAT.exec(stats[k]!);
      if (m === null) throw problem("a malformed stat line in the snapshot's bulk block");
      const size = Number(m[2]);
      if (size > maxFileBytes) throw problem(`the host sent ${send[k]!} in bulk although it is over the size limit`);
      result.set(send[k]!, { path: send[k]!, kind: "file", size, mode: parseInt(m[1]!, 16) & 4095, uid: Number(m[3]), gid: Number(m[4]), nlink: Number(m[5]), transfer: "downloaded" });
      seen.add(k);
      files.push({ k, size, sha256: "" });
    }
    for (const file of files) {
      const m = BULK_SHA.exec(hashes[file.k]!);
      if (m === null) throw problem("a malformed hash line in the snapshot's bulk block");
      file.sha256 = m[1]!;
    }
    takeGroup(files, bulkMissed);
  };
  for (;;) {
    if (reader.startsWith(NF_PREFIX)) {
      const record = reader.until(RECORD_END, NEAR_RECORD_MAX + NF_PREFIX.length);
      if (record === null || !wanted || nearDone || nearNames.length >= near.entries) throw problem("unexpected near-name record in the snapshot output");
      const name = nearName(record.subarray(NF_PREFIX.length));
      if (name !== null) nearNames.push(name);
      continue;
    }
    const line = reader.line();
    if (line === null) {
      throw problem(exitCode === null && signal === null
        ? "the connection closed while reading the files"
        : "the snapshot output ended early");
    }
    const f = line.split(" ");
    if (f[0] === "SAP-END") {
      if (f.length !== 2 || !reader.atEnd() || pendingGroup.length > 0) throw problem("malformed end of the snapshot output");
      if (f[1] === "ok") break;
      throw problem(`the snapshot program stopped (${f[1]})`);
    }
    if (f[0] === "UNSUPPORTED" && f.length === 2) throw new RemoteShellError(unsupported(f[1]!, host), { started: true });
    if (f[0] === "ROOT" && f.length === 2) {
      const rejected = rootFailure(f[1]!, root, host);
      for (const path of send) result.set(path, { path, kind: "other", rejected: { ...rejected, path } });
      return result;
    }
    if (f[0] === "NEAR" && f.length === 3 && wanted && !nearDone && /^[0-9]{1,9}$/.test(f[1]!) && /^[01]$/.test(f[2]!)) {
      nearDone = true;
      nearCut = f[2] === "0";
      continue;
    }
    if (f[0] === "HAVE") {
      noteHostTools(shell, f.slice(1));
      continue;
    }
    if (f[0] === "ROOTID" && f.length === 2 && /^[0-9]{1,20}:[0-9]{1,20}$/.test(f[1]!) && rootId === undefined) {
      rootId = f[1]!;
      continue;
    }
    if (f[0] === "UNSAFE") {
      const u = parseUnsafe(f, send.length, unsafeLines);
      if (u !== null) unsafeLines.push(u);
      if (u === null || seen.has(u.k)) throw problem(`unexpected snapshot line ${JSON.stringify(line.slice(0, 80))}`);
      seen.add(u.k);
      const path = send[u.k]!;
      result.set(path, { path, kind: "other", rejected: unsafeDirectory(path, u.dir, u.ownerName, u.groupName, root) });
      continue;
    }
    if (f[0] === "BULK") {
      // every path at once, before anything else about them; never with hints (the host hashes those one by one)
      if (f.length !== 2 || f[1] !== String(send.length) || seen.size > 0 || shared.size > 0 || held.size > 0) throw problem(`unexpected snapshot line ${JSON.stringify(line.slice(0, 80))}`);
      takeBulk(send.length);
      continue;
    }
    if (f[0] === "GROUP") {
      if (f.length !== 2 || f[1] !== String(pendingGroup.length) || pendingGroup.length === 0) throw problem(`unexpected snapshot line ${JSON.stringify(line.slice(0, 80))}`);
      takeGroup(pendingGroup);
      pendingGroup = [];
      continue;
    }
    const k = f[1] !== undefined && /^[0-9]{1,9}$/.test(f[1]) ? Number(f[1]) : -1;
    if (k < 0 || k >= send.length) throw problem(`unexpected snapshot line ${JSON.stringify(line.slice(0, 80))}`);
    const path = send[k]!;
    if (f[0] === "TRUST" && f.length === 3 && f[2] === "shared") {
      shared.add(k);
    } else if (f[0] === "H" && f.length === 2 && held.has(k) && !proved.has(k) && !seen.has(k)) {
      proved.add(k);
    } else if (f[0] === "L" && f.length === 4 && access !== undefined && FIELD.test(f[2]!) && f[2] !== "-" && FIELD.test(f[3]!) && f[3] !== "-" && !handed.has(k) && !proved.has(k) && !announced.has(k) && !seen.has(k) && !shared.has(k)) {
      handed.set(k, { inode: Number(f[2]), mtime: Number(f[3]) });
    } else if (f[0] === "Z" && f.length === 4 && codecs.includes(f[2] as Codec) && /^[0-9a-f]{64}$/.test(f[3]!) && !announced.has(k) && !seen.has(k)) {
      announced.set(k, { codec: f[2] as Codec, sha256: f[3]! });
    } else if (f[0] === "G" && f.length === 3 && /^[0-9a-f]{64}$/.test(f[2]!) && !grouped.has(k) && !announced.has(k) && !proved.has(k) && !handed.has(k) && !seen.has(k)) {
      grouped.set(k, f[2]!);
    } else if (f[0] === "F" && f.length === 2 && compressed.has(k)) {
      noteBrokenCodec(shell, compressed.get(k)!.codec);
      throw problem(`the host's ${compressed.get(k)!.codec} failed while compressing ${path}; the next read sends it uncompressed`);
    } else if (f[0] === "C" && f.length === 2) {
      changed.add(k);
    } else if (f[0] === "KEPT" && f.length === 2 && !kept.has(k)) {
      kept.add(k);
    } else if (f[0] === "REAP" && f.length === 3 && /^[0-9]{1,4}$/.test(f[2]!) && f[2] !== "0" && !reaped.has(k)) {
      reaped.set(k, Number(f[2]));
    } else if (f[0] === "SPACE" && f.length === 3 && /^(-|[0-9]{1,18})$/.test(f[2]!) && !spaceFree.has(k)) {
      spaceFree.set(k, f[2] === "-" ? null : Number(f[2]));
    } else if (f[0] === "S" && f.length === 9 && KINDS.has(f[2]!) && f.slice(3, 8).every((x) => FIELD.test(x)) && /^[01]$/.test(f[8]!)) {
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
      if (shared.has(k)) snap.directoryTrust = "shared";
      const how = announced.get(k);
      const hand = handed.get(k);
      const group = grouped.get(k);
      if ((proved.has(k) || how !== undefined || hand !== undefined || group !== undefined) && (size === undefined || snap.kind !== "file")) throw problem("a content announced for a path that is not a file");
      if (size !== undefined && proved.has(k)) {
        // The host hashed the file to exactly the content we hold: no bytes follow.
        const mine = held.get(k)!;
        if (size !== mine.bytes.length) throw problem(`the host proved a content of ${path} with another size`);
        snap.bytes = mine.bytes;
        snap.size = size;
        snap.sha256 = mine.hint.sha256;
        snap.transfer = "cached";
      } else if (size !== undefined && group !== undefined) {
        // The bytes come with the rest of the group, at its GROUP line.
        pendingGroup.push({ k, size, sha256: group });
        snap.size = size;
        snap.transfer = "downloaded";
      } else if (size !== undefined && hand !== undefined) {
        // Handed over: this process reads it below, checked against this stat.
        if (shared.has(k) || size > maxFileBytes || snap.mode === undefined) throw problem(`the host handed over ${path} where it may not`);
        toRead.push({ k, identity: { size, inode: hand.inode, mtime: hand.mtime, mode: snap.mode, uid: snap.uid!, gid: snap.gid!, nlink: snap.nlink! } });
        snap.size = size;
        snap.transfer = "downloaded";
      } else if (size !== undefined && how !== undefined) {
        const data = reader.until(endMarker, compressedBound(size));
        if (data === null) throw problem(`the compressed bytes of ${path} did not end within the bound of their size`);
        compressed.set(k, { codec: how.codec, sha256: how.sha256, size, data });
        snap.size = size;
        snap.transfer = "compressed";
      } else if (size !== undefined) {
        if (snap.kind !== "file") throw problem("bytes for a path that is not a file");
        const bytes = reader.bytes(size);
        if (bytes === null) throw problem(`the snapshot output ended inside the bytes of ${path} (it changed size while it was being read, or the output was cut)`);
        if (reader.line() !== `E ${nonce}`) throw problem(`the bytes of ${path} did not end where its size said (it changed size while it was being read?)`);
        snap.bytes = bytes;
        snap.size = size;
        snap.sha256 = sha256Hex(bytes);
        snap.transfer = "downloaded";
      }
      result.set(path, snap);
    } else if (f[0] === "R" && f.length === 4 && /^[a-z_]+$/.test(f[2]!) && /^[0-9]{1,15}$/.test(f[3]!)) {
      const prior = result.get(path);
      const code = f[2]!;
      let rejected: PatchFailure;
      if (code === "limit_exceeded") rejected = tooLarge(path, Number(f[3]), maxFileBytes);
      else if (code === "remote_error") rejected = remoteError(`the host could not read ${path}; retry`, "");
      else if (code === "unpinnable") rejected = unpinnable(path);
      else if (code === "no_space" || code === "read_only_filesystem" || code === "pin_denied") {
        // The pin a shared directory needs could not be written there (sh_faults.ts).
        rejected = writeRefused(code === "pin_denied" ? "permission_denied" : code, {
          root,
          path,
          what: "pin",
          bytesNeeded: null,
          bytesFree: spaceFree.get(k) ?? null,
          again: "send the same request again",
        });
      }
      else if (code === "private") {
        rejected = remoteError(`the private directory this read had just made next to ${path} was renamed or replaced by someone else (another user can write that directory); nothing was changed: retry`, "");
      }
      else rejected = pathRefusal(code, path, Number(f[3]), root);
      if (!seen.has(k)) seen.add(k);
      result.set(path, { ...(prior ?? { path, kind: "other" as FileKind }), rejected: { ...rejected, path } });
    } else {
      throw problem(`unexpected snapshot line ${JSON.stringify(line.slice(0, 80))}`);
    }
  }
  if (seen.size !== send.length) throw problem("the snapshot output missed some paths");
  for (const { k, identity } of toRead) {
    if (changed.has(k)) continue; // refused below
    const bytes = access!.read(localPath(root, send[k]!), identity);
    // Not the file the program measured (changed since, or not this
    // process's file at all): read everything again the usual way.
    if (bytes === null) return withReapWarnings(await readOnce(shell, root, paths, options, false), send, reaped);
    const snap = result.get(send[k]!)!;
    snap.bytes = bytes;
    snap.sha256 = sha256Hex(bytes);
  }
  for (const [k, file] of compressed) {
    if (changed.has(k)) continue; // refused below: what was read may be torn
    const bytes = await unpackFile(file);
    if (bytes === null) {
      noteBrokenCodec(shell, file.codec);
      throw problem(`the compressed bytes of ${send[k]!} did not decompress to the ${file.size} bytes with the SHA-256 the host reported; the next read sends them uncompressed`);
    }
    const snap = result.get(send[k]!)!;
    snap.bytes = bytes;
    snap.sha256 = file.sha256;
  }
  if (bulkMissed.size > 0) {
    // A piece of the bulk block that missed its hash: that file changed
    // between the hash and the read, or one before it changed size and
    // moved it. Those paths are read once more on their own (the same
    // checks); what that read says is their truth — changed again is a
    // conflict. Without a second chance (or a root that is not the same
    // directory any more) they are conflicts.
    const again = bulkRetry ? await readOnce(shell, root, [...bulkMissed].map((k) => send[k]!), options, local, false) : undefined;
    for (const k of bulkMissed) {
      const snap = again?.get(send[k]!);
      if (snap !== undefined && ROOT_IDS.get(again!) === rootId && !changed.has(k)) result.set(send[k]!, snap);
      else changed.add(k);
    }
  }
  for (const k of changed) {
    const path = send[k]!;
    const snap = result.get(path)!;
    const { bytes: _bytes, sha256: _sha, size: _size, transfer: _transfer, ...rest } = snap;
    result.set(path, { ...rest, rejected: { ...pathRefusal("conflict", path, 0, root), path } });
  }
  if (nearDone) {
    for (const path of send) {
      const snap = result.get(path)!;
      if (need.has(path) && snap.kind === "missing" && snap.rejected === undefined) {
        snap.closestPaths = closestPaths(path, nearNames).map((c) => c.path);
        if (nearCut) snap.closestSearchCut = true;
      }
    }
  }
  if (rootId !== undefined) ROOT_IDS.set(result, rootId);
  rememberSnapshots(options.cache, scope, send, result, held);
  for (const k of kept) {
    const snap = result.get(send[k]!);
    if (snap !== undefined) snap.warnings = [...(snap.warnings ?? []), privateKept(dirOf(send[k]!), send[k]!)];
  }
  return withReapWarnings(result, send, reaped);
}

/** A walk record: `NF <path>` NUL newline (a name may hold any byte but NUL). */
const NF_PREFIX = new TextEncoder().encode("NF ");
const RECORD_END = new Uint8Array([0x00, 0x0a]);
const NEAR_RECORD_MAX = NEAR_RECORD_MAX_BYTES;
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** A walked name as a root-relative path, or null when no patch could name it (not UTF-8, or breaking the path rules). */
function nearName(bytes: Uint8Array): string | null {
  let name: string;
  try {
    name = STRICT_UTF8.decode(bytes);
  } catch {
    return null;
  }
  return remotePathProblem(name) === null ? name : null;
}

/**
 * Attach a `leftovers_removed` warning to the snapshot of each path whose
 * directory had private directories of killed snapshot or search
 * programs, which the program removed while making its own
 * (programs/sh_reap.ts). A later exec's result (the hand-over's re-read)
 * gets the warnings of the first, which did the removing.
 */
function withReapWarnings(result: Snapshots, send: readonly string[], reaped: ReadonlyMap<number, number>): Snapshots {
  for (const [k, n] of reaped) {
    const path = send[k]!;
    const snap = result.get(path);
    if (snap === undefined) continue;
    snap.warnings = [...(snap.warnings ?? []), leftoversRemoved(n, dirOf(path), path)];
  }
  return result;
}

/** The root-relative directory of a root-relative path (`""` for the root). */
function dirOf(path: string): string {
  const at = path.lastIndexOf("/");
  return at < 0 ? "" : path.slice(0, at);
}

/** The absolute name of a checked relative path under the (absolute) root. */
function localPath(root: string, path: string): string {
  return root.endsWith("/") ? root + path : `${root}/${path}`;
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
