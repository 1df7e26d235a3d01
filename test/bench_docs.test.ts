/**
 * The bench's doc writer (bench/docs_markers.ts): `npm run bench --
 * --write-docs` replaces the sections of docs/performance.md between
 * `<!-- bench:begin NAME -->` and `<!-- bench:end NAME -->` and nothing else.
 * Tested on a small synthetic run (nothing is measured here), and against the
 * real doc, so a run that ends after ten minutes cannot fail on a missing
 * marker.
 */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BENCH_DOC_PATH, BENCH_SECTIONS, STANDALONE_BENCH_SECTIONS, type BenchRunForDocs, benchDocSections, markedSections, replaceMarkedSections } from "../bench/docs_markers.ts";
import { evaluateRatios, formatVerdict, type RatioSpec, ratioTargets, type TargetResult } from "../bench/report.ts";

const REPO = join(import.meta.dir, "..");

const DOC = [
  "# Performance",
  "",
  "Prose with a `<!-- bench:begin x -->` in a code span stays prose.",
  "<!-- bench:begin summary -->",
  "old summary",
  "<!-- bench:end summary -->",
  "",
  "Between the sections.",
  "",
  "<!-- bench:begin ratios -->",
  "| old | table |",
  "<!-- bench:end ratios -->",
  "Last line, no newline after it.",
].join("\n");

/** A run as bench/run.ts would hand it over, from made-up medians (ns). */
function syntheticRun(): BenchRunForDocs {
  const specs: RatioSpec[] = [
    { label: "planPatch 100 chunks, 1000 lines ÷ floor", numerator: "plan code-1000-c100", denominator: "floor code-1000", max: 2.0 },
    { label: "doubling floor 500 → 1000 lines (reference)", numerator: "floor code-1000", denominator: "floor code-500" },
    { label: "family lowentropy-200 ÷ floor", numerator: "plan lowentropy-200", denominator: "floor lowentropy-200", max: 3.0 },
  ];
  const medians = new Map([
    ["floor code-500", 1.0e6],
    ["floor code-1000", 2.0e6],
    ["plan code-1000-c100", 3.0e6],
    ["floor lowentropy-200", 1.0e6],
    ["plan lowentropy-200", 3.5e6],
  ]);
  const five = (r: number) => ({ medianA: 1, medianB: r, ratio: r, rounds: [r, r, r, r, r] });
  const paired = new Map([["planPatch 100 chunks, 1000 lines ÷ floor", five(1.5)], ["family lowentropy-200 ÷ floor", five(3.5)]]);
  const ratios = evaluateRatios(specs, medians, paired);
  const targets: TargetResult[] = [
    ...ratioTargets(ratios),
    { label: "whole process, 38.5 MB, 3 chunks: ours faster than Codex apply_patch (480 vs 538 ms: 0.89×)", kind: "required", pass: true },
    { label: "whole process, 38.5 MB, 3 chunks: ours ≤ 1.0× GNU patch (480 vs 131 ms: 3.67×)", kind: "goal", pass: false },
  ];
  return {
    machine: "Test CPU, 2 cores, 4 GiB, bun 1.4.4",
    commit: "`abc1234`",
    finishedAt: "2026-12-02T10:00:00Z",
    minutes: 8.25,
    verdictLines: formatVerdict(targets, []).lines,
    checks: { passed: 12, total: 12 },
    targets,
    ratios,
    medians,
    process: "## Whole processes — Test CPU, 2 cores, bun 1.4.4\n\n### code-1000-c3\n\n| process | median (ms) |\n|---|---:|\n| ours | 480 |",
    remote: "## Remote figures (exec calls and bytes)\n\n| transport | step | execs |\n|---|---|---:|\n| local | commitRemote | 1 |",
    wire: "## Wire (throttled link)\n\nnot measured in this run (--no-wire)",
    fleet: "## Many hosts: applyFleet against a parallel-ssh style fan-out\n\n**50 hosts** (separate roots behind one sshd)",
  };
}

describe("markedSections", () => {
  test("finds each section's content between its marker lines; markers in prose lines are not markers", () => {
    const sections = markedSections(DOC);
    expect(sections.map((s) => [s.name, DOC.slice(s.contentStart, s.contentEnd)])).toEqual([
      ["summary", "old summary\n"],
      ["ratios", "| old | table |\n"],
    ]);
  });
  const malformed: [string, string, RegExp][] = [
    ["a begin without its end", "<!-- bench:begin a -->\nx\n", /line 1: bench:begin a has no bench:end a/],
    ["an end without a begin", "x\n<!-- bench:end a -->\n", /line 2: bench:end a without its bench:begin/],
    ["an end of another section", "<!-- bench:begin a -->\n<!-- bench:end b -->\n", /bench:end b without its bench:begin \(a is open\)/],
    ["a section inside another", "<!-- bench:begin a -->\n<!-- bench:begin b -->\n<!-- bench:end b -->\n<!-- bench:end a -->\n", /line 2: bench:begin b inside a/],
    ["a name used twice", "<!-- bench:begin a -->\n<!-- bench:end a -->\n<!-- bench:begin a -->\n<!-- bench:end a -->\n", /line 3: a second section named a/],
    ["a misspelt marker", "<!-- bench:start a -->\n", /line 1: not a bench marker/],
    ["a marker with text after it", "<!-- bench:begin a --> and more\n<!-- bench:end a -->\n", /line 1: not a bench marker/],
  ];
  for (const [name, doc, error] of malformed) {
    test(`refuses ${name}`, () => expect(() => markedSections(doc)).toThrow(error));
  }
});

describe("replaceMarkedSections", () => {
  test("replaces the given sections and keeps every other byte", () => {
    const out = replaceMarkedSections(DOC, { ratios: "| new | table |\n|---|---|\n\n\n" });
    expect(out).toBe(DOC.replace("| old | table |\n", "| new | table |\n|---|---|\n"));
  });
  test("is idempotent: writing the same run twice gives the same doc", () => {
    const sections = { summary: "s", ratios: "r" };
    const once = replaceMarkedSections(DOC, sections);
    expect(replaceMarkedSections(once, sections)).toBe(once);
  });
  test("an empty content leaves the markers on adjacent lines, ready for the next run", () => {
    const out = replaceMarkedSections(DOC, { summary: "" });
    expect(out).toContain("<!-- bench:begin summary -->\n\n<!-- bench:end summary -->");
    expect(markedSections(out).map((s) => s.name)).toEqual(["summary", "ratios"]);
  });
  test("a section with no markers in the doc is an error naming it, not a silent skip", () => {
    expect(() => replaceMarkedSections(DOC, { summary: "s", wire: "w", medians: "m" })).toThrow(/no markers for wire, medians/);
  });
});

describe("benchDocSections", () => {
  const sections = benchDocSections(syntheticRun());
  test("writes every section the doc has markers for", () => {
    expect(Object.keys(sections)).toEqual([...BENCH_SECTIONS]);
  });
  test("summary: the commit, the time, the machine, the checks and the verdict lines", () => {
    expect(sections.summary).toContain("at `abc1234`, finished 2026-12-02T10:00:00Z after 8.3 min, on Test CPU, 2 cores, 4 GiB, bun 1.4.4.");
    expect(sections.summary).toContain("correctness checks: 12/12 passed");
    expect(sections.summary).toContain("required targets: 2/3 met");
    expect(sections.summary).toContain("VERDICT: FAIL");
  });
  test("targets: one row per target; a missed goal is not called FAIL", () => {
    const rows = sections.targets.split("\n").slice(2);
    expect(rows).toEqual([
      "| planPatch 100 chunks, 1000 lines ÷ floor: median 1.50× (min 1.50×, max 1.50×, 5 runs), margin 25 % of ≤ 2.00× (needs ≤ 1.80×) | required | PASS |",
      "| family lowentropy-200 ÷ floor: median 3.50× (min 3.50×, max 3.50×, 5 runs), margin -17 % of ≤ 3.00× (needs ≤ 2.70×) | required | FAIL |",
      "| whole process, 38.5 MB, 3 chunks: ours faster than Codex apply_patch (480 vs 538 ms: 0.89×) | required | PASS |",
      "| whole process, 38.5 MB, 3 chunks: ours ≤ 1.0× GNU patch (480 vs 131 ms: 3.67×) | goal | goal missed |",
    ]);
  });
  test("ratios and medians are the report's own tables, computed from the run", () => {
    expect(sections.ratios).toContain("| planPatch 100 chunks, 1000 lines ÷ floor | 1.50× |");
    expect(sections.ratios).toContain("| family lowentropy-200 ÷ floor | 3.50× |");
    expect(sections.medians).toContain("| plan code-1000-c100 | 3.00 |");
  });
  test("the parts lose the heading of their standalone output (the doc has its own) and keep the rest", () => {
    expect(sections.process.startsWith("### code-1000-c3")).toBe(true);
    expect(sections.remote.startsWith("| transport | step | execs |")).toBe(true);
    expect(sections.wire).toBe("not measured in this run (--no-wire)");
    expect(sections.fleet).toBe("**50 hosts** (separate roots behind one sshd)");
  });
  test("a pipe in a target's label does not break its row", () => {
    const run = { ...syntheticRun(), targets: [{ label: "a | b", kind: "required" as const, pass: true }] };
    expect(benchDocSections(run).targets).toContain("| a \\| b | required | PASS |");
  });
});

describe(BENCH_DOC_PATH, () => {
  const doc = readFileSync(join(REPO, BENCH_DOC_PATH), "utf8");
  test("has well-formed markers for every section the bench writes, in the order it writes them", () => {
    const names = markedSections(doc).map((s) => s.name);
    expect(names.filter((n) => !STANDALONE_BENCH_SECTIONS.includes(n))).toEqual([...BENCH_SECTIONS]);
    expect(names.filter((n) => STANDALONE_BENCH_SECTIONS.includes(n))).toEqual([...STANDALONE_BENCH_SECTIONS]);
  });
  test("a run written into it changes only the marked sections (the prose stays as written)", () => {
    const prose = (text: string) => {
      const sections = markedSections(text);
      let out = "";
      let at = 0;
      for (const s of sections) {
        out += text.slice(at, s.contentStart);
        at = s.contentEnd;
      }
      return out + text.slice(at);
    };
    const written = replaceMarkedSections(doc, benchDocSections(syntheticRun()));
    expect(written).not.toBe(doc);
    expect(prose(written)).toBe(prose(doc));
    expect(written).toContain("VERDICT: FAIL");
  });
});

test("bench/run.ts refuses --write-docs with --quick before measuring anything", () => {
  const r = spawnSync(process.execPath, [join(REPO, "bench", "run.ts"), "--quick", "--write-docs"], { encoding: "utf8", timeout: 30_000 });
  expect(r.status).toBe(2);
  expect(r.stderr).toContain("--write-docs refuses --quick");
  expect(r.stderr).not.toContain("fixtures:");
});
