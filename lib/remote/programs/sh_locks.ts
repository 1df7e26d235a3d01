/**
 * Per-file locks of the commit and reconcile programs (SPEC §7 step 2).
 *
 * A lock is a directory next to the file it guards:
 * `.sap-lock-<first 16 hex of sha256(name)>`, where name is the basename —
 * or, for a path whose parent does not exist yet, the rest of the path
 * below the deepest existing ancestor, where the lock then lives. Hashing
 * keeps the name within NAME_MAX whatever the file is called. The hashes of
 * every suffix of each path come with the manifest (computed by
 * lib/remote/manifest.ts), so the program only picks the one matching what
 * exists. Keying on the file's own directory (not on the root) makes two
 * overlapping roots lock the same file the same way. Locks are taken in the
 * byte order of the root-relative paths (the manifest lists them sorted);
 * with a bounded wait on top, two batches can never deadlock.
 *
 * Taking a lock. It is built inside the program's private directory of
 * that directory (sh_private.ts) — `L<k>` with its `owner` file
 * (`<pid> <host> <epoch> <operation id>`) — and renamed onto the lock name
 * with `mv -T`: rename(2), which never follows the name and never moves
 * into it, and which succeeds only when the name is free (or an empty
 * directory, which it replaces). So a lock never appears without its
 * owner, nothing is ever written through a name others can swap, and a
 * name planted by someone else (a symlink, a file, a full directory) only
 * makes the lock busy.
 *
 * A commit takes its path locks in batches and every program releases
 * them in batches: sh_lock_batch.ts.
 *
 * Waiting: one budget for the whole program (`SAP_WAIT_MS`), polled every
 * 0.1 s where `sleep 0.1` works, else every second; spent → `LOCKED`.
 *
 * Dead and stale locks. A lock of the effective user whose owner line is
 * complete and names a process of this host that no longer runs (`kill
 * -0`, or /proc/<pid>) is held by nobody — a killed commit or reconcile
 * left it — and is broken at once, whatever its age, with a warning
 * (`stale_lock_broken`), except when it is this operation's own (its
 * reconcile adopts or clears it silently). Otherwise a lock older than
 * `SAP_STALE` seconds whose owner is not a live process on this host, or
 * whose owner cannot be read (another user's lock), is broken. Breaking: it is
 * renamed into the private directory (rename(2): nobody can re-take the
 * name half-way), then compared with what was judged stale (its inode). If
 * it differs, a third party re-took the lock between our look and our
 * rename: it is given back when the name is free. A lock we may not move
 * (another user's directory while we are not root) is renamed aside in
 * place, onto a name made by `mktemp -d` (unpredictable). Remaining window:
 * that third party's lock is lost when the name was taken again in between
 * (three concurrent parties within a few milliseconds on a lock already
 * stale); the re-check of every file's expected state (step 3) still
 * refuses to write over anything that changed.
 *
 * A lock left by this very operation id and no longer held by a live
 * process (a killed commit, now being reconciled) is adopted; its new
 * owner line is written beside the old one and renamed over it, so a kill
 * during the adoption leaves a complete owner too.
 *
 * A parent that did not exist. The lock of `moved/m.txt` taken while
 * `moved/` was missing lives in the root as `.sap-lock-<hash of
 * moved/m.txt>`; once `moved/` exists, the path's lock is taken there.
 * So after taking a path's lock, every longer-suffix name above it is
 * looked at (builtins only: nothing to pay when there is none): a dead
 * owner's is cleared at once, a live one (a commit still holding the
 * parent-less name) is waited for, as if it were this lock
 * (sap_lock_alternates). Reconcile also removes every lock of its
 * operation in every directory on the way (reconcile_program.ts).
 *
 * Who holds it. `LOCKED k|op age uid pid host op n` names the lock waited
 * for (path k's, n trailing components covered by its name, or `op`, the
 * operation lock) and its holder, as far as it may be read (another
 * user's: its uid only).
 *
 * Releasing: the locks are renamed into the private directory
 * (sh_lock_batch.ts), and only once there — where nobody else can touch
 * them — checked to be ours and removed with it.
 *
 * Besides the path locks, each commit and reconcile holds its operation's
 * own lock `.sap-lock-op-<op>` in the root from before its first write to
 * its end (sap_op_lock): reconcile can then never settle an operation whose
 * commit is still running but has not reached its path locks.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** Lock acquire, break, the one-by-one path of sap_lock_all. Needs sap_probe date (and sleep lazily), and SH_LOCK_BATCH. */
export const SH_LOCKS: string = sh`
SAP_HN=0 SAP_ASIDE=0 SAP_WAITED_MS=0 SAP_POLL= SAP_LOCK_AGE=0 SAP_LOCK_SKIP_REFUSED= SAP_LOCK_HOLDER="- - - -" SAP_LOCK_N=0
sap_identity() {
  # one uname for both: the system (sh_durable.ts: fsync semantics are
  # known only for Linux) and the host name (lock owners)
  sap_un=$(uname -sn 2>/dev/null)
  SAP_OS=$\{sap_un%% *} SAP_HOST=$\{sap_un#* }
  case $SAP_HOST in ''|*[!A-Za-z0-9._-]*) SAP_HOST=unknown-host ;; esac
  SAP_OWNER="$$ $SAP_HOST $(date +%s) $SAP_OP"
}
sap_lock_pick() {
  sap_lp_n=1 sap_lp_r=$1
  while :; do
    case $sap_lp_r in */*) sap_lp_n=$((sap_lp_n + 1)) sap_lp_r=$\{sap_lp_r#*/} ;; *) break ;; esac
  done
  set -- $2
  [ "$sap_lp_n" -le $# ] || return 1
  eval "SAP_LN=.sap-lock-\$\{$sap_lp_n}"
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
sap_lock_examine() {
  # $1 dir index, $2 lock name, from inside that directory's private
  # directory (and back there after): LX_KIND none|dir|other, LX_INO,
  # SAP_LOCK_AGE, LX_OURS (owned by the effective user), LX_OWNER (its owner
  # line, read only then).
  LX_KIND=none LX_OWNER= LX_INO= LX_OURS= LX_UID= SAP_LOCK_AGE=0
  sap_stat "../$2" || return 0
  LX_INO=$ST_INO LX_KIND=other LX_UID=$ST_UID sap_lx_mt=$ST_MTIME
  sap_lx_now=$(date +%s)
  sap_isnum "$sap_lx_now" && SAP_LOCK_AGE=$((sap_lx_now - sap_lx_mt))
  [ "$ST_TYPE" = 4 ] || return 0
  LX_KIND=dir
  [ "$ST_UID" = "$SAP_EUID" ] || return 0
  LX_OURS=1
  sap_get DIR_$1
  sap_join "$SAP_V" "$2"
  if sap_cd "$SAP_J1" && [ -O . ]; then
    { IFS= read -r LX_OWNER < ./owner; } 2>/dev/null
  fi
  sap_pcd $1
}
sap_lock_drop() {
  # $1: another user's lock directory, moved into our private directory
  # (we are root): empty it from inside, never recursing, then remove it.
  sap_ld_here=$PWD
  sap_join "$sap_ld_here" "$1"
  sap_cd "$SAP_J1" || return 1
  rm -f ./owner 2>/dev/null
  sap_cd "$sap_ld_here" && rmdir "./$1" 2>/dev/null
}
sap_lock_break() {
  # $1 dir index, $2 lock name, $3 tag; from inside the private directory.
  # 0 when it may be tried again at once.
  SAP_ASIDE=$((SAP_ASIDE + 1))
  sap_lb_x=X$SAP_ASIDE
  if $SAP_MV "../$2" "./$sap_lb_x" 2>/dev/null; then
    ST_INO= ST_TYPE=
    sap_stat "./$sap_lb_x"
    if [ "$ST_INO" = "$LX_INO" ]; then
      if [ -n "$LX_OURS" ] && [ "$ST_UID" = "$SAP_EUID" ] || [ "$ST_TYPE" != 4 ]; then
        rm -rf "./$sap_lb_x" 2>/dev/null
      else
        sap_lock_drop "$sap_lb_x" || sap_set PDIRTY_$1 1
      fi
      [ "$ST_TYPE" = 4 ] && sap_lock_warn $3
      return 0
    fi
    # re-taken between our look and our rename: not ours to break
    sap_exists "../$2" || $SAP_MV "./$sap_lb_x" "../$2" 2>/dev/null || sap_set PDIRTY_$1 1
    return 0
  fi
  # We may not move it here (another user's directory and we are not
  # root): rename it aside in its directory, onto a name mktemp draws.
  sap_lb_a=$(mktemp -d "../.sap-$SAP_OP-XXXXXX" 2>/dev/null) || return 1
  if $SAP_MV "../$2" "$sap_lb_a" 2>/dev/null; then
    ST_INO=
    sap_stat "$sap_lb_a"
    if [ "$ST_INO" = "$LX_INO" ]; then sap_lock_warn $3
    else sap_exists "../$2" || $SAP_MV "$sap_lb_a" "../$2" 2>/dev/null; fi
  else
    rmdir "$sap_lb_a" 2>/dev/null
  fi
  return 0
}
sap_lock_warn() {
  # a broken lock is worth a warning unless it was this operation's own
  # (a killed run of it, cleared by its reconcile)
  if [ -n "$LX_OURS" ]; then sap_owner_fields "$LX_OWNER"; [ "$OW_OP" = "$SAP_OP" ] && return 0; fi
  sap_out "WARN stale_lock_broken $1 $SAP_LOCK_AGE"
}
sap_lock_acquire() {
  # $1 dir index, $2 lock name, $3 tag (path index, or op): 0 held,
  # 1 timed out, 2 no lock can be made there.
  SAP_LOCK_HOLDER="- - - -"
  sap_pmake $1 || return 2
  while :; do
    sap_pcd $1 || { SAP_PSWAP=1; return 2; }
    # the lock built ahead by sap_lock_prebuild, else one built here
    sap_la_b=./k/$2
    if [ ! -d "$sap_la_b" ]; then
      sap_la_b=./L$3
      [ -d "$sap_la_b" ] || { mkdir "$sap_la_b" && printf '%s\n' "$SAP_OWNER" > "$sap_la_b/owner"; } 2>/dev/null || return 2
    fi
    if [ ! -s "$sap_la_b/owner" ]; then
      # built ahead, but its owner line could not be written then
      { printf '%s\n' "$SAP_OWNER" > "$sap_la_b/owner"; } 2>/dev/null || return 2
    fi
    sap_hook lock_built $3
    if $SAP_MV "$sap_la_b" "../$2" 2>/dev/null; then
      sap_held_add $1 "$2"
      return 0
    fi
    [ -w .. ] || return 2
    sap_lock_examine $1 "$2"
    if [ "$LX_KIND" = none ]; then
      SAP_LOCK_HOLDER="- - - -"
      sap_lock_wait || return 1
      continue
    fi
    if [ -n "$LX_OURS" ]; then
      sap_owner_fields "$LX_OWNER"
      if [ "$OW_OP" = "$SAP_OP" ] && ! sap_owner_alive "$LX_OWNER"; then
        # this operation's own lock, left by a process that is gone: adopt it
        sap_get DIR_$1
        sap_join "$SAP_V" "$2"
        # the new owner line replaces the old one by rename, inside the
        # lock (ours, 0700): a kill at any moment leaves a complete owner
        if sap_cd "$SAP_J1" && [ -O . ] && { printf '%s\n' "$SAP_OWNER" > ./owner.n; } 2>/dev/null && $SAP_MV ./owner.n ./owner 2>/dev/null; then
          sap_held_add $1 "$2"
          return 0
        fi
        sap_pcd $1 || return 2
      fi
    fi
    # anything but a directory at a lock name is no lock (a planted link,
    # file or FIFO), and a lock of ours whose owner process is gone from
    # this host (a killed commit or reconcile) is held by nobody: both are
    # cleared at once; any other directory only when stale
    if [ "$LX_KIND" = other ] || sap_lock_dead || sap_lock_stale; then
      sap_lock_break $1 "$2" $3 && continue
    fi
    sap_lock_holder
    sap_lock_wait || return 1
  done
}
sap_lock_dead() {
  # the lock just examined is ours, its owner line is complete and names a
  # process of this host that no longer runs
  [ -n "$LX_OURS" ] || return 1
  sap_owner_fields "$LX_OWNER"
  sap_isnum "$OW_PID" && [ "$OW_HOST" = "$SAP_HOST" ] && [ -n "$OW_OP" ] || return 1
  ! sap_owner_alive "$LX_OWNER"
}
sap_lock_stale() {
  [ "$SAP_LOCK_AGE" -ge "$SAP_STALE" ] && { [ -z "$LX_OURS" ] || ! sap_owner_alive "$LX_OWNER"; }
}
sap_lock_holder() {
  # SAP_LOCK_HOLDER: "uid pid host op" of the lock just examined, "-" for
  # what is not known (another user's lock is never opened)
  sap_lh_p=- sap_lh_h=- sap_lh_o=-
  if [ -n "$LX_OURS" ] && [ -n "$LX_OWNER" ]; then
    sap_owner_fields "$LX_OWNER"
    sap_isnum "$OW_PID" && sap_lh_p=$OW_PID
    case $OW_HOST in ''|*[!A-Za-z0-9._-]*) ;; *) sap_lh_h=$OW_HOST ;; esac
    case $OW_OP in ''|*[!A-Za-z0-9_]*) ;; *) sap_lh_o=$OW_OP ;; esac
  fi
  SAP_LOCK_HOLDER="$\{LX_UID:--} $sap_lh_p $sap_lh_h $sap_lh_o"
}
sap_lock_alternates() {
  # $1 path index, $2 its lock's directory index, $3 the number of path
  # components its lock name covers. A path whose parent did not exist
  # when an earlier commit locked it had its lock higher up, in the
  # deepest directory that existed, named by the longer suffix; a commit
  # that died holding it left it there. So every such name above this
  # lock is looked at — builtins only, nothing when there is none: a dead
  # owner's lock is cleared at once (sap_lock_acquire's rules), a live one
  # waited for as if it were this path's lock. 0 clear, 1 timed out.
  sap_get PH_$1
  sap_al_hs=$SAP_V sap_al_j=0 sap_al_n=$3
  sap_get DIR_$2
  sap_al_p=$SAP_V
  for sap_al_h in $sap_al_hs; do
    sap_al_j=$((sap_al_j + 1))
    [ $sap_al_j -gt "$sap_al_n" ] || continue
    [ "$sap_al_p" != "$SAP_R" ] || return 0
    sap_al_p=$\{sap_al_p%/*}
    [ -n "$sap_al_p" ] || sap_al_p=/
    sap_cd "$sap_al_p" || return 0
    sap_exists "./.sap-lock-$sap_al_h" || continue
    sap_dir_index "$sap_al_p"
    SAP_LOCK_N=$sap_al_j
    sap_lock_clear $SAP_DI ".sap-lock-$sap_al_h" $1 || return 1
  done
  return 0
}
sap_lock_clear() {
  # $1 dir index, $2 lock name, $3 tag: wait until nobody holds the lock
  # there (breaking it by sap_lock_acquire's rules), without taking it.
  # 0 free, 1 timed out, 2 cannot look.
  SAP_LOCK_HOLDER="- - - -"
  sap_pmake $1 || return 2
  while :; do
    sap_pcd $1 || return 2
    sap_lock_examine $1 "$2"
    [ "$LX_KIND" = none ] && return 0
    if [ "$LX_KIND" = other ] || sap_lock_dead || sap_lock_stale; then
      sap_lock_break $1 "$2" $3 && continue
    fi
    sap_lock_holder
    sap_lock_wait || return 1
  done
}
sap_op_lock() {
  # The operation's own lock in the root, taken before the first write and
  # held to the end: reconcile takes it first, so it waits for a commit of
  # the same operation that still runs (a dropped connection does not stop
  # the remote program) even before that commit holds any path lock, and
  # adopts it once that process is gone. Best effort: a root the user
  # cannot write has none (then only the path locks guard).
  [ -w "$SAP_R" ] || return 0
  sap_lock_acquire 0 ".sap-lock-op-$SAP_OP" op
  case $? in
  1) sap_out "LOCKED op $SAP_LOCK_AGE $SAP_LOCK_HOLDER 0"; SAP_STATUS=locked; exit 0 ;;
  2) [ -n "$SAP_PSWAP" ] && { sap_out "FAIL remote_error - private"; SAP_STATUS=failed; exit 0; } ;;
  esac
  return 0
}
sap_lock_all() {
  [ -n "$SAP_LOCK_SKIP_REFUSED" ] || sap_lock_prebuild
  k=0
  while [ $k -lt $SAP_M ]; do
    sap_get PD_$k
    if [ -z "$SAP_V" ]; then
      if [ -n "$SAP_LOCK_SKIP_REFUSED" ]; then k=$((k + 1)); continue; fi
      sap_out "FAIL remote_error $k lock_dir"
      SAP_STATUS=failed
      exit 0
    fi
    sap_la_d=$SAP_V
    # still where it was resolved (a directory swapped for a symlink since is refused)
    sap_get P_$k
    if ! sap_resolve "$SAP_V"; then
      if [ -n "$SAP_LOCK_SKIP_REFUSED" ]; then k=$((k + 1)); continue; fi
      sap_refusal $k
      SAP_STATUS=refused
      exit 0
    fi
    sap_get R_dir_$k
    if [ "$RP" != "$SAP_V" ]; then
      if [ -n "$SAP_LOCK_SKIP_REFUSED" ]; then k=$((k + 1)); continue; fi
      sap_out "CONFLICT $k other -"
      SAP_STATUS=refused
      exit 0
    fi
    sap_get R_name_$k
    sap_la_n=$SAP_V
    sap_get PH_$k
    sap_lock_pick "$sap_la_n" "$SAP_V" || { sap_out "FAIL remote_error $k lock_name"; SAP_STATUS=failed; exit 0; }
    sap_set LC_$k $sap_lp_n
    sap_get LB_$k
    sap_la_b=$SAP_V
    sap_get LN_$k
    if [ -n "$sap_la_b" ] && [ "$SAP_V" = "$SAP_LN" ]; then
      # built ahead: queued, taken with the rest of its run
      [ $SAP_LQN = 0 ] || [ "$SAP_LQD" = $sap_la_d ] || sap_lock_run
      sap_set LQ_$SAP_LQN $k
      SAP_LQD=$sap_la_d SAP_LQN=$((SAP_LQN + 1))
    else
      sap_lock_run
      sap_set LN_$k "$SAP_LN"
      sap_lock_one $k $sap_la_d
    fi
    k=$((k + 1))
  done
  sap_lock_run
}
sap_lock_one() {
  # Take path $1's lock (LN_$1, covering LC_$1 components) in directory $2
  # with sap_lock_acquire, then its alternates; the verdict.
  sap_get LC_$1
  SAP_LOCK_N=$SAP_V
  sap_get LN_$1
  sap_lock_acquire $2 "$SAP_V" $1
  sap_lo_rc=$?
  [ $sap_lo_rc != 0 ] || { sap_get LC_$1; sap_lock_alternates $1 $2 $SAP_V; sap_lo_rc=$?; }
  sap_lock_verdict $1 $2 $sap_lo_rc
}
sap_lock_verdict() {
  # $1 path index, $2 its lock's directory index, $3 0 held, 1 timed out
  # (LOCKED, the end), 2 no lock could be made (FAIL, the end)
  case $3 in
  0) ;;
  1) sap_out "LOCKED $1 $SAP_LOCK_AGE $SAP_LOCK_HOLDER $SAP_LOCK_N"; SAP_STATUS=locked; exit 0 ;;
  *)
    if [ -n "$SAP_PSWAP" ]; then sap_out "FAIL remote_error $1 private"
    else sap_get DIR_$2; sap_fail_class $1 "$SAP_V" lock; fi
    SAP_STATUS=failed
    exit 0 ;;
  esac
}
sap_refusal() {
  if [ "$RK" = symlink ]; then sap_out "CONFLICT $1 symlink -"; else sap_out "REJECT $1 $RJ $RD"; fi
}
`;
