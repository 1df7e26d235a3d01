/**
 * `alreadyApplied`: when a host's failed plan means "this host already holds
 * the patch" (a re-run's skipped host), judged on the real failures of a
 * patch sent a second time through LocalShell.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { applyPatch } from "../../lib/apply.ts";
import { alreadyApplied } from "../../lib/fleet/host_state.ts";
import { parsePatch } from "../../lib/patch/parse.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { cleanupTemps, makeTree } from "../support/local_trees.ts";

// Real programs on a shared machine: a test that takes 1 s on an idle one may take ten times that.
setDefaultTimeout(30_000);

afterAll(cleanupTemps);

const P = (...lines: string[]): string => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");
const CONF = "listen 80\nworkers 2\nlog /var/log/app.log\nuser www\n";

const cases: { name: string; files: Record<string, string>; patch: string; between?: Record<string, string>; expected: boolean }[] = [
  { name: "an Update of one chunk", files: { "a.conf": CONF }, patch: P("*** Update File: a.conf", "@@", "-workers 2", "+workers 8"), expected: true },
  {
    name: "an Update of two chunks",
    files: { "a.conf": CONF },
    patch: P("*** Update File: a.conf", "@@", "-workers 2", "+workers 8", "@@", "-user www", "+user app"),
    expected: true,
  },
  { name: "an Add (the file exists with exactly its content)", files: { "a.conf": CONF }, patch: P("*** Add File: notes/todo.md", "+# Todo"), expected: true },
  { name: "an Update + Move", files: { "a.conf": CONF }, patch: P("*** Update File: a.conf", "*** Move to: b.conf", "@@", "-workers 2", "+workers 8"), expected: true },
  {
    name: "two files, both applied",
    files: { "a.conf": CONF, "b.conf": CONF },
    patch: P("*** Update File: a.conf", "@@", "-workers 2", "+workers 8", "*** Update File: b.conf", "@@", "-user www", "+user app"),
    expected: true,
  },
  {
    name: "two files, one of them put back by hand: not applied as a whole",
    files: { "a.conf": CONF, "b.conf": CONF },
    patch: P("*** Update File: a.conf", "@@", "-workers 2", "+workers 8", "*** Update File: b.conf", "@@", "-user www", "+user app"),
    between: { "b.conf": CONF },
    expected: false,
  },
  {
    name: "two chunks, one put back by hand (the other still applies): not applied as a whole",
    files: { "a.conf": CONF },
    patch: P("*** Update File: a.conf", "@@", "-workers 2", "+workers 8", "@@", "-user www", "+user app"),
    between: { "a.conf": CONF.replace("workers 2", "workers 8") },
    expected: false,
  },
  { name: "a Delete (a missing file says nothing)", files: { "a.conf": CONF }, patch: P("*** Delete File: a.conf"), expected: false },
  {
    name: "an Add whose file has other content",
    files: { "a.conf": CONF },
    patch: P("*** Add File: notes/todo.md", "+# Todo"),
    between: { "notes/todo.md": "# Other\n" },
    expected: false,
  },
];

describe("alreadyApplied: a patch sent again to a host that has it", () => {
  for (const c of cases) {
    test(`${c.name}: ${c.expected}`, async () => {
      const root = makeTree(c.files);
      const shell = new LocalShell();
      const first = await applyPatch(shell, { root, patch: c.patch });
      expect(first.ok).toBe(true);
      for (const [path, text] of Object.entries(c.between ?? {})) await Bun.write(`${root}/${path}`, text);
      const again = await applyPatch(shell, { root, patch: c.patch });
      const parsed = parsePatch(c.patch);
      if (!parsed.ok) throw new Error("the case's patch does not parse");
      if (again.ok) {
        expect(c.expected).toBe(false); // applied again: certainly not "already applied"
        return;
      }
      expect(alreadyApplied(parsed.patch, again.errors!)).toBe(c.expected);
    });
  }
});
