/**
 * The fleet bench's contenders, checked for correctness (not timed): on a
 * few hosts, applyFleet and the ssh sed -i fan-out each leave every host's
 * file with exactly the new content, and the report carries its ratio and
 * its target.
 */
import { describe, expect, test } from "bun:test";
import { runFleetBench } from "../bench/fleet.ts";
import { sshdReady } from "./support/sshd.ts";

const ready = sshdReady("fleet bench smoke (test/bench_fleet_smoke.test.ts)");

describe.skipIf(!ready)("fleet bench", () => {
  test("three hosts, one round: every contender right, a ratio and the target in the report", async () => {
    const report = await runFleetBench({ hosts: 3, rounds: 1 });
    expect(report.rows.map((r) => [r.ok, r.note])).toEqual([[true, undefined], [true, undefined], [true, undefined], [true, undefined]]);
    expect(report.ratio).toBeGreaterThan(0);
    expect(report.sameKexRatio).toBeGreaterThan(0);
    expect(report.targets.map((t) => t.kind)).toEqual(["required", "goal"]);
    expect(report.markdown).toContain("| applyFleet (canary 0), a connection per host |");
  }, 60_000);
});
