/**
 * Smoke test of the benchmark code at tiny sizes, so `npm test` keeps it
 * compiling and correct. Nothing here is timed: every registered benchmark
 * function is called once through a call-once registrar.
 */
import { describe, expect, test } from "bun:test";
import { registerAdversarialBenches } from "../bench/adversarial.bench.ts";
import { checkOurs, checkPeers } from "../bench/checks.ts";
import { sha256Hex } from "../bench/fixtures.ts";
import { floor } from "../bench/floor.ts";
import { generateCodeLines, LineIndex, oldSide, uniqueChunks } from "../bench/gen.ts";
import { registerPeerBenches } from "../bench/peers.bench.ts";
import { naiveApply, toUnifiedDiff } from "../bench/peers.ts";
import { registerPlanBenches } from "../bench/plan.bench.ts";
import { registerFamilyBenches } from "../bench/families.bench.ts";
import { FAMILIES } from "../bench/families.ts";
import { evaluateRatios, formatRatios, formatVerdict, ratioSpecs, ratioTargets } from "../bench/report.ts";
import { callOnceRegistrar, loadSuite, TINY_SIZES } from "../bench/suite.ts";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const suite = loadSuite(TINY_SIZES, null);

describe("bench generator", () => {
  test("is deterministic for a seed and differs across seeds", () => {
    expect(generateCodeLines(500, 9)).toEqual(generateCodeLines(500, 9));
    expect(generateCodeLines(500, 9)).not.toEqual(generateCodeLines(500, 10));
  });

  test("code lines average about 38 bytes and a third of them repeat", () => {
    const lines = generateCodeLines(20_000, 42);
    const bytes = lines.reduce((n, l) => n + l.length + 1, 0);
    expect(bytes / lines.length).toBeGreaterThan(33);
    expect(bytes / lines.length).toBeLessThan(44);
    const seen = new Map<string, number>();
    for (const l of lines) seen.set(l, (seen.get(l) ?? 0) + 1);
    const repeated = lines.filter((l) => seen.get(l)! > 1).length;
    expect(repeated / lines.length).toBeGreaterThan(0.3);
  });

  test.each([1, 10, 100])("%i chunks: old sides unique, in file order, not overlapping", (count) => {
    const lines = generateCodeLines(TINY_SIZES.large, 42);
    const index = new LineIndex(lines, (s) => s);
    const chunks = uniqueChunks(lines, count, 1, index);
    expect(chunks).toHaveLength(count);
    let end = 0;
    for (const chunk of chunks) {
      expect(index.count(oldSide(chunk))).toBe(1);
      expect(chunk.start).toBeGreaterThanOrEqual(end);
      end = chunk.start + oldSide(chunk).length;
    }
  });

  test("LineIndex counts overlapping occurrences", () => {
    const index = new LineIndex(["}", "}", "}", "x"], (s) => s);
    expect(index.count(["}", "}"])).toBe(2);
    expect(index.count(["}", "x"])).toBe(1);
    expect(index.count(["y"])).toBe(0);
  });
});

describe("bench floor and peers", () => {
  test("the floor decodes, splits and hashes the bytes", () => {
    const file = suite.file(`code-${TINY_SIZES.small}`);
    expect(floor(file.bytes)).toEqual({ lineCount: file.lineCount + 1, sha256: file.sha256 });
    expect(() => floor(new Uint8Array([0xff]))).toThrow();
  });

  test("naive and diff peers reproduce the oracle on every unique-context patch", () => {
    const failed = checkPeers(suite).filter((c) => !c.ok);
    expect(failed).toEqual([]);
  });

  test("the naive scanner takes the first of several matches (no uniqueness check)", () => {
    const bytes = new TextEncoder().encode("a\nb\na\nb\n");
    const out = naiveApply(bytes, "*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+c\n*** End Patch");
    expect(new TextDecoder().decode(out!)).toBe("a\nc\na\nb\n");
  });

  test("the unified-diff converter emits real line numbers and the file's context", () => {
    const diff = toUnifiedDiff("x\ny\nz\n", "*** Begin Patch\n*** Update File: f\n@@\n y\n-z\n+w\n*** End Patch");
    expect(diff).toBe("--- a/f\n+++ b/f\n@@ -2,2 +2,2 @@\n y\n-z\n+w\n");
  });
});

describe("bench ours", () => {
  test("ours meets every fixture expectation and agrees with the peers byte for byte", () => {
    const failed = checkOurs(suite).filter((c) => !c.ok);
    expect(failed).toEqual([]);
  });

  test("every registered benchmark runs once and every ratio finds its two benchmarks", () => {
    const results = new Map<string, unknown>();
    const registrar = callOnceRegistrar(results);
    registerPlanBenches(suite, registrar);
    registerAdversarialBenches(suite, registrar);
    registerFamilyBenches(suite, registrar);
    registerPeerBenches(suite, registrar);
    const fake = new Map([...results.keys()].map((name) => [name, 1]));
    const specs = ratioSpecs(TINY_SIZES, suite.families);
    const missing = specs.filter((r) => !fake.has(r.numerator) || !fake.has(r.denominator));
    expect(missing.map((r) => r.label)).toEqual([]);
    // Every family has its two ratio targets and its doubling (reported with and without GC).
    for (const f of FAMILIES) {
      const mine = specs.filter((r) => r.label.includes(`family ${f.name}`) || r.label.includes(`${f.name}-`));
      expect(mine.filter((r) => r.max !== undefined).length).toBe(3);
      expect(mine.some((r) => r.alsoWithoutGc)).toBe(true);
    }
    const planned = results.get(`plan code-${TINY_SIZES.large}-c100`) as { ok: boolean; plan?: { files: { newSha256?: string }[] } };
    const expected = suite.patch(`code-${TINY_SIZES.large}-c100`).expect;
    expect(planned.ok).toBe(true);
    expect(planned.plan?.files[0]?.newSha256).toBe(expected.ok ? expected.newSha256 : "");
    expect(sha256Hex(suite.file(`code-${TINY_SIZES.large}`).bytes)).toBe(suite.file(`code-${TINY_SIZES.large}`).sha256);
  });
});

describe("bench verdict and references", () => {
  test("a missed goal is reported but does not fail the run; a missed required target does", () => {
    const goalMissed = formatVerdict([{ label: "a", kind: "required", pass: true }, { label: "b", kind: "goal", pass: false }], []);
    expect(goalMissed.pass).toBe(true);
    expect(goalMissed.lines).toContain("goals: 0/1 met");
    expect(goalMissed.lines).toContain("  missed (goal): b");
    expect(goalMissed.lines.at(-1)).toStartWith("VERDICT: PASS");
    const requiredMissed = formatVerdict([{ label: "a", kind: "required", pass: false }, { label: "b", kind: "goal", pass: true }], []);
    expect(requiredMissed.pass).toBe(false);
    expect(requiredMissed.lines).toContain("  missed (required): a");
    expect(requiredMissed.lines.at(-1)).toStartWith("VERDICT: FAIL (1 required target(s) missed");
    expect(formatVerdict([], ["a check"]).pass).toBe(false);
  });

  const rounds = (...ratios: number[]) => ({ medianA: 1, medianB: 1, ratio: ratios[ratios.length >> 1]!, rounds: ratios });

  test("ratio targets are required unless marked goals, and decide by the median of the interleaved rounds", () => {
    const rows = evaluateRatios(
      [{ label: "x", numerator: "n", denominator: "d", max: 2, alsoWithoutGc: true }],
      new Map([["n", 3], ["d", 1]]),
      new Map([["x", rounds(1.4, 1.5, 1.5, 1.6, 2.6)]]),
      new Map([["x", rounds(2.5, 2.5, 2.5, 2.5, 2.5)]]),
    );
    expect(rows[0]).toMatchObject({ value: 3, paired: 1.5, pairedNoGc: 2.5, verdict: "PASS" });
    expect(ratioTargets(rows)).toEqual([{ label: "x: median 1.50× (min 1.40×, max 2.60×, 5 runs), margin 25 % of ≤ 2.00× (needs ≤ 1.80×)", kind: "required", pass: true }]);
  });

  test.each([
    ["inside the margin", [1.7, 1.75, 1.8, 1.85, 1.9], "PASS"],
    ["met, but by under 10 %", [1.8, 1.85, 1.85, 1.9, 1.95], "FAIL"],
    ["too few rounds", [1.0, 1.0, 1.0, 1.0], "FAIL"],
    ["only mitata's figure", null, "FAIL"],
  ] as const)("a ≤ 2.0× target %s: %s", (_name, measured, verdict) => {
    const paired = measured === null ? new Map() : new Map([["z", rounds(...measured)]]);
    const row = evaluateRatios([{ label: "z", numerator: "n", denominator: "d", max: 2 }], new Map([["n", 1], ["d", 1]]), paired)[0]!;
    expect(row.verdict).toBe(verdict);
  });

  test("a busy row is decided by its busy measurement, the quiet one shown beside it", () => {
    const spec = { label: "b", numerator: "n", denominator: "d", max: 2, busy: true };
    const quietOnly = evaluateRatios([spec], new Map([["n", 1], ["d", 1]]), new Map([["b", rounds(1, 1, 1, 1, 1)]]))[0]!;
    expect(quietOnly.verdict).toBe("missing");
    const row = evaluateRatios([spec], new Map([["n", 1], ["d", 1]]), new Map([["b", rounds(1, 1, 1, 1, 1)]]), new Map(), new Map(), new Map([["b", rounds(1.9, 1.95, 2, 2, 2)]]))[0]!;
    expect(row).toMatchObject({ paired: 1, pairedBusy: 2, verdict: "FAIL" });
    expect(formatRatios([row])).toContain("| b | 1.00× | 1.00× |  |  | 2.00× (1.90–2.00) | ≤ 2.0× (≤ 1.80×) | FAIL |");
    // Every family's doubling is a busy row at ≤ 2.0×.
    const doublings = ratioSpecs(TINY_SIZES, suite.families).filter((r) => r.label.startsWith("doubling family"));
    expect(doublings.length).toBe(FAMILIES.length);
    expect(doublings.every((r) => r.busy === true && r.max === 2.0)).toBe(true);
  });

  test("a ratio measured before the suite too is shown beside the one after it, which decides", () => {
    const spec = { label: "y", numerator: "n", denominator: "d", max: 2.5, alsoEarly: true };
    const row = evaluateRatios([spec], new Map([["n", 1], ["d", 1]]), new Map([["y", rounds(3, 3, 3, 3, 3)]]), new Map(), new Map([["y", rounds(1.2, 1.2, 1.2, 1.2, 1.2)]]))[0]!;
    expect(row).toMatchObject({ paired: 3, pairedEarly: 1.2, verdict: "FAIL" });
    expect(formatRatios([row])).toContain("| y | 1.00× | 3.00× (3.00–3.00) |  | 1.20× |  | ≤ 2.5× (≤ 2.25×) | FAIL |");
    // The two single-chunk ratios on the large file ask for it.
    const early = ratioSpecs(TINY_SIZES).filter((r) => r.alsoEarly).map((r) => r.numerator);
    expect(early).toEqual([`plan code-${TINY_SIZES.large}-tier3`, `plan code-${TINY_SIZES.large}-fail`]);
  });

  test("the plain indexOf reference applies a 3-chunk patch like the oracle", () => {
    const p = suite.patch(`code-${TINY_SIZES.large}-c3`);
    const dir = mkdtempSync(join(tmpdir(), "sap-indexof-"));
    try {
      const file = join(dir, "f.ts");
      writeFileSync(file, p.file.bytes);
      const r = spawnSync(process.execPath, [join(import.meta.dir, "..", "bench", "indexof_apply.ts"), file], { input: p.text });
      expect(r.status).toBe(0);
      expect(sha256Hex(readFileSync(file))).toBe(p.expect.ok ? p.expect.newSha256 : "");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
