/**
 * Clock jumps (issue 28 item 0, issue 26 item 4): every program runs under
 * libfaketime while the test keeps jumping the clock two days back and
 * forth (FAKETIME_TIMESTAMP_FILE, re-read at every call). Concurrent
 * commits of one file, some cancelled mid-way: no lock is ever judged
 * stale (no `stale_lock_broken`: every owner is alive), no update is lost
 * (the counter in the file equals the commits reported ok), every report
 * is a true one (ok, conflict, locked or cancelled, never unknown), and
 * nothing of ours is left in the root.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitRemote } from "../../lib/remote/commit.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { cleanupTemps, makeTree, noLeftoversAfterEach, P, plan, tempDir } from "../support/local_trees.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();

const LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
if (!existsSync(LIB)) throw new Error(`libfaketime is not installed (${LIB}; apt-get install -y faketime): the clock-jump test needs it`);

describe("commits under clock jumps", () => {
  test("3 concurrent committers × 12 rounds, some cancelled, the clock jumping ±2 days every 20 ms: nothing stale, nothing lost, nothing left", async () => {
    const root = makeTree({ "n.txt": "0\n" });
    const clock = join(tempDir(), "faketime");
    writeFileSync(clock, "+0");
    let flip = 0;
    const jumper = setInterval(() => writeFileSync(clock, ++flip % 2 === 0 ? "-2d" : "+2d"), 20);
    const shell = new LocalShell({
      shell: ["dash"],
      env: { ...process.env as Record<string, string>, LD_PRELOAD: LIB, FAKETIME_TIMESTAMP_FILE: clock, FAKETIME_NO_CACHE: "1" },
    });
    const codes: Record<string, number> = {};
    let applied = 0;
    try {
      for (let round = 0; round < 12; round++) {
        const now = readFileSync(join(root, "n.txt"), "utf8");
        const next = `${Number(now) + 1}\n`;
        const reports = await Promise.all([0, 1, 2].map((who) => {
          const controller = new AbortController();
          if (who === 2 && round % 3 === 0) setTimeout(() => controller.abort(), 15);
          return commitRemote(shell, root, plan([P.update("n.txt", now, next)]), { signal: controller.signal, lockWaitMs: 3000 });
        }));
        for (const r of reports) {
          if (r.ok) applied++;
          const code = r.ok ? "ok" : r.errors![0]!.code;
          codes[code] = (codes[code] ?? 0) + 1;
          expect(r.warnings.map((w) => w.code)).not.toContain("stale_lock_broken");
        }
      }
    } finally {
      clearInterval(jumper);
    }
    expect(Object.keys(codes).every((c) => ["ok", "conflict", "locked", "cancelled"].includes(c))).toBe(true);
    expect(Number(readFileSync(join(root, "n.txt"), "utf8"))).toBe(applied);
    expect(applied).toBeGreaterThan(0);
    expect(readdirSync(root)).toEqual(["n.txt"]);
  }, 120_000);
});
