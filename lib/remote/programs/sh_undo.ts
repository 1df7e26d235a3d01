/**
 * Undo of one finalized file, shared by the commit's rollback (§7 step 6)
 * and by reconcile; and the state of a path as a report gives it.
 *
 * The undo judges by what the disk shows, not by what the caller believes
 * happened, so it is idempotent: running it again after a crash in the
 * middle of an undo finishes the job. It never reads a file through a name
 * in a directory others may write: "is this name still ours?" is answered
 * by `[ ../name -ef ./ref ]` against the links kept in the private
 * directory (sh_private.ts) — the stage `s<i>` and its second link `r/s<i>`,
 * the source's pin `p/<name>`, its copy `c<i>`, the source moved aside `d<i>`.
 * Names are only ever changed by rename (`mv -T`) and no-replace link.
 *
 * Inputs (set by the caller):
 * - `U_op`, `U_i`   the operation and its file index
 * - `U_oq` `U_sq`   where the private directory holding the source's and the
 *                   stage's links is, as the caller's `sap_uen` takes it
 *                   (the commit: a directory index; reconcile: a found
 *                   private directory); empty when there is none
 * - `U_sn`          the source's name in its directory (update, delete, move)
 * - `U_dn`          the created name in the stage's directory (add, move)
 * - `U_fd`          for an add / move whose parents the commit created: the
 *                   physical path of its directory, where `U_dn` and the
 *                   stage's copy `.sap-<op>-a<i>` live
 * - `U_pin`         o (the source was pinned), c (copied: no hard link was
 *                   allowed, in a trusted directory), n (neither: a delete
 *                   or move in a trusted directory), empty: unknown
 * - `U_sdir`        the source directory's physical path (hashing the name
 *                   where it could not be pinned: a trusted directory)
 * - `U_exp` `U_new` expected old SHA (or `-`) and planned new SHA
 * - `U_linked`      non-empty when this operation is known to have created
 *                   the name (journal `L i`)
 * - `U_known`       set by the commit's own rollback, which knows what it
 *                   did: then `U_mv` (an update's rename happened), `U_aside`
 *                   (a source was moved aside) and `U_linked` are exact, and
 *                   what was not done is not undone (reconcile, after a
 *                   crash, judges by the disk alone)
 *
 * Result: 0 nothing of this operation remains on that file (restored, or
 * never changed), 1 our change remains and could not be undone, 2 a third
 * party changed the path meanwhile and it was left alone — or renamed the
 * file we wrote to a name of theirs (the link we keep of it then has a
 * second one): our new content lives on where we cannot find it. `U_KEEP` is set
 * when the old file's only copy (`d<i>`) must be kept because someone else
 * has re-created its name.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** sap_undo and its helpers, sap_undo_fields (its manifest inputs), plus sap_path_state. */
export const SH_UNDO: string = sh`
sap_undo_fields() {
  # The inputs of file $1 that come from the manifest and the journal, the
  # same for the commit's rollback and for reconcile; each caller then sets
  # where the files are (sap_k: the source's path index).
  sap_get F_op_$1
  U_op=$SAP_V U_i=$1
  sap_get F_exp_$1
  U_exp=$SAP_V
  sap_get F_new_$1
  U_new=$SAP_V
  sap_get L_$1
  U_linked=$SAP_V
  U_oq= U_sq= U_sn= U_dn= U_fd= U_pin= U_sdir= U_known= U_mv= U_aside=
  sap_get F_src_$1
  sap_k=$SAP_V
}
sap_link_put() {
  # put the inode at $1 (./x, private directory) back at ../$2, replacing
  # whatever is there, and keep $1: through a fresh second link
  rm -f "./q$U_i" 2>/dev/null
  sap_link "$1" "./q$U_i" 2>/dev/null && $SAP_MV "./q$U_i" "../$2" 2>/dev/null
}
sap_undo_replaced() {
  [ -n "$U_oq" ] && [ -n "$U_sn" ] || return 0
  [ -n "$U_known" ] && [ -z "$U_mv" ] && return 0
  sap_uen "$U_oq" || return 1
  # the old version: the pin, or the copy made where none could be
  sap_uv_bk=./p/$U_sn
  [ "$U_pin" = c ] && sap_uv_bk=./c$U_i
  if [ "$U_pin" = o ] && [ ! -L "../$U_sn" ] && [ "../$U_sn" -ef "$sap_uv_bk" ]; then return 0; fi
  if [ -f ./r/s$U_i ] && [ ! -L "../$U_sn" ] && [ "../$U_sn" -ef ./r/s$U_i ]; then
    # our new version is there: the old one goes back
    [ -f "$sap_uv_bk" ] || return 1
    sap_link_put "$sap_uv_bk" "$U_sn" || return 1
    return 0
  fi
  if ! sap_exists "../$U_sn"; then
    [ -f "$sap_uv_bk" ] || return 1
    sap_link "$sap_uv_bk" "../$U_sn" 2>/dev/null || return 1
    # the old version is back; our new one may live on under a name
    # someone else gave it (its second link r/s<i> is not its only one)
    sap_undo_elsewhere ./r/s$U_i && return 2
    return 0
  fi
  if [ "$U_pin" != o ] && [ -n "$U_sdir" ]; then
    # no pin: the name (in a trusted directory) still holds the old content?
    sap_join "$U_sdir" "$U_sn"
    [ -f "$SAP_J1" ] && [ ! -L "$SAP_J1" ] && sap_sha "$SAP_J1" && [ "$SHA" = "$U_exp" ] && return 0
  fi
  return 2
}
sap_undo_created() {
  [ -n "$U_dn" ] || return 0
  [ -n "$U_known" ] && [ -z "$U_linked" ] && return 0
  if [ -n "$U_fd" ]; then
    # its directory renamed away since: our file may live on there, unseen
    if ! sap_cd "$U_fd"; then [ -n "$U_linked" ] && return 2; return 0; fi
    sap_uc_ref=./.sap-$SAP_OP-a$U_i sap_uc_n=./$U_dn sap_uc_back=./.sap-$SAP_OP-x$U_i
  else
    [ -n "$U_sq" ] || return 0
    sap_uen "$U_sq" || return 1
    sap_uc_ref=./s$U_i sap_uc_n=../$U_dn sap_uc_back=./x$U_i
  fi
  if ! sap_exists "$sap_uc_n"; then
    # gone from its name: renamed away by someone else, if the copy kept
    # here is not its only link any more
    sap_undo_elsewhere "$sap_uc_ref" && return 2
    return 0
  fi
  if [ -f "$sap_uc_ref" ] && [ ! -L "$sap_uc_n" ] && [ "$sap_uc_n" -ef "$sap_uc_ref" ]; then
    $SAP_MV "$sap_uc_n" "$sap_uc_back" 2>/dev/null || return 1
    if [ "$sap_uc_back" -ef "$sap_uc_ref" ] && [ ! -L "$sap_uc_back" ]; then
      rm -f "$sap_uc_back" 2>/dev/null
      return 0
    fi
    # swapped between the look and the rename: not ours, give it back
    sap_exists "$sap_uc_n" || $SAP_MV "$sap_uc_back" "$sap_uc_n" 2>/dev/null
    return 2
  fi
  [ -n "$U_linked" ] && return 2
  return 0
}
sap_undo_elsewhere() {
  # 0 when the file $1 (a link we keep of a file we wrote) has another name
  # than $1 itself: someone renamed the one we gave it to a name of theirs
  [ -f "$1" ] && [ ! -L "$1" ] || return 1
  ST_NLINK=
  sap_stat "$1" || return 1
  [ "$ST_NLINK" -gt 1 ]
}
sap_undo_removed() {
  [ -n "$U_oq" ] && [ -n "$U_sn" ] || return 0
  [ -n "$U_known" ] && [ -z "$U_aside" ] && return 0
  sap_uen "$U_oq" || return 1
  [ -f ./d$U_i ] && [ ! -L ./d$U_i ] || return 0
  if ! sap_exists "../$U_sn"; then
    sap_link ./d$U_i "../$U_sn" 2>/dev/null || return 1
    return 0
  fi
  [ ! -L "../$U_sn" ] && [ "../$U_sn" -ef ./d$U_i ] && return 0
  U_KEEP=1
  return 2
}
sap_undo_worst() {
  if [ "$1" = 1 ] || [ "$sap_ur" = 1 ]; then sap_ur=1
  elif [ "$1" = 2 ]; then sap_ur=2; fi
}
sap_undo() {
  sap_ur=0 U_KEEP=
  case $U_op in
  update) sap_undo_replaced; sap_undo_worst $? ;;
  add) sap_undo_created; sap_undo_worst $? ;;
  delete) sap_undo_removed; sap_undo_worst $? ;;
  move)
    sap_undo_created; sap_undo_worst $?
    sap_undo_removed; sap_undo_worst $? ;;
  esac
  return $sap_ur
}
sap_path_state() {
  # $1 path index: PS_KIND missing|file|directory|symlink|other|unknown and
  # PS_SHA (file: its SHA-256, read by name in a trusted directory, else
  # from a pin in this program's private directory there; - otherwise).
  PS_KIND=unknown PS_SHA=-
  sap_get P_$1
  if ! sap_resolve "$SAP_V"; then [ "$RK" = symlink ] && PS_KIND=symlink; return 0; fi
  PS_KIND=$RK
  [ "$RK" = file ] || return 0
  sap_ps_n=$RN
  sap_dir_index "$RP"
  sap_ps_d=$SAP_DI
  sap_get DCT_$sap_ps_d
  if [ "$SAP_V" = 1 ]; then
    sap_join "$RP" "$sap_ps_n"
    if sap_sha "$SAP_J1"; then PS_SHA=$SHA; else PS_SHA=unreadable; fi
    return 0
  fi
  sap_pin $sap_ps_d "$sap_ps_n" "v$1"
  case $? in
  0) if sap_sha "./v$1"; then PS_SHA=$SHA; else PS_SHA=unreadable; fi; rm -f "./v$1" 2>/dev/null ;;
  2) PS_KIND=other ;;
  *) PS_SHA=unreadable ;;
  esac
}
`;
