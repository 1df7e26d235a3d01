/**
 * The directory trust policy (SPEC §6.1), checked inside the snapshot,
 * commit and reconcile programs before anything is written (no extra
 * round trip).
 *
 * Which directories. The root's ancestors — every directory whose entries
 * decide where the root is: each one from `/` down, and, when the
 * configured root path goes through symlinks (followed once, the operator
 * chose them), the directories each link is resolved in, read with
 * `readlink` — and every directory from the root down to each path's
 * deepest existing directory (the write set: where the programs create,
 * rename and remove).
 *
 * When a directory is trusted: owned by root or the effective user, and
 * writable by nobody else:
 * - other-write → not trusted (`other`);
 * - group-write → trusted only when every member of the group is root or
 *   the effective user, and it has at least one (a group with no member is
 *   typically a setgid program's, which could write there). Membership is
 *   read from /etc/passwd (primary groups) and /etc/group (listed members),
 *   and only trusted when /etc/nsswitch.conf takes passwd and group from
 *   nothing but `files` / `compat` / `systemd` (with LDAP, SSSD, NIS or
 *   winbind the members cannot be known, so group-write is refused). This
 *   is conservative: a supplementary group given to a process by other
 *   means (a service's SupplementaryGroups=, a userdb membership) is not
 *   seen. A group-writable directory whose `ls -ld` shows an ACL (`+`) is
 *   refused too (`acl`): the mask is writable, so a named user or group may
 *   be (BusyBox `ls` shows no ACLs: there an ACL is not seen);
 * - owned by another uid → not trusted (`owner`: it can chmod it);
 * - sticky (`+t`) directories count as trusted ancestors (nobody can
 *   rename or remove what they do not own there, and the next directory
 *   down is checked for its owner), but not in the write set, where anyone
 *   could still create the names the programs are about to use.
 * Under sudo the effective user is root: a directory owned by the login
 * user is not trusted (as sudoedit refuses directories the invoking user
 * can write): processes of that user could swap its entries while root
 * works there.
 *
 * Output (policy `refuse`): per path k whose directories are not all
 * trusted, `UNSAFE k <reason> <mode> <uid> <gid> <hex path> <owner name>
 * <group name> <members>` for the topmost untrusted directory on its way
 * (ancestors first; names `-` when unknown, `?` when not printable;
 * members: the group's members other than root and the effective user,
 * comma-separated, for reason `group`); a later path through the same
 * directory gets `UNSAFE k = j` (j: the path whose line names it), which
 * keeps the reply within its bound; the program then stops before writing
 * anything. Policy
 * `allow`: `TRUST k shared` for those paths, and the program goes on with
 * its defence in depth (sh_private.ts). `DCT_n` = 1 when directory n and
 * every directory above it are trusted: only then do the programs use
 * absolute paths there (batches) or read and copy by name where a pin is
 * not possible.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** sap_trust_root, sap_trust_check, sap_trust_report. Needs sap_probe id stat. */
export const SH_TRUST: string = sh`
SAP_AN=0 SAP_ANS= SAP_NSS= SAP_TNAMES= SAP_ROOT_ID= SAP_DTC=0 SAP_DR0=- SAP_ANC0=- SAP_TRUST_ANC= SAP_RPIN=
SAP_PASSWD_DB=/etc/passwd SAP_GROUP_DB=/etc/group SAP_NSSWITCH=/etc/nsswitch.conf
sap_an_add() {
  case $SAP_ANS in *"$SAP_NL$1$SAP_NL"*) return 0 ;; esac
  SAP_ANS=$\{SAP_ANS:-$SAP_NL}$1$SAP_NL
  sap_set AN_$SAP_AN "$1"
  SAP_AN=$((SAP_AN + 1))
}
sap_trust_root() {
  # $1 the configured root. Walk it from / component by component,
  # resolving symlinks one hop at a time, and list every directory looked
  # in (AN_*). 1 when it does not end where sap_root did.
  sap_tr_rest=$1 sap_tr_cur= sap_tr_hops=0
  while :; do
    while :; do case $sap_tr_rest in /*) sap_tr_rest=$\{sap_tr_rest#/} ;; *) break ;; esac; done
    [ -n "$sap_tr_rest" ] || break
    case $sap_tr_rest in
    */*) sap_tr_c=$\{sap_tr_rest%%/*} sap_tr_rest=$\{sap_tr_rest#*/} ;;
    *) sap_tr_c=$sap_tr_rest sap_tr_rest= ;;
    esac
    case $sap_tr_c in
    .) continue ;;
    ..) sap_tr_cur=$\{sap_tr_cur%/*}; continue ;;
    esac
    sap_an_add "$\{sap_tr_cur:-/}"
    sap_tr_n=$sap_tr_cur/$sap_tr_c
    if [ -L "$sap_tr_n" ]; then
      sap_tr_hops=$((sap_tr_hops + 1))
      [ $sap_tr_hops -le 40 ] || return 1
      sap_probe readlink
      sap_tr_t=$(readlink "$sap_tr_n" 2>/dev/null) || return 1
      [ -n "$sap_tr_t" ] || return 1
      case $sap_tr_t in /*) sap_tr_cur= ;; esac
      sap_tr_rest=$sap_tr_t/$sap_tr_rest
      continue
    fi
    [ -d "$sap_tr_n" ] || return 1
    sap_tr_cur=$sap_tr_n
  done
  [ "$\{sap_tr_cur:-/}" = "$SAP_R" ]
}
sap_nss_files() {
  # Group membership is knowable only when NSS reads passwd and group from files.
  if [ -z "$SAP_NSS" ]; then
    SAP_NSS=1
    if [ -f "$SAP_NSSWITCH" ]; then
      while IFS= read -r sap_ns_l || [ -n "$sap_ns_l" ]; do
        case $sap_ns_l in
        passwd:*|group:*)
          for sap_ns_w in $\{sap_ns_l#*:}; do
            case $sap_ns_w in files|compat|systemd|\[*) ;; *) SAP_NSS=0 ;; esac
          done ;;
        esac
      done < "$SAP_NSSWITCH"
    fi
  fi
  [ "$SAP_NSS" = 1 ]
}
sap_trusted_names() {
  # SAP_TNAMES: the login names of root and the effective user (passwd).
  [ -z "$SAP_TNAMES" ] || return 0
  SAP_TNAMES=$SAP_NL
  while IFS=: read -r sap_tn_n sap_tn_p sap_tn_u sap_tn_r || [ -n "$sap_tn_n" ]; do
    case $sap_tn_u in 0|"$SAP_EUID") SAP_TNAMES=$SAP_TNAMES$sap_tn_n$SAP_NL ;; esac
  done < "$SAP_PASSWD_DB"
}
sap_name_word() { case $1 in ''|*[!A-Za-z0-9._-]*) SAP_NW="?" ;; *) SAP_NW=$1 ;; esac; }
sap_group_trusted() {
  # 0 when every member of group $1 is root or the effective user (and it
  # has one); GM_$1 lists the other members for messages.
  sap_get GT_$1
  if [ -n "$SAP_V" ]; then [ "$SAP_V" = 1 ]; return; fi
  sap_gt_gt=1 sap_gt_gm= sap_gt_members=0 sap_gt_found=0
  if sap_nss_files && [ -f "$SAP_PASSWD_DB" ] && [ -f "$SAP_GROUP_DB" ]; then
    sap_trusted_names
    while IFS=: read -r sap_gt_n sap_gt_p sap_gt_u sap_gt_g sap_gt_r || [ -n "$sap_gt_n" ]; do
      [ "$sap_gt_g" = "$1" ] || continue
      sap_gt_members=$((sap_gt_members + 1))
      case $sap_gt_u in
      0|"$SAP_EUID") ;;
      *) sap_gt_gt=0; sap_name_word "$sap_gt_n"; sap_gt_gm=$sap_gt_gm,$SAP_NW ;;
      esac
    done < "$SAP_PASSWD_DB"
    while IFS=: read -r sap_gt_n sap_gt_p sap_gt_g sap_gt_list || [ -n "$sap_gt_n" ]; do
      [ "$sap_gt_g" = "$1" ] || continue
      sap_gt_found=1
      sap_name_word "$sap_gt_n"
      sap_set GN_$1 "$SAP_NW"
      sap_gt_ifs=$IFS
      IFS=,
      for sap_gt_m in $sap_gt_list; do
        sap_gt_members=$((sap_gt_members + 1))
        case $SAP_TNAMES in
        *"$SAP_NL$sap_gt_m$SAP_NL"*) ;;
        *) sap_gt_gt=0; sap_name_word "$sap_gt_m"; sap_gt_gm=$sap_gt_gm,$SAP_NW ;;
        esac
      done
      IFS=$sap_gt_ifs
    done < "$SAP_GROUP_DB"
    [ $sap_gt_found = 1 ] && [ $sap_gt_members -gt 0 ] || sap_gt_gt=0
  else
    sap_gt_gt=0 sap_gt_gm=,?
  fi
  sap_set GT_$1 $sap_gt_gt
  sap_set GM_$1 "$\{sap_gt_gm#,}"
  [ $sap_gt_gt = 1 ]
}
sap_verdict() {
  # $1 mode (decimal, with file type), $2 uid, $3 gid, $4 1 for an
  # ancestor of the root: SAP_VR = "" (trusted), owner, other, group, or
  # acl? (group-writable by a trusted group: an ACL may still grant write).
  SAP_VR=
  if [ "$2" != 0 ] && [ "$2" != "$SAP_EUID" ]; then SAP_VR=owner; return 0; fi
  [ "$4" = 1 ] && [ $(( $1 & 512 )) != 0 ] && return 0
  if [ $(( $1 & 2 )) != 0 ]; then SAP_VR=other; return 0; fi
  [ $(( $1 & 16 )) != 0 ] || return 0
  if sap_group_trusted "$3"; then SAP_VR=acl?; else SAP_VR=group; fi
}
sap_trust_check() {
  # One stat of every ancestor (AN_*), the root and every directory of the
  # table not checked yet (from SAP_DTC on: a program that reads its paths
  # in parts calls this once per part): AR_n / DR_n the reason a directory
  # is not trusted ("" = trusted), with its mode, uid and gid; DCT_n;
  # SAP_ROOT_ID (device:inode of the root; 1 when it changed since the
  # last call). The operand list comes from one command substitution
  # (growing "$@" one operand at a time costs the square of their number).
  sap_tc_list=$(sap_tc_n=0
    while [ $sap_tc_n -lt $SAP_AN ]; do sap_get AN_$sap_tc_n; sap_out "$SAP_V"; sap_tc_n=$((sap_tc_n + 1)); done
    sap_out "$DIR_0"
    sap_tc_n=$SAP_DTC
    [ $sap_tc_n -gt 0 ] || sap_tc_n=1
    while [ $sap_tc_n -lt $SAP_DN ]; do sap_get DIR_$sap_tc_n; sap_out "$SAP_V"; sap_tc_n=$((sap_tc_n + 1)); done)
  sap_tc_ifs=$IFS
  IFS=$SAP_NL
  set -- $sap_tc_list
  IFS=$sap_tc_ifs
  sap_tc_nt=$#
  case $SAP_STAT in
  gnu) sap_tc_all=$(stat -c '%f %u %g %d %i' "$@" 2>/dev/null) ;;
  *) sap_tc_all=$(stat -f '%p %u %g %d %i' "$@" 2>/dev/null) ;;
  esac || return 1
  sap_tc_ifs=$IFS
  IFS=$SAP_NL
  set -- $sap_tc_all
  IFS=$sap_tc_ifs
  [ $# -eq $sap_tc_nt ] || return 1
  sap_tc_n=0 SAP_ACLQ= sap_tc_d0=$SAP_DTC
  [ $sap_tc_d0 -gt 0 ] || sap_tc_d0=1
  for sap_tc_l in "$@"; do
    set -- $sap_tc_l
    [ $# -eq 5 ] || return 1
    case $SAP_STAT in gnu) sap_tc_m=$(( 0x$1 )) ;; *) sap_tc_m=$(( 0$1 )) ;; esac
    if [ $sap_tc_n -lt $SAP_AN ]; then sap_tc_x=A sap_tc_i=$sap_tc_n sap_tc_anc=1
    elif [ $sap_tc_n = $SAP_AN ]; then sap_tc_x=D sap_tc_i=0 sap_tc_anc=0
    else sap_tc_x=D sap_tc_i=$((sap_tc_n - SAP_AN - 1 + sap_tc_d0)) sap_tc_anc=0; fi
    [ $(( sap_tc_m >> 12 & 15 )) = 4 ] || return 1
    sap_verdict $sap_tc_m "$2" "$3" $sap_tc_anc
    [ "$SAP_VR" = "acl?" ] && { SAP_ACLQ="$SAP_ACLQ $sap_tc_x$sap_tc_i"; SAP_VR=; }
    sap_set $\{sap_tc_x}R_$sap_tc_i "$SAP_VR"
    sap_set $\{sap_tc_x}M_$sap_tc_i $(( sap_tc_m & 4095 ))
    sap_set $\{sap_tc_x}U_$sap_tc_i "$2"
    sap_set $\{sap_tc_x}G_$sap_tc_i "$3"
    if [ $sap_tc_x$sap_tc_i = D0 ]; then
      [ -z "$SAP_ROOT_ID" ] || [ "$SAP_ROOT_ID" = "$4:$5" ] || return 1
      SAP_ROOT_ID=$4:$5
    fi
    sap_tc_n=$((sap_tc_n + 1))
  done
  [ -z "$SAP_ACLQ" ] || sap_trust_acl
  SAP_ANC_OK=1
  sap_tc_n=0
  while [ $sap_tc_n -lt $SAP_AN ]; do
    sap_get AR_$sap_tc_n
    [ -z "$SAP_V" ] || { SAP_ANC_OK=0; break; }
    sap_tc_n=$((sap_tc_n + 1))
  done
  # the root's verdict may have changed: recompute every DCT only then
  sap_tc_n=$SAP_DTC
  [ "$DR_0" = "$SAP_DR0" ] && [ "$SAP_ANC_OK" = "$SAP_ANC0" ] || sap_tc_n=0
  SAP_DR0=$DR_0 SAP_ANC0=$SAP_ANC_OK
  [ $sap_tc_n -gt 0 ] || while [ $sap_tc_n -lt $SAP_DTC ]; do unset DCT_$sap_tc_n; sap_tc_n=$((sap_tc_n + 1)); done
  sap_tc_n=0
  while [ $sap_tc_n -lt $SAP_DN ]; do
    sap_trust_dct $sap_tc_n
    sap_tc_n=$((sap_tc_n + 1))
  done
  SAP_DTC=$SAP_DN
}
sap_trust_dct() {
  # DCT_$1: 1 when directory $1 and every directory above it up to / can
  # be written only by the effective user and root. From its parent's
  # (DPAR_n, computed first); a directory registered without its chain is
  # walked up by path.
  sap_get DCT_$1
  [ -z "$SAP_V" ] || return 0
  sap_get DR_$1
  if [ "$SAP_ANC_OK" != 1 ] || [ -n "$SAP_V" ]; then sap_set DCT_$1 0; return 0; fi
  if [ "$1" = 0 ]; then sap_set DCT_$1 1; return 0; fi
  sap_get DPAR_$1
  case $SAP_V in
  ''|-)
    sap_get DIR_$1
    sap_td_d=$SAP_V sap_td_t=1
    while :; do
      sap_dir_index "$sap_td_d"
      sap_get DR_$SAP_DI
      [ -z "$SAP_V" ] || { sap_td_t=0; break; }
      [ "$sap_td_d" = "$SAP_R" ] && break
      sap_td_d=$\{sap_td_d%/*}
      [ -n "$sap_td_d" ] || sap_td_d=/
    done
    sap_set DCT_$1 $sap_td_t ;;
  *)
    sap_trust_dct $SAP_V
    # the call used the same globals: the parent is read again by $1
    sap_get DPAR_$1
    sap_get DCT_$SAP_V
    sap_set DCT_$1 "$SAP_V" ;;
  esac
}
sap_trust_acl() {
  # group-writable by a trusted group: refuse when ls shows an ACL. One ls
  # per directory: ls sorts its operands, so the lines of one ls over all
  # of them cannot be matched to the queue by position (rare: only
  # group-writable directories of a trusted group get here). A directory
  # ls cannot show any more (it just vanished) is not trusted either.
  for sap_ta_q in $SAP_ACLQ; do
    case $sap_ta_q in A*) sap_get AN_$\{sap_ta_q#A} ;; *) sap_get DIR_$\{sap_ta_q#D} ;; esac
    sap_ta_l=$(ls -ld "$SAP_V" 2>/dev/null)
    case $sap_ta_l in ??????????[+]*|'') sap_set $\{sap_ta_q%%[0-9]*}R_$\{sap_ta_q#?} acl ;; esac
  done
}
sap_hex() {
  sap_hx_h=$(printf '%s' "$1" | od -An -v -tx1 2>/dev/null)
  SAP_HEX=
  for sap_hx_b in $sap_hx_h; do SAP_HEX=$SAP_HEX$sap_hx_b; done
  [ -n "$SAP_HEX" ] || SAP_HEX=2f
}
sap_unsafe_line() {
  # $1 path index, $2 A|D, $3 index: the UNSAFE line for that directory
  # ($4: the reason, when not its trust verdict)
  sap_get $2R_$3
  sap_ul_r=$\{4:-$SAP_V}
  sap_get $2M_$3
  sap_octal "$SAP_V"
  sap_ul_mo=$SAP_OCT
  sap_get $2U_$3
  sap_ul_u=$SAP_V
  sap_get $2G_$3
  sap_ul_g=$SAP_V
  if [ "$2" = A ]; then sap_get AN_$3; else sap_get DIR_$3; fi
  sap_hex "$SAP_V"
  sap_ul_on=- sap_ul_gn=-
  while IFS=: read -r sap_ul_n sap_ul_p sap_ul_x sap_ul_rest || [ -n "$sap_ul_n" ]; do
    [ "$sap_ul_x" = "$sap_ul_u" ] && { sap_name_word "$sap_ul_n"; sap_ul_on=$SAP_NW; break; }
  done < "$SAP_PASSWD_DB" 2>/dev/null
  while IFS=: read -r sap_ul_n sap_ul_p sap_ul_x sap_ul_rest || [ -n "$sap_ul_n" ]; do
    [ "$sap_ul_x" = "$sap_ul_g" ] && { sap_name_word "$sap_ul_n"; sap_ul_gn=$SAP_NW; break; }
  done < "$SAP_GROUP_DB" 2>/dev/null
  case $sap_ul_r in
  group)
    sap_get GM_$sap_ul_g
    sap_ul_who=$\{SAP_V:--} ;;
  *) sap_ul_who=- ;;
  esac
  sap_out "UNSAFE $1 $sap_ul_r $sap_ul_mo $sap_ul_u $sap_ul_g $SAP_HEX $sap_ul_on $sap_ul_gn $sap_ul_who"
}
sap_trust_report() {
  # $1 policy, then per path index sap_tp_k (PD_k: its deepest existing directory)
  # from $2 (default 0) to before $3 (default SAP_M):
  # UNSAFE or TRUST lines. 1 when the policy refuses something.
  sap_tp_bad=0 sap_tp_k=$\{2:-0} sap_tp_e=$\{3:-$SAP_M} sap_tp_pol=$1
  # A directory above the root that another user can write (no sticky
  # bit to protect the root's name) lets that user put another directory
  # at the root's path at any moment: refused in every policy, unless the
  # caller accepted it (SAP_TRUST_ANC: then every directory is handled as
  # shared, and sap_cd checks the root's identity at each entry).
  [ "$SAP_ANC_OK" = 1 ] || [ "$SAP_TRUST_ANC" = 1 ] || sap_tp_pol=refuse
  while [ $sap_tp_k -lt $sap_tp_e ]; do
    sap_get PD_$sap_tp_k
    if [ -n "$SAP_V" ]; then
      sap_get DCT_$SAP_V
      if [ "$SAP_V" != 1 ]; then
        if [ "$sap_tp_pol" = allow ]; then
          sap_out "TRUST $sap_tp_k shared"
        else
          sap_tp_bad=1
          sap_trust_first $sap_tp_k
          # one full line per directory; later paths through it refer to the first
          sap_get UL_$SAP_TX$SAP_TI
          if [ -n "$SAP_V" ]; then sap_out "UNSAFE $sap_tp_k = $SAP_V"
          else
            sap_unsafe_line $sap_tp_k $SAP_TX $SAP_TI
            sap_set UL_$SAP_TX$SAP_TI $sap_tp_k
          fi
        fi
      fi
    fi
    sap_tp_k=$((sap_tp_k + 1))
  done
  [ $sap_tp_bad = 0 ]
}
sap_trust_first() {
  # SAP_TX SAP_TI: the topmost untrusted directory on path $1's way
  sap_tf_n=0
  while [ $sap_tf_n -lt $SAP_AN ]; do
    sap_get AR_$sap_tf_n
    [ -n "$SAP_V" ] && { SAP_TX=A SAP_TI=$sap_tf_n; return 0; }
    sap_tf_n=$((sap_tf_n + 1))
  done
  sap_get PD_$1
  sap_tf_i=$SAP_V SAP_TX=D SAP_TI=0
  while :; do
    sap_get DR_$sap_tf_i
    [ -n "$SAP_V" ] && SAP_TI=$sap_tf_i
    [ "$sap_tf_i" != 0 ] || break
    sap_get DPAR_$sap_tf_i
    case $SAP_V in ''|-) break ;; esac
    sap_tf_i=$SAP_V
  done
}
`;
