/**
 * The CLI's fleet progress view: a line per finished host everywhere, and on
 * a terminal a bar kept below the lines (cleared before each line and at
 * the end, so lines never mix with it).
 */
import { describe, expect, test } from "bun:test";
import { FleetProgressView } from "../../examples/cli/fleet_text.ts";
import type { ApplyReport, FleetHost, FleetProgress } from "../../mod.ts";

const report: ApplyReport = { ok: true, operationId: "0123456789abcdef", atomicity: "batch_preflight_per_file_commit", elevated: false, dryRun: false, files: [], warnings: [] };
const applied = (name: string): FleetHost => ({ name, state: "applied", phase: "rollout", ms: 12, order: 1, report });

const events: FleetProgress[] = [
  { type: "host_started", name: "web1", phase: "canary", running: 1, done: 0, total: 2 },
  { type: "host_finished", name: "web1", phase: "canary", host: applied("web1"), running: 0, done: 1, total: 2 },
  { type: "host_started", name: "web2", phase: "rollout", running: 1, done: 1, total: 2 },
  { type: "host_finished", name: "web2", phase: "rollout", host: applied("web2"), running: 0, done: 2, total: 2 },
];

function run(isTTY: boolean): string {
  let out = "";
  const view = new FleetProgressView({ write: (text: string) => (out += text), isTTY, columns: 100 });
  for (const e of events) view.update(e);
  view.end();
  return out;
}

describe("FleetProgressView", () => {
  test("not a terminal: exactly one line per finished host, no control characters", () => {
    expect(run(false)).toBe("[1/2] web1  applied  12 ms\n[2/2] web2  applied  12 ms\n");
  });

  test("a terminal: the bar is redrawn in place below the lines and cleared before each line and at the end", () => {
    const out = run(true);
    expect(out).toContain("\r\x1b[K[--------------------] 0/2  1 running");
    expect(out).toContain("\r\x1b[K[##########----------] 1/2  1 applied, 1 running");
    expect(out).toContain("\r\x1b[K[####################] 2/2  2 applied, 0 running");
    // Each bar is wiped before the line after it: without the bars and the wipes, only the lines remain.
    const bars = /\r\x1b\[K\[[#-]{20}\][^\r\n]*/g;
    expect(out.replaceAll(bars, "").replaceAll("\r\x1b[K", "")).toBe("[1/2] web1  applied  12 ms\n[2/2] web2  applied  12 ms\n");
    expect(out.endsWith("\r\x1b[K")).toBe(true);
  });
});
