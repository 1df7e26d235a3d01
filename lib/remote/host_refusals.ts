/**
 * Failures the host's file system or lock holders cause (SPEC §7 round
 * 2), each told as what it is: `locked` naming the lock really held and
 * whose it is; `no_space` with the directory, the bytes needed and those
 * free; `read_only_filesystem`; `permission_denied` only when permissions
 * refused it (with the sticky-directory case said plainly).
 *
 * @module
 */
import { failure, reconcileHint } from "../failure.ts";
import type { LockHolder, PatchFailure } from "../types.ts";
import { lockDirName } from "./manifest.ts";
import type { ProgramOutput } from "./protocol.ts";

/** Where the reply's `LOCKED` line came from. */
export type LockedProgram = "commit" | "reconcile";

/**
 * The lock a program waited for: its root-relative name and holder.
 *
 * @example
 * ```ts
 * lockHolder({ k: 0, age: 3, uid: 0, pid: 42, host: "web1", op: "op2", covers: 1 }, "a.txt", "op1");
 * ```
 */
export function lockHolder(locked: NonNullable<ProgramOutput["locked"]>, path: string, operationId: string): LockHolder {
  let name: string;
  if (locked.k === "op") {
    name = `.sap-lock-op-${operationId}`;
  } else {
    const parts = path.split("/");
    const covers = Math.min(Math.max(1, locked.covers), parts.length);
    const dir = parts.slice(0, parts.length - covers).join("/");
    const lock = lockDirName(parts.slice(parts.length - covers).join("/"));
    name = dir === "" ? lock : `${dir}/${lock}`;
  }
  return {
    kind: locked.k === "op" ? "operation" : "path",
    name,
    ageSeconds: Math.max(0, locked.age),
    uid: locked.uid,
    pid: locked.pid,
    host: locked.host,
    operationId: locked.op,
  };
}

/**
 * A `locked` failure that names the lock really held and whose it is.
 *
 * @example
 * ```ts
 * lockedFailure(holder, "a.txt", 10_000, "op1", "commit").message;
 * ```
 */
export function lockedFailure(holder: LockHolder, path: string | undefined, waitMs: number, operationId: string, program: LockedProgram): PatchFailure {
  const held = `held for ${holder.ageSeconds} s; waited ${waitMs} ms`;
  const by = holder.pid !== null
    ? `process ${holder.pid}${holder.host !== null ? ` on ${holder.host}` : ""}`
    : holder.uid !== null
    ? `a process of uid ${holder.uid} (another user's lock: its owner is never read)`
    : "a process that could not be identified";
  const nothing = program === "commit" ? "Nothing was written." : "Nothing was changed.";
  let message: string;
  if (holder.kind === "operation") {
    // Only another run of the same operation id takes its operation lock.
    const settle = reconcileHint(operationId);
    message = program === "reconcile"
      ? `operation ${operationId} is still running on the host: ${by} holds its operation lock ${holder.name} (${held}). ${nothing} Its commit has not finished (a dropped connection does not stop it): ${settle.says} again in a few seconds.`
      : `another run of operation ${operationId} is still in progress: ${by} holds its operation lock ${holder.name} (${held}). ${nothing} Wait for it, then ${settle.says} to learn its outcome; do not reuse an operation id for a different change.`;
    return failure("locked", message, { ...(path !== undefined ? { path } : {}), operationId, lock: holder, hints: [settle] });
  }
  const whose = holder.operationId === operationId
    ? `this same operation (${operationId})`
    : holder.operationId !== null
    ? `operation ${holder.operationId}`
    : "another operation";
  const still = holder.operationId === operationId && program === "reconcile"
    ? "its commit is still running"
    : "it is still running";
  message = `${path ?? "a file"} is locked by ${whose}: ${by} holds ${holder.name} (${held}); ${still}. ${nothing} ` +
    (program === "reconcile" ? `So ${reconcileHint(operationId).says} again in a few seconds.` : "Retry in a few seconds.");
  return failure("locked", message, { ...(path !== undefined ? { path } : {}), operationId, lock: holder });
}

/** The file-system classes a program reports (`FAIL <class>`, `WHY i <class>`). */
export type WriteRefusal = "no_space" | "read_only_filesystem" | "permission_denied";

/** Whether a program's failure class is one of {@linkcode WriteRefusal}. */
export function isWriteRefusal(code: string): code is WriteRefusal {
  return code === "no_space" || code === "read_only_filesystem" || code === "permission_denied";
}

/** What a write refusal is about. */
export interface WriteRefusalContext {
  root: string;
  /** The directory the write was refused in, when it is not the path's own (a program's temporary directory). */
  directory?: string;
  /** The patched path it happened for, if known. */
  path?: string;
  /** What could not be written: lock, stage, blob, backup, journal, rename, link, mkdir, pin, tmp, … */
  what: string;
  /** Bytes this commit writes at once (uploaded contents and new files); null: not known (reconcile writes only locks). */
  bytesNeeded: number | null;
  /** Free bytes the host reported, if any. */
  bytesFree: number | null;
  operationId?: string;
  /** The directory is sticky and the file someone else's (a rename refused). */
  sticky?: boolean;
  /** The step that failed was undone: "nothing was changed" is true (it always is before step 5). */
  undone?: string;
  /**
   * The next step once the cause is gone, in the library's words
   * (default "send the same request again"; reconcile: "call reconcile
   * again …", its hint's `says`).
   */
  again?: string;
}

const WHAT: Record<string, string> = {
  lock: "its lock",
  stage: "the new content",
  blob: "the uploaded contents",
  backup: "the backup of the old version",
  journal: "the commit's journal",
  rename: "the renamed file",
  link: "the new file",
  mkdir: "a missing parent directory",
  // the read-only programs write only these (snapshot_program.ts, search_program.ts)
  pin: "the private hard link through which a file in a directory other users can write is read",
  tmp: "the search's temporary files for its pattern and grep's output",
};

function mib(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${bytes} bytes`;
}

/**
 * The failure of a write the host refused: no space, a read-only file
 * system, or permissions (a sticky directory said so).
 *
 * @example
 * ```ts
 * writeRefused("no_space", { root: "/srv", path: "a.txt", what: "stage", bytesNeeded: 4096, bytesFree: 0 }).code; // "no_space"
 * ```
 */
export function writeRefused(code: WriteRefusal, ctx: WriteRefusalContext): PatchFailure {
  const dirPart = ctx.path !== undefined && ctx.path.includes("/") ? ctx.path.slice(0, ctx.path.lastIndexOf("/")) : "";
  const directory = ctx.directory ?? (dirPart === "" ? ctx.root : `${ctx.root.replace(/\/+$/, "")}/${dirPart}`);
  const what = WHAT[ctx.what] ?? "temporary files";
  const nothing = ctx.undone ?? "nothing was changed";
  const again = ctx.again ?? "send the same request again";
  const fields = { ...(ctx.path !== undefined ? { path: ctx.path } : {}), ...(ctx.operationId !== undefined ? { operationId: ctx.operationId } : {}) };
  if (code === "no_space") {
    const free = ctx.bytesFree === null ? "" : `, ${mib(ctx.bytesFree)} free`;
    return failure(
      "no_space",
      `the file system of ${directory} on the host is full (writing ${what} failed: no space left${free}${ctx.bytesNeeded === null ? "" : `; this commit needs about ${mib(ctx.bytesNeeded)} there`}); ${nothing}. Free space there (or a quota), then ${again}.`,
      { ...fields, retryable: true, noSpace: { directory, bytesNeeded: ctx.bytesNeeded, bytesFree: ctx.bytesFree } },
    );
  }
  if (code === "read_only_filesystem") {
    return failure(
      "read_only_filesystem",
      `${directory} is on a read-only file system on the host (writing ${what} failed); ${nothing}. Nothing can be written there until it is mounted read-write: ask the operator${ctx.again === undefined ? ", or patch files elsewhere" : `, then ${again}`}.`,
      { ...fields, retryable: false },
    );
  }
  if (ctx.sticky === true) {
    return failure(
      "permission_denied",
      `${ctx.path ?? "the file"} belongs to another user and its directory ${directory} is sticky (mode +t, like /tmp): only that user, the directory's owner or root may replace, move or remove it, even though the remote user may write the file; ${nothing}. Patch it as its owner or with sudo.`,
      { ...fields, retryable: false },
    );
  }
  return failure(
    "permission_denied",
    `the remote user may not write in ${directory} (needed for ${what}); ${nothing}. Ask the operator for write access to that directory${ctx.again === undefined ? ", or use a root the remote user can write" : `, then ${again}`}.`,
    { ...fields, retryable: false },
  );
}
