/**
 * planPatch: turn a parsed patch and the snapshots of its paths into a plan —
 * the exact bytes every file will have — or into every failure of the patch.
 *
 * Pure: no I/O, no clock, no randomness. The plan is complete before the
 * remote side changes a byte (SPEC §2, §4, §5).
 *
 * @module
 */
import { failure, warning } from "./failure.ts";
import { unifiedDiff } from "./diff.ts";
import { resolveLimits } from "./limits.ts";
import { locateChunks } from "./locate.ts";
import { isIndentationSensitive } from "./normalize.ts";
import { parentOf, validatePath } from "./paths.ts";
import { isSha256Hex, sha256Hex } from "./sha256.ts";
import { decodeText, lineOf, newFileBytes, renderTextPieces, type TextFile } from "./text.ts";
import type {
  AddFileOp,
  DeleteFileOp,
  FileSnapshot,
  LineEdit,
  Limits,
  OutputLine,
  Patch,
  PatchFailure,
  PlanOptions,
  PlannedFile,
  PlanResult,
  Snapshots,
  UpdateFileOp,
  Warning,
} from "./types.ts";

/** Everything a per-op planner needs, resolved once. */
interface PlanContext {
  snapshots: Snapshots;
  options: PlanOptions;
  limits: Limits;
  matching: NonNullable<PlanOptions["matching"]>;
  createParents: boolean;
  excerptLines: number;
  excerptBytes: number;
  /** Caller SHAs, lowercased, by path. */
  expectedSha: Map<string, string>;
}

type OpResult = { ok: true; file: PlannedFile } | { ok: false; errors: PatchFailure[] };

/**
 * Plan a parsed patch against snapshots of every path it names (sources and
 * move destinations). Returns the plan, or ALL failures of the patch: every
 * failing chunk of every file, not just the first.
 *
 * A path missing from `snapshots` is a programmer error and throws.
 *
 * @example
 * ```ts
 * const parsed = parsePatch(text);
 * if (parsed.ok) {
 *   const result = planPatch(parsed.patch, snapshots, { expectedSha256: { "src/app.ts": sha } });
 *   if (result.ok) console.log(result.plan.files.map((f) => f.diff).join(""));
 *   else console.log(result.errors.map((e) => e.message).join("\n\n"));
 * }
 * ```
 */
export function planPatch(patch: Patch, snapshots: Snapshots, options: PlanOptions = {}): PlanResult {
  if (!patch || !Array.isArray(patch.ops)) throw new TypeError("planPatch: patch must be a parsed Patch");
  if (!(snapshots instanceof Map)) throw new TypeError("planPatch: snapshots must be a Map of path → FileSnapshot");
  const ctx: PlanContext = {
    snapshots,
    options,
    limits: resolveLimits(options.limits),
    matching: options.matching ?? "lenient",
    createParents: options.createParents ?? true,
    excerptLines: options.excerptLines ?? 40,
    excerptBytes: options.excerptBytes ?? 4096,
    expectedSha: new Map(),
  };
  const errors: PatchFailure[] = [];
  const warnings: Warning[] = [];

  errors.push(...checkPatchShape(patch, ctx));
  errors.push(...checkExpectedShaKeys(patch, ctx));

  const files: PlannedFile[] = [];
  for (const op of patch.ops) {
    const result = op.type === "add" ? planAdd(op, ctx) : op.type === "delete" ? planDelete(op, ctx) : planUpdate(op, ctx);
    if (result.ok) files.push(result.file);
    else errors.push(...result.errors);
  }
  if (errors.length > 0) {
    for (const file of files) warnings.push(...file.warnings);
    return { ok: false, errors, warnings };
  }
  return { ok: true, plan: { files, warnings, createParents: ctx.createParents } };
}

/**
 * Re-check what the parser guarantees, because a Patch can be built by hand:
 * lexical path rules, one operation per path, file and chunk limits.
 */
function checkPatchShape(patch: Patch, ctx: PlanContext): PatchFailure[] {
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
        errors.push({ ...invalid, patch_line: invalid.patch_line ?? op.patchLine });
        continue;
      }
      const first = seen.get(path);
      if (first !== undefined) {
        errors.push(
          failure(
            "duplicate_path",
            `${path} is named by two file sections (patch lines ${first} and ${op.patchLine}). Each path may appear once per patch, as a source or a Move destination; merge the changes into one section or send two patches.`,
            { path, patch_line: op.patchLine },
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
          patch_line: op.patchLine,
        }),
      );
    }
    if (op.type === "update" && op.chunks.length === 0) {
      errors.push(
        failure("invalid_patch", `*** Update File: ${op.path} has no chunk. Add at least one chunk: an "@@" line, then context (' '), removed ('-') and added ('+') lines.`, {
          path: op.path,
          patch_line: op.patchLine,
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
            patch_line: op.patchLine,
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
function checkExpectedShaKeys(patch: Patch, ctx: PlanContext): PatchFailure[] {
  const errors: PatchFailure[] = [];
  const sources = new Set(patch.ops.map((op) => op.path));
  for (const [path, raw] of Object.entries(ctx.options.expectedSha256 ?? {})) {
    if (typeof raw !== "string" || !isSha256Hex(raw)) {
      errors.push(
        failure(
          "precondition_failed",
          `expected_sha256 for ${path} is not a SHA-256 (64 hex digits): ${JSON.stringify(String(raw)).slice(0, 80)}. Send the file_sha256 value that read_file returned for that file.`,
          { path },
        ),
      );
      continue;
    }
    if (!sources.has(path)) {
      errors.push(
        failure(
          "precondition_failed",
          `expected_sha256 names ${path}, but the patch does not update or delete that path, so the precondition could not be checked. Fix the path in expected_sha256 (it must be the root-relative path of an Update or Delete section) or remove the entry.`,
          { path, expected_sha256: raw.toLowerCase() },
        ),
      );
      continue;
    }
    ctx.expectedSha.set(path, raw.toLowerCase());
  }
  return errors;
}

function snapshotOf(ctx: PlanContext, path: string): FileSnapshot {
  const snap = ctx.snapshots.get(path);
  if (!snap) throw new TypeError(`planPatch: no snapshot for ${JSON.stringify(path)}; read every patch path (and Move destination) first`);
  return snap;
}

/** The failure for a path that must be an existing regular file but is not. */
function notARegularFile(snap: FileSnapshot, section: string): PatchFailure {
  const path = snap.path;
  if (snap.rejected) return { ...snap.rejected, path: snap.rejected.path ?? path };
  switch (snap.kind) {
    case "missing":
      return failure(
        "not_found",
        section === "Update"
          ? `*** Update File: ${path} — no such file under the root. To create it, use "*** Add File: ${path}" with every line prefixed by "+"; otherwise check the path (read a sibling file or list the directory).`
          : `*** Delete File: ${path} — no such file under the root, so there is nothing to delete (it may already be gone). Remove this section from the patch.`,
        { path, actual_state: "missing" },
      );
    case "symlink":
      return failure(
        "symlink_rejected",
        `${path} is a symbolic link; links are never followed or replaced. Edit the file it points to by that file's own root-relative path, if it is inside the root.`,
        { path, actual_state: "symlink" },
      );
    case "directory":
      return failure("not_regular_file", `${path} is a directory, not a file. ${section} works on regular files only; name a file inside it.`, {
        path,
        actual_state: "directory",
      });
    default:
      return failure("not_regular_file", `${path} is not a regular file (device, socket or FIFO); it cannot be patched.`, {
        path,
        actual_state: "other",
      });
  }
}

/** The failure when the caller's SHA does not match the snapshot, or null. */
function checkCallerSha(ctx: PlanContext, snap: FileSnapshot): PatchFailure | null {
  const expected = ctx.expectedSha.get(snap.path);
  if (expected === undefined || expected === snap.sha256) return null;
  return failure(
    "precondition_failed",
    `${snap.path}: expected_sha256 ${expected} does not match the current file (SHA-256 ${snap.sha256}). The file changed since you read it. Read it again with read_file, rebuild the patch against the current content, and send the new file_sha256 as expected_sha256.`,
    { path: snap.path, expected_sha256: expected, actual_sha256: snap.sha256 ?? null, actual_state: snap.kind },
  );
}

function fileTooLarge(ctx: PlanContext, path: string, size: number, what: string): PatchFailure | null {
  if (size <= ctx.limits.maxFileBytes) return null;
  return failure(
    "limit_exceeded",
    `${path}: ${what} is ${size} bytes, over the maxFileBytes limit of ${ctx.limits.maxFileBytes}. This tool does not handle files that large; split the content or raise the limit in the configuration.`,
    { path, limit: { name: "maxFileBytes", max: ctx.limits.maxFileBytes, actual: size } },
  );
}

/** Where a new file (Add, Move destination) may be created, or why not. */
function checkDestination(ctx: PlanContext, path: string, section: string, patchLine: number): PatchFailure | null {
  const snap = snapshotOf(ctx, path);
  if (snap.rejected) return { ...snap.rejected, path: snap.rejected.path ?? path, patch_line: patchLine };
  if (snap.kind !== "missing") {
    const what =
      snap.kind === "file"
        ? `a file already exists there (${snap.size ?? snap.bytes?.length ?? "?"} bytes, SHA-256 ${snap.sha256})`
        : `a ${snap.kind} already exists there`;
    const next =
      section === "Add"
        ? `Add never overwrites. To change the existing file, use "*** Update File: ${path}" with context lines from its current content (read it first).`
        : `A move never overwrites. Choose a destination that does not exist, or delete the existing one in a separate patch first.`;
    return failure("already_exists", `*** ${section === "Add" ? "Add File" : "Move to"}: ${path} — ${what}. ${next}`, {
      path,
      patch_line: patchLine,
      actual_state: snap.kind,
      actual_sha256: snap.sha256 ?? null,
      expected_state: "missing",
    });
  }
  if (snap.parentExists === false && !ctx.createParents) {
    return failure(
      "not_found",
      `*** ${section === "Add" ? "Add File" : "Move to"}: ${path} — the directory ${parentOf(path) || "."} does not exist, and creating parent directories is turned off for this root. Create files only inside existing directories.`,
      { path, patch_line: patchLine, actual_state: "missing" },
    );
  }
  return null;
}

function planAdd(op: AddFileOp, ctx: PlanContext): OpResult {
  const blocked = checkDestination(ctx, op.path, "Add", op.patchLine);
  if (blocked) return { ok: false, errors: [blocked] };
  if (ctx.expectedSha.has(op.path)) {
    return {
      ok: false,
      errors: [
        failure("precondition_failed", `expected_sha256 names ${op.path}, which this patch adds: a new file has no previous version. Remove the entry.`, {
          path: op.path,
          expected_state: "missing",
        }),
      ],
    };
  }
  const newBytes = newFileBytes(op.lines);
  const tooLarge = fileTooLarge(ctx, op.path, newBytes.length, "the new file");
  if (tooLarge) return { ok: false, errors: [tooLarge] };
  const edits: LineEdit[] = [{ start: 0, end: 0, replacement: op.lines.map((text) => ({ text })) }];
  const warnings: Warning[] = [];
  if (snapshotOf(ctx, op.path).parentExists === false) {
    warnings.push(warning("parents_created", `${parentOf(op.path)}/ does not exist yet; it will be created.`, { path: op.path }));
  }
  return {
    ok: true,
    file: {
      op: "add",
      path: op.path,
      expected: { state: "missing" },
      newBytes,
      newSha256: sha256Hex(newBytes),
      diff: unifiedDiff({
        oldPath: null,
        newPath: op.path,
        oldLines: [],
        oldFinalNewline: false,
        edits,
        newFinalNewline: op.lines.length > 0,
      }),
      hunks: [],
      warnings,
    },
  };
}

function planDelete(op: DeleteFileOp, ctx: PlanContext): OpResult {
  const snap = snapshotOf(ctx, op.path);
  if (snap.kind !== "file" || snap.rejected) return { ok: false, errors: [{ ...notARegularFile(snap, "Delete"), patch_line: op.patchLine }] };
  const shaFailure = checkCallerSha(ctx, snap);
  if (shaFailure) return { ok: false, errors: [shaFailure] };
  if (ctx.options.requireShaForDelete && !ctx.expectedSha.has(op.path)) {
    return {
      ok: false,
      errors: [
        failure(
          "precondition_failed",
          `*** Delete File: ${op.path} — this root requires expected_sha256 for every deleted file, so a delete always names the exact version it removes. Read the file with read_file and send its file_sha256 as expected_sha256 {"${op.path}": "<sha>"}.`,
          { path: op.path, patch_line: op.patchLine, expected_sha256: null },
        ),
      ],
    };
  }
  const sha = requireSha(snap);
  const bytes = snap.bytes ?? new Uint8Array();
  const decoded = decodeText(bytes);
  const diff = decoded.ok
    ? unifiedDiff({
        oldPath: op.path,
        newPath: null,
        oldLines: decoded.file.lines,
        oldFinalNewline: decoded.file.finalNewline,
        edits: [{ start: 0, end: decoded.file.lines.length, replacement: [] }],
        newFinalNewline: false,
      })
    : `diff --git a/${op.path} b/${op.path}\ndeleted file\nBinary files a/${op.path} and /dev/null differ\n`;
  return {
    ok: true,
    file: { op: "delete", path: op.path, expected: { state: "sha256", sha256: sha }, diff, hunks: [], warnings: [] },
  };
}

function requireSha(snap: FileSnapshot): string {
  if (snap.sha256) return snap.sha256;
  if (snap.bytes) return sha256Hex(snap.bytes);
  throw new TypeError(`planPatch: snapshot of ${snap.path} is a file without bytes or sha256`);
}

function planUpdate(op: UpdateFileOp, ctx: PlanContext): OpResult {
  const snap = snapshotOf(ctx, op.path);
  const errors: PatchFailure[] = [];
  if (snap.kind !== "file" || snap.rejected) errors.push({ ...notARegularFile(snap, "Update"), patch_line: op.patchLine });
  if (op.moveTo !== undefined && op.moveTo !== op.path) {
    const blocked = checkDestination(ctx, op.moveTo, "Move", op.patchLine);
    if (blocked) errors.push(blocked);
  }
  if (errors.length > 0) return { ok: false, errors };

  const shaFailure = checkCallerSha(ctx, snap);
  if (shaFailure) return { ok: false, errors: [shaFailure] };
  const sha = requireSha(snap);
  const bytes = snap.bytes;
  if (!bytes) throw new TypeError(`planPatch: snapshot of ${op.path} has no bytes; an Update needs the file content`);
  const tooLarge = fileTooLarge(ctx, op.path, bytes.length, "the file");
  if (tooLarge) return { ok: false, errors: [tooLarge] };

  const decoded = decodeText(bytes);
  if (!decoded.ok) {
    return {
      ok: false,
      errors: [
        failure(
          "invalid_utf8",
          `${op.path} is not valid UTF-8 (first bad byte at offset ${decoded.byteOffset}, line ${decoded.line}). This tool edits UTF-8 text only; use a tool for binary or legacy-encoded files, or convert the file to UTF-8 first.`,
          { path: op.path, line: decoded.line, patch_line: op.patchLine },
        ),
      ],
    };
  }
  const file = decoded.file;
  // The decoded file, not its lines: the matcher scans the flat text, and
  // only the lines chunks touch are ever made into strings.
  const located = locateChunks(file, op.chunks, {
    matching: ctx.matching,
    path: op.path,
    indentationSensitive: isIndentationSensitive(op.moveTo ?? op.path),
    excerptLines: ctx.excerptLines,
    excerptBytes: ctx.excerptBytes,
  });
  if (located.errors.length > 0) return { ok: false, errors: located.errors };

  const edits: LineEdit[] = located.placements.map((placement) => {
    const replacement: OutputLine[] = [];
    let fileLine = placement.start;
    for (const line of placement.body) {
      if (line.kind === "context") replacement.push({ keep: fileLine++ });
      else if (line.kind === "delete") fileLine++;
      else replacement.push({ text: line.text });
    }
    if (fileLine !== placement.end) {
      throw new Error(`planPatch: internal error, chunk ${placement.index} of ${op.path} spans ${fileLine - placement.start} lines, placement says ${placement.end - placement.start}`);
    }
    return { start: placement.start, end: placement.end, replacement };
  });
  edits.sort((a, b) => a.start - b.start || a.end - b.end);

  const { bytes: newBytes, pieces } = renderTextPieces(file, edits);
  const newTooLarge = fileTooLarge(ctx, op.moveTo ?? op.path, newBytes.length, "the patched file");
  if (newTooLarge) return { ok: false, errors: [newTooLarge] };
  const warnings = [...located.warnings];
  if (op.moveTo !== undefined && snapshotOf(ctx, op.moveTo).parentExists === false) {
    warnings.push(warning("parents_created", `${parentOf(op.moveTo)}/ does not exist yet; it will be created.`, { path: op.moveTo }));
  }
  return {
    ok: true,
    file: {
      op: op.moveTo !== undefined ? "move" : "update",
      path: op.path,
      ...(op.moveTo !== undefined ? { moveTo: op.moveTo, expectedDestination: { state: "missing" as const } } : {}),
      expected: { state: "sha256", sha256: sha },
      newBytes,
      newSha256: sha256Hex(newBytes),
      pieces,
      diff: unifiedDiff({
        oldPath: op.path,
        newPath: op.moveTo ?? op.path,
        oldLines: { length: file.eols.length, at: (i: number) => lineOf(file, i) },
        oldFinalNewline: file.finalNewline,
        edits,
        newFinalNewline: endsWithNewline(newBytes, file),
      }),
      hunks: located.placements.map((p) => ({ index: p.index, line: p.start + 1, tier: p.tier })),
      warnings,
    },
  };
}

/** Whether rendered bytes end with a line ending (the diff's "\ No newline" marker needs it). */
function endsWithNewline(bytes: Uint8Array, file: TextFile): boolean {
  const min = file.bom ? 3 : 0;
  if (bytes.length <= min) return false;
  const last = bytes[bytes.length - 1];
  return last === 0x0a || last === 0x0d;
}
