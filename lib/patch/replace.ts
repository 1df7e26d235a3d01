/**
 * Whole-file replace (issue 29 item 2): `*** Delete File: X` followed later
 * in the same patch by `*** Add File: X` is one atomic rewrite of X, the
 * same operation as the `*** Replace File: X` extension. Models rewrite small
 * files whole all the time; refusing the pair (two patches, the file missing
 * in between) or applying it as two steps would both be worse.
 *
 * Decisions:
 * - Only Delete *then* Add joins. Add then Delete of one path says "create,
 *   then remove": nothing a careful caller means, so it stays refused, with
 *   the two ways to write a replace in the message.
 * - The pair joins only when nothing else touches X: a Delete + Add of a
 *   path that is also a Move source or destination, or a second Add, stays
 *   `duplicate_path` (each with its own message, see {@linkcode duplicateMessage}).
 * - The joined op sits where the Delete was and keeps both header lines,
 *   so later messages can name the lines the model wrote.
 *
 * @module
 */
import type { FileOp, ReplaceFileOp } from "../types.ts";

/** How a section touches a path, for the duplicate-path messages. */
export type Touch = "add" | "delete" | "update" | "replace" | "move_from" | "move_to";

/** The touches of one section: its path, and a Move destination. */
export function touchesOf(op: FileOp): { path: string; touch: Touch; line: number }[] {
  if (op.type === "update" && op.moveTo !== undefined) {
    return [{ path: op.path, touch: "move_from", line: op.patchLine }, { path: op.moveTo, touch: "move_to", line: op.patchLine }];
  }
  return [{ path: op.path, touch: op.type, line: op.patchLine }];
}

/**
 * Join each Delete + later Add of the same path that nothing else touches
 * into one {@linkcode ReplaceFileOp}, in place of the Delete. Returns the
 * sections to keep, in order (the input is not changed).
 *
 * @example
 * ```ts
 * joinReplaces([{ op: { type: "delete", path: "a", patchLine: 2 } }, { op: { type: "add", path: "a", lines: ["x"], patchLine: 3 } }]);
 * // [{ op: { type: "replace", path: "a", lines: ["x"], patchLine: 2, addLine: 3 } }]
 * ```
 */
export function joinReplaces<S extends { op: FileOp }>(sections: readonly S[]): S[] {
  const touches = new Map<string, number[]>();
  sections.forEach((s, i) => {
    for (const t of touchesOf(s.op)) {
      const list = touches.get(t.path);
      if (list === undefined) touches.set(t.path, [i]);
      else list.push(i);
    }
  });
  const joined = new Map<number, ReplaceFileOp>();
  const dropped = new Set<number>();
  for (const [path, list] of touches) {
    if (list.length !== 2) continue;
    const [d, a] = [sections[list[0]!]!.op, sections[list[1]!]!.op];
    if (d.type !== "delete" || a.type !== "add" || d.path !== path || a.path !== path) continue;
    joined.set(list[0]!, { type: "replace", path, lines: a.lines, patchLine: d.patchLine, addLine: a.patchLine });
    dropped.add(list[1]!);
  }
  if (joined.size === 0) return [...sections];
  const out: S[] = [];
  sections.forEach((s, i) => {
    if (dropped.has(i)) return;
    const op = joined.get(i);
    out.push(op === undefined ? s : { ...s, op });
  });
  return out;
}

/**
 * The `duplicate_path` message for a path touched again: `earlier` at
 * `earlierAt` (a quoted patch line), `now` at `nowAt`, `all` every way the
 * patch touches that path. Each shape a model sends gets its own next step.
 *
 * @example
 * ```ts
 * duplicateMessage("a.txt", "add", `line 2 "*** Add File: a.txt"`, "add", `line 5 "*** Add File: a.txt"`, new Set(["add"]));
 * ```
 */
export function duplicateMessage(path: string, earlier: Touch, earlierAt: string, now: Touch, nowAt: string, all: ReadonlySet<Touch>): string {
  const p = JSON.stringify(path);
  const bare = JSON.stringify(path).slice(1, -1);
  const replaceForms = `put '*** Delete File: ${bare}' before '*** Add File: ${bare}' (nothing else on that path), or write one '*** Replace File: ${bare}' section with the new lines`;
  const both = `${nowAt} and ${earlierAt} both touch ${p}`;
  const move = all.has("move_to") || all.has("move_from");
  const rewrite = all.has("add") || all.has("delete") || all.has("replace");
  if (move && rewrite) {
    return `duplicate_path: ${both}: a whole-file rewrite (Delete + Add, Replace File) or an Add cannot be combined with a Move of the same path in one patch. Send the move and the rewrite as two patches, the second after the first succeeds.`;
  }
  if (earlier === "add" && now === "delete") {
    return `duplicate_path: ${nowAt} deletes ${p}, which ${earlierAt} adds: adding a file and then deleting it changes nothing, so it is refused. To rewrite an existing file whole in one step, ${replaceForms}.`;
  }
  if (earlier === "add" && now === "add" && !all.has("delete")) {
    return `duplicate_path: ${both}: a patch adds a file once. Put all of its lines into one '*** Add File: ${bare}' section (to rewrite an existing file whole, use '*** Replace File: ${bare}').`;
  }
  if (all.has("replace") || all.has("delete")) {
    return `duplicate_path: ${both}: a replaced or deleted file takes no other section in the same patch. Keep one section for ${p}: for a whole-file rewrite, one '*** Replace File: ${bare}' (or one Delete followed by one Add) with the complete new content.`;
  }
  return `duplicate_path: ${both}: a patch may touch each path once (a '*** Move to:' destination counts; a Delete followed by an Add is a whole-file replace). Put every change to ${p} into one section, or send the second change as a separate patch after this one succeeds.`;
}
