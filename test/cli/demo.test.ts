/**
 * `bun examples/demo.ts` (npm run demo) as a real process: it exits 0 only
 * when each of its parts behaved as it describes, and cleans up its copy.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { removeTemps, runScript } from "./run_cli.ts";

afterAll(removeTemps, 30_000);

const tempOf = (stdout: string): string => /Working on a copy of examples\/site\/ in (\S+?)(?: \(|\.\n)/.exec(stdout)![1]!;

test("the demo shows a real commit, a conflict and an ambiguity, exits 0 and removes its temp copy", async () => {
  const run = await runScript("examples/demo.ts", []);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  expect(run.stdout).toContain("Applied 4 files in local ");
  expect(run.stdout).toContain("rename from assets/style.css");
  expect(run.stdout).toContain("✓ site.conf kept its CRLF endings on all 7 lines");
  expect(run.stdout).toContain("[1] conflict · index.html");
  expect(run.stdout).toContain("✓ site.conf is unchanged too: one conflict stops the whole batch");
  expect(run.stdout).toContain("[1] ambiguous_hunk · assets/menu.js · chunk 1");
  expect(run.stdout).toMatch(/ 15:[0-9a-f]{2} /);
  expect(run.stdout).toContain("@@ function renderSpecials(list) {");
  expect(run.stdout).toContain("✓ applied inside renderSpecials only");
  expect(run.stdout).not.toContain("UNEXPECTED");
  expect(existsSync(tempOf(run.stdout))).toBe(false);
}, 20000);

test("--keep keeps the temp copy and says where", async () => {
  const run = await runScript("examples/demo.ts", ["--keep"]);
  expect(run.code).toBe(0);
  const dir = tempOf(run.stdout);
  try {
    expect(existsSync(`${dir}/assets/site.css`)).toBe(true);
    expect(run.stdout).toContain(`The files are still in ${dir}.`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 20000);
