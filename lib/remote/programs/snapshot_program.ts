/**
 * The snapshot program: one exec reads every path of a patch.
 *
 * Arguments: `<root> <max file bytes> <refuse|allow> <trust ancestors 0|1>
 * <near entries> <near depth> <near seconds>`. Stdin:
 * `SAP-SNAPSHOT-5`, `K <secret>`, `N <nonce>`, `Z <codecs|-> <min bytes>`,
 * `L <euid|-> <min bytes>`, the number of paths M, the number of hint
 * lines h, h lines `<k> <sha256|-> <size|-> [n]` in path order (a content
 * the client already holds for path k; `n`: the client needs the path to
 * exist), then the M paths. Stdout:
 * - `HAVE <tools>`: which of base64, gzip, zstd the host has;
 * - `ROOTID <device>:<inode>` of the root (the commit checks it is the
 *   same directory, so a root swapped between the calls is refused);
 * - the trust lines of sh_trust.ts: `UNSAFE k …` (policy refuse: the path
 *   is not read at all, that line is its whole report) or `TRUST k shared`;
 * - per path index k:
 *   `S k <kind> <size|-> <mode|-> <uid|-> <gid|-> <nlink|-> <parent exists 0|1>`
 *   followed, when size is not `-`, by exactly `size` raw bytes and the
 *   line `E <nonce>` — unless a line before it said otherwise: `H k` (the
 *   file hashes to the content the client named: no bytes follow) or
 *   `Z k <codec> <sha256>` (a compressed stream follows, ended by
 *   `\nE <nonce>`, then `F k` if the compressor failed; sh_snapshot_wire.ts)
 *   or `L k <inode> <mtime>` (handed over: the client reads the file
 *   itself; sh_snapshot_wire.ts);
 *   or `R k <code> <detail>` when the path is refused
 *   (§6, permissions, limit, a shared directory where the file cannot be
 *   pinned: `unpinnable`, or, when the pin's write was refused,
 *   `no_space` (after a `SPACE k <free bytes|->` line),
 *   `read_only_filesystem` or `pin_denied`: sh_faults.ts); a component
 *   refusal has no `S` line;
 * - `REAP k <n>`: making the private directory for path k's pin removed
 *   n leftovers of killed snapshots and searches in its directory
 *   (sh_reap.ts);
 * - after all paths, `C k` for every file that changed while it was read;
 * - when a path marked `n` on its hint line (the client needs it) was
 *   missing: `NF <path>` NUL newline per regular file of a bounded walk,
 *   then `NEAR <entries seen> <complete 0|1>` (sh_near.ts; arguments `$5`
 *   entries, `$6` depth, `$7` seconds);
 * then `SAP-END ok`. Many plain small files come instead as one `BULK`
 * block (sh_snapshot_bulk.ts). `ROOT <reason>` and `UNSUPPORTED <tool>` end early.
 *
 * Where the bytes come from. In a directory that only the effective user
 * and root can write (up to `/`), nobody else can swap the name, so the
 * file is read by name. In a shared directory (policy allow) the file is
 * first pinned — hard-linked into the program's private directory there
 * (sh_private.ts), which opens nothing and does not follow a symlink — and
 * the pin is checked to be a regular file that the name still is, then
 * measured and read: the bytes are always those of the inode that was
 * inside the root, whatever the name is swapped for meanwhile. A file that
 * cannot be pinned there (fs.protected_hardlinks refuses a hard link to a
 * file of another user; no write permission in that directory; a full or
 * read-only file system, each told as what it is) is refused rather than
 * read by name.
 *
 * No copy. The size is taken by one `stat` of all files (absolute paths
 * where trusted, the pins otherwise), exactly that many bytes are sent
 * (`head -c`, or `dd` of whole 64 KiB blocks and `head -c` of the rest),
 * then a second `stat` of the same entries tells which changed while they
 * were read (`C k`: the client refuses those snapshots as `conflict`). A
 * file that shrank while being read makes the output shorter than its
 * header says; the `E <nonce>` after each file — a nonce from stdin that
 * no file can contain by chance or design — then lands in the wrong place
 * and the client rejects the output instead of misreading it.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** Main part of the snapshot program (needs the common, trust and private functions before it). */
export const SH_SNAPSHOT_MAIN: string = sh`
SAP_STATUS= SAP_OP=snap. SAP_HEAD= SAP_DD= SAP_REAP=1
sap_snap_exit() {
  trap '' HUP INT TERM
  sap_pclean_all
  # a private directory someone else moved out of reach (sh_private.ts,
  # sap_pfind): told, with a path read through it (KEPT k)
  for sap_se_n in $SAP_PKEPT; do
    sap_get DPK_$sap_se_n
    [ -n "$SAP_V" ] || continue
    sap_get KP_$SAP_V
    [ -n "$SAP_V" ] && continue
    sap_get DPK_$sap_se_n
    sap_set KP_$SAP_V 1
    sap_out "KEPT $SAP_V"
  done
  [ -n "$SAP_STATUS" ] || SAP_STATUS=interrupted
  sap_out "SAP-END $SAP_STATUS"
}
trap 'sap_snap_exit' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
sap_send() {
  # exactly $2 bytes of the regular file $1 (fewer only when it shrank)
  [ "$2" -gt 0 ] || return 0
  [ -n "$SAP_HEAD" ] || { sap_probe head; SAP_HEAD=1; }
  if [ "$2" -lt 65536 ]; then head -c "$2" < "$1"; return; fi
  [ -n "$SAP_DD" ] || { sap_probe dd; SAP_DD=1; }
  sap_sq=$(( $2 / 65536 )) sap_sr=$(( $2 % 65536 ))
  { dd bs=65536 count=$sap_sq 2>/dev/null; [ $sap_sr = 0 ] || head -c $sap_sr; } < "$1"
}
sap_snap_resolve() {
  # $1 path index: RK_k RX_k, RJ_k RD_k (refused), PD_k (directory index), N_k (name)
  sap_get P_$1
  if sap_resolve "$SAP_V"; then
    sap_set RK_$1 "$RK"
    sap_set RX_$1 "$RX"
    sap_set N_$1 "$RN"
    sap_dir_chain "$RP"
    sap_set PD_$1 "$SAP_DI"
  else
    sap_set RK_$1 "$\{RK:-refused}"
    sap_set RJ_$1 "$RJ"
    sap_set RD_$1 "$RD"
  fi
}
sap_snap_prepare() {
  # $1 path index: queue its stat (SQ_k = queue position), pinning first in
  # a shared directory. SR_k: a refusal decided here.
  sap_get RK_$1
  sap_sk=$SAP_V
  case $sap_sk in missing|refused|symlink) return 0 ;; esac
  sap_get PD_$1
  sap_sn=$SAP_V
  sap_get DCT_$sap_sn
  if [ "$SAP_V" != 1 ]; then
    [ "$SAP_POLICY" = allow ] || return 0
    if [ "$sap_sk" = file ]; then
      sap_get N_$1
      sap_hook snapshot_pin $1
      # a path read through this directory's private directory, to name if it is lost (KEPT)
      sap_get DPK_$sap_sn
      [ -n "$SAP_V" ] || sap_set DPK_$sap_sn $1
      sap_get N_$1
      sap_pin $sap_sn "$SAP_V" p$1
      sap_sp_rc=$?
      # leftovers of killed snapshots and searches removed there (sh_reap.ts)
      if [ "$SAP_REAPED" != 0 ]; then sap_out "REAP $1 $SAP_REAPED"; SAP_REAPED=0; fi
      case $sap_sp_rc in
      0) sap_set SQ_$1 $SAP_BN; sap_set PIN_$1 1; sap_batch_add $sap_sn p$1 0; return 0 ;;
      1) sap_snap_pin_refused $1 $sap_sn link ;;
      4) if [ -n "$SAP_PSWAP" ]; then sap_set SR_$1 private; else sap_snap_pin_refused $1 $sap_sn private; fi ;;
      *) sap_set SR_$1 conflict ;;
      esac
      # Not pinned: refused (SR_k), never read or measured by name — the
      # name may be a symlink to outside the root by now.
      return 0
    fi
  fi
  sap_get DIR_$sap_sn
  sap_sd=$SAP_V
  sap_get N_$1
  sap_join "$sap_sd" "$SAP_V"
  sap_set F_$1 "$SAP_J1"
  sap_set SQ_$1 $SAP_BN
  sap_batch_add $sap_sn "$SAP_J1" 1
}
sap_snap_pin_refused() {
  # $1 path index, $2 directory index, $3 link|private (which part of the
  # pin failed): SR_k. A write the file system refused is told as what it
  # is (sh_faults.ts: no_space with a SPACE line, read_only_filesystem,
  # pin_denied = no permission to write there); anything else — link(2)
  # refused by fs.protected_hardlinks (EPERM, which is not a permission to
  # ask an operator for), too many links — leaves the file unpinnable.
  sap_get DIR_$2
  sap_pr_d=$SAP_V SAP_FREE=
  if [ "$3" = link ]; then
    # link(2)'s own message (sap_pin read it from ./e)
    SAP_ERR=$sap_pn_e
    case $SAP_ERR in *"No space left"*|*"Disk quota exceeded"*) SAP_EC=no_space ;; *) SAP_EC= ;; esac
  else
    sap_diag "$sap_pr_d"
  fi
  case $SAP_EC in
  no_space)
    [ -n "$SAP_FREE" ] || sap_free "$sap_pr_d"
    sap_out "SPACE $1 $\{SAP_FREE:--}"
    sap_set SR_$1 no_space ;;
  read_only_filesystem) sap_set SR_$1 read_only_filesystem ;;
  permission_denied) sap_set SR_$1 pin_denied ;;
  *) sap_set SR_$1 unpinnable ;;
  esac
  sap_err_keep pin
}
sap_snap_one() {
  sap_get RK_$1
  sap_sk=$SAP_V
  if [ "$sap_sk" = refused ] || [ "$sap_sk" = symlink ]; then
    [ "$sap_sk" = symlink ] && sap_out "S $1 symlink - - - - - 1"
    sap_get RJ_$1
    sap_sj=$SAP_V
    sap_get RD_$1
    sap_out "R $1 $sap_sj $SAP_V"
    return 0
  fi
  sap_get PD_$1
  sap_get DCT_$SAP_V
  sap_strust=$SAP_V
  [ "$SAP_V" = 1 ] || [ "$SAP_POLICY" = allow ] || return 0
  if [ "$sap_sk" = missing ]; then sap_get RX_$1; sap_out "S $1 missing - - - - - $SAP_V"; sap_near_note $1; return 0; fi
  sap_get SQ_$1
  sap_sq=$SAP_V
  sap_get SR_$1
  if [ -n "$SAP_V" ] && [ -z "$sap_sq" ]; then
    sap_out "S $1 $sap_sk - - - - - 1"
    sap_out "R $1 $SAP_V 0"
    return 0
  fi
  sap_get BM_$sap_sq
  sap_sm=$SAP_V
  if [ -z "$sap_sm" ]; then
    sap_out "S $1 $sap_sk - - - - - 1"
    sap_get PIN_$1
    if [ -n "$SAP_V" ] && [ -n "$SAP_PSWAP" ]; then sap_out "R $1 private 0"; else sap_out "R $1 remote_error 0"; fi
    return 0
  fi
  sap_get BL_$sap_sq
  sap_sl=$SAP_V
  sap_get PIN_$1
  sap_sp=$SAP_V
  [ -z "$sap_sp" ] || sap_sl=$((sap_sl - 1))
  sap_get BU_$sap_sq
  sap_su=$SAP_V
  sap_get BG_$sap_sq
  sap_meta="$sap_sm $sap_su $SAP_V $sap_sl 1"
  if [ "$sap_sk" != file ]; then sap_out "S $1 $sap_sk - $sap_meta"; return 0; fi
  sap_get BZ_$sap_sq
  sap_sz=$SAP_V
  if [ "$sap_sz" -gt "$SAP_MAX" ]; then
    sap_out "S $1 file - $sap_meta"
    sap_out "R $1 limit_exceeded $sap_sz"
    return 0
  fi
  sap_sid=
  if [ -n "$sap_sp" ]; then
    sap_get PD_$1
    sap_pcd $SAP_V || { sap_out "S $1 file - $sap_meta"; sap_out "R $1 private 0"; return 0; }
    sap_sf=./p$1
  else
    sap_get F_$1
    sap_sf=$SAP_V
    if [ "$sap_strust" = 1 ]; then
      # read by name in a trusted directory: may be handed over (sh_snapshot_wire.ts)
      sap_get BT_$sap_sq
      sap_sid=$SAP_V
      sap_get BO_$sap_sq
      sap_sid="$SAP_V $sap_sid"
    fi
  fi
  if [ ! -r "$sap_sf" ]; then
    sap_out "S $1 file - $sap_meta"
    sap_out "R $1 permission_denied 0"
    return 0
  fi
  sap_wire_send $1 "$sap_sf" "$sap_sz" "$sap_meta" "$sap_sid"
  sap_set READ_$1 1
}
sap_snap_changed() {
  # C k for every file read whose size, mtime or inode moved meanwhile, or
  # whose name no longer is its pin
  sap_j=0
  k=$SAP_K0
  while [ $k -lt $SAP_K1 ]; do
    sap_get SQ_$k
    sap_cq=$SAP_V
    if [ -n "$sap_cq" ]; then
      for sap_f in Z T O; do eval "sap_set C$\{sap_f}_$k \"\$B$\{sap_f}_$sap_cq\""; done
      sap_get PD_$k
      sap_cn=$SAP_V
      sap_get PIN_$k
      if [ -n "$SAP_V" ]; then sap_batch_add $sap_cn p$k 0; else sap_get F_$k; sap_batch_add $sap_cn "$SAP_V" 1; fi
      sap_set SQ2_$k $sap_j
      sap_j=$((sap_j + 1))
    fi
    k=$((k + 1))
  done
  [ $SAP_BN -gt 0 ] || return 0
  sap_batch_run stat
  k=$SAP_K0
  while [ $k -lt $SAP_K1 ]; do
    sap_get READ_$k
    if [ -n "$SAP_V" ]; then
      sap_get SQ2_$k
      sap_cq=$SAP_V sap_cc=0
      for sap_f in Z T O; do
        eval "[ \"\$C$\{sap_f}_$k\" = \"\$B$\{sap_f}_$sap_cq\" ]" || sap_cc=1
      done
      sap_get PIN_$k
      if [ -n "$SAP_V" ] && [ $sap_cc = 0 ]; then
        sap_get PD_$k
        sap_cn=$SAP_V
        sap_get DPP_$sap_cn
        sap_cp=$SAP_V/p$k
        sap_get DIR_$sap_cn
        sap_cd=$SAP_V
        sap_get N_$k
        sap_join "$sap_cd" "$SAP_V"
        { [ ! -L "$SAP_J1" ] && [ "$SAP_J1" -ef "$sap_cp" ]; } || sap_cc=1
      fi
      [ $sap_cc = 0 ] || sap_out "C $k"
    fi
    k=$((k + 1))
  done
}
sap_snap_group() {
  # The files of this part that sap_wire_send queued (small, sent as they
  # are): their SHA-256 in one run of the hash tool, then per batch part
  # (the absolute paths, or one private directory's pins, from inside it)
  # "G k <sha256>" and the S line of each, "GROUP <n>", the n files' bytes
  # by one cat, and "\nE <nonce>": one fork per part instead of one per
  # file. The client cuts the bytes by the sizes of the S lines and checks
  # each piece against its hash, so a file that changed between the hash
  # and the cat (or moved the pieces after it by changing size) is refused
  # as changed, never taken for another's bytes.
  [ $SAP_BN -gt 0 ] || return 0
  [ -n "$SAP_SHA" ] || sap_probe sha
  sap_batch_run sha keep
  if [ "$SAP_BT" = 1 ]; then sap_sg_parts=all; else sap_sg_parts="$SAP_BQP abs"; fi
  for sap_sg_p in $sap_sg_parts; do
    case $sap_sg_p in all|abs) ;; *) sap_get BQH_$sap_sg_p; [ -n "$SAP_V" ] || continue ;; esac
    sap_sg_n=0 SAP_BJ=
    while sap_batch_next $sap_sg_p; [ -n "$SAP_BJ" ]; do
      sap_get GK_$SAP_BJ
      sap_sg_k=$SAP_V
      sap_get GM_$SAP_BJ
      sap_sg_m=$SAP_V
      sap_get BS_$SAP_BJ
      if [ -z "$SAP_V" ]; then
        # not hashed: its private directory was swapped away, or it vanished
        sap_get BZ_$SAP_BJ
        sap_out "S $sap_sg_k file - $sap_sg_m"
        sap_get PIN_$sap_sg_k
        if [ -n "$SAP_V" ] && [ -n "$SAP_PSWAP" ]; then sap_out "R $sap_sg_k private 0"; else sap_out "R $sap_sg_k remote_error 0"; fi
        sap_unset_read $sap_sg_k
        sap_set GX_$SAP_BJ 1
        continue
      fi
      sap_out "G $sap_sg_k $SAP_V"
      sap_get GZ_$SAP_BJ
      sap_out "S $sap_sg_k file $SAP_V $sap_sg_m"
      sap_hook snapshot_read $sap_sg_k
      sap_sg_n=$((sap_sg_n + 1))
    done
    [ $sap_sg_n -gt 0 ] || continue
    sap_out "GROUP $sap_sg_n"
    # (at most a part's files: "$@" grows here, no fork)
    set --
    SAP_BJ=
    while sap_batch_next $sap_sg_p; [ -n "$SAP_BJ" ]; do
      sap_get GX_$SAP_BJ
      [ -z "$SAP_V" ] || continue
      sap_get GF_$SAP_BJ
      set -- "$@" "$SAP_V"
    done
    case $sap_sg_p in
    all|abs) cat "$@" 2>/dev/null ;;
    # a pin is read from inside its private directory; one swapped away
    # meanwhile sends nothing: the pieces miss their hashes (refused)
    *) if sap_pcd $sap_sg_p; then cat "$@" 2>/dev/null; fi ;;
    esac
    printf '\nE %s\n' "$SAP_NONCE"
  done
  SAP_BN=0
  sap_batch_reset
}
sap_unset_read() { unset READ_$1; }
sap_snap_part() {
  # paths SAP_K0 .. SAP_K1-1: everything from the walk to the C lines
  k=$SAP_K0
  while [ $k -lt $SAP_K1 ]; do
    sap_snap_resolve $k
    k=$((k + 1))
  done
  # (again only for a part that met directories not checked yet)
  if [ $SAP_K0 = 0 ] || [ $SAP_DN -gt $SAP_DTC ]; then
    sap_trust_check || { sap_out "ROOT unstable"; SAP_STATUS=root; exit 0; }
  fi
  [ $SAP_K0 != 0 ] || sap_out "ROOTID $SAP_ROOT_ID"
  # an ancestor others can write refuses every path (sap_trust_report)
  [ "$SAP_ANC_OK" = 1 ] || [ "$SAP_TRUST_ANC" = 1 ] || SAP_POLICY=refuse
  sap_trust_report "$SAP_POLICY" $SAP_K0 $SAP_K1
  k=$SAP_K0
  while [ $k -lt $SAP_K1 ]; do
    sap_snap_prepare $k
    k=$((k + 1))
  done
  [ $SAP_BN -eq 0 ] || sap_batch_run stat
  sap_wire_hashes
  SAP_BN=0
  k=$SAP_K0
  while [ $k -lt $SAP_K1 ]; do
    sap_snap_one $k
    k=$((k + 1))
  done
  sap_snap_group
  sap_snap_changed
  # The part's variables go: dash and BusyBox sh keep all variables in
  # one 39-bucket hash table, so every variable access costs time in
  # proportion to how many there are; a program that kept every path's
  # would be quadratic in the number of paths.
  k=$SAP_K0
  while [ $k -lt $SAP_K1 ]; do
    unset P_$k NN_$k H_$k HZ_$k RK_$k RX_$k N_$k PD_$k RJ_$k RD_$k SQ_$k PIN_$k SR_$k F_$k READ_$k SQ2_$k HQ_$k HS_$k CZ_$k CT_$k CO_$k
    k=$((k + 1))
  done
}
sap_out "SAP-BEGIN snapshot"
sap_probe stat id
sap_wire_have
SAP_MAX=$2 SAP_POLICY=$3 SAP_ROOTARG=$1
case $4 in 1) SAP_TRUST_ANC=1 SAP_RPIN=1 ;; 0|'') ;; *) sap_bad_input ancestors ;; esac
sap_isnum "$SAP_MAX" || sap_bad_input max
SAP_NEAR_MAX=$\{5:-0} SAP_NEAR_DEPTH=$\{6:-0} SAP_NEAR_SECS=$\{7:-0}
sap_isnum "$SAP_NEAR_MAX" && sap_isnum "$SAP_NEAR_DEPTH" && sap_isnum "$SAP_NEAR_SECS" || sap_bad_input near
case $SAP_POLICY in refuse|allow) ;; *) sap_bad_input policy ;; esac
sap_root "$1" || { sap_out "ROOT $SAP_ROOTERR"; SAP_STATUS=root; exit 0; }
umask 077
sap_read_line
[ "$SAP_L" = SAP-SNAPSHOT-5 ] || sap_bad_input header
sap_read_line
case $SAP_L in "K "????????????????*) SAP_SECRET=$\{SAP_L#K } ;; *) sap_bad_input secret ;; esac
case $SAP_SECRET in *[!0-9a-f]*) sap_bad_input secret ;; esac
sap_read_line
case $SAP_L in "N "????????????????*) SAP_NONCE=$\{SAP_L#N } ;; *) sap_bad_input nonce ;; esac
case $SAP_NONCE in *[!0-9a-f]*) sap_bad_input nonce ;; esac
sap_wire_read_offer
sap_wire_read_local
sap_read_count
SAP_M=$SAP_L
sap_read_count
SAP_HLN=$SAP_L
# The rest of stdin (the hint lines, then the path lines) in one
# read: the read builtin takes one byte per system call. The lines become
# the positional parameters (none is empty), reached by index.
sap_in=$(cat) || sap_bad_input eof
# every path relative (a hint line starts with its index)
case "$SAP_NL$sap_in" in *"$SAP_NL/"*) sap_bad_input path ;; esac
sap_bulk_names "$sap_in"
sap_ifs=$IFS
IFS=$SAP_NL
set -- $sap_in
IFS=$sap_ifs
sap_in=
[ $# -eq $((SAP_HLN + SAP_M)) ] || sap_bad_input eof
sap_hook start
sap_trust_root "$SAP_ROOTARG" || { sap_out "ROOT unstable"; SAP_STATUS=root; exit 0; }
sap_dir_index "$SAP_R"
# many plain small files: one run of each tool (sh_snapshot_bulk.ts)
if sap_bulk_wanted && sap_snap_bulk "$@"; then SAP_STATUS=ok; exit 0; fi
# In parts of SAP_PART paths, each part's variables removed after it (64: measured
# fastest here; 512 costs four times as much under dash).
SAP_PART=64 SAP_K0=0 SAP_HI=1
while [ $SAP_K0 -lt $SAP_M ] || [ $SAP_M = 0 ]; do
  SAP_K1=$((SAP_K0 + SAP_PART))
  [ $SAP_K1 -le $SAP_M ] || SAP_K1=$SAP_M
  k=$SAP_K0
  while [ $k -lt $SAP_K1 ]; do
    eval "sap_set P_$k \"\$\{$((SAP_HLN + k + 1))}\""
    k=$((k + 1))
  done
  # this part's hint lines ("<k> <sha256|-> <size|-> [n]", in path order)
  while [ $SAP_HI -le $SAP_HLN ]; do
    eval "sap_hl=\$\{$SAP_HI}"
    sap_hk=$\{sap_hl%% *}
    sap_isnum "$sap_hk" || sap_bad_input hint
    [ "$sap_hk" -lt $SAP_K1 ] || break
    [ "$sap_hk" -ge $SAP_K0 ] || sap_bad_input hint
    sap_wire_read_hint $sap_hk "$\{sap_hl#* }"
    SAP_HI=$((SAP_HI + 1))
  done
  sap_snap_part
  SAP_K0=$SAP_K1
  [ $SAP_M != 0 ] || break
done
[ $SAP_HI -gt $SAP_HLN ] || sap_bad_input hint
# names near the missing paths the client needs (sh_near.ts)
sap_near_run
SAP_STATUS=ok
exit 0
`;
