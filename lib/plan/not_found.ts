/**
 * The `not_found` failure of an Update or Delete whose file is missing
 * (issue 29.1). When the snapshot found existing files close to the path
 * (FileSnapshot.closestPaths: the same path but for letter case or Unicode
 * normalisation, the same file name elsewhere, a near spelling), the
 * message leads with "did you mean `src/parse.ts`?" and the exact header
 * to write, and offers no Add: a second file beside the one meant is the
 * costliest way to recover. Add is offered only when nothing is close.
 *
 * @module
 */
import { failure, listHint, pathHint } from "../failure.ts";
import { parentOf } from "../patch/paths.ts";
import { closestPaths } from "../text/closest_path.ts";
import type { ClosestPath } from "../text/closest_path.ts";
import type { FileSnapshot, PatchFailure } from "../types.ts";

/** Why the first candidate is close, in words. */
function how(path: string, c: ClosestPath): string {
  switch (c.kind) {
    case "same":
      return path.toLowerCase() === c.path.toLowerCase()
        ? `${c.path} differs from it only in letter case`
        : `${c.path} differs from it only in letter case or in how its accented letters are encoded (Unicode NFC/NFD)`;
    case "moved":
      return `${c.path} has the same file name in another directory`;
    case "typo":
      return `${c.path} is the nearest spelling in that directory`;
  }
}

/**
 * The failure for an Update or Delete of a missing path.
 *
 * @example
 * ```ts
 * const f = missingFileFailure({ path: "src/Parse.ts", kind: "missing", closestPaths: ["src/parse.ts"] }, "Update");
 * f.message.startsWith("not_found: did you mean `src/parse.ts`?"); // true
 * ```
 */
export function missingFileFailure(snap: FileSnapshot, section: "Update" | "Delete" | "Replace"): PatchFailure {
  const path = snap.path;
  // Ranked again here (pure, at most 5 names) for the reason of each.
  const near = closestPaths(path, snap.closestPaths ?? []);
  const closest = near.map((c) => c.path);
  if (near.length > 0) {
    const best = near[0]!;
    const fix = pathHint(path, best.path, section);
    const others = near.length > 1 ? ` Other existing files close to it: ${near.slice(1).map((c) => `\`${c.path}\``).join(", ")}.` : "";
    return failure(
      "not_found",
      `did you mean \`${best.path}\`? Write the section header as "${fix.kind === "path" ? fix.header : ""}": there is no ${path} under the root, and ${how(path, best)}. Next step: ${fix.says}.${others}`,
      { path, actualState: "missing", hints: [fix], closestPaths: closest },
    );
  }
  if (section === "Update") {
    const list = listHint(parentOf(path));
    return failure(
      "not_found",
      `*** Update File: ${path} — no such file under the root${snap.closestPaths === undefined ? "" : snap.closestSearchCut ? ", and no file of a similar name was found among the names searched, but that search stopped at its bound before it had seen the whole root" : ", and no file of a similar name was found"}. To create it, use "*** Add File: ${path}" with every line prefixed by "+"; otherwise check the path (${list.says}).`,
      { path, actualState: "missing", hints: [list], closestPaths: [] },
    );
  }
  return failure(
    "not_found",
    `*** Delete File: ${path} — no such file under the root, so there is nothing to delete (it may already be gone). Remove this section from the patch.`,
    { path, actualState: "missing", closestPaths: [] },
  );
}
