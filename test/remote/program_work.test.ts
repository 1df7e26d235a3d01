/**
 * Counted work of the remote programs (issue 28 item 1): every program is
 * near-linear in the number of paths and entries. Counted, never timed:
 * - the shell commands a program runs (its `set -x` trace lines under
 *   dash, which writes one per simple command), at n and 4n files spread
 *   over n/5 directories (n/2 for the commit) (so a loop over every file once per directory,
 *   or a `"$@"` grown one operand at a time, shows as the square); the
 *   ratio must stay within 4 · log(4n)/log(n), what n log n allows;
 * - for the snapshot, the most shell variables alive at once (sampled at
 *   its hooks): dash and BusyBox sh keep every variable in one 39-bucket
 *   table, so each access costs time in proportion to how many there are,
 *   and a program keeping a few per path is quadratic in wall-clock time
 *   however few commands it runs. The snapshot keeps them per part of 64
 *   paths, so the peak must not grow with n.
 * FAULT-FREE instrumentation: the program text gets a `set -x` line (its
 * trace goes to a file), and for the variable count the no-op hook is
 * replaced by one that appends `set`'s variable count to a file.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitRemote } from "../../lib/remote/commit.ts";
import { listFiles } from "../../lib/remote/list_files.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { HOOK_DEFINITION } from "../../lib/remote/programs/programs.ts";
import { searchFiles } from "../../lib/remote/search_files.ts";
import { shQuote } from "../../lib/remote/shell.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { cleanupTemps, makeTree, P, plan, shellCases, tempDir } from "../support/local_trees.ts";

afterAll(cleanupTemps, 30_000);

const dash = shellCases().find((c) => c.name === "dash")!;

/** Runs every program with `set -x`, its trace appended to a file; `hook` replaces the no-op hook. */
class TracingShell implements RemoteShell {
  readonly label = "local";
  readonly trace = join(tempDir("sap-trace-"), "trace");
  readonly #inner = new LocalShell({ ...dash.options, cwd: tempDir("sap-cwd-") });
  readonly hook: string | undefined;
  constructor(hook?: string) {
    this.hook = hook;
    writeFileSync(this.trace, "");
  }
  exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    let text = command;
    if (this.hook !== undefined) text = text.replace(HOOK_DEFINITION, () => `sap_hook() {\n${this.hook}\n}`);
    else text = `exec 2>>${shQuote(this.trace)}\nset -x\n${text}`;
    return this.#inner.exec(text, options);
  }
  /** Trace lines so far (one per simple command dash ran). */
  commands(): number {
    return readFileSync(this.trace, "utf8").split("\n").filter((l) => l.startsWith("+")).length;
  }
}

/** n small files, `perDirectory` in each directory. */
function files(n: number, perDirectory = 5): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < n; i++) out[`d${Math.floor(i / perDirectory)}/f${i}.txt`] = `needle ${i}\nline two\n`;
  return out;
}

/** What n log n allows for 4n against n. */
const bound = (n: number): number => (4 * Math.log(4 * n)) / Math.log(n);

const N = 60;
/** The commit does more per file: fewer files keep the test short. */
const COMMIT_N = 40;

/** The commands `run` makes the programs run for a tree of n files. */
async function commandsFor(n: number, run: (shell: TracingShell, root: string, paths: string[]) => Promise<unknown>, perDirectory?: number): Promise<number> {
  const tree = files(n, perDirectory);
  const root = makeTree(tree);
  const shell = new TracingShell();
  await run(shell, root, Object.keys(tree));
  return shell.commands();
}

const cases: [string, (shell: TracingShell, root: string, paths: string[]) => Promise<unknown>][] = [
  ["readSnapshots", async (shell, root, paths) => {
    const snaps = await readSnapshots(shell, root, paths);
    expect([...snaps.values()].filter((s) => s.rejected === undefined).length).toBe(paths.length);
  }],
  ["readSnapshots (one file per directory)", async (shell, root, paths) => {
    const snaps = await readSnapshots(shell, root, paths);
    expect([...snaps.values()].filter((s) => s.rejected === undefined).length).toBe(paths.length);
  }],
  ["listFiles (the whole tree)", async (shell, root, paths) => {
    const listed = await listFiles(shell, root, { depth: 3, maxEntries: 100_000 });
    expect(listed.entries?.length ?? 0).toBeGreaterThanOrEqual(paths.length);
  }],
  ["searchFiles", async (shell, root, paths) => {
    const found = await searchFiles(shell, root, "needle", { maxResults: 10_000 });
    expect(found.matches.length).toBe(paths.length);
  }],
  ["commitRemote (an update of every file)", async (shell, root, paths) => {
    const old = (p: string): string => `needle ${/f(\d+)\.txt$/.exec(p)![1]}\nline two\n`;
    const report = await commitRemote(shell, root, plan(paths.map((p) => P.update(p, old(p), `${old(p)}line three\n`))));
    expect(report.errors ?? []).toEqual([]);
    expect(report.ok).toBe(true);
  }],
];

describe("counted work of the remote programs (dash)", () => {
  for (const [name, run] of cases) {
    const commit = name.startsWith("commit");
    const n = commit ? COMMIT_N : N;
    // the commit's files two to a directory: its per-directory work shows
    // most; one read with a directory per file (the bulk read judges each
    // directory once)
    const perDirectory = commit ? 2 : name.includes("one file per directory") ? 1 : 5;
    test(`${name}: commands for ${4 * n} files within n log n of those for ${n}`, async () => {
      const small = await commandsFor(n, run, perDirectory);
      const large = await commandsFor(4 * n, run, perDirectory);
      expect(small).toBeGreaterThan(0);
      expect(large / small).toBeLessThanOrEqual(bound(n));
    }, 120_000);
  }

  test("readSnapshots: the most variables alive at once does not grow with the number of paths (parts of 64)", async () => {
    const peak = async (n: number): Promise<number> => {
      const tree = files(n);
      const root = makeTree(tree);
      const out = join(tempDir("sap-vars-"), "vars");
      writeFileSync(out, "");
      const shell = new TracingShell(`set | grep -c '^[A-Za-z_][A-Za-z0-9_]*=' >> ${shQuote(out)}`);
      await readSnapshots(shell, root, Object.keys(tree));
      return Math.max(...readFileSync(out, "utf8").split("\n").filter((l) => l !== "").map(Number));
    };
    const small = await peak(2 * N);
    const large = await peak(8 * N);
    expect(small).toBeGreaterThan(0);
    expect(large).toBeLessThanOrEqual(small * 1.25);
  }, 120_000);
});
