/**
 * Campaign 4 — an external writer that does not use our locks.
 *
 * The measurement. The target file starts with a small header our patches
 * edit (`counter: N` → `counter: N+1`) and is otherwise a log: the writer
 * appends unique lines `ext <n>` in place (open by name with O_APPEND,
 * write, close — what `echo >> file`, loggers and most daemons do), at
 * seeded random intervals, from this process while the patches commit
 * through a real shell. An append is *completed* when its write returned;
 * its number is then recorded. After the campaign the writer stops and the
 * file is read once: an append is **lost** when it completed but its line
 * is not in the file. Nothing else ever removes a line — our new content is
 * always the snapshot's content with the header edited — so a lost append
 * is exactly one that landed after the commit's re-check (step 3) had
 * hashed the file and before the rename (step 5) replaced it, or that
 * opened the old inode before the rename and wrote into it after. An
 * append that landed before the re-check makes the commit fail `conflict`
 * (nothing written; the caller re-reads and retries), so losses can only
 * come with a commit that reported success, which the campaign checks.
 *
 * The window itself is measured directly too: with test hooks (fault
 * injection points that print a timestamp) at the end of the re-check and
 * after the last file is finalized, over a few extra commits.
 *
 * @module
 */
import { appendFile } from "node:fs/promises";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { shQuote } from "../../lib/remote/shell.ts";
import type { RemoteShell } from "../../lib/remote/shell.ts";
import { HookedShell, tempDir } from "../support/local_trees.ts";
import { seeded } from "./prng.ts";

/** Parameters of {@linkcode runExternalWriter}. */
export interface ExternalWriterOptions {
  /** Patch attempts (each one snapshot + plan + commit). */
  trials: number;
  seed: number;
  shell: RemoteShell;
  /** Mean gap between two appends, ms (uniform in [0, 2 × mean]). */
  meanGapMs?: number;
  /** Extra instrumented commits that measure the unguarded window. */
  windowSamples?: number;
}

/** What the campaign measured. */
export interface ExternalWriterFigures {
  trials: number;
  /** Commits that reported success. */
  committed: number;
  /** Commits refused `conflict` (the writer was seen by the re-check). */
  conflicts: number;
  /** Other results, by code. */
  other: Record<string, number>;
  /** Appends that completed while the campaign ran. */
  appends: number;
  /** Completed appends whose line is gone. */
  lost: number;
  /** Violations: a loss without any successful commit, a broken header, a garbled line. */
  violations: string[];
  /** Median and max of the measured re-check → last rename window, ms. */
  windowMs: { median: number; max: number; samples: number };
}

const HEADER = (n: number): string => `# status file\ncounter: ${n}\n# appended lines follow\n`;

function patchFor(n: number): string {
  return ["*** Begin Patch", "*** Update File: status.log", "@@", " # status file", `-counter: ${n}`, `+counter: ${n + 1}`, "*** End Patch"].join("\n");
}

/**
 * Run the campaign; see the module doc for what is measured.
 *
 * @example
 * ```ts
 * const f = await runExternalWriter({ trials: 100, seed: 4, shell: new LocalShell() });
 * console.log(`${f.lost} of ${f.appends} appends lost`);
 * ```
 */
export async function runExternalWriter(options: ExternalWriterOptions): Promise<ExternalWriterFigures> {
  const rng = seeded(options.seed);
  const meanGap = options.meanGapMs ?? 25;
  const root = tempDir("sap-extw-");
  const file = join(root, "status.log");
  writeFileSync(file, HEADER(0));
  const figures: ExternalWriterFigures = {
    trials: options.trials,
    committed: 0,
    conflicts: 0,
    other: {},
    appends: 0,
    lost: 0,
    violations: [],
    windowMs: { median: 0, max: 0, samples: 0 },
  };

  const completed: number[] = [];
  let stop = false;
  const writer = (async () => {
    for (let n = 0; !stop; n++) {
      await Bun.sleep(rng() * 2 * meanGap);
      if (stop) break;
      await appendFile(file, `ext ${n}\n`);
      completed.push(n);
    }
  })();

  let counter = 0;
  try {
    for (let i = 0; i < options.trials; i++) {
      const report = await applyPatch(options.shell, { root, patch: patchFor(counter), lockWaitMs: 5000 });
      if (report.ok) {
        figures.committed++;
        counter++;
      } else {
        const code = report.errors?.[0]?.code ?? "unknown";
        if (code === "conflict") figures.conflicts++;
        else figures.other[code] = (figures.other[code] ?? 0) + 1;
      }
    }
  } finally {
    stop = true;
    await writer;
  }

  const text = readFileSync(file, "utf8");
  const lines = text.split("\n");
  if (!text.startsWith(HEADER(counter))) {
    figures.violations.push(`the header should read counter: ${counter} (every committed edit), found ${JSON.stringify(lines.slice(0, 3))}`);
  }
  const present = new Set<number>();
  for (const line of lines.slice(3)) {
    if (line === "") continue;
    const m = /^ext (\d+)$/.exec(line);
    if (!m) figures.violations.push(`a garbled line: ${JSON.stringify(line.slice(0, 80))}`);
    else present.add(Number(m[1]));
  }
  figures.appends = completed.length;
  figures.lost = completed.filter((n) => !present.has(n)).length;
  if (figures.lost > 0 && figures.committed === 0) figures.violations.push(`${figures.lost} appends lost although no commit succeeded`);

  figures.windowMs = await measureWindow(options.shell, options.windowSamples ?? 5);
  return figures;
}

/**
 * FAULT INJECTION (timestamps only): time from the end of the re-check to
 * the end of the last file's finalize, on a 3-file update, as printed by
 * hooks at `compared` (the end of the content re-check) and `after_finalize 2`. The hooks' own `date` costs
 * about one fork on each end.
 */
async function measureWindow(shell: RemoteShell, samples: number): Promise<ExternalWriterFigures["windowMs"]> {
  const times: number[] = [];
  for (let s = 0; s < samples; s++) {
    const root = tempDir("sap-window-");
    const stamps = join(tempDir("sap-stamps-"), "t");
    for (const name of ["a", "b", "c"]) writeFileSync(join(root, `${name}.txt`), `${name}\nold\n`);
    const hook = `case "$1:$2" in compared:|after_finalize:2) date +%s%N >> ${shQuote(stamps)} ;; esac`;
    const patch = ["*** Begin Patch", ...["a", "b", "c"].flatMap((n) => [`*** Update File: ${n}.txt`, "@@", ` ${n}`, "-old", "+new"]), "*** End Patch"].join("\n");
    const report = await applyPatch(new HookedShell(shell, hook), { root, patch });
    if (!report.ok) throw new Error(`window probe failed: ${report.errors?.[0]?.message}`);
    const [a, b] = readFileSync(stamps, "utf8").trim().split("\n").map((x) => BigInt(x));
    times.push(Number(b! - a!) / 1e6);
  }
  times.sort((x, y) => x - y);
  return { median: times[Math.floor(times.length / 2)] ?? 0, max: times.at(-1) ?? 0, samples: times.length };
}
