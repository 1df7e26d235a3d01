/**
 * Regression: between the content re-check and the renames (the only
 * window in which a writer that ignores our locks can be lost, SPEC §7)
 * the commit program must run nothing but the renames themselves. Found by
 * the external-writer campaign: metadata copying (stat, ls, getfattr,
 * chmod per file), the backup links, the journal creation and a subshell
 * per step all ran in that window (median 30 ms for three files here; 24
 * of 270 concurrent appends lost over 26 commits, against 6 of 200 over 39
 * after the fix).
 *
 * FAULT INJECTION (tracing only): a hook right after the content
 * comparison defines a shell function for every external tool the program
 * uses, logging the tool's name before running it; a hook after the last
 * file is finalized removes them again. The log lists every process the
 * program started in between.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitRemote } from "../../lib/remote/commit.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { shQuote } from "../../lib/remote/shell.ts";
import { assertNoLeftovers, cleanupTemps, HookedShell, makeTree, P, plan, tempDir } from "../support/local_trees.ts";

afterAll(cleanupTemps, 30_000);

/** Every external tool the remote programs use. */
const TOOLS = ["mv", "stat", "chmod", "chown", "chgrp", "ls", "getfattr", "grep", "link", "ln", "cp", "rm", "rmdir", "sha256sum", "shasum", "openssl", "date", "mkdir", "dd", "head", "tail", "cat", "id", "uname", "sleep", "mktemp"];

/** Hook code: log every tool run between the content comparison and the end of finalize. */
function toolLogger(log: string, lastFile: number): string {
  const define = TOOLS.map((t) => `${t}() { printf '%s\\n' ${t} >> ${shQuote(log)}; command ${t} "$@"; }`).join("\n");
  return `case "$1:$2" in\ncompared:)\n${define}\n;;\nafter_finalize:${lastFile}) unset -f ${TOOLS.join(" ")} ;;\nesac`;
}

describe("the unguarded window holds only the renames", () => {
  for (const name of ["dash", "bash"]) {
    test(`${name}: after the content re-check, three updates and a delete start exactly their four renames (tools logged via hooks)`, async () => {
      const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n", "c.txt": { content: "c1\n", mode: 0o750 }, "d.txt": "d1\n" });
      const thePlan = plan([P.update("a.txt", "a1\n", "a2\n"), P.update("b.txt", "b1\n", "b2\n"), P.update("c.txt", "c1\n", "c2\n"), P.delete("d.txt", "d1\n")]);
      const log = join(tempDir("sap-log-"), "tools");
      writeFileSync(log, "");
      const shell = new HookedShell(new LocalShell({ shell: [name], cwd: tempDir("sap-cwd-") }), toolLogger(log, 3));
      const report = await commitRemote(shell, root, thePlan);
      expect(report.errors).toBeUndefined();
      expect(readFileSync(join(root, "c.txt"), "utf8")).toBe("c2\n");
      expect(statSync(join(root, "c.txt")).mode & 0o777).toBe(0o750);
      // exactly the four renames: no stat, chmod, link, rm, mkdir, … in between
      expect(readFileSync(log, "utf8").split("\n").filter(Boolean)).toEqual(["mv", "mv", "mv", "mv"]);
      assertNoLeftovers(root);
    });
  }
});
