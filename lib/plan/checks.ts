/**
 * The preconditions of a plan: what must hold of the patch and of each
 * snapshot before any file is planned (SPEC §3 rejections, §4, §6), each
 * failure phrased as the next step for the model.
 *
 * @module
 */
import { failure, listHint, optionHint, readHint, shaHint } from "../failure.ts";
import { parentOf, validatePath } from "../patch/paths.ts";
import { isSha256Hex, sha256Hex } from "../text/sha256.ts";
import { missingFileFailure } from "./not_found.ts";
import type { FileSnapshot, Limits, Patch, PatchFailure, PlanOptions, Snapshots, TextEncodingName } from "../types.ts";

/** Everything a per-op planner needs, resolved once by planPatch. */
export interface PlanContext {
  snapshots: Snapshots;
  options: PlanOptions;
  limits: Limits;
  matching: NonNullable<PlanOptions["matching"]>;
  createParents: boolean;
  excerptLines: number;
  excerptBytes: number;
  /** Caller SHAs, lowercased, by path. */
  expectedSha: Map<string, string>;
  /** How files are decoded and new text encoded (PlanOptions.encoding). */
  encoding: TextEncodingName;
}

/**
 * Re-check what the parser guarantees, because a Patch can be built by hand:
 * lexical path rules, one operation per path, file and chunk limits.
 */
export function checkPatchShape(patch: Patch, ctx: PlanContext): PatchFailure[] {
  const errors: PatchFailure[] = [];
  if (patch.ops.length > ctx.limits.maxFiles) {
    errors.push(
      failure(
        "limit_exceeded",
        `The patch has ${patch.ops.length} file sections; at most ${ctx.limits.maxFiles} are allowed in one patch. Split it into several patches.`,
        { limit: { name: "maxFiles", max: ctx.limits.maxFiles, actual: patch.ops.length } },
      ),
    );
  }
  const seen = new Map<string, number>();
  for (const op of patch.ops) {
    const paths = op.type === "update" && op.moveTo !== undefined ? [op.path, op.moveTo] : [op.path];
    for (const path of paths) {
      const invalid = validatePath(path);
      if (invalid) {
        errors.push({ ...invalid, patchLine: invalid.patchLine ?? op.patchLine });
        continue;
      }
      const first = seen.get(path);
      if (first !== undefined) {
        errors.push(
          failure(
            "duplicate_path",
            `${path} is named by two file sections (patch lines ${first} and ${op.patchLine}). Each path may appear once per patch, as a source or a Move destination; merge the changes into one section or send two patches.`,
            { path, patchLine: op.patchLine },
          ),
        );
      } else {
        seen.set(path, op.patchLine);
      }
    }
    if (op.type === "update" && op.moveTo === op.path) {
      errors.push(
        failure("invalid_patch", `*** Move to: ${op.path} names the file's own path; drop the Move line to edit it in place.`, {
          path: op.path,
          patchLine: op.patchLine,
        }),
      );
    }
    if (op.type === "update" && op.chunks.length === 0) {
      errors.push(
        failure("invalid_patch", `*** Update File: ${op.path} has no chunk. Add at least one chunk: an "@@" line, then context (' '), removed ('-') and added ('+') lines.`, {
          path: op.path,
          patchLine: op.patchLine,
        }),
      );
    }
    if (op.type === "update" && op.chunks.length > ctx.limits.maxChunksPerFile) {
      errors.push(
        failure(
          "limit_exceeded",
          `${op.path} has ${op.chunks.length} chunks; at most ${ctx.limits.maxChunksPerFile} are allowed per file. Split the change into several patches.`,
          {
            path: op.path,
            patchLine: op.patchLine,
            limit: { name: "maxChunksPerFile", max: ctx.limits.maxChunksPerFile, actual: op.chunks.length },
          },
        ),
      );
    }
  }
  return errors;
}

/**
 * Caller SHAs must be well-formed and name a file this patch touches: a typo
 * in a path would otherwise silently drop the precondition the caller asked for.
 */
export function checkExpectedShaKeys(patch: Patch, ctx: PlanContext): PatchFailure[] {
  const errors: PatchFailure[] = [];
  const sources = new Set(patch.ops.map((op) => op.path));
  for (const [path, raw] of Object.entries(ctx.options.expectedSha256 ?? {})) {
    if (typeof raw !== "string" || !isSha256Hex(raw)) {
      const sha = shaHint(path, null);
      errors.push(
        failure(
          "precondition_failed",
          `the expected SHA-256 given for ${path} is not a SHA-256 (64 hex digits): ${JSON.stringify(String(raw)).slice(0, 80)}. Next step: ${sha.says} — the SHA-256 of the whole file.`,
          { path, hints: [sha] },
        ),
      );
      continue;
    }
    if (!sources.has(path)) {
      errors.push(
        failure(
          "precondition_failed",
          `an expected SHA-256 is given for ${path}, but the patch does not update or delete that path, so the precondition could not be checked. Fix that path (it must be the root-relative path of an Update or Delete section) or remove the entry.`,
          { path, expectedSha256: raw.toLowerCase() },
        ),
      );
      continue;
    }
    ctx.expectedSha.set(path, raw.toLowerCase());
  }
  return errors;
}

/** The snapshot of a path; a missing one is a programmer error (read every path first). */
export function snapshotOf(ctx: PlanContext, path: string): FileSnapshot {
  const snap = ctx.snapshots.get(path);
  if (!snap) throw new TypeError(`planPatch: no snapshot for ${JSON.stringify(path)}; read every patch path (and Move destination) first`);
  return snap;
}

/** The failure for a path that must be an existing regular file but is not. */
export function notARegularFile(snap: FileSnapshot, section: string): PatchFailure {
  const path = snap.path;
  if (snap.rejected) return { ...snap.rejected, path: snap.rejected.path ?? path };
  switch (snap.kind) {
    case "missing":
      return missingFileFailure(snap, section === "Update" ? "Update" : "Delete");
    case "symlink":
      return failure(
        "symlink_rejected",
        `${path} is a symbolic link; links are never followed or replaced. Edit the file it points to by that file's own root-relative path, if it is inside the root.`,
        { path, actualState: "symlink" },
      );
    case "directory":
      return failure("not_regular_file", `${path} is a directory, not a file. ${section} works on regular files only; name a file inside it.`, {
        path,
        actualState: "directory",
      });
    default:
      return failure("not_regular_file", `${path} is not a regular file (device, socket or FIFO); it cannot be patched.`, {
        path,
        actualState: "other",
      });
  }
}

/** The failure when the caller's SHA does not match the snapshot, or null. */
export function checkCallerSha(ctx: PlanContext, snap: FileSnapshot): PatchFailure | null {
  const expected = ctx.expectedSha.get(snap.path);
  if (expected === undefined || expected === snap.sha256) return null;
  const read = readHint(snap.path);
  const sha = shaHint(snap.path, null);
  return failure(
    "precondition_failed",
    `${snap.path}: the expected SHA-256 ${expected} is not the current file's (SHA-256 ${snap.sha256}): the file changed since that version was read. Next step: ${read.says}, rebuild the patch against its current content, and ${sha.says}.`,
    { path: snap.path, expectedSha256: expected, actualSha256: snap.sha256 ?? null, actualState: snap.kind, hints: [read, sha] },
  );
}

/** `limit_exceeded` when a file (old or new) is over `maxFileBytes`, else null. */
export function fileTooLarge(ctx: PlanContext, path: string, size: number, what: string): PatchFailure | null {
  if (size <= ctx.limits.maxFileBytes) return null;
  const raise = optionHint("maxFileBytes", size);
  return failure(
    "limit_exceeded",
    `${path}: ${what} is ${size} bytes, over the limit of ${ctx.limits.maxFileBytes} bytes per file. This tool does not handle files that large: split the content, or raise the limit (${raise.says} or more).`,
    { path, limit: { name: "maxFileBytes", max: ctx.limits.maxFileBytes, actual: size }, hints: [raise] },
  );
}

/** Where a new file (Add, Move destination) may be created, or why not. */
export function checkDestination(ctx: PlanContext, path: string, section: string, patchLine: number): PatchFailure | null {
  const snap = snapshotOf(ctx, path);
  if (snap.rejected) return { ...snap.rejected, path: snap.rejected.path ?? path, patchLine };
  if (snap.kind !== "missing") {
    const what =
      snap.kind === "file"
        ? `a file already exists there (${snap.size ?? snap.bytes?.length ?? "?"} bytes, SHA-256 ${snap.sha256})`
        : `a ${snap.kind} already exists there`;
    const next =
      section === "Add"
        ? `Add never overwrites. To change the existing file, use "*** Update File: ${path}" with context lines from its current content (read it first)${
          snap.kind === "file" ? `; to rewrite it whole with these lines, write "*** Replace File: ${path}" in place of the Add header (one rename; mode and owner kept)` : ""
        }.`
        : `A move never overwrites. Choose a destination that does not exist, or delete the existing one in a separate patch first.`;
    return failure("already_exists", `*** ${section === "Add" ? "Add File" : "Move to"}: ${path} — ${what}. ${next}`, {
      path,
      patchLine,
      actualState: snap.kind,
      actualSha256: snap.sha256 ?? null,
      expectedState: "missing",
    });
  }
  if (snap.parentExists === false && !ctx.createParents) {
    const allow = optionHint("createParents", true);
    return failure(
      "not_found",
      `*** ${section === "Add" ? "Add File" : "Move to"}: ${path} — the directory ${parentOf(path) || "."} does not exist, and creating parent directories is turned off. Create files only inside existing directories, or allow it (${allow.says}).`,
      { path, patchLine, actualState: "missing", hints: [allow], closestPaths: [] },
    );
  }
  return null;
}

/** The snapshot SHA-256 of a regular file (computed from its bytes if the snapshot lacks it). */
export function requireSha(snap: FileSnapshot): string {
  if (snap.sha256) return snap.sha256;
  if (snap.bytes) return sha256Hex(snap.bytes);
  throw new TypeError(`planPatch: snapshot of ${snap.path} is a file without bytes or sha256`);
}
