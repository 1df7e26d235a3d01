/**
 * The chunk diagnoses stay linear in the patch (SPEC §11.1): counted, not
 * timed. Every chunk of a patch may match only by re-indenting (each gets an
 * `indentation_adjusted` warning and a placement); checking whether that
 * re-indent was a guess must read each placement a constant number of
 * times, not search the placements once per warning (file × patch work:
 * 20 000 such chunks took 2.3 s, three times the 10 000 case).
 */
import { describe, expect, test } from "bun:test";
import { locateChunks } from "../../../lib/match/locate.ts";
import type { ChunkPlacement } from "../../../lib/match/placement.ts";
import { parsePatch } from "../../../lib/patch/parse.ts";
import { diagnoseChunkFailures, guessedIndentation } from "../../../lib/plan/chunk_diagnoses.ts";
import { decodeText } from "../../../lib/text/text.ts";
import { type MatchStats, newMatchStats } from "../../../lib/match/tier_index.ts";
import type { PatchFailure, UpdateFileOp } from "../../../lib/types.ts";
import { FAMILIES } from "../../../bench/families.ts";
import { formatCodexPatch, linesToBytes } from "../../../bench/gen.ts";

/** n chunks, each two lines shifted left by 2 spaces from the file: all re-indented. */
function input(n: number): { env: Parameters<typeof guessedIndentation>[0]; located: ReturnType<typeof locateChunks> } {
  let file = "";
  let patch = "*** Begin Patch\n*** Update File: f.py\n";
  for (let i = 0; i < n; i++) {
    file += `    line ${i} unique\n        body ${i}\n`;
    patch += `@@\n   line ${i} unique\n-      body ${i}\n+      new ${i}\n`;
  }
  patch += "*** End Patch\n";
  const parsed = parsePatch(patch, { limits: { maxChunksPerFile: 1_000_000 } });
  if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
  const decoded = decodeText(new TextEncoder().encode(file));
  if (!decoded.ok) throw new Error("not UTF-8");
  const op = parsed.patch.ops[0] as UpdateFileOp;
  const locate = { path: "f.py", indentationSensitive: true, excerptLines: 40, excerptBytes: 4096 };
  const located = locateChunks(decoded.file, op.chunks, { ...locate, matching: "lenient", detail: 20 });
  return { env: { file: decoded.file, op, locate }, located };
}

/** The placements, counting every element read. */
function counted(placements: readonly ChunkPlacement[]): { list: ChunkPlacement[]; reads: () => number } {
  let reads = 0;
  const list = new Proxy([...placements], {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  return { list, reads: () => reads };
}

describe("guessedIndentation", () => {
  for (const n of [500, 2000]) {
    test(`${n} re-indented chunks: each placement read at most twice`, () => {
      const { env, located } = input(n);
      const adjusted = located.warnings.filter((w) => w.code === "indentation_adjusted");
      expect(adjusted.length).toBe(n); // the input is what it claims: every chunk re-indented
      const { list, reads } = counted(located.placements);
      const guessed = guessedIndentation(env, located.warnings, list);
      expect(guessed).toEqual([]); // the chunks' context does not match with markers read as content
      expect(reads()).toBeLessThanOrEqual(2 * n);
    });
  }
});

/**
 * The lost-marker diagnosis re-locates each failing chunk with its context
 * lines' markers read as content (a second index over the whole file).
 * For chunks locate proved absent — an `@@` anchor found nowhere, or an old
 * side found at no tier, which ignores leading and trailing whitespace —
 * no such reading can match, and the file is not searched again: counted
 * with the work counters of that second search.
 */
describe("diagnoseChunkFailures: chunks found nowhere cost no second search", () => {
  for (const family of ["failing", "anchors", "alternating"]) {
    test(`${family}: no index is built for their readings (counted)`, () => {
      const input = FAMILIES.find((f) => f.name === family)!.generate(20_000, 42);
      const parsed = parsePatch(formatCodexPatch("src/f.ts", input.chunks), { limits: { maxChunksPerFile: 1_000_000 } });
      if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
      const decoded = decodeText(linesToBytes(input.lines));
      if (!decoded.ok) throw new Error("not UTF-8");
      const op = parsed.patch.ops[0] as UpdateFileOp;
      const locate = { path: "src/f.ts", indentationSensitive: false, excerptLines: 40, excerptBytes: 4096 };
      const located = locateChunks(decoded.file, op.chunks, { ...locate, matching: "lenient", detail: 20 });
      expect(located.errors.length).toBe(Math.min(20, op.chunks.length));
      expect(located.errors.every((e) => located.absent.has(e.hunk!))).toBe(true);
      const counted = (absent: ReadonlySet<number>): { stats: MatchStats; errors: PatchFailure[] } => {
        const stats = newMatchStats();
        const errors = diagnoseChunkFailures({ file: decoded.file, op, locate: { ...locate, stats } }, located.errors, absent);
        return { stats, errors };
      };
      const skipped = counted(located.absent);
      expect(skipped.stats.indexBuilds).toBe(0);
      expect(skipped.stats.linesScanned).toBe(0);
      // The same failures as when every reading is searched for (which costs a pass).
      const searched = counted(new Set());
      expect(searched.stats.linesScanned).toBeGreaterThanOrEqual(decoded.file.eols.length);
      expect(skipped.errors).toEqual(searched.errors);
    });
  }
});
