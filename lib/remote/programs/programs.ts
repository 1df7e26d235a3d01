/**
 * `lib/remote/programs/`: the POSIX `sh` programs of the remote layer, as
 * text. This file assembles them from the parts beside it (`sh_*.ts`: shared
 * functions; `commit_*.ts`, `snapshot_program.ts`, `reconcile_program.ts`:
 * the main sequences). The parts are pure strings; they may import only each
 * other and `../shell.ts` (for quoting).
 *
 * A program is: one `set -- '<arg>' …` line whose words are built with
 * {@linkcode shQuote} — the only place where caller data meets program
 * text, and only as single-quoted words — followed by fixed function
 * definitions and a fixed main sequence. Everything unbounded (paths,
 * contents) travels on stdin. The argument part stays tiny (root, operation
 * id, numbers), far below ARG_MAX.
 *
 * The programs run under dash, bash, BusyBox `sh` (with BusyBox's own
 * applets) and BSD/macOS `sh`, and probe their tools themselves, so there
 * is no separate probe round trip: `sha256sum | shasum -a 256 | openssl
 * dgst -sha256` (OpenSSL first for plans of megabytes, when it gives the
 * right digest), `stat -c` (GNU/BusyBox) or `stat -f` (BSD), `head -c`,
 * `tail -c +N`, `dd`, `date +%s`, `id`, `link` (else `ln -T`), `mv -T`
 * (else `gmv -T`), `mktemp -d`, and `readlink` when the root path goes
 * through a symlink. A missing one fails `remote_unsupported` naming it:
 * there is no fallback to a sequence that would follow a name someone
 * else can swap. Delta uploads also use the `printf` builtin's `%b`
 * (POSIX) for short new stretches.
 *
 * Every program checks the directory trust policy (sh_trust.ts) before it
 * writes anything, and keeps all its temporaries in private directories
 * (sh_private.ts), in the same single exec.
 *
 * @module
 */
import { shQuote } from "../shell.ts";
import { HOOK_DEFINITION, SH_PATHS, SH_PRELUDE, SH_PROBE, SH_STAT_SHA } from "./sh_common.ts";
import { SH_MANIFEST } from "./sh_manifest.ts";
import { SH_FAULTS } from "./sh_faults.ts";
import { SH_DURABLE } from "./sh_durable.ts";
import { SH_PRIVATE } from "./sh_private.ts";
import { SH_REAP } from "./sh_reap.ts";
import { SH_TRUST } from "./sh_trust.ts";
import { SH_LOCKS } from "./sh_locks.ts";
import { SH_LOCK_BATCH } from "./sh_lock_batch.ts";
import { SH_UNDO } from "./sh_undo.ts";
import { SH_SNAPSHOT_MAIN } from "./snapshot_program.ts";
import { SH_SNAPSHOT_WIRE } from "./sh_snapshot_wire.ts";
import { SH_NEAR } from "./sh_near.ts";
import { SH_WALK_QUEUE } from "./sh_walk.ts";
import { SH_SNAPSHOT_BULK } from "./sh_snapshot_bulk.ts";
import { SH_COMMIT } from "./commit_program.ts";
import { SH_RECONCILE } from "./reconcile_program.ts";

export { HOOK_DEFINITION };

/**
 * The program text without its whole-line comments: they are for the
 * reader of this source, and a third of the commit program's bytes, which
 * every commit sends (a 1-line delta commit of a 10 MB file must send under
 * 1% of it: bench/remote.ts). Safe because no program has a quoted string
 * spanning lines except `SAP_NL='<newline>'`, whose second line is `'`
 * (test/unit/remote/programs_text.test.ts checks both); comments after code on a
 * line stay.
 *
 * @example
 * ```ts
 * withoutCommentLines("# why\nx=1\n"); // "x=1\n"
 * ```
 */
export function withoutCommentLines(body: string): string {
  return body.split("\n").filter((line) => !/^[ \t]*#/.test(line)).join("\n");
}

const COMMON = SH_PRELUDE + SH_PROBE + SH_STAT_SHA + SH_PATHS + SH_MANIFEST;

/**
 * The programs' source as written, comments included (what the program
 * text is made from; test/unit/remote/programs_text.test.ts checks that
 * dropping the comment lines cannot change it).
 *
 * @example
 * ```ts
 * console.log(PROGRAM_SOURCES.commit.length);
 * ```
 */
export const PROGRAM_SOURCES: Readonly<Record<"snapshot" | "commit" | "reconcile", string>> = {
  snapshot: COMMON + SH_FAULTS + SH_TRUST + SH_PRIVATE + SH_REAP + SH_SNAPSHOT_WIRE + SH_WALK_QUEUE + SH_NEAR + SH_SNAPSHOT_BULK + SH_SNAPSHOT_MAIN,
  commit: COMMON + SH_FAULTS + SH_DURABLE + SH_TRUST + SH_PRIVATE + SH_LOCKS + SH_LOCK_BATCH + SH_UNDO + SH_COMMIT,
  reconcile: COMMON + SH_FAULTS + SH_TRUST + SH_PRIVATE + SH_LOCKS + SH_LOCK_BATCH + SH_UNDO + SH_RECONCILE,
};
const SNAPSHOT_BODY = withoutCommentLines(PROGRAM_SOURCES.snapshot);
const COMMIT_BODY = withoutCommentLines(PROGRAM_SOURCES.commit);
const RECONCILE_BODY = withoutCommentLines(PROGRAM_SOURCES.reconcile);

/** Operation ids: letters, digits and `_` only (they become parts of file names and glob patterns). */
const OPERATION_ID = /^[A-Za-z0-9_]{1,64}$/;

/**
 * Check an operation id; throws `TypeError` (a programmer error) otherwise.
 *
 * @example
 * ```ts
 * assertOperationId("a1b2c3d4e5f60718"); // ok
 * ```
 */
export function assertOperationId(operationId: string): void {
  if (typeof operationId !== "string" || !OPERATION_ID.test(operationId)) {
    throw new TypeError("operation id must be 1-64 characters of [A-Za-z0-9_]");
  }
}

/**
 * Check a root: an absolute path without control characters (it travels as
 * one quoted word). Throws `TypeError` otherwise.
 *
 * @example
 * ```ts
 * assertRoot("/srv/app"); // ok
 * ```
 */
export function assertRoot(root: string): void {
  if (typeof root !== "string" || !root.startsWith("/")) {
    throw new TypeError("root must be an absolute path on the target host");
  }
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(root)) {
    throw new TypeError("root must not contain control characters");
  }
}

function program(args: readonly string[], body: string): string {
  return `set -- ${args.map(shQuote).join(" ")}\n${body}`;
}

/** What the programs do with a directory others can write (SPEC §6.1): refuse it, or work there with every defence in depth. */
type SharedDirectories = "refuse" | "allow";

function policy(value: SharedDirectories): string {
  if (value !== "refuse" && value !== "allow") throw new TypeError('sharedDirectories must be "refuse" or "allow"');
  return value;
}

function nonNegativeInteger(value: number, name: string): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`${name} must be a non-negative integer`);
  return String(value);
}

/**
 * The snapshot program for `root`, refusing files larger than
 * `maxFileBytes` without sending them.
 *
 * @example
 * ```ts
 * const command = snapshotProgram("/srv/app", 1 << 20, "refuse");
 * ```
 */
export function snapshotProgram(
  root: string,
  maxFileBytes: number,
  sharedDirectories: SharedDirectories = "refuse",
  trustRootAncestors = false,
  near: NearBudget = NO_NEAR,
): string {
  assertRoot(root);
  return program([
    root,
    nonNegativeInteger(maxFileBytes, "maxFileBytes"),
    policy(sharedDirectories),
    trustRootAncestors ? "1" : "0",
    nonNegativeInteger(near.entries, "near.entries"),
    nonNegativeInteger(near.depth, "near.depth"),
    nonNegativeInteger(near.seconds, "near.seconds"),
  ], SNAPSHOT_BODY);
}

/**
 * The bounds of the snapshot program's walk for names near a missing path
 * (sh_near.ts): entries looked at (0: no walk), levels below the root, and
 * seconds.
 *
 * @example
 * ```ts
 * const budget: NearBudget = { entries: 4000, depth: 8, seconds: 3 };
 * ```
 */
export interface NearBudget {
  /** Directory entries looked at, at most (0: no walk). */
  entries: number;
  /** Levels below the root walked, at most. */
  depth: number;
  /** Seconds the walk may take (checked every 16 directories). */
  seconds: number;
}

const NO_NEAR: NearBudget = { entries: 0, depth: 0, seconds: 0 };

/**
 * The commit program (SPEC §7) for one operation. `gateSeconds`: 0 for a
 * commit that goes through once started; otherwise the program asks for
 * the client's go-ahead before its first rename and gives up (removing
 * everything it made) when it does not come, or when the upload makes no
 * progress, within that many seconds (commit_gate.ts). `largeContent`: the
 * plan writes megabytes, so the program hashes with OpenSSL where it works
 * there (several times faster on large files, slower to start).
 *
 * @example
 * ```ts
 * const command = commitProgram("/srv/app", "a1b2c3", 10_000, 10, true, false, "refuse");
 * ```
 */
export function commitProgram(
  root: string,
  operationId: string,
  lockWaitMs: number,
  gateSeconds: number,
  createParents: boolean,
  largeContent = false,
  sharedDirectories: SharedDirectories = "refuse",
  expectRootId?: string,
  trustRootAncestors = false,
): string {
  assertRoot(root);
  assertOperationId(operationId);
  if (expectRootId !== undefined && !/^[0-9]{1,20}:[0-9]{1,20}$/.test(expectRootId)) {
    throw new TypeError("expectRootId must be <device>:<inode> as snapshotRootId gives it");
  }
  return program([
    root,
    operationId,
    nonNegativeInteger(lockWaitMs, "lockWaitMs"),
    nonNegativeInteger(gateSeconds, "gateSeconds"),
    createParents ? "1" : "0",
    largeContent ? "1" : "0",
    policy(sharedDirectories),
    expectRootId ?? "-",
    trustRootAncestors ? "1" : "0",
  ], COMMIT_BODY);
}

/**
 * The reconcile program for one operation.
 *
 * @example
 * ```ts
 * const command = reconcileProgram("/srv/app", "a1b2c3", 10_000);
 * ```
 */
export function reconcileProgram(
  root: string,
  operationId: string,
  lockWaitMs: number,
  sharedDirectories: SharedDirectories = "refuse",
  trustRootAncestors = false,
): string {
  assertRoot(root);
  assertOperationId(operationId);
  return program([
    root,
    operationId,
    nonNegativeInteger(lockWaitMs, "lockWaitMs"),
    policy(sharedDirectories),
    trustRootAncestors ? "1" : "0",
  ], RECONCILE_BODY);
}
