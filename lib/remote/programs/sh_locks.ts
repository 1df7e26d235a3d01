/**
 * Per-file locks of the commit and reconcile programs (SPEC §7 step 2).
 *
 * A lock is a directory created with `mkdir` (atomic everywhere, NFS
 * included) next to the file it guards: `.sap-lock-<first 16 hex of
 * sha256(name)>`, where name is the basename — or, for a path whose parent
 * does not exist yet, the rest of the path below the deepest existing
 * ancestor, where the lock then lives. Hashing keeps the name within
 * NAME_MAX whatever the file is called. The hashes of every suffix of each
 * path come with the manifest (computed by lib/remote/manifest.ts), so the
 * program only picks the one matching what exists. Keying on the file's own directory
 * (not on the root) makes two overlapping roots lock the same file the same
 * way. Two operations can disagree on where a not-yet-existing parent's
 * lock lives only if one of them creates that parent in between; the
 * creates themselves are no-replace links, so the loser fails cleanly.
 *
 * The lock holds a file `owner`: `<pid> <host> <epoch> <operation id>`.
 * A lock never appears under its name without its owner file: it is built
 * under a private name (`.sap-lock-tmp-<op>-<k>`), owner written, then
 * renamed into place. A bare `mkdir` followed by writing the owner would
 * leave, when the process is killed in between, an ownerless lock that
 * nobody could attribute — not even reconcile of that very operation — so
 * it would block every writer of that file until the stale-lock age.
 * `mv` onto a name that exists meanwhile either fails (a complete lock is
 * a non-empty directory) or moves the private directory into it; both
 * are recognised by reading the owner back, and the private directory is
 * removed. Reconcile removes an operation's private directories by name.
 * Locks are taken in the byte order of the root-relative paths (the
 * manifest lists them sorted, lib/remote/manifest.ts), which is the byte
 * order of the physical paths too since they share the root prefix; with a
 * bounded wait on top, two batches can never deadlock.
 *
 * Waiting: one budget for the whole program (`SAP_WAIT_MS`), polled every
 * 0.1 s where `sleep 0.1` works, else every second; spent → `LOCKED`.
 *
 * Stale locks: a lock whose directory is older than `SAP_STALE` seconds and
 * whose owner is not a live process on this host (`kill -0`, or
 * /proc/<pid> when the process belongs to another user) is broken: renamed
 * aside atomically (`mv` = rename(2)), then the aside copy is compared with
 * what was judged stale (owner line and inode). If they differ, a third
 * party re-took the lock between our read and our rename: the copy is put
 * back when the name is free, else dropped. Remaining window: that third
 * party's lock is lost when the name was taken again in between (three
 * concurrent parties within a few milliseconds on a lock already stale);
 * the re-check of every file's expected state (step 3) still refuses to
 * write over anything that changed.
 *
 * A lock left by this very operation id and no longer held by a live
 * process (a killed commit, now being reconciled) is adopted.
 *
 * Besides the path locks, each commit and reconcile holds its operation's
 * own lock `.sap-lock-op-<op>` in the root from its start (sap_op_lock):
 * reconcile can then never settle an operation whose commit is still
 * running but has not reached its path locks.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** Lock acquire, break, release. Needs sap_probe date (and sleep lazily). */
export const SH_LOCKS: string = sh`
SAP_HN=0 SAP_ASIDE=0 SAP_WAITED_MS=0 SAP_POLL= SAP_LOCK_AGE=0 SAP_LOCK_SKIP_REFUSED= SAP_LT_DIR= SAP_LT_NAME=
sap_identity() {
  SAP_HOST=$(uname -n 2>/dev/null)
  case $SAP_HOST in ''|*[!A-Za-z0-9._-]*) SAP_HOST=unknown-host ;; esac
  SAP_OWNER="$$ $SAP_HOST $(date +%s) $SAP_OP"
}
sap_lock_pick() {
  sap_n=1 sap_r=$1
  while :; do
    case $sap_r in */*) sap_n=$((sap_n + 1)) sap_r=$\{sap_r#*/} ;; *) break ;; esac
  done
  set -- $2
  [ "$sap_n" -le $# ] || return 1
  eval "SAP_LN=.sap-lock-\$\{$sap_n}"
}
sap_held_add() {
  sap_set H_d_$SAP_HN "$1"
  sap_set H_l_$SAP_HN "$2"
  SAP_HN=$((SAP_HN + 1))
}
sap_owner_fields() {
  OW_PID= OW_HOST= OW_TIME= OW_OP=
  set -- $1
  OW_PID=$1 OW_HOST=$2 OW_TIME=$3 OW_OP=$4
}
sap_owner_alive() {
  sap_owner_fields "$1"
  sap_isnum "$OW_PID" || return 1
  [ "$OW_HOST" = "$SAP_HOST" ] || return 1
  kill -0 "$OW_PID" 2>/dev/null && return 0
  [ -d "/proc/$OW_PID" ]
}
sap_lock_wait() {
  if [ -z "$SAP_POLL" ]; then
    sap_probe sleep
    SAP_WAITED_MS=$((SAP_WAITED_MS + SAP_POLL_MS))
    return 0
  fi
  [ "$SAP_WAITED_MS" -lt "$SAP_WAIT_MS" ] || return 1
  sleep $SAP_POLL
  SAP_WAITED_MS=$((SAP_WAITED_MS + SAP_POLL_MS))
}
sap_lock_break() {
  sap_stat "$1/$2" || return 1
  sap_bino=$ST_INO
  sap_now=$(date +%s)
  sap_isnum "$sap_now" || return 1
  SAP_LOCK_AGE=$((sap_now - ST_MTIME))
  [ "$SAP_LOCK_AGE" -ge "$SAP_STALE" ] || return 1
  sap_owner_alive "$4" && return 1
  SAP_ASIDE=$((SAP_ASIDE + 1))
  sap_a=.sap-lock-stale-$SAP_OP-$SAP_ASIDE
  sap_cd "$1" || return 1
  mv "./$2" "./$sap_a" 2>/dev/null || return 0
  sap_read_first "./$sap_a/owner"
  if [ "$SAP_O" = "$4" ] && sap_stat "./$sap_a" && [ "$ST_INO" = "$sap_bino" ]; then
    rm -rf "./$sap_a" 2>/dev/null
    sap_out "WARN stale_lock_broken $3 $SAP_LOCK_AGE"
    return 0
  fi
  if [ -e "./$2" ]; then rm -rf "./$sap_a" 2>/dev/null; else mv "./$sap_a" "./$2" 2>/dev/null; fi
  return 0
}
sap_lock_claim() {
  # $1 lock name, $2 private name, in the current directory: build the
  # lock with its owner under the private name, rename it into place, and
  # read the owner back. 0 = the lock is ours.
  [ -e "./$2" ] && rm -rf "./$2" 2>/dev/null
  if ! { mkdir "./$2" && printf '%s\n' "$SAP_OWNER" > "./$2/owner"; } 2>/dev/null; then
    [ -e "./$2" ] && rm -rf "./$2" 2>/dev/null
    return 1
  fi
  if [ ! -e "./$1" ] && [ ! -L "./$1" ] && mv "./$2" "./$1" 2>/dev/null; then
    sap_read_first "./$1/owner"
    [ "$SAP_O" = "$SAP_OWNER" ] && return 0
  fi
  # Taken meanwhile (mv may have moved the private directory into it).
  rm -rf "./$1/$2" "./$2" 2>/dev/null
  return 1
}
sap_lock_acquire() {
  sap_lt=.sap-lock-tmp-$SAP_OP-$3
  while :; do
    sap_cd "$1" || return 2
    SAP_LT_DIR=$1 SAP_LT_NAME=$sap_lt
    if sap_lock_claim "$2" "$sap_lt"; then
      SAP_LT_DIR=
      sap_held_add "$1" "$2"
      return 0
    fi
    SAP_LT_DIR=
    if [ ! -d "./$2" ]; then
      [ -w . ] || return 2
      sap_lock_wait || return 1
      continue
    fi
    sap_read_first "./$2/owner"
    sap_o=$SAP_O
    sap_owner_fields "$sap_o"
    if [ "$OW_OP" = "$SAP_OP" ] && ! sap_owner_alive "$sap_o"; then
      sap_held_add "$1" "$2"
      { printf '%s\n' "$SAP_OWNER" > "./$2/owner"; } 2>/dev/null
      return 0
    fi
    SAP_LOCK_AGE=0
    sap_lock_break "$1" "$2" "$3" "$sap_o" && continue
    sap_lock_wait || return 1
  done
}
sap_lock_release_all() {
  # Only locks still carrying our owner line are removed (a lock broken as
  # stale and re-taken by someone else is theirs now); each is read and
  # removed from inside its directory (sap_cd), one rm per directory.
  # a private lock directory being built when the program was interrupted
  [ -n "$SAP_LT_DIR" ] && sap_clean_add "$SAP_LT_DIR" "$SAP_LT_NAME"
  while [ "$SAP_HN" -gt 0 ]; do
    SAP_HN=$((SAP_HN - 1))
    sap_get H_d_$SAP_HN
    sap_ld=$SAP_V
    sap_get H_l_$SAP_HN
    sap_ln=$SAP_V
    if sap_cd "$sap_ld"; then
      sap_read_first "./$sap_ln/owner"
      if [ "$SAP_O" = "$SAP_OWNER" ] || { [ -z "$SAP_O" ] && [ -d "./$sap_ln" ]; }; then sap_clean_add "$sap_ld" "$sap_ln"; fi
    else
      SAP_CLEAN_FAIL=1
    fi
  done
  sap_clean_run
}
sap_op_lock() {
  # The operation's own lock in the root, taken before anything else and
  # held to the end: reconcile takes it first, so it waits for a commit of
  # the same operation that still runs (a dropped connection does not stop
  # the remote program) even before that commit holds any path lock, and
  # adopts it once that process is gone. Best effort: a root the user
  # cannot write has none (then only the path locks and the stages guard).
  [ -w "$SAP_R" ] || return 0
  sap_lock_acquire "$SAP_R" ".sap-lock-op-$SAP_OP" 0
  case $? in
  1) sap_out "LOCKED 0 $SAP_LOCK_AGE"; SAP_STATUS=locked; exit 0 ;;
  esac
  return 0
}
sap_lock_all() {
  k=0
  while [ $k -lt $SAP_M ]; do
    sap_get P_$k
    if ! sap_resolve "$SAP_V"; then
      if [ -n "$SAP_LOCK_SKIP_REFUSED" ]; then k=$((k + 1)); continue; fi
      sap_refusal $k
      SAP_STATUS=refused
      exit 0
    fi
    sap_get PH_$k
    sap_lock_pick "$RN" "$SAP_V" || { sap_out "FAIL remote_error $k lock_name"; SAP_STATUS=failed; exit 0; }
    sap_lock_acquire "$RP" "$SAP_LN" $k
    case $? in
    0) ;;
    1) sap_out "LOCKED $k $SAP_LOCK_AGE"; SAP_STATUS=locked; exit 0 ;;
    *) sap_out "FAIL permission_denied $k lock"; SAP_STATUS=failed; exit 0 ;;
    esac
    k=$((k + 1))
  done
}
sap_refusal() {
  if [ "$RK" = symlink ]; then sap_out "CONFLICT $1 symlink -"; else sap_out "REJECT $1 $RJ $RD"; fi
}
`;
