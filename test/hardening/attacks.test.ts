/**
 * The attack corpus (test/hardening/attack_cases.ts), one test per row,
 * through applyPatch on a real LocalShell (as the current user — root in
 * CI, so an escape would really succeed). Zero escapes, zero executions,
 * every row's expectation. The same corpus runs over SSH in
 * `npm run hardening`.
 *
 * Rows that inject a fault at a hook point say so in their name; three of
 * them are the regression tests of defects the corpus found: the commit's
 * cleanup deleted an outside file named like its stage through a
 * directory swapped for a symlink; the journal was appended to by path and
 * appeared in the swapped-in directory; chmod/chown of a stage by path
 * followed a stage swapped for a symlink (an outside file got the patched
 * file's mode, and as root its owner).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { cleanupTemps, tempDir } from "../support/local_trees.ts";
import { ATTACKS } from "./attack_cases.ts";
import { runAttacks } from "./attacks.ts";

afterAll(cleanupTemps, 30_000);

describe("attack corpus (LocalShell)", () => {
  test("the corpus has at least 40 rows", () => {
    expect(ATTACKS.length).toBeGreaterThanOrEqual(40);
  });
  for (const c of ATTACKS) {
    test(c.name, async () => {
      const figures = await runAttacks({ shell: new LocalShell({ cwd: tempDir("sap-attack-cwd-") }), cases: [c] });
      expect(figures.violations).toEqual([]);
      expect(figures.escapes).toBe(0);
      expect(figures.executions).toBe(0);
    });
  }
});
