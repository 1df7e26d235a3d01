/**
 * One patch over many small files, applied end to end (issue 28 item 1):
 * `applyPatch` of an Update of each of `files` files (100 directories)
 * through a LocalShell, then every file checked on disk. For
 * `npm run hardening` (`--only=manyfiles`; `SAP_MANY_FILES` sets the number,
 * default 10,000; `SAP_MANY_FILES_SHELL` the shell, default bash: the
 * commit program keeps every file's state in shell variables, and dash and
 * BusyBox sh look variables up in a 39-bucket table, so a commit of many
 * thousands of files is quadratic there in wall-clock time although its
 * command count is linear — see README "Performance").
 *
 * @module
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { tempDir } from "../support/local_trees.ts";

/** What one run did. */
export interface ManyFilesFigures {
  files: number;
  shell: string;
  ok: boolean;
  seconds: number;
  /** Files whose content on disk is not the patched one. */
  wrong: number;
  violations: string[];
}

/**
 * Apply one patch over `files` small files and check every one.
 *
 * @example
 * ```ts
 * const f = await runManyFilesPatch({ files: 1000 });
 * f.violations; // []
 * ```
 */
export async function runManyFilesPatch(options: { files: number; shell?: string; timeoutMs?: number }): Promise<ManyFilesFigures> {
  const shellName = options.shell ?? "bash";
  const root = tempDir("sap-many-files-");
  const lines = ["*** Begin Patch"];
  for (let i = 0; i < options.files; i++) {
    const dir = `d${i % 100}`;
    if (i < 100) mkdirSync(join(root, dir));
    writeFileSync(join(root, dir, `f${i}.txt`), `line ${i}\nold\n`);
    lines.push(`*** Update File: ${dir}/f${i}.txt`, "@@", ` line ${i}`, "-old", "+new");
  }
  lines.push("*** End Patch");
  const shell = new LocalShell({ shell: [shellName], cwd: tempDir("sap-many-cwd-") });
  const t0 = performance.now();
  const report = await applyPatch(shell, {
    root,
    patch: lines.join("\n"),
    timeoutMs: options.timeoutMs ?? 3_600_000,
    limits: { maxFiles: options.files, maxPatchBytes: 64 * 1024 * 1024 },
  });
  const seconds = (performance.now() - t0) / 1000;
  let wrong = 0;
  for (let i = 0; i < options.files; i++) {
    if (readFileSync(join(root, `d${i % 100}`, `f${i}.txt`), "utf8") !== `line ${i}\nnew\n`) wrong++;
  }
  const violations: string[] = [];
  if (!report.ok) violations.push(`the patch over ${options.files} files failed: ${report.errors?.map((e) => e.code).join(", ")}`);
  if (wrong > 0) violations.push(`${wrong} of ${options.files} files do not hold the patched content`);
  rmSync(root, { recursive: true, force: true });
  return { files: options.files, shell: shellName, ok: report.ok, seconds, wrong, violations };
}
