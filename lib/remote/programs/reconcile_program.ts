/**
 * The reconcile program: after `outcome_unknown`, find out what one
 * operation left behind, finish it cleanly, and report every path's state.
 *
 * Arguments: `<root> <operation id> <lock wait ms> <refuse|allow>`. Stdin: the same manifest as the commit (header
 * `SAP-RECONCILE-2`, reconcile's own secret, no contents).
 *
 * 1. Every path is resolved (§6) and the directory trust policy is checked
 *    like the commit does (policy refuse: `UNSAFE`, nothing touched).
 *    Candidate directories: every existing directory from the root down to
 *    each path's parent (the commit's private directories, the journal,
 *    the copies in created directories all live in one of them).
 * 2. The commit's private directories: `.sap-<op>-*` directories there that
 *    are ours (entered with sap_cd, owner checked) and hold an `id` naming
 *    this operation; one of them holds the journal `j`: `B i` (file i
 *    begun), `L i` (file i's new name created by us), `C i q` / `N i q`
 *    (file i's parent directory followed by q more components is being
 *    created by us / existed after all), `D` (commit point reached).
 * 3. Take the operation's own lock, then the locks of all paths, like a
 *    commit does (building them in reconcile's own private directories). A
 *    lock whose owner is gone is cleared (silently when it names this
 *    operation: its killed commit's); one whose process still runs means
 *    the commit is still going (the
 *    operation lock catches it even before it reached its path locks):
 *    wait (bounded), else `LOCKED`.
 * 4. Journal without `D`: the commit died inside step 5 — undo every begun
 *    file in reverse order (lib/remote/programs/sh_undo.ts), through the
 *    links in the commit's private directories; the parent directories its
 *    commit created for those files are removed at the very end (after the
 *    locks inside them), when empty. A deleted file's backup is put back
 *    when its name is still free; when someone re-created the name, the
 *    backup is kept, linked out next to it as `.sap-<op>-<i>.bak` (`KEPT`),
 *    being the only copy of the old file. With `D`, or no journal, nothing
 *    is undone.
 * 5. Report `PSTATE k kind sha|-` for every path (the caller turns that into
 *    applied / not_applied / diverged per file).
 * 6. Remove the operation's leftovers: the copies `.sap-<op>-a<i>` in
 *    created directories, the commit's private directories with everything
 *    in them (the journal goes with them), and every lock of ours naming
 *    this operation id whose owner is gone; then the
 *    locks reconcile holds and its own private directories. A crash inside
 *    this step leaves either the journal (the next reconcile redoes the
 *    idempotent undo) or only leftovers and locks of this operation
 *    (cleared by the next reconcile).
 * Paths that can no longer be resolved safely (a symlink appeared) are not
 * locked and not touched; their state is reported `unknown`.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** The reconcile program body (after the common functions). */
export const SH_RECONCILE: string = sh`
SAP_STATUS= SAP_SIG= SAP_CLEAN_FAIL= SAP_ON=0 SAP_JP= SAP_JDONE= SAP_TAN=0 SAP_PSWAP=
sap_reconcile_exit() {
  trap '' HUP INT TERM
  # a signal inside "IFS= read" leaves IFS empty under bash (commit_finalize.ts)
  IFS=$SAP_IFS
  [ -n "$SAP_SIG" ] && sap_out "INTERRUPTED $SAP_SIG"
  sap_lock_release_all
  sap_pclean_all
  [ -n "$SAP_STATUS" ] || SAP_STATUS=interrupted
  sap_out "SAP-END $SAP_STATUS"
}
SAP_IFS=$IFS
trap 'sap_reconcile_exit' EXIT
trap 'SAP_SIG=HUP; exit 129' HUP
trap 'SAP_SIG=INT; exit 130' INT
trap 'SAP_SIG=TERM; exit 143' TERM
trap '' PIPE
sap_ocd() {
  # Enter the commit's private directory number $1 and prove it is the one
  # found: physical path, ours, the same id.
  sap_get OP_p_$1
  sap_cd "$SAP_V" && [ -O . ] || return 1
  SAP_ID=
  { IFS= read -r SAP_ID < ./id; } 2>/dev/null
  sap_get OP_id_$1
  [ "$SAP_ID" = "$SAP_V" ]
}
sap_uen() { sap_ocd "$1"; }
sap_rec_find() {
  # $1 directory index: the commit's private directories and leftovers there
  sap_rf_d=$1
  sap_get DIR_$1
  sap_rf_dir=$SAP_V
  sap_cd "$sap_rf_dir" || return 0
  set +f
  set -- ./.sap-"$SAP_OP"-*
  set -f
  for sap_rf_e in "$@"; do
    sap_rf_b=$\{sap_rf_e#./}
    sap_cd "$sap_rf_dir" || return 0
    [ -L "./$sap_rf_b" ] && continue
    if [ -f "./$sap_rf_b" ]; then
      case $sap_rf_b in
      .sap-"$SAP_OP"-a[0-9]*)
        sap_rf_i=$\{sap_rf_b#.sap-"$SAP_OP"-a}
        sap_isnum "$sap_rf_i" || continue
        sap_set TA_d_$SAP_TAN "$sap_rf_dir"
        sap_set TA_n_$SAP_TAN "$sap_rf_b"
        sap_set TA_i_$SAP_TAN "$sap_rf_i"
        SAP_TAN=$((SAP_TAN + 1)) ;;
      esac
      continue
    fi
    [ -d "./$sap_rf_b" ] || continue
    sap_join "$sap_rf_dir" "$sap_rf_b"
    sap_rf_p=$SAP_J1
    sap_cd "$sap_rf_p" && [ -O . ] || continue
    SAP_ID=
    { IFS= read -r SAP_ID < ./id; } 2>/dev/null
    case $SAP_ID in
    "$SAP_OP $SAP_SECRET") ;;
    "$SAP_OP "?*)
      sap_set OP_p_$SAP_ON "$sap_rf_p"
      sap_set OP_d_$SAP_ON $sap_rf_d
      sap_set OP_id_$SAP_ON "$SAP_ID"
      [ -z "$SAP_JP" ] && [ -f ./j ] && SAP_JP=$SAP_ON
      SAP_ON=$((SAP_ON + 1)) ;;
    *)
      # no id (or a part of one): a private directory killed before its id
      # was in, or a stale lock this operation moved aside. Ours, and only
      # this operation's mktemp template makes such names: removed whole.
      sap_set OP_p_$SAP_ON "$sap_rf_p"
      sap_set OP_d_$SAP_ON $sap_rf_d
      sap_set OP_id_$SAP_ON ""
      sap_set OP_bare_$SAP_ON 1
      SAP_ON=$((SAP_ON + 1)) ;;
    esac
  done
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
  done < ./j
}
sap_rec_holding() {
  # SAP_RH: the number of the commit's private directory holding ./$1, or
  # empty; with $2 (a physical path), only one of directory $2 counts: a
  # pin is named p/<the file's name>, unique only within its directory
  SAP_RH= sap_rh_j=0
  while [ $sap_rh_j -lt $SAP_ON ]; do
    sap_get OP_bare_$sap_rh_j
    sap_rh_in=$SAP_V
    if [ -z "$sap_rh_in" ] && [ -n "$2" ]; then sap_get OP_d_$sap_rh_j; sap_get DIR_$SAP_V; [ "$SAP_V" = "$2" ] || sap_rh_in=other; fi
    if [ -z "$sap_rh_in" ] && sap_ocd $sap_rh_j && { [ -f "./$1" ] || [ -L "./$1" ]; }; then SAP_RH=$sap_rh_j; return 0; fi
    sap_rh_j=$((sap_rh_j + 1))
  done
  return 1
}
sap_rec_undo_load() {
  sap_undo_fields $1
  sap_get RX_$sap_k
  if [ "$U_op" != add ] && [ "$SAP_V" = 1 ]; then
    sap_get R_name_$sap_k
    U_sn=$SAP_V
    sap_get R_dir_$sap_k
    U_sdir=$SAP_V
    if sap_rec_holding "p/$U_sn" "$U_sdir"; then U_oq=$SAP_RH U_pin=o
    elif sap_rec_holding c$1; then U_oq=$SAP_RH U_pin=c
    elif sap_rec_holding d$1; then U_oq=$SAP_RH U_pin=n
    fi
  fi
  case $U_op in
  add|move)
    sap_rl_k=$sap_k
    [ "$U_op" = move ] && { sap_get F_dst_$1; sap_rl_k=$SAP_V; }
    sap_get R_name_$sap_rl_k
    U_dn=$SAP_V
    sap_get R_dir_$sap_rl_k
    sap_rl_dd=$SAP_V
    # a file whose parents the commit created lives next to the copy of its stage
    sap_rl_j=0
    while [ $sap_rl_j -lt $SAP_TAN ]; do
      sap_get TA_i_$sap_rl_j
      if [ "$SAP_V" = "$1" ]; then sap_get TA_d_$sap_rl_j; [ "$SAP_V" = "$sap_rl_dd" ] && U_fd=$SAP_V; fi
      sap_rl_j=$((sap_rl_j + 1))
    done
    if [ -z "$U_fd" ]; then
      sap_rec_holding s$1 && U_sq=$SAP_RH
      # the directory of the name must be the one holding the stage's private directory
      if [ -n "$U_sq" ]; then sap_get OP_d_$U_sq; sap_get DIR_$SAP_V; [ "$SAP_V" = "$sap_rl_dd" ] || U_sq=; fi
    fi
    sap_get RX_$sap_rl_k
    [ "$SAP_V" = 1 ] || U_dn= ;;
  esac
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
sap_rec_drop() {
  # Remove the commit's private directory number $1 with everything in it
  # (ours: checked on entry; inside it only this operation ever created
  # anything), or a bare one the same way.
  sap_get OP_bare_$1
  if [ -n "$SAP_V" ]; then
    sap_get OP_p_$1
    sap_cd "$SAP_V" && [ -O . ] || { SAP_CLEAN_FAIL=1; return 0; }
  else
    sap_ocd $1 || { SAP_CLEAN_FAIL=1; return 0; }
  fi
  set +f
  set -- ./*
  set -f
  [ "$1" = "./*" ] && [ ! -e "./*" ] && set --
  [ $# -eq 0 ] || rm -rf "$@" 2>/dev/null || { SAP_CLEAN_FAIL=1; return 0; }
  cd -P . 2>/dev/null || { SAP_CLEAN_FAIL=1; return 0; }
  sap_rd_n=$\{PWD##*/}
  cd -P .. 2>/dev/null && rmdir "./$sap_rd_n" 2>/dev/null || SAP_CLEAN_FAIL=1
}
sap_rec_cleanup_locks() {
  # $1 directory index: remove every lock of ours there that names this
  # operation and whose owner is gone (left by its commit; the locks this
  # reconcile holds are alive), by sh_locks.ts's rules (sap_lock_break:
  # only the very lock judged)
  sap_cl_d=$1
  sap_get DIR_$1
  sap_cd "$SAP_V" || return 0
  set +f
  set -- ./.sap-lock-*
  set -f
  for sap_cl_e in "$@"; do
    sap_cl_b=$\{sap_cl_e#./}
    [ "$sap_cl_b" != ".sap-lock-*" ] || continue
    sap_pmake $sap_cl_d && sap_pcd $sap_cl_d || { SAP_CLEAN_FAIL=1; return 0; }
    sap_lock_examine $sap_cl_d "$sap_cl_b"
    [ -n "$LX_OURS" ] && [ "$LV" = dead ] || continue
    sap_owner_fields "$LX_OWNER"
    [ "$OW_OP" = "$SAP_OP" ] || continue
    sap_lock_break $sap_cl_d "$sap_cl_b" -
  done
}
sap_out "SAP-BEGIN reconcile"
SAP_ROOT_ARG=$1 SAP_OP=$2 SAP_WAIT_MS=$3 SAP_POLICY=$4
case $5 in 1) SAP_TRUST_ANC=1 SAP_RPIN=1 ;; 0|'') ;; *) sap_bad_input ancestors ;; esac
sap_isnum "$SAP_WAIT_MS" || sap_bad_input args
case $SAP_OP in ''|*[!A-Za-z0-9_]*) sap_bad_input operation ;; esac
case $SAP_POLICY in refuse|allow) ;; *) sap_bad_input policy ;; esac
sap_probe sha stat date link mvt id
sap_root "$1" || { sap_out "ROOT $SAP_ROOTERR"; SAP_STATUS=root; exit 0; }
umask 077
sap_identity
sap_read_manifest SAP-RECONCILE-2
sap_hook start
sap_trust_root "$SAP_ROOT_ARG" || { sap_out "ROOT unstable"; SAP_STATUS=root; exit 0; }
sap_dir_index "$SAP_R"
k=0
while [ $k -lt $SAP_M ]; do
  sap_get P_$k
  if sap_resolve "$SAP_V"; then
    sap_set R_dir_$k "$RP"
    sap_set R_name_$k "$RN"
    sap_set RX_$k "$RX"
    sap_dir_chain "$RP"
    sap_set PD_$k "$SAP_DI"
  fi
  k=$((k + 1))
done
sap_trust_check || { sap_out "ROOT unstable"; SAP_STATUS=root; exit 0; }
sap_trust_report "$SAP_POLICY" || { SAP_STATUS=unsafe; exit 0; }
SAP_DN0=$SAP_DN
d=0
while [ $d -lt $SAP_DN0 ]; do
  sap_rec_find $d
  d=$((d + 1))
done
if [ -n "$SAP_JP" ] && sap_ocd $SAP_JP; then sap_rec_journal; sap_out "JOURNAL $\{SAP_JDONE:-0}"; else SAP_JP=; sap_out "JOURNAL none"; fi
SAP_LOCK_SKIP_REFUSED=1
sap_op_lock
sap_lock_all
sap_hook locked
if [ -n "$SAP_JP" ] && [ -z "$SAP_JDONE" ]; then
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
      [ -n "$U_KEEP" ] && { sap_set KEEP_$i 1; sap_set KEEPQ_$i "$U_oq"; }
      sap_set UNDONE_$i 1
    fi
    i=$((i - 1))
  done
fi
k=0
while [ $k -lt $SAP_M ]; do
  sap_get PD_$k
  if [ -n "$SAP_V" ]; then sap_path_state $k; else PS_KIND=unknown PS_SHA=-; fi
  sap_out "PSTATE $k $PS_KIND $PS_SHA"
  k=$((k + 1))
done
# the only copy of a removed file whose name someone re-created: next to it
i=0
while [ $i -lt $SAP_N ]; do
  sap_get KEEP_$i
  if [ -n "$SAP_V" ]; then
    sap_get KEEPQ_$i
    sap_get F_src_$i
    sap_kk=$SAP_V
    if sap_ocd "$SAP_V" && sap_link ./d$i "../.sap-$SAP_OP-$i.bak" 2>/dev/null; then sap_out "KEPT $sap_kk"
    else SAP_CLEAN_FAIL=1; sap_set KEEPX_$i 1; fi
  fi
  i=$((i + 1))
done
sap_ta_j=0
while [ $sap_ta_j -lt $SAP_TAN ]; do
  sap_get TA_d_$sap_ta_j
  sap_ta_d=$SAP_V
  sap_get TA_n_$sap_ta_j
  { sap_cd "$sap_ta_d" && rm -f "./$SAP_V"; } 2>/dev/null || SAP_CLEAN_FAIL=1
  sap_ta_j=$((sap_ta_j + 1))
done
sap_oj=0
while [ $sap_oj -lt $SAP_ON ]; do
  sap_rec_drop $sap_oj
  sap_oj=$((sap_oj + 1))
done
d=0
while [ $d -lt $SAP_DN0 ]; do
  sap_rec_cleanup_locks $d
  d=$((d + 1))
done
# Last, once the locks inside them are gone: the parent directories the
# undone files' commit created, when empty, later files (deeper) first.
sap_lock_release_all
sap_pclean_all
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
