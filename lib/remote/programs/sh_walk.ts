/**
 * The directory walk shared by the discovery programs (list and search):
 * breadth first below one verified directory, never following a symlink.
 *
 * - `sap_start_dir REL` resolves the directory to walk with the §6 walk of
 *   sh_common.ts (`sap_resolve`: no symlink component, inside the root) and
 *   enters it; REL empty means the root itself. On success `SD` is its
 *   physical path. On failure it prints `REJECT <code> <depth>` (a
 *   refused component) or `NOTDIR <kind>` and returns 1.
 * - `sap_walk_start ABS REL [FLAG]` seeds the queue; `sap_walk_next` pops
 *   the next directory into `WD` (physical path), `WR` (root-relative path,
 *   empty for the root), `WL` (its depth below the start, 0 for the start
 *   itself) and `WT` (the caller's flag, default 0), and returns 1 when the
 *   queue is empty; `sap_walk_push ABS REL DEPTH [FLAG]` queues a
 *   subdirectory.
 * - `sap_walk_enter` enters `WD` through `sap_cd` (physical path compared
 *   with the one recorded when the directory was queued): a directory
 *   swapped for a symlink since is noticed, not followed.
 * - `sap_dir_names` lists the names of the current directory (dot files
 *   included) into `N_0 … N_<SAP_NC-1>`; `sap_kind NAME` sets `SAP_K` to
 *   symlink, directory, file or other without following anything (a
 *   symlink is tested first).
 * - `sap_stat_batch COUNT` stats the names `C_n_0 …` of the current
 *   directory (never following a symlink) in few `stat` runs.
 * - `sap_rec TYPE REL` prints a record whose last field is a path: the
 *   line `TYPE <REL bytes>` ends with a NUL before its newline, because a
 *   name may hold any byte but NUL (newlines and control characters
 *   included). The client reads such records up to the NUL.
 *
 * Names starting with `.sap-` (the engine's own temporaries and locks)
 * are left out: no tool may address them (lib/remote/manifest.ts).
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/**
 * The queue of the walk, a record printer and the child path: what a walk
 * that lists names itself needs (the snapshot's walk near missing paths,
 * sh_near.ts), without the list and search helpers below.
 */
export const SH_WALK_QUEUE: string = sh`
WQH=0 WQT=0
sap_rec() { printf '%s %s\000\n' "$1" "$2"; }
sap_walk_push() {
  sap_set WQ_d_$WQT "$1"
  sap_set WQ_r_$WQT "$2"
  sap_set WQ_l_$WQT "$3"
  sap_set WQ_t_$WQT "$\{4-0}"
  WQT=$((WQT + 1))
}
sap_walk_start() { WQH=0 WQT=0; sap_walk_push "$1" "$2" 0 "$\{3-0}"; }
sap_walk_next() {
  [ $WQH -lt $WQT ] || return 1
  sap_get WQ_d_$WQH; WD=$SAP_V
  sap_get WQ_r_$WQH; WR=$SAP_V
  sap_get WQ_l_$WQH; WL=$SAP_V
  sap_get WQ_t_$WQH; WT=$SAP_V
  unset WQ_d_$WQH WQ_r_$WQH WQ_l_$WQH WQ_t_$WQH
  WQH=$((WQH + 1))
}
sap_walk_enter() { sap_cd "$WD"; }
sap_child_rel() { if [ -z "$WR" ]; then SAP_CR=$1; else SAP_CR=$WR/$1; fi; }
`;

/** Walk functions (need SH_PRELUDE, SH_STAT_SHA and SH_PATHS before them). */
export const SH_WALK: string = SH_WALK_QUEUE + sh`
sap_start_dir() {
  if [ -z "$1" ]; then SD=$SAP_R; sap_cd "$SD" || { sap_out "REJECT permission_denied 0"; return 1; }; return 0; fi
  if ! sap_resolve "$1"; then
    sap_out "REJECT $RJ $RD"
    return 1
  fi
  [ "$RK" = directory ] || { sap_out "NOTDIR $RK"; return 1; }
  sap_join "$RP" "$RN"
  SD=$SAP_J1
  if ! sap_cd "$SD"; then
    if [ -d "$SD" ] && ! [ -L "$SD" ]; then sap_out "REJECT permission_denied 0"; else sap_out "REJECT conflict 0"; fi
    return 1
  fi
}
sap_dir_names() {
  SAP_NC=0
  set +f
  set -- * .[!.]* ..?*
  set -f
  for sap_n in "$@"; do
    [ -e "./$sap_n" ] || [ -L "./$sap_n" ] || continue
    case $sap_n in .sap-*) continue ;; esac
    sap_set N_$SAP_NC "$sap_n"
    SAP_NC=$((SAP_NC + 1))
  done
}
sap_kind() {
  if [ -L "./$1" ]; then SAP_K=symlink
  elif [ -d "./$1" ]; then SAP_K=directory
  elif [ -f "./$1" ]; then SAP_K=file
  else SAP_K=other; fi
}
sap_stat_batch() {
  # The names C_n_0 … C_n_<$1 - 1> of the current directory: CZ_j CM_j CT_j
  # CU_j (size, mode, mtime, uid; empty when it could not be stat'ed), one
  # stat per 256 names; entry by entry only when a batch comes back short
  # (a name vanished meanwhile).
  sap_sb=0
  while [ $sap_sb -lt $1 ]; do
    sap_se=$((sap_sb + 256))
    [ $sap_se -le $1 ] || sap_se=$1
    set --
    sap_j=$sap_sb
    while [ $sap_j -lt $sap_se ]; do sap_get C_n_$sap_j; set -- "$@" "./$SAP_V"; sap_j=$((sap_j + 1)); done
    case $SAP_STAT in
    gnu) sap_all=$(stat -c '%s %f %u %g %h %Y %i' "$@" 2>/dev/null) ;;
    *) sap_all=$(stat -f '%z %p %u %g %l %m %i' "$@" 2>/dev/null) ;;
    esac
    sap_ok=$?
    sap_ifs=$IFS
    IFS=$SAP_NL
    set -- $sap_all
    IFS=$sap_ifs
    sap_j=$sap_sb
    if [ $sap_ok -eq 0 ] && [ $# -eq $((sap_se - sap_sb)) ]; then
      for sap_l in "$@"; do
        if sap_stat_parse "$sap_l"; then sap_stat_keep_c $sap_j; else sap_stat_keep_c $sap_j -; fi
        sap_j=$((sap_j + 1))
      done
    else
      while [ $sap_j -lt $sap_se ]; do
        sap_get C_n_$sap_j
        if sap_stat "./$SAP_V"; then sap_stat_keep_c $sap_j; else sap_stat_keep_c $sap_j -; fi
        sap_j=$((sap_j + 1))
      done
    fi
    sap_sb=$sap_se
  done
}
sap_stat_keep_c() {
  if [ $# -eq 2 ]; then ST_SIZE= ST_MODE= ST_MTIME= ST_UID=; fi
  sap_set CZ_$1 "$ST_SIZE"
  sap_set CM_$1 "$ST_MODE"
  sap_set CT_$1 "$ST_MTIME"
  sap_set CU_$1 "$ST_UID"
}
`;
