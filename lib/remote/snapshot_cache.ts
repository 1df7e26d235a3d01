/**
 * `SnapshotCache`: file contents this client has already seen, keyed by
 * SHA-256, so that a snapshot of a file whose content the client holds
 * costs a hash proof on the host instead of a download (SPEC §11.1).
 *
 * What it holds: the bytes of earlier snapshots (`readSnapshots`, also
 * through the MCP server's `read_file`) and the new contents of a plan
 * after its commit succeeded. Nothing else: a cache entry is always bytes
 * whose SHA-256 this process computed itself (or verified when it loaded
 * them from disk), so an entry can never be "wrong bytes for a hash".
 *
 * How it is used: per (host, root, path) the cache remembers the SHA-256 of
 * the content last seen there — a *hint*, nothing more. `readSnapshots`
 * names that SHA-256 (and size) in its request; the host hashes the file it
 * verified inside the root and sends `same` instead of the bytes only when
 * the hashes are equal. The plan is then built on the cached bytes, which
 * by construction have exactly the hash the host computed now. A wrong
 * hint (another host with the same label, a file changed since) costs a
 * download, never a wrong plan; no decision is ever taken on mtime.
 *
 * Bounds: the memory tier keeps at most `maxBytes` of contents (least
 * recently used first out; one content larger than that is not kept), the
 * hints at most {@linkcode MAX_HINTS} paths. Per path the cache also keeps
 * the last {@linkcode SUPERSEDED_PER_PATH} contents it held before it moved
 * on (a commit, a change seen, a delete) — what a caller that read an
 * earlier version needs for the stale-read diagnosis (what changed since
 * your read) — and lets go of an older one at once when no path names it
 * any more, so a long session that keeps editing a few files holds a few
 * versions of each, not every version until `maxBytes`. The optional disk tier (`dir`)
 * keeps at most `maxBytes` too, as files named by their SHA-256 in a
 * directory only this user can use (mode 0700, checked), written through
 * a private temporary file (mode 0600) and renamed into place, and hashed
 * again on every load: a truncated, corrupted or tampered file is a miss
 * (and is removed), never bytes handed to a plan. The hints are kept there
 * too (`paths.json`, same rules), so a later process — the CLI run again —
 * finds them.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { lstat, open, readFile, rename, rm, utimes } from "node:fs/promises";
import { join } from "node:path";
import { sha256Hex } from "../text/sha256.ts";

/**
 * Options of {@linkcode SnapshotCache}.
 *
 * @example
 * ```ts
 * const cache = new SnapshotCache({ maxBytes: 32 * 1024 * 1024, dir: `${process.env.HOME}/.cache/ssh-apply-patch` });
 * ```
 */
export interface SnapshotCacheOptions {
  /** Most bytes of content kept in memory, and again on disk with `dir` (default 128 MiB). */
  maxBytes?: number;
  /**
   * Keep contents on disk too, in this directory (created mode 0700 when
   * missing; an existing one must be a real directory owned by this user
   * that group and others cannot write — one they can only read is closed
   * — else the constructor throws). Only files this user owns, with one
   * link and writable by nobody else, are read from it, and each is hashed
   * again on load.
   */
  dir?: string;
}

/**
 * The counters of a cache, for reports and tests.
 *
 * @example
 * ```ts
 * const { hits, misses, bytes } = cache.stats;
 * console.log(`${hits} proved by hash, ${misses} downloaded after all, ${bytes} bytes held`);
 * ```
 */
export interface SnapshotCacheStats {
  /** Contents in memory, and their bytes. */
  entries: number;
  /** Bytes of those contents. */
  bytes: number;
  /** Contents the host proved unchanged (a snapshot served from the cache). */
  hits: number;
  /** Hinted contents the host had to send after all (changed, or size differed). */
  misses: number;
  /** Contents dropped to stay within `maxBytes` (memory tier). */
  evictions: number;
  /** Disk entries refused on load: their bytes did not hash to their name. */
  rejectedDiskEntries: number;
}

/** Default `maxBytes`: room for a few large files, per cache. */
export const DEFAULT_CACHE_BYTES: number = 128 * 1024 * 1024;
/** Most paths whose last-seen SHA-256 a cache remembers. */
export const MAX_HINTS = 4096;
/**
 * Contents a path held before it moved on that the cache keeps per path
 * (the stale-read diagnosis shows what changed since a read of one of them).
 */
export const SUPERSEDED_PER_PATH = 4;

const SHA = /^[0-9a-f]{64}$/;

/**
 * What the cache remembers about one path.
 *
 * @example
 * ```ts
 * const hint: CacheHint = { sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", size: 4 };
 * ```
 */
export interface CacheHint {
  /** SHA-256 (lowercase hex) of the content last seen at the path. */
  sha256: string;
  /** Its size in bytes. */
  size: number;
}

/**
 * A bounded, content-addressed store of file contents the client has seen.
 * Pass one as the `cache` option of `readSnapshots` and `applyPatch`; share
 * one per session (the MCP server keeps one per connection).
 *
 * @example
 * ```ts
 * const cache = new SnapshotCache({ maxBytes: 64 * 1024 * 1024 });
 * await applyPatch(shell, { root: "/srv/app", patch, cache }); // downloads, then remembers
 * await applyPatch(shell, { root: "/srv/app", patch: next, cache }); // the host proves the hash: no download
 * ```
 */
export class SnapshotCache {
  /** Most bytes kept per tier. */
  readonly maxBytes: number;
  /** The disk tier's directory, when there is one. */
  readonly dir: string | undefined;
  readonly #memory = new Map<string, Uint8Array>();
  #bytes = 0;
  readonly #hints = new Map<string, CacheHint>();
  /** How many hints and superseded slots name each SHA-256 (so a content no path holds any more can be let go). */
  readonly #hintRefs = new Map<string, number>();
  /** Per hint key, the contents it held before, newest first (at most SUPERSEDED_PER_PATH). */
  readonly #superseded = new Map<string, string[]>();
  #disk: Map<string, number> | null = null;
  #diskBytes = 0;
  #pending = new Set<Promise<void>>();
  #chain: Promise<void> = Promise.resolve();
  #hintsDirty = false;
  #hintsWriting: Promise<void> | null = null;
  readonly #stats = { hits: 0, misses: 0, evictions: 0, rejectedDiskEntries: 0 };

  /** An empty cache (with `dir`, loaded from disk); throws `TypeError` for a bad option or an unsafe `dir`. */
  constructor(options: SnapshotCacheOptions = {}) {
    const maxBytes = options.maxBytes ?? DEFAULT_CACHE_BYTES;
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new TypeError("SnapshotCache: maxBytes must be a non-negative integer");
    this.maxBytes = maxBytes;
    if (options.dir !== undefined) {
      if (typeof options.dir !== "string" || options.dir === "") throw new TypeError("SnapshotCache: dir must be a directory path");
      privateDirectory(options.dir);
      this.dir = options.dir;
      this.#loadHints();
    }
  }

  /** Counters and the memory tier's size. */
  get stats(): SnapshotCacheStats {
    return { entries: this.#memory.size, bytes: this.#bytes, ...this.#stats };
  }

  /**
   * Keep `bytes` (copied) and return their SHA-256, computed here.
   *
   * @example
   * ```ts
   * const sha = cache.put(new TextEncoder().encode("hello\n"));
   * ```
   */
  put(bytes: Uint8Array): string {
    if (!(bytes instanceof Uint8Array)) throw new TypeError("SnapshotCache.put: bytes must be a Uint8Array");
    const sha = sha256Hex(bytes);
    this.#store(sha, bytes.slice());
    return sha;
  }

  /**
   * Whether the content with this SHA-256 is in memory (the disk tier is
   * not looked at; see {@linkcode SnapshotCache.load}).
   *
   * @example
   * ```ts
   * cache.has(sha); // true after cache.put(bytes) returned sha
   * ```
   */
  has(sha256: string): boolean {
    return this.#memory.has(sha256);
  }

  /**
   * A copy of the content with this SHA-256 from memory, or `undefined`.
   * Marks it recently used.
   *
   * @example
   * ```ts
   * const bytes = cache.get(sha);
   * ```
   */
  get(sha256: string): Uint8Array | undefined {
    const held = this.#touch(sha256);
    return held?.slice();
  }

  /**
   * The content with this SHA-256 from memory or, failing that, from the
   * disk tier — hashed again as it is read: bytes that do not match their
   * name are removed and reported as a miss. A copy.
   *
   * @example
   * ```ts
   * const bytes = await cache.load(sha); // undefined when neither tier has it
   * ```
   */
  async load(sha256: string): Promise<Uint8Array | undefined> {
    const held = this.#touch(sha256);
    if (held !== undefined) return held.slice();
    if (this.dir === undefined || !SHA.test(sha256)) return undefined;
    const disk = this.#diskIndex();
    if (!disk.has(sha256)) return undefined;
    const file = join(this.dir, sha256);
    let bytes: Uint8Array;
    try {
      // Only a regular file within the bound is read at all.
      const s = await lstat(file);
      if (!ownEntry(s) || s.size > this.maxBytes) throw new Error("not an entry");
      bytes = new Uint8Array(await readFile(file));
    } catch {
      this.#forgetDisk(sha256);
      return undefined;
    }
    if (sha256Hex(bytes) !== sha256) {
      this.#stats.rejectedDiskEntries++;
      this.#forgetDisk(sha256);
      await rm(file, { force: true }).catch(() => {});
      return undefined;
    }
    // Recently used on disk too (the next process orders by mtime).
    const now = new Date();
    await utimes(file, now, now).catch(() => {});
    disk.delete(sha256);
    disk.set(sha256, bytes.length);
    this.#remember(sha256, bytes, false);
    return bytes.slice();
  }

  /**
   * Forget everything in memory (the disk tier and the hints stay).
   *
   * @example
   * ```ts
   * cache.clear();
   * ```
   */
  clear(): void {
    this.#memory.clear();
    this.#bytes = 0;
  }

  /**
   * Resolves when every disk write started so far has finished (writes
   * happen in the background; a failed one only means a later miss).
   *
   * @example
   * ```ts
   * await cache.flush();
   * ```
   */
  async flush(): Promise<void> {
    while (this.#pending.size > 0 || this.#hintsWriting !== null) {
      await Promise.all([...this.#pending, this.#hintsWriting]);
    }
  }

  /**
   * The SHA-256 and size last seen at `path` under `scope` (readSnapshots
   * uses the shell's label and the root): a hint, not a fact.
   *
   * @example
   * ```ts
   * cache.hint("deploy@web1:22\u0000/srv/app", "src/a.ts");
   * ```
   */
  hint(scope: string, path: string): CacheHint | undefined {
    const key = `${scope}\u0000${path}`;
    const hint = this.#hints.get(key);
    if (hint !== undefined) {
      this.#hints.delete(key);
      this.#hints.set(key, hint);
    }
    return hint;
  }

  /**
   * Remember what `path` under `scope` holds now (`null`: nothing — missing,
   * deleted, refused). Used by readSnapshots and applyPatch.
   *
   * @example
   * ```ts
   * cache.see(scope, "src/a.ts", { sha256, size: bytes.length });
   * ```
   */
  see(scope: string, path: string, hint: CacheHint | null): void {
    const key = `${scope}\u0000${path}`;
    const had = this.#hints.get(key);
    if (had !== undefined) this.#unhint(key, had);
    if (hint !== null) {
      this.#setHint(key, { sha256: hint.sha256, size: hint.size });
      while (this.#hints.size > MAX_HINTS) {
        const oldest = this.#hints.keys().next().value!;
        this.#unhint(oldest, this.#hints.get(oldest)!);
        for (const sha of this.#superseded.get(oldest) ?? []) this.#unref(sha);
        this.#superseded.delete(oldest);
      }
    }
    if (had?.sha256 !== hint?.sha256) {
      // The path moved on from that content (a commit, a change seen, a
      // delete). Its last few versions stay (a caller that read one of them
      // gets what changed since); an older one that no path names any more
      // is dead weight — each commit of a file would otherwise leave its
      // previous version in memory until maxBytes pushes it out, and a long
      // session's memory would grow by a file per commit (issue 28 item 6).
      // Only memory: the disk tier keeps its LRU.
      if (had !== undefined) this.#supersede(key, had.sha256);
      this.#saveHints();
    }
  }

  #supersede(key: string, sha256: string): void {
    const list = this.#superseded.get(key) ?? [];
    const at = list.indexOf(sha256);
    if (at >= 0) {
      list.splice(at, 1);
      this.#unref(sha256);
    }
    list.unshift(sha256);
    this.#hintRefs.set(sha256, (this.#hintRefs.get(sha256) ?? 0) + 1);
    while (list.length > SUPERSEDED_PER_PATH) {
      const gone = list.pop()!;
      if (this.#unref(gone) === 0) this.#drop(gone);
    }
    this.#superseded.set(key, list);
  }

  #setHint(key: string, hint: CacheHint): void {
    this.#hints.set(key, hint);
    this.#hintRefs.set(hint.sha256, (this.#hintRefs.get(hint.sha256) ?? 0) + 1);
  }

  #unhint(key: string, hint: CacheHint): void {
    this.#hints.delete(key);
    this.#unref(hint.sha256);
  }

  /** One reference fewer to `sha256`; how many are left. */
  #unref(sha256: string): number {
    const refs = (this.#hintRefs.get(sha256) ?? 1) - 1;
    if (refs > 0) this.#hintRefs.set(sha256, refs);
    else this.#hintRefs.delete(sha256);
    return refs;
  }

  #drop(sha256: string): void {
    const held = this.#memory.get(sha256);
    if (held === undefined) return;
    this.#memory.delete(sha256);
    this.#bytes -= held.length;
  }

  /**
   * Record that the host proved (`true`) or disproved (`false`) a hinted
   * content — the counters of {@linkcode SnapshotCache.stats}.
   *
   * @example
   * ```ts
   * cache.count(true);
   * ```
   */
  count(hit: boolean): void {
    if (hit) this.#stats.hits++;
    else this.#stats.misses++;
  }

  /**
   * Keep bytes whose SHA-256 the caller has just computed from exactly
   * these bytes (readSnapshots, after a download; the plan's new content,
   * checked by the commit). Takes ownership: pass a copy.
   *
   * @example
   * ```ts
   * cache.storeHashed(sha256Hex(copy), copy);
   * ```
   */
  storeHashed(sha256: string, bytes: Uint8Array): void {
    this.#store(sha256, bytes);
  }

  #touch(sha256: string): Uint8Array | undefined {
    const held = this.#memory.get(sha256);
    if (held !== undefined) {
      this.#memory.delete(sha256);
      this.#memory.set(sha256, held);
    }
    return held;
  }

  #store(sha256: string, bytes: Uint8Array): void {
    if (!SHA.test(sha256)) throw new TypeError("SnapshotCache: a SHA-256 is 64 lowercase hex digits");
    this.#remember(sha256, bytes, true);
  }

  #remember(sha256: string, bytes: Uint8Array, toDisk: boolean): void {
    if (bytes.length > this.maxBytes) return;
    const had = this.#memory.get(sha256);
    if (had !== undefined) {
      this.#touch(sha256);
    } else {
      this.#memory.set(sha256, bytes);
      this.#bytes += bytes.length;
      for (const [old, held] of this.#memory) {
        if (this.#bytes <= this.maxBytes) break;
        this.#memory.delete(old);
        this.#bytes -= held.length;
        this.#stats.evictions++;
      }
    }
    if (toDisk && this.dir !== undefined && !this.#diskIndex().has(sha256)) this.#track(() => this.#writeDisk(sha256, bytes));
  }

  /** Disk work runs one step at a time, in order (an eviction never races the write it evicts). */
  #track(work: () => Promise<void>): void {
    const done = this.#chain.then(work).catch(() => {}).finally(() => this.#pending.delete(done));
    this.#chain = done;
    this.#pending.add(done);
  }

  /** The disk entries (name → size), oldest first; scanned once. */
  #diskIndex(): Map<string, number> {
    if (this.#disk !== null) return this.#disk;
    const found: { sha: string; size: number; mtime: number }[] = [];
    for (const name of safeReaddir(this.dir!)) {
      if (!SHA.test(name)) continue;
      try {
        const s = lstatSync(join(this.dir!, name));
        if (ownEntry(s)) found.push({ sha: name, size: s.size, mtime: s.mtimeMs });
      } catch { /* gone meanwhile */ }
    }
    found.sort((a, b) => a.mtime - b.mtime);
    this.#disk = new Map(found.map((f) => [f.sha, f.size]));
    this.#diskBytes = found.reduce((n, f) => n + f.size, 0);
    return this.#disk;
  }

  #forgetDisk(sha256: string): void {
    const disk = this.#diskIndex();
    const size = disk.get(sha256);
    if (size === undefined) return;
    disk.delete(sha256);
    this.#diskBytes -= size;
  }

  async #writeDisk(sha256: string, bytes: Uint8Array): Promise<void> {
    const dir = this.dir!;
    const disk = this.#diskIndex();
    disk.set(sha256, bytes.length);
    this.#diskBytes += bytes.length;
    const victims: string[] = [];
    for (const [old, size] of disk) {
      if (this.#diskBytes <= this.maxBytes) break;
      if (old === sha256) continue;
      disk.delete(old);
      this.#diskBytes -= size;
      victims.push(old);
    }
    for (const old of victims) await rm(join(dir, old), { force: true }).catch(() => {});
    try {
      await writePrivate(dir, sha256, bytes);
    } catch {
      this.#forgetDisk(sha256);
    }
  }

  #loadHints(): void {
    let parsed: unknown;
    try {
      const file = join(this.dir!, "paths.json");
      const s = lstatSync(file);
      if (!ownEntry(s) || s.size > 64 * MAX_HINTS * 8) return;
      parsed = JSON.parse(readFileSync(file, "utf8"));
    } catch {
      return;
    }
    if (!Array.isArray(parsed)) return;
    for (const entry of parsed.slice(-MAX_HINTS)) {
      if (!Array.isArray(entry) || entry.length !== 3) continue;
      const [key, sha, size] = entry as unknown[];
      if (typeof key === "string" && typeof sha === "string" && SHA.test(sha) && Number.isSafeInteger(size) && (size as number) >= 0) {
        const had = this.#hints.get(key);
        if (had !== undefined) this.#unhint(key, had);
        this.#setHint(key, { sha256: sha, size: size as number });
      }
    }
  }

  /** Write the hints file after the current write (at most one waiting). */
  #saveHints(): void {
    if (this.dir === undefined) return;
    this.#hintsDirty = true;
    if (this.#hintsWriting !== null) return;
    const write = async (): Promise<void> => {
      while (this.#hintsDirty) {
        this.#hintsDirty = false;
        const list = [...this.#hints].map(([key, h]) => [key, h.sha256, h.size]);
        await writePrivate(this.dir!, "paths.json", new TextEncoder().encode(JSON.stringify(list))).catch(() => {});
      }
      this.#hintsWriting = null;
    };
    this.#hintsWriting = write();
  }
}

const UID: number | undefined = process.getuid?.();

/**
 * Whether a directory entry may be a cache file: a regular file with one
 * link, owned by this user, that nobody else can write. Entries are hashed
 * again on load anyway; this keeps a file someone else made (or can still
 * change) from ever being read, so no other user can plant entries or hints.
 */
function ownEntry(s: { isFile(): boolean; uid: number; nlink: number; mode: number }): boolean {
  return s.isFile() && s.nlink === 1 && (UID === undefined || s.uid === UID) && (s.mode & 0o022) === 0;
}

/**
 * Make or check the cache directory: a real directory (a symlink is
 * refused), owned by this user, mode 0700. An existing one that group or
 * others can write is refused — someone else may already have put files
 * in it; one they can only read or enter is closed (chmod 0700).
 */
function privateDirectory(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const s = lstatSync(dir);
  if (!s.isDirectory()) throw new TypeError(`SnapshotCache: ${dir} is not a directory (a symlink is not accepted)`);
  if (UID !== undefined && s.uid !== UID) throw new TypeError(`SnapshotCache: ${dir} belongs to uid ${s.uid}, not to this user (${UID}); use a directory of your own`);
  if ((s.mode & 0o022) !== 0) {
    throw new TypeError(`SnapshotCache: ${dir} can be written by other users (mode ${(s.mode & 0o777).toString(8)}), who may have put files in it; use a new directory, or empty it and chmod 700 it`);
  }
  if ((s.mode & 0o077) !== 0) {
    chmodSync(dir, 0o700);
    if ((lstatSync(dir).mode & 0o077) !== 0) throw new TypeError(`SnapshotCache: ${dir} is open to other users and cannot be closed`);
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * Write `bytes` as `dir/name`: into a new private temporary file (mode
 * 0600, created exclusively, never through an existing name), then renamed
 * over `name` — a reader sees the old file or the whole new one.
 */
async function writePrivate(dir: string, name: string, bytes: Uint8Array): Promise<void> {
  const temp = join(dir, `.tmp-${randomBytes(8).toString("hex")}`);
  const handle = await open(temp, "wx", 0o600);
  try {
    await handle.writeFile(bytes);
  } catch (error) {
    await handle.close().catch(() => {});
    await rm(temp, { force: true }).catch(() => {});
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, join(dir, name));
  } catch (error) {
    await rm(temp, { force: true }).catch(() => {});
    throw error;
  }
}
