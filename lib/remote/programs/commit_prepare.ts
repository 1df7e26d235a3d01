/**
 * Steps 1–4 of the commit program (lib/remote/programs/commit_program.ts): stage
 * upload and SHA check, the §7 re-check of every expected state under the
 * locks, copying mode / owner onto the stages, and the hard-link backups
 * step 5 needs. Nothing here changes a user file; any refusal ends the
 * program before step 5. The re-check is split: kinds first, content last
 * (after metadata and backups), so that the unguarded window between the
 * re-check and the renames holds no per-file work.
 *
 * Hashing and `stat` are batched (one run of the tool for all files) to
 * keep the number of processes per file small.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** Steps 1–4: stages, locks, re-check, metadata. */
export const SH_COMMIT_PREPARE: string = sh`
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
      sap_get F_np_$i
      if [ -n "$SAP_V" ]; then
        # a delta upload reads its source in this step
        sap_delta_source $i
        case $? in
        1) sap_bad=1 ;;
        2) SAP_DELTA_BAD=1; sap_set DB_$i 1 ;;
        esac
      fi
    else
      sap_refusal $sap_k
      sap_bad=1
    fi
    i=$((i + 1))
  done
  if [ $sap_bad = 1 ]; then SAP_STATUS=refused; exit 0; fi
  [ $sap_content = 1 ] || return 0
  # a delta source that is not a regular file: reported by sap_delta_refuse
  [ -z "$SAP_DELTA_BAD" ] || return 0
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
      # The stage starts as "s" in a private directory (0700, ours) next
      # to its destination, where step 4 copies mode and owner onto it.
      sap_pv=.sap-$SAP_OP-$i.d
      sap_set S_made_$i 1
      sap_get F_np_$i
      if [ -n "$SAP_V" ]; then
        { sap_cd "$sap_d" && mkdir "./$sap_pv"; } 2>/dev/null || sap_write_fail $sap_k "$sap_d" stage
        sap_join "$sap_d" "$sap_pv"
        sap_delta_build $i "$SAP_J1"
        case $? in
        0) ;;
        1) sap_write_fail $sap_k "$sap_d" stage ;;
        *) SAP_DELTA_BAD=1; sap_set DB_$i 1; i=$((i + 1)); continue ;;
        esac
      elif [ "$sap_off" = 0 ] && [ "$sap_len" = "$SAP_TOTAL" ] && [ "$sap_d" = "$SAP_W" ]; then
        # the only content: the blob itself becomes the stage (same directory)
        ( sap_cd "$sap_d" && mkdir "./$sap_pv" && mv "./.sap-$SAP_OP.blob" "./$sap_pv/s" ) 2>/dev/null ||
          sap_write_fail $sap_k "$sap_d" stage
        SAP_BLOB=
      else
        ( sap_cd "$sap_d" && mkdir "./$sap_pv" && cd "./$sap_pv" && set -C && sap_extract "$SAP_BLOB" "$sap_off" "$sap_len" > ./s ) 2>/dev/null ||
          sap_write_fail $sap_k "$sap_d" stage
      fi
      sap_join "$sap_d" "$sap_pv/s"
      set -- "$@" "$SAP_J1"
      sap_set SC_$# $i
    fi
    i=$((i + 1))
  done
  [ -z "$SAP_BLOB" ] || sap_rm_path "$SAP_BLOB"
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
      sap_get F_np_$sap_i
      # a stage rebuilt from its source: the source is not as planned
      if [ -n "$SAP_V" ]; then SAP_DELTA_BAD=1; sap_set DB_$sap_i 1; continue; fi
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
  # Step 3, first part: every path still resolves (§6) to the expected kind
  # (a regular file, or nothing for an Add / Move destination). The content
  # comparison (sap_commit_compare) is done last, right before step 5, so
  # that no per-file work sits between it and the renames.
  SAP_PHASE=3
  sap_out "STEP 3"
  sap_bad=0 i=0 SAP_CN=0
  while [ $i -lt $SAP_N ]; do
    sap_get F_exp_$i
    sap_e=$SAP_V
    sap_get F_src_$i
    sap_k=$SAP_V
    sap_check_path $sap_k "$sap_e"
    case $? in
    1) sap_bad=1 ;;
    2)
      SAP_CN=$((SAP_CN + 1))
      sap_set CP_$SAP_CN "$SAP_J1"
      sap_set CK_$SAP_CN $sap_k
      sap_set CE_$SAP_CN "$sap_e" ;;
    esac
    sap_get F_op_$i
    if [ "$SAP_V" = move ]; then
      sap_get F_dst_$i
      sap_check_path $SAP_V - || sap_bad=1
    fi
    i=$((i + 1))
  done
  if [ $sap_bad = 1 ]; then
    # refused anyway: compare the contents now, so that every conflicting
    # path is reported at once
    sap_commit_compare
    SAP_STATUS=refused
    exit 0
  fi
}
sap_commit_compare() {
  # Step 3, last part: every source still has the content the plan was
  # built on (one hashing run for all files). From here to each file's
  # rename, only shell builtins and the earlier files' renames run: that is
  # the whole window in which a writer not using these locks can be lost.
  [ "$SAP_CN" -gt 0 ] || return 0
  set --
  sap_j=0
  while [ $sap_j -lt "$SAP_CN" ]; do
    sap_j=$((sap_j + 1))
    sap_get CP_$sap_j
    set -- "$@" "$SAP_V"
  done
  sap_sha_list "$@" || sap_sha_each "$@"
  sap_bad=0 sap_j=0
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
  if [ $sap_bad = 1 ]; then SAP_STATUS=refused; exit 0; fi
}
sap_commit_backups() {
  # Step 5's backups of the files an update replaces, made ahead of the
  # content comparison: a hard link changes nothing a reader sees, and the
  # comparison that follows still covers every byte. (A delete's or move's
  # backup is the rename of the file itself, done in step 5.)
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_get F_op_$i
    if [ "$SAP_V" = update ]; then
      sap_get F_src_$i
      sap_k=$SAP_V
      sap_get R_dir_$sap_k
      sap_sd=$SAP_V
      sap_get R_name_$sap_k
      sap_sn=$SAP_V
      sap_bk=.sap-$SAP_OP-$i.bak
      sap_set K_dir_$i "$sap_sd"
      if ! { sap_cd "$sap_sd" && [ -f "./$sap_sn" ] && [ ! -L "./$sap_sn" ] &&
             { sap_link "./$sap_sn" "./$sap_bk" || { [ ! -e "./$sap_bk" ] && cp -p "./$sap_sn" "./$sap_bk"; }; }; } 2>/dev/null; then
        sap_write_fail $sap_k "$sap_sd" backup
      fi
    fi
    i=$((i + 1))
  done
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
sap_stage_enter() {
  # Enter a stage's private directory ($1) and make sure it is still the
  # one this program made (ours, so nobody else can have put anything in
  # it) holding a regular file "s". chmod and chown follow symlinks: run
  # by path in a directory someone else may write, a stage swapped for a
  # symlink would hand them the mode and owner of whatever it points to.
  sap_cd "$1" && [ -O . ] && [ -f ./s ] && [ ! -L ./s ] || { SAP_STAGE_BAD=1; return 1; }
}
sap_owner_mode() {
  # $1 stage's private directory, $2 uid, $3 gid, $4 octal mode: chown
  # first (it clears setuid and setgid bits), then chmod. chgrp alone keeps
  # at least the group when the owner may not be changed.
  sap_stage_enter "$1" || return 1
  chown "$2:$3" ./s 2>/dev/null || chgrp "$3" ./s 2>/dev/null
  chmod "$4" ./s 2>/dev/null
}
sap_commit_publish() {
  # After step 4 each stage leaves its private directory for its working
  # name next to its destination (only renames and links touch it from
  # here on, and they never follow a symlink).
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_get S_made_$i
    if [ -n "$SAP_V" ]; then
      sap_get S_dir_$i
      sap_d=$SAP_V
      if ! { sap_cd "$sap_d" && [ ! -e "./.sap-$SAP_OP-$i.stage" ] && mv "./.sap-$SAP_OP-$i.d/s" "./.sap-$SAP_OP-$i.stage"; } 2>/dev/null; then
        sap_get S_k_$i
        sap_write_fail "$SAP_V" "$sap_d" stage
      fi
    fi
    i=$((i + 1))
  done
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
      sap_join "$SAP_V" ".sap-$SAP_OP-$i.d"
      sap_sp=$SAP_J1
      sap_get F_op_$i
      if [ "$SAP_V" = add ]; then
        sap_stage_enter "$sap_sp" && chmod "$sap_addmode" ./s 2>/dev/null
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
  [ $# -gt 0 ] || { sap_commit_meta_verdict; return 0; }
  sap_nm=$#
  sap_stat_list "$@" || sap_stat_each "$@"
  sap_acl_scan "$@"
  set --
  sap_j=0
  while [ $sap_j -lt $sap_nm ]; do
    sap_j=$((sap_j + 1))
    sap_get MP_$sap_j
    sap_sp=$SAP_V
    set -- "$@" "$sap_sp/s"
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
      sap_stage_enter "$sap_sp" && chmod "$SAP_OCT" ./s 2>/dev/null
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
      sap_stat "$SAP_V/s"
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
  sap_commit_meta_verdict
}
sap_commit_meta_verdict() {
  [ -z "$SAP_STAGE_BAD" ] && return 0
  sap_out "FAIL remote_error - stage_changed"
  SAP_STATUS=failed
  exit 0
}
`;
