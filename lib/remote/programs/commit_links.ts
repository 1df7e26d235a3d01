/**
 * The links each file needs before step 5 of the commit program
 * (lib/remote/programs/commit_program.ts), in its directory's private
 * directory: the source's pin `p/<name>` (a hard link: the delta source,
 * the content the check hashes, the backup), a copy `c<i>` where no hard
 * link may be made in a trusted directory, and the second link `r/s<i>`
 * of an update's stage (after the rename, `../name -ef ./r/s<i>` proves
 * the name holds the new version).
 *
 * Batched (issue 17 item 3): one `ln` per private directory links all its
 * sources into `p/` and one all its stages into `r/` (both made ahead by
 * sap_lock_prebuild's mkdir); a pin is taken only as sap_pin takes it — a
 * regular file the name still is — and whatever the batch did not pin is
 * pinned alone, with sap_pin's retries and its refusals told apart.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** Pins, copies and second links (step 4). */
export const SH_COMMIT_LINKS: string = sh`
sap_pin_name() {
  # SAP_PN: file $1's pin in its source directory's private directory,
  # p/<the source's name> (a name is unique in its directory, so one ln
  # links them all there: sap_pin_batch)
  sap_get F_src_$1
  sap_get R_name_$SAP_V
  SAP_PN=p/$SAP_V
}
sap_commit_pin() {
  # Pin file $1's source (p/<name>), once. 0 pinned or, where no hard link
  # may be made in a trusted directory, unpinned (PIN_i = n); 2 the source
  # is not a regular file any more (a conflict); 3 it cannot be pinned in a
  # shared directory.
  sap_get PIN_$1
  [ -z "$SAP_V" ] || return 0
  sap_get F_src_$1
  sap_cp_k=$SAP_V
  sap_get O_d_$1
  sap_cp_d=$SAP_V
  sap_pmake $sap_cp_d || sap_write_fail $sap_cp_k $sap_cp_d backup
  sap_pcd $sap_cp_d && { [ -d ./p ] || mkdir ./p 2>/dev/null; } || sap_write_fail $sap_cp_k $sap_cp_d backup
  sap_get R_name_$sap_cp_k
  sap_hook pin $1
  sap_pin $sap_cp_d "$SAP_V" "p/$SAP_V"
  case $? in
  0) sap_set PIN_$1 o; return 0 ;;
  2) return 2 ;;
  4) sap_write_fail $sap_cp_k $sap_cp_d backup ;;
  esac
  sap_get DCT_$sap_cp_d
  [ "$SAP_V" = 1 ] || return 3
  sap_set PIN_$1 n
  return 0
}
sap_pin_batch() {
  # The fast path of sap_commit_pins: per private directory, one ln of all
  # the sources there that still need a pin (../name... into p/, made
  # ahead by sap_lock_prebuild): link(2) each, which opens nothing and
  # follows no symlink. A pin is taken only as sap_pin takes it — a
  # regular file the name still is; anything else (a link that failed, a
  # name swapped meanwhile) is left to sap_commit_pin, alone, with its
  # retries and its refusals told apart.
  [ -n "$SAP_LNM" ] || return 0
  # (each directory's files from sap_group, its operands from one command
  # substitution: linear in the number of files)
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_get F_op_$i
    sap_pb_op=$SAP_V
    sap_get CX_$i
    sap_pb_x=$SAP_V
    sap_get PIN_$i
    if [ "$sap_pb_op" != add ] && [ -z "$sap_pb_x" ] && [ -z "$SAP_V" ]; then sap_get O_d_$i; sap_set PBD_$i "$SAP_V"; else sap_set PBD_$i ""; fi
    i=$((i + 1))
  done
  sap_group b PBD_ $SAP_N
  sap_pb_d=0
  while [ $sap_pb_d -lt $SAP_DN ]; do
    sap_get GbH_$sap_pb_d
    [ -n "$SAP_V" ] || { sap_pb_d=$((sap_pb_d + 1)); continue; }
    sap_pb_l=$(sap_get GbH_$sap_pb_d; i=$SAP_V
      while [ -n "$i" ]; do sap_pin_name $i; sap_out "../$\{SAP_PN#p/}"; sap_get GbX_$i; i=$SAP_V; done)
    sap_pb_ifs=$IFS
    IFS=$SAP_NL
    set -- $sap_pb_l
    IFS=$sap_pb_ifs
    sap_get DP_$sap_pb_d
    if [ $# -gt 0 ] && [ -n "$SAP_V" ] && sap_pcd $sap_pb_d && { [ -d ./p ] || mkdir ./p 2>/dev/null; }; then
      sap_hook pins $sap_pb_d
      $SAP_LNM "$@" ./p 2>/dev/null
      sap_get GbH_$sap_pb_d
      sap_pb_i=$SAP_V
      while [ -n "$sap_pb_i" ]; do
        i=$sap_pb_i
        sap_get GbX_$i
        sap_pb_i=$SAP_V
        sap_pin_name $i
        if [ -f "./$SAP_PN" ] && [ ! -L "./$SAP_PN" ] && [ ! -L "../$\{SAP_PN#p/}" ] && [ "../$\{SAP_PN#p/}" -ef "./$SAP_PN" ]; then
          sap_set PIN_$i o
        elif [ -e "./$SAP_PN" ] || [ -L "./$SAP_PN" ]; then
          rm -f "./$SAP_PN" 2>/dev/null
        fi
      done
    fi
    sap_pb_d=$((sap_pb_d + 1))
  done
}
sap_commit_pins() {
  # Pin every source (update, delete, move), or copy it where no hard link
  # may be made in a trusted directory (an update needs a backup). With
  # "soft" (already refused), only what can be compared. Batched first
  # (sap_pin_batch); what that did not pin, one by one.
  sap_pin_batch
  sap_ps_bad=0 i=0
  while [ $i -lt $SAP_N ]; do
    sap_get F_op_$i
    sap_ps_op=$SAP_V
    sap_get CX_$i
    if [ "$sap_ps_op" != add ] && [ -z "$SAP_V" ]; then
      sap_commit_pin $i
      case $? in
      0) ;;
      2) sap_get F_src_$i; sap_out "CONFLICT $SAP_V file -"; sap_ps_bad=1; sap_set CX_$i 1 ;;
      *) sap_get F_src_$i; sap_out "FAIL unsafe_directory $SAP_V unpinnable"; sap_ps_bad=2; sap_set CX_$i 1 ;;
      esac
    fi
    i=$((i + 1))
  done
  [ "$1" = soft ] && return 0
  [ $sap_ps_bad = 2 ] && { SAP_STATUS=failed; exit 0; }
  [ $sap_ps_bad = 0 ] || { sap_commit_compare; SAP_STATUS=refused; exit 0; }
}
sap_commit_copies() {
  # Updates whose source could not be pinned (trusted directory) keep a
  # copy as their backup, with the source's mode.
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_get F_op_$i
    sap_co_op=$SAP_V
    sap_get PIN_$i
    if [ "$sap_co_op" = update ] && [ "$SAP_V" = n ]; then
      sap_get F_src_$i
      sap_co_k=$SAP_V
      sap_get O_d_$i
      sap_co_d=$SAP_V
      sap_get R_name_$sap_co_k
      sap_co_n=$SAP_V
      sap_pcd $sap_co_d || sap_write_fail $sap_co_k $sap_co_d backup
      set -C
      SAP_ERR=$( { cat "../$sap_co_n" > ./c$i; } 2>&1 )
      sap_co_rc=$?
      set +C
      [ $sap_co_rc = 0 ] || sap_write_fail $sap_co_k $sap_co_d backup
      sap_get WO_$i
      [ -z "$SAP_V" ] || chmod "$SAP_V" ./c$i 2>/dev/null
      sap_set PIN_$i c
    fi
    i=$((i + 1))
  done
}
sap_commit_refs() {
  # A second link r/s<i> of every stage that replaces a file (update):
  # after the rename, ../name -ef ./r/s<i> proves the name holds the new
  # version. One ln for all the stages of a private directory (into its
  # r/, made ahead by sap_lock_prebuild's mkdir), not one per file; one
  # link each where ln is missing. Each is checked after: the stage still a
  # regular file, its second link the same inode.
  # (each directory's stages from sap_group, its operands from one command
  # substitution: linear in the number of files)
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_get F_op_$i
    if [ "$SAP_V" = update ]; then sap_get S_d_$i; sap_set RFD_$i "$SAP_V"; else sap_set RFD_$i ""; fi
    i=$((i + 1))
  done
  sap_group r RFD_ $SAP_N
  sap_rf_d=0
  while [ $sap_rf_d -lt $SAP_DN ]; do
    sap_get GrH_$sap_rf_d
    [ -n "$SAP_V" ] || { sap_rf_d=$((sap_rf_d + 1)); continue; }
    sap_rf_l=$(sap_get GrH_$sap_rf_d; i=$SAP_V
      while [ -n "$i" ]; do sap_out "./s$i"; sap_get GrX_$i; i=$SAP_V; done)
    sap_rf_ifs=$IFS
    IFS=$SAP_NL
    set -- $sap_rf_l
    IFS=$sap_rf_ifs
    if [ $# -gt 0 ]; then
      sap_pcd $sap_rf_d && { [ -d ./r ] || mkdir ./r 2>/dev/null; } || { SAP_STAGE_BAD=1; sap_commit_meta_verdict; }
      if [ -n "$SAP_LNM" ]; then $SAP_LNM "$@" ./r 2>/dev/null
      else for sap_rf_s in "$@"; do sap_link "$sap_rf_s" "./r/$\{sap_rf_s#./}" 2>/dev/null; done; fi
      for sap_rf_s in "$@"; do
        [ -f "$sap_rf_s" ] && [ ! -L "$sap_rf_s" ] && [ "./r/$\{sap_rf_s#./}" -ef "$sap_rf_s" ] || { SAP_STAGE_BAD=1; sap_commit_meta_verdict; }
      done
    fi
    sap_rf_d=$((sap_rf_d + 1))
  done
}
`;
