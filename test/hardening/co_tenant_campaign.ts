/**
 * Campaign 7 — the generic co-tenant attacker (issue 12, SPEC §6.1).
 *
 * A root holds a directory another uid can write (`2775` group-shared, or
 * `1777` sticky); that uid runs co_tenant_attacker.mjs, which watches the
 * directory and /proc, swaps every new entry the engine creates for a
 * symlink to outside (file, directory, dangling, FIFO, device), plants the
 * names it can predict, toggles its links and sometimes puts the stolen
 * entries back. Meanwhile the engine (root: LocalShell, or SSH with sudo)
 * commits random patches there — updates (some large enough for delta
 * uploads), adds (some into new directories), deletes and moves — with
 * `sharedDirectories: "allow"`.
 *
 * After every commit:
 * - escapes: the outside tree is identical (names, kinds, modes, owners,
 *   link counts, modification and change times, bytes), nothing new beside
 *   the root, no byte the engine wrote landed in the attacker's FIFOs, and
 *   no file inside the root holds outside bytes;
 * - lies: the report is true of the disk — ok: every file holds its new
 *   content (or the attacker renamed that very inode aside afterwards);
 *   "nothing was changed": every file holds its old content; partial_apply:
 *   every outcome it lists; outcome_unknown never happens (nothing kills);
 * - leftovers: no `.sap-` entry of the engine's remains, except those the
 *   attacker renamed away, unless the report warns `cleanup_incomplete`.
 * With `mode: "refuse"` (the default policy) every attempt must fail
 * `unsafe_directory` with nothing written in the root at all.
 *
 * @module
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import type { RemoteShell } from "../../lib/remote/shell.ts";

import type { ApplyReport } from "../../lib/types.ts";
import { tempDir } from "../support/local_trees.ts";
import { coTenantTree, digestChanges, filesContaining, treeDigest } from "./co_tenant_fixture.ts";
import type { Account, CoTenantTree, Sharing } from "./co_tenant_fixture.ts";
import { seeded } from "./prng.ts";

/** Parameters of {@linkcode runCoTenantCampaign}. */
export interface CoTenantOptions {
  /** The engine's shell, acting as root (LocalShell as root, or SSH with sudo). */
  shell: RemoteShell;
  commits: number;
  seed: number;
  sharing: Extract<Sharing, "group" | "sticky">;
  /** `allow` (the defence in depth) or `refuse` (the default policy). */
  mode: "allow" | "refuse";
  /** How often the attacker swaps a new entry (default 0.85). */
  swapProbability?: number;
  /** The account the engine runs as, when not root: the root and its files are given to it. */
  engine?: Account;
  onCommit?: (i: number, n: number) => void;
}

/** What the campaign measured. */
export interface CoTenantFigures {
  commits: number;
  ok: number;
  /** First error code (or ok) → count. */
  results: Record<string, number>;
  escapes: number;
  lies: number;
  leftovers: number;
  violations: string[];
  /** The attacker's own counts (swaps, plants, FIFO bytes, …). */
  attacker: Record<string, number>;
  /** Failure messages (ids blanked) → count. */
  samples: Record<string, number>;
}

const HEADER = (name: string, v: number): string => `hdr ${name} v${v}`;

interface Model {
  /** Root-relative path below `shared/` → content. */
  files: Map<string, string>;
  serial: number;
}

/** The engine's files in the shared directory as the disk shows them (root-owned regular files, not engine or attacker names). */
function modelOf(t: CoTenantTree, previous: Model): Model {
  const files = new Map<string, string>();
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(t.work, rel))) {
      if (name.startsWith(".sap-") || name.includes(".stolen.")) continue;
      const r = rel === "" ? name : `${rel}/${name}`;
      let st;
      try {
        st = lstatSync(join(t.work, r));
      } catch {
        continue;
      }
      if (st.uid !== engineUid(t)) continue;
      if (st.isDirectory()) walk(r);
      else if (st.isFile()) files.set(r, readFileSync(join(t.work, r), "utf8"));
    }
  };
  walk("");
  return { files, serial: previous.serial };
}

function body(name: string, v: number, lines: number): string {
  let out = HEADER(name, v) + "\n";
  for (let i = 0; i < lines; i++) out += `${name} line ${i}: ${"·".repeat(i % 23)} value=${i * 3}\n`;
  return out;
}

function version(text: string): number {
  return Number(/^hdr \S+ v([0-9]+)/.exec(text)?.[1] ?? 0);
}

interface Planned {
  patch: string;
  /** Per file: path (below shared/) before, path after (null: deleted), content before (null: absent), content after. */
  files: { from: string | null; to: string | null; before: string | null; after: string | null }[];
}

function planCommit(model: Model, rng: ReturnType<typeof seeded>): Planned {
  const names = [...model.files.keys()].sort();
  const used = new Set<string>();
  const files: Planned["files"] = [];
  const sections: string[] = [];
  const fresh = (): string => {
    model.serial++;
    const where = rng.int(0, 3);
    return where === 0 ? `sub/n${model.serial}.txt` : where === 1 ? `nd${model.serial}/x${model.serial}.txt` : `n${model.serial}.txt`;
  };
  const ops = rng.int(1, 3);
  for (let n = 0; n < ops; n++) {
    const free = names.filter((p) => !used.has(p));
    const kind = free.length < 3 ? "add" : rng.pick(["update", "update", "update", "add", "delete", "move"]);
    if (kind === "add") {
      const path = fresh();
      const text = body(path.split("/").pop()!, 1, rng.int(3, 7));
      sections.push(`*** Add File: shared/${path}`, ...text.slice(0, -1).split("\n").map((l) => `+${l}`));
      files.push({ from: null, to: path, before: null, after: text });
      used.add(path);
      continue;
    }
    const path = rng.pick(free);
    used.add(path);
    const before = model.files.get(path)!;
    const v = version(before);
    const name = /^hdr (\S+)/.exec(before)![1]!;
    const after = before.replace(HEADER(name, v), HEADER(name, v + 1));
    if (kind === "update") {
      sections.push(`*** Update File: shared/${path}`, "@@", `-${HEADER(name, v)}`, `+${HEADER(name, v + 1)}`);
      files.push({ from: path, to: path, before, after });
    } else if (kind === "delete") {
      sections.push(`*** Delete File: shared/${path}`);
      files.push({ from: path, to: null, before, after: null });
    } else {
      const to = fresh();
      used.add(to);
      sections.push(`*** Update File: shared/${path}`, `*** Move to: shared/${to}`, "@@", `-${HEADER(name, v)}`, `+${HEADER(name, v + 1)}`);
      files.push({ from: path, to, before, after });
    }
  }
  return { patch: ["*** Begin Patch", ...sections, "*** End Patch"].join("\n"), files };
}

/** The uid the engine runs as (and its files belong to): root, or the login user in the non-root runs. */
function engineUid(t: CoTenantTree): number {
  return t.owner?.uid ?? 0;
}

/** The content at shared/path: text, null (nothing), or "other" (not a root-owned regular file). */
function contentAt(t: CoTenantTree, path: string): string | null | "other" {
  let st;
  try {
    st = lstatSync(join(t.work, path));
  } catch {
    return null;
  }
  if (!st.isFile() || st.uid !== engineUid(t)) return "other";
  return readFileSync(join(t.work, path), "utf8");
}

/**
 * Whether the attacker renamed away an inode holding `text` that was at
 * `path`: the file itself or one of its directories now under a
 * `<name>.stolen.<n>` of the attacker's.
 */
function stolenHolding(t: CoTenantTree, path: string, text: string): boolean {
  const parts = path.split("/");
  const variants = (dir: string, rest: string[]): string[] => {
    if (rest.length === 0) return [dir];
    const [head, ...tail] = rest;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return [];
    }
    return names.filter((n) => n === head || n.startsWith(`${head}.stolen.`)).flatMap((n) => variants(join(dir, n), tail));
  };
  // The name itself is looked at again too: the attacker keeps running
  // while this checks, and may have put the stolen file back under its name
  // between the caller's read of the name and this readdir (a false "LIE"
  // in one long run: the name read as its symlink, the copy already gone).
  return variants(t.work, parts).some((p) => {
    try {
      const st = lstatSync(p);
      return st.isFile() && readFileSync(p, "utf8") === text;
    } catch {
      return false;
    }
  });
}

/** Whether `path` holds the attacker's own stuff (a symlink, FIFO, or anything it owns). */
function attackerAt(t: CoTenantTree, path: string): boolean {
  try {
    const st = lstatSync(join(t.work, path));
    return st.isSymbolicLink() || st.uid === t.attacker.uid || (!st.isFile() && !st.isDirectory());
  } catch {
    return false;
  }
}

const NOTHING_CHANGED = new Set(["conflict", "locked", "remote_error", "unsafe_directory", "permission_denied", "cancelled", "timeout", "not_found", "already_exists", "symlink_rejected", "path_outside_root", "invalid_path", "not_regular_file", "context_mismatch", "anchor_not_found", "precondition_failed", "remote_unsupported"]);

function restoredNames(log: string): Set<string> {
  return new Set(existsSync(`${log}.restored`) ? readFileSync(`${log}.restored`, "utf8").split("\n").filter(Boolean) : []);
}

function truthProblems(t: CoTenantTree, planned: Planned, report: ApplyReport, log: string): string[] {
  const problems: string[] = [];
  const code = report.ok ? "ok" : report.errors?.[0]?.code ?? "failed";
  if (report.ok) {
    for (const f of planned.files) {
      if (f.to !== null) {
        const now = contentAt(t, f.to);
        if (now !== f.after && !stolenHolding(t, f.to, f.after!)) problems.push(`ok, yet ${f.to} holds ${now === null ? "nothing" : now === "other" ? "something else" : JSON.stringify(now.slice(0, 40))}`);
      }
      if (f.from !== null && f.from !== f.to) {
        const now = contentAt(t, f.from);
        if (typeof now === "string") problems.push(`ok, yet ${f.from} (deleted or moved) is still a file`);
      }
    }
    return problems;
  }
  if (code === "outcome_unknown") return [`outcome_unknown without any kill: ${report.errors![0]!.message.slice(0, 200)}`];
  if (code === "partial_apply") {
    for (const o of report.errors![0]!.outcomes ?? []) {
      const path = o.path.replace(/^shared\//, "");
      const f = planned.files.find((x) => x.from === path || x.to === path);
      if (!f) continue;
      const now = contentAt(t, path);
      const want = o.state === "new" ? (f.to === path ? f.after : null) : o.state === "old" ? (f.from === path ? f.before : null) : o.state === "missing" ? null : undefined;
      if (want === undefined) continue;
      // what the attacker did after the report: planted its own stuff at a missing name, or put back an inode it stole
      if (want === null && (attackerAt(t, path) || restoredNames(log).has(path.split("/").pop()!))) continue;
      if (now !== want && !(want !== null && stolenHolding(t, path, want))) problems.push(`partial_apply says ${path} is ${o.state}, the disk disagrees`);
    }
    return problems;
  }
  if (!NOTHING_CHANGED.has(code)) return [`unexpected result ${code}: ${report.errors![0]!.message.slice(0, 200)}`];
  for (const f of planned.files) {
    if (f.from !== null) {
      const now = contentAt(t, f.from);
      // (a name that disappears for a moment, renamed aside and put back by a rollback, is a
      // new entry to the attacker, which may steal it again right after: that is its doing)
      if (now !== f.before && !stolenHolding(t, f.from, f.before!)) {
        const shown = now === null ? "nothing" : now === "other" ? "something else" : JSON.stringify(now.slice(0, 30));
        problems.push(`${code} (nothing changed), yet ${f.from} no longer holds its old content (it holds ${shown}; planned ${planned.files.map((x) => `${x.from}→${x.to}`).join(", ")}) — ${report.errors![0]!.message.slice(0, 300)}`);
      }
    }
    if (f.to !== null && f.to !== f.from) {
      const now = contentAt(t, f.to);
      if (now === f.after || stolenHolding(t, f.to, f.after!)) {
        const dir = join(t.work, dirname(f.to));
        let listed: string[] = [];
        try {
          listed = readdirSync(dir);
        } catch {
          // its directory is gone or not one any more
        }
        const around = listed.filter((n) => n.startsWith(f.to!.split("/").pop()!)).map((n) => {
          try {
            const st = lstatSync(join(dir, n));
            return `${n} (${st.isSymbolicLink() ? "symlink" : st.isFile() ? "file" : "other"} uid ${st.uid} ino ${st.ino})`;
          } catch {
            return `${n} (gone)`;
          }
        });
        problems.push(`${code} (nothing changed), yet ${f.to} was written [${now === f.after ? "at its name" : "renamed by the attacker"}; ${around.join(", ")}] — ${report.errors![0]!.message.slice(0, 300)}`);
      }
    }
  }
  return problems;
}

/** Remove what the attacker left and what it stole (so the next commit starts from a clean directory). */
function sweep(t: CoTenantTree): void {
  const walk = (dir: string): void => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      let st;
      try {
        st = lstatSync(path);
      } catch {
        continue;
      }
      if (name.includes(".stolen.") || st.isSymbolicLink() || st.uid === t.attacker.uid || (!st.isFile() && !st.isDirectory())) {
        rmSync(path, { recursive: true, force: true });
      } else if (st.isDirectory() && !name.startsWith(".sap-")) {
        walk(path);
      }
    }
  };
  walk(t.work);
}

/** The engine's own `.sap-` entries in the root (not symlinks, not the attacker's, not renamed by it). */
function engineLeftovers(t: CoTenantTree): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      let st;
      try {
        st = lstatSync(path);
      } catch {
        continue; // the attacker's, gone again
      }
      if (name.startsWith(".sap-") && !name.includes(".stolen.") && !st.isSymbolicLink() && st.uid !== t.attacker.uid) found.push(path);
      else if (st.isDirectory() && !st.isSymbolicLink()) walk(path);
    }
  };
  walk(t.root);
  return found;
}

/**
 * Run the campaign. Root only (the attacker is a real second uid).
 *
 * @example
 * ```ts
 * const f = await runCoTenantCampaign({ shell: new LocalShell(), commits: 50, seed: 1, sharing: "group", mode: "allow" });
 * f.escapes; // 0
 * ```
 */
export async function runCoTenantCampaign(options: CoTenantOptions): Promise<CoTenantFigures> {
  const rng = seeded(options.seed);
  const initial: Record<string, string> = {};
  for (let i = 0; i < 5; i++) initial[`f${i}.txt`] = body(`f${i}.txt`, 1, 4 + i);
  initial["big.txt"] = body("big.txt", 1, 2500); // ≥ 64 KiB: a delta upload
  initial["sub/s0.txt"] = body("s0.txt", 1, 5);
  initial["sub/s1.txt"] = body("s1.txt", 1, 6);
  const t = coTenantTree({ sharing: options.sharing, files: initial, owner: options.engine ?? null });
  const figures: CoTenantFigures = { commits: 0, ok: 0, results: {}, escapes: 0, lies: 0, leftovers: 0, violations: [], attacker: {}, samples: {} };
  const den = join(tempDir("sap-attacker-den-"), "den");
  const control = tempDir("sap-attacker-ctl-");
  spawnSync("chown", [`${t.attacker.uid}:${t.attacker.gid}`, dirname(den), control]);
  const stop = join(control, "stop");
  const log = join(control, "log.json");
  // The attacker runs from a copy in its own control directory, with that
  // directory as its cwd: the checkout may sit under a directory only root
  // can enter (a clean clone in `mktemp -d`), which the other uid can
  // neither read the script from nor start in.
  const script = join(control, "co_tenant_attacker.mjs");
  copyFileSync(join(import.meta.dir, "co_tenant_attacker.mjs"), script);
  chmodSync(script, 0o644);
  const attacker = spawn("setpriv", [
    `--reuid=${t.attacker.uid}`, `--regid=${t.attacker.gid}`, "--clear-groups",
    process.execPath, // the runtime running the tests (bun), executable by every user
    script,
    t.work, t.outside, den, String(options.seed), stop, log, String(options.swapProbability ?? 0.85),
  ], { stdio: ["ignore", "ignore", "pipe"], cwd: control });
  let attackerErr = "";
  attacker.stderr!.on("data", (d: Buffer) => void (attackerErr += d.toString()));
  // An attacker that dies mid-campaign leaves the remaining commits
  // unattacked: that is a failure of the campaign, reported as such.
  let attackerExit: string | null = null;
  let commitsDone = 0;
  attacker.on("exit", (code, signal) => void (attackerExit ??= `exited (${signal ?? code}) after commit ${commitsDone}`));
  await Bun.sleep(300); // let it take its first look

  const outsideBefore = treeDigest(t.outside);
  const rootBefore = options.mode === "refuse" ? treeDigest(t.root) : null;
  let model: Model = { files: new Map(), serial: 0 };
  try {
    for (let i = 0; i < options.commits; i++) {
      model = modelOf(t, model);
      const planned = planCommit(model, rng);
      let report: ApplyReport;
      try {
        report = await applyPatch(options.shell, { root: t.root, patch: planned.patch, sharedDirectories: options.mode, lockWaitMs: 3000, timeoutMs: 30_000 });
      } catch (error) {
        figures.violations.push(`commit ${i}: applyPatch threw ${String(error).slice(0, 200)}`);
        continue;
      }
      figures.commits++;
      const code = report.ok ? "ok" : report.errors?.[0]?.code ?? "failed";
      figures.results[code] = (figures.results[code] ?? 0) + 1;
      if (!report.ok) {
        const m = report.errors![0]!.message.replace(/[0-9a-f]{16,}/g, "…").slice(0, 160);
        figures.samples[m] = (figures.samples[m] ?? 0) + 1;
      }
      if (report.ok) figures.ok++;
      const where = `commit ${i} (${code})`;
      const escaped = digestChanges(outsideBefore, treeDigest(t.outside));
      const besides = readdirSync(t.base).filter((n) => n !== "outside" && n !== "root");
      const leaked = filesContaining(t.root, t.marker).filter((p) => lstatSync(p).uid === engineUid(t));
      if (escaped.length > 0 || besides.length > 0 || leaked.length > 0) {
        figures.escapes++;
        figures.violations.push(`${where}: ESCAPE outside [${escaped.join("; ")}] beside the root [${besides.join(", ")}] outside bytes in [${leaked.join(", ")}]`);
      }
      if (options.mode === "refuse") {
        if (code !== "unsafe_directory") figures.violations.push(`${where}: the default policy did not refuse unsafe_directory`);
        const engineChanges = digestChanges(rootBefore!, treeDigest(t.root)).filter((line) => !/\.stolen\.|symlink|^shared: /.test(line) && !line.includes(`${t.attacker.uid}:`));
        if (engineChanges.length > 0) figures.violations.push(`${where}: refused, yet the root changed: ${engineChanges.slice(0, 5).join("; ")}`);
      } else {
        const lies = truthProblems(t, planned, report, log);
        if (lies.length > 0) {
          figures.lies++;
          figures.violations.push(...lies.map((l) => `${where}: LIE ${l}`));
        }
      }
      // entries the attacker stole (and may have put back under their own names after the engine was done with them) are its doing
      const restored = restoredNames(log);
      const left = engineLeftovers(t).filter((p) => !restored.has(p.split("/").pop()!));
      if (left.length > 0) {
        const warned = [...report.warnings, ...report.files.flatMap((f) => f.warnings)].some((w) => w.code === "cleanup_incomplete");
        if (!warned && code !== "partial_apply") {
          figures.leftovers++;
          figures.violations.push(`${where}: engine leftovers without a cleanup_incomplete warning: ${left.slice(0, 4).join(", ")}`);
        }
        for (const p of left) rmSync(p, { recursive: true, force: true });
      }
      sweep(t);
      commitsDone = i + 1;
      options.onCommit?.(i, options.commits);
    }
  } finally {
    const diedEarly = attackerExit;
    writeFileSync(stop, "");
    const deadline = Date.now() + 10_000;
    while (attackerReport(log)?.stopped !== 1 && attackerExit === null && Date.now() < deadline) await Bun.sleep(50);
    try {
      process.kill(attacker.pid!, "SIGKILL");
    } catch {
      // gone
    }
    if (diedEarly !== null) figures.violations.push(`the attacker ${diedEarly} of ${options.commits}: the rest went unattacked (${attackerErr.slice(0, 300)})`);
  }
  const final = attackerReport(log);
  if (final !== null) figures.attacker = final;
  if (final?.stopped !== 1) figures.violations.push(`the attacker did not report at the end (${attackerErr.slice(0, 300)})`);
  if ((figures.attacker.fifoBytes ?? 0) > 0) {
    figures.escapes++;
    figures.violations.push(`ESCAPE: ${figures.attacker.fifoBytes} bytes reached the attacker's FIFOs`);
  }
  if ((figures.attacker.newEntries ?? 0) === 0 && options.mode === "allow") figures.violations.push("the attacker never saw a new entry: the campaign tested nothing");
  mkdirSync(t.base, { recursive: true });
  rmSync(t.base, { recursive: true, force: true });
  return figures;
}

/** The attacker's last complete report (it writes them whole, by rename), or null. */
function attackerReport(log: string): Record<string, number> | null {
  try {
    return JSON.parse(readFileSync(log, "utf8"));
  } catch {
    return null;
  }
}

/** One line of figures for a table. */
export function describeCoTenant(f: CoTenantFigures): string {
  const results = Object.entries(f.results).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(", ");
  const a = f.attacker;
  return `${f.commits} commits: escapes **${f.escapes}**, untrue reports **${f.lies}**, unreported leftovers ${f.leftovers}; results: ${results}; attacker: ${a.newEntries ?? 0} new entries seen, ${a.swaps ?? 0} swapped, ${(a.plantsPredicted ?? 0) + (a.plantsFromProc ?? 0)} names planted from /proc, ${a.fifosPlanted ?? 0} FIFOs planted, ${a.toggles ?? 0} toggles, ${a.restores ?? 0} put back, ${a.fifoBytes ?? 0} bytes into its FIFOs`;
}


