/**
 * Steps 5–7 of the commit program (lib/remote/programs/commit_program.ts): finalize
 * with journal and backups, roll back on failure or interruption, clean up
 * from the EXIT trap. The state machine is described in commit_program.ts.
 *
 * Every change of a user-visible name happens from inside a private
 * directory (sh_private.ts), as one of:
 * - `mv -T ./s<i> ../name`  update: the stage replaces the name (rename(2)
 *   onto it: a symlink planted there is replaced, never followed; a
 *   directory makes it fail);
 * - `link ./s<i> ../name`   add, move destination: created only if the
 *   name is free (link(2) never follows, never replaces);
 * - `mv -T ../name ./d<i>`  delete, move source: the file leaves for the
 *   private directory, which is its backup.
 * Right before, the name must still be the pinned source (`-ef ./p/name`,
 * not a symlink); right after, the name must be the new inode (`-ef`), or
 * the one moved aside must be the pinned one, and the private directory's
 * parent must still be the directory at its path. Otherwise the file
 * counts as failed (`changed`: the rename was not done; `replaced`:
 * someone else changed the name right after), and step 6 undoes what was
 * done, judging by the disk.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** Step 5 (finalize), 6 (rollback) and 7 (cleanup in the EXIT trap). */
export const SH_COMMIT_FINALIZE: string = sh`
# Never "{ ( … ) > file; } 2>/dev/null": dash 0.5.12 drops the redirection
# of a subshell that ends a redirected brace group; redirect the subshell
# itself.
sap_uen() { sap_pcd "$1"; }
sap_mkparents() {
  # $1 file index, $2 the deepest existing directory (entered, verified),
  # $3 the rest of the path. Journal first ("C i q": file i's directory
  # with q components after it is being created by us; "N i q": it existed
  # after all), so a crash between the mkdir and the journal cannot leave a
  # directory reconcile does not know about. Created 0700 (the umask is
  # 077): until step 5 ends only we can write them, so nobody can move them
  # or swap their entries; sap_widen gives them their real mode before the
  # commit point. Ends inside the final directory: SAP_MKD its path,
  # SAP_MKN the file's name.
  sap_mk_b=$2 sap_mk_r=$3 sap_mk_nc=0
  while :; do
    case $sap_mk_r in */*) ;; *) break ;; esac
    sap_mk_c=$\{sap_mk_r%%/*} sap_mk_r=$\{sap_mk_r#*/}
    sap_join "$sap_mk_b" "$sap_mk_c"
    sap_mk_e=$SAP_J1
    sap_mk_q=1 sap_mk_t=$sap_mk_r
    while :; do
      case $sap_mk_t in */*) sap_mk_q=$((sap_mk_q + 1)) sap_mk_t=$\{sap_mk_t#*/} ;; *) break ;; esac
    done
    printf 'C %s %s\n' $1 $sap_mk_q >&8 2>/dev/null
    if SAP_ERR=$(mkdir "./$sap_mk_c" 2>&1); then
      sap_mk_nc=$((sap_mk_nc + 1))
      sap_set C_$1_$sap_mk_nc "$sap_mk_e"
      sap_set C_n_$1 $sap_mk_nc
      # renamed away before we got in: an empty directory of ours is left
      # under a name we do not know
      sap_cd "$sap_mk_e" && [ -O . ] || { SAP_CLEAN_FAIL=1; return 1; }
    else
      printf 'N %s %s\n' $1 $sap_mk_q >&8 2>/dev/null
      sap_cd "$sap_mk_e" || return 1
    fi
    sap_mk_b=$PWD
  done
  SAP_MKD=$sap_mk_b SAP_MKN=$sap_mk_r
}
sap_widen() {
  # The directories created for the files, from 0700 to the mode the
  # umask gives (chmod of "." from inside each: never through a name);
  # symbolic "+" modes keep a setgid bit the parent passed on.
  sap_wd_m=$(( 0777 & ~0$SAP_UMASK )) sap_wd_s=
  for sap_wd_c in u:6 g:3 o:0; do
    sap_wd_b=$(( sap_wd_m >> $\{sap_wd_c#*:} & 7 )) sap_wd_p=
    [ $(( sap_wd_b & 4 )) = 0 ] || sap_wd_p=r
    [ $(( sap_wd_b & 2 )) = 0 ] || sap_wd_p=$\{sap_wd_p}w
    [ $(( sap_wd_b & 1 )) = 0 ] || sap_wd_p=$\{sap_wd_p}x
    [ -z "$sap_wd_p" ] || sap_wd_s=$sap_wd_s,$\{sap_wd_c%%:*}+$sap_wd_p
  done
  sap_wd_s=$\{sap_wd_s#,}
  [ -n "$sap_wd_s" ] || return 0
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_get C_n_$i
    sap_wd_n=$\{SAP_V:-0}
    while [ "$sap_wd_n" -gt 0 ]; do
      sap_get C_$\{i}_$sap_wd_n
      sap_cd "$SAP_V" && [ -O . ] && chmod "$sap_wd_s" . 2>/dev/null
      sap_wd_n=$((sap_wd_n - 1))
    done
    i=$((i + 1))
  done
}
sap_rmdirs() {
  sap_get C_n_$1
  sap_rd_nc=$\{SAP_V:-0}
  while [ "$sap_rd_nc" -gt 0 ]; do
    sap_get C_$1_$sap_rd_nc
    sap_rd_p=$\{SAP_V%/*}
    [ -n "$sap_rd_p" ] || sap_rd_p=/
    sap_cd "$sap_rd_p" && rmdir "./$\{SAP_V##*/}" 2>/dev/null
    sap_rd_nc=$((sap_rd_nc - 1))
  done
}
sap_src_still() {
  # $1 file index, $2 the source's name; inside its private directory:
  # the name is still the file the content check looked at
  sap_get PIN_$1
  if [ "$SAP_V" = o ]; then [ ! -L "../$2" ] && [ "../$2" -ef "./p/$2" ]
  else [ -f "../$2" ] && [ ! -L "../$2" ]; fi
}
sap_place() {
  # $1 file index: the stage gets its name (add, move destination) without
  # replacing anything.
  sap_get S_k_$1
  sap_pl_k=$SAP_V
  sap_get S_d_$1
  sap_pl_d=$SAP_V
  sap_get R_name_$sap_pl_k
  sap_pl_n=$SAP_V
  sap_get NP_$1
  if [ -n "$SAP_V" ]; then sap_place_new $1 $sap_pl_d "$sap_pl_n"; return; fi
  sap_pcd $sap_pl_d || { SAP_FAIL_DETAIL=private; return 1; }
  if ! SAP_ERR=$($SAP_LINK ./s$1 "../$sap_pl_n" 2>&1); then
    if sap_exists "../$sap_pl_n"; then SAP_FAIL_DETAIL=exists; else SAP_FAIL_DETAIL=link; fi
    return 1
  fi
  sap_set L_$1 1
  printf 'L %s\n' $1 >&8 2>/dev/null
  [ ! -L "../$sap_pl_n" ] && [ "../$sap_pl_n" -ef ./s$1 ] && sap_dir_still $sap_pl_d || { SAP_FAIL_DETAIL=replaced; return 1; }
}
sap_place_new() {
  # $1 file index, $2 the deepest existing directory's index, $3 the rest
  # of the path: create the missing directories (only we can write them
  # until the end of step 5), then, inside the last one, a copy of the
  # stage (.sap-<op>-a<i>, with the stage's mode and owner) linked to its
  # name.
  sap_get DIR_$2
  sap_cd "$SAP_V" || { SAP_FAIL_DETAIL=private; return 1; }
  sap_mkparents $1 "$SAP_V" "$3" || { SAP_FAIL_DETAIL=mkdir; return 1; }
  sap_set T_dir_$1 "$SAP_MKD"
  sap_set T_name_$1 "$SAP_MKN"
  sap_pn_a=./.sap-$SAP_OP-a$1
  set -C
  ( sap_pcd $2 && cat ./s$1 ) > "$sap_pn_a" 2>/dev/null
  sap_pn_rc=$?
  set +C
  sap_set TA_$1 1
  [ $sap_pn_rc = 0 ] || { SAP_FAIL_DETAIL=link; return 1; }
  sap_get WO_$1
  sap_pn_m=$\{SAP_V:-$SAP_ADDMODE}
  sap_get WT_$1
  if [ -n "$SAP_V" ]; then
    sap_get WU_$1
    sap_pn_u=$SAP_V
    sap_get WG_$1
    chown "$sap_pn_u:$SAP_V" "$sap_pn_a" 2>/dev/null || chgrp "$SAP_V" "$sap_pn_a" 2>/dev/null
  fi
  chmod "$sap_pn_m" "$sap_pn_a" 2>/dev/null
  # written only now: its data reaches the disk before its name can
  sap_sync "$sap_pn_a"
  if ! sap_link "$sap_pn_a" "./$SAP_MKN" 2>/dev/null; then
    if sap_exists "./$SAP_MKN"; then SAP_FAIL_DETAIL=exists; else SAP_FAIL_DETAIL=link; fi
    return 1
  fi
  sap_set L_$1 1
  printf 'L %s\n' $1 >&8 2>/dev/null
  [ ! -L "./$SAP_MKN" ] && [ "./$SAP_MKN" -ef "$sap_pn_a" ] && cd -P . 2>/dev/null && [ "$PWD" = "$SAP_MKD" ] && return 0
  # The directory was renamed away (or the name changed) right after: still
  # inside it, take the file and its copy back out, then the directories we
  # made under the names they have now, deepest first.
  SAP_FAIL_DETAIL=replaced
  sap_pn_x=./.sap-$SAP_OP-x$1
  if [ ! -L "./$SAP_MKN" ] && [ "./$SAP_MKN" -ef "$sap_pn_a" ] && $SAP_MV "./$SAP_MKN" "$sap_pn_x" 2>/dev/null; then
    if [ "$sap_pn_x" -ef "$sap_pn_a" ]; then
      rm -f "$sap_pn_x" "$sap_pn_a" 2>/dev/null
      sap_set L_$1 ""
      sap_set TA_$1 ""
      sap_get C_n_$1
      sap_pn_n=$\{SAP_V:-0}
      while [ "$sap_pn_n" -gt 0 ] && cd -P . 2>/dev/null; do
        sap_pn_b=$\{PWD##*/}
        cd -P .. 2>/dev/null && rmdir "./$sap_pn_b" 2>/dev/null || break
        sap_pn_n=$((sap_pn_n - 1))
      done
      [ "$sap_pn_n" = 0 ] || SAP_CLEAN_FAIL=1
      sap_set C_n_$1 0
      return 1
    fi
    sap_exists "./$SAP_MKN" || $SAP_MV "$sap_pn_x" "./$SAP_MKN" 2>/dev/null
  fi
  return 1
}
sap_aside() {
  # $1 file index: the source leaves for the private directory (d<i>),
  # which keeps it as the backup until step 7.
  sap_get F_src_$1
  sap_as_k=$SAP_V
  sap_get O_d_$1
  sap_as_d=$SAP_V
  sap_get R_name_$sap_as_k
  sap_as_n=$SAP_V
  sap_pcd $sap_as_d || { SAP_FAIL_DETAIL=private; return 1; }
  sap_src_still $1 "$sap_as_n" || { SAP_FAIL_DETAIL=changed; return 1; }
  SAP_ERR=$($SAP_MV "../$sap_as_n" ./d$1 2>&1) || { SAP_FAIL_DETAIL=rename; return 1; }
  sap_set A_$1 1
  sap_get PIN_$1
  if [ "$SAP_V" = o ]; then sap_as_ok=0; [ ! -L ./d$1 ] && [ ./d$1 -ef "./p/$sap_as_n" ] && sap_as_ok=1
  else sap_as_ok=0; [ -f ./d$1 ] && [ ! -L ./d$1 ] && sap_as_ok=1; fi
  if [ $sap_as_ok = 0 ]; then
    # swapped between the look and the rename: give it back, not ours
    if sap_exists "../$sap_as_n" || ! $SAP_MV ./d$1 "../$sap_as_n" 2>/dev/null; then sap_set PDIRTY_$sap_as_d 1
    else sap_set A_$1 ""; fi
    SAP_FAIL_DETAIL=changed
    return 1
  fi
  sap_dir_still $sap_as_d || { SAP_FAIL_DETAIL=replaced; return 1; }
}
sap_finalize_one() {
  # Runs in the program's own shell (no subshells): every process started
  # here widens the window in which an external writer can be lost.
  SAP_FAIL_DETAIL=
  sap_get F_op_$1
  case $SAP_V in
  update)
    sap_get F_src_$1
    sap_fo_k=$SAP_V
    sap_get O_d_$1
    sap_fo_d=$SAP_V
    sap_get R_name_$sap_fo_k
    sap_fo_n=$SAP_V
    sap_pcd $sap_fo_d || { SAP_FAIL_DETAIL=private; return 1; }
    sap_src_still $1 "$sap_fo_n" || { SAP_FAIL_DETAIL=changed; return 1; }
    SAP_ERR=$($SAP_MV ./s$1 "../$sap_fo_n" 2>&1) || { SAP_FAIL_DETAIL=rename; return 1; }
    sap_set MV_$1 1
    [ ! -L "../$sap_fo_n" ] && [ "../$sap_fo_n" -ef ./r/s$1 ] && sap_dir_still $sap_fo_d || { SAP_FAIL_DETAIL=replaced; return 1; } ;;
  add)
    sap_place $1 || return 1 ;;
  delete)
    sap_aside $1 || return 1 ;;
  move)
    sap_place $1 || return 1
    sap_aside $1 || return 1 ;;
  esac
  return 0
}
sap_commit_journal() {
  # Created before the content re-check, so step 5 starts without a
  # process, and opened once on fd 8 from inside the work directory's
  # private directory: every journal line goes through that descriptor.
  sap_pmake $SAP_W || sap_write_fail "$SAP_WK" $SAP_W journal
  sap_pcd $SAP_W || sap_write_fail "$SAP_WK" $SAP_W journal
  SAP_ERR=
  set -C
  { : > ./j; } 2>/dev/null
  sap_cj_rc=$?
  set +C
  [ $sap_cj_rc = 0 ] || sap_write_fail "$SAP_WK" $SAP_W journal
  SAP_J=1
  { command exec 8>> ./j; } 2>/dev/null || sap_write_fail "$SAP_WK" $SAP_W journal
}
sap_finalize_why() {
  # After file $1 failed in step 5 ($2: what failed): why, when it was a
  # write the file system or the permissions refused — "WHY i class note"
  # (note sticky: the directory has the sticky bit and the file is someone
  # else's: only they, the directory's owner or root may replace it), and
  # SPACE for no_space. The rollback follows; processes are fine here.
  case $2 in rename|link|mkdir|journal) ;; *) return 0 ;; esac
  # the directory it happened in: the journal's; a rename's source
  # directory (an update replaces its source, a delete or move moves it
  # aside); a link's or mkdir's destination directory
  if [ "$2" = journal ]; then sap_fw_d=$SAP_W
  elif [ "$2" = rename ]; then sap_get O_d_$1; sap_fw_d=$SAP_V
  else sap_get S_d_$1; sap_fw_d=$SAP_V; fi
  [ -n "$sap_fw_d" ] || return 0
  sap_get DIR_$sap_fw_d
  sap_fw_p=$SAP_V
  sap_diag "$sap_fw_p"
  [ -n "$SAP_EC" ] || { sap_err_keep "$2"; return 0; }
  sap_fw_n=-
  [ "$SAP_EC" = permission_denied ] && [ -k "$sap_fw_p" ] && sap_fw_n=sticky
  sap_out "WHY $1 $SAP_EC $sap_fw_n"
  if [ "$SAP_EC" = no_space ]; then
    [ -n "$SAP_FREE" ] || sap_free "$sap_fw_p"
    sap_get F_src_$1
    sap_out "SPACE $SAP_V $\{SAP_FREE:--}"
  fi
  sap_err_keep "$2"
}
sap_commit_finalize() {
  # the stages' background flush (step 1) done before any name points at them
  sap_sync_wait
  SAP_PHASE=5
  sap_out "STEP 5"
  i=0
  while [ $i -lt $SAP_N ]; do
    if ! printf 'B %s\n' $i >&8 2>/dev/null; then
      sap_out "FAILED $i journal"
      SAP_ERR=
      sap_finalize_why $i journal
      exit 0
    fi
    SAP_BEGUN=$i
    sap_hook before_finalize $i
    if ! sap_finalize_one $i; then
      sap_out "FAILED $i $SAP_FAIL_DETAIL"
      sap_finalize_why $i "$SAP_FAIL_DETAIL"
      exit 0
    fi
    sap_out "FINAL $i"
    sap_hook after_finalize $i
    i=$((i + 1))
  done
  sap_widen
  # durability, part 2 (sh_durable.ts): the renamed names on stable
  # storage before the commit point
  sap_sync_dirs
  sap_out "DURABLE $SAP_DURABLE"
  printf 'D\n' >&8 2>/dev/null
  SAP_DONE=1 SAP_STATUS=ok
  sap_out "DONE"
  sap_hook done
}
sap_commit_undo_load() {
  sap_undo_fields $1
  U_known=1
  sap_get MV_$1
  U_mv=$SAP_V
  sap_get A_$1
  U_aside=$SAP_V
  sap_get PIN_$1
  U_pin=$SAP_V
  sap_get O_d_$1
  U_oq=$SAP_V
  sap_get S_d_$1
  U_sq=$SAP_V
  if [ "$U_op" != add ]; then
    sap_get R_name_$sap_k
    U_sn=$SAP_V
    sap_get R_dir_$sap_k
    U_sdir=$SAP_V
  fi
  case $U_op in
  add|move)
    sap_get S_k_$1
    sap_get R_name_$SAP_V
    U_dn=$SAP_V
    sap_get NP_$1
    if [ -n "$SAP_V" ]; then
      sap_get T_dir_$1
      U_fd=$SAP_V
      sap_get T_name_$1
      U_dn=$SAP_V
      [ -n "$U_fd" ] || U_dn=
    fi ;;
  esac
}
sap_report_states() {
  k=0
  while [ $k -lt $SAP_M ]; do
    sap_path_state $k
    sap_out "STATE $k $PS_KIND $PS_SHA"
    k=$((k + 1))
  done
}
sap_commit_rollback() {
  SAP_PHASE=6
  sap_out "STEP 6"
  sap_rb_f=0
  j=$SAP_BEGUN
  while [ "$j" -ge 0 ]; do
    sap_hook before_undo $j
    sap_commit_undo_load $j
    sap_undo
    case $? in
    0) sap_out "UNDO $j ok" ;;
    2) sap_out "UNDO $j diverged"; sap_rb_f=1 ;;
    *) sap_out "UNDO $j failed"; sap_rb_f=1 ;;
    esac
    sap_rmdirs $j
    j=$((j - 1))
  done
  if [ $sap_rb_f = 0 ]; then SAP_STATUS=rolled_back; return 0; fi
  SAP_STATUS=partial
  sap_report_states
}
sap_commit_cleanup() {
  # The copies of stages in created directories, then the locks (renamed
  # into the private directories), then the private directories with
  # everything in them, the journal included. A crash part-way leaves a
  # journal with its commit point (reconcile only clears leftovers), or one
  # of a rollback that completed (reconcile's undo, judging by the disk,
  # finds nothing to do). After a partial rollback everything stays for
  # reconcile but the locks.
  exec 8>&- 2>/dev/null
  if [ "$SAP_STATUS" = partial ]; then
    sap_lock_release_all
    [ -z "$SAP_CLEAN_FAIL" ] || sap_out "WARN cleanup_incomplete - -"
    return 0
  fi
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_get TA_$i
    if [ -n "$SAP_V" ]; then
      sap_get T_dir_$i
      { sap_cd "$SAP_V" && rm -f "./.sap-$SAP_OP-a$i"; } 2>/dev/null || SAP_CLEAN_FAIL=1
    fi
    i=$((i + 1))
  done
  sap_lock_release_all
  sap_cl_n=0
  while [ $sap_cl_n -lt $SAP_DN ]; do
    sap_get PDIRTY_$sap_cl_n
    if [ -n "$SAP_V" ]; then SAP_CLEAN_FAIL=1; else sap_pclean $sap_cl_n; fi
    sap_cl_n=$((sap_cl_n + 1))
  done
  [ -z "$SAP_CLEAN_FAIL" ] || sap_out "WARN cleanup_incomplete - -"
}
sap_commit_exit() {
  trap '' HUP INT TERM USR1
  # a trap that ended the program inside "IFS= read" (a signal while
  # reading stdin) leaves IFS empty under bash: every word split below needs it
  IFS=$SAP_IFS
  [ -n "$SAP_SIG" ] && sap_out "INTERRUPTED $SAP_SIG"
  if [ "$SAP_PHASE" = 5 ] && [ -z "$SAP_DONE" ]; then sap_commit_rollback; fi
  [ -n "$SAP_STATUS" ] || SAP_STATUS=interrupted
  # a stage hash still running (the program ends before its verdict)
  [ -z "$SAP_HASH_PID" ] || { kill "$SAP_HASH_PID" 2>/dev/null; wait "$SAP_HASH_PID" 2>/dev/null; }
  sap_timed_stop
  sap_commit_cleanup
  sap_out "SAP-END $SAP_STATUS"
}
`;
