/**
 * "Ours" as the benchmark runs it: snapshots built from fixture bytes, then
 * `planPatch` (decode, locate, render, hash the new bytes, diff — whatever
 * planning does), or `parsePatch` + `planPatch` end to end from patch text.
 *
 * @module
 */
import { parsePatch } from "../lib/patch/parse.ts";
import { planPatch } from "../lib/plan/plan.ts";
import type { Limits, Patch, PlanResult, Snapshots } from "../lib/types.ts";
import type { FileFixture, PatchFixture } from "./fixtures.ts";

/**
 * The snapshot map `readSnapshots` would return for one fixture file.
 *
 * @example
 * ```ts
 * planPatch(patch, snapshotsOf(file));
 * ```
 */
export function snapshotsOf(file: FileFixture): Snapshots {
  return new Map([[file.path, {
    path: file.path,
    kind: "file" as const,
    bytes: file.bytes,
    sha256: file.sha256,
    size: file.bytes.length,
    mode: 0o644,
    uid: 0,
    gid: 0,
    nlink: 1,
  }]]);
}

/**
 * Parse a fixture's patch text once (outside any timing); throws when it
 * does not parse, since every fixture patch is well-formed.
 */
export function parsedPatchOf(fixture: PatchFixture): Patch {
  const parsed = parsePatch(fixture.text, fixture.limits ? { limits: fixture.limits } : {});
  if (!parsed.ok) {
    throw new Error(`${fixture.name}: parsePatch failed: ${parsed.errors.map((e) => e.message).join("; ")}`);
  }
  return parsed.patch;
}

/** `planPatch` on pre-parsed input: the figure compared with the floor. */
export function oursPlan(patch: Patch, snapshots: Snapshots, limits?: Partial<Limits>): PlanResult {
  return planPatch(patch, snapshots, limits ? { limits } : {});
}

/**
 * Ours end to end from patch text and snapshot bytes to the new bytes, the
 * figure compared with the peers (which also start from text). `null` when
 * the patch does not parse or plan.
 */
export function oursApply(patchText: string, snapshots: Snapshots): Uint8Array | null {
  const parsed = parsePatch(patchText);
  if (!parsed.ok) return null;
  const planned = planPatch(parsed.patch, snapshots);
  if (!planned.ok) return null;
  return planned.plan.files[0]?.newBytes ?? null;
}
