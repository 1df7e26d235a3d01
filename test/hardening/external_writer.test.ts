/**
 * Campaign 4, short version (`npm run hardening` runs the long one and
 * prints the count): an external writer appending to the target without
 * our locks while patches commit. Losses are possible by design (SPEC §7:
 * the window between the re-check and the rename); what must hold is that
 * every committed edit is there, nothing is garbled, and an append can be
 * lost only when a commit succeeded.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { cleanupTemps, tempDir } from "../support/local_trees.ts";
import { runExternalWriter } from "./external_writer.ts";

afterAll(cleanupTemps, 30_000);

describe("external writer", () => {
  test("15 patch attempts against a writer appending every ~40 ms: edits intact, losses only with a successful commit", async () => {
    const f = await runExternalWriter({ trials: 15, seed: 41, meanGapMs: 40, windowSamples: 1, shell: new LocalShell({ cwd: tempDir("sap-extw-cwd-") }) });
    expect(f.violations).toEqual([]);
    expect(f.appends).toBeGreaterThan(0);
    expect(f.committed + f.conflicts).toBe(15);
    if (f.committed === 0) expect(f.lost).toBe(0);
  }, 60_000);
});
