/**
 * The type-level tests (test/types/narrowing.ts) have teeth: with every
 * `@ts-expect-error` directive turned into a plain comment, the type
 * checker reports an error on exactly the line after each directive and
 * nowhere else. `npm run check` compiles the file itself, where an
 * expected error that disappears is TS2578 (unused directive) and a
 * positive case that stops narrowing is an ordinary error.
 */
import { afterAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const REPO = join(import.meta.dir, "..", "..");
const SOURCE = join(import.meta.dir, "narrowing.ts");
const temp = mkdtempSync(join(tmpdir(), "sap-types-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

test("every @ts-expect-error of the type tests marks a real error, and only those lines fail", () => {
  const lines = readFileSync(SOURCE, "utf8").split("\n");
  const directive = /^\s*\/\/ @ts-expect-error/;
  const expected = lines.flatMap((line, i) => (directive.test(line) ? [i + 2] : []));
  expect(expected.length).toBeGreaterThanOrEqual(10);
  const unchecked = lines
    .map((line) => (directive.test(line) ? line.replace("@ts-expect-error", "(an error is expected on the next line)") : line))
    .join("\n")
    .replaceAll('"../../mod.ts"', JSON.stringify(join(REPO, "mod.ts")));
  const file = join(temp, "narrowing_unchecked.ts");
  writeFileSync(file, unchecked);
  const run = spawnSync(process.execPath, ["check", "--no-script", "--no-pretty", "-p", join(REPO, "tsconfig.json"), file], { encoding: "utf8", cwd: REPO });
  const output = `${run.stdout}${run.stderr}`;
  const failing = [...output.matchAll(/narrowing_unchecked\.ts\((\d+),\d+\): error/g)].map((m) => Number(m[1]));
  expect({ exit: run.status, lines: [...new Set(failing)].sort((a, b) => a - b) }).toEqual({ exit: 1, lines: expected });
}, 60_000);
