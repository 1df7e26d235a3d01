/**
 * The fields the fleet reads, per object it is given, and the refusal of
 * any other (`invalid_request`), as every function of the library does: a
 * misspelt `dryrun: true` in the options would otherwise run the real change
 * on every host, a target's misspelt `expectedSha` would drop its
 * precondition. Each list is checked against its type at compile time.
 *
 * @module
 */
import { unknownKeysFailure } from "../remote/request_keys.ts";
import { badValueFailure } from "../remote/request_values.ts";
import type { ValueRule } from "../remote/request_values.ts";
import { APPLY_VALUE_RULES } from "../apply.ts";
import type { NamesEveryKey } from "../remote/request_keys.ts";
import type { Limits, PatchFailure } from "../types.ts";
import type { FleetHostOptions, FleetOptions, FleetRequest, FleetTargetCommon, ReconcileFleetOptions } from "./types.ts";

const HOST_OPTION_KEYS = [
  "matching", "encoding", "requireShaForDelete", "createParents", "limits", "lockWaitMs", "clientGoneMs", "timeoutMs", "delta",
  "sharedDirectories", "trustRootAncestors", "cache", "compress",
] as const satisfies readonly (keyof FleetHostOptions)[];
const REQUEST_KEYS = ["patch", "dryRun", "expectedSha256", ...HOST_OPTION_KEYS] as const satisfies readonly (keyof FleetRequest)[];
const LIMIT_KEYS = ["maxPatchBytes", "maxFiles", "maxChunksPerFile", "maxFileBytes"] as const satisfies readonly (keyof Limits)[];
const OPTION_KEYS = [
  "canary", "concurrency", "connectTimeoutMs", "maxFailures", "dryRun", "signal", "stopSignal", "onProgress", "words",
] as const satisfies readonly (keyof FleetOptions)[];
const TARGET_KEYS = ["name", "root", "expectedSha256", "options", "shell", "connect", "release"] as const;
/**
 * What the values must be (badValueFailure): a `dryRun: "true"` in the request or
 * the options was a real run on every host (only `=== true` is a dry run). The host
 * options are checked again by each host's applyPatch; here they refuse the whole call.
 */
const HOST_VALUE_RULES: Readonly<Record<(typeof HOST_OPTION_KEYS)[number], ValueRule>> = Object.fromEntries(
  HOST_OPTION_KEYS.map((key) => [key, APPLY_VALUE_RULES[key]]),
) as Record<(typeof HOST_OPTION_KEYS)[number], ValueRule>;
const REQUEST_VALUE_RULES: Readonly<Record<string, ValueRule>> = { dryRun: "boolean", expectedSha256: "string-map", ...HOST_VALUE_RULES };
const OPTION_VALUE_RULES: Readonly<Record<string, ValueRule>> = { dryRun: "boolean", signal: "signal", stopSignal: "signal", onProgress: "function" };
const RECONCILE_KEYS = [
  "concurrency", "connectTimeoutMs", "signal", "words", "lockWaitMs", "timeoutMs", "sharedDirectories", "trustRootAncestors", "compress",
] as const satisfies readonly (keyof ReconcileFleetOptions)[];

const everyHostOption: NamesEveryKey<FleetHostOptions, (typeof HOST_OPTION_KEYS)[number]> = true;
const everyRequestKey: NamesEveryKey<FleetRequest, (typeof REQUEST_KEYS)[number]> = true;
const everyLimitKey: NamesEveryKey<Limits, (typeof LIMIT_KEYS)[number]> = true;
const everyOptionKey: NamesEveryKey<FleetOptions, (typeof OPTION_KEYS)[number]> = true;
const everyTargetKey: NamesEveryKey<FleetTargetCommon, (typeof TARGET_KEYS)[number]> = true;
const everyReconcileKey: NamesEveryKey<ReconcileFleetOptions, (typeof RECONCILE_KEYS)[number]> = true;
void everyHostOption, everyRequestKey, everyLimitKey, everyOptionKey, everyTargetKey, everyReconcileKey;

/**
 * The `invalid_request` failure for the first field of an `applyFleet`
 * call that the fleet does not read — in the request, its limits, the
 * options, a target or a target's options — or null.
 *
 * @example
 * ```ts
 * fleetKeysFailure(targets, { patch, dryrun: true }, {})?.code; // "invalid_request"
 * ```
 */
export function fleetKeysFailure(targets: readonly object[], request: object, options: object): PatchFailure | null {
  const nothing = "nothing was applied on any host";
  const found = unknownKeysFailure("applyFleet request", request, REQUEST_KEYS, nothing) ??
    unknownKeysFailure("applyFleet request limits", (request as { limits?: unknown }).limits, LIMIT_KEYS, nothing) ??
    unknownKeysFailure("applyFleet options", options, OPTION_KEYS, nothing) ??
    badValueFailure("applyFleet request", request, REQUEST_VALUE_RULES, nothing) ??
    badValueFailure("applyFleet options", options, OPTION_VALUE_RULES, nothing);
  if (found !== null) return found;
  for (const target of targets) {
    const name = JSON.stringify((target as { name?: unknown }).name);
    const own = (target as { options?: unknown }).options;
    const bad = unknownKeysFailure(`applyFleet target ${name}`, target, TARGET_KEYS, nothing) ??
      unknownKeysFailure(`applyFleet target ${name} options`, own, HOST_OPTION_KEYS, nothing) ??
      unknownKeysFailure(`applyFleet target ${name} options limits`, (own as { limits?: unknown } | undefined)?.limits, LIMIT_KEYS, nothing) ??
      badValueFailure(`applyFleet target ${name}`, target, { expectedSha256: "string-map" }, nothing) ??
      badValueFailure(`applyFleet target ${name} options`, own, HOST_VALUE_RULES, nothing);
    if (bad !== null) return bad;
  }
  return null;
}

/**
 * The `invalid_request` failure for a field of `reconcileFleet`'s options it
 * does not read, or null.
 *
 * @example
 * ```ts
 * reconcileKeysFailure({ concurency: 4 })?.message; // "invalid_request: unknown reconcileFleet options field `concurency`: did you mean `concurrency`? …"
 * ```
 */
export function reconcileKeysFailure(options: object): PatchFailure | null {
  return unknownKeysFailure("reconcileFleet options", options, RECONCILE_KEYS, "nothing was reconciled on any host");
}
