/**
 * The scenario suite through the pure core: parsePatch → planPatch → the
 * plan applied in memory, compared byte for byte with `expected/`, or the
 * failures compared with `expected_failure.json` (SPEC §10). Fixtures live in
 * test/scenarios/ and are written from the SPEC (see test/scenarios/README.md).
 */
import { describe, expect, test } from "bun:test";
import { parsePatch } from "../lib/patch/parse.ts";
import { planPatch } from "../lib/plan/plan.ts";
import type { PatchFailure, Warning } from "../lib/types.ts";
import {
  applyPlanInMemory,
  buildSnapshots,
  describeTreeDifference,
  type ExpectedFailure,
  loadScenarios,
  patchPaths,
  projectFailures,
  type Scenario,
} from "./support/scenarios.ts";

const scenarios = loadScenarios();

function checkWarnings(scenario: Scenario, warnings: readonly Warning[]): void {
  const present = new Set(warnings.map((w) => w.code));
  const missing = scenario.expectedWarnings.filter((code) => !present.has(code));
  if (missing.length > 0) {
    throw new Error(`missing warnings ${missing.join(", ")}; present: ${[...present].join(", ") || "none"}`);
  }
}

function checkFailures(scenario: Scenario, stage: string, errors: readonly PatchFailure[]): void {
  if (scenario.expected.kind !== "failure") {
    throw new Error(`${stage} failed, but the scenario expects success:\n${JSON.stringify(errors, null, 2)}`);
  }
  const want: ExpectedFailure[] = scenario.expected.errors;
  expect(projectFailures(errors, want)).toEqual(want);
}

function runScenario(scenario: Scenario): void {
  const parsed = parsePatch(scenario.patch, { limits: scenario.options.limits });
  const warnings: Warning[] = [...parsed.warnings];
  if (!parsed.ok) {
    checkFailures(scenario, "parsePatch", parsed.errors);
    checkWarnings(scenario, warnings);
    return;
  }
  const snapshots = buildSnapshots(scenario.input, patchPaths(parsed.patch), scenario.setup);
  const result = planPatch(parsed.patch, snapshots, scenario.options);
  if (!result.ok) {
    warnings.push(...result.warnings);
    checkFailures(scenario, "planPatch", result.errors);
    checkWarnings(scenario, warnings);
    return;
  }
  warnings.push(...result.plan.warnings, ...result.plan.files.flatMap((f) => f.warnings));
  if (scenario.expected.kind !== "tree") {
    const summary = result.plan.files.map((f) => `${f.op} ${f.path}${f.moveTo ? ` -> ${f.moveTo}` : ""}`);
    throw new Error(
      `expected failures ${JSON.stringify(scenario.expected.errors)}, but the plan succeeded: ${summary.join("; ")}`,
    );
  }
  const difference = describeTreeDifference(scenario.expected.tree, applyPlanInMemory(scenario.input, result.plan));
  if (difference !== "") throw new Error(difference);
  checkWarnings(scenario, warnings);
}

describe("scenarios through parsePatch + planPatch", () => {
  test("the suite has at least 40 scenarios", () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(40);
  });

  for (const scenario of scenarios) {
    test(scenario.name, () => runScenario(scenario));
  }
});
