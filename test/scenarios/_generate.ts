/**
 * Writes the scenario fixtures from the `_cases_*.ts` tables:
 * `npx bun test/scenarios/_generate.ts`. The output is committed; the suite
 * never generates at test time. Each case's directory is replaced whole;
 * directories the tables do not define are reported, never deleted.
 *
 * The tables are written from SPEC §3–§6, not from the implementation: when
 * the two disagree, decide which one is wrong before touching a case.
 *
 * @module
 */
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Files, ScenarioCase } from "./_case.ts";
import { FORMAT_CASES } from "./_cases_format.ts";
import { PLAN_FAILURE_CASES } from "./_cases_plan_failures.ts";
import { REJECTED_CASES } from "./_cases_rejected.ts";
import { REPLACE_CASES } from "./_cases_replace.ts";
import { ENCODING_CASES } from "./_cases_encoding.ts";
import { ROUND2_CASES } from "./_cases_round2.ts";
import { TEXT_CASES } from "./_cases_text.ts";
import { TIER_CASES } from "./_cases_tiers.ts";

/** Every case, in id order. */
export const ALL_CASES: ScenarioCase[] = [
  ...FORMAT_CASES,
  ...REJECTED_CASES,
  ...PLAN_FAILURE_CASES,
  ...TEXT_CASES,
  ...TIER_CASES,
  ...ROUND2_CASES,
  ...REPLACE_CASES,
  ...ENCODING_CASES,
].sort((a, b) => a.id - b.id);

/**
 * The directory name of a case: `NNN_name`.
 *
 * @example
 * ```ts
 * caseDirName({ id: 3, name: "update_one_chunk" } as ScenarioCase); // "003_update_one_chunk"
 * ```
 */
export function caseDirName(scenario: Pick<ScenarioCase, "id" | "name">): string {
  return `${String(scenario.id).padStart(3, "0")}_${scenario.name}`;
}

function writeFiles(dir: string, files: Files): void {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, ...path.split("/"));
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function validate(scenario: ScenarioCase, seen: Set<number>): void {
  const label = caseDirName(scenario);
  if (seen.has(scenario.id)) throw new Error(`${label}: duplicate id`);
  seen.add(scenario.id);
  if (!/^[a-z0-9]+(?:_[a-z0-9]+)*$/.test(scenario.name)) throw new Error(`${label}: name is not snake_case`);
  if ((scenario.expected === undefined) === (scenario.failure === undefined)) {
    throw new Error(`${label}: needs exactly one of expected and failure`);
  }
  if (scenario.expected !== undefined && Object.keys(scenario.expected).length === 0) {
    throw new Error(`${label}: an empty expected tree cannot be committed; keep a bystander file`);
  }
}

/**
 * Write every case under `root` (default: this directory).
 *
 * @example
 * ```ts
 * generateScenarios(); // rewrites test/scenarios/NNN_*
 * ```
 */
export function generateScenarios(root: string = import.meta.dir): string[] {
  const seen = new Set<number>();
  const written: string[] = [];
  for (const scenario of ALL_CASES) {
    validate(scenario, seen);
    const dir = join(root, caseDirName(scenario));
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFiles(join(dir, "input"), scenario.input ?? {});
    writeFileSync(join(dir, "patch.txt"), scenario.patch);
    if (scenario.expected !== undefined) writeFiles(join(dir, "expected"), scenario.expected);
    if (scenario.failure !== undefined) writeFileSync(join(dir, "expected_failure.json"), json({ errors: scenario.failure }));
    if (scenario.options !== undefined) writeFileSync(join(dir, "options.json"), json(scenario.options));
    if (scenario.warnings !== undefined) writeFileSync(join(dir, "expected_warnings.json"), json(scenario.warnings));
    if (scenario.setup !== undefined) writeFileSync(join(dir, "setup.json"), json(scenario.setup));
    writeFileSync(join(dir, "README.md"), `# ${caseDirName(scenario)}\n\n${scenario.readme}\n`);
    written.push(caseDirName(scenario));
  }
  const known = new Set(written);
  for (const name of readdirSync(root)) {
    if (!name.startsWith("_") && !name.startsWith(".") && /^\d{3}_/.test(name) && !known.has(name)) {
      console.warn(`not generated (left alone): ${name}`);
    }
  }
  return written;
}

if (import.meta.main) {
  if (!existsSync(import.meta.dir)) throw new Error(`missing ${import.meta.dir}`);
  const written = generateScenarios();
  console.log(`wrote ${written.length} scenarios`);
}
