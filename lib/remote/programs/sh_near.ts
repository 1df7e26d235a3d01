/**
 * Names near a missing path, in the snapshot program's own run (issue 29.1:
 * `src/Parse.ts` for `src/parse.ts` must cost no extra round trip).
 *
 * Which paths. The client marks a path it needs to exist (an Update or
 * Delete source) with a third word `n` on its hint line; when such a path
 * turns out missing (`S k missing …`), `sap_near_note` remembers that a
 * walk is wanted, and that path's deepest existing directory (at most 8
 * distinct ones) as a place to list first.
 *
 * The walk (`sap_near_run`, once, after every path was reported): those
 * directories, then breadth first from the root, printing the root-relative
 * path of every regular file seen as `NF <path>` NUL newline (a name may
 * hold any byte but NUL), then `NEAR <entries seen> <complete 0|1>`. The
 * client ranks them (lib/text/closest_path.ts: case, Unicode normalisation,
 * the same base name elsewhere); the host only lists names.
 *
 * Bounded by the program's arguments: at most `$5` entries looked at
 * (0: never walk), `$6` levels below the root, `$7` seconds (checked every
 * 16 directories; `date +%s`). `.git`, `node_modules` and the engine's own
 * `.sap-*` names are not entered: a patch path is rarely inside them and
 * they would eat the budget.
 *
 * Safety (SPEC §6.1). A listing opens and reads no file: names come from
 * the shell's glob, kinds from `test -L` first (a symlink is never
 * followed, never listed, never entered), then `-d` / `-f`. A directory is
 * entered only through `sap_cd` (physical path compared with the one
 * recorded: a directory swapped for a link meanwhile is skipped), and only
 * when its name is in a directory nobody else can write. Each directory's
 * own mode, owner and group (one `stat` for up to 256 queued directories,
 * by absolute path: every component of it is such a name) are judged by
 * the programs' trust rule
 * (`sap_verdict`, sh_trust.ts; an unconfirmed ACL counts as untrusted): a
 * directory others can write is not listed at all under policy `refuse`
 * (a path there would be refused anyway), and under `allow` its files are
 * listed but nothing below it is entered (its entries' names are someone
 * else's to swap). With the root's ancestors not trusted, only the root
 * itself is listed.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** sap_near_note, sap_near_run (need SH_WALK_QUEUE, SH_TRUST and sap_probe stat id). */
export const SH_NEAR: string = sh`
SAP_NEAR= SAP_NEAR_SN=0 SAP_NEAR_SEEDS=
sap_near_note() {
  # $1: path index, reported missing; NN_k: the client needs it to exist
  sap_get NN_$1
  [ -n "$SAP_V" ] && [ "$SAP_NEAR_MAX" -gt 0 ] || return 0
  SAP_NEAR=1
  [ $SAP_NEAR_SN -lt 8 ] || return 0
  sap_get PD_$1
  sap_get DIR_$SAP_V
  sap_nn_d=$SAP_V
  # the root is walked first anyway
  [ -n "$sap_nn_d" ] && [ "$sap_nn_d" != "$SAP_R" ] || return 0
  case $sap_nn_d in "$SAP_B"/*) ;; *) return 0 ;; esac
  case $SAP_NEAR_SEEDS in *"$SAP_NL$sap_nn_d$SAP_NL"*) return 0 ;; esac
  SAP_NEAR_SEEDS=$\{SAP_NEAR_SEEDS:-$SAP_NL}$sap_nn_d$SAP_NL
  sap_set NSD_$SAP_NEAR_SN "$sap_nn_d"
  SAP_NEAR_SN=$((SAP_NEAR_SN + 1))
}
sap_near_trust() {
  # SAP_NT: 1 when the current directory (just entered) is trusted by itself
  sap_stat . || { SAP_NT=0; return 0; }
  sap_near_verdict $(( ST_TYPE << 12 | ST_MODE )) "$ST_UID" "$ST_GID"
}
sap_near_verdict() {
  # $1 mode (with the file type), $2 uid, $3 gid: SAP_NT
  sap_verdict "$1" "$2" "$3" 0
  if [ -z "$SAP_VR" ] && [ "$SAP_ANC_OK" = 1 ] && [ -z "$SAP_TRUST_ANC" ]; then SAP_NT=1; else SAP_NT=0; fi
}
sap_near_judge() {
  # The queued directories from WQH on whose trust is not judged yet (flag
  # ?), up to 256: one stat of all of them (absolute paths: every
  # component is a name in a directory nobody else can write, which is why
  # they were queued), flag t (trusted) or u. A short answer (one vanished)
  # leaves them ?, judged one by one when entered.
  set --
  sap_nj_i=$WQH
  while [ $sap_nj_i -lt $WQT ] && [ $# -lt 256 ]; do
    sap_get WQ_t_$sap_nj_i
    [ "$SAP_V" = "?" ] || break
    sap_get WQ_d_$sap_nj_i
    set -- "$@" "$SAP_V"
    sap_nj_i=$((sap_nj_i + 1))
  done
  sap_nj_n=$#
  [ $sap_nj_n -gt 0 ] || return 0
  case $SAP_STAT in
  gnu) sap_nj_all=$(stat -c '%f %u %g' "$@" 2>/dev/null) ;;
  *) sap_nj_all=$(stat -f '%p %u %g' "$@" 2>/dev/null) ;;
  esac || return 0
  sap_ifs=$IFS
  IFS=$SAP_NL
  set -- $sap_nj_all
  IFS=$sap_ifs
  [ $# -eq $sap_nj_n ] || return 0
  sap_nj_i=$WQH
  for sap_nj_l in "$@"; do
    set -- $sap_nj_l
    sap_nj_f=u
    if [ $# -eq 3 ] && sap_isnum "$2" && sap_isnum "$3"; then
      case $SAP_STAT in gnu) sap_nj_m=$(( 0x$1 )) ;; *) sap_nj_m=$(( 0$1 )) ;; esac
      if [ $(( sap_nj_m >> 12 & 15 )) = 4 ]; then
        sap_near_verdict $sap_nj_m "$2" "$3"
        [ $SAP_NT = 0 ] || sap_nj_f=t
      fi
    fi
    sap_set WQ_t_$sap_nj_i $sap_nj_f
    sap_nj_i=$((sap_nj_i + 1))
  done
}
sap_near_list() {
  # The current directory WD (root-relative WR, depth WL, WT: t or u as
  # judged by sap_near_judge, ? not judged, s for a seed, which is judged
  # here and listed but not descended from): NF records, subdirectories queued.
  case $WT in t) SAP_NT=1 ;; u) SAP_NT=0 ;; *) sap_near_trust ;; esac
  [ $SAP_NT = 1 ] || [ "$SAP_POLICY" = allow ] || return 0
  sap_nl_down=0
  [ $SAP_NT = 1 ] && [ "$WT" != s ] && [ $((WL + 1)) -lt $SAP_NEAR_DEPTH ] && sap_nl_down=1
  set +f
  set -- * .[!.]* ..?*
  set -f
  for sap_nl_n in "$@"; do
    [ -L "./$sap_nl_n" ] && continue
    [ -e "./$sap_nl_n" ] || continue
    case $sap_nl_n in .sap-*) continue ;; esac
    if [ "$SAP_NEAR_SEEN" -ge "$SAP_NEAR_MAX" ]; then SAP_NEAR_DONE=0; return 1; fi
    SAP_NEAR_SEEN=$((SAP_NEAR_SEEN + 1))
    sap_child_rel "$sap_nl_n"
    if [ -f "./$sap_nl_n" ]; then
      sap_rec NF "$SAP_CR"
    elif [ $sap_nl_down = 1 ] && [ -d "./$sap_nl_n" ]; then
      case $sap_nl_n in .git|node_modules) continue ;; esac
      sap_join "$WD" "$sap_nl_n"
      sap_walk_push "$SAP_J1" "$SAP_CR" $((WL + 1)) "?"
    fi
  done
}
sap_near_run() {
  [ -n "$SAP_NEAR" ] || return 0
  SAP_NEAR_SEEN=0 SAP_NEAR_DONE=1 sap_nr_dirs=0
  sap_probe date
  sap_nr_end=$(( $(date +%s) + SAP_NEAR_SECS ))
  WQH=0 WQT=0
  sap_nr_i=0
  while [ $sap_nr_i -lt $SAP_NEAR_SN ]; do
    sap_get NSD_$sap_nr_i
    sap_walk_push "$SAP_V" "$\{SAP_V#"$SAP_B"/}" 0 s
    sap_nr_i=$((sap_nr_i + 1))
  done
  sap_walk_push "$SAP_R" "" 0 "?"
  while :; do
    # the next directories' trust, judged in one stat for up to 256 of them
    sap_get WQ_t_$WQH
    [ "$SAP_V" != "?" ] || sap_near_judge
    sap_walk_next || break
    sap_nr_dirs=$((sap_nr_dirs + 1))
    if [ $((sap_nr_dirs % 16)) = 0 ] && [ "$(date +%s)" -ge $sap_nr_end ]; then SAP_NEAR_DONE=0; break; fi
    sap_walk_enter || continue
    sap_near_list || break
  done
  # the rest of the queue is not walked
  while sap_walk_next; do SAP_NEAR_DONE=0; done
  sap_out "NEAR $SAP_NEAR_SEEN $SAP_NEAR_DONE"
}
`;
