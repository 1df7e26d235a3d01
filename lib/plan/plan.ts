/**
 * Layer `lib/plan/` (pure, above `lib/match/`): a parsed patch plus snapshots
 * → a plan with every file's exact new bytes, its preconditions
 * (`checks.ts`) and the read side of the tool pair (`read_window.ts`). It may
 * import `lib/match/`, `lib/patch/`, `lib/text/`, `lib/types.ts`,
 * `lib/failure.ts` (no `node:` module); nothing here does I/O.
 *
 * This file: planPatch: turn a parsed patch and the snapshots of its paths into a plan —
 * the exact bytes every file will have — or into every failure of the patch.
 *
 * Pure: no I/O, no clock, no randomness. The plan is complete before the
 * remote side changes a byte (SPEC §2, §4, §5).
 *
 * @module
 */
import { asFailures, failure, readHint, shaHint, warning } from "../failure.ts";
import { unifiedDiff, unifiedDiffOfLines } from "../text/diff.ts";
import { resolveLimits } from "../patch/limits.ts";
import { locateChunks } from "../match/locate.ts";
import { foldFailures, FULL_FAILURES } from "./fold_failures.ts";
import { diagnoseChunkFailures, guessedIndentation } from "./chunk_diagnoses.ts";
import { resentAdd, resentMove, resentUpdate } from "./resend.ts";
import { staleButApplies } from "./stale_read.ts";
import { isIndentationSensitive } from "../match/normalize.ts";
import { parentOf } from "../patch/paths.ts";
import {
  checkCallerSha,
  checkDestination,
  checkExpectedShaKeys,
  checkPatchShape,
  fileTooLarge,
  notARegularFile,
  type PlanContext,
  requireSha,
  snapshotOf,
} from "./checks.ts";
import { sha256Hex, sha256HexOfParts } from "../text/sha256.ts";
import { decodeText, lineOf, newFileBytes, renderTextParts, type TextFile } from "../text/text.ts";
import { lazyNewBytes } from "./new_content.ts";
import { planReplace } from "./plan_replace.ts";
import { unencodableIn } from "./encodable.ts";
import { checkedEncoding, notUtf8 } from "./not_utf8.ts";
import { isSingleByte } from "../text/encoding.ts";
import { appendAll } from "../text/append_all.ts";
import { textTooLong } from "./text_too_long.ts";
import type {
  AddFileOp,
  DeleteFileOp,
  LineEdit,
  OutputLine,
  Patch,
  PatchFailure,
  PlanOptions,
  PlannedFile,
  PlanResult,
  Snapshots,
  UpdateFileOp,
  Warning,
} from "../types.ts";

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
    encoding: checkedEncoding(options.encoding),
  };
  const errors: PatchFailure[] = [];
  const warnings: Warning[] = [];

  appendAll(errors, checkPatchShape(patch, ctx));
  appendAll(errors, checkExpectedShaKeys(patch, ctx));

  const files: PlannedFile[] = [];
  for (const op of patch.ops) {
    // Chunk failures past the first FULL_FAILURES of the patch are not
    // diagnosed one by one (see fold_failures.ts).
    const detail = Math.max(0, FULL_FAILURES - errors.length);
    const unencodable = isSingleByte(ctx.encoding) ? unencodableIn(op, ctx.encoding) : null;
    if (unencodable !== null) {
      errors.push(unencodable);
      continue;
    }
    const result = op.type === "add"
      ? planAdd(op, ctx)
      : op.type === "delete"
      ? planDelete(op, ctx)
      : op.type === "replace"
      ? planReplace(op, ctx)
      : planUpdate(op, ctx, detail);
    if (result.ok) files.push(result.file);
    else appendAll(errors, result.errors);
  }
  if (errors.length > 0) {
    for (const file of files) appendAll(warnings, file.warnings);
    return { ok: false, errors: asFailures(foldFailures(errors)), warnings };
  }
  return { ok: true, plan: { files, warnings, createParents: ctx.createParents } };
}


function planAdd(op: AddFileOp, ctx: PlanContext): OpResult {
  const blocked = checkDestination(ctx, op.path, "Add", op.patchLine);
  if (blocked) return { ok: false, errors: [resentAdd(op, snapshotOf(ctx, op.path), blocked, ctx.encoding)] };
  if (ctx.expectedSha.has(op.path)) {
    return {
      ok: false,
      errors: [
        failure("precondition_failed", `an expected SHA-256 is given for ${op.path}, which this patch adds: a new file has no previous version. Remove that entry.`, {
          path: op.path,
          expectedState: "missing",
        }),
      ],
    };
  }
  const newBytes = newFileBytes(op.lines, ctx.encoding);
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
  if (snap.kind !== "file" || snap.rejected) return { ok: false, errors: [{ ...notARegularFile(snap, "Delete"), patchLine: op.patchLine }] };
  const shaFailure = checkCallerSha(ctx, snap);
  if (shaFailure) return { ok: false, errors: [shaFailure] };
  if (ctx.options.requireShaForDelete && !ctx.expectedSha.has(op.path)) {
    const read = readHint(op.path);
    const sha = shaHint(op.path, null);
    return {
      ok: false,
      errors: [
        failure(
          "precondition_failed",
          `*** Delete File: ${op.path} — here every Delete must name the exact version it removes by its expected SHA-256, and this one names none. Next step: ${read.says} and ${sha.says}.`,
          { path: op.path, patchLine: op.patchLine, expectedSha256: null, hints: [read, sha] },
        ),
      ],
    };
  }
  const sha = requireSha(snap);
  const bytes = snap.bytes ?? new Uint8Array();
  const decoded = decodeText(bytes, ctx.encoding);
  const diff = decoded.ok
    ? unifiedDiff({
        oldPath: op.path,
        newPath: null,
        oldLines: decoded.file.lines,
        oldFinalNewline: decoded.file.finalNewline,
        edits: [{ start: 0, end: decoded.file.lines.length, replacement: [] }],
        newFinalNewline: false,
      })
    : decoded.reason === "too_long"
    ? `diff --git a/${op.path} b/${op.path}\ndeleted file\n--- a/${op.path}\n+++ /dev/null\n(${bytes.length} bytes of text, too long for this runtime to show)\n`
    : `diff --git a/${op.path} b/${op.path}\ndeleted file\nBinary files a/${op.path} and /dev/null differ\n`;
  return {
    ok: true,
    file: { op: "delete", path: op.path, expected: { state: "sha256", sha256: sha }, diff, hunks: [], warnings: [] },
  };
}


function planUpdate(op: UpdateFileOp, ctx: PlanContext, detail: number): OpResult {
  const snap = snapshotOf(ctx, op.path);
  const errors: PatchFailure[] = [];
  if (snap.kind !== "file" || snap.rejected) errors.push({ ...notARegularFile(snap, "Update"), patchLine: op.patchLine });
  if (op.moveTo !== undefined && op.moveTo !== op.path) {
    const blocked = checkDestination(ctx, op.moveTo, "Move", op.patchLine);
    if (blocked) errors.push(blocked);
  }
  if (errors.length > 0) {
    const moved = op.moveTo !== undefined && !snap.rejected ? resentMove(ctx, op, snap, snapshotOf(ctx, op.moveTo)) : null;
    return { ok: false, errors: moved ? [moved] : errors };
  }

  const shaFailure = checkCallerSha(ctx, snap);
  if (shaFailure) {
    const resent = resentUpdate(ctx, op, snap, shaFailure);
    // not a resend: a stale read whose chunks still apply gets the one-call path (stale_read.ts)
    return { ok: false, errors: [resent !== shaFailure ? resent : (staleButApplies(ctx, op, snap, shaFailure) ?? shaFailure)] };
  }
  const sha = requireSha(snap);
  const bytes = snap.bytes;
  if (!bytes) throw new TypeError(`planPatch: snapshot of ${op.path} has no bytes; an Update needs the file content`);
  const tooLarge = fileTooLarge(ctx, op.path, bytes.length, "the file");
  if (tooLarge) return { ok: false, errors: [tooLarge] };

  const decoded = decodeText(bytes, ctx.encoding);
  if (!decoded.ok && decoded.reason === "too_long") return { ok: false, errors: [textTooLong(op.path, decoded.byteLength, decoded.maxChars, op.patchLine)] };
  if (!decoded.ok) return { ok: false, errors: [{ ...notUtf8(op.path, bytes, decoded.byteOffset, decoded.line), patchLine: op.patchLine }] };
  const file = decoded.file;
  // The decoded file, not its lines: the matcher scans the flat text, and
  // only the lines chunks touch are ever made into strings.
  const locate = {
    path: op.path,
    indentationSensitive: isIndentationSensitive(op.moveTo ?? op.path),
    excerptLines: ctx.excerptLines,
    excerptBytes: ctx.excerptBytes,
  };
  const located = locateChunks(file, op.chunks, { ...locate, matching: ctx.matching, detail });
  // Recognisable mistakes are said as such (chunk_diagnoses.ts), also
  // where the matcher would have guessed an indentation.
  const diagnosis = { file, op, locate };
  const failed = [...diagnoseChunkFailures(diagnosis, located.errors, located.absent), ...located.undiagnosed];
  appendAll(failed, guessedIndentation(diagnosis, located.warnings, located.placements));
  if (failed.length > 0) return { ok: false, errors: failed.sort((a, b) => (a.hunk ?? 0) - (b.hunk ?? 0)) };

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

  // The new content stays parts (views of the old bytes and the new
  // stretches) until someone reads newBytes: see new_content.ts.
  const { parts, length: newLength, pieces } = renderTextParts(file, edits);
  const newTooLarge = fileTooLarge(ctx, op.moveTo ?? op.path, newLength, "the patched file");
  if (newTooLarge) return { ok: false, errors: [newTooLarge] };
  const warnings = [...located.warnings];
  if (op.moveTo !== undefined && snapshotOf(ctx, op.moveTo).parentExists === false) {
    warnings.push(warning("parents_created", `${parentOf(op.moveTo)}/ does not exist yet; it will be created.`, { path: op.moveTo }));
  }
  const planned: PlannedFile = {
    op: op.moveTo !== undefined ? "move" : "update",
    path: op.path,
    ...(op.moveTo !== undefined ? { moveTo: op.moveTo, expectedDestination: { state: "missing" as const } } : {}),
    expected: { state: "sha256", sha256: sha },
    newSha256: sha256HexOfParts(parts),
    pieces,
    diff: unifiedDiffOfLines({
      oldPath: op.path,
      newPath: op.moveTo ?? op.path,
      oldLines: { length: file.eols.length, at: (i: number) => lineOf(file, i) },
      oldFinalNewline: file.finalNewline,
      edits,
      newFinalNewline: endsWithNewline(parts, newLength, file),
    }),
    hunks: located.placements.map((p) => ({ index: p.index, line: p.start + 1, tier: p.tier })),
    warnings,
  };
  lazyNewBytes(planned, parts);
  return { ok: true, file: planned };
}

/** Whether rendered content (its parts) ends with a line ending (the diff's "\ No newline" marker needs it). */
function endsWithNewline(parts: readonly Uint8Array[], length: number, file: TextFile): boolean {
  const min = file.bom ? 3 : 0;
  if (length <= min) return false;
  let lastPart: Uint8Array | undefined;
  for (let i = parts.length - 1; i >= 0 && lastPart === undefined; i--) if (parts[i]!.length > 0) lastPart = parts[i];
  const last = lastPart?.[lastPart.length - 1];
  return last === 0x0a || last === 0x0d;
}
