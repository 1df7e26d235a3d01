/**
 * Bounded failure output (issue 16, SPEC §2 and §5.4): a patch of
 * thousands of failing chunks must not produce thousands of diagnoses and
 * megabytes of message. The first {@linkcode FULL_FAILURES} failures of a
 * patch, in patch order, are kept as they are; every later failure about a
 * chunk is folded into ONE failure per file and code, which names every
 * chunk it stands for (`chunks.hunks`, `chunks.patchLines`), so the result
 * still lists all failing hunks, typed. Later failures about a whole file
 * (not_found, precondition_failed, …) stay individual: each is one short
 * message, and a patch has at most `maxFiles` file sections.
 *
 * @module
 */
import { failure } from "../failure.ts";
import type { ChunkFailureCode, FailureOf, PatchFailure } from "../types.ts";

/** Failures of one patch shown in full; later chunk failures are folded. */
export const FULL_FAILURES = 20;

const WHAT: Record<ChunkFailureCode, [one: string, many: string]> = {
  context_mismatch: ["does not match the file either", "do not match the file either"],
  ambiguous_hunk: ["matches more than one place too", "match more than one place too"],
  anchor_not_found: ["has an @@ anchor that was not found either", "have an @@ anchor that was not found either"],
  out_of_order_hunk: ["is out of file order too", "are out of file order too"],
  anchor_after_change: ["has its @@ anchor after the change too", "have their @@ anchor after the change too"],
  overlapping_hunks: ["overlaps an earlier chunk too", "overlap earlier chunks too"],
};

/** Most ranges spelled out in a folded failure's message (all are in `chunks`). */
const SHOWN_RANGES = 8;

/**
 * `1–3, 7, 9–12` for ascending numbers, at most `max` ranges then `…`.
 *
 * @example
 * ```ts
 * numberRanges([1, 2, 3, 7, 9, 10], 8); // "1–3, 7, 9–10"
 * ```
 */
export function numberRanges(numbers: readonly number[], max: number): string {
  const out: string[] = [];
  for (let i = 0; i < numbers.length;) {
    let j = i;
    while (j + 1 < numbers.length && numbers[j + 1] === numbers[j]! + 1) j++;
    if (out.length === max) {
      out.push("…");
      break;
    }
    out.push(i === j ? String(numbers[i]) : `${numbers[i]}–${numbers[j]}`);
    i = j + 1;
  }
  return out.join(", ");
}

/** Whether a failure is about one chunk (and so always names its file and chunk). */
function isChunkFailure(f: PatchFailure): f is FailureOf<ChunkFailureCode> {
  return Object.hasOwn(WHAT, f.code);
}

function folded(code: ChunkFailureCode, path: string, members: readonly FailureOf<ChunkFailureCode>[]): PatchFailure {
  const hunks = members.map((f) => f.hunk);
  const patchLines = members.map((f) => f.patchLine ?? 0);
  const count = members.length;
  const [one, many] = WHAT[code];
  const message = [
    `${code}: ${count} more chunk${count === 1 ? "" : "s"} of ${path} ${count === 1 ? one : many} (chunk${count === 1 ? "" : "s"} ${numberRanges(hunks, SHOWN_RANGES)}; from patch line ${patchLines[0]}).`,
    `${count === 1 ? "It was" : "They were"} not diagnosed one by one: only the first ${FULL_FAILURES} failures of a patch are.`,
    `Next step: fix the failures shown in full first, then send the patch again; whatever still fails is then shown in full.`,
  ].join(" ");
  return failure(code, message, {
    path,
    hunk: hunks[0]!,
    patchLine: patchLines[0]!,
    chunks: { count, hunks, patchLines },
  });
}

/**
 * Keep the first `full` failures; fold every later one that names a chunk
 * into one failure per path and code (placed where its first member was).
 *
 * @example
 * ```ts
 * const many = Array.from({ length: 30 }, (_, i) => failure("context_mismatch", "…", { path: "a", hunk: i + 1, patchLine: 10 * i }));
 * foldFailures(many).length; // 21: 20 in full, one folded failure for chunks 21–30
 * ```
 */
export function foldFailures(errors: readonly PatchFailure[], full: number = FULL_FAILURES): PatchFailure[] {
  if (errors.length <= full) return errors.slice();
  const out: (PatchFailure | { group: string })[] = errors.slice(0, full);
  const groups = new Map<string, { code: ChunkFailureCode; path: string; members: FailureOf<ChunkFailureCode>[] }>();
  for (const error of errors.slice(full)) {
    if (!isChunkFailure(error) || error.chunks !== undefined) {
      out.push(error);
      continue;
    }
    const key = `${error.code}\u0000${error.path}`;
    let group = groups.get(key);
    if (group === undefined) {
      group = { code: error.code, path: error.path, members: [] };
      groups.set(key, group);
      out.push({ group: key });
    }
    group.members.push(error);
  }
  return out.map((entry) => {
    if (!("group" in entry)) return entry;
    const group = groups.get(entry.group)!;
    return folded(group.code, group.path, group.members);
  });
}
