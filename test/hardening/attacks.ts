/**
 * Campaign 6 — the attack corpus runner ("nothing escapes"). For every row
 * of attack_cases.ts: a fresh base directory holding the root and a
 * sentinel tree `outside` next to it; the patch goes through `applyPatch`
 * on a real shell (LocalShell as root here, or SSH as the test user); then
 * - escapes: the sentinel tree must be exactly as before (names, kinds,
 *   bytes, modes, link targets), and no file may appear beside the root;
 * - executions: no file named after this run's canary may exist anywhere
 *   an injected `touch CANARY` / `touch /tmp/CANARY` could have put it;
 * - the row's expectation: refused with one of its codes and the root
 *   unchanged, or applied with exactly the listed contents;
 * - no `.sap-` leftovers anywhere in the base directory.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import { shQuote } from "../../lib/remote/shell.ts";
import type { RemoteShell } from "../../lib/remote/shell.ts";
import type { ApplyReport } from "../../lib/types.ts";
import { HookedShell, leftovers, tempDir } from "../support/local_trees.ts";
import { ATTACKS } from "./attack_cases.ts";
import type { AttackCase, Entry } from "./attack_cases.ts";
import type { Owner } from "./fixture.ts";

/** What the corpus run measured. */
export interface AttackFigures {
  cases: number;
  /** Cases where every check held. */
  held: number;
  /** Cases where something outside the root changed. */
  escapes: number;
  /** Cases where an injected command ran (the canary appeared). */
  executions: number;
  violations: string[];
  /** Per case: its name and the result (ok or the first error code). */
  results: { name: string; result: string; held: boolean }[];
}

/** Parameters of {@linkcode runAttacks}. */
export interface AttackOptions {
  shell: RemoteShell;
  cases?: readonly AttackCase[];
  /** Give the base directory to this user (SSH login user). */
  owner?: Owner;
  /** Extra directories where an executed injection could drop the canary (e.g. the login user's home). */
  canaryDirs?: string[];
}

/** A listing of a tree: relative path → what it is. */
function listing(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string): void => {
    const full = rel === "" ? dir : join(dir, rel);
    for (const name of readdirSync(full)) {
      const child = rel === "" ? name : `${rel}/${name}`;
      const st = lstatSync(join(dir, child));
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out.set(child, `symlink → ${readlinkSync(join(dir, child))}`);
      else if (st.isDirectory()) {
        out.set(child, `dir ${mode}`);
        walk(child);
      } else if (st.isFile()) out.set(child, `file ${mode} ${sha256Hex(new Uint8Array(readFileSync(join(dir, child))))}`);
      else out.set(child, `other ${mode}`);
    }
  };
  if (existsSync(dir)) walk("");
  return out;
}

function differences(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of before) if (after.get(k) !== v) out.push(`${k}: ${v} → ${after.get(k) ?? "gone"}`);
  for (const [k, v] of after) if (!before.has(k)) out.push(`${k}: new ${v}`);
  return out;
}

function findNamed(dir: string, name: string): string[] {
  const found: string[] = [];
  const walk = (d: string): void => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const full = join(d, n);
      if (n === name || n.startsWith(`${name}.`)) found.push(full);
      try {
        if (lstatSync(full).isDirectory()) walk(full);
      } catch {
        // vanished
      }
    }
  };
  walk(dir);
  return found;
}

function materialize(root: string, outside: string, path: string, entry: Entry): void {
  const full = join(root, path);
  mkdirSync(dirname(full), { recursive: true });
  if (typeof entry === "string") writeFileSync(full, entry);
  else if ("file" in entry) {
    writeFileSync(full, entry.file);
    chmodSync(full, entry.mode);
  }
  else if ("symlink" in entry) symlinkSync(entry.symlink.replaceAll("{OUT}", outside), full);
  else if ("hardlinkTo" in entry) linkSync(join(outside, entry.hardlinkTo), full);
  else if ("dir" in entry) mkdirSync(full, { recursive: true });
  else spawnSync("mkfifo", [full]);
}

/**
 * Run the corpus (default: all of attack_cases.ts) through `shell`.
 *
 * @example
 * ```ts
 * const f = await runAttacks({ shell: new LocalShell() });
 * f.escapes; // 0
 * ```
 */
export async function runAttacks(options: AttackOptions): Promise<AttackFigures> {
  const cases = options.cases ?? ATTACKS;
  const figures: AttackFigures = { cases: cases.length, held: 0, escapes: 0, executions: 0, violations: [], results: [] };
  for (const c of cases) {
    const problems = await runOne(c, options, figures);
    if (problems.length === 0) figures.held++;
    else figures.violations.push(...problems.map((p) => `${c.name}: ${p}`));
  }
  return figures;
}

async function runOne(c: AttackCase, options: AttackOptions, figures: AttackFigures): Promise<string[]> {
  const canary = `sap-canary-${randomBytes(6).toString("hex")}`;
  const fill = (text: string): string => text.replaceAll("CANARY", canary);
  const base = tempDir("sap-attack-");
  const outside = join(base, "outside");
  writeTree(outside, { "secret.txt": "TOP SECRET\n", "dir/inner.txt": "inner\n", "twin/f.txt": "same\n", ...c.outside });
  let engineRoot: string;
  let realRoot: string;
  if (c.root === "symlink") {
    realRoot = join(base, "real root");
    mkdirSync(realRoot);
    engineRoot = join(base, "root-link");
    symlinkSync(realRoot, engineRoot);
  } else {
    realRoot = engineRoot = join(base, c.root === "odd-name" ? fill(`r o'o"t $(touch CANARY) ; x`) : "root");
    mkdirSync(realRoot);
  }
  for (const [path, entry] of Object.entries(c.inside ?? {})) materialize(realRoot, outside, path, entry);
  if (options.owner) spawnSync("chown", ["-R", `${options.owner.uid}:${options.owner.gid}`, base]);
  const outsideBefore = listing(outside);
  const rootBefore = listing(realRoot);
  const baseBefore = new Set(readdirSync(base));

  let shell = options.shell;
  if (c.hook) {
    const code = c.hook.code.replaceAll("{ROOT}", shQuote(realRoot)).replaceAll("{OUT}", shQuote(outside));
    shell = new HookedShell(shell, `case "$1:$2" in ${shQuote(c.hook.at)}) ${code} ;; esac`);
  }
  let report: ApplyReport;
  try {
    report = await applyPatch(shell, { root: engineRoot, patch: fill(c.patch), lockWaitMs: 3000, timeoutMs: 30_000, operationId: c.operationId });
  } catch (error) {
    report = { ok: false, operationId: "-", atomicity: "batch_preflight_per_file_commit", elevated: false, dryRun: false, files: [], warnings: [], errors: [{ code: "remote_error", message: `applyPatch threw: ${error}`, retryable: false }] };
  }
  const result = report.ok ? "ok" : report.errors?.[0]?.code ?? "failed";
  const problems: string[] = [];

  const escaped = differences(outsideBefore, listing(outside));
  const besideRoot = readdirSync(base).filter((n) => !baseBefore.has(n));
  if (escaped.length > 0 || besideRoot.length > 0) {
    figures.escapes++;
    problems.push(`ESCAPE: outside changed [${escaped.join("; ")}] new beside the root [${besideRoot.join(", ")}]`);
  }
  const canaries = [base, ...(options.canaryDirs ?? [])].flatMap((d) => findNamed(d, canary));
  for (const d of ["/tmp", process.cwd(), homedir(), "/"]) if (existsSync(join(d, canary))) canaries.push(join(d, canary));
  if (canaries.length > 0) {
    figures.executions++;
    problems.push(`EXECUTION: canary created at ${canaries.join(", ")}`);
    for (const p of canaries) rmSync(p, { force: true, recursive: true });
  }

  const expectation = c.expect;
  const wanted = "refused" in expectation ? null : "applied" in expectation ? expectation.applied : expectation.appliedOrRefused;
  if ("refused" in expectation) {
    if (report.ok) problems.push(`expected refusal (${expectation.refused.join("|")}), but it was applied`);
    else if (!expectation.refused.includes(report.errors![0]!.code)) problems.push(`expected ${expectation.refused.join("|")}, got ${report.errors![0]!.code}: ${report.errors![0]!.message.slice(0, 300)}`);
  } else if (!report.ok && "applied" in expectation) {
    problems.push(`expected it applied, got ${report.errors?.[0]?.code}: ${report.errors?.[0]?.message.slice(0, 300)}`);
  }
  if (!report.ok) {
    const changed = differences(rootBefore, listing(realRoot));
    if (changed.length > 0 && !c.hook) problems.push(`refused, yet the root changed: ${changed.join("; ")}`);
    for (const e of report.errors ?? []) if (!e.message || !e.message.trim()) problems.push(`empty message for ${e.code}`);
  } else if (wanted) {
    for (const [path, text] of Object.entries(wanted)) {
      const full = join(realRoot, fill(path));
      let st;
      try {
        st = lstatSync(full);
      } catch {
        st = null;
      }
      if (text === null) {
        if (st !== null) problems.push(`${path} should be gone`);
      } else if (st === null || !st.isFile() || readFileSync(full, "utf8") !== fill(text)) {
        problems.push(`${path} should hold ${JSON.stringify(fill(text))}, holds ${st?.isFile() ? JSON.stringify(readFileSync(full, "utf8").slice(0, 200)) : "nothing"}`);
      }
    }
  }
  // Engine files may stay behind only inside a directory the attack moved
  // away (the engine cannot know its new name; it must say so), and the
  // sentinel's own decoys are not leftovers.
  const decoys = new Set(Object.keys(c.outside ?? {}).map((p) => join(outside, p)));
  const movedAway = c.movedAway === undefined ? null : join(realRoot, c.movedAway) + "/";
  for (const code of c.warns ?? []) {
    const all = [...report.warnings, ...report.files.flatMap((f) => f.warnings)];
    if (!all.some((w) => w.code === code)) problems.push(`the report lacks the warning ${code}`);
  }
  const left = leftovers(base).filter((p) => !decoys.has(p));
  const stray = left.filter((p) => movedAway === null || !p.startsWith(movedAway));
  if (stray.length > 0) problems.push(`leftovers: ${stray.join(", ")}`);
  if (left.length > stray.length && !report.warnings.some((w) => w.code === "cleanup_incomplete")) {
    problems.push(`engine files were left in the moved-away directory without a cleanup_incomplete warning`);
  }
  figures.results.push({ name: c.name, result, held: problems.length === 0 });
  rmSync(base, { recursive: true, force: true });
  return problems;
}

function writeTree(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}
