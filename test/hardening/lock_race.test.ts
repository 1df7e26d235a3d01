/**
 * Issue 28 item 0, the short run (the long one is `npm run hardening --
 * --only=locks`): holders of two uids take, check and release one lock
 * while planters of both uids keep putting dead owners' locks there —
 * every holder keeps breaking dead locks while the other releases and
 * re-takes — under dash, bash and BusyBox sh, and under libfaketime with a
 * clock a thousand times too fast. No lock is ever taken from a live
 * owner, nothing is left behind. Runs as root (the second holder is
 * another uid, through setpriv).
 */
import { describe, expect, test } from "bun:test";
import { runLockRace } from "./lock_race.ts";

const root = process.getuid?.() === 0;
if (!root) throw new Error("test/hardening/lock_race.test.ts needs root: its second holder is another uid (setpriv)");

describe("lock breaking never takes a live lock", () => {
  const cases: { name: string; shell: string[]; fakeClock: boolean; tries: number }[] = [
    { name: "dash", shell: ["dash"], fakeClock: false, tries: 20 },
    { name: "bash", shell: ["bash"], fakeClock: false, tries: 8 },
    { name: "BusyBox sh", shell: ["/usr/bin/busybox", "sh"], fakeClock: false, tries: 8 },
    { name: "dash under libfaketime, clock ×1000", shell: ["dash"], fakeClock: true, tries: 6 },
  ];
  for (const c of cases) {
    test(`${c.name}: release/re-take against breakers, two uids — 0 taken from live owners, nothing left`, async () => {
      const f = await runLockRace(c);
      expect(f.errors).toEqual([]);
      expect(f.taken).toBeGreaterThanOrEqual(c.tries * 2);
      expect(f.planted).toBeGreaterThan(0);
      expect(f.stolen).toBe(0);
      expect(f.left).toEqual([]);
      if (!c.fakeClock) expect(f.timeouts).toBe(0);
    }, 120_000);
  }
});
