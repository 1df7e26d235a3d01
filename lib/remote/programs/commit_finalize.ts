/**
 * Steps 5–7 of the commit program (lib/remote/programs/commit_program.ts): finalize
 * with journal and backups, roll back on failure or interruption, clean up
 * from the EXIT trap. The state machine is described in commit_program.ts.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** Step 5 (finalize), 6 (rollback) and 7 (cleanup in the EXIT trap). */
export const SH_COMMIT_FINALIZE: string = sh`
sap_mkparents() {
  # Journal first ("C i q": file i's directory with q components after it
  # is being created by us; "N i q": it existed after all), so a crash
  # between the mkdir and the journal cannot leave a directory reconcile
  # does not know about.
  sap_b=$2 sap_r=$3 sap_nc=0
  while :; do
    case $sap_r in */*) ;; *) break ;; esac
    sap_c=$\{sap_r%%/*} sap_r=$\{sap_r#*/}
    sap_join "$sap_b" "$sap_c"
    sap_e=$SAP_J1
    sap_q=1 sap_t=$sap_r
    while :; do
      case $sap_t in */*) sap_q=$((sap_q + 1)) sap_t=$\{sap_t#*/} ;; *) break ;; esac
    done
    printf 'C %s %s\n' $1 $sap_q >&8 2>/dev/null
    if ( sap_cd "$sap_b" && umask "$SAP_UMASK" && mkdir "./$sap_c" ) 2>/dev/null; then
      sap_nc=$((sap_nc + 1))
      sap_set C_$1_$sap_nc "$sap_e"
      sap_set C_n_$1 $sap_nc
    else
      printf 'N %s %s\n' $1 $sap_q >&8 2>/dev/null
    fi
    sap_cd "$sap_e" || return 1
    sap_b=$PWD
  done
  SAP_MKD=$sap_b SAP_MKN=$sap_r
}
sap_rmdirs() {
  sap_get C_n_$1
  sap_nc=$\{SAP_V:-0}
  while [ "$sap_nc" -gt 0 ]; do
    sap_get C_$1_$sap_nc
    sap_p=$\{SAP_V%/*}
    [ -n "$sap_p" ] || sap_p=/
    sap_cd "$sap_p" && rmdir "./$\{SAP_V##*/}" 2>/dev/null
    sap_nc=$((sap_nc - 1))
  done
}
sap_place() {
  # $4 is the stage's name in its directory (S_dir, where step 1 put it,
  # an ancestor of or the final directory): it is linked by a path relative
  # to the final directory ("../" per level), so the link never goes
  # through a path that could have been swapped meanwhile.
  sap_pd=$2 sap_pr=$3
  case $sap_pr in
  */*)
    sap_mkparents $1 "$sap_pd" "$sap_pr" || { SAP_FAIL_DETAIL=mkdir; return 1; }
    sap_pd=$SAP_MKD sap_pr=$SAP_MKN ;;
  esac
  sap_set T_dir_$1 "$sap_pd"
  sap_set T_name_$1 "$sap_pr"
  sap_get S_dir_$1
  sap_up= sap_t=
  if [ "$sap_pd" != "$SAP_V" ]; then
    case $SAP_V in /) sap_t=$\{sap_pd#/} ;; *) case $sap_pd in "$SAP_V"/*) sap_t=$\{sap_pd#"$SAP_V"/} ;; esac ;; esac
    [ -n "$sap_t" ] || { SAP_FAIL_DETAIL=link; return 1; }
    sap_up=../
    while :; do
      case $sap_t in */*) sap_up=../$sap_up sap_t=$\{sap_t#*/} ;; *) break ;; esac
    done
  fi
  if ! { sap_cd "$sap_pd" && sap_link "./$sap_up$4" "./$sap_pr"; } 2>/dev/null; then
    if sap_exists "$sap_pd" "$sap_pr"; then SAP_FAIL_DETAIL=exists; else SAP_FAIL_DETAIL=link; fi
    return 1
  fi
  sap_set L_$1 1
  printf 'L %s\n' $1 >&8 2>/dev/null
  # the stage (now a second name of the new file) goes in step 7
  return 0
}
sap_aside() {
  sap_set K_dir_$1 "$2"
  { sap_cd "$2" && [ -f "./$3" ] && [ ! -L "./$3" ] && mv -f "./$3" "./$4"; } 2>/dev/null
}
sap_finalize_one() {
  # Runs in the program's own shell (no subshells): every process started
  # here widens the window in which an external writer can be lost.
  SAP_FAIL_DETAIL=
  sap_get F_op_$1
  sap_op=$SAP_V
  sap_get F_src_$1
  sap_get R_dir_$SAP_V
  sap_sd=$SAP_V
  sap_get F_src_$1
  sap_get R_name_$SAP_V
  sap_sn=$SAP_V
  sap_st=.sap-$SAP_OP-$1.stage
  sap_bk=.sap-$SAP_OP-$1.bak
  case $sap_op in
  update)
    # the backup was linked before the content re-check (sap_commit_backups)
    if ! { sap_cd "$sap_sd" && mv -f "./$sap_st" "./$sap_sn"; } 2>/dev/null; then
      SAP_FAIL_DETAIL=rename
      return 1
    fi
    if [ -d "./$sap_sn" ] && [ -e "./$sap_sn/$sap_st" ]; then
      mv "./$sap_sn/$sap_st" "./$sap_st" 2>/dev/null
      SAP_FAIL_DETAIL=not_a_file
      return 1
    fi ;;
  add)
    sap_place $1 "$sap_sd" "$sap_sn" "$sap_st" || return 1 ;;
  delete)
    sap_aside $1 "$sap_sd" "$sap_sn" "$sap_bk" || { SAP_FAIL_DETAIL=rename; return 1; } ;;
  move)
    sap_get F_dst_$1
    sap_kd=$SAP_V
    sap_get R_dir_$sap_kd
    sap_dd=$SAP_V
    sap_get R_name_$sap_kd
    sap_place $1 "$sap_dd" "$SAP_V" "$sap_st" || return 1
    sap_aside $1 "$sap_sd" "$sap_sn" "$sap_bk" || { SAP_FAIL_DETAIL=rename; return 1; } ;;
  esac
  return 0
}
sap_commit_journal() {
  # Created before the content re-check, so step 5 starts without a
  # process, and opened once on fd 8 from inside the verified directory:
  # every journal line goes through that descriptor.
  SAP_J=$SAP_W/.sap-$SAP_OP.journal
  if ! { sap_cd "$SAP_W" && ( set -C && : > "./.sap-$SAP_OP.journal" ); } 2>/dev/null; then
    SAP_J=
    sap_write_fail "$SAP_WK" "$SAP_W" journal
  fi
  { command exec 8>> "./.sap-$SAP_OP.journal"; } 2>/dev/null || sap_write_fail "$SAP_WK" "$SAP_W" journal
}
sap_commit_finalize() {
  SAP_PHASE=5
  sap_out "STEP 5"
  i=0
  while [ $i -lt $SAP_N ]; do
    if ! printf 'B %s\n' $i >&8 2>/dev/null; then
      sap_out "FAILED $i journal"
      exit 0
    fi
    SAP_BEGUN=$i
    sap_hook before_finalize $i
    if ! sap_finalize_one $i; then
      sap_out "FAILED $i $SAP_FAIL_DETAIL"
      exit 0
    fi
    sap_out "FINAL $i"
    sap_hook after_finalize $i
    i=$((i + 1))
  done
  printf 'D\n' >&8 2>/dev/null
  SAP_DONE=1 SAP_STATUS=ok
  sap_out "DONE"
  sap_hook done
}
sap_commit_undo_load() {
  sap_undo_fields $1
  if [ "$U_op" = add ]; then
    sap_get T_dir_$1
    U_dd=$SAP_V
    sap_get T_name_$1
    U_dn=$SAP_V
    return 0
  fi
  sap_get R_dir_$sap_k
  U_sd=$SAP_V
  sap_get R_name_$sap_k
  U_sn=$SAP_V
  if [ "$U_op" = move ]; then
    sap_get T_dir_$1
    U_dd=$SAP_V
    sap_get T_name_$1
    U_dn=$SAP_V
  fi
}
sap_report_states() {
  k=0
  while [ $k -lt $SAP_M ]; do
    sap_get P_$k
    if sap_resolve "$SAP_V" || [ "$RK" = symlink ]; then
      if [ "$RX" = 0 ]; then sap_out "STATE $k missing -"
      else sap_state "$RP" "$RN"; sap_out "STATE $k $PS_KIND $PS_SHA"; fi
    else
      sap_out "STATE $k unknown -"
    fi
    k=$((k + 1))
  done
}
sap_commit_rollback() {
  SAP_PHASE=6
  sap_out "STEP 6"
  sap_uf=0
  j=$SAP_BEGUN
  while [ "$j" -ge 0 ]; do
    sap_hook before_undo $j
    sap_commit_undo_load $j
    sap_undo
    case $? in
    0) sap_out "UNDO $j ok" ;;
    2) sap_out "UNDO $j diverged"; sap_uf=1 ;;
    *) sap_out "UNDO $j failed"; sap_uf=1 ;;
    esac
    sap_rmdirs $j
    j=$((j - 1))
  done
  if [ $sap_uf = 0 ]; then SAP_STATUS=rolled_back; return 0; fi
  SAP_STATUS=partial
  sap_report_states
}
sap_commit_cleanup() {
  # Stages, pins, backups and blob (one rm per directory, each run inside its
  # directory after sap_cd: a directory swapped for a symlink meanwhile is
  # left alone and reported), then the journal (it must never outlive what
  # it describes), then the locks.
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_get S_made_$i
    if [ -n "$SAP_V" ]; then
      sap_get S_dir_$i
      sap_clean_add "$SAP_V" ".sap-$SAP_OP-$i.stage"
      sap_clean_add "$SAP_V" ".sap-$SAP_OP-$i.d"
    fi
    sap_get PIN_$i
    [ -n "$SAP_V" ] && sap_clean_add "$SAP_V" ".sap-$SAP_OP-$i-src.d"
    sap_get K_dir_$i
    if [ -n "$SAP_V" ] && [ "$SAP_STATUS" != partial ]; then
      sap_clean_add "$SAP_V" ".sap-$SAP_OP-$i.bak"
    fi
    i=$((i + 1))
  done
  [ -n "$SAP_BLOB" ] && sap_clean_add "$SAP_W" ".sap-$SAP_OP.blob"
  sap_clean_run
  if [ -n "$SAP_J" ] && [ "$SAP_STATUS" != partial ]; then sap_rm_path "$SAP_J" || SAP_CLEAN_FAIL=1; fi
  sap_lock_release_all
  [ -z "$SAP_CLEAN_FAIL" ] || sap_out "WARN cleanup_incomplete - -"
}
sap_commit_exit() {
  trap '' HUP INT TERM
  [ -n "$SAP_SIG" ] && sap_out "INTERRUPTED $SAP_SIG"
  if [ "$SAP_PHASE" = 5 ] && [ -z "$SAP_DONE" ]; then sap_commit_rollback; fi
  [ -n "$SAP_STATUS" ] || SAP_STATUS=interrupted
  sap_commit_cleanup
  sap_out "SAP-END $SAP_STATUS"
}
`;
