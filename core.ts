/**
 * ssh-apply-patch/core: the pure core, with no I/O and no `node:` import, so
 * it runs anywhere JavaScript does (browsers and workers included). It parses
 * Codex-format patch text (`parsePatch`), plans a patch against file
 * snapshots you read yourself (`planPatch`: every chunk located uniquely, the
 * new bytes, line endings and BOM kept), and formats what a front end shows
 * (`unifiedDiff`, `N:hh` line ids, failure messages reworded per front end).
 * Everything here is also exported by the main entry.
 *
 * @example
 * ```ts
 * import { parsePatch, planPatch, sha256Hex } from "./core.ts";
 *
 * const parsed = parsePatch("*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** End Patch");
 * if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
 * const bytes = new TextEncoder().encode("one\ntwo\n");
 * const snapshot = { path: "a.txt", kind: "file", bytes, sha256: sha256Hex(bytes), mode: 0o644 } as const;
 * const planned = planPatch(parsed.patch, new Map([["a.txt", snapshot]]));
 * console.log(planned.ok ? new TextDecoder().decode(planned.plan.files[0]!.newBytes) : planned.errors[0]!.message);
 * ```
 *
 * @module
 */

export { parsePatch } from "./lib/patch/parse.ts";
export { planPatch } from "./lib/plan/plan.ts";
export { formatLineId, lineHash } from "./lib/text/line_id.ts";
export { canonicalPathKey, validatePath } from "./lib/patch/paths.ts";
export { unifiedDiff } from "./lib/text/diff.ts";
export type { UnifiedDiffInput } from "./lib/text/diff.ts";
export { DEFAULT_LIMITS, resolveLimits } from "./lib/patch/limits.ts";
export { failure, isRetryable, listHint, optionHint, pathHint, readHint, reconcileHint, rewordFailure, shaHint, warning } from "./lib/failure.ts";
export type { FailureInput, FailureInputArgs, HintWords } from "./lib/failure.ts";
export { sha256Hex } from "./lib/text/sha256.ts";
export { closestName, foldName, unknownNames, unknownNamesText } from "./lib/text/closest_name.ts";
export { closestPaths, foldPath } from "./lib/text/closest_path.ts";
export type { ClosestPath, ClosestPathKind } from "./lib/text/closest_path.ts";
export { readWindow } from "./lib/plan/read_window.ts";
export { parseFailurePaths, refineParseFailures } from "./lib/plan/refine.ts";
export type { RefineContext } from "./lib/plan/refine.ts";
export type { EolStyle, ReadWindowOptions, ReadWindowResult } from "./lib/plan/read_window.ts";
export type * from "./lib/types.ts";
