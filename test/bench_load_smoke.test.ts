/**
 * The load bench (bench/load.ts), checked at a tiny size for correctness
 * (not timed): three MCP clients over HTTP on distinct files and on one
 * shared file, a short session and a small "big" file — nothing lost,
 * every shared-file patch applied, every phase with its figures, and the
 * targets and table in the report.
 */
import { expect, test } from "bun:test";
import { runLoadBench } from "../bench/load.ts";

test("three clients, one round, a 40-call session, a 4 MiB file: nothing lost, every patch applied, the report complete", async () => {
  const report = await runLoadBench({ clients: 3, rounds: 1, sessionCalls: 40, bigBytes: 4 * 1024 * 1024, log: () => {} });
  expect(report.phases.map((p) => [p.name, p.calls, p.ok, p.lost])).toEqual([
    ["distinct", 3, 3, 0],
    ["shared", 3, 3, 0],
    ["session", 40, 40, 0],
    ["big (4 MiB, 1-line change)", 1, 1, 0],
  ]);
  for (const p of report.phases) expect(p.rss.maxMib).toBeGreaterThan(0);
  expect(report.rssGrowth).not.toBeNull();
  expect(report.targets.map((t) => [t.kind, t.label.split(" (")[0]])).toEqual([
    ["required", "load: lost updates in every phase = 0"],
    ["required", "load: 3 clients × 1 on one file, every patch applied"],
    ["required", "load: server RSS over the last 16 of 40 session calls grows ≤ 5.0%"],
    ["required", "load: a 1-line change to the 4 MiB file applied"],
  ]);
  expect(report.targets.slice(0, 2).every((t) => t.pass)).toBe(true);
  expect(report.markdown).toContain("| phase | calls | ok | failed | lost | apply p50 (ms) | apply p99 (ms) |");
}, 120_000);
