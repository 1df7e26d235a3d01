/**
 * A plan's per-file warnings are written in the future ("docs/ does not
 * exist yet; it will be created"): true for a plan and a dry run, not once
 * the commit has run. These restate them for what happened (SPEC §5.4
 * round 2: messages after a commit describe what happened).
 *
 * @module
 */
import { warning } from "../failure.ts";
import { parentOf } from "../patch/paths.ts";
import type { Warning } from "../types.ts";

/** What the commit did with the plan. */
export type CommitOutcome = "committed" | "not_committed" | "unknown";

/**
 * The plan's per-file warnings as true statements after a commit with this
 * outcome: `parents_created` becomes "was created", disappears when nothing
 * was committed (a refused or rolled-back commit leaves no new directory),
 * and "may have been created" when the outcome is unknown. Others are
 * about how the patch matched, which stays true.
 *
 * @example
 * ```ts
 * afterCommit(file.warnings, "committed"); // parents_created: "docs/ did not exist; it was created."
 * ```
 */
export function afterCommit(warnings: readonly Warning[], outcome: CommitOutcome): Warning[] {
  const out: Warning[] = [];
  for (const w of warnings) {
    if (w.code !== "parents_created" || w.path === undefined) {
      out.push(w);
      continue;
    }
    if (outcome === "not_committed") continue;
    const dir = `${parentOf(w.path)}/`;
    out.push(warning(
      "parents_created",
      outcome === "committed"
        ? `${dir} did not exist; it was created for ${w.path}.`
        : `${dir} did not exist; it may have been created for ${w.path}, depending on the commit's outcome.`,
      { path: w.path },
    ));
  }
  return out;
}
