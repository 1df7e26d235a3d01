/**
 * The lock-breaking race of issue 28 item 0, with the programs' own lock
 * functions (lib/remote/programs/sh_locks.ts, sh_lock_batch.ts): holders of
 * two uids (root and the harness's second user) take one lock, check it
 * stays theirs while they hold it, and release it, over and over; planters
 * of both uids keep putting dead owners' locks (a crashed commit's) under
 * that name whenever it is free, so every holder keeps judging and
 * breaking locks while the others release and re-take them. A lock taken
 * from a live owner shows as a holder finding its own record gone while it
 * still holds the lock. Optionally every party runs under libfaketime
 * (`faketime -f "+0 x1000"`: a clock a thousand times too fast, so that
 * any age rule would call every lock stale at once).
 *
 * The harness program is the lock functions plus a small loop; nothing of
 * it is the engine's own main sequence, so it tests exactly the lock rules.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { HOOK_DEFINITION, SH_PATHS, SH_PRELUDE, SH_PROBE, SH_STAT_SHA } from "../../lib/remote/programs/sh_common.ts";
import { SH_FAULTS } from "../../lib/remote/programs/sh_faults.ts";
import { SH_PRIVATE } from "../../lib/remote/programs/sh_private.ts";
import { SH_LOCKS } from "../../lib/remote/programs/sh_locks.ts";
import { SH_LOCK_BATCH } from "../../lib/remote/programs/sh_lock_batch.ts";
import { deadPid, ownerRecord } from "../support/lock_records.ts";
import { attackerAccount } from "./co_tenant_fixture.ts";

/** What one campaign saw. */
export interface LockRaceFigures {
  /** Locks taken by the holders, in all. */
  taken: number;
  /** Times a holder found its own lock gone while holding it: must be 0. */
  stolen: number;
  /** Acquisitions that timed out (the wait budget is a minute: 0 expected). */
  timeouts: number;
  /** Dead locks the planters put in place (each one judged and broken by some holder). */
  planted: number;
  /** Entries left in the directory afterwards besides the planted dead lock (must be none). */
  left: string[];
  /** What a party wrote to stderr, when one failed. */
  errors: string[];
}

/** Options of {@linkcode runLockRace}. */
export interface LockRaceOptions {
  /** Lock acquisitions per holder; two holders (root, the second uid). */
  tries: number;
  /** The shell running every party (and its leading arguments), default `["dash"]`. */
  shell?: string[];
  /** Run every party under libfaketime with a clock 1000 times too fast. */
  fakeClock?: boolean;
}

/** The holder's loop: take, check (our record stays there), release, count. */
const HOLDER_MAIN = `
SAP_OP=$1 SAP_SECRET=$2 sap_rr_n=$3
sap_probe stat date mvt id mktemp
sap_identity
cd -P "$4" || exit 3
SAP_R=$PWD SAP_B=$PWD
sap_dir_index "$SAP_R"
SAP_WAIT_MS=60000
sap_rr_taken=0 sap_rr_stolen=0 sap_rr_timeouts=0 sap_rr_i=0
# past its own tries a holder goes on until $6 exists: the other uid's
# until root is done, root's until the other uid has stopped (only root
# can clear root's dead locks, so root stops last; the planters stop with
# the other uid)
while :; do
  if [ $sap_rr_i -ge $sap_rr_n ]; then : > "$5"; [ -e "$6" ] && break; fi
  SAP_WAITED_MS=0
  if sap_lock_acquire 0 .sap-lock-race r; then
    sap_rr_taken=$((sap_rr_taken + 1))
    sap_pcd 0 || exit 4
    sap_rr_k=0
    while [ $sap_rr_k -lt 30 ]; do
      [ -d "../.sap-lock-race/$SAP_REC" ] || { sap_rr_stolen=$((sap_rr_stolen + 1)); break; }
      sap_rr_k=$((sap_rr_k + 1))
    done
    sap_lock_release_all
    sap_pcd 0 && rm -rf ./u ./L* ./X* ./k
  else
    sap_rr_timeouts=$((sap_rr_timeouts + 1))
  fi
  sap_rr_i=$((sap_rr_i + 1))
done
[ "$7" = - ] || : > "$7"
sap_pclean_all
printf 'taken=%s stolen=%s timeouts=%s\\n' $sap_rr_taken $sap_rr_stolen $sap_rr_timeouts
`;

/**
 * The planter's loop: whenever the name is free, a lock left by a commit
 * that died (a record of a pid nobody has, this boot, this namespace; its
 * info names this host), built aside and renamed onto the name.
 */
function planterProgram(record: string, pid: number): string {
  return `
sap_pl_n=0
while [ ! -e "$2" ]; do
  sap_pl_t=$(mktemp -d "$1/.sap-plant-XXXXXX") || exit 3
  mkdir "$sap_pl_t/L" "$sap_pl_t/L/${record}" && printf '%s\\n' "${pid} $(uname -n) 0 crashed_op" > "$sap_pl_t/L/${record}/info"
  mv -T "$sap_pl_t/L" "$1/.sap-lock-race" 2>/dev/null && sap_pl_n=$((sap_pl_n + 1))
  rm -rf "$sap_pl_t"
  sleep 0.01
done
printf 'planted=%s\\n' $sap_pl_n
`;
}

function run(argv: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (c) => (stdout += String(c)));
    child.stderr!.on("data", (c) => (stderr += String(c)));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // gone
      }
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Run the race once (as root: it needs the second uid).
 *
 * @example
 * ```ts
 * const f = await runLockRace({ tries: 500 });
 * if (f.stolen > 0) throw new Error("a live lock was broken");
 * ```
 */
export async function runLockRace(options: LockRaceOptions): Promise<LockRaceFigures> {
  const other = attackerAccount();
  const base = mkdtempSync(join(tmpdir(), "sap-lockrace-"));
  chmodSync(base, 0o755);
  // a directory both can write, nothing sticky: every rename the rules
  // might try is allowed by the permissions
  const dir = join(base, "d");
  rmSync(dir, { force: true, recursive: true });
  mkdirSync(dir);
  chmodSync(dir, 0o777);
  const stop = join(base, "stop");
  chmodSync(base, 0o777);
  const shell = options.shell ?? ["dash"];
  const holder = SH_PRELUDE + SH_PROBE + SH_STAT_SHA + SH_PATHS + SH_FAULTS + SH_PRIVATE + SH_LOCKS + SH_LOCK_BATCH + HOLDER_MAIN;
  if (!holder.includes(HOOK_DEFINITION)) throw new Error("the lock functions changed shape");
  const clock = options.fakeClock ? ["/usr/bin/faketime", "-f", "+0 x1000"] : [];
  const as = (uid: number, gid: number): string[] => uid === 0 ? [] : ["/usr/bin/setpriv", `--reuid=${uid}`, `--regid=${gid}`, "--clear-groups"];
  const deadRoot = deadPid();
  const deadOther = deadRoot - 1;
  const planters = [
    run([...as(0, 0), ...clock, ...shell, "-c", planterProgram(ownerRecord(deadRoot, { start: "4242" }), deadRoot), "planter", dir, stop], 600_000),
    run([...as(other.uid, other.gid), ...clock, ...shell, "-c", planterProgram(ownerRecord(deadOther, { start: "4243" }), deadOther), "planter", dir, stop], 600_000),
  ];
  const done = (who: string): string => join(base, `done-${who}`);
  const holders = await Promise.all([
    run([...as(0, 0), ...clock, ...shell, "-c", holder, "holder", "race_root", randomBytes(8).toString("hex"), String(options.tries), dir, done("root"), stop, "-"], 600_000),
    run([...as(other.uid, other.gid), ...clock, ...shell, "-c", holder, "holder", "race_other", randomBytes(8).toString("hex"), String(options.tries), dir, done("other"), done("root"), stop], 600_000),
  ]);
  writeFileSync(stop, "");
  const planted = await Promise.all(planters);
  const figures: LockRaceFigures = { taken: 0, stolen: 0, timeouts: 0, planted: 0, left: [], errors: [] };
  for (const h of holders) {
    const m = /taken=(\d+) stolen=(\d+) timeouts=(\d+)/.exec(h.stdout);
    if (m === null || h.code !== 0) {
      figures.errors.push(`holder exit ${h.code}: ${h.stdout} ${h.stderr}`.slice(0, 2000));
      continue;
    }
    figures.taken += Number(m[1]);
    figures.stolen += Number(m[2]);
    figures.timeouts += Number(m[3]);
  }
  for (const p of planted) figures.planted += Number(/planted=(\d+)/.exec(p.stdout)?.[1] ?? 0);
  // what may stay: the last dead lock planted after the holders ended
  figures.left = existsSync(dir) ? readdirSync(dir).filter((n) => n !== ".sap-lock-race") : [];
  rmSync(base, { recursive: true, force: true });
  return figures;
}
