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
 * What a lock holds: exactly one entry, its owner record, a directory named
 * `o.<boot id>.<pid namespace>.<pid>.<start time>.<machine id>` (SAP_REC,
 * sap_identity: the kernel's boot id, the inode of the program's pid
 * namespace, the pid of its shell and that process's start time in clock
 * ticks since boot, field 22 of /proc/<pid>/stat, and /etc/machine-id; `-`
 * for what the host does not have), with a file `info` inside:
 * `<pid> <host> <epoch> <operation id>` (who, for `locked` and the
 * warnings; the epoch is only ever shown, never judged). The record names
 * one process instance: no later process can have the same one.
 *
 * Taking a lock. It is built inside the program's private directory of
 * that directory (sh_private.ts) — `L<k>` with its record — and renamed
 * onto the lock name with `mv -T`: rename(2), which never follows the name
 * and never moves into it, and which succeeds only when the name is free
 * (or an empty directory, which it replaces). So a lock never appears
 * without its owner, nothing is ever written through a name others can
 * swap, and a name planted by someone else (a symlink, a file, a full
 * directory) only makes the lock busy.
 *
 * A commit takes its path locks in batches and every program releases
 * them in batches: sh_lock_batch.ts.
 *
 * Waiting: one budget for the whole program (`SAP_WAIT_MS`), polled every
 * 0.1 s where `sleep 0.1` works, else every second; spent → `LOCKED`.
 *
 * Whose it is, never how old (issue 28 item 0). A lock is judged by its
 * record only (sap_rec_judge): alive when the boot id and pid namespace
 * are this program's and /proc/<pid> has that start time; dead when they
 * are this program's and the pid is gone or started at another time, or
 * when the boot id differs but the machine id is this host's (an earlier
 * boot: nothing survives a reboot); unknown otherwise (another host or
 * container sharing the directory, a host without /proc whose record
 * cannot be checked). A host without /proc writes `-` for what it lacks;
 * such a record is judged by its info line's host name and `kill -0`
 * (a reused pid makes it look alive, never the reverse). Only a dead
 * lock is broken — at once, whatever its age, with the warning
 * `stale_lock_broken` unless it was this operation's own (its reconcile
 * clears it silently). A live or unknown one is waited for, whatever its
 * age, and `locked` says whose it is. No clock takes part: a clock jump
 * cannot make a live lock look old.
 *
 * Breaking takes only the lock that was judged (the compare-and-swap that
 * the names allow). The judged record is moved out of the lock into the
 * private directory, `mv -T ../<lock>/<record> ./X<n>`: that rename
 * succeeds only while the directory at the lock name still holds that very
 * record, which only the dead instance has — a lock released and taken
 * again in between holds another record, so the rename fails and nothing
 * is touched, however many parties race. The emptied lock directory no
 * longer blocks anyone (a new lock is renamed over an empty directory) and
 * is removed with `rmdir` (which fails, harmlessly, once a new lock is
 * there). What is at a lock name and is no directory (a planted symlink,
 * file or FIFO: never a lock) is renamed onto a regular file of ours in the
 * private directory: rename(2) of a directory onto a file fails, so a lock
 * taken there meanwhile stays. Another user's lock is looked into only by
 * root (who can also move its record); a program that is not root waits
 * for it, and `locked` names its uid. A lock of an older version (an
 * `owner` file instead of a record, judged by its pid and host) is broken
 * by moving that file out, compared, then removing the empty directory.
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
 * them — checked to be ours (our record) and removed with it.
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
SAP_BOOT=- SAP_NS=- SAP_MID=- SAP_REC=
sap_proc_start() {
  # SAP_ST: field 22 (start time) of the /proc/<pid>/stat line $1, cut
  # after the command name in parentheses (which may hold spaces)
  SAP_ST=
  sap_ps_r=$\{1##*) }
  [ "$sap_ps_r" != "$1" ] || return 1
  set -- $sap_ps_r
  [ $# -ge 20 ] || return 1
  shift 19
  sap_isnum "$1" || return 1
  SAP_ST=$1
}
sap_identity() {
  # one uname for both: the system (sh_durable.ts: fsync semantics are
  # known only for Linux) and the host name (lock owners)
  sap_un=$(uname -sn 2>/dev/null)
  SAP_OS=$\{sap_un%% *} SAP_HOST=$\{sap_un#* }
  case $SAP_HOST in ''|*[!A-Za-z0-9._-]*) SAP_HOST=unknown-host ;; esac
  SAP_OWNER="$$ $SAP_HOST $(date +%s) $SAP_OP"
  # the lock record (sh_locks.ts): builtins, and one stat for the pid
  # namespace where /proc has it
  sap_id_b= sap_id_s= sap_id_st=-
  { IFS= read -r sap_id_b < /proc/sys/kernel/random/boot_id; } 2>/dev/null
  case $sap_id_b in ''|*[!0-9a-f-]*) sap_id_b= ;; esac
  if [ -n "$sap_id_b" ] && { IFS= read -r sap_id_s < /proc/$$/stat; } 2>/dev/null && sap_proc_start "$sap_id_s"; then
    SAP_BOOT=$sap_id_b sap_id_st=$SAP_ST
    # a kernel without pid namespaces has no such file: "-" on both sides
    SAP_NS=$(stat -L -c %i /proc/$$/ns/pid 2>/dev/null)
    sap_isnum "$SAP_NS" || SAP_NS=-
  fi
  for sap_id_f in /etc/machine-id /var/lib/dbus/machine-id; do
    sap_id_m=
    { IFS= read -r sap_id_m < $sap_id_f; } 2>/dev/null
    case $sap_id_m in ????????????????????????????????) case $sap_id_m in *[!0-9a-f]*) ;; *) SAP_MID=$sap_id_m; break ;; esac ;; esac
  done
  SAP_REC=o.$SAP_BOOT.$SAP_NS.$$.$sap_id_st.$SAP_MID
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
sap_pid_here() {
  # $1 a pid of this host: it exists (kill -0; /proc/<pid> where kill
  # says EPERM, which only another user's process can)
  kill -0 "$1" 2>/dev/null || [ -d "/proc/$1" ]
}
sap_rec_judge() {
  # LV: alive, dead or unknown for the owner record $1
  # (o.<boot>.<ns>.<pid>.<start>.<machine>); $2 its info line, when it
  # could be read (a lock of ours). Never a clock.
  LV=unknown sap_rj_i=$2
  sap_rj_ifs=$IFS
  IFS=.
  set -- $\{1#o.}
  IFS=$sap_rj_ifs
  [ $# = 5 ] && sap_isnum "$3" || return 0
  if [ "$1" = - ] || [ "$4" = - ]; then
    # written where /proc was missing: by the host name and the pid alone
    sap_rj_p=$3
    sap_owner_fields "$sap_rj_i"
    [ -n "$OW_HOST" ] && [ "$OW_HOST" = "$SAP_HOST" ] && [ "$OW_PID" = "$sap_rj_p" ] || return 0
    if sap_pid_here "$sap_rj_p"; then LV=alive; else LV=dead; fi
    return 0
  fi
  [ "$SAP_BOOT" != - ] || return 0
  if [ "$1" != "$SAP_BOOT" ]; then
    # another kernel: this machine before a reboot (same machine id), or
    # another machine sharing the directory (cannot be told)
    [ "$5" != - ] && [ "$5" = "$SAP_MID" ] && LV=dead
    return 0
  fi
  # another pid namespace (a container sharing the directory): its pids
  # mean nothing here
  [ "$2" = "$SAP_NS" ] || return 0
  sap_rj_s=$4 sap_rj_l=
  if [ -e "/proc/$3" ]; then
    # unreadable while it exists (hidepid): cannot be told
    { IFS= read -r sap_rj_l < "/proc/$3/stat"; } 2>/dev/null || { [ -e "/proc/$3" ] && return 0; }
  fi
  if [ -n "$sap_rj_l" ]; then
    sap_proc_start "$sap_rj_l" || return 0
    # the same process, still running (a zombie too): alive
    [ "$SAP_ST" = "$sap_rj_s" ] && { LV=alive; return 0; }
  fi
  LV=dead
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
  # directory (and back there after): LX_KIND none|dir|other, LX_UID,
  # LX_OURS (owned by the effective user), SAP_LOCK_AGE (shown, never
  # judged); for a directory that root or its owner may look into:
  # LX_REC its one owner record, LX_OWNER that record's info line (ours
  # only), LX_LEGACY (an older version's lock: LX_OWNER its owner file),
  # LX_EMPTY (nothing in it). LV (sap_lock_judge): alive|dead|unknown.
  LX_KIND=none LX_OWNER= LX_OURS= LX_UID= LX_REC= LX_LEGACY= LX_EMPTY= SAP_LOCK_AGE=0 LV=unknown
  sap_lx_d=$1
  sap_stat "../$2" || return 0
  LX_KIND=other LX_UID=$ST_UID sap_lx_mt=$ST_MTIME
  sap_lx_now=$(date +%s)
  sap_isnum "$sap_lx_now" && SAP_LOCK_AGE=$((sap_lx_now - sap_lx_mt))
  [ "$ST_TYPE" = 4 ] || return 0
  LX_KIND=dir
  [ "$ST_UID" = "$SAP_EUID" ] && LX_OURS=1
  [ -n "$LX_OURS" ] || [ "$SAP_EUID" = 0 ] || return 0
  sap_get DIR_$1
  sap_join "$SAP_V" "$2"
  sap_lx_p=$SAP_J1
  # entered by its physical path (sap_cd: never through a symlink swapped in)
  if sap_cd "$sap_lx_p"; then
    set +f
    set -- ./o.*
    set -f
    if [ $# = 1 ] && [ "$1" != "./o.*" ]; then
      LX_REC=$\{1#./}
      if [ -n "$LX_OURS" ] && sap_cd "$sap_lx_p/$LX_REC" && [ -O . ]; then
        { IFS= read -r LX_OWNER < ./info; } 2>/dev/null
      fi
    elif [ "$1" = "./o.*" ] && [ ! -e "./o.*" ]; then
      set +f
      set -- ./* ./.[!.]* ./..?*
      set -f
      if [ "$1$2$3" = "./*./.[!.]*./..?*" ] && [ ! -e "$1" ] && [ ! -e "$2" ] && [ ! -e "$3" ]; then LX_EMPTY=1
      elif [ -n "$LX_OURS" ] && [ -O . ] && [ -f ./owner ] && [ ! -L ./owner ]; then
        LX_LEGACY=1
        { IFS= read -r LX_OWNER < ./owner; } 2>/dev/null
      fi
    fi
  fi
  sap_pcd $sap_lx_d
  sap_lock_judge
}
sap_lock_judge() {
  LV=unknown
  if [ -n "$LX_REC" ]; then
    sap_rec_judge "$LX_REC" "$LX_OWNER"
  elif [ -n "$LX_LEGACY" ]; then
    sap_owner_fields "$LX_OWNER"
    sap_isnum "$OW_PID" && [ "$OW_HOST" = "$SAP_HOST" ] && [ -n "$OW_OP" ] || return 0
    if sap_pid_here "$OW_PID"; then LV=alive; else LV=dead; fi
  fi
}
sap_lock_break() {
  # $1 dir index, $2 lock name, $3 tag; from inside the private directory.
  # Clears exactly what sap_lock_examine judged (see the module doc);
  # 0 when the lock may be tried again at once, 1 when it is to be waited
  # for (what was judged is no longer there, or may not be moved).
  SAP_ASIDE=$((SAP_ASIDE + 1))
  sap_lb_x=./X$SAP_ASIDE
  if [ "$LX_KIND" = other ]; then
    # onto a file of ours: fails for a directory (a lock taken meanwhile)
    { : > "$sap_lb_x"; } 2>/dev/null || return 1
    if $SAP_MV "../$2" "$sap_lb_x" 2>/dev/null; then rm -f "$sap_lb_x"; return 0; fi
    rm -f "$sap_lb_x"
    return 1
  fi
  if [ -n "$LX_EMPTY" ]; then
    rmdir "../$2" 2>/dev/null
    return 1
  fi
  if [ -n "$LX_REC" ]; then
    sap_hook lock_break "$2"
    $SAP_MV "../$2/$LX_REC" "$sap_lb_x" 2>/dev/null || return 1
    rm -rf "$sap_lb_x" 2>/dev/null
    # the emptied directory; a lock renamed over it since is not empty
    rmdir "../$2" 2>/dev/null
    sap_lock_warn $3
    return 0
  fi
  if [ -n "$LX_LEGACY" ]; then
    $SAP_MV "../$2/owner" "$sap_lb_x" 2>/dev/null || return 1
    SAP_O=
    { IFS= read -r SAP_O < "$sap_lb_x"; } 2>/dev/null
    if [ "$SAP_O" != "$LX_OWNER" ]; then
      # another old-version lock took its place: give its owner back
      sap_exists "../$2/owner" || $SAP_MV "$sap_lb_x" "../$2/owner" 2>/dev/null || sap_set PDIRTY_$1 1
      return 1
    fi
    rm -f "$sap_lb_x"
    rmdir "../$2" 2>/dev/null
    sap_lock_warn $3
    return 0
  fi
  return 1
}
sap_lock_warn() {
  # a broken lock is worth a warning unless it was this operation's own
  # (a killed run of it, cleared by its reconcile)
  if [ -n "$LX_OURS" ]; then sap_owner_fields "$LX_OWNER"; [ "$OW_OP" = "$SAP_OP" ] && return 0; fi
  sap_out "WARN stale_lock_broken $1 $SAP_LOCK_AGE"
}
sap_lock_build() {
  # $1: a lock to build in the private directory (entered): the directory,
  # its record and the record's info line. An info line that cannot be
  # written leaves a lock all the same (the record is what is judged).
  if [ ! -d "$1/$SAP_REC" ]; then
    { [ -d "$1" ] || mkdir "$1"; } 2>/dev/null && mkdir "$1/$SAP_REC" 2>/dev/null || return 1
  fi
  [ -s "$1/$SAP_REC/info" ] || { printf '%s\n' "$SAP_OWNER" > "$1/$SAP_REC/info"; } 2>/dev/null
  return 0
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
    [ -d "$sap_la_b/$SAP_REC" ] || { sap_la_b=./L$3; sap_lock_build "$sap_la_b" || return 2; }
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
    # anything but a directory at a lock name is no lock (a planted link,
    # file or FIFO), an empty directory is nobody's, and a lock whose owner
    # is gone (a killed commit or reconcile, this operation's own
    # included) is held by nobody: cleared at once. Any other is waited for.
    if [ "$LX_KIND" = other ] || [ -n "$LX_EMPTY" ] || [ "$LV" = dead ]; then
      sap_lock_break $1 "$2" $3 && continue
    fi
    sap_lock_holder
    sap_lock_wait || return 1
  done
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
    if [ "$LX_KIND" = other ] || [ -n "$LX_EMPTY" ] || [ "$LV" = dead ]; then
      sap_lock_break $1 "$2" $3 && continue
    fi
    sap_lock_holder
    sap_lock_wait || return 1
  done
}
sap_op_lock() {
  # The operation's own lock in the root, taken before the first write and
  # held to the end: reconcile takes it first, so it waits for a commit of
  # the same operation that still runs (one whose client vanished stops at
  # its go-ahead within clientGoneMs, commit_gate.ts; one past it finishes)
  # even before that commit holds any path lock, and clears it once that
  # process is gone. Best effort: a root the user
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
