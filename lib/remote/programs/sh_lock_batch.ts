/**
 * Locks taken and released in batches (issue 17 item 3: no process per
 * file), on top of sh_locks.ts.
 *
 * Taking. A commit takes its path locks in batches: sap_lock_prebuild builds
 * them all ahead, as `k/<lock name>` in each private directory, and
 * sap_lock_run takes a run of them (paths in a row, in manifest order, in
 * the same directory) with one `mv -f k/<name>... ..` — one rename(2) of
 * each onto `../<name>`, the same system call as `mv -T`'s (mv renames
 * onto the target directory's entry of that last component; it never goes
 * into it). A name that is busy makes only its own rename fail; the locks
 * of the run are then held up to the first busy one, any taken after it
 * are put back, and from there on each is taken one by one by
 * sap_lock_acquire, with waiting and breaking — so no lock is
 * ever held while an earlier one is waited for (the order that keeps two
 * commits from waiting on each other). Reconcile builds nothing ahead: it
 * takes each lock one by one.
 *
 * Releasing: the locks held in a directory are renamed into `u/` in its
 * private directory (one `mv -f ../<name>... u`), and only once there —
 * where nobody else can touch them — each is checked to be ours (our
 * directory, our record) and removed with the private directory.
 * Anything else that was at a name by then is given back. A kill at any
 * point leaves either the lock at its name (its owner dead: cleared by the
 * next commit or reconcile)
 * or inside the private directory (removed with it by reconcile).
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** sap_lock_prebuild, sap_lock_run, sap_lock_release_all (after SH_LOCKS). */
export const SH_LOCK_BATCH: string = sh`
SAP_LQN=0 SAP_LQD=
sap_lock_prebuild() {
  # The path locks of a commit built ahead in one mkdir per private
  # directory: k/<lock name> (LN_k) with its record (LB_k=1 once made)
  # and the record's info line (printf, a builtin), u/ for their release, and — in the
  # same run, to spare a process per directory — p/ and r/, where step 4
  # puts the sources' pins (sap_pin_batch) and the stages' second links
  # (sap_commit_refs). Best effort:
  # whatever is missing or failed here, sap_lock_acquire builds (or
  # reports) itself. Until renamed to their names they are temporaries in
  # the private directory, removed with it.
  # (the paths of each directory from sap_group, the operands from one
  # command substitution: both linear in the number of paths)
  sap_group q PD_ $SAP_M
  sap_lq_d=0
  while [ $sap_lq_d -lt $SAP_DN ]; do
    sap_lq_any=
    sap_get GqH_$sap_lq_d
    k=$SAP_V
    while [ -n "$k" ]; do
      sap_get R_name_$k
      sap_lq_n=$SAP_V
      sap_get PH_$k
      if sap_lock_pick "$sap_lq_n" "$SAP_V"; then sap_set LN_$k "$SAP_LN"; sap_lq_any=1; fi
      sap_get GqX_$k
      k=$SAP_V
    done
    if [ -n "$sap_lq_any" ] && sap_pmake $sap_lq_d 2>/dev/null && sap_pcd $sap_lq_d; then
      sap_lq_l=$(sap_get GqH_$sap_lq_d; k=$SAP_V
        while [ -n "$k" ]; do sap_get LN_$k; [ -z "$SAP_V" ] || { sap_out "./k/$SAP_V"; sap_out "./k/$SAP_V/$SAP_REC"; }; sap_get GqX_$k; k=$SAP_V; done)
      sap_lq_ifs=$IFS
      IFS=$SAP_NL
      set -- $sap_lq_l
      IFS=$sap_lq_ifs
      mkdir ./k ./u ./r ./p "$@" 2>/dev/null
      sap_get GqH_$sap_lq_d
      k=$SAP_V
      while [ -n "$k" ]; do
        sap_get LN_$k
        [ -n "$SAP_V" ] && [ -d "./k/$SAP_V/$SAP_REC" ] && sap_set LB_$k 1 && { printf '%s\n' "$SAP_OWNER" > "./k/$SAP_V/$SAP_REC/info"; } 2>/dev/null
        sap_get GqX_$k
        k=$SAP_V
      done
    fi
    sap_lq_d=$((sap_lq_d + 1))
  done
  SAP_ERR=
}
sap_lock_run() {
  # Take the queued run (LQ_0.. : paths in a row, in manifest order, whose
  # locks sap_lock_prebuild built in directory SAP_LQD's private directory)
  # with one mv; held in order up to the first that stayed (its name was
  # busy), any taken after that one put back; then the alternates of the
  # held ones, and the rest one by one (sap_lock_one: wait, break).
  [ $SAP_LQN -gt 0 ] || return 0
  sap_lr_n=$SAP_LQN sap_lr_d=$SAP_LQD sap_lr_first=0
  SAP_LQN=0
  if [ $sap_lr_n -gt 1 ] && sap_pcd $sap_lr_d; then
    set --
    sap_lr_j=0
    while [ $sap_lr_j -lt $sap_lr_n ]; do
      sap_get LQ_$sap_lr_j
      sap_get LN_$SAP_V
      set -- "$@" "./k/$SAP_V"
      sap_lr_j=$((sap_lr_j + 1))
    done
    sap_hook locks_built $sap_lr_d
    $SAP_MVM "$@" .. 2>/dev/null
    sap_lr_first= sap_lr_j=0
    while [ $sap_lr_j -lt $sap_lr_n ]; do
      sap_get LQ_$sap_lr_j
      sap_get LN_$SAP_V
      if [ -d "./k/$SAP_V" ]; then
        [ -n "$sap_lr_first" ] || sap_lr_first=$sap_lr_j
      elif [ -z "$sap_lr_first" ]; then
        sap_held_add $sap_lr_d "$SAP_V"
      elif $SAP_MV "../$SAP_V" "./k/$SAP_V" 2>/dev/null; then
        # held after a busy one: put back (taken again in order below)
        sap_lock_home "$SAP_V" "./k/$SAP_V" $sap_lr_d
      else
        # ours at its name, and it would not move: held after all
        sap_held_add $sap_lr_d "$SAP_V"
        sap_get LQ_$sap_lr_j
        sap_set LH_$SAP_V 1
      fi
      sap_lr_j=$((sap_lr_j + 1))
    done
    [ -n "$sap_lr_first" ] || sap_lr_first=$sap_lr_n
  fi
  sap_lr_j=0
  while [ $sap_lr_j -lt $sap_lr_first ]; do
    sap_get LQ_$sap_lr_j
    sap_lr_k=$SAP_V
    sap_get LC_$sap_lr_k
    SAP_LOCK_N=$SAP_V
    sap_lock_alternates $sap_lr_k $sap_lr_d $SAP_V
    sap_lock_verdict $sap_lr_k $sap_lr_d $?
    sap_lr_j=$((sap_lr_j + 1))
  done
  while [ $sap_lr_j -lt $sap_lr_n ]; do
    sap_get LQ_$sap_lr_j
    sap_lr_k=$SAP_V
    sap_get LH_$sap_lr_k
    if [ -n "$SAP_V" ]; then
      sap_get LC_$sap_lr_k
      SAP_LOCK_N=$SAP_V
      sap_lock_alternates $sap_lr_k $sap_lr_d $SAP_V
      sap_lock_verdict $sap_lr_k $sap_lr_d $?
    else
      sap_lock_one $sap_lr_k $sap_lr_d
    fi
    sap_lr_j=$((sap_lr_j + 1))
  done
}
sap_lock_release_all() {
  # Per private directory, one mv renames every lock held there into its
  # u/ (made here if sap_lock_prebuild did not); each is then checked
  # there. A name that is gone (broken by someone) is skipped.
  sap_group h H_d_ $SAP_HN
  sap_rl_d=0
  while [ $sap_rl_d -lt $SAP_DN ]; do
    sap_get GhH_$sap_rl_d
    [ -n "$SAP_V" ] || { sap_rl_d=$((sap_rl_d + 1)); continue; }
    sap_rl_l=$(sap_get GhH_$sap_rl_d; sap_rl_j=$SAP_V
      while [ -n "$sap_rl_j" ]; do sap_get H_l_$sap_rl_j; sap_out "../$SAP_V"; sap_get GhX_$sap_rl_j; sap_rl_j=$SAP_V; done)
    sap_rl_ifs=$IFS
    IFS=$SAP_NL
    set -- $sap_rl_l
    IFS=$sap_rl_ifs
    if [ $# -gt 0 ]; then
      if sap_pcd $sap_rl_d && { [ -d ./u ] || mkdir ./u 2>/dev/null; }; then
        $SAP_MVM "$@" ./u 2>/dev/null
        for sap_rl_l in "$@"; do
          sap_rl_l=$\{sap_rl_l#../}
          [ -e "./u/$sap_rl_l" ] || [ -L "./u/$sap_rl_l" ] || continue
          sap_hook lock_released "u/$sap_rl_l"
          sap_lock_home "$sap_rl_l" "./u/$sap_rl_l" $sap_rl_d
        done
      else
        SAP_CLEAN_FAIL=1
      fi
    fi
    sap_rl_d=$((sap_rl_d + 1))
  done
  SAP_HN=0
}
sap_lock_home() {
  # $1 a lock's name, $2 where it was just renamed to inside directory
  # $3's private directory: 0 it is the lock this program made (a directory
  # of ours holding our record); otherwise it is not ours (ours was broken
  # as stale and re-taken, or something was planted at the name) and goes
  # back to its name when that is free.
  [ -d "$2" ] && [ ! -L "$2" ] && [ -O "$2" ] && [ -d "$2/$SAP_REC" ] && [ ! -L "$2/$SAP_REC" ] && return 0
  sap_exists "../$1" || $SAP_MV "$2" "../$1" 2>/dev/null || sap_set PDIRTY_$3 1
  return 1
}
`;
