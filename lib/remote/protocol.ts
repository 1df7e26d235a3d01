/**
 * Strict parsing of the line protocol the commit and reconcile programs
 * write on stdout (keywords listed in lib/remote/programs/commit_program.ts).
 *
 * Every line must be printable ASCII, start with a known keyword and carry
 * exactly the expected fields, with indices in range. The first line that
 * does not is recorded in `malformed` and parsing stops: the caller then
 * knows nothing beyond what came before it. `end` is set only by a final
 * `SAP-END` line with nothing after it, so a truncated channel is never
 * mistaken for a finished program.
 *
 * @module
 */

import type { UnsafeDirectory } from "../types.ts";

/** An `UNSAFE` line (lib/remote/programs/sh_trust.ts), decoded. */
export interface UnsafeLine {
  k: number;
  dir: UnsafeDirectory;
  ownerName: string;
  groupName: string;
}

const REASONS = new Set(["owner", "group", "other", "acl"]);
const NAME = /^[A-Za-z0-9._?,-]{1,512}$/;

/**
 * Decode the fields of an `UNSAFE k reason mode uid gid hexpath owner group
 * members` line, or null when they break the protocol.
 *
 * @example
 * ```ts
 * parseUnsafe("UNSAFE 0 other 0777 0 0 2f746d70 root root -".split(" "), 1);
 * // a later path through the same directory: "UNSAFE 3 = 0", with the earlier lines
 * ```
 */
export function parseUnsafe(f: readonly string[], pathCount: number, earlier: readonly UnsafeLine[] = []): UnsafeLine | null {
  if (f.length === 4 && f[0] === "UNSAFE" && f[2] === "=") {
    // `UNSAFE k = j`: the same directory as path j's line
    const k = /^[0-9]{1,9}$/.test(f[1]!) ? Number(f[1]) : -1;
    const first = earlier.find((u) => String(u.k) === f[3]);
    return k < 0 || k >= pathCount || first === undefined ? null : { ...first, k };
  }
  if (f.length !== 10 || f[0] !== "UNSAFE") return null;
  const k = /^[0-9]{1,9}$/.test(f[1]!) ? Number(f[1]) : -1;
  if (k < 0 || k >= pathCount || !REASONS.has(f[2]!) || !/^[0-7]{4}$/.test(f[3]!)) return null;
  if (!/^[0-9]{1,10}$/.test(f[4]!) || !/^[0-9]{1,10}$/.test(f[5]!) || !/^([0-9a-f]{2}){1,4096}$/.test(f[6]!)) return null;
  if (![f[7], f[8], f[9]].every((x) => NAME.test(x!))) return null;
  const bytes = new Uint8Array(f[6]!.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(f[6]!.slice(i * 2, i * 2 + 2), 16);
  const reason = f[2] as UnsafeDirectory["reason"];
  const ownerName = f[7]!;
  const groupName = f[8]!;
  const members = f[9] === "-" ? "" : f[9]!.split(",").join(", ");
  const writers = reason === "owner"
    ? (ownerName === "-" ? `uid ${f[4]}` : ownerName)
    : reason === "other"
    ? "everyone"
    : reason === "acl"
    ? `group ${groupName === "-" ? f[5] : groupName} and users named in its ACL`
    : `group ${groupName === "-" ? f[5] : groupName}: ${members || "?"}`;
  return {
    k,
    dir: { path: new TextDecoder().decode(bytes), mode: f[3]!, uid: Number(f[4]), gid: Number(f[5]), reason, writers },
    ownerName,
    groupName,
  };
}

/** A path's kind as the programs print it. */
export type RemoteKind = "missing" | "file" | "directory" | "symlink" | "other" | "unknown";

/** Everything a commit / reconcile program said. */
export interface ProgramOutput {
  /** `SAP-BEGIN` seen: the program started and its output is ours. */
  begun: boolean;
  /** Steps announced by `STEP n`. */
  steps: Set<number>;
  /** Status of the final `SAP-END`, or null when the output stopped before it. */
  end: string | null;
  /** The first line that broke the protocol, if any. */
  malformed: string | null;
  unsupported: string | null;
  root: string | null;
  badInput: string | null;
  interrupted: string | null;
  /** `GATE`: the program asked for the go-ahead (everything staged, locked and checked; nothing renamed yet). */
  gate: boolean;
  /** `CANCELLED why`: the go-ahead did not come (`eof`: stdin ended without it; `timeout`: not within the wait; `stalled`: the upload stopped). */
  cancelled: string | null;
  journal: string | null;
  rejects: { k: number; code: string; depth: number }[];
  conflicts: { k: number; kind: RemoteKind; sha: string | null }[];
  /** `LOCKED`: the lock waited for (`op`: the operation's own), and its holder as far as known. */
  locked: { k: number | "op"; age: number; uid: number | null; pid: number | null; host: string | null; op: string | null; covers: number } | null;
  /** `WHY`: why file i's step 5 failed, when the file system or permissions refused it. */
  why: { i: number; code: string; note: string | null } | null;
  /** `SPACE`: free bytes where a write ran out of space. */
  space: { k: number | null; free: number | null } | null;
  /** `DURABLE`: the commit's files and directories were synced (null: not said). */
  durable: boolean | null;
  fails: { code: string; k: number | null; detail: string }[];
  warns: { code: string; k: number | null; detail: string }[];
  meta: Map<number, { mode: boolean; owner: boolean }>;
  finals: Set<number>;
  failed: { i: number; detail: string } | null;
  done: boolean;
  undos: Map<number, "ok" | "failed" | "diverged">;
  /** `STATE` (commit, after a failed rollback) and `PSTATE` (reconcile) per path index. */
  states: Map<number, { kind: RemoteKind; sha: string | null }>;
  /** Path indices whose backup reconcile had to keep. */
  kept: number[];
  /** Directories others can write, per path (policy refuse: the program wrote nothing). */
  unsafe: UnsafeLine[];
  /** Path indices whose directories others can write (policy allow). */
  shared: Set<number>;
}

const KINDS = new Set(["missing", "file", "directory", "symlink", "other", "unknown"]);
const WORD = /^[A-Za-z0-9_.:+-]+$/;
const SHA = /^[0-9a-f]{64}$/;
const NUM = /^[0-9]{1,15}$/;

/**
 * Parse a program's stdout.
 *
 * @example
 * ```ts
 * const out = parseProgramOutput(result.stdout, layout.paths.length, plan.files.length);
 * if (out.end === "ok") { … }
 * ```
 */
export function parseProgramOutput(stdout: Uint8Array, pathCount: number, fileCount: number): ProgramOutput {
  const out: ProgramOutput = {
    begun: false,
    steps: new Set(),
    end: null,
    malformed: null,
    unsupported: null,
    root: null,
    badInput: null,
    interrupted: null,
    gate: false,
    cancelled: null,
    journal: null,
    rejects: [],
    conflicts: [],
    locked: null,
    why: null,
    space: null,
    durable: null,
    fails: [],
    warns: [],
    meta: new Map(),
    finals: new Set(),
    failed: null,
    done: false,
    undos: new Map(),
    states: new Map(),
    kept: [],
    unsafe: [],
    shared: new Set(),
  };
  const text = new TextDecoder("latin1").decode(stdout);
  const pathIndex = (s: string | undefined): number | null =>
    s !== undefined && NUM.test(s) && Number(s) < pathCount ? Number(s) : null;
  const fileIndex = (s: string | undefined): number | null =>
    s !== undefined && NUM.test(s) && Number(s) < fileCount ? Number(s) : null;
  const optPath = (s: string | undefined): number | null | undefined =>
    s === "-" ? null : pathIndex(s) ?? undefined;
  const kind = (s: string | undefined): RemoteKind | null => s !== undefined && KINDS.has(s) ? s as RemoteKind : null;
  const sha = (s: string | undefined): string | null | undefined => s === "-" ? null : s !== undefined && SHA.test(s) ? s : undefined;

  // One line at a time, never an array of every line (a hostile reply of
  // bare newlines would cost ~32 bytes per byte); the first line that breaks
  // the protocol ends the parse. What follows the last newline is empty or
  // an unfinished (truncated) line: never looked at.
  for (let start = 0, nl = text.indexOf("\n"); nl >= 0; start = nl + 1, nl = text.indexOf("\n", start)) {
    const line = text.slice(start, nl);
    const f = line.split(" ");
    const ok = ((): boolean => {
      if (!/^[\x20-\x7e]*$/.test(line) || out.end !== null) return false;
      if (!out.begun) {
        if (f.length === 2 && f[0] === "SAP-BEGIN" && WORD.test(f[1]!)) {
          out.begun = true;
          return true;
        }
        return false;
      }
      switch (f[0]) {
        case "STEP":
          if (f.length !== 2 || !/^[1-7]$/.test(f[1]!)) return false;
          out.steps.add(Number(f[1]));
          return true;
        case "SAP-END":
          if (f.length !== 2 || !WORD.test(f[1]!)) return false;
          out.end = f[1]!;
          return true;
        case "GATE":
          if (f.length !== 1) return false;
          out.gate = true;
          return true;
        case "CANCELLED":
          if (f.length !== 2 || !/^(eof|timeout|stalled)$/.test(f[1]!)) return false;
          out.cancelled = f[1]!;
          return true;
        case "UNSUPPORTED":
        case "ROOT":
        case "BAD_INPUT":
        case "INTERRUPTED":
        case "JOURNAL": {
          if (f.length !== 2 || !WORD.test(f[1]!)) return false;
          const value = f[1]!;
          if (f[0] === "UNSUPPORTED") out.unsupported = value;
          else if (f[0] === "ROOT") out.root = value;
          else if (f[0] === "BAD_INPUT") out.badInput = value;
          else if (f[0] === "INTERRUPTED") out.interrupted = value;
          else out.journal = value;
          return true;
        }
        case "REJECT": {
          const k = pathIndex(f[1]);
          if (f.length !== 4 || k === null || !WORD.test(f[2]!) || !NUM.test(f[3]!)) return false;
          out.rejects.push({ k, code: f[2]!, depth: Number(f[3]) });
          return true;
        }
        case "CONFLICT": {
          const k = pathIndex(f[1]);
          const kd = kind(f[2]);
          const s = sha(f[3]);
          if (f.length !== 4 || k === null || kd === null || s === undefined) return false;
          out.conflicts.push({ k, kind: kd, sha: s });
          return true;
        }
        case "LOCKED": {
          // LOCKED <k|op> <age> <uid|-> <pid|-> <host|-> <op|-> <n> (sh_locks.ts: the holder;
          // n: how many trailing components of path k the lock's name covers)
          const k = f[1] === "op" ? "op" : pathIndex(f[1]);
          if (f.length !== 8 || k === null || !/^-?[0-9]{1,15}$/.test(f[2]!) || !/^[0-9]{1,4}$/.test(f[7]!)) return false;
          const num = (x: string): number | null | undefined => x === "-" ? null : /^[0-9]{1,10}$/.test(x) ? Number(x) : undefined;
          const word = (x: string, re: RegExp): string | null | undefined => x === "-" ? null : re.test(x) ? x : undefined;
          const uid = num(f[3]!);
          const pid = num(f[4]!);
          const host = word(f[5]!, /^[A-Za-z0-9._-]{1,255}$/);
          const op = word(f[6]!, /^[A-Za-z0-9_]{1,64}$/);
          if (uid === undefined || pid === undefined || host === undefined || op === undefined) return false;
          out.locked = { k, age: Number(f[2]), uid, pid, host, op, covers: Number(f[7]) };
          return true;
        }
        case "WHY": {
          // WHY <i> <class> <note>: why file i's step 5 failed (sh_faults.ts)
          const i = fileIndex(f[1]);
          if (f.length !== 4 || i === null || !WORD.test(f[2]!) || !WORD.test(f[3]!)) return false;
          out.why = { i, code: f[2]!, note: f[3] === "-" ? null : f[3]! };
          return true;
        }
        case "SPACE": {
          // SPACE <k|-> <free bytes|->
          const k = optPath(f[1]);
          if (f.length !== 3 || k === undefined || !/^(-|[0-9]{1,18})$/.test(f[2]!)) return false;
          out.space = { k, free: f[2] === "-" ? null : Number(f[2]) };
          return true;
        }
        case "DURABLE": {
          if (f.length !== 2 || !/^[01]$/.test(f[1]!)) return false;
          out.durable = f[1] === "1";
          return true;
        }
        case "FAIL":
        case "WARN": {
          const k = optPath(f[2]);
          if (f.length !== 4 || !WORD.test(f[1]!) || k === undefined || !WORD.test(f[3]!)) return false;
          (f[0] === "FAIL" ? out.fails : out.warns).push({ code: f[1]!, k, detail: f[3]! });
          return true;
        }
        case "META": {
          const i = fileIndex(f[1]);
          if (f.length !== 4 || i === null || !/^[01]$/.test(f[2]!) || !/^[01]$/.test(f[3]!)) return false;
          out.meta.set(i, { mode: f[2] === "1", owner: f[3] === "1" });
          return true;
        }
        case "FINAL": {
          const i = fileIndex(f[1]);
          if (f.length !== 2 || i === null) return false;
          out.finals.add(i);
          return true;
        }
        case "FAILED": {
          const i = fileIndex(f[1]);
          if (f.length !== 3 || i === null || !WORD.test(f[2]!)) return false;
          out.failed = { i, detail: f[2]! };
          return true;
        }
        case "DONE":
          if (f.length !== 1) return false;
          out.done = true;
          return true;
        case "UNDO": {
          const i = fileIndex(f[1]);
          if (f.length !== 3 || i === null || !["ok", "failed", "diverged"].includes(f[2]!)) return false;
          out.undos.set(i, f[2] as "ok" | "failed" | "diverged");
          return true;
        }
        case "STATE":
        case "PSTATE": {
          const k = pathIndex(f[1]);
          const kd = kind(f[2]);
          const s = f[3] === "unreadable" ? null : sha(f[3]);
          if (f.length !== 4 || k === null || kd === null || s === undefined) return false;
          out.states.set(k, { kind: kd, sha: s });
          return true;
        }
        case "UNSAFE": {
          const u = parseUnsafe(f, pathCount, out.unsafe);
          if (u === null) return false;
          out.unsafe.push(u);
          return true;
        }
        case "TRUST": {
          const k = pathIndex(f[1]);
          if (f.length !== 3 || k === null || f[2] !== "shared") return false;
          out.shared.add(k);
          return true;
        }
        case "KEPT": {
          const k = pathIndex(f[1]);
          if (f.length !== 2 || k === null) return false;
          out.kept.push(k);
          return true;
        }
        default:
          return false;
      }
    })();
    if (!ok) {
      out.malformed = line.slice(0, 200);
      out.end = null;
      return out;
    }
  }
  return out;
}
