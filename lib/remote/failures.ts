/**
 * Failure and warning values of the remote layer, each message a recovery
 * instruction for a model (SPEC §5.4): what was expected, what is there
 * now, the next step.
 *
 * @module
 */
import { failure, optionHint, reconcileHint, warning } from "../failure.ts";
import type { ExpectedState, PatchFailure, PathOutcome, PathState, ReconcileTicket, UnsafeDirectory, Warning, WarningCode } from "../types.ts";
import { plannedShas } from "./plan_shas.ts";
import type { RemoteKind } from "./protocol.ts";

const TOOLS: Record<string, string> = {
  sha256: "a SHA-256 tool (sha256sum, shasum -a 256 or openssl dgst -sha256)",
  stat: "stat (GNU/BusyBox stat -c or BSD stat -f)",
  "head-c": "head -c",
  "tail-c": "tail -c +N",
  dd: "dd",
  "date-s": "date +%s",
  mktemp: "mktemp -d",
  "mv-T": "mv -T (rename onto a name, never into a directory: GNU coreutils or BusyBox mv, or gmv)",
  link: "link (or ln -T): a hard link that never replaces",
  readlink: "readlink (to check the directories a symlinked root goes through)",
  id: "id -u",
};

function short(sha: string | null | undefined): string {
  return sha ? sha.slice(0, 12) : "none";
}

function componentOf(path: string, depth: number): string {
  return depth > 0 ? path.split("/").slice(0, depth).join("/") : path;
}

/**
 * A §6 refusal found on the remote side (snapshot or commit time).
 *
 * @example
 * ```ts
 * pathRefusal("symlink_rejected", "a/link/f.txt", 2, "/srv/app");
 * ```
 */
export function pathRefusal(code: string, path: string, depth: number, root: string): PatchFailure {
  const part = componentOf(path, depth);
  switch (code) {
    case "symlink_rejected":
      return failure(
        "symlink_rejected",
        depth > 0
          ? `${part} (a directory in the path ${path}) is a symbolic link; paths through symlinks are refused so that a patch cannot reach outside the root ${root}. Use the real path of the file below the root instead.`
          : `${path} is a symbolic link; symlinks are never read or replaced (that could reach outside the root ${root}). Patch the file it points to by its real path below the root instead.`,
        { path, actualState: "symlink" },
      );
    case "path_outside_root":
      return failure(
        "path_outside_root",
        `the directory of ${path} resolves outside the root ${root}. Use a path whose directories are real directories inside the root.`,
        { path },
      );
    case "invalid_path":
      return failure(
        "invalid_path",
        `${path} cannot exist: ${part} is not a directory on the host. Use a different path (or delete/move ${part} first in a separate patch).`,
        { path },
      );
    case "permission_denied":
      return failure(
        "permission_denied",
        depth > 0
          ? `the remote user cannot enter ${part}, so ${path} cannot be read or written. Ask the operator for access, or patch files elsewhere.`
          : `the remote user cannot read ${path}. Ask the operator for access, or patch a file you can read.`,
        { path, retryable: false },
      );
    case "not_found": {
      const allow = optionHint("createParents", true);
      return failure(
        "not_found",
        `the directory of ${path} does not exist and creating parent directories is turned off. Create the directory first, or allow it (${allow.says}).`,
        { path, hints: [allow], closestPaths: [] },
      );
    }
    case "conflict":
      return failure(
        "conflict",
        `${path} changed while it was being read. Read it again and rebuild the patch against its current content.`,
        { path },
      );
    default:
      return failure("remote_error", `the host could not examine ${path} (${code}). Retry; if it persists, check the file on the host.`, {
        path,
        retryable: true,
      });
  }
}

/**
 * A path over the size limit (snapshot time).
 *
 * @example
 * ```ts
 * tooLarge("big.log", 2_000_000_000, 134217728);
 * ```
 */
export function tooLarge(path: string, size: number, max: number): PatchFailure {
  const raise = optionHint("maxFileBytes", size);
  return failure(
    "limit_exceeded",
    `${path} is ${size} bytes, over the limit of ${max} bytes for files this tool reads and rewrites. Edit it with another tool, or raise the limit (${raise.says} or more).`,
    { path, limit: { name: "maxFileBytes", max, actual: size }, hints: [raise] },
  );
}

/**
 * The root itself is unusable.
 *
 * @example
 * ```ts
 * rootFailure("missing", "/srv/app", "deploy@web1:22");
 * ```
 */
export function rootFailure(reason: string, root: string, host: string): PatchFailure {
  if (reason === "unstable" || reason === "changed") {
    return failure(
      "conflict",
      reason === "changed"
        ? `the root ${root} on ${host} is no longer the directory the files were read from (it was replaced or moved since); nothing was written. Read the files again; if this repeats, someone who can write a directory above the root is swapping it.`
        : `the root ${root} on ${host} changed while its path was being checked (a directory on the way was replaced); nothing was read or written. Retry; if this repeats, someone who can write a directory above the root is swapping it.`,
      { retryable: true },
    );
  }
  const what = reason === "missing"
    ? "does not exist"
    : reason === "not_a_directory"
    ? "is not a directory"
    : "cannot be entered by the remote user";
  const message = `the root ${root} ${what} on ${host}. Check the root configuration; nothing was read or written.`;
  return reason === "permission_denied"
    ? failure("permission_denied", message, { retryable: false })
    : failure("not_found", message, { retryable: false, closestPaths: [] });
}

const REASONS: Record<UnsafeDirectory["reason"], (d: UnsafeDirectory, owner: string, group: string) => string> = {
  owner: (_d, owner) => `it belongs to ${owner}, who can change its permissions and entries at any time`,
  group: (d, _o, group) =>
    d.writers.includes("?")
      ? `it is writable by the group ${group}, whose members cannot all be known on this host (users and groups come from a directory service)`
      : `it is writable by the group ${group}, which has other members (${d.writers.replace(/^group [^:]*: /, "")})`,
  other: () => "it is writable by every user",
  acl: (_d, _o, group) => `it is writable by the group ${group} and has an ACL, which may let other users write it too`,
  unpinnable: () => "it is shared",
};

/**
 * A directory that users other than the remote user and root can write,
 * on the way to `path` or above the root (SPEC §6.1), under the default
 * `sharedDirectories: "refuse"`. `ownerName` / `groupName` are the host's
 * names (`-` unknown).
 *
 * @example
 * ```ts
 * unsafeDirectory("up/a.txt", { path: "/srv/app/up", mode: "2775", uid: 0, gid: 33, reason: "group", writers: "group www-data: www-data" }, "root", "www-data", "/srv/app");
 * ```
 */
export function unsafeDirectory(path: string | undefined, dir: UnsafeDirectory, ownerName: string, groupName: string, root: string): PatchFailure {
  const owner = ownerName === "-" || ownerName === "?" ? `uid ${dir.uid}` : `${ownerName} (uid ${dir.uid})`;
  const group = groupName === "-" || groupName === "?" ? `gid ${dir.gid}` : `${groupName} (gid ${dir.gid})`;
  const where = dir.path === root || path === undefined
    ? ""
    : dir.path.length < root.length || !dir.path.startsWith(root)
    ? `, above the root ${root},`
    : ` on the way to ${path}`;
  const allow = optionHint("sharedDirectories", "allow");
  if (path !== undefined && dir.path !== root && (dir.path.length < root.length || !dir.path.startsWith(root))) {
    // Above the root: whoever writes it can put another directory at the
    // root's path at any moment, so no policy reads or writes below it.
    const trust = optionHint("trustRootAncestors", true);
    return failure(
      "unsafe_directory",
      `the directory ${dir.path}, above the root ${root}, (mode ${dir.mode}, owner ${owner}, group ${group}) can be written by users other than the remote user and root: ${REASONS[dir.reason](dir, owner, group)}. Any of them can rename the root and put another directory (or a link to one) at its path between two operations, so the tool refuses this root under every sharedDirectories policy; nothing was read or written. Next step: fix that directory's permissions or owner (or set its sticky bit), or choose a root whose parents only the remote user and root can write. If that is truly intended, ${trust.says} with ${allow.says} accepts it: every directory is then handled as shared and each program checks that the root is still the very directory it started with.`,
      { path, unsafeDirectory: dir, retryable: false, hints: [trust, allow] },
    );
  }
  return failure(
    "unsafe_directory",
    `the directory ${dir.path}${where} (mode ${dir.mode}, owner ${owner}, group ${group}) can be written by users other than the remote user and root: ${REASONS[dir.reason](dir, owner, group)}. Someone there could swap its entries for links while this tool works in it, so it refuses to read or write through it (as sudoedit and OpenSSH's StrictModes do); nothing was read or written. If nobody else should write there, fix its permissions or owner. If sharing it is intended, ${allow.says} accepts the risk for this root: the tool still never follows, opens or writes anything there but the patched files themselves, yet those users can still replace the files right after they are written, make a commit fail, and see the new files.`,
    { ...(path !== undefined ? { path } : {}), unsafeDirectory: dir, retryable: false, hints: [allow] },
  );
}

/**
 * The directory of an existing file that an update or move would replace
 * has a default ACL naming users or groups: the new version, made there,
 * would inherit it (chmod only masks such entries) and so grant access the
 * current file does not (SPEC §6.1: never more access for the new version
 * than the old one had, under either policy). Nothing was changed.
 * `dir` is the directory as the program described it (`reason: "acl"`).
 *
 * @example
 * ```ts
 * defaultAcl("up/a.txt", { path: "/srv/app/up", mode: "0755", uid: 1001, gid: 1001, reason: "acl", writers: "-" }, "alice", "alice");
 * ```
 */
export function defaultAcl(path: string, dir: UnsafeDirectory, ownerName: string, groupName: string): PatchFailure {
  const owner = ownerName === "-" || ownerName === "?" ? `uid ${dir.uid}` : `${ownerName} (uid ${dir.uid})`;
  const group = groupName === "-" || groupName === "?" ? `gid ${dir.gid}` : `${groupName} (gid ${dir.gid})`;
  const details: UnsafeDirectory = { ...dir, reason: "acl", writers: "users and groups named in its default ACL" };
  return failure(
    "unsafe_directory",
    `the directory ${dir.path} (mode ${dir.mode}, owner ${owner}, group ${group}) has a default ACL: every file made there inherits its entries, so the new version of ${path} would give the users or groups it names access that the current file does not grant (changing the mode cannot take it away); nothing was changed. Next step: the directory's owner removes the default ACL (\`setfacl -k ${dir.path}\`), or edit the file another way.`,
    { path, unsafeDirectory: details, retryable: false },
  );
}

/**
 * A file in a shared directory (accepted with `sharedDirectories:
 * "allow"`) that cannot be pinned for a safe read or commit.
 *
 * @example
 * ```ts
 * unpinnable("up/a.txt");
 * ```
 */
export function unpinnable(path: string): PatchFailure {
  return failure(
    "unsafe_directory",
    `${path} is in a directory other users can write, and the remote user may not hard-link it there (fs.protected_hardlinks refuses a link to another user's file, or the directory is not writable by the remote user), which is how this tool reads and replaces files safely in a shared directory; nothing was read or written. Patch it as a user who owns it (or with sudo), or move it to a directory only trusted users can write.`,
    { path, retryable: false },
  );
}

/**
 * A missing remote tool.
 *
 * @example
 * ```ts
 * unsupported("sha256", "local");
 * ```
 */
export function unsupported(tool: string, host: string): PatchFailure {
  const name = TOOLS[tool] ?? tool;
  return failure(
    "remote_unsupported",
    `${host} lacks ${name}, which this tool needs; nothing was changed. Install it on the host (coreutils or busybox provide it) or use another host.`,
    { tool: name },
  );
}

/**
 * A path whose state at commit time is not what the plan was built on.
 *
 * @example
 * ```ts
 * conflict("a.txt", { state: "sha256", sha256: "ab…" }, "file", "cd…", "op1");
 * ```
 */
export function conflict(
  path: string,
  expected: ExpectedState,
  kind: RemoteKind,
  sha: string | null,
  operationId: string,
): PatchFailure {
  // a file without a hash: not read by name (its directory is shared), or
  // it kept being renamed or replaced while the commit pinned it
  const now = kind === "file"
    ? sha !== null
      ? `a file with sha256 ${short(sha)}`
      : expected.state === "missing"
      ? "a file"
      : "a file that was renamed, replaced or changed while it was being checked (its content could not be read safely)"
    : kind === "missing"
    ? "nothing (missing)"
    : `a ${kind}`;
  const was = expected.state === "missing" ? "missing" : `sha256 ${short(expected.sha256)}`;
  return failure(
    "conflict",
    `${path} changed after it was read: expected ${was}, found ${now}. Nothing was written. Read the file again and rebuild the patch against its current content.`,
    {
      path,
      expectedState: expected.state,
      expectedSha256: expected.state === "sha256" ? expected.sha256 : null,
      actualSha256: kind === "file" ? sha : null,
      actualState: (kind === "unknown" ? "other" : kind) as PathState,
      operationId,
    },
  );
}

/**
 * Another operation holds a lock past the bounded wait.
 *
 * @example
 * ```ts
 * locked("a.txt", 3, 10_000, "op1");
 * ```
 */
export function locked(path: string, ageSeconds: number, waitMs: number, operationId: string): PatchFailure {
  return failure(
    "locked",
    `${path} is locked by another operation (lock held for ${Math.max(0, ageSeconds)} s; waited ${waitMs} ms). Nothing was written. Retry in a few seconds.`,
    { path, operationId },
  );
}

/**
 * The program ran but reported an unexpected error; nothing was changed.
 *
 * @example
 * ```ts
 * remoteError("the stage of a.txt did not match its SHA-256", "", "op1");
 * ```
 */
export function remoteError(what: string, stderr: string, operationId?: string): PatchFailure {
  const detail = stderr.trim() ? ` Remote stderr: ${stderr.trim().slice(0, 400)}` : "";
  return failure("remote_error", `${what}.${detail}`, {
    retryable: true,
    ...(operationId ? { operationId } : {}),
  });
}

/**
 * The commit may or may not have been applied.
 *
 * @example
 * ```ts
 * outcomeUnknown(reconcileTicket(plan, "op1"), "the connection closed");
 * ```
 */
export function outcomeUnknown(ticket: ReconcileTicket, cause: string): PatchFailure {
  const operationId = ticket.operationId;
  // The whole next-step sentence is the hint's span: a front end that
  // reconciles by itself replaces it with the verdict (SPEC §5.4 round 2).
  const settle = reconcileHint(
    operationId,
    `Do not resend it yet: call reconcile with operation id ${operationId} (it finishes or undoes the operation and reports each file as applied, not_applied or diverged), then act on that.`,
  );
  return failure(
    "outcome_unknown",
    `${cause}, while the commit may have been changing files: the patch may be fully, partly or not applied. ${settle.says}`,
    { operationId, planned: plannedShas(ticket), reconcile: ticket, retryable: false, hints: [settle] },
  );
}

/**
 * A finalize failure whose rollback did not restore everything.
 *
 * @example
 * ```ts
 * partialApply(reconcileTicket(plan, "op1"), outcomes, "renaming b.txt failed");
 * ```
 */
export function partialApply(ticket: ReconcileTicket, outcomes: PathOutcome[], cause: string): PatchFailure {
  const operationId = ticket.operationId;
  const listed = outcomes.map((o) => `${o.path}: ${o.state}`).join(", ");
  const settle = reconcileHint(operationId, `To retry the restore and remove leftovers, call reconcile with operation id ${operationId}.`);
  return failure(
    "partial_apply",
    `${cause}, and restoring the files already changed failed: the batch is partly applied (${listed}). Read these files, then repair them with a new patch. ${settle.says}`,
    { operationId, outcomes, reconcile: ticket, retryable: false, hints: [settle] },
  );
}

const WARNING_TEXT: Partial<Record<WarningCode, (path: string, detail: string) => string>> = {
  owner_not_preserved: (p, d) =>
    `${p}: the new version could not be given the previous owner ${d} (the remote user may not chown); it now belongs to the remote user.`,
  mode_not_preserved: (p, d) => `${p}: the previous mode ${d} could not be set on the new version.`,
  hard_link_broken: (p, d) =>
    `${p} had ${d} hard links; it was replaced by rename, so its other names still show the old content.`,
  acl_or_xattr_not_preserved: (p) =>
    `${p} has an ACL or extended attributes; they were not copied to the new version.`,
  stale_lock_broken: (p, d) => `a stale lock on ${p} (${d} s old, its owner gone) was broken.`,
};

/**
 * A warning reported by a program, or null for an unknown code.
 *
 * @example
 * ```ts
 * remoteWarning("hard_link_broken", "a.txt", "2", "op1");
 * ```
 */
export function remoteWarning(code: string, path: string | null, detail: string, operationId: string): Warning | null {
  if (code === "cleanup_incomplete") {
    const settle = reconcileHint(operationId);
    return warning(
      "cleanup_incomplete",
      `some temporary .sap-${operationId} files or locks could not be removed; ${settle.says} to remove them.`,
      { hints: [settle] },
    );
  }
  const text = WARNING_TEXT[code as WarningCode];
  if (!text || path === null) return null;
  return warning(code as WarningCode, text(path, detail), { path });
}
