/**
 * Regression (found by the hardening fuzz campaign's scaling probe): the
 * tier passes compared each file line with every key sharing its sampled
 * signature, so keys alike in every sampled character — easy to send on
 * purpose, e.g. thousands of `@@` anchors or context lines like
 * `K00001M00N1Z`, `K00002M00N2Z`, … — made planning quadratic (40k such
 * anchors over a 1.1 MiB input: 17 s). SPEC §5.5 asks for near-linear work
 * on any input. Counted, not timed: the work counters must stay within a
 * constant per line, and doubling the input must not more than double
 * them.
 */
import { describe, expect, test } from "bun:test";
import { locateChunks } from "../../lib/match/locate.ts";
import { parsePatch } from "../../lib/patch/parse.ts";
import { decodeText } from "../../lib/text/text.ts";
import { newMatchStats } from "../../lib/match/tier_index.ts";
import { signatureSamples } from "../../lib/match/tier_keyer.ts";
import type { MatchStats } from "../../lib/match/tier_index.ts";
import type { Chunk } from "../../lib/types.ts";

/** Alike at every character the signature samples, digits of `i` elsewhere. */
function key(i: number): string {
  const sampled = new Set(signatureSamples(12));
  const digits = String(i).padStart(8, "0");
  let out = "";
  let d = 0;
  for (let p = 0; p < 12; p++) out += sampled.has(p) ? "K" : digits[d++]!;
  return out;
}

function total(s: MatchStats): number {
  return s.linesScanned + s.linesKeyed + s.candidatesVerified + s.idComparisons + s.scanSteps + s.scanReports + s.votes + s.lcsCells + s.diagnosticLines + s.textProbes + s.similarSetup;
}

function run(n: number, shape: "anchors" | "context", matching: "exact" | "lenient"): { stats: MatchStats; ok: boolean } {
  const body = shape === "anchors"
    ? [...Array.from({ length: n }, (_, i) => `@@ ${key(i)}`), " x", "-y", "+z"]
    : [...Array.from({ length: n }, (_, i) => ` ${key(i)}`), " x", "-y", "+z"];
  const parsed = parsePatch(["*** Begin Patch", "*** Update File: f.txt", ...body, "*** End Patch"].join("\n"));
  if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
  const chunks = (parsed.patch.ops[0] as { chunks: Chunk[] }).chunks;
  const decoded = decodeText(new TextEncoder().encode(Array.from({ length: n }, (_, i) => key(i)).join("\n") + "\nx\ny\n"));
  if (!decoded.ok) throw new Error("not text");
  const stats = newMatchStats();
  const result = locateChunks(decoded.file, chunks, { matching, path: "f.txt", indentationSensitive: false, excerptLines: 40, excerptBytes: 4096, stats });
  return { stats, ok: result.errors.length === 0 };
}

describe("lines alike in every sampled character (counted work)", () => {
  for (const shape of ["anchors", "context"] as const) {
    for (const matching of ["exact", "lenient"] as const) {
      test(`${shape}, ${matching}: 10k and 20k keys over as many lines stay linear`, () => {
        const small = run(10_000, shape, matching);
        const large = run(20_000, shape, matching);
        expect(small.ok && large.ok).toBe(true);
        expect(total(small.stats)).toBeLessThanOrEqual(40 * 10_000);
        expect(total(large.stats)).toBeLessThanOrEqual(40 * 20_000);
        expect(total(large.stats)).toBeLessThanOrEqual(2.2 * total(small.stats));
      });
    }
  }
});
