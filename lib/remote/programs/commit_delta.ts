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
 * source file held while it was read — changed, swapped for another file,
 * replaced by a symlink: no change of the source can make other content
 * land, and the bytes read never leave the program's private 0700
 * directory except as that planned content. If the check fails, the
 * source is not what the plan was built on any more: that is a conflict
 * (nothing was changed, retryable), reported for every path exactly like
 * step 3 reports one, with the expected and the actual SHA-256. The
 * stage's content being right says nothing about the source being a
 * regular file in the root: that is still decided where it always was,
 * by the step-3 re-check under the locks, which refuses a source that has
 * become a symlink even when the bytes behind it are the expected ones.
 *
 * Reading the source. Inside its directory, entered with sap_cd (the
 * physical path checked in the §6 walk), the source is first pinned: hard
 * linked into a private directory of ours (`.sap-<op>-<i>-src.d/src`,
 * 0700). Every range is then read from that pin, which nobody else can
 * swap, so the reads cannot be redirected half-way. link(2) does not
 * follow a final symlink on Linux, so a name swapped for a symlink just
 * before is pinned as the symlink and refused without reading anything.
 * The pin is removed as soon as the stage is written, before step 4 reads
 * the source's link count (a pin left in place would look like another
 * hard link). Where a hard link cannot be made (another filesystem for a
 * Move's destination, a file the user may read but not link under
 * `fs.protected_hardlinks`, a filesystem without hard links) the source is
 * read by name inside its verified directory after checking it is a
 * regular file and not a symlink. A swap in the instant between that check
 * and the read (or, on BSD, where link(2) may follow a symlink) can only
 * make the stage differ, which is refused, or match, which needs the
 * planned bytes: at worst the caller learns whether some other file holds
 * exactly the expected ranges, far less than the snapshot's documented
 * read window already exposes.
 *
 * Costs: per range of the old file `dd | tail | head` (one process when it
 * starts at 0, two when block aligned; a range of 1 MiB or more is copied
 * by one dd of whole blocks plus its two unaligned ends), per uploaded
 * stretch either the same from the blob or, for short ones, nothing
 * (`printf '%b'` is a builtin); per file a mkdir, a link and an rm for the
 * pin.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** sap_extract (shared with whole uploads) and the delta functions. */
export const SH_COMMIT_DELTA: string = sh`
sap_extract() {
  # $3 bytes of the regular file $1 from byte $2. From 1 MiB on, the whole
  # 64 KiB blocks inside the range are copied by one dd straight from the
  # file (skip seeks; count is exact on a regular file, whose reads are
  # only short at its end), and only the unaligned ends go through the
  # pipes of sap_extract_part: a pipeline through tail and head costs about
  # 8 ms per MB here, and BusyBox's head -c copies byte by byte.
  [ "$3" -gt 0 ] || return 0
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
sap_delta_source() {
  # $1 file index: find its source for reading (D_dir_<i>, D_name_<i>).
  # 1 refused by the §6 walk (printed), 2 no longer a regular file.
  sap_get F_src_$1
  sap_dk=$SAP_V
  sap_get P_$sap_dk
  if ! sap_resolve "$SAP_V"; then sap_refusal $sap_dk; return 1; fi
  [ "$RK" = file ] || return 2
  sap_set D_dir_$1 "$RP"
  sap_set D_name_$1 "$RN"
  return 0
}
sap_delta_unpin() {
  sap_get PIN_$1
  [ -n "$SAP_V" ] || return 0
  sap_cd "$SAP_V" && rm -rf "./.sap-$SAP_OP-$1-src.d" 2>/dev/null
}
sap_delta_copy() { sap_extract "$SAP_DSRC" "$2" "$3"; }
sap_delta_build() {
  # $1 file index, $2 its stage's private directory (ours, 0700, just
  # made): write the stage "s" there from the pieces DP_<i>_<j>, in order,
  # through fd 7. 0 written (its SHA-256 is checked with the other
  # stages), 1 the stage could not be created, 2 the source is not a
  # regular file (or was pinned as a symlink): the caller reports a
  # conflict.
  sap_di=$1
  { sap_cd "$2" && [ -O . ] && command exec 7> ./s; } 2>/dev/null || return 1
  sap_get D_dir_$sap_di
  sap_sd=$SAP_V
  sap_get D_name_$sap_di
  sap_sn=$SAP_V
  sap_pin=.sap-$SAP_OP-$sap_di-src.d
  SAP_DSRC= sap_pinned=
  sap_hook delta_pin $sap_di
  if sap_cd "$sap_sd" && mkdir "./$sap_pin" 2>/dev/null; then
    sap_set PIN_$sap_di "$sap_sd"
    if sap_link "./$sap_sn" "./$sap_pin/src" 2>/dev/null; then
      sap_pinned=1
      cd "./$sap_pin" 2>/dev/null && [ -O . ] && [ -f ./src ] && [ ! -L ./src ] && SAP_DSRC=./src
    fi
  fi
  if [ -z "$sap_pinned" ] && sap_cd "$sap_sd" && [ -f "./$sap_sn" ] && [ ! -L "./$sap_sn" ]; then
    SAP_DSRC=./$sap_sn
  fi
  if [ -z "$SAP_DSRC" ]; then
    exec 7>&-
    sap_delta_unpin $sap_di
    return 2
  fi
  sap_hook delta_read $sap_di
  sap_get F_off_$sap_di
  sap_bo=$SAP_V
  sap_get F_np_$sap_di
  sap_np=$SAP_V
  sap_j=0
  while [ $sap_j -lt $sap_np ]; do
    sap_get DP_$\{sap_di}_$sap_j
    case $SAP_V in
    "S "*) sap_delta_copy $SAP_V ;;
    "B "*)
      sap_n=$\{SAP_V#B }
      sap_extract "$SAP_BLOB" $sap_bo $sap_n
      sap_bo=$((sap_bo + sap_n)) ;;
    *) printf '%b' "$\{SAP_V#I }" ;;
    esac
    sap_j=$((sap_j + 1))
  done >&7 2>/dev/null
  exec 7>&-
  sap_delta_unpin $sap_di
  return 0
}
sap_delta_refuse() {
  # A stage rebuilt from its source did not come out as planned, or the
  # source was no longer a regular file: it changed since the snapshot.
  # Report it as step 3 would, every path with its expected and actual
  # state, without taking locks (nothing will be written): sap_commit_check
  # and sap_commit_compare end the program as refused on any difference.
  sap_commit_check
  sap_commit_compare
  # Nothing differs now: the source changed while it was read and is back
  # as planned (or its pieces did not describe it).
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_get DB_$i
    if [ -n "$SAP_V" ]; then
      sap_get F_src_$i
      sap_out "FAIL remote_error $SAP_V delta"
    fi
    i=$((i + 1))
  done
  SAP_STATUS=failed
  exit 0
}
`;
