/**
 * The snapshot program's bulk read (issue 28): many small regular files in
 * trusted directories, read with one run of each tool over all of them and
 * almost no shell work per file.
 *
 * Why. The per-path machinery of snapshot_program.ts costs several hundred
 * shell steps per file (variables per path, per-batch queues, one S line
 * built per file): about 0.5 ms a file under dash, 70× `tar c` of the same
 * files. Most big reads are the plain case — every path an existing small
 * regular file, every directory on the way writable only by the effective
 * user and root — and for that case the host only has to prove that case
 * and run `stat`, `sha256sum`, `head`, `stat` once each; the client cuts and
 * checks the output.
 *
 * When. Only when all of these hold, else nothing is printed and the
 * per-path program reads everything as before (so every refusal, pin,
 * hash proof, hand-over and compressed send keeps its one implementation):
 * at least SAP_BULK_MIN paths, no hints, GNU/BusyBox `stat -c` and
 * `sha256sum`, and — checked here before any file is opened — every
 * path's directory walked by the §6 walk (sap_snap_resolve on the first
 * path of each run of paths in one directory: the paths come sorted, so a
 * directory's files come together), every such directory trusted (DCT = 1,
 * which needs every ancestor of the root trusted), and one `stat` (which
 * opens nothing and never follows a final symlink) showing every path a
 * regular file (mode type 8: never a FIFO, device, socket, symlink or
 * directory) smaller than SAP_BULK_LT (64 KiB, the file limit + 1, and the
 * compression and hand-over thresholds when offered: those files travel
 * another way). A name nobody else can write to stays what it was, as in
 * the per-path program, which also reads such files by name. A file that
 * cannot be hashed (unreadable, vanished) makes the hash run fail: nothing
 * was printed, the per-path program reports it.
 *
 * Output: `BULK <n>`, the n lines of the first `stat -c '%f %s %u %g %h %Y
 * %i'` (hex mode, size, uid, gid, nlink, mtime, inode), the n lines of
 * `sha256sum`, then the n files' bytes by one `head -q -c` and `\nE <nonce>`, then
 * `C k` for every file whose size, mtime or inode a second `stat` shows
 * changed (or that it cannot stat any more). The client cuts the bytes by
 * the sizes and checks each piece against its hash, so a file changed
 * between the hash and the read is refused as changed, never misread.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** sap_snap_bulk (needs sh_common, sh_trust, sh_private and sh_snapshot_wire). */
export const SH_SNAPSHOT_BULK: string = sh`
SAP_BULK_MIN=64 SAP_BULK_NAMES=1
sap_bulk_names() {
  # $1 the text of stdin's lines: SAP_BULK_NAMES= when a path has an empty,
  # "." or ".." component (a hint line has no "/"). The bulk read judges
  # each directory by its name from the root, which such a component would
  # take elsewhere; the §6 walk of the per-path program tells what it is.
  case "$SAP_NL$1$SAP_NL" in
  *//*|*/./*|*/../*|*"$SAP_NL./"*|*"$SAP_NL../"*|*"/.$SAP_NL"*|*"/..$SAP_NL"*|*"/$SAP_NL"*|*"$SAP_NL.$SAP_NL"*|*"$SAP_NL..$SAP_NL"*) SAP_BULK_NAMES= ;;
  esac
}
sap_bulk_wanted() {
  # SAP_BULK_LT: the bulk read's exclusive bound on a file's size
  [ "$SAP_M" -ge $SAP_BULK_MIN ] && [ -n "$SAP_BULK_NAMES" ] && [ "$SAP_STAT" = gnu ] && [ -z "$SAP_RPIN" ] || return 1
  for sap_c in sha256sum sed sort; do command -v $sap_c >/dev/null 2>&1 || return 1; done
  SAP_BULK_LT=65536
  [ "$SAP_MAX" -ge $SAP_BULK_LT ] || SAP_BULK_LT=$((SAP_MAX + 1))
  [ -z "$SAP_ZOFFER" ] || [ "$SAP_ZMIN" -ge $SAP_BULK_LT ] || SAP_BULK_LT=$SAP_ZMIN
  [ -z "$SAP_LOCAL" ] || [ "$SAP_LMIN" -ge $SAP_BULK_LT ] || SAP_BULK_LT=$SAP_LMIN
  [ $SAP_BULK_LT -gt 0 ]
}
sap_snap_bulk() {
  # "$@": the SAP_HLN hint lines, then the M paths. 0: every path was
  # reported; 1: nothing was printed (the per-path program takes over).
  # A content the client holds is proved by a hash of that one file: not
  # here. A path the client needs (n) is no concern of a read that
  # declines any missing path.
  sap_bk_i=0
  for sap_l in "$@"; do
    [ $sap_bk_i -lt $SAP_HLN ] || break
    case $sap_l in *" - -"|*" - - n") ;; *) return 1 ;; esac
    sap_bk_i=$((sap_bk_i + 1))
  done
  shift $SAP_HLN
  # head -q -c: the files one after the other without headers, three
  # system calls a file (cat maps a 128 KiB buffer per file: four times
  # the time), and never more than the bound of any one file
  [ "$(printf abc | head -q -c 2 - /dev/null 2>/dev/null)" = ab ] || return 1
  sap_ifs=$IFS
  # the root's ancestors and the root itself (directory 0, the only one
  # in the table): all trusted, the root's id noted
  sap_trust_check || { sap_out "ROOT unstable"; SAP_STATUS=root; exit 0; }
  [ "$SAP_ANC_OK" = 1 ] && [ "$DCT_0" = 1 ] || return 1
  # the names from the root, held by inode since sap_trust_root
  sap_cd "$SAP_R" || return 1
  # Every directory between the root and a file, once (sed and sort, no
  # shell loop over the paths): each must be a directory (lstat: a
  # symlink is not one, so no component is followed) that only the
  # effective user and root can write (sap_verdict, as the trust check
  # judges the write set).
  sap_bk_dl=$(printf '%s\n' "$@" | sed -n -e 's,/[^/]*$,,' -e 't up' -e 'd' -e ':up' -e 'p' -e 's,/[^/]*$,,' -e 't up' | sort -u) || return 1
  if [ -n "$sap_bk_dl" ]; then
    IFS=$SAP_NL
    sap_bk_dst=$(stat -c '%f %u %g' -- $sap_bk_dl 2>/dev/null) || { IFS=$sap_ifs; return 1; }
    IFS=$sap_ifs
    sap_bulk_dirs "$sap_bk_dst" || return 1
  fi
  sap_bk_st=$(stat -c '%f %s %u %g %h %Y %i' -- "$@" 2>/dev/null) || return 1
  # every line a regular file (type 8 of a four-digit hex mode) ...
  case "$SAP_NL$sap_bk_st" in *"$SAP_NL"[!8]*) return 1 ;; esac
  sap_bulk_lines "$sap_bk_st" $# || return 1
  # ... below the bound: for 64 KiB (the usual one), no size of six digits
  # or of five from 65536 (a pattern over the whole output, no loop)
  if [ $SAP_BULK_LT = 65536 ]; then
    case "$SAP_NL$sap_bk_st" in
    *"$SAP_NL"8???" "[0-9][0-9][0-9][0-9][0-9][0-9]*|*"$SAP_NL"8???" "[7-9][0-9][0-9][0-9][0-9]" "*|*"$SAP_NL"8???" "6[6-9][0-9][0-9][0-9]" "*|*"$SAP_NL"8???" "65[6-9][0-9][0-9]" "*|*"$SAP_NL"8???" "655[4-9][0-9]" "*|*"$SAP_NL"8???" "6553[6-9]" "*) return 1 ;;
    esac
  else
    IFS=$SAP_NL
    for sap_l in $sap_bk_st; do
      IFS=$sap_ifs
      sap_t=$\{sap_l#* } sap_t=$\{sap_t%% *}
      case $sap_t in ''|*[!0-9]*) return 1 ;; esac
      [ $\{#sap_t} -le 6 ] && [ "$sap_t" -lt $SAP_BULK_LT ] || return 1
    done
    IFS=$sap_ifs
  fi
  sap_hook snapshot_hash
  # (every file hashed when it succeeds; the client checks a line each)
  sap_bk_sh=$(sha256sum -- "$@" 2>/dev/null) || return 1
  # committed: from here on every path is reported by this function
  sap_out "ROOTID $SAP_ROOT_ID"
  printf 'BULK %s\n%s\n%s\n' $# "$sap_bk_st" "$sap_bk_sh"
  sap_hook snapshot_read bulk
  head -q -c $SAP_BULK_LT -- "$@" 2>/dev/null
  printf '\nE %s\n' "$SAP_NONCE"
  sap_bk_st2=$(stat -c '%f %s %u %g %h %Y %i' -- "$@" 2>/dev/null)
  [ "$sap_bk_st2" != "$sap_bk_st" ] || return 0
  sap_snap_bulk_changed "$sap_bk_st2" "$@"
  return 0
}
sap_bulk_dirs() {
  # $1: "<hex mode> <uid> <gid>" lines of directories: 0 when each is a
  # directory (type 4) that sap_verdict trusts in the write set
  IFS=$SAP_NL
  set -- $1
  IFS=$sap_ifs
  for sap_l in "$@"; do
    case $sap_l in 4???" "*) ;; *) return 1 ;; esac
    set -- $sap_l
    [ $# = 3 ] || return 1
    sap_verdict $(( 0x$1 )) "$2" "$3" 0
    [ -z "$SAP_VR" ] || return 1
  done
}
sap_bulk_lines() {
  # whether text $1 has exactly $2 lines (in a subshell: "$@" stays)
  [ "$(IFS=$SAP_NL; set -- $1; echo $#)" = "$2" ]
}
sap_snap_bulk_changed() {
  # (rare: something changed while it was read) C k for every path whose
  # size, mtime or inode differ from the first stat's, or that cannot be
  # measured any more. $1 the second stat's output, then the names.
  sap_bc_2=$1
  shift
  IFS=$SAP_NL
  set -- $sap_bc_2 --- "$@"
  IFS=$sap_ifs
  sap_bc_sep=0
  for sap_l in "$@"; do
    sap_bc_sep=$((sap_bc_sep + 1))
    [ "$sap_l" != --- ] || break
  done
  sap_bc_ok=0
  # the second stat lost a file (fewer lines): compare one by one
  [ $((sap_bc_sep - 1)) = $(($# - sap_bc_sep)) ] && sap_bc_ok=1
  k=0
  IFS=$SAP_NL
  for sap_l in $sap_bk_st; do
    IFS=$sap_ifs
    if [ $sap_bc_ok = 1 ]; then
      eval "sap_bc_l=\$\{$((k + 1))}"
    else
      eval "sap_bc_f=\$\{$((sap_bc_sep + k + 1))}"
      sap_bc_l=$(stat -c '%f %s %u %g %h %Y %i' -- "$sap_bc_f" 2>/dev/null)
    fi
    sap_bc_a=$\{sap_l#* } sap_bc_b=$\{sap_bc_l#* }
    # size (field 2), mtime and inode (fields 6, 7)
    if [ "$\{sap_bc_a%% *} $\{sap_l#* * * * * }" != "$\{sap_bc_b%% *} $\{sap_bc_l#* * * * * }" ] || [ -z "$sap_bc_l" ]; then sap_out "C $k"; fi
    k=$((k + 1))
  done
  IFS=$sap_ifs
}
`;
