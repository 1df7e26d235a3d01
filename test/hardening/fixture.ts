/**
 * The multi-file transactions the fault campaigns commit, and how to read
 * back what the disk shows for each of their paths.
 *
 * A fixture is built through the real pipeline (parsePatch → planPatch on
 * snapshots of the known "before" tree), so the plan is exactly what
 * applyPatch would commit.
 *
 * @module
 */
import { chmodSync, chownSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parsePatch } from "../../lib/patch/parse.ts";
import { planPatch } from "../../lib/plan/plan.ts";
import { transactionLayout } from "../../lib/remote/manifest.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import type { Plan } from "../../lib/types.ts";
import { applyPlanInMemory, buildSnapshots, patchPaths } from "../support/scenarios.ts";
import type { Tree } from "../support/scenarios.ts";

/** A transaction: the tree before, the tree after, and the plan between. */
export interface TxFixture {
  name: string;
  patch: string;
  plan: Plan;
  before: Tree;
  after: Tree;
  /** Every path the plan touches (sources and move destinations). */
  paths: string[];
  /** Logical files: one path, or `[source, destination]` for a move. */
  files: string[][];
}

/** What one path holds now, judged against the fixture. */
export type PathState = "old" | "new" | "other";

const encoder = new TextEncoder();

/** A text of `lines` numbered lines (distinct, so every chunk matches once). */
function numbered(prefix: string, lines: number): string {
  let out = "";
  for (let i = 1; i <= lines; i++) out += lineOf(prefix, i) + "\n";
  return out;
}

/** Line `i` of {@linkcode numbered}, without its newline. */
function lineOf(prefix: string, i: number): string {
  return `${prefix} line ${i}: ${"·".repeat(i % 17)} value=${i * 7}`;
}

function build(name: string, before: Record<string, string>, patch: string): TxFixture {
  const tree: Tree = new Map(Object.entries(before).map(([p, t]) => [p, encoder.encode(t)]));
  const parsed = parsePatch(patch);
  if (!parsed.ok) throw new Error(`fixture ${name}: ${parsed.errors.map((e) => e.message).join("; ")}`);
  const paths = patchPaths(parsed.patch);
  const planned = planPatch(parsed.patch, buildSnapshots(tree, paths, {}));
  if (!planned.ok) throw new Error(`fixture ${name}: ${planned.errors.map((e) => e.message).join("; ")}`);
  const files = planned.plan.files.map((f) => f.moveTo === undefined ? [f.path] : [f.path, f.moveTo]);
  return { name, patch, plan: planned.plan, before: tree, after: applyPlanInMemory(tree, planned.plan), paths, files };
}

/** `count` new lines for an insertion (long enough together to travel in the upload's blob, not inline). */
function inserted(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `+${prefix} inserted ${i}: ${"=".repeat(30)}`);
}

/**
 * Three files, three kinds of change: a 70 KB update uploaded as a delta
 * (the host rebuilds it from the old file; the upload still carries a
 * 7.5 KB insertion, several packets), a delete, and an add under a
 * directory that does not exist yet.
 *
 * @example
 * ```ts
 * const fx = threeFileFixture();
 * fx.plan.files.length; // 3
 * ```
 */
export function threeFileFixture(): TxFixture {
  const a = numbered("alpha", 1600);
  return build("three files (delta update of 70 KB, delete, add in a new directory)", { "a.txt": a, "b.txt": "bravo\nto be deleted\n" }, [
    "*** Begin Patch",
    "*** Update File: a.txt",
    "@@",
    " " + lineOf("alpha", 10),
    "-" + lineOf("alpha", 11),
    "+alpha line 11: CHANGED",
    "@@",
    " " + lineOf("alpha", 390),
    "-" + lineOf("alpha", 391),
    "+alpha line 391: CHANGED TOO",
    ...inserted("alpha", 150),
    "*** Delete File: b.txt",
    "*** Add File: n/c.txt",
    "+charlie",
    "+a new file in a new directory",
    "*** End Patch",
  ].join("\n"));
}

/**
 * Four operations over five paths: update, delete, add (new directory) and
 * update + move (new directory) — every code path of finalize and undo.
 * The update and the move are large enough (70 KB) to be uploaded as
 * deltas, so kills also land while stages are rebuilt from their sources.
 *
 * @example
 * ```ts
 * fourOpFixture().paths; // ["a.txt", "b.txt", "m.txt", "moved/m.txt", "n/c.txt"] (patch order)
 * ```
 */
export function fourOpFixture(): TxFixture {
  return build("four ops (delta update, delete, add, delta move)", {
    "a.txt": numbered("alpha", 1600),
    "b.txt": "bravo\nto be deleted\n",
    "m.txt": "mike\nold body\n" + numbered("mike", 1600),
  }, [
    "*** Begin Patch",
    "*** Update File: a.txt",
    "@@",
    " " + lineOf("alpha", 30),
    "-" + lineOf("alpha", 31),
    "+alpha line 31: CHANGED",
    "*** Delete File: b.txt",
    "*** Add File: n/c.txt",
    "+charlie",
    "*** Update File: m.txt",
    "*** Move to: moved/m.txt",
    "@@",
    " mike",
    "-old body",
    "+new body",
    "*** End Patch",
  ].join("\n"));
}

/** A uid/gid pair (the login user of an sshd the campaign writes through). */
export interface Owner {
  uid: number;
  gid: number;
}

/**
 * How many of the fixture's files a commit sends as a delta upload (with
 * the default options).
 *
 * @example
 * ```ts
 * deltaFiles(fourOpFixture()); // 2
 * ```
 */
export function deltaFiles(fx: TxFixture): number {
  return transactionLayout(fx.plan, { delta: true }).files.filter((f) => f.delta !== null).length;
}

/**
 * Write the fixture's "before" tree below `root`; with `owner`, hand the
 * root and everything written to that user (running as root, the sshd
 * login user is another account).
 */
export function writeBefore(root: string, fx: TxFixture, owner?: Owner): void {
  for (const [path, bytes] of fx.before) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), bytes);
    if (owner) {
      const parts = path.split("/");
      for (let i = 1; i <= parts.length; i++) chownSync(join(root, ...parts.slice(0, i)), owner.uid, owner.gid);
    }
  }
  if (owner) {
    chmodSync(root, 0o755);
    chownSync(root, owner.uid, owner.gid);
  }
}

/** The bytes at `root/path`, or null when nothing (or not a regular file) is there. */
export function readPath(root: string, path: string): Uint8Array | null | "not_a_file" {
  let st;
  try {
    st = lstatSync(join(root, path));
  } catch {
    return null;
  }
  if (!st.isFile()) return "not_a_file";
  return new Uint8Array(readFileSync(join(root, path)));
}

function same(a: Uint8Array | null | undefined | "not_a_file", b: Uint8Array | undefined): boolean {
  if (a === "not_a_file") return false;
  if (a === null || a === undefined) return b === undefined;
  return b !== undefined && a.length === b.length && sha256Hex(a) === sha256Hex(b);
}

/** Each path's state: byte-for-byte the old version, the new one, or neither. */
export function pathStates(root: string, fx: TxFixture): Map<string, PathState> {
  const out = new Map<string, PathState>();
  for (const path of fx.paths) {
    const now = readPath(root, path);
    out.set(path, same(now, fx.before.get(path)) ? "old" : same(now, fx.after.get(path)) ? "new" : "other");
  }
  return out;
}

/** Each logical file's state: all of its paths old, all new, or "other" (mixed or foreign bytes). */
export function fileStates(root: string, fx: TxFixture): PathState[] {
  const paths = pathStates(root, fx);
  return fx.files.map((group) => {
    const states = group.map((p) => paths.get(p)!);
    if (states.every((s) => s === "old")) return "old";
    if (states.every((s) => s === "new")) return "new";
    return "other";
  });
}
