/**
 * The reconcile program: after `outcome_unknown`, find out what one
 * operation left behind, finish it cleanly, and report every path's state.
 *
 * Arguments: `<root> <operation id> <lock wait ms> <stale lock s>`. Stdin:
 * the same manifest as the commit (header `SAP-RECONCILE-1`, no contents).
 *
 * 1. Candidate directories: every existing directory from the root down to
 *    each path's parent (stages of files with missing parents, the work
 *    directory and the journal all live in one of them).
 * 2. Read the journal `.sap-<op>.journal` if any: `B i` (file i begun),
 *    `L i` (file i's new name created by us), `C i q` / `N i q` (file i's
 *    parent directory followed by q more components is being created by us
 *    / existed after all), `D` (commit point reached).
 * 3. Take the operation's own lock, then the locks of all paths, like a
 *    commit does. A lock left by this operation id whose process is gone is
 *    adopted; one whose process still runs means the commit is still going
 *    (the operation lock catches it even before it reached its path locks):
 *    wait (bounded), else `LOCKED`.
 * 4. Journal without `D`: the commit died inside step 5 — undo every begun
 *    file in reverse order (lib/remote/programs/sh_undo.ts); the parent directories
 *    its commit created for those files are removed at the very end (after
 *    the locks inside them), when empty. A deleted file's backup
 *    is put back when its name is still free; when someone re-created the
 *    name, the backup is kept (`KEPT`), being the only copy of the old file.
 *    With `D`, or no journal, nothing is undone.
 * 5. Report `PSTATE k kind sha|-` for every path (the caller turns that into
 *    applied / not_applied / diverged per file).
 * 6. Remove the operation's leftovers in every candidate directory: its
 *    stages (private `.sap-<op>-<i>.d` directories included, and the
 *    `.sap-<op>-<i>-src.d` pins of delta uploads), backups
 *    (except kept ones) and blob; then the journal; then
 *    stale-lock asides, its private lock directories (`.sap-lock-tmp-<op>-*`:
 *    a lock being built when it died) and every lock whose owner names this
 *    operation id (its own included). A crash inside this step leaves either
 *    the journal (the next reconcile redoes the idempotent undo) or only
 *    locks of this operation (adopted and removed by the next reconcile).
 * Paths that can no longer be resolved safely (a symlink appeared) are not
 * locked and not touched; their state is reported `unknown`.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** The reconcile program body (after the common functions). */
export const SH_RECONCILE: string = sh`
SAP_STATUS= SAP_SIG= SAP_CLEAN_FAIL= SAP_DN=0 SAP_J= SAP_JDONE= SAP_LINK=
sap_reconcile_exit() {
  trap '' HUP INT TERM
  [ -n "$SAP_SIG" ] && sap_out "INTERRUPTED $SAP_SIG"
  sap_lock_release_all
  [ -n "$SAP_STATUS" ] || SAP_STATUS=interrupted
  sap_out "SAP-END $SAP_STATUS"
}
trap 'sap_reconcile_exit' EXIT
trap 'SAP_SIG=HUP; exit 129' HUP
trap 'SAP_SIG=INT; exit 130' INT
trap 'SAP_SIG=TERM; exit 143' TERM
trap '' PIPE
sap_dirs_add() {
  sap_d=$1
  while :; do
    case $SAP_DIRS in
    *"$SAP_NL$sap_d$SAP_NL"*) ;;
    *) SAP_DIRS=$SAP_DIRS$sap_d$SAP_NL
       sap_set DIR_$SAP_DN "$sap_d"
       SAP_DN=$((SAP_DN + 1)) ;;
    esac
    [ "$sap_d" = "$SAP_R" ] && break
    sap_d=$\{sap_d%/*}
    [ -n "$sap_d" ] || sap_d=/
  done
}
sap_rec_resolve() {
  sap_set R_dir_$1 ""
  sap_set R_name_$1 ""
  sap_get P_$1
  if sap_resolve "$SAP_V"; then
    sap_dirs_add "$RP"
    if [ "$RX" = 1 ]; then sap_set R_dir_$1 "$RP"; sap_set R_name_$1 "$RN"; fi
  fi
}
sap_rec_journal() {
  while IFS= read -r sap_l; do
    case $sap_l in
    D) SAP_JDONE=1 ;;
    "B "*) sap_n=$\{sap_l#B }; sap_isnum "$sap_n" && sap_set JB_$sap_n 1 ;;
    "L "*) sap_n=$\{sap_l#L }; sap_isnum "$sap_n" && sap_set L_$sap_n 1 ;;
    "C "*|"N "*)
      sap_n=$\{sap_l#? } sap_c=$\{sap_l##* }
      sap_n=$\{sap_n%% *}
      if sap_isnum "$sap_n" && sap_isnum "$sap_c"; then
        case $sap_l in
        C*)
          sap_set JC_$\{sap_n}_$sap_c 1
          sap_get JCMAX_$sap_n
          [ "$\{SAP_V:-0}" -ge "$sap_c" ] || sap_set JCMAX_$sap_n "$sap_c" ;;
        *) sap_set JC_$\{sap_n}_$sap_c "" ;;
        esac
      fi ;;
    esac
  done < "$1"
}
sap_rec_undo_load() {
  sap_undo_fields $1
  sap_get R_dir_$sap_k
  sap_rd=$SAP_V
  sap_get R_name_$sap_k
  sap_rn=$SAP_V
  if [ "$U_op" = add ]; then U_dd=$sap_rd U_dn=$sap_rn; return 0; fi
  U_sd=$sap_rd U_sn=$sap_rn
  if [ "$U_op" = move ]; then
    sap_get F_dst_$1
    sap_k=$SAP_V
    sap_get R_dir_$sap_k
    U_dd=$SAP_V
    sap_get R_name_$sap_k
    U_dn=$SAP_V
  fi
}
sap_rec_rmdirs() {
  # The parent directories file $1's commit created (journal C, minus N:
  # identified by how many path components follow them), deepest first,
  # each removed only while empty and only as a real directory strictly
  # below the root (walked with sap_resolve, entered with sap_cd).
  sap_get JCMAX_$1
  sap_m=$\{SAP_V:-0}
  [ "$sap_m" -gt 0 ] || return 0
  sap_get F_op_$1
  if [ "$SAP_V" = move ]; then sap_get F_dst_$1; else sap_get F_src_$1; fi
  sap_get P_$SAP_V
  sap_rel=$SAP_V sap_q=0
  while [ $sap_q -lt "$sap_m" ]; do
    sap_q=$((sap_q + 1))
    case $sap_rel in */*) sap_rel=$\{sap_rel%/*} ;; *) return 0 ;; esac
    sap_get JC_$\{1}_$sap_q
    [ -n "$SAP_V" ] || continue
    sap_resolve "$sap_rel/.sap-none" && [ "$RX" = 1 ] || continue
    case $RP in "$SAP_B"/?*) ;; *) continue ;; esac
    sap_p=$\{RP%/*}
    [ -n "$sap_p" ] || sap_p=/
    sap_cd "$sap_p" && rmdir "./$\{RP##*/}" 2>/dev/null
  done
}
sap_rec_cleanup_files() {
  # Inside the directory (sap_cd), so a directory swapped for a symlink
  # since it was resolved is not followed.
  sap_cd "$1" || { SAP_CLEAN_FAIL=1; return 0; }
  set +f
  for sap_f in ./.sap-"$SAP_OP"-*.d; do
    [ -d "$sap_f" ] && [ ! -L "$sap_f" ] && { rm -rf "$sap_f" 2>/dev/null || SAP_CLEAN_FAIL=1; }
  done
  for sap_f in ./.sap-"$SAP_OP"-*.stage ./.sap-"$SAP_OP"-*.bak ./.sap-"$SAP_OP".blob; do
    [ -f "$sap_f" ] || continue
    sap_b=$\{sap_f##*/}
    case $sap_b in
    *.bak)
      sap_n=$\{sap_b#.sap-"$SAP_OP"-}
      sap_n=$\{sap_n%.bak}
      if sap_isnum "$sap_n"; then
        sap_get KEEP_$sap_n
        if [ -n "$SAP_V" ]; then
          sap_get F_src_$sap_n
          sap_out "KEPT $SAP_V"
          continue
        fi
      fi ;;
    esac
    rm -f "$sap_f" 2>/dev/null || SAP_CLEAN_FAIL=1
  done
  set -f
}
sap_rec_cleanup_locks() {
  sap_cd "$1" || { SAP_CLEAN_FAIL=1; return 0; }
  set +f
  for sap_f in ./.sap-lock-*; do
    [ -d "$sap_f" ] || continue
    case $\{sap_f##*/} in
    .sap-lock-stale-"$SAP_OP"-*|.sap-lock-tmp-"$SAP_OP"-*) rm -rf "$sap_f" 2>/dev/null || SAP_CLEAN_FAIL=1; continue ;;
    esac
    sap_read_first "$sap_f/owner"
    sap_owner_fields "$SAP_O"
    if [ "$OW_OP" = "$SAP_OP" ]; then rm -rf "$sap_f" 2>/dev/null || SAP_CLEAN_FAIL=1; fi
  done
  set -f
}
sap_out "SAP-BEGIN reconcile"
SAP_OP=$2 SAP_WAIT_MS=$3 SAP_STALE=$4
sap_isnum "$SAP_WAIT_MS" && sap_isnum "$SAP_STALE" || sap_bad_input args
case $SAP_OP in ''|*[!A-Za-z0-9_]*) sap_bad_input operation ;; esac
sap_probe sha stat date link
sap_root "$1" || { sap_out "ROOT $SAP_ROOTERR"; SAP_STATUS=root; exit 0; }
sap_identity
sap_read_manifest SAP-RECONCILE-1
SAP_DIRS=$SAP_NL
sap_dirs_add "$SAP_R"
k=0
while [ $k -lt $SAP_M ]; do
  sap_rec_resolve $k
  k=$((k + 1))
done
d=0
while [ $d -lt $SAP_DN ]; do
  sap_get DIR_$d
  sap_dir=$SAP_V
  if [ -z "$SAP_J" ] && [ -f "$sap_dir/.sap-$SAP_OP.journal" ]; then SAP_J=$sap_dir/.sap-$SAP_OP.journal; fi
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_exists "$sap_dir" ".sap-$SAP_OP-$i.stage" && sap_set S_dir_$i "$sap_dir"
    i=$((i + 1))
  done
  d=$((d + 1))
done
[ -n "$SAP_J" ] && sap_rec_journal "$SAP_J"
if [ -n "$SAP_J" ]; then sap_out "JOURNAL $\{SAP_JDONE:-0}"; else sap_out "JOURNAL none"; fi
SAP_LOCK_SKIP_REFUSED=1
sap_op_lock
sap_lock_all
sap_hook locked
if [ -n "$SAP_J" ] && [ -z "$SAP_JDONE" ]; then
  i=$((SAP_N - 1))
  while [ $i -ge 0 ]; do
    sap_get JB_$i
    if [ -n "$SAP_V" ]; then
      sap_rec_undo_load $i
      sap_undo
      case $? in
      0) sap_out "UNDO $i ok" ;;
      2) sap_out "UNDO $i diverged" ;;
      *) sap_out "UNDO $i failed" ;;
      esac
      [ -n "$U_KEEP" ] && sap_set KEEP_$i 1
      sap_set UNDONE_$i 1
    fi
    i=$((i - 1))
  done
fi
k=0
while [ $k -lt $SAP_M ]; do
  sap_get P_$k
  if sap_resolve "$SAP_V" || [ "$RK" = symlink ]; then
    if [ "$RX" = 0 ]; then sap_out "PSTATE $k missing -"
    else sap_state "$RP" "$RN"; sap_out "PSTATE $k $PS_KIND $PS_SHA"; fi
  else
    sap_out "PSTATE $k unknown -"
  fi
  k=$((k + 1))
done
d=0
while [ $d -lt $SAP_DN ]; do
  sap_get DIR_$d
  sap_rec_cleanup_files "$SAP_V"
  d=$((d + 1))
done
[ -n "$SAP_J" ] && { sap_rm_path "$SAP_J" || SAP_CLEAN_FAIL=1; }
d=0
while [ $d -lt $SAP_DN ]; do
  sap_get DIR_$d
  sap_rec_cleanup_locks "$SAP_V"
  d=$((d + 1))
done
# Last, once the locks inside them are gone: the parent directories the
# undone files' commit created, when empty, later files (deeper) first.
i=$((SAP_N - 1))
while [ $i -ge 0 ]; do
  sap_get UNDONE_$i
  [ -n "$SAP_V" ] && sap_rec_rmdirs $i
  i=$((i - 1))
done
[ -z "$SAP_CLEAN_FAIL" ] || sap_out "WARN cleanup_incomplete - -"
SAP_STATUS=ok
exit 0
`;
