/**
 * The commit program: SPEC §7's seven steps in one exec.
 *
 * Arguments: `<root> <operation id> <lock wait ms> <stale lock s>
 * <create parents 0|1>`. Stdin: the manifest (lib/remote/sh_manifest.ts)
 * then all new contents concatenated.
 *
 * Files this program creates (all `.sap-` names are reserved: patches may
 * not touch them), each within NAME_MAX whatever the file is called:
 * - `.sap-<op>.blob`      all contents as received, in the work directory
 *                         (the first file's existing directory); removed
 *                         right after the stages are cut from it;
 * - `.sap-<op>-<i>.stage` file i's new content, next to its destination (or
 *                         in the deepest existing ancestor when parents are
 *                         missing: the final `link` works across those
 *                         directories, which share a filesystem);
 * - `.sap-<op>-<i>.bak`   file i's old content (hard link, else a copy) in
 *                         its directory;
 * - `.sap-<op>.journal`   the finalize journal in the work directory;
 * - `.sap-lock-…`         locks (lib/remote/sh_locks.ts).
 *
 * State machine (what a crash leaves, and what reconcile does with it):
 * - steps 1–4 (no journal): stages, blob, locks may remain, no file was
 *   touched → reconcile removes them; every file is `not_applied`.
 * - step 5: the journal exists. Before the first change of file i the line
 *   `B i` is appended; an Add / Move destination appends `L i` right after
 *   its no-replace link. Per op:
 *     update  link n → bak, then rename stage → n
 *     add     mkdir missing parents, link stage → n (fails if n exists), rm stage
 *     delete  rename n → bak (the backup is now the only copy)
 *     move    as add at the destination, then rename source → bak
 *   A crash anywhere here leaves a journal without `D`: reconcile takes the
 *   locks (adopting this operation's own dead ones) and undoes every begun
 *   file in reverse order with sap_undo, which judges by the disk (so a
 *   deleted file's backup is put back when its name is still free).
 * - commit point: `D` appended once every file is finalized. A crash after
 *   it: reconcile only removes leftovers (backups, locks, journal).
 * - step 6 (a finalize failure, or HUP/INT/TERM during step 5): undo the
 *   begun files in reverse order right here; all undone → `rolled_back`,
 *   journal and backups removed; otherwise `partial` with the real state of
 *   every path, keeping journal and backups so reconcile can finish later.
 * - step 7 (always, from the EXIT trap): remove stages and blob, backups
 *   (unless partial), release locks, remove the journal last.
 *
 * Stdout protocol (lib/remote/protocol.ts parses it strictly):
 * `SAP-BEGIN commit`, `STEP n`, `REJECT k code depth`, `CONFLICT k kind sha|-`,
 * `LOCKED k age`, `FAIL code k|- detail`, `WARN code k|- detail`,
 * `META i mode_ok owner_ok`, `FINAL i`, `FAILED i detail`, `DONE`,
 * `UNDO i ok|failed|diverged`, `STATE k kind sha|-`, `INTERRUPTED signal`,
 * `UNSUPPORTED tool`, `ROOT reason`, `BAD_INPUT what`, and last
 * `SAP-END ok|refused|locked|failed|rolled_back|partial|interrupted|unsupported|root|bad_input`.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** Steps 1–4: stages, locks, re-check, metadata. */
const SH_COMMIT_PREPARE: string = sh`
sap_extract() {
  [ "$3" -gt 0 ] || return 0
  dd if="$1" bs=4096 skip=$(( $2 / 4096 )) 2>/dev/null |
    tail -c +$(( $2 % 4096 + 1 )) 2>/dev/null | head -c "$3"
}
sap_write_fail() {
  if [ -w "$2" ]; then sap_out "FAIL remote_error $1 $3"; else sap_out "FAIL permission_denied $1 $3"; fi
  SAP_STATUS=failed
  exit 0
}
sap_commit_stage() {
  SAP_PHASE=1
  sap_out "STEP 1"
  sap_bad=0 sap_content=0 i=0
  while [ $i -lt $SAP_N ]; do
    sap_get F_op_$i
    sap_op=$SAP_V
    if [ "$sap_op" = move ]; then sap_get F_dst_$i; else sap_get F_src_$i; fi
    sap_k=$SAP_V
    sap_get P_$sap_k
    if sap_resolve "$SAP_V"; then
      [ -n "$SAP_W" ] || { SAP_W=$RP; SAP_WK=$sap_k; }
      if [ "$sap_op" != delete ]; then sap_set S_dir_$i "$RP"; sap_set S_k_$i $sap_k; sap_content=1; fi
    else
      sap_refusal $sap_k
      sap_bad=1
    fi
    i=$((i + 1))
  done
  if [ $sap_bad = 1 ]; then SAP_STATUS=refused; exit 0; fi
  [ $sap_content = 1 ] || return 0
  SAP_BLOB=$SAP_W/.sap-$SAP_OP.blob
  ( sap_cd "$SAP_W" && set -C && cat > "./.sap-$SAP_OP.blob" ) 2>/dev/null ||
    sap_write_fail "$SAP_WK" "$SAP_W" blob
  if ! sap_stat "$SAP_BLOB" || [ "$ST_SIZE" != "$SAP_TOTAL" ]; then
    sap_out "FAIL remote_error - truncated"
    SAP_STATUS=failed
    exit 0
  fi
  set --
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_get S_dir_$i
    if [ -n "$SAP_V" ]; then
      sap_d=$SAP_V
      sap_get F_off_$i
      sap_off=$SAP_V
      sap_get F_len_$i
      sap_len=$SAP_V
      sap_get S_k_$i
      sap_k=$SAP_V
      sap_st=.sap-$SAP_OP-$i.stage
      sap_set S_made_$i 1
      if [ "$sap_off" = 0 ] && [ "$sap_len" = "$SAP_TOTAL" ] && [ "$sap_d" = "$SAP_W" ]; then
        # the only content: the blob itself becomes the stage (same directory)
        ( sap_cd "$sap_d" && [ ! -e "./$sap_st" ] && mv "./.sap-$SAP_OP.blob" "./$sap_st" ) 2>/dev/null ||
          sap_write_fail $sap_k "$sap_d" stage
        SAP_BLOB=
      else
        ( sap_cd "$sap_d" && set -C && sap_extract "$SAP_BLOB" "$sap_off" "$sap_len" > "./$sap_st" ) 2>/dev/null ||
          sap_write_fail $sap_k "$sap_d" stage
      fi
      sap_join "$sap_d" "$sap_st"
      set -- "$@" "$SAP_J1"
      sap_set SC_$# $i
    fi
    i=$((i + 1))
  done
  [ -z "$SAP_BLOB" ] || rm -f "$SAP_BLOB" 2>/dev/null
  SAP_BLOB=
  sap_sha_list "$@" || sap_sha_each "$@"
  sap_j=0
  while [ $sap_j -lt $# ]; do
    sap_j=$((sap_j + 1))
    sap_get SC_$sap_j
    sap_i=$SAP_V
    sap_get SHA_$sap_j
    sap_h=$SAP_V
    sap_get F_new_$sap_i
    if [ "$sap_h" != "$SAP_V" ]; then
      sap_get S_k_$sap_i
      sap_out "FAIL remote_error $SAP_V stage_sha"
      SAP_STATUS=failed
      exit 0
    fi
  done
}
sap_check_path() {
  sap_get P_$1
  if ! sap_resolve "$SAP_V"; then sap_refusal $1; return 1; fi
  sap_set R_dir_$1 "$RP"
  sap_set R_name_$1 "$RN"
  sap_join "$RP" "$RN"
  if [ "$2" = - ]; then
    case $RK in
    missing)
      if [ "$RX" = 0 ] && [ "$SAP_MKP" != 1 ]; then sap_out "REJECT $1 not_found 0"; return 1; fi
      return 0 ;;
    file)
      if sap_sha "$SAP_J1"; then sap_out "CONFLICT $1 file $SHA"; else sap_out "CONFLICT $1 file -"; fi ;;
    *) sap_out "CONFLICT $1 $RK -" ;;
    esac
    return 1
  fi
  if [ "$RK" != file ]; then sap_out "CONFLICT $1 $RK -"; return 1; fi
  if [ ! -r "$SAP_J1" ]; then sap_out "REJECT $1 permission_denied 0"; return 1; fi
  return 2
}
sap_commit_check() {
  SAP_PHASE=3
  sap_out "STEP 3"
  sap_bad=0 i=0
  set --
  while [ $i -lt $SAP_N ]; do
    sap_get F_exp_$i
    sap_e=$SAP_V
    sap_get F_src_$i
    sap_k=$SAP_V
    sap_check_path $sap_k "$sap_e"
    case $? in
    1) sap_bad=1 ;;
    2) set -- "$@" "$SAP_J1"; sap_set CK_$# $sap_k; sap_set CE_$# "$sap_e" ;;
    esac
    sap_get F_op_$i
    if [ "$SAP_V" = move ]; then
      sap_get F_dst_$i
      sap_check_path $SAP_V - || sap_bad=1
    fi
    i=$((i + 1))
  done
  if [ $# -gt 0 ]; then
    sap_sha_list "$@" || sap_sha_each "$@"
    sap_j=0
    while [ $sap_j -lt $# ]; do
      sap_j=$((sap_j + 1))
      sap_get CK_$sap_j
      sap_k=$SAP_V
      sap_get CE_$sap_j
      sap_e=$SAP_V
      sap_get SHA_$sap_j
      if [ -z "$SAP_V" ]; then sap_out "FAIL remote_error $sap_k sha"; sap_bad=1
      elif [ "$SAP_V" != "$sap_e" ]; then sap_out "CONFLICT $sap_k file $SAP_V"; sap_bad=1; fi
    done
  fi
  if [ $sap_bad = 1 ]; then SAP_STATUS=refused; exit 0; fi
}
sap_acl_scan() {
  # One ls (and one getfattr where installed) for all sources; only when
  # something shows an ACL or xattr are the files looked at one by one.
  [ $# -gt 0 ] || return 0
  sap_flag=0
  sap_all=$(ls -ld "$@" 2>/dev/null)
  sap_ifs=$IFS
  IFS=$SAP_NL
  for sap_l in $sap_all; do
    case $sap_l in ??????????[+@]*) sap_flag=1 ;; esac
  done
  IFS=$sap_ifs
  if [ $sap_flag = 0 ] && command -v getfattr >/dev/null 2>&1; then
    sap_all=$(getfattr -d -m - "$@" 2>/dev/null | grep -v -e '^#' -e '^$' -e '^security\.selinux=' 2>/dev/null)
    [ -n "$sap_all" ] && sap_flag=1
  fi
  [ $sap_flag = 1 ] || return 0
  sap_j=0
  for sap_f in "$@"; do
    sap_j=$((sap_j + 1))
    sap_l=$(ls -ld "$sap_f" 2>/dev/null)
    case $sap_l in
    ??????????[+@]*) sap_get MK_$sap_j; sap_out "WARN acl_or_xattr_not_preserved $SAP_V -"; continue ;;
    esac
    if command -v getfattr >/dev/null 2>&1; then
      sap_l=$(getfattr -d -m - "$sap_f" 2>/dev/null | grep -v -e '^#' -e '^$' -e '^security\.selinux=' 2>/dev/null)
      [ -n "$sap_l" ] && { sap_get MK_$sap_j; sap_out "WARN acl_or_xattr_not_preserved $SAP_V -"; }
    fi
  done
}
sap_owner_mode() {
  # $1 stage, $2 uid, $3 gid, $4 octal mode: chown first (it clears setuid
  # and setgid bits), then chmod. chgrp alone keeps at least the group when
  # the owner may not be changed.
  chown "$2:$3" "$1" 2>/dev/null || chgrp "$3" "$1" 2>/dev/null
  chmod "$4" "$1" 2>/dev/null
}
sap_commit_meta() {
  # Step 4, batched: one stat for all sources, one for all stages.
  SAP_PHASE=4
  sap_out "STEP 4"
  sap_octal $(( 0666 & ~0$SAP_UMASK ))
  sap_addmode=$SAP_OCT
  SAP_UID=$(id -u 2>/dev/null)
  SAP_GID=$(id -g 2>/dev/null)
  set --
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_get S_dir_$i
    if [ -n "$SAP_V" ]; then
      sap_join "$SAP_V" ".sap-$SAP_OP-$i.stage"
      sap_sp=$SAP_J1
      sap_get F_op_$i
      if [ "$SAP_V" = add ]; then
        chmod "$sap_addmode" "$sap_sp" 2>/dev/null
      else
        sap_get F_src_$i
        sap_k=$SAP_V
        sap_get R_dir_$sap_k
        sap_d=$SAP_V
        sap_get R_name_$sap_k
        sap_join "$sap_d" "$SAP_V"
        set -- "$@" "$SAP_J1"
        sap_set MI_$# $i
        sap_set MK_$# $sap_k
        sap_set MP_$# "$sap_sp"
      fi
    fi
    i=$((i + 1))
  done
  [ $# -gt 0 ] || return 0
  sap_nm=$#
  sap_stat_list "$@" || sap_stat_each "$@"
  sap_acl_scan "$@"
  set --
  sap_j=0
  while [ $sap_j -lt $sap_nm ]; do
    sap_j=$((sap_j + 1))
    sap_get MP_$sap_j
    sap_sp=$SAP_V
    set -- "$@" "$sap_sp"
    sap_get STM_$sap_j
    sap_set WM_$sap_j "$SAP_V"
    [ -n "$SAP_V" ] || continue
    sap_octal "$SAP_V"
    sap_set WO_$sap_j "$SAP_OCT"
    sap_get STU_$sap_j
    sap_set WU_$sap_j "$SAP_V"
    sap_u=$SAP_V
    sap_get STG_$sap_j
    sap_set WG_$sap_j "$SAP_V"
    sap_g=$SAP_V
    sap_get STN_$sap_j
    sap_set WN_$sap_j "$SAP_V"
    if [ "$sap_u:$sap_g" != "$SAP_UID:$SAP_GID" ]; then
      sap_set WT_$sap_j 1
      sap_owner_mode "$sap_sp" "$sap_u" "$sap_g" "$SAP_OCT"
    else
      chmod "$SAP_OCT" "$sap_sp" 2>/dev/null
    fi
  done
  sap_stat_list "$@" || sap_stat_each "$@"
  sap_j=0
  while [ $sap_j -lt $sap_nm ]; do
    sap_j=$((sap_j + 1))
    sap_get MI_$sap_j
    sap_i=$SAP_V
    sap_get MK_$sap_j
    sap_k=$SAP_V
    sap_get WM_$sap_j
    sap_m=$SAP_V
    if [ -z "$sap_m" ]; then sap_out "META $sap_i 0 0"; continue; fi
    sap_get WO_$sap_j
    sap_o=$SAP_V
    sap_get WU_$sap_j
    sap_u=$SAP_V
    sap_get WG_$sap_j
    sap_g=$SAP_V
    sap_get STU_$sap_j
    sap_su=$SAP_V
    sap_get STG_$sap_j
    sap_sg=$SAP_V
    sap_get WT_$sap_j
    if [ -z "$SAP_V" ] && [ "$sap_su:$sap_sg" != "$sap_u:$sap_g" ]; then
      # a setgid directory gave the stage another group: set it, then the mode again
      sap_get MP_$sap_j
      sap_owner_mode "$SAP_V" "$sap_u" "$sap_g" "$sap_o"
      ST_MODE= ST_UID= ST_GID=
      sap_stat "$SAP_V"
      sap_stat_keep $sap_j
    fi
    sap_get STM_$sap_j
    sap_mo=0 sap_ow=0
    [ "$SAP_V" = "$sap_m" ] && sap_mo=1
    sap_get STU_$sap_j
    sap_su=$SAP_V
    sap_get STG_$sap_j
    [ "$sap_su:$SAP_V" = "$sap_u:$sap_g" ] && sap_ow=1
    sap_out "META $sap_i $sap_mo $sap_ow"
    [ $sap_ow = 1 ] || sap_out "WARN owner_not_preserved $sap_k $sap_u:$sap_g"
    [ $sap_mo = 1 ] || sap_out "WARN mode_not_preserved $sap_k $sap_o"
    sap_get WN_$sap_j
    [ "$SAP_V" -gt 1 ] && sap_out "WARN hard_link_broken $sap_k $SAP_V"
  done
  return 0
}
`;

/** Step 5 (finalize), 6 (rollback) and 7 (cleanup in the EXIT trap). */
const SH_COMMIT_FINALIZE: string = sh`
sap_mkparents() {
  sap_b=$2 sap_r=$3 sap_nc=0
  while :; do
    case $sap_r in */*) ;; *) break ;; esac
    sap_c=$\{sap_r%%/*} sap_r=$\{sap_r#*/}
    sap_join "$sap_b" "$sap_c"
    sap_e=$SAP_J1
    if ( sap_cd "$sap_b" && umask "$SAP_UMASK" && mkdir "./$sap_c" ) 2>/dev/null; then
      sap_nc=$((sap_nc + 1))
      sap_set C_$1_$sap_nc "$sap_e"
      sap_set C_n_$1 $sap_nc
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
    rmdir "$SAP_V" 2>/dev/null
    sap_nc=$((sap_nc - 1))
  done
}
sap_place() {
  sap_pd=$2 sap_pr=$3
  case $sap_pr in
  */*)
    sap_mkparents $1 "$sap_pd" "$sap_pr" || { SAP_FAIL_DETAIL=mkdir; return 1; }
    sap_pd=$SAP_MKD sap_pr=$SAP_MKN ;;
  esac
  sap_set T_dir_$1 "$sap_pd"
  sap_set T_name_$1 "$sap_pr"
  if ! ( sap_cd "$sap_pd" && sap_link "$4" "./$sap_pr" ) 2>/dev/null; then
    if sap_exists "$sap_pd" "$sap_pr"; then SAP_FAIL_DETAIL=exists; else SAP_FAIL_DETAIL=link; fi
    return 1
  fi
  sap_set L_$1 1
  printf 'L %s\n' $1 >> "$SAP_J" 2>/dev/null
  rm -f "$4" 2>/dev/null
  return 0
}
sap_aside() {
  sap_set K_dir_$1 "$2"
  ( sap_cd "$2" && [ -f "./$3" ] && [ ! -L "./$3" ] && mv -f "./$3" "./$4" ) 2>/dev/null
}
sap_finalize_one() {
  SAP_FAIL_DETAIL=
  sap_get F_op_$1
  sap_op=$SAP_V
  sap_get F_src_$1
  sap_get R_dir_$SAP_V
  sap_sd=$SAP_V
  sap_get F_src_$1
  sap_get R_name_$SAP_V
  sap_sn=$SAP_V
  sap_get S_dir_$1
  sap_join "$SAP_V" ".sap-$SAP_OP-$1.stage"
  sap_stp=$SAP_J1
  sap_st=.sap-$SAP_OP-$1.stage
  sap_bk=.sap-$SAP_OP-$1.bak
  case $sap_op in
  update)
    sap_set K_dir_$1 "$sap_sd"
    if ! ( sap_cd "$sap_sd" && [ -f "./$sap_sn" ] && [ ! -L "./$sap_sn" ] &&
           { sap_link "./$sap_sn" "./$sap_bk" || cp -p "./$sap_sn" "./$sap_bk"; } ) 2>/dev/null; then
      SAP_FAIL_DETAIL=backup
      return 1
    fi
    if ! ( sap_cd "$sap_sd" && mv -f "./$sap_st" "./$sap_sn" ) 2>/dev/null; then
      SAP_FAIL_DETAIL=rename
      return 1
    fi
    if ( sap_cd "$sap_sd" && [ -d "./$sap_sn" ] && [ -e "./$sap_sn/$sap_st" ] ); then
      ( sap_cd "$sap_sd" && mv "./$sap_sn/$sap_st" "./$sap_st" ) 2>/dev/null
      SAP_FAIL_DETAIL=not_a_file
      return 1
    fi ;;
  add)
    sap_place $1 "$sap_sd" "$sap_sn" "$sap_stp" || return 1 ;;
  delete)
    sap_aside $1 "$sap_sd" "$sap_sn" "$sap_bk" || { SAP_FAIL_DETAIL=rename; return 1; } ;;
  move)
    sap_get F_dst_$1
    sap_kd=$SAP_V
    sap_get R_dir_$sap_kd
    sap_dd=$SAP_V
    sap_get R_name_$sap_kd
    sap_place $1 "$sap_dd" "$SAP_V" "$sap_stp" || return 1
    sap_aside $1 "$sap_sd" "$sap_sn" "$sap_bk" || { SAP_FAIL_DETAIL=rename; return 1; } ;;
  esac
  return 0
}
sap_commit_finalize() {
  SAP_J=$SAP_W/.sap-$SAP_OP.journal
  if ! ( sap_cd "$SAP_W" && set -C && : > "./.sap-$SAP_OP.journal" ) 2>/dev/null; then
    SAP_J=
    sap_write_fail "$SAP_WK" "$SAP_W" journal
  fi
  SAP_PHASE=5
  sap_out "STEP 5"
  i=0
  while [ $i -lt $SAP_N ]; do
    if ! printf 'B %s\n' $i >> "$SAP_J" 2>/dev/null; then
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
  printf 'D\n' >> "$SAP_J" 2>/dev/null
  SAP_DONE=1 SAP_STATUS=ok
  sap_out "DONE"
  sap_hook done
}
sap_commit_undo_load() {
  sap_get F_op_$1
  U_op=$SAP_V
  sap_get F_exp_$1
  U_exp=$SAP_V
  sap_get F_new_$1
  U_new=$SAP_V
  sap_get L_$1
  U_linked=$SAP_V
  sap_get S_dir_$1
  U_sdir=$SAP_V
  U_st=.sap-$SAP_OP-$1.stage U_bak=.sap-$SAP_OP-$1.bak
  U_sd= U_sn= U_dd= U_dn=
  sap_get F_src_$1
  sap_k=$SAP_V
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
  # One rm for everything, in dependency order: stages, backups, blob, and
  # the journal last (a journal must never outlive what it describes); then
  # the locks.
  set --
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_get S_made_$i
    if [ -n "$SAP_V" ]; then
      sap_get S_dir_$i
      sap_join "$SAP_V" ".sap-$SAP_OP-$i.stage"
      [ -e "$SAP_J1" ] && set -- "$@" "$SAP_J1"
    fi
    sap_get K_dir_$i
    if [ -n "$SAP_V" ] && [ "$SAP_STATUS" != partial ]; then
      sap_join "$SAP_V" ".sap-$SAP_OP-$i.bak"
      { [ -e "$SAP_J1" ] || [ -L "$SAP_J1" ]; } && set -- "$@" "$SAP_J1"
    fi
    i=$((i + 1))
  done
  [ -n "$SAP_BLOB" ] && [ -e "$SAP_BLOB" ] && set -- "$@" "$SAP_BLOB"
  [ -n "$SAP_J" ] && [ "$SAP_STATUS" != partial ] && set -- "$@" "$SAP_J"
  if [ $# -gt 0 ]; then rm -f "$@" 2>/dev/null || SAP_CLEAN_FAIL=1; fi
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

/** The main sequence. */
const SH_COMMIT_MAIN: string = sh`
SAP_STATUS= SAP_PHASE=0 SAP_DONE= SAP_W= SAP_WK=- SAP_J= SAP_BLOB= SAP_BEGUN=-1 SAP_SIG= SAP_CLEAN_FAIL=
trap 'sap_commit_exit' EXIT
trap 'SAP_SIG=HUP; exit 129' HUP
trap 'SAP_SIG=INT; exit 130' INT
trap 'SAP_SIG=TERM; exit 143' TERM
trap '' PIPE
sap_out "SAP-BEGIN commit"
SAP_OP=$2 SAP_WAIT_MS=$3 SAP_STALE=$4 SAP_MKP=$5
sap_isnum "$SAP_WAIT_MS" && sap_isnum "$SAP_STALE" || sap_bad_input args
case $SAP_OP in ''|*[!A-Za-z0-9_]*) sap_bad_input operation ;; esac
sap_probe sha stat head tail dd date link
sap_root "$1" || { sap_out "ROOT $SAP_ROOTERR"; SAP_STATUS=root; exit 0; }
SAP_UMASK=$(umask)
case $SAP_UMASK in ''|*[!0-7]*) SAP_UMASK=022 ;; esac
umask 077
sap_identity
sap_read_manifest SAP-COMMIT-1
[ $SAP_N -gt 0 ] || { SAP_STATUS=ok; exit 0; }
sap_read_line
[ "$SAP_L" = SAP-DATA ] || sap_bad_input data
sap_commit_stage
sap_hook staged
SAP_PHASE=2
sap_out "STEP 2"
sap_lock_all
sap_hook locked
sap_commit_check
sap_hook checked
sap_commit_meta
sap_commit_finalize
SAP_PHASE=7
sap_out "STEP 7"
exit 0
`;

/** The commit program body (after the common functions). */
export const SH_COMMIT: string = SH_COMMIT_PREPARE + SH_COMMIT_FINALIZE + SH_COMMIT_MAIN;
