/**
 * Steps 0–4 of the commit program (lib/remote/programs/commit_program.ts):
 * the §6 walk and the directory trust policy, stage upload and its SHA
 * check (hashed in the background, judged under the locks),
 * the §7 re-check of every expected state under the locks, copying mode
 * / owner onto the stages (the pins, copies and second links are in
 * commit_links.ts). Nothing here changes a user file; any refusal ends
 * the program before step 5. The re-check is
 * split: kinds first, content last (after metadata and backups), so that
 * the unguarded window between the re-check and the renames holds no
 * per-file work.
 *
 * Hashing and `stat` are batched (one run of the tool per private
 * directory, or one for all where every directory is trusted up to `/`).
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** Steps 0–4: paths and trust, stages, locks, re-check, pins, metadata. */
export const SH_COMMIT_PREPARE: string = sh`
sap_err_file() {
  # SAP_ERR: what a command wrote to the file $1 (its stderr), read with
  # builtins only
  SAP_ERR=
  [ -s "$1" ] || return 0
  { while IFS= read -r sap_ef_l || [ -n "$sap_ef_l" ]; do SAP_ERR=$SAP_ERR$sap_ef_l$SAP_NL; done < "$1"; } 2>/dev/null
}
sap_write_fail() {
  # $1 path index, $2 directory index, $3 what could not be written (SAP_ERR:
  # what the failed command said, if captured). A path that no longer
  # resolves as it did (a directory swapped for a symlink meanwhile) is
  # reported as that refusal instead; otherwise the failure is classified
  # (sh_faults.ts: no_space, read_only_filesystem, permission_denied).
  sap_path_moved $1
  sap_get DIR_$2
  if [ -n "$SAP_PSWAP" ]; then sap_out "FAIL remote_error $1 private"
  else
    case $3 in blob|stage|backup) sap_wf_need=$SAP_TOTAL ;; *) sap_wf_need= ;; esac
    sap_fail_class $1 "$SAP_V" $3 $sap_wf_need
  fi
  SAP_STATUS=failed
  exit 0
}
sap_path_moved() {
  # $1 path index: when it no longer resolves to the directory it did,
  # print the refusal and end the program (refused).
  sap_isnum "$1" || return 0
  sap_get P_$1
  if ! sap_resolve "$SAP_V"; then sap_refusal $1; SAP_STATUS=refused; exit 0; fi
  sap_get R_dir_$1
  [ "$RP" = "$SAP_V" ] || { sap_out "CONFLICT $1 other -"; SAP_STATUS=refused; exit 0; }
}
sap_commit_resolve() {
  # Step 0: every path resolves (§6); the directory table; the trust policy.
  sap_trust_root "$SAP_ROOT_ARG" || { sap_out "ROOT unstable"; SAP_STATUS=root; exit 0; }
  sap_dir_index "$SAP_R"
  sap_cr_bad=0 k=0
  while [ $k -lt $SAP_M ]; do
    sap_get P_$k
    if sap_resolve "$SAP_V"; then
      sap_set RK_$k "$RK"
      sap_set RX_$k "$RX"
      sap_set R_dir_$k "$RP"
      sap_set R_name_$k "$RN"
      sap_dir_chain "$RP"
      sap_set PD_$k "$SAP_DI"
    else
      sap_refusal $k
      sap_cr_bad=1
    fi
    k=$((k + 1))
  done
  [ $sap_cr_bad = 0 ] || { SAP_STATUS=refused; exit 0; }
  sap_trust_check || { sap_out "ROOT unstable"; SAP_STATUS=root; exit 0; }
  if [ "$SAP_EXPECT_ROOT" != - ] && [ "$SAP_ROOT_ID" != "$SAP_EXPECT_ROOT" ]; then
    sap_out "ROOT changed"
    SAP_STATUS=root
    exit 0
  fi
  sap_trust_report "$SAP_POLICY" || { SAP_STATUS=unsafe; exit 0; }
}
sap_commit_stage() {
  SAP_PHASE=1
  sap_out "STEP 1"
  sap_cs_content=0 i=0
  while [ $i -lt $SAP_N ]; do
    sap_get F_op_$i
    sap_cs_op=$SAP_V
    sap_get F_src_$i
    sap_cs_src=$SAP_V
    if [ "$sap_cs_op" = move ]; then sap_get F_dst_$i; sap_cs_k=$SAP_V; else sap_cs_k=$sap_cs_src; fi
    sap_get PD_$sap_cs_k
    sap_cs_d=$SAP_V
    [ -n "$SAP_W" ] || { SAP_W=$sap_cs_d SAP_WK=$sap_cs_k; }
    if [ "$sap_cs_op" != delete ]; then
      sap_set S_d_$i $sap_cs_d
      sap_set S_k_$i $sap_cs_k
      sap_cs_content=1
      sap_get RX_$sap_cs_k
      [ "$SAP_V" = 1 ] || sap_set NP_$i 1
    fi
    if [ "$sap_cs_op" != add ]; then sap_get PD_$sap_cs_src; sap_set O_d_$i "$SAP_V"; fi
    sap_get F_np_$i
    if [ -n "$SAP_V" ]; then
      # a delta upload reads its source in this step: pin it now
      sap_get RK_$sap_cs_src
      if [ "$SAP_V" != file ]; then
        SAP_DELTA_BAD=1
        sap_set DB_$i 1
      else
        sap_hook delta_pin $i
        sap_commit_pin $i
        case $? in
        0) ;;
        3) sap_out "FAIL unsafe_directory $sap_cs_src unpinnable"; SAP_STATUS=failed; exit 0 ;;
        *) SAP_DELTA_BAD=1; sap_set DB_$i 1 ;;
        esac
      fi
    fi
    i=$((i + 1))
  done
  [ $sap_cs_content = 1 ] || return 0
  # a delta source that is not a regular file: reported by sap_delta_refuse
  [ -z "$SAP_DELTA_BAD" ] || return 0
  sap_pmake $SAP_W || sap_write_fail "$SAP_WK" $SAP_W blob
  sap_pcd $SAP_W || sap_write_fail "$SAP_WK" $SAP_W blob
  sap_read_blob || sap_write_fail "$SAP_WK" $SAP_W blob
  SAP_BLOB=1
  if ! sap_stat ./b || [ "$ST_SIZE" != "$SAP_TOTAL" ]; then
    sap_out "FAIL remote_error - truncated"
    SAP_STATUS=failed
    exit 0
  fi
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_get S_d_$i
    if [ -n "$SAP_V" ]; then
      sap_cs_d=$SAP_V
      sap_get S_k_$i
      sap_cs_k=$SAP_V
      sap_get F_off_$i
      sap_cs_off=$SAP_V
      sap_get F_len_$i
      sap_cs_len=$SAP_V
      sap_pmake $sap_cs_d || sap_write_fail $sap_cs_k $sap_cs_d stage
      sap_get F_np_$i
      if [ -n "$SAP_V" ]; then
        sap_delta_build $i || sap_write_fail $sap_cs_k $sap_cs_d stage
      elif [ "$sap_cs_off" = 0 ] && [ "$sap_cs_len" = "$SAP_TOTAL" ] && [ "$sap_cs_d" = "$SAP_W" ]; then
        # the only content: the blob itself becomes the stage
        { sap_pcd $sap_cs_d && mv -f ./b ./s$i; } 2>/dev/null || sap_write_fail $sap_cs_k $sap_cs_d stage
        SAP_BLOB=
      else
        sap_pcd $sap_cs_d || sap_write_fail $sap_cs_k $sap_cs_d stage
        set -C
        sap_get DCT_$SAP_W
        if [ "$sap_cs_d" = "$SAP_W" ] || [ "$SAP_V" = 1 ]; then
          # No subshell per file: the blob is read by its path (./b here;
          # in another directory's private directory only where that one
          # is trusted up to /, so nobody can rename anything on the path),
          # and what the cutter says goes to ./e in this private directory.
          if [ "$sap_cs_d" = "$SAP_W" ]; then sap_cs_b=./b; else sap_get DPP_$SAP_W; sap_cs_b=$SAP_V/b; fi
          { sap_extract "$sap_cs_b" "$sap_cs_off" "$sap_cs_len" > ./s$i; } 2>| ./e
          sap_cs_rc=$?
          sap_err_file ./e
        else
          SAP_ERR=$( ( sap_pcd $SAP_W && sap_extract ./b "$sap_cs_off" "$sap_cs_len" ) 2>&1 > ./s$i )
          sap_cs_rc=$?
        fi
        set +C
        [ $sap_cs_rc = 0 ] || sap_write_fail $sap_cs_k $sap_cs_d stage
      fi
      sap_set SC_$SAP_BN $i
      sap_batch_add $sap_cs_d s$i 0
    fi
    i=$((i + 1))
  done
  if [ -n "$SAP_BLOB" ]; then { sap_pcd $SAP_W && rm -f ./b; } 2>/dev/null; SAP_BLOB=; fi
  # Durability, part 1: the stages' data on stable storage, started here in
  # the background (one sync run, or one per private directory) so that the
  # flush overlaps the hash below, the locks and the source's re-hash; step
  # 5 waits for it before the first rename (sap_sync_wait). Part 2, the
  # directories, follows the renames (sap_sync_dirs). A stage found wrong
  # later is flushed for nothing: harmless, and the commit stops anyway.
  SAP_SYNC_BG=1
  sap_batch_run sync keep
  SAP_SYNC_BG=
  sap_hook stages_built
  sap_stage_hash_start
  SAP_BN=0
}
sap_stage_hash_start() {
  # The stages' SHA-256s (the queue built by sap_commit_stage, SC_j = file
  # index of entry j): one batched hashing run, started in the background
  # so that it overlaps the locks, the re-check, pins and metadata and the
  # sources' own re-hash; the verdict is given under the locks, in
  # sap_commit_compare (sap_stage_hash_wait, sap_upload_verdict). Nothing
  # is written before that verdict, so where it is given changes no outcome;
  # it only moves the refusal of a delta stage rebuilt from a changed
  # source from before the locks to the content comparison under them.
  # The job's results go to ./h in the working private directory through
  # fd 6 and are read back through fd 5, both opened here, before the job
  # starts: the job creates nothing itself, and one that outlives a killed
  # program writes only into that file of ours. A ./h that cannot be made
  # (no inode left, a read-only file system) fails the commit as a stage
  # that cannot be written does: the journal would fail there next.
  SAP_HASH_N=$SAP_BN SAP_HASH_PID=
  sap_pcd $SAP_W || sap_write_fail "$SAP_WK" $SAP_W stage
  { command exec 6>| ./h 5< ./h; } 2>/dev/null || sap_write_fail "$SAP_WK" $SAP_W stage
  (
    exec 5<&-
    sap_batch_run sha keep
    printf '%s\n' "$\{SAP_PSWAP:--}"
    sap_sh_j=0
    while [ $sap_sh_j -lt $SAP_BN ]; do
      sap_get BS_$sap_sh_j
      printf '%s\n' "$\{SAP_V:--}"
      sap_sh_j=$((sap_sh_j + 1))
    done
  ) >&6 2>/dev/null </dev/null &
  SAP_HASH_PID=$!
  exec 6>&-
}
sap_stage_hash_wait() {
  # The background hash's results (sap_stage_hash_start) as SG_j (empty:
  # that stage could not be hashed), judged by sap_stage_hash_judge. Only
  # builtins: it runs between the content comparison and the renames.
  [ -n "$SAP_HASH_PID" ] || return 0
  wait "$SAP_HASH_PID" 2>/dev/null
  SAP_HASH_PID=
  sap_hw_l=
  { IFS= read -r sap_hw_l <&5; } 2>/dev/null
  [ "$sap_hw_l" = 1 ] && SAP_PSWAP=1
  sap_hw_j=0
  while [ $sap_hw_j -lt $SAP_HASH_N ]; do
    sap_hw_l=
    { IFS= read -r sap_hw_l <&5; } 2>/dev/null
    [ "$sap_hw_l" != - ] || sap_hw_l=
    sap_set SG_$sap_hw_j "$sap_hw_l"
    sap_hw_j=$((sap_hw_j + 1))
  done
  exec 5<&-
  sap_stage_hash_judge
}
sap_stage_hash_judge() {
  # Every stage against its planned SHA-256. A delta stage, rebuilt from
  # its source, that came out wrong means the source is not as planned:
  # DB_i and SAP_DELTA_BAD (the content comparison then reports the
  # conflict, or sap_delta_fail the source that changed and came back). A
  # whole upload that came out wrong: SAP_UPLOAD_BAD, the path index.
  sap_hj_j=0
  while [ $sap_hj_j -lt $SAP_HASH_N ]; do
    sap_get SC_$sap_hj_j
    sap_hj_i=$SAP_V
    sap_get SG_$sap_hj_j
    sap_hj_h=$SAP_V
    sap_get F_new_$sap_hj_i
    if [ "$sap_hj_h" != "$SAP_V" ]; then
      sap_get F_np_$sap_hj_i
      if [ -n "$SAP_V" ]; then SAP_DELTA_BAD=1; sap_set DB_$sap_hj_i 1
      elif [ -z "$SAP_UPLOAD_BAD" ]; then sap_get S_k_$sap_hj_i; SAP_UPLOAD_BAD=$SAP_V
      fi
    fi
    sap_hj_j=$((sap_hj_j + 1))
  done
  sap_hook stage_hashed
}
sap_upload_verdict() {
  # A whole upload whose stage does not have its planned SHA-256: the
  # upload failed (or our private directory was swapped), not the source.
  [ -n "$SAP_UPLOAD_BAD" ] || return 0
  if [ -n "$SAP_PSWAP" ]; then sap_out "FAIL remote_error $SAP_UPLOAD_BAD private"; else sap_out "FAIL remote_error $SAP_UPLOAD_BAD stage_sha"; fi
  SAP_STATUS=failed
  exit 0
}
sap_stage_mode_guard() {
  # $1: the octal mode about to be given to a stage. A user other than
  # root cannot read a file without its owner's read bit, so the
  # background hash must have read the stages before such a mode is set.
  [ -n "$SAP_HASH_PID" ] && [ "$SAP_EUID" != 0 ] && [ $(( 0$1 & 0400 )) = 0 ] && sap_stage_hash_wait
  return 0
}
sap_check_path() {
  # $1 path index, $2 expected sha or -: 0 fine (missing as expected),
  # 1 refused (printed), 2 a regular file to compare
  sap_get P_$1
  if ! sap_resolve "$SAP_V"; then sap_refusal $1; return 1; fi
  sap_get R_dir_$1
  if [ "$RP" != "$SAP_V" ]; then sap_out "CONFLICT $1 other -"; return 1; fi
  sap_join "$RP" "$RN"
  if [ "$2" = - ]; then
    case $RK in
    missing)
      if [ "$RX" = 0 ] && [ "$SAP_MKP" != 1 ]; then sap_out "REJECT $1 not_found 0"; return 1; fi
      return 0 ;;
    file)
      # its content, for the report, where it can be read by name safely
      sap_dir_index "$RP"
      sap_get DCT_$SAP_DI
      if [ "$SAP_V" = 1 ] && sap_sha "$SAP_J1"; then sap_out "CONFLICT $1 file $SHA"; else sap_out "CONFLICT $1 file -"; fi ;;
    *) sap_out "CONFLICT $1 $RK -" ;;
    esac
    return 1
  fi
  if [ "$RK" != file ]; then sap_out "CONFLICT $1 $RK -"; return 1; fi
  if [ ! -r "$SAP_J1" ]; then sap_out "REJECT $1 permission_denied 0"; return 1; fi
  return 2
}
sap_commit_check() {
  # Step 3, first part: every path still resolves (§6), in the same
  # directory, to the expected kind (a regular file, or nothing for an Add
  # / Move destination). The content comparison (sap_commit_compare) is done
  # last, right before step 5, so that no per-file work sits between it and
  # the renames.
  SAP_PHASE=3
  sap_out "STEP 3"
  sap_cc_bad=0 i=0
  while [ $i -lt $SAP_N ]; do
    sap_get F_exp_$i
    sap_cc_e=$SAP_V
    sap_get F_src_$i
    sap_check_path $SAP_V "$sap_cc_e"
    [ $? = 1 ] && { sap_cc_bad=1; sap_set CX_$i 1; }
    sap_get F_op_$i
    if [ "$SAP_V" = move ]; then
      sap_get F_dst_$i
      sap_check_path $SAP_V - || sap_cc_bad=1
    fi
    i=$((i + 1))
  done
  if [ $sap_cc_bad = 1 ]; then
    # refused anyway: compare the contents now, so that every conflicting
    # path is reported at once (and let the stages' hash finish first
    # rather than be killed at the exit)
    sap_stage_hash_wait
    sap_commit_pins soft
    sap_commit_compare
    SAP_STATUS=refused
    exit 0
  fi
}
sap_commit_compare() {
  # Step 3, last part: every source still has the content the plan was
  # built on (one hashing run per directory, or for all); with $1 = final
  # (the main sequence), also every stage its planned SHA-256. From here to
  # each file's rename, only shell builtins and the earlier files' renames
  # run: that is the whole window in which a writer not using these locks
  # can be lost (each rename is preceded by a check that the name is
  # still the pinned file).
  SAP_BN=0
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_get F_op_$i
    sap_cm_op=$SAP_V
    sap_get CX_$i
    if [ "$sap_cm_op" != add ] && [ -z "$SAP_V" ]; then
      sap_get O_d_$i
      sap_cm_d=$SAP_V
      sap_get PIN_$i
      sap_set CQ_$SAP_BN $i
      if [ "$SAP_V" = o ]; then sap_pin_name $i; sap_batch_add $sap_cm_d "$SAP_PN" 0
      else
        sap_get F_src_$i
        sap_get R_dir_$SAP_V
        sap_cm_sd=$SAP_V
        sap_get F_src_$i
        sap_get R_name_$SAP_V
        sap_join "$sap_cm_sd" "$SAP_V"
        sap_batch_add $sap_cm_d "$SAP_J1" 1
      fi
    fi
    i=$((i + 1))
  done
  sap_cm_n=$SAP_BN
  [ $sap_cm_n = 0 ] || sap_batch_run sha
  SAP_BN=0
  if [ "$1" = final ]; then
    # the stages' verdict, under the locks (sap_stage_hash_start)
    sap_stage_hash_wait
    sap_upload_verdict
  fi
  sap_cm_bad=0 sap_cm_j=0
  while [ $sap_cm_j -lt $sap_cm_n ]; do
    sap_get CQ_$sap_cm_j
    sap_cm_i=$SAP_V
    sap_get F_src_$sap_cm_i
    sap_cm_k=$SAP_V
    sap_get F_exp_$sap_cm_i
    sap_cm_e=$SAP_V
    sap_get BS_$sap_cm_j
    if [ -z "$SAP_V" ]; then
      if [ -n "$SAP_PSWAP" ]; then sap_out "FAIL remote_error $sap_cm_k private"; else sap_out "FAIL remote_error $sap_cm_k sha"; fi
      sap_cm_bad=1
    elif [ "$SAP_V" != "$sap_cm_e" ]; then sap_out "CONFLICT $sap_cm_k file $SAP_V"; sap_cm_bad=1; fi
    sap_cm_j=$((sap_cm_j + 1))
  done
  if [ $sap_cm_bad = 1 ]; then SAP_STATUS=refused; exit 0; fi
  [ "$1" != final ] || [ -z "$SAP_DELTA_BAD" ] || sap_delta_fail
}
sap_acl_scan() {
  # One ls (and one getfattr where installed) over the queued sources (MK_j
  # = path index), per private directory or for all; only when something
  # shows an ACL or xattr are they looked at one by one.
  SAP_BFLAG=
  sap_batch_run ls keep
  [ -n "$SAP_BFLAG" ] || return 0
  sap_ac_j=0
  while [ $sap_ac_j -lt $SAP_BN ]; do
    sap_batch_entry $sap_ac_j
    sap_ac_l=$(ls -ld "$SAP_BE" 2>/dev/null)
    # SAA_i: file i's source has an ACL of its own (sap_stage_acl)
    case $sap_ac_l in ??????????+*) sap_get MI_$sap_ac_j; sap_set SAA_$SAP_V 1 ;; esac
    case $sap_ac_l in ??????????[+@]*) sap_get MK_$sap_ac_j; sap_out "WARN acl_or_xattr_not_preserved $SAP_V -"; sap_ac_j=$((sap_ac_j + 1)); continue ;; esac
    if command -v getfattr >/dev/null 2>&1; then
      sap_ac_l=$(getfattr -d -m - "$SAP_BE" 2>/dev/null | grep -v -e '^#' -e '^$' -e '^security\.selinux=' 2>/dev/null)
      [ -n "$sap_ac_l" ] && { sap_get MK_$sap_ac_j; sap_out "WARN acl_or_xattr_not_preserved $SAP_V -"; }
    fi
    sap_ac_j=$((sap_ac_j + 1))
  done
}
sap_batch_entry() {
  # SAP_BE: queue entry $1 as a path usable from here (absolute, or
  # entering its private directory first)
  sap_get BA_$1
  sap_be_a=$SAP_V
  sap_get BN_$1
  SAP_BE=$SAP_V
  [ "$sap_be_a" = 1 ] && return 0
  sap_get BI_$1
  sap_pcd $SAP_V
  SAP_BE=./$SAP_BE
}
sap_stage_enter() {
  # Enter stage $1's private directory and make sure it still holds a
  # regular file s<i>. chmod and chown follow symlinks: they only ever act
  # on ./s<i> inside the private directory, where nobody else can put one.
  sap_get S_d_$1
  sap_pcd $SAP_V && [ -f ./s$1 ] && [ ! -L ./s$1 ] || { SAP_STAGE_BAD=1; return 1; }
}
sap_owner_mode() {
  # $1 file index, $2 uid, $3 gid, $4 octal mode: chown first (it clears
  # setuid and setgid bits), then chmod. chgrp alone keeps at least the
  # group when the owner may not be changed.
  sap_stage_mode_guard "$4"
  sap_stage_enter $1 || return 1
  chown "$2:$3" ./s$1 2>/dev/null || chgrp "$3" ./s$1 2>/dev/null
  chmod "$4" ./s$1 2>/dev/null
}
sap_mode_queue() {
  # Stage $1 (entered and checked by sap_stage_enter) gets mode $2 in
  # sap_mode_flush: one chmod per distinct mode, not one per file.
  sap_set QM_$1 "$2"
  case " $SAP_QMODES " in *" $2 "*) ;; *) SAP_QMODES="$SAP_QMODES $2" ;; esac
}
sap_mode_flush() {
  # Runs its own batches: only where no other batch is being built.
  for SAP_BMODE in $SAP_QMODES; do
    sap_stage_mode_guard "$SAP_BMODE"
    SAP_BN=0 sap_mf_i=0
    while [ $sap_mf_i -lt $SAP_N ]; do
      sap_get QM_$sap_mf_i
      if [ "$SAP_V" = "$SAP_BMODE" ]; then sap_get S_d_$sap_mf_i; sap_batch_add $SAP_V s$sap_mf_i 0; fi
      sap_mf_i=$((sap_mf_i + 1))
    done
    sap_batch_run chmod
  done
  SAP_QMODES=
}
sap_commit_meta() {
  # Step 4, batched: one stat for all sources (their pins), one chmod per
  # distinct mode, one stat for all stages. (A stage whose owner must be
  # changed gets chown and chmod of its own, sap_owner_mode: chown clears
  # the setuid bits, so the mode must follow it.)
  SAP_PHASE=4
  sap_out "STEP 4"
  sap_octal $(( 0666 & ~0$SAP_UMASK ))
  SAP_ADDMODE=$SAP_OCT SAP_QMODES=
  SAP_BN=0
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_get F_op_$i
    sap_cx_op=$SAP_V
    if [ "$sap_cx_op" = add ]; then
      sap_stage_enter $i && sap_mode_queue $i "$SAP_ADDMODE"
    elif [ "$sap_cx_op" != delete ]; then
      sap_get F_src_$i
      sap_cx_k=$SAP_V
      sap_get O_d_$i
      sap_cx_d=$SAP_V
      sap_set MI_$SAP_BN $i
      sap_set MK_$SAP_BN $sap_cx_k
      sap_get PIN_$i
      if [ "$SAP_V" = o ]; then sap_pin_name $i; sap_batch_add $sap_cx_d "$SAP_PN" 0
      else
        sap_get R_dir_$sap_cx_k
        sap_cx_sd=$SAP_V
        sap_get R_name_$sap_cx_k
        sap_join "$sap_cx_sd" "$SAP_V"
        sap_batch_add $sap_cx_d "$SAP_J1" 1
      fi
    fi
    i=$((i + 1))
  done
  [ $SAP_BN -gt 0 ] || { sap_mode_flush; sap_commit_meta_verdict; return 0; }
  sap_cx_n=$SAP_BN
  sap_acl_scan
  sap_batch_run stat
  sap_cx_j=0
  while [ $sap_cx_j -lt $sap_cx_n ]; do
    sap_get MI_$sap_cx_j
    sap_cx_i=$SAP_V
    sap_get BM_$sap_cx_j
    sap_set WM_$sap_cx_i "$SAP_V"
    if [ -n "$SAP_V" ]; then
      sap_octal "$SAP_V"
      sap_set WO_$sap_cx_i "$SAP_OCT"
      sap_cx_o=$SAP_OCT
      sap_get BU_$sap_cx_j
      sap_set WU_$sap_cx_i "$SAP_V"
      sap_cx_u=$SAP_V
      sap_get BG_$sap_cx_j
      sap_set WG_$sap_cx_i "$SAP_V"
      sap_cx_g=$SAP_V
      sap_get BL_$sap_cx_j
      sap_cx_l=$SAP_V
      sap_get PIN_$sap_cx_i
      [ "$SAP_V" = o ] && sap_cx_l=$((sap_cx_l - 1))
      sap_set WN_$sap_cx_i "$sap_cx_l"
      if [ "$sap_cx_u:$sap_cx_g" != "$SAP_EUID:$SAP_GID" ]; then
        sap_set WT_$sap_cx_i 1
        sap_owner_mode $sap_cx_i "$sap_cx_u" "$sap_cx_g" "$sap_cx_o"
      else
        sap_stage_enter $sap_cx_i && sap_mode_queue $sap_cx_i "$sap_cx_o"
      fi
    fi
    sap_cx_j=$((sap_cx_j + 1))
  done
  sap_mode_flush
  # the stages as they are now
  sap_cx_j=0
  while [ $sap_cx_j -lt $sap_cx_n ]; do
    sap_get MI_$sap_cx_j
    sap_cx_i=$SAP_V
    sap_get S_d_$sap_cx_i
    sap_batch_add $SAP_V s$sap_cx_i 0
    sap_cx_j=$((sap_cx_j + 1))
  done
  sap_batch_run stat
  sap_cx_j=0
  while [ $sap_cx_j -lt $sap_cx_n ]; do
    sap_get MI_$sap_cx_j
    sap_cx_i=$SAP_V
    sap_get MK_$sap_cx_j
    sap_cx_k=$SAP_V
    sap_get WM_$sap_cx_i
    sap_cx_m=$SAP_V
    if [ -z "$sap_cx_m" ]; then sap_out "META $sap_cx_i 0 0"; sap_cx_j=$((sap_cx_j + 1)); continue; fi
    sap_get WO_$sap_cx_i
    sap_cx_o=$SAP_V
    sap_get WU_$sap_cx_i
    sap_cx_u=$SAP_V
    sap_get WG_$sap_cx_i
    sap_cx_g=$SAP_V
    sap_get BU_$sap_cx_j
    sap_cx_su=$SAP_V
    sap_get BG_$sap_cx_j
    sap_cx_sg=$SAP_V
    sap_get BM_$sap_cx_j
    sap_cx_sm=$SAP_V
    sap_get WT_$sap_cx_i
    if [ -z "$SAP_V" ] && [ "$sap_cx_su:$sap_cx_sg" != "$sap_cx_u:$sap_cx_g" ]; then
      # a setgid directory gave the stage another group: set it, then the mode again
      sap_owner_mode $sap_cx_i "$sap_cx_u" "$sap_cx_g" "$sap_cx_o"
      ST_MODE= ST_UID= ST_GID=
      sap_stage_enter $sap_cx_i && sap_stat ./s$sap_cx_i
      sap_cx_sm=$ST_MODE sap_cx_su=$ST_UID sap_cx_sg=$ST_GID
    fi
    sap_cx_mo=0 sap_cx_ow=0
    [ "$sap_cx_sm" = "$sap_cx_m" ] && sap_cx_mo=1
    [ "$sap_cx_su:$sap_cx_sg" = "$sap_cx_u:$sap_cx_g" ] && sap_cx_ow=1
    sap_out "META $sap_cx_i $sap_cx_mo $sap_cx_ow"
    [ $sap_cx_ow = 1 ] || sap_out "WARN owner_not_preserved $sap_cx_k $sap_cx_u:$sap_cx_g"
    [ $sap_cx_mo = 1 ] || sap_out "WARN mode_not_preserved $sap_cx_k $sap_cx_o"
    sap_get WN_$sap_cx_i
    [ "$SAP_V" -gt 1 ] && sap_out "WARN hard_link_broken $sap_cx_k $SAP_V"
    sap_cx_j=$((sap_cx_j + 1))
  done
  sap_commit_meta_verdict
  sap_stage_acl $sap_cx_n
}
sap_stage_acl() {
  # The new version of an existing file never grants more than the old one
  # did (under either policy). A stage is made in the private directory,
  # which inherited the directory's default ACL when mktemp made it, so the
  # stage inherits it too: named users and groups get entries that chmod
  # only masks (with the group bits), never removes. So for every update
  # and move ($1 of them queued as MI_j) whose source showed no ACL, one
  # ls -ld of the stages (per private directory, or for all): a stage that
  # shows one (+) fails the commit here, before anything is renamed. (The
  # private directory itself is 0700: the mask of its inherited ACL is
  # empty, so nobody named there can enter it meanwhile. Pins and the
  # backups d<i> are hard links or renames of the user's file: same inode,
  # no new ACL. A copy c<i> is made only where the stage would be refused
  # here too: same private directory.) An add gets the directory's default
  # ACL, as any file created there does.
  SAP_BN=0 sap_sa_j=0
  while [ $sap_sa_j -lt $1 ]; do
    sap_get MI_$sap_sa_j
    sap_sa_i=$SAP_V
    sap_get SAA_$sap_sa_i
    if [ -z "$SAP_V" ]; then
      sap_set SQA_$SAP_BN $sap_sa_i
      sap_get S_d_$sap_sa_i
      sap_batch_add $SAP_V s$sap_sa_i 0
    fi
    sap_sa_j=$((sap_sa_j + 1))
  done
  [ $SAP_BN -gt 0 ] || return 0
  SAP_BFLAG=
  sap_batch_run acl keep
  [ -n "$SAP_BFLAG" ] || { SAP_BN=0; return 0; }
  sap_sa_n=$SAP_BN sap_sa_bad= sap_sa_j=0
  while [ $sap_sa_j -lt $sap_sa_n ]; do
    sap_get SQA_$sap_sa_j
    sap_sa_i=$SAP_V
    if sap_stage_enter $sap_sa_i; then
      sap_sa_l=$(ls -ld ./s$sap_sa_i 2>/dev/null)
      case $sap_sa_l in
      ??????????+*)
        sap_get S_k_$sap_sa_i
        sap_sa_k=$SAP_V
        sap_get S_d_$sap_sa_i
        sap_unsafe_line $sap_sa_k D $SAP_V acl
        sap_out "FAIL unsafe_directory $sap_sa_k acl"
        sap_sa_bad=1 ;;
      esac
    fi
    sap_sa_j=$((sap_sa_j + 1))
  done
  SAP_BN=0
  sap_commit_meta_verdict
  [ -z "$sap_sa_bad" ] || { SAP_STATUS=failed; exit 0; }
}
sap_commit_meta_verdict() {
  [ -z "$SAP_STAGE_BAD" ] && return 0
  if [ -n "$SAP_PSWAP" ]; then sap_out "FAIL remote_error - private"; else sap_out "FAIL remote_error - stage_changed"; fi
  SAP_STATUS=failed
  exit 0
}
`;
