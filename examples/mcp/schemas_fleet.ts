/**
 * zod schemas of `apply_patch_fleet`: a strict input (strictInput, as every
 * tool's: an unknown argument is refused by name with the closest known one,
 * not ignored — a misspelt `max_failure` must not silently mean 0)
 * and the fleet report as output, in the wire's snake_case (examples/wire/fleet.ts).
 *
 * @module
 */
import { z } from "zod";
import { failureSchema, strictInput } from "./schemas.ts";
import { strictRecord } from "./strict.ts";

/** Most hosts a call may run at once (the server's own bound, whatever the model asks). */
export const MAX_FLEET_CONCURRENCY = 32;

/** apply_patch_fleet arguments. */
export type ApplyPatchFleetArgs = {
  group: string;
  patch: string;
  hosts?: string[];
  dry_run?: boolean;
  expected_sha256?: Record<string, Record<string, string>>;
  canary?: number;
  max_failures?: number;
  concurrency?: number;
  encoding?: "utf-8" | "latin1" | "windows-1252";
};

const sha256 = z.string().regex(/^[0-9a-fA-F]{64}$/, "a SHA-256: 64 hex digits");

/** apply_patch_fleet input. */
export const applyPatchFleetInput: z.ZodType<ApplyPatchFleetArgs> = strictInput({
  group: z.string().min(1).describe("the host group's name (the groups are listed in this tool's description)"),
  patch: z.string().min(1).describe("the patch text, from *** Begin Patch to *** End Patch; the same patch goes to every host"),
  hosts: z.array(z.string().min(1)).min(1).optional().describe("only these hosts of the group (e.g. the re-run the last result names); default every host, in the group's order"),
  dry_run: z.boolean().optional().describe("plan every host and return the diffs without changing anything"),
  expected_sha256: strictRecord(z.string(), strictRecord(z.string(), sha256, "expected_sha256 of a host", "nothing was applied on any host"), "expected_sha256", "nothing was applied on any host").optional().describe(
    "per host, path → file_sha256 from read_file on that host's root: that host is patched only if its file is exactly that version",
  ),
  canary: z.number().int().min(0).max(100).optional().describe("hosts done first, one at a time; if one fails, nothing else starts (default 1)"),
  max_failures: z.number().int().min(0).optional().describe("once more than this many hosts failed, no new host starts (default 0)"),
  concurrency: z.number().int().min(1).max(MAX_FLEET_CONCURRENCY).optional().describe(`hosts at once (default 8, at most ${MAX_FLEET_CONCURRENCY})`),
  encoding: z.enum(["utf-8", "latin1", "windows-1252"]).optional().describe("how every host's files are read and written, as apply_patch's encoding: utf-8 (default), or latin1 / windows-1252 for legacy single-byte files"),
}, "nothing was applied on any host");

const hostState = z.enum(["applied", "planned", "skipped", "failed", "outcome_unknown", "cancelled", "not_started"]);
const reconciledHost = z.looseObject({
  name: z.string(),
  operation_id: z.string(),
  state: z.enum(["applied", "not_applied", "diverged", "unsettled"]),
  report: z.looseObject({ ok: z.boolean() }),
});

/** apply_patch_fleet output: the library's fleet report (lib/fleet/types.ts) on the wire. */
export const applyPatchFleetOutput: z.ZodType<Record<string, unknown>> = z.looseObject({
  ok: z.boolean().describe("every host applied or already held the change (dry run: would apply)"),
  group: z.string(),
  dry_run: z.boolean(),
  hosts: z.array(z.looseObject({
    name: z.string(),
    state: hostState,
    phase: z.enum(["canary", "rollout"]).optional(),
    ms: z.number().optional(),
    order: z.number().optional(),
    reason: z.literal("already_applied").optional(),
    error: failureSchema.optional(),
    operation_id: z.string().optional(),
    report: z.looseObject({ ok: z.boolean() }).optional().describe("that host's apply_patch report"),
    reconciled: reconciledHost.optional(),
  })),
  refused: failureSchema.optional().describe("the call was refused before any host started"),
  stopped: z.looseObject({
    reason: z.enum(["canary_failed", "max_failures", "cancelled", "stopped"]),
    after: z.string().nullable(),
    failures: z.number(),
  }).optional(),
  summary: z.looseObject({
    total: z.number(),
    counts: z.record(z.string(), z.number()),
    first_failure: z.looseObject({ host: z.string().nullable(), code: z.string(), message: z.string() }).nullable(),
    reconcile: z.array(z.looseObject({ host: z.string(), operation_id: z.string() })),
    rerun: z.array(z.string()).describe("the hosts to send the patch to again once the cause is fixed"),
    next_step: z.string(),
    headline: z.string(),
    text: z.string(),
  }),
  reconciled: z.array(reconciledHost).optional().describe("hosts whose outcome was unknown, reconciled by the server at once"),
});
