/**
 * Counted work of the commit program (issue 17 item 3): the per-file cost
 * of a commit, in processes the host starts, is bounded — the stat, hash,
 * chmod, lock, pin and second-link work is batched (one tool run per
 * private directory or per batch, not per file), and a stage is cut from
 * the upload by one process. Counted from the outside: the program runs
 * under `strace -f -e trace=execve,…`, and the cost per file is the growth
 * from 10 to 50 updated files in 5 directories (the wire bench's 50-file
 * case), so the constant work — probes, private directories, the
 * one-per-batch tools — cancels out; the 50-file commit's total is
 * bounded too. What stays per file, by design: the rename itself (each
 * preceded and followed by its own identity checks, SPEC §7's window) and
 * the one process that cuts the stage out of the upload.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { commitRemote } from "../../lib/remote/commit.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { cleanupTemps, makeTree, noLeftoversAfterEach, P, plan, shellCases, tempDir } from "../support/local_trees.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();

const STRACE = Bun.which("strace");
if (STRACE === null) throw new Error("strace is not installed (apt-get install -y strace); the counted-work test needs it");

/**
 * Processes started (successful execve) and processes that never exec'd
 * (subshells: forks of the shell that run only shell code and builtins, or
 * fork again) in a strace -f log, whose lines begin with the pid.
 */
function counts(log: string): { execs: number; forks: number } {
  const pids = new Set<string>();
  const execed = new Set<string>();
  let execs = 0;
  for (const line of readFileSync(log, "utf8").split("\n")) {
    const pid = /^(\d+) /.exec(line)?.[1];
    if (pid === undefined) continue;
    pids.add(pid);
    if (/execve(?:\(| resumed>).*\)\s+= 0$/.test(line)) { execs++; execed.add(pid); }
  }
  return { execs, forks: pids.size - execed.size };
}

/** An update of n files (5 directories, 200 lines each, one line changed) under strace. */
async function commitUnderStrace(c: ReturnType<typeof shellCases>[number], n: number): Promise<{ execs: number; forks: number }> {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) {
    files[`src/m${i % 5}/file${i}.ts`] = Array.from({ length: 200 }, (_, j) => `export const v${j} = ${j * 7 + i};\n`).join("");
  }
  const root = makeTree(files);
  const log = join(tempDir("sap-strace-"), "trace");
  const shell = new LocalShell({
    ...c.options,
    shell: [STRACE!, "-f", "-qq", "-e", "trace=execve,clone,clone3,fork,vfork", "-e", "signal=none", "-o", log, ...c.options.shell!],
    cwd: tempDir("sap-cwd-"),
  });
  const report = await commitRemote(shell, root, plan(Object.entries(files).map(([p, old]) => P.update(p, old, old.replace("= 700;", "= 701;")))));
  expect(report.errors).toBeUndefined();
  for (const [p, old] of Object.entries(files)) expect(readFileSync(join(root, p), "utf8")).toBe(old.replace("= 700;", "= 701;"));
  return counts(log);
}

const cases = shellCases().filter((c) => c.name === "dash" || c.name === "busybox");

describe("the commit program's work per file is bounded (processes counted with strace)", () => {
  for (const c of cases) {
    test(`${c.name} userland: from 10 to 50 updated files, at most 2 processes and no subshell per added file`, async () => {
      const small = await commitUnderStrace(c, 10);
      const large = await commitUnderStrace(c, 50);
      const perFile = { execs: (large.execs - small.execs) / 40, forks: (large.forks - small.forks) / 40 };
      // 2: the rename, the stage's dd (see the module comment); the 50-file
      // commit in all: those, plus ~60 of constant work (82 for 10 files)
      const seen = JSON.stringify({ perFile, small, large });
      expect({ execsPerFile: perFile.execs <= 2, seen }).toEqual({ execsPerFile: true, seen });
      expect({ subshellsPerFile: perFile.forks <= 0.25, seen }).toEqual({ subshellsPerFile: true, seen });
      expect({ execsFor50: large.execs <= 2 * 50 + 70, seen }).toEqual({ execsFor50: true, seen });
      console.log(`${c.name}: ${seen}`);
    }, 60_000);
  }
});
