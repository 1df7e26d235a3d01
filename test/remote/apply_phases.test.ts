/**
 * applyPatch's `onPhase` (issue 29 item 5): each stage is announced as it
 * begins, with what it works on, and the caller's I/O gets a turn of the
 * event loop before the stage runs — so a progress notification sent for
 * "plan" is out before the synchronous planning starts. Real files,
 * LocalShell.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyPatch, LocalShell } from "../../mod.ts";
import type { ApplyPhase } from "../../mod.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function root(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "sap-phases-"));
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
  return dir;
}

const BIG = Array.from({ length: 20_000 }, (_, i) => `line ${i}`).join("\n") + "\n";
const PATCH = "*** Begin Patch\n*** Update File: big.txt\n@@\n-line 100\n+line one hundred\n@@\n-line 9000\n+line nine thousand\n*** Add File: new.txt\n+new\n*** End Patch";

describe("onPhase", () => {
  const cases: { name: string; dryRun: boolean; phases: ApplyPhase["phase"][] }[] = [
    { name: "a commit: read, plan, commit, in order", dryRun: false, phases: ["read", "plan", "commit"] },
    { name: "a dry run: read and plan only", dryRun: true, phases: ["read", "plan"] },
  ];
  for (const c of cases) {
    test(`${c.name}, each with what it works on`, async () => {
      const dir = root({ "big.txt": BIG });
      const seen: ApplyPhase[] = [];
      const r = await applyPatch(new LocalShell(), { root: dir, patch: PATCH, dryRun: c.dryRun, onPhase: (p) => seen.push(p) });
      expect(r.ok).toBe(true);
      expect(seen.map((p) => p.phase)).toEqual(c.phases);
      expect(seen[0]).toEqual({ phase: "read", files: 2 });
      expect(seen[1]).toEqual({ phase: "plan", files: 2, chunks: 2, bytes: PATCH.length + BIG.length });
      if (!c.dryRun) expect(seen[2]).toEqual({ phase: "commit", files: 2 });
      expect(readFileSync(join(dir, "big.txt"), "utf8")).toBe(c.dryRun ? BIG : BIG.replace("line 100\n", "line one hundred\n").replace("line 9000\n", "line nine thousand\n"));
    });
  }

  test("what the callback schedules runs before the stage does (the event loop gets a turn first)", async () => {
    const dir = root({ "big.txt": BIG });
    const seen: string[] = [];
    const r = await applyPatch(new LocalShell(), {
      root: dir,
      patch: PATCH,
      dryRun: true,
      // A macrotask scheduled when planning begins stands for the notification's write.
      onPhase: (p) => {
        seen.push(p.phase);
        if (p.phase === "plan") setTimeout(() => seen.push("timer after plan began"), 0);
      },
    });
    seen.push("returned");
    expect(r.ok).toBe(true);
    // Without the yield, planning (synchronous) and the dry run's return come first.
    expect(seen).toEqual(["read", "plan", "timer after plan began", "returned"]);
  });

  test("a parse failure or a failed read announces nothing past where it stopped", async () => {
    const dir = root({});
    const seen: ApplyPhase["phase"][] = [];
    const bad = await applyPatch(new LocalShell(), { root: dir, patch: "*** Begin Patch\n*** Frobnicate: x\n*** End Patch", onPhase: (p) => seen.push(p.phase) });
    expect(bad.ok).toBe(false);
    expect(seen).toEqual([]);
    const missing = await applyPatch(new LocalShell(), { root: dir, patch: "*** Begin Patch\n*** Update File: nope.txt\n@@\n-a\n+b\n*** End Patch", onPhase: (p) => seen.push(p.phase) });
    expect(missing.errors?.[0]?.code).toBe("not_found");
    expect(seen).toEqual(["read", "plan"]);
  });
});
