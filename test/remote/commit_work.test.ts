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
 * the one process that cuts the stage out of the upload; for a delta
 * upload, its pin (taken before the locks, alone) and one dd per source
 * range instead, and no subshell either.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
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
  // The gate's and the upload's watchdogs (commit_gate.ts) keep time with
  // `sleep 1`: how many of those run depends on how long the upload takes on
  // a loaded machine, not on the number of files, so each watchdog subshell
  // and everything it starts is left out (found as the parent of a sleep).
  const pids = new Set<string>();
  const execed = new Set<string>();
  const parent = new Map<string, string>();
  const sleeps = new Set<string>();
  const lines = readFileSync(log, "utf8").split("\n");
  for (const line of lines) {
    const pid = /^(\d+) /.exec(line)?.[1];
    if (pid === undefined) continue;
    pids.add(pid);
    const child = /(?:clone3?|v?fork)(?:\(| resumed>).*\)\s+= (\d+)$/.exec(line)?.[1];
    if (child !== undefined) parent.set(child, pid);
    if (/execve(?:\(| resumed>).*\)\s+= 0$/.test(line)) execed.add(pid);
    if (/execve\("[^"]*\/sleep"/.test(line)) sleeps.add(pid);
  }
  // (never the program's own shell, the first pid: a lock wait sleeps there)
  const first = /^(\d+) /.exec(lines[0] ?? "")?.[1];
  const watchdogs = new Set<string>();
  for (const s of sleeps) { const p = parent.get(s); if (p !== undefined && p !== first) watchdogs.add(p); }
  const timekeeping = (pid: string): boolean => watchdogs.has(pid) || watchdogs.has(parent.get(pid) ?? "");
  let execs = 0;
  for (const line of lines) {
    const pid = /^(\d+) /.exec(line)?.[1];
    if (pid === undefined || timekeeping(pid)) continue;
    if (/execve(?:\(| resumed>).*\)\s+= 0$/.test(line)) execs++;
  }
  let forks = 0;
  for (const pid of pids) if (!execed.has(pid) && !timekeeping(pid)) forks++;
  return { execs, forks };
}

/** n files in 5 directories, `lines` lines each. */
function sourceFiles(n: number, lines: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) {
    files[`src/m${i % 5}/file${i}.ts`] = Array.from({ length: lines }, (_, j) => `export const v${j} = ${j * 7 + i};\n`).join("");
  }
  return files;
}

/** A LocalShell for case c whose programs run under strace, logging to the returned file (each exec overwrites it). */
function tracedShell(c: ReturnType<typeof shellCases>[number]): { shell: LocalShell; log: string } {
  const log = join(tempDir("sap-strace-"), "trace");
  const shell = new LocalShell({
    ...c.options,
    shell: [STRACE!, "-f", "-qq", "-e", "trace=execve,clone,clone3,fork,vfork", "-e", "signal=none", "-o", log, ...c.options.shell!],
    cwd: tempDir("sap-cwd-"),
  });
  return { shell, log };
}

/**
 * Delta uploads (4000 lines, ≥ 64 KiB, line 100 changed) of n files, as
 * applyPatch makes them from a snapshot; the log is the commit's (the last exec).
 */
async function deltaCommitUnderStrace(c: ReturnType<typeof shellCases>[number], n: number): Promise<{ execs: number; forks: number }> {
  const files = sourceFiles(n, 4000);
  const root = makeTree(files);
  const { shell, log } = tracedShell(c);
  const patch = ["*** Begin Patch"];
  for (const [p, old] of Object.entries(files)) {
    const line = old.split("\n")[100]!;
    patch.push(`*** Update File: ${p}`, "@@", `-${line}`, `+${line} // changed`);
  }
  patch.push("*** End Patch", "");
  const report = await applyPatch(shell, { root, patch: patch.join("\n") });
  expect(report.errors).toBeUndefined();
  expect(report.files.every((f) => f.bytesUploaded! < 4096)).toBe(true); // delta uploads, not whole files
  return counts(log);
}

/** An update of n files (5 directories, 200 lines each, one line changed) under strace. */
async function commitUnderStrace(c: ReturnType<typeof shellCases>[number], n: number): Promise<{ execs: number; forks: number }> {
  const files = sourceFiles(n, 200);
  const root = makeTree(files);
  const { shell, log } = tracedShell(c);
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

    test(`${c.name} userland: delta uploads from 5 to 15 files, no subshell per added file`, async () => {
      const small = await deltaCommitUnderStrace(c, 5);
      const large = await deltaCommitUnderStrace(c, 15);
      const perFile = { execs: (large.execs - small.execs) / 10, forks: (large.forks - small.forks) / 10 };
      // per file: the rename, the pin (a delta's source is pinned before
      // the locks, alone) and one dd per source range (here one: the
      // changed line is within the first 4 KiB, sent with it); the
      // uploaded stretch is printf'd, a builtin
      const seen = JSON.stringify({ perFile, small, large });
      expect({ execsPerFile: perFile.execs <= 3, seen }).toEqual({ execsPerFile: true, seen });
      expect({ subshellsPerFile: perFile.forks <= 0.25, seen }).toEqual({ subshellsPerFile: true, seen });
      console.log(`${c.name} (delta): ${seen}`);
    }, 60_000);
  }
});
