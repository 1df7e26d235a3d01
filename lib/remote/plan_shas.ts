/**
 * What each path of a plan holds before and after it is applied, by the
 * manifest's path index — shared by commit (outcomes, conflicts) and
 * reconcile (applied / not_applied / diverged).
 *
 * @module
 */
import type { TransactionLayout } from "./manifest.ts";
import type { Plan } from "../types.ts";

/**
 * The old and planned SHA-256 of path index `k` (`null` = missing).
 *
 * @example
 * ```ts
 * shasOf(plan, layout, 0); // { oldSha: "ab…", newSha: "cd…" }
 * ```
 */
export function shasOf(plan: Plan, layout: TransactionLayout, k: number): { oldSha: string | null; newSha: string | null } {
  for (let i = 0; i < plan.files.length; i++) {
    const file = plan.files[i]!;
    const { src, dst } = layout.files[i]!;
    if (src === k) {
      return {
        oldSha: file.expected.state === "sha256" ? file.expected.sha256 : null,
        newSha: file.op === "delete" || file.op === "move" ? null : file.newSha256 ?? null,
      };
    }
    if (dst === k) return { oldSha: null, newSha: file.newSha256 ?? null };
  }
  return { oldSha: null, newSha: null };
}

/**
 * Per path, the SHA-256 it holds once the plan is applied (`null`: removed),
 * as `outcome_unknown` failures report it.
 *
 * @example
 * ```ts
 * plannedShas(plan); // [{ path: "a.txt", sha256: "cd…" }]
 * ```
 */
export function plannedShas(plan: Plan): { path: string; sha256: string | null }[] {
  const planned: { path: string; sha256: string | null }[] = [];
  for (const file of plan.files) {
    if (file.op === "move") {
      planned.push({ path: file.path, sha256: null }, { path: file.moveTo!, sha256: file.newSha256 ?? null });
    } else {
      planned.push({ path: file.path, sha256: file.op === "delete" ? null : file.newSha256 ?? null });
    }
  }
  return planned;
}
