/**
 * Undo of one finalized file, shared by the commit's rollback (§7 step 6)
 * and by reconcile.
 *
 * The undo judges by what the disk shows, not by what the caller believes
 * happened, so it is idempotent: running it again after a crash in the
 * middle of an undo finishes the job. Inputs (set by the caller):
 * - `U_op`          add | update | delete | move
 * - `U_sd` `U_sn`   physical directory and name of the source (update,
 *                   delete, move) — empty when its directory is gone
 * - `U_dd` `U_dn`   directory and name of the created file (add, move)
 * - `U_sdir` `U_st` directory and name of the stage (may not exist)
 * - `U_bak`         backup name, in `U_sd`
 * - `U_exp` `U_new` expected old SHA (or `-`) and planned new SHA
 * - `U_linked`      non-empty when this operation is known to have created
 *                   `U_dd/U_dn` (journal `L i`); otherwise the created file
 *                   counts as ours only while it is still the same inode as
 *                   the stage (a crash between link and journal entry)
 *
 * Result: 0 nothing of this operation remains on that file (restored, or
 * never changed), 1 our change remains and could not be undone, 2 a third
 * party changed the path meanwhile and it was left alone. `U_KEEP` is set
 * when a backup must be kept because it is the only copy of a removed file
 * whose name someone else has re-created.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** sap_undo and its helpers, sap_undo_fields (its manifest inputs), plus sap_state (kind + SHA of one path). */
export const SH_UNDO: string = sh`
sap_undo_fields() {
  # The inputs of file $1 that come from the manifest and the journal, the
  # same for the commit's rollback and for reconcile; each caller then sets
  # U_sd U_sn U_dd U_dn from where it finds the paths (sap_k: the source's
  # path index).
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
}
sap_state() {
  PS_SHA=-
  if [ -z "$1" ]; then PS_KIND=missing; return 0; fi
  sap_join "$1" "$2"
  if [ -L "$SAP_J1" ]; then PS_KIND=symlink
  elif [ -f "$SAP_J1" ]; then
    PS_KIND=file
    if sap_sha "$SAP_J1"; then PS_SHA=$SHA; else PS_SHA=unreadable; fi
  elif [ -d "$SAP_J1" ]; then PS_KIND=directory
  elif [ -e "$SAP_J1" ]; then PS_KIND=other
  else PS_KIND=missing; fi
}
sap_link() {
  if [ "$SAP_LINK" = link ]; then link "$1" "$2"; return; fi
  ln "$1" "$2" || return 1
  if [ -d "$2" ] && [ ! -L "$2" ]; then rm -f "$2/$\{1##*/}"; return 1; fi
  return 0
}
sap_put_back() {
  ( sap_cd "$U_sd" && {
      { sap_link "./$U_bak" "./$U_sn" && rm -f "./$U_bak"; } ||
      { [ ! -e "./$U_sn" ] && [ ! -L "./$U_sn" ] && mv "./$U_bak" "./$U_sn"; }
    } ) 2>/dev/null
}
sap_undo_replaced() {
  [ -n "$U_sd" ] || return 0
  sap_state "$U_sd" "$U_sn"
  if sap_exists "$U_sd" "$U_bak"; then
    if [ "$PS_KIND" != missing ] && sap_same_file "$U_sd/$U_sn" "$U_sd/$U_bak"; then
      { sap_cd "$U_sd" && rm -f "./$U_bak"; } 2>/dev/null || return 1
      return 0
    fi
    case $PS_KIND:$PS_SHA in
    "file:$U_new"|"file:$U_exp")
      ( sap_cd "$U_sd" && mv -f "./$U_bak" "./$U_sn" ) 2>/dev/null || return 1
      return 0 ;;
    missing:*)
      sap_put_back || return 1
      return 0 ;;
    esac
    { sap_cd "$U_sd" && rm -f "./$U_bak"; } 2>/dev/null
    return 2
  fi
  [ "$PS_KIND:$PS_SHA" = "file:$U_exp" ] && return 0
  [ "$PS_KIND:$PS_SHA" = "file:$U_new" ] && return 1
  return 2
}
sap_undo_created() {
  [ -n "$U_dd" ] || return 0
  sap_state "$U_dd" "$U_dn"
  [ "$PS_KIND" = missing ] && return 0
  sap_ours=$U_linked
  if [ -z "$sap_ours" ] && [ -n "$U_sdir" ] && sap_exists "$U_sdir" "$U_st" &&
     sap_same_file "$U_dd/$U_dn" "$U_sdir/$U_st"; then
    sap_ours=1
  fi
  [ -n "$sap_ours" ] || return 0
  if [ "$PS_KIND:$PS_SHA" = "file:$U_new" ]; then
    ( sap_cd "$U_dd" && rm -f "./$U_dn" ) 2>/dev/null || return 1
    return 0
  fi
  return 2
}
sap_undo_removed() {
  [ -n "$U_sd" ] || return 0
  sap_exists "$U_sd" "$U_bak" || return 0
  if ! sap_exists "$U_sd" "$U_sn"; then
    sap_put_back || return 1
    return 0
  fi
  if sap_same_file "$U_sd/$U_sn" "$U_sd/$U_bak"; then
    { sap_cd "$U_sd" && rm -f "./$U_bak"; } 2>/dev/null || return 1
    return 0
  fi
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
  if [ -n "$U_sdir" ]; then { sap_cd "$U_sdir" && rm -f "./$U_st"; } 2>/dev/null; fi
  return $sap_ur
}
`;
