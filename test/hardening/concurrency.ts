/**
 * Campaign 3 — concurrency between users of this protocol.
 *
 * - Many editors, one file: N concurrent `applyPatch` callers each change
 *   their own section of the same file every round, retrying on `conflict`
 *   and `locked` (re-reading each time, as a client must). After every
 *   round each section must hold that round's value: a section still
 *   showing an older value although its caller was told `ok` is a lost
 *   update.
 * - Opposite orders: two multi-file patches naming the same two files in
 *   opposite orders commit concurrently, retrying likewise; both edits
 *   must be present after every round. A deadlock would hang the round
 *   (the caller's test timeout bounds it) or surface as `locked`.
 *
 * @module
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import type { RemoteShell } from "../../lib/remote/shell.ts";
import type { ApplyReport } from "../../lib/types.ts";
import { tempDir } from "../support/local_trees.ts";
import { seeded } from "./prng.ts";
import type { Rng } from "./prng.ts";

/** What a concurrency campaign measured. */
export interface ConcurrencyFigures {
  rounds: number;
  /** Rounds after which every edit was present. */
  cleanRounds: number;
  /** Edits reported `ok` whose change was missing after the round. */
  lostUpdates: number;
  attempts: number;
  conflicts: number;
  /** `locked` answers (a lock held past the bounded wait). */
  locked: number;
  violations: string[];
  /** Longest round, ms (reported, not asserted). */
  slowestRoundMs: number;
}

const MAX_ATTEMPTS = 400;

/** Apply `patch` until it is `ok`, retrying (after a short random pause) on conflict and locked. */
async function applyUntilOk(
  shell: RemoteShell,
  root: string,
  patch: () => string,
  rng: Rng,
  figures: ConcurrencyFigures,
): Promise<ApplyReport> {
  for (let attempt = 1; ; attempt++) {
    figures.attempts++;
    const report = await applyPatch(shell, { root, patch: patch(), lockWaitMs: 10_000 });
    const code = report.errors?.[0]?.code;
    if (report.ok || attempt >= MAX_ATTEMPTS || (code !== "conflict" && code !== "locked")) return report;
    if (code === "conflict") figures.conflicts++;
    else figures.locked++;
    await Bun.sleep(rng() * 15);
  }
}

function emptyFigures(rounds: number): ConcurrencyFigures {
  return { rounds, cleanRounds: 0, lostUpdates: 0, attempts: 0, conflicts: 0, locked: 0, violations: [], slowestRoundMs: 0 };
}

/**
 * `callers` concurrent editors of one file, `rounds` rounds.
 *
 * @example
 * ```ts
 * const f = await runSharedFileEditors({ callers: 8, rounds: 50, seed: 3, shell: new LocalShell() });
 * f.lostUpdates; // 0
 * ```
 */
export async function runSharedFileEditors(options: { callers: number; rounds: number; seed: number; shell: RemoteShell }): Promise<ConcurrencyFigures> {
  const { callers, rounds, shell } = options;
  const rng = seeded(options.seed);
  const figures = emptyFigures(rounds);
  const root = tempDir("sap-conc-");
  const file = join(root, "shared.ini");
  const section = (i: number, value: string): string => `[slot ${i}]\nowner = caller ${i}\nvalue = ${value}\n\n`;
  writeFileSync(file, Array.from({ length: callers }, (_, i) => section(i, "r0")).join(""));
  const patchFor = (i: number, from: number, to: number): string =>
    ["*** Begin Patch", "*** Update File: shared.ini", `@@ [slot ${i}]`, ` owner = caller ${i}`, `-value = r${from}`, `+value = r${to}`, "*** End Patch"].join("\n");

  for (let r = 1; r <= rounds; r++) {
    const started = performance.now();
    const reports = await Promise.all(
      Array.from({ length: callers }, (_, i) => applyUntilOk(shell, root, () => patchFor(i, r - 1, r), rng, figures)),
    );
    figures.slowestRoundMs = Math.max(figures.slowestRoundMs, performance.now() - started);
    const text = readFileSync(file, "utf8");
    let lost = 0;
    reports.forEach((report, i) => {
      if (!report.ok) {
        figures.violations.push(`round ${r}: caller ${i} gave up: ${report.errors?.[0]?.code}: ${report.errors?.[0]?.message.slice(0, 200)}`);
        return;
      }
      if (!text.includes(section(i, `r${r}`))) lost++;
    });
    if (lost > 0) figures.violations.push(`round ${r}: ${lost} edit(s) reported ok are missing`);
    figures.lostUpdates += lost;
    if (lost === 0 && reports.every((x) => x.ok)) figures.cleanRounds++;
  }
  return figures;
}

/**
 * Two patches over the same two files in opposite orders, concurrently,
 * `rounds` rounds.
 *
 * @example
 * ```ts
 * const f = await runOppositeOrders({ rounds: 100, seed: 5, shell: new LocalShell() });
 * ```
 */
export async function runOppositeOrders(options: { rounds: number; seed: number; shell: RemoteShell }): Promise<ConcurrencyFigures> {
  const { rounds, shell } = options;
  const rng = seeded(options.seed);
  const figures = emptyFigures(rounds);
  const root = tempDir("sap-opp-");
  const body = (name: string, a: number, b: number): string => `file ${name}\na = ${a}\n--\nb = ${b}\n`;
  for (const name of ["x", "y"]) writeFileSync(join(root, `${name}.txt`), body(name, 0, 0));
  const section = (file: string, key: "a" | "b", from: number, to: number): string[] =>
    [`*** Update File: ${file}.txt`, "@@", ...(key === "a" ? [` file ${file}`] : [" --"]), `-${key} = ${from}`, `+${key} = ${to}`];
  const forward = (r: number): string => ["*** Begin Patch", ...section("x", "a", r - 1, r), ...section("y", "a", r - 1, r), "*** End Patch"].join("\n");
  const backward = (r: number): string => ["*** Begin Patch", ...section("y", "b", r - 1, r), ...section("x", "b", r - 1, r), "*** End Patch"].join("\n");

  for (let r = 1; r <= rounds; r++) {
    const started = performance.now();
    const reports = await Promise.all([
      applyUntilOk(shell, root, () => forward(r), rng, figures),
      applyUntilOk(shell, root, () => backward(r), rng, figures),
    ]);
    figures.slowestRoundMs = Math.max(figures.slowestRoundMs, performance.now() - started);
    let lost = 0;
    for (const [k, report] of reports.entries()) {
      if (!report.ok) figures.violations.push(`round ${r}: patch ${k} gave up: ${report.errors?.[0]?.code}: ${report.errors?.[0]?.message.slice(0, 200)}`);
    }
    for (const name of ["x", "y"]) {
      const text = readFileSync(join(root, `${name}.txt`), "utf8");
      if (text !== body(name, r, r)) {
        lost++;
        figures.violations.push(`round ${r}: ${name}.txt is ${JSON.stringify(text)}`);
      }
    }
    figures.lostUpdates += lost;
    if (lost === 0 && reports.every((x) => x.ok)) figures.cleanRounds++;
  }
  return figures;
}
