/**
 * The one "closest name" helper every front end shares (issue 26 item 3):
 * folding of case, `_` and `-`, edit distance with adjacent swaps, prefixes,
 * no suggestion for a stranger, bounded work, and the message text.
 */
import { describe, expect, test } from "bun:test";
import { closestName, foldName, MAX_COMPARED_CHARS, unknownNames, unknownNamesText } from "../../../lib/text/closest_name.ts";

const MCP_APPLY = ["patch", "root", "dry_run", "expected_sha256"];
const LIB_APPLY = ["root", "patch", "dryRun", "expectedSha256", "matching", "requireShaForDelete", "createParents", "limits", "timeoutMs"];
const CLI = ["root", "patch", "dry-run", "expect", "json", "matching", "require-sha-for-delete", "timeout-ms", "help"];

describe("closestName", () => {
  const cases: { given: string; known: string[]; want: string | null }[] = [
    // the spellings of the issue, against each front end's own spelling
    { given: "dryrun", known: MCP_APPLY, want: "dry_run" },
    { given: "dryRun", known: MCP_APPLY, want: "dry_run" },
    { given: "DRY-RUN", known: MCP_APPLY, want: "dry_run" },
    { given: "expectedSha256", known: MCP_APPLY, want: "expected_sha256" },
    { given: "expectedsha256", known: MCP_APPLY, want: "expected_sha256" },
    { given: "dry_run", known: LIB_APPLY, want: "dryRun" },
    { given: "dryrun", known: LIB_APPLY, want: "dryRun" },
    { given: "expected_sha256", known: LIB_APPLY, want: "expectedSha256" },
    { given: "dryrun", known: CLI, want: "dry-run" },
    { given: "dry_run", known: CLI, want: "dry-run" },
    // near misses: a typo, a swap, a missing letter, a prefix
    { given: "pacth", known: MCP_APPLY, want: "patch" },
    { given: "expected_sha265", known: MCP_APPLY, want: "expected_sha256" },
    { given: "expected_sha", known: MCP_APPLY, want: "expected_sha256" },
    { given: "expected", known: MCP_APPLY, want: "expected_sha256" },
    { given: "timeout", known: LIB_APPLY, want: "timeoutMs" },
    { given: "requireShaForDeletes", known: LIB_APPLY, want: "requireShaForDelete" },
    // strangers get nothing rather than a wild guess
    { given: "colour", known: MCP_APPLY, want: null },
    { given: "x", known: MCP_APPLY, want: null },
    { given: "", known: MCP_APPLY, want: null },
    { given: "__", known: MCP_APPLY, want: null },
  ];
  for (const c of cases) {
    test(`${JSON.stringify(c.given)} → ${JSON.stringify(c.want)}`, () => {
      expect(closestName(c.given, c.known)).toBe(c.want);
    });
  }

  test("a near miss ranks before a prefix; ties go to the earlier name", () => {
    expect(closestName("pat", ["path", "patch"])).toBe("path"); // one edit beats a prefix
    expect(closestName("ab", ["ac", "ad"])).toBe("ac");
  });

  test("bounded: a name longer than the compared maximum is never compared", () => {
    // Compared, it would be suggested dry_run (that is a prefix of it): null proves the cut-off.
    expect(closestName(`dry_run${"x".repeat(1_000_000)}`, MCP_APPLY)).toBe(null);
    expect(closestName("a".repeat(MAX_COMPARED_CHARS), ["a".repeat(MAX_COMPARED_CHARS - 1)])).toBe("a".repeat(MAX_COMPARED_CHARS - 1));
  });

  test("foldName ignores case, underscores, dashes and spaces", () => {
    expect(foldName("Expected_SHA-256 x")).toBe("expectedsha256x");
  });
});

describe("unknownNames and unknownNamesText", () => {
  test("only the names not known, each with its suggestion", () => {
    expect(unknownNames(["patch", "dryrun", "colour"], MCP_APPLY)).toEqual([
      { name: "dryrun", closest: "dry_run" },
      { name: "colour", closest: null },
    ]);
  });

  const texts: { name: string; found: { name: string; closest: string | null }[]; want: string }[] = [
    { name: "one, with a suggestion", found: [{ name: "dryrun", closest: "dry_run" }], want: "unknown argument `dryrun`: did you mean `dry_run`?" },
    {
      name: "one, without: the known names",
      found: [{ name: "colour", closest: null }],
      want: "unknown argument `colour`; the arguments are `patch`, `root`, `dry_run`, `expected_sha256`",
    },
    {
      name: "several",
      found: [{ name: "dryrun", closest: "dry_run" }, { name: "expectedSha256", closest: "expected_sha256" }],
      want: "unknown arguments `dryrun` (did you mean `dry_run`?), `expectedSha256` (did you mean `expected_sha256`?)",
    },
  ];
  for (const c of texts) {
    test(c.name, () => expect(unknownNamesText(c.found, "argument", MCP_APPLY)).toBe(c.want));
  }

  test("a hostile name is cut and its control characters and backticks escaped", () => {
    const text = unknownNamesText([{ name: `a\n\x1b[2Kb\`${"z".repeat(200)}`, closest: null }], "argument", ["patch"]);
    expect(text).not.toMatch(/[\n\x1b]/);
    expect(text).toContain("a\\u000a\\u001b[2Kb\\u0060");
    expect(text.length).toBeLessThan(200);
  });

  test("at most five names are shown; the rest are counted", () => {
    const found = Array.from({ length: 8 }, (_, i) => ({ name: `k${i}`, closest: "patch" }));
    expect(unknownNamesText(found, "argument", MCP_APPLY)).toEndWith("`k4` (did you mean `patch`?), 3 more");
  });

  test("a front end writes names its own way (the CLI's --flags)", () => {
    expect(unknownNamesText([{ name: "dryrun", closest: "dry-run" }], "flag", CLI, (n) => `--${n}`)).toBe("unknown flag --dryrun: did you mean --dry-run?");
  });
});
