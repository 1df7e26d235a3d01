/**
 * Step 1 of the commit program for a delta upload (lib/remote/delta.ts
 * decides which files get one): the stage is assembled from byte ranges
 * of the current source file and the few bytes that were uploaded, then
 * checked against the plan's SHA-256 like every other stage.
 *
 * Why this is as safe as a whole upload. The stage is accepted only when
 * its SHA-256 equals the plan's `newSha256`, and the plan's new content is
 * what the client computed and would otherwise have sent. So if the check
 * passes, the stage is byte for byte the planned content, whatever the
 * source file held while it was read: no change of the source can make
 * other content land. If the check fails, the source is not what the plan
 * was built on any more: that is a conflict (nothing was changed,
 * retryable), reported for every path exactly like step 3 reports one.
 * The stages are hashed in the background while the locks are taken
 * (commit_prepare.ts, sap_stage_hash_start) and judged with the sources'
 * content comparison under the locks: a source that changed is then a
 * CONFLICT from that comparison; one that changed and came back as
 * planned is `FAIL remote_error k delta` (sap_delta_fail). A source that
 * is no longer a regular file when it is to be pinned is refused before
 * any lock, as before (sap_delta_refuse).
 * The stage's content being right says nothing about the source being a
 * regular file in the root: that is still decided where it always was, by
 * the step-3 re-check under the locks.
 *
 * Reading the source. The source is pinned first (sap_commit_pin: a hard
 * link `p/<name>` in the private directory of its directory, checked to be a
 * regular file the name still is) and every range is read from the pin,
 * which nobody else can swap. The same pin is the file's backup later.
 * Where no hard link may be made (another user's file under
 * fs.protected_hardlinks, another file system) and the directory is
 * trusted up to `/`, the source is read by name; in a shared directory the
 * commit is refused instead (`unsafe_directory`).
 *
 * Costs: per range of the old file one `dd iflag=skip_bytes,count_bytes`
 * where dd has those flags (GNU coreutils, BusyBox ≥ 1.23; probed once,
 * sap_dd_probe), else `dd | tail | head` (one process when it starts at 0,
 * two when block aligned; a range of 1 MiB or more is copied by one dd of
 * whole blocks plus its two unaligned ends); per uploaded stretch either
 * the same from the blob or, for short ones, nothing (`printf '%b'` is a
 * builtin).
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** sap_extract (shared with whole uploads) and the delta functions. */
export const SH_COMMIT_DELTA: string = sh`
sap_dd_probe() {
  # SAP_DDB=1 when dd copies an exact byte range by itself (iflag=
  # skip_bytes,count_bytes) and status=none leaves its stderr to errors
  # only (so a write error, "No space left on device", still reaches
  # SAP_ERR): then every range is one process. Checked by its result, not
  # its version: an unknown flag makes dd fail or print something else.
  SAP_DDB=
  sap_dp=$( { printf abcdefgh | dd bs=65536 iflag=skip_bytes,count_bytes skip=2 count=3 status=none; } 2>&1 )
  [ "$sap_dp" = cde ] && SAP_DDB=1
  return 0
}
sap_extract() {
  # $3 bytes of the regular file $1 from byte $2. With SAP_DDB one dd for
  # the whole range (a regular file's reads are only short at its end, so
  # count_bytes is exact; a source that is shorter than planned gives a
  # stage whose SHA-256 check fails). Otherwise: from 1 MiB on, the whole
  # 64 KiB blocks inside the range are copied by one dd straight from the
  # file (skip seeks; count is exact on a regular file, whose reads are
  # only short at its end), and only the unaligned ends go through the
  # pipes of sap_extract_part: a pipeline through tail and head costs about
  # 8 ms per MB here, and BusyBox's head -c copies byte by byte.
  [ "$3" -gt 0 ] || return 0
  if [ -n "$SAP_DDB" ]; then
    dd if="$1" bs=1048576 iflag=skip_bytes,count_bytes skip="$2" count="$3" status=none
    return
  fi
  if [ "$3" -lt 1048576 ]; then sap_extract_part "$@"; return; fi
  sap_xm=$(( ($2 + 65535) / 65536 * 65536 )) sap_xz=$(( ($2 + $3) / 65536 * 65536 ))
  sap_extract_part "$1" "$2" $(( sap_xm - $2 ))
  dd if="$1" bs=65536 skip=$(( sap_xm / 65536 )) count=$(( (sap_xz - sap_xm) / 65536 )) 2>/dev/null
  sap_extract_part "$1" $sap_xz $(( $2 + $3 - sap_xz ))
}
sap_extract_part() {
  # $3 bytes of file $1 from byte $2: dd skips whole 64 KiB blocks (it
  # seeks; BusyBox tail -c +N would read its way there), tail drops the
  # rest of the offset, head cuts exactly. Each run opens the file itself:
  # head -c never reads from a shared pipe or descriptor.
  [ "$3" -gt 0 ] || return 0
  if [ "$2" = 0 ]; then
    head -c "$3" < "$1"
  elif [ $(( $2 % 65536 )) = 0 ]; then
    dd if="$1" bs=65536 skip=$(( $2 / 65536 )) 2>/dev/null | head -c "$3"
  else
    dd if="$1" bs=65536 skip=$(( $2 / 65536 )) 2>/dev/null | tail -c +$(( $2 % 65536 + 1 )) 2>/dev/null | head -c "$3"
  fi
}
sap_delta_build() {
  # $1 file index: write its stage s<i> in its directory's private
  # directory from the pieces PC_<i>_<j>, in order, through fd 7: source
  # ranges from the pin p/<name> (in the source directory's private directory,
  # the same one for an update) or, unpinned in a trusted directory, from
  # the source by name; uploaded ranges from this file's part of the blob,
  # first copied next to the stage as t<i> when the blob lives elsewhere.
  # 0 written (its SHA-256 is checked with the other stages), 1 the stage
  # could not be written.
  sap_db_i=$1
  sap_get S_d_$sap_db_i
  sap_db_d=$SAP_V
  sap_get O_d_$sap_db_i
  sap_db_o=$SAP_V
  sap_get F_off_$sap_db_i
  sap_db_bo=$SAP_V
  sap_get F_len_$sap_db_i
  sap_db_bl=$SAP_V
  sap_get PIN_$sap_db_i
  sap_db_pin=$SAP_V
  sap_pin_name $sap_db_i
  sap_db_src=./$SAP_PN
  if [ "$sap_db_pin" != o ]; then
    sap_get F_src_$sap_db_i
    sap_get R_dir_$SAP_V
    sap_db_sd=$SAP_V
    sap_get F_src_$sap_db_i
    sap_get R_name_$SAP_V
    sap_join "$sap_db_sd" "$SAP_V"
    sap_db_src=$SAP_J1
  fi
  sap_pcd $sap_db_d || return 1
  sap_db_blob=./b
  if [ "$sap_db_d" != "$SAP_W" ] && [ "$sap_db_bl" -gt 0 ]; then
    set -C
    SAP_ERR=$( ( sap_pcd $SAP_W && sap_extract ./b "$sap_db_bo" "$sap_db_bl" ) 2>&1 > ./t$sap_db_i )
    sap_db_rc=$?
    set +C
    [ $sap_db_rc = 0 ] || return 1
    sap_db_blob=./t$sap_db_i sap_db_bo=0
  fi
  SAP_ERR=
  set -C
  { command exec 7> ./s$sap_db_i; } 2>/dev/null
  sap_db_rc=$?
  set +C
  [ $sap_db_rc = 0 ] || return 1
  sap_hook delta_read $sap_db_i
  sap_get F_np_$sap_db_i
  sap_db_np=$SAP_V
  # The pieces go to the stage through fd 7; their stderr is kept. A
  # source that changed only makes the SHA-256 check fail later (a
  # conflict); an error writing the stage (a full disk: "write error: No
  # space left on device" from head, a failed printf) is a write failure
  # and must not be taken for that (sh_faults.ts). No subshell per file:
  # the loop runs in the program's shell, its stderr goes to ./e in this
  # private directory (nobody else can reach it), read back by a builtin.
  # A loop that never ran (./e could not be created: no inode left) is a
  # write failure too.
  sap_db_j=0 sap_db_w=0 sap_db_ran=
  while [ $sap_db_j -lt $sap_db_np ]; do
    sap_db_ran=1
    sap_get PC_$\{sap_db_i}_$sap_db_j
    case $SAP_V in
    "S "*)
      set -- $SAP_V
      if [ "$sap_db_o" = "$sap_db_d" ] || [ "$sap_db_pin" != o ]; then sap_extract "$sap_db_src" $2 $3
      else ( sap_pcd $sap_db_o && sap_extract "$sap_db_src" $2 $3 ); fi ;;
    "B "*)
      sap_db_n=$\{SAP_V#B }
      sap_extract "$sap_db_blob" $sap_db_bo $sap_db_n
      sap_db_bo=$((sap_db_bo + sap_db_n)) ;;
    *) printf '%b' "$\{SAP_V#I }" || sap_db_w=1 ;;
    esac
    sap_db_j=$((sap_db_j + 1))
  done 2>| ./e >&7
  exec 7>&-
  [ -n "$sap_db_ran" ] || [ "$sap_db_np" = 0 ] || return 1
  sap_err_file ./e
  [ $sap_db_w = 0 ] || SAP_ERR="$\{SAP_ERR}printf failed writing the stage"
  # (a head that stops early makes tail report a broken pipe: not a failure)
  case $SAP_ERR in
  *"No space"*|*"Disk quota"*|*"Read-only"*|*"I/O error"*|*"printf failed"*) return 1 ;;
  esac
  SAP_ERR=
  return 0
}
sap_delta_refuse() {
  # A delta source that was not a regular file, or could not be pinned,
  # when its stage was to be rebuilt: it changed since the snapshot.
  # Report it as step 3 would, every path with its expected and actual
  # state, without taking locks (nothing will be written): sap_commit_check
  # and sap_commit_compare end the program as refused on any difference.
  sap_commit_check
  sap_commit_pins
  sap_commit_compare
  sap_delta_fail
}
sap_delta_fail() {
  # Nothing differs now, yet a stage rebuilt from its source (DB_i) did
  # not come out as planned: the source changed while it was read and is
  # back as planned (or its pieces did not describe it).
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_get DB_$i
    if [ -n "$SAP_V" ]; then
      sap_get F_src_$i
      sap_dr_k=$SAP_V
      # a disk that filled up while the stage was written, without a word
      # from the writer, is not a source that changed (sh_faults.ts)
      sap_get S_d_$i
      sap_get DIR_$SAP_V
      sap_dr_dir=$SAP_V
      SAP_ERR=
      sap_diag "$sap_dr_dir"
      case $SAP_EC in
      no_space|read_only_filesystem) sap_fail_class $sap_dr_k "$sap_dr_dir" stage ;;
      *) sap_out "FAIL remote_error $sap_dr_k delta" ;;
      esac
    fi
    i=$((i + 1))
  done
  SAP_STATUS=failed
  exit 0
}
`;
