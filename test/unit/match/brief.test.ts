/**
 * briefFailure (lib/match/brief.ts): a compact failure whose message is
 * built when read must be, to every reader, the value `failure` would have
 * made — text, field order, JSON, spreads, assignment.
 */
import { describe, expect, test } from "bun:test";
import { briefFailure } from "../../../lib/match/brief.ts";
import { failure } from "../../../lib/failure.ts";
import type { ChunkFailureCode } from "../../../lib/types.ts";

const cases: { code: ChunkFailureCode; line?: number; says: string }[] = [
  { code: "context_mismatch", says: "does not match the file" },
  { code: "ambiguous_hunk", line: 12, says: "matches more than one place" },
  { code: "anchor_not_found", says: "has an @@ anchor that was not found" },
  { code: "out_of_order_hunk", line: 3, says: "matches only before where its search started" },
  { code: "anchor_after_change", line: 3, says: "matches only before its @@ anchor: the anchor is after the change" },
  { code: "overlapping_hunks", line: 9, says: "overlaps an earlier chunk" },
];

describe("briefFailure: a lazily worded failure reads like an eager one", () => {
  for (const c of cases) {
    test(c.code, () => {
      const brief = briefFailure(c.code, "src/a.ts", { hunk: 30, patchLine: 400 }, c.line);
      const text = `${c.code}: chunk 30 of src/a.ts (patch line 400) ${c.says} (not diagnosed in full: earlier failures used up the budget of detailed ones).`;
      const eager = failure(c.code, text, { path: "src/a.ts", hunk: 30, patchLine: 400, ...(c.line !== undefined ? { line: c.line } : {}) });
      expect(brief.message).toBe(text);
      expect(Object.keys(brief)).toEqual(Object.keys(eager));
      expect(JSON.stringify(brief)).toBe(JSON.stringify(eager));
      expect({ ...brief }).toEqual(eager);
      expect(structuredClone(brief)).toEqual(eager);
      brief.message = "replaced";
      expect(brief.message).toBe("replaced");
    });
  }
});
