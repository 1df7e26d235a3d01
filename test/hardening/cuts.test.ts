/**
 * Campaign 1, short version (`npm run hardening` sweeps 40 cut points per
 * direction): FAULT INJECTION — a TCP proxy between client and a real sshd
 * cuts the connection after N bytes of client→server, or of server→client
 * traffic, during a 3-file commit; every cut must keep every invariant of
 * verdict.ts, judged after any orphaned remote program has ended. Also a
 * few SIGKILLs of the commit program over SSH.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cleanupTemps, tempDir } from "../support/local_trees.ts";
import { sshdReady } from "../support/sshd.ts";
import { runCutSweep } from "./cuts.ts";
import { runKillCampaign } from "./kills.ts";
import { deltaFiles, threeFileFixture, writeBefore } from "./fixture.ts";
import { startSshEnv } from "./ssh_env.ts";
import type { SshEnv } from "./ssh_env.ts";

const ready = sshdReady("hardening: connection cuts and kills over a real sshd (test/hardening/cuts.test.ts)");

describe.skipIf(!ready)("faults over a real sshd", () => {
  let env: SshEnv;
  beforeAll(async () => {
    env = await startSshEnv();
  });
  afterAll(async () => {
    await env?.stop();
    cleanupTemps();
  }, 30_000);

  test("connection cut at 4 points in each direction of a 3-file commit with a delta upload (TCP proxy): every invariant holds", async () => {
    expect(deltaFiles(threeFileFixture())).toBe(1);
    const f = await runCutSweep({ sshd: env.sshd, workDir: env.workDir, pointsPerDirection: 4, makeRoot: () => tempDir("sap-cut-"), owner: env.owner });
    expect(f.violations).toEqual([]);
    expect(f.survived).toBe(f.cuts);
    expect(f.cuts).toBe(8);
    expect(f.results.outcome_unknown ?? 0).toBeGreaterThan(0); // the cuts really hit the commit
  }, 60_000);

  test("SIGKILL of the commit program's process group over SSH, 4 seeded moments: every invariant holds", async () => {
    const shell = await env.connect();
    try {
      const f = await runKillCampaign({
        trials: 4,
        seed: 7,
        shell,
        makeRoot: () => tempDir("sap-sshkill-"),
        prepare: (root, fx) => writeBefore(root, fx, env.owner),
      });
      expect(f.violations).toEqual([]);
      expect(f.survived).toBe(4);
    } finally {
      await shell.close();
    }
  }, 60_000);
});
