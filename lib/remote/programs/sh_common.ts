/**
 * The shell functions every remote program shares: a predictable shell
 * state, the capability probe, `stat` and SHA-256 wrappers, and the §6 path
 * walk. Pure text; assembled into programs by `lib/remote/programs/programs.ts`.
 *
 * Conventions of all remote programs:
 * - Data never becomes code. Arguments arrive as single-quoted words (a
 *   `set -- '…' '…'` line written with `shQuote`); everything unbounded
 *   (paths, contents) arrives on stdin and is read with `IFS= read -r`.
 *   Values are stored with `eval "NAME=\$2"`, where NAME is built by the
 *   program from constants and decimal indices only — the value itself is
 *   never part of the evaluated text.
 * - Every function variable carries a `sap_` prefix (POSIX sh has no
 *   `local`); globals results are UPPER case (`RK`, `RP`, `SHA`, `ST_*`).
 * - Paths on the remote side are physical: the root is resolved once with
 *   `cd -P` (after which `$PWD` is the physical path, no fork needed);
 *   every directory used is re-entered with `cd -P` and compared against
 *   the physical path recorded when it was checked, so a directory swapped
 *   for a symlink afterwards is noticed instead of followed. File
 *   operations then act on `./name` inside the verified directory. The
 *   programs' own working directory therefore moves around: every path they
 *   keep is absolute.
 * - Results go to stdout as one line per fact (`KEYWORD field…`), parsed
 *   strictly by lib/remote/protocol.ts. Paths are referred to by their
 *   index in the stdin manifest; the one exception, a directory the trust
 *   policy refuses (`UNSAFE`), travels hex-encoded.
 * - Nothing is ever created, written, renamed or removed through a name in
 *   a directory someone else could write, except by the operations that
 *   never follow or open that name (sh_private.ts). One trap of dash 0.5.12
 *   to keep in mind: in `{ ( … ) > file; } 2>/dev/null` it drops the
 *   subshell's redirection; redirect the subshell itself.
 * - `sap_hook NAME ARG` marks the points where a test may inject a fault; it
 *   does nothing in production. A test wrapper replaces the one line
 *   {@linkcode HOOK_DEFINITION} in the program text (see test/remote).
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** The exact no-op hook definition present in every program (tests replace it). */
export const HOOK_DEFINITION = "sap_hook() { :; }";

/** Shell state, output helpers, indexed variables and the hook. */
export const SH_PRELUDE: string = sh`
set -f
SAP_CLN=0
unset CDPATH ENV BASH_ENV 2>/dev/null
LC_ALL=C
export LC_ALL
SAP_NL='
'
IFS=$(printf ' \t\nx')
IFS=$\{IFS%x}
sap_out() { printf '%s\n' "$*"; }
sap_set() { eval "$1=\$2"; }
sap_get() { eval "SAP_V=\$\{$1-}"; }
sap_isnum() { case $1 in ''|*[!0-9]*) return 1 ;; esac; return 0; }
sap_unsupported() { sap_out "UNSUPPORTED $1"; SAP_STATUS=unsupported; exit 0; }
` + HOOK_DEFINITION + "\n";

/**
 * The capability probe, folded into each program (no extra exec). Each word
 * names one capability; a missing one prints `UNSUPPORTED <token>` and ends
 * the program before it touches anything. `sleep` is probed lazily, only
 * when a lock is busy, because probing `sleep 0.1` costs 0.1 s.
 */
export const SH_PROBE: string = sh`
sap_probe() {
  for sap_c in "$@"; do
    case $sap_c in
    sha)
      if command -v sha256sum >/dev/null 2>&1; then SAP_SHA=sha256sum
      elif command -v shasum >/dev/null 2>&1; then SAP_SHA=shasum
      elif command -v openssl >/dev/null 2>&1; then SAP_SHA=openssl
      else sap_unsupported sha256; fi ;;
    stat)
      if stat -c %s / >/dev/null 2>&1; then SAP_STAT=gnu
      elif stat -f %z / >/dev/null 2>&1; then SAP_STAT=bsd
      else sap_unsupported stat; fi ;;
    head)
      [ "$(printf abc | head -c 2 2>/dev/null)" = ab ] || sap_unsupported head-c ;;
    tail)
      [ "$(printf abc | tail -c +2 2>/dev/null)" = bc ] || sap_unsupported tail-c ;;
    dd)
      [ "$(printf abcdef | dd bs=2 skip=1 2>/dev/null)" = cdef ] || sap_unsupported dd ;;
    date)
      sap_t=$(date +%s 2>/dev/null)
      sap_isnum "$sap_t" || sap_unsupported date-s ;;
    link)
      # a hard link that never replaces and never goes into a directory:
      # link(1) is link(2) itself; ln needs -T for that
      if command -v link >/dev/null 2>&1; then SAP_LINK=link
      elif sap_has_option ln T; then SAP_LINK="ln -T"
      else sap_unsupported link; fi
      # SAP_LNM: ln NAME... DIR, hard links of many names into a directory
      # of ours in one run (link(2) each; where missing, one link per name)
      SAP_LNM=
      command -v ln >/dev/null 2>&1 && SAP_LNM=ln ;;
    mvt)
      # rename(2) onto a name, never into the directory it names (GNU and
      # BusyBox mv -T; GNU coreutils as gmv on BSD and macOS). SAP_MVM: the
      # same tool without -T, for "mv -f NAME... DIR": one rename(2) of each
      # NAME onto DIR/its last component (never into that name).
      if sap_has_option mv T; then SAP_MV="mv -fT" SAP_MVM="mv -f"
      elif command -v gmv >/dev/null 2>&1 && sap_has_option gmv T; then SAP_MV="gmv -fT" SAP_MVM="gmv -f"
      else sap_unsupported mv-T; fi ;;
    readlink)
      command -v readlink >/dev/null 2>&1 || sap_unsupported readlink ;;
    id)
      # one run for both: "uid=0(root) gid=0(root) …" (GNU, BusyBox, BSD)
      sap_id=$(id 2>/dev/null)
      SAP_EUID=$\{sap_id#uid=} SAP_EUID=$\{SAP_EUID%%[!0-9]*}
      SAP_GID=$\{sap_id#* gid=} SAP_GID=$\{SAP_GID%%[!0-9]*}
      # "euid=" / "egid=" follow when they differ from the real ids: the effective ones count
      case $sap_id in *" euid="*) SAP_EUID=$\{sap_id#* euid=} SAP_EUID=$\{SAP_EUID%%[!0-9]*} ;; esac
      case $sap_id in *" egid="*) SAP_GID=$\{sap_id#* egid=} SAP_GID=$\{SAP_GID%%[!0-9]*} ;; esac
      sap_isnum "$SAP_EUID" && sap_isnum "$SAP_GID" || sap_unsupported id ;;
    mktemp)
      command -v mktemp >/dev/null 2>&1 || sap_unsupported mktemp ;;
    sleep)
      if sleep 0.1 2>/dev/null; then SAP_POLL=0.1 SAP_POLL_MS=100; else SAP_POLL=1 SAP_POLL_MS=1000; fi ;;
    esac
  done
}
sap_has_option() {
  # Whether tool $1 knows the one-letter option $2: run without operands,
  # a tool that knows it complains about the operands, one that does not
  # names the option as invalid, illegal or unrecognised.
  sap_h=$($1 -$2 2>&1 </dev/null)
  case $sap_h in
  *nvalid*|*llegal*|*nrecognized*|*"unknown option"*) return 1 ;;
  esac
  return 0
}
sap_fast_sha() {
  # For megabytes of content: OpenSSL's SHA-256 (assembly, CPU SHA
  # extensions) runs several times faster than coreutils' or BusyBox's
  # (38.5 MB: 67 ms against 260 ms here) but starts slower (~7 ms against
  # ~2 ms), so it is chosen only for large plans, and only when it gives
  # the right digest on this host.
  [ "$SAP_SHA" != openssl ] || return 0
  command -v openssl >/dev/null 2>&1 || return 0
  case $(printf abc | openssl dgst -sha256 2>/dev/null) in
  *ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad) SAP_SHA=openssl ;;
  esac
}
`;

/**
 * `stat` (never following a final symlink) and SHA-256, whatever the
 * userland. GNU and BusyBox share `stat -c`; BSD and macOS use `stat -f`
 * with an octal mode that still carries the file-type bits.
 */
export const SH_STAT_SHA: string = sh`
sap_stat_parse() {
  set -- $1
  [ $# -eq 7 ] || return 1
  for sap_x in "$1" "$3" "$4" "$5" "$6" "$7"; do sap_isnum "$sap_x" || return 1; done
  case $SAP_STAT in
  gnu)
    case $2 in ''|*[!0-9a-f]*) return 1 ;; esac
    ST_MODE=$(( 0x$2 & 4095 )) ST_TYPE=$(( 0x$2 >> 12 & 15 )) ;;
  *)
    sap_isnum "$2" || return 1
    ST_MODE=$(( 0$2 & 4095 )) ST_TYPE=$(( 0$2 >> 12 & 15 )) ;;
  esac
  # ST_TYPE: 4 directory, 8 regular file, 10 symlink, anything else "other"
  ST_SIZE=$1 ST_UID=$3 ST_GID=$4 ST_NLINK=$5 ST_MTIME=$6 ST_INO=$7
}
sap_stat() {
  case $SAP_STAT in
  gnu) sap_s=$(stat -c '%s %f %u %g %h %Y %i' "$1" 2>/dev/null) || return 1 ;;
  *) sap_s=$(stat -f '%z %p %u %g %l %m %i' "$1" 2>/dev/null) || return 1 ;;
  esac
  sap_stat_parse "$sap_s"
}
sap_stat_keep() {
  sap_set STM_$1 "$ST_MODE"
  sap_set STU_$1 "$ST_UID"
  sap_set STG_$1 "$ST_GID"
  sap_set STN_$1 "$ST_NLINK"
  sap_set STS_$1 "$ST_SIZE"
  sap_set STT_$1 "$ST_MTIME"
  sap_set STI_$1 "$ST_INO"
  sap_set STY_$1 "$ST_TYPE"
}
sap_stat_list() {
  # STM_j STU_j STG_j STN_j STS_j STT_j STI_j STY_j (mode, uid, gid, nlink,
  # size, mtime, inode, type) of the files given, in one run of stat
  # (which never follows a final symlink); an entry is empty when that
  # file could not be read.
  sap_nf=$#
  [ $sap_nf -gt 0 ] || return 0
  case $SAP_STAT in
  gnu) sap_all=$(stat -c '%s %f %u %g %h %Y %i' "$@" 2>/dev/null) ;;
  *) sap_all=$(stat -f '%z %p %u %g %l %m %i' "$@" 2>/dev/null) ;;
  esac
  if [ $? -eq 0 ]; then
    sap_ifs=$IFS
    IFS=$SAP_NL
    set -- $sap_all
    IFS=$sap_ifs
    if [ $# -eq $sap_nf ]; then
      sap_j=0 sap_ok=1
      for sap_l in "$@"; do
        sap_j=$((sap_j + 1))
        if sap_stat_parse "$sap_l"; then sap_stat_keep $sap_j; else sap_ok=0; fi
      done
      [ $sap_ok = 1 ] && return 0
    fi
    return 1
  fi
  return 1
}
sap_stat_each() {
  sap_j=0
  for sap_f in "$@"; do
    sap_j=$((sap_j + 1))
    ST_MODE= ST_UID= ST_GID= ST_NLINK= ST_SIZE= ST_MTIME= ST_INO= ST_TYPE=
    sap_stat "$sap_f"
    sap_stat_keep $sap_j
  done
}
sap_sha_stdin() {
  case $SAP_SHA in
  sha256sum) SHA=$(sha256sum 2>/dev/null) ;;
  shasum) SHA=$(shasum -a 256 2>/dev/null) ;;
  *) SHA=$(openssl dgst -sha256 2>/dev/null) ;;
  esac || return 1
  case $SAP_SHA in openssl) SHA=$\{SHA##* } ;; *) SHA=$\{SHA%% *} ;; esac
  case $SHA in ''|*[!0-9a-f]*) return 1 ;; esac
  [ $\{#SHA} -eq 64 ]
}
sap_sha() { sap_sha_stdin < "$1" 2>/dev/null; }
sap_sha_list() {
  # SHA_1 … SHA_n of the files given, in one run of the tool. Returns 1
  # unless every file was hashed (then sap_sha_each pinpoints).
  sap_nf=$#
  [ $sap_nf -gt 0 ] || return 0
  case $SAP_SHA in
  sha256sum) sap_all=$(sha256sum "$@" 2>/dev/null) ;;
  shasum) sap_all=$(shasum -a 256 "$@" 2>/dev/null) ;;
  *) sap_all=$(openssl dgst -sha256 "$@" 2>/dev/null) ;;
  esac || return 1
  sap_ifs=$IFS
  IFS=$SAP_NL
  set -- $sap_all
  IFS=$sap_ifs
  [ $# -eq $sap_nf ] || return 1
  sap_j=0
  for sap_l in "$@"; do
    sap_j=$((sap_j + 1))
    case $SAP_SHA in
    openssl) sap_h=$\{sap_l##*= } ;;
    *) sap_h=$\{sap_l#\\}; sap_h=$\{sap_h%% *} ;;
    esac
    case $sap_h in ''|*[!0-9a-f]*) return 1 ;; esac
    [ $\{#sap_h} -eq 64 ] || return 1
    sap_set SHA_$sap_j "$sap_h"
  done
}
sap_sha_each() {
  sap_j=0
  for sap_f in "$@"; do
    sap_j=$((sap_j + 1))
    if sap_sha "$sap_f"; then sap_set SHA_$sap_j "$SHA"; else sap_set SHA_$sap_j ""; fi
  done
}
`;

/**
 * The root and the §6 walk.
 *
 * `sap_root ROOT` resolves the configured root once, physically. A root
 * that is itself a symlink is followed this one time (the operator chose
 * it) and its physical path is used for the whole program, so everything
 * below is judged against where the root really is (the directories whose
 * entries decide where that is are checked by the trust policy,
 * sh_trust.ts). `SAP_B` is the prefix used to join names (empty for the
 * root `/`).
 *
 * `sap_resolve REL` walks REL below the root without following anything:
 * - a symlink component → `symlink_rejected` (RD = its depth, 1-based);
 * - a component that exists but is not a directory → `invalid_path` (the
 *   path cannot name a file: "a.txt/b" when a.txt is a file) — chosen over
 *   not_regular_file, which is about the final name itself;
 * - a directory we cannot enter → `permission_denied`;
 * - the deepest existing directory must resolve (`cd -P`) to exactly the
 *   path walked, else `path_outside_root` (with no symlink component this
 *   only fires on a race — a component swapped for a symlink after it was
 *   looked at — or a bind mount: either way the path does not name what it
 *   says);
 * - a final symlink → RK=symlink, `symlink_rejected` (RD=0).
 * On success: RK (missing|file|directory|other), RX (1 = the parent exists),
 * RP (the physical existing directory: the parent, or the deepest existing
 * ancestor when RX=0), RN (the rest below RP: the basename when RX=1).
 *
 * `sap_cd DIR` enters a directory by its physical path and proves it is
 * still there: `$PWD` after `cd -P` must be exactly DIR. Once inside, the
 * working directory is held by inode: `./name` means a name in that very
 * directory, whatever happens to the path later. Every file operation of
 * the programs is such a `./name` (or `../name` from a private directory,
 * see sh_private.ts) inside a directory entered this way.
 */
export const SH_PATHS: string = sh`
sap_root() {
  if ! cd -P "$1" 2>/dev/null; then
    if [ -d "$1" ]; then SAP_ROOTERR=permission_denied
    elif [ -e "$1" ] || [ -L "$1" ]; then SAP_ROOTERR=not_a_directory
    else SAP_ROOTERR=missing; fi
    return 1
  fi
  SAP_R=$PWD
  case $SAP_R in /) SAP_B= ;; *) SAP_B=$SAP_R ;; esac
}
sap_cd() {
  cd -P "$1" 2>/dev/null && [ "$PWD" = "$1" ] || return 1
  [ -z "$SAP_RPIN" ] || [ -z "$SAP_ROOT_ID" ] || sap_root_still "$1"
}
sap_root_still() {
  # With trustRootAncestors (SAP_RPIN=1: someone else may rename the
  # root): directory $1, just entered, is the root or inside the very root
  # this program pinned (SAP_ROOT_ID, device:inode). Judged through ".."
  # from where we are, which no rename can redirect; a root swapped for
  # another directory at the same path is caught at the next entry.
  case $1 in
  "$SAP_R") sap_rs_up=. ;;
  "$SAP_B"/*)
    sap_rs_r=$\{1#"$SAP_B"/} sap_rs_up=..
    while :; do case $sap_rs_r in */*) sap_rs_r=$\{sap_rs_r#*/} sap_rs_up=$sap_rs_up/.. ;; *) break ;; esac; done ;;
  *) return 0 ;;
  esac
  case $SAP_STAT in
  gnu) sap_rs=$(stat -c '%d:%i' "$sap_rs_up" 2>/dev/null) ;;
  *) sap_rs=$(stat -f '%d:%i' "$sap_rs_up" 2>/dev/null) ;;
  esac
  [ "$sap_rs" = "$SAP_ROOT_ID" ] || { SAP_ROOT_MOVED=1; return 1; }
}
sap_octal() { SAP_OCT=$(( $1 >> 9 & 7 ))$(( $1 >> 6 & 7 ))$(( $1 >> 3 & 7 ))$(( $1 & 7 )); }
sap_join() { case $1 in /) SAP_J1=/$2 ;; *) SAP_J1=$1/$2 ;; esac; }
sap_resolve() {
  RJ= RD=0 RK= RX=1 RP= RN=
  sap_rest=$1 sap_cur=$SAP_B sap_depth=0
  while :; do
    case $sap_rest in */*) ;; *) break ;; esac
    sap_c=$\{sap_rest%%/*}
    sap_depth=$((sap_depth + 1))
    sap_next=$sap_cur/$sap_c
    if [ -L "$sap_next" ]; then RJ=symlink_rejected RD=$sap_depth; return 1; fi
    if [ -d "$sap_next" ]; then
      sap_cur=$sap_next sap_rest=$\{sap_rest#*/}
      continue
    fi
    if [ -e "$sap_next" ]; then RJ=invalid_path RD=$sap_depth; return 1; fi
    RX=0
    break
  done
  [ -n "$sap_cur" ] || sap_cur=/
  if cd -P "$sap_cur" 2>/dev/null; then RP=$PWD; else RJ=permission_denied RD=$sap_depth; return 1; fi
  [ "$RP" = "$sap_cur" ] || { RJ=path_outside_root RD=$sap_depth; return 1; }
  RN=$sap_rest
  if [ "$RX" = 0 ]; then RK=missing; return 0; fi
  sap_join "$RP" "$RN"
  if [ -L "$SAP_J1" ]; then RK=symlink RJ=symlink_rejected; return 1
  elif [ -f "$SAP_J1" ]; then RK=file
  elif [ -d "$SAP_J1" ]; then RK=directory
  elif [ -e "$SAP_J1" ]; then RK=other
  else RK=missing; fi
  return 0
}
# an entry of any kind, dangling symlinks included
sap_exists() { [ -e "$1" ] || [ -L "$1" ]; }
`;
