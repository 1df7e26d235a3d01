/**
 * Why a write on the host failed, told truly (SPEC §7 round 2): a full
 * file system is `no_space`, a read-only one `read_only_filesystem`, and
 * `permission_denied` only when permissions are what refused it — never
 * "ask for write access" for a read-only mount (where `[ -w ]` is false
 * too), never "the file changed" for a disk that filled up while a stage
 * was written.
 *
 * Two sources, best first:
 * - the failed command's own stderr, captured into `SAP_ERR` where the
 *   command runs anyway (`$( … 2>&1 )` around a write that already starts a
 *   process; mktemp's stderr rides along with its output). The programs run
 *   with `LC_ALL=C`, so the messages are the C library's English ones,
 *   alike in glibc, musl and the BSDs ("No space left on device",
 *   "Read-only file system", "Permission denied"). It is also copied,
 *   bounded (400 bytes), to the program's stderr, which the client quotes;
 * - where nothing was captured (a shell builtin writing through a
 *   descriptor, as the journal does in step 5, where no process may be
 *   started): the directory itself — not writable although its mode lets
 *   this user write means a read-only file system, not writable otherwise
 *   means permissions, and a file system with less free space than needed
 *   (`df -Pk`) means no space.
 * Both only run once something failed: success costs nothing.
 *
 * Protocol: `FAIL <class> <k|-> <what>` and, for `no_space`, `SPACE <k|->
 * <free bytes|->` (lib/remote/protocol.ts).
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** sap_classify, sap_diag, sap_free, sap_fail_class, sap_err_keep. */
export const SH_FAULTS: string = sh`
SAP_ERR= SAP_EC= SAP_FREE=
sap_classify() {
  # SAP_EC: the class of the failure whose stderr is $1, or empty
  case $1 in
  *"No space left"*|*"Disk quota exceeded"*) SAP_EC=no_space ;;
  *"Read-only file system"*) SAP_EC=read_only_filesystem ;;
  *"Permission denied"*|*"Operation not permitted"*) SAP_EC=permission_denied ;;
  *) SAP_EC= ;;
  esac
}
sap_free() {
  # SAP_FREE: bytes free for this user on the file system of directory $1
  # (df -Pk: GNU, BusyBox, BSD), or empty
  SAP_FREE=
  sap_fr_o=$(df -Pk "$1" 2>/dev/null) || return 0
  sap_fr_o=$\{sap_fr_o##*"$SAP_NL"}
  set -- $sap_fr_o
  [ $# -ge 4 ] && sap_isnum "$4" && SAP_FREE=$(( $4 * 1024 ))
}
sap_mode_writable() {
  # Whether the mode and owner of directory $1 let this user write it (as
  # root: always), whatever the mount says
  [ "$SAP_EUID" = 0 ] && return 0
  sap_stat "$1" || return 1
  if [ "$ST_UID" = "$SAP_EUID" ]; then [ $(( ST_MODE & 128 )) != 0 ]
  elif [ "$ST_GID" = "$SAP_GID" ]; then [ $(( ST_MODE & 16 )) != 0 ]
  else [ $(( ST_MODE & 2 )) != 0 ]; fi
}
sap_diag() {
  # After a write in directory $1 failed (SAP_ERR: what it said, maybe
  # nothing): SAP_EC. $2: bytes the write needed there, if known.
  sap_classify "$SAP_ERR"
  [ -z "$SAP_EC" ] || return 0
  if [ ! -w "$1" ]; then
    if sap_mode_writable "$1"; then SAP_EC=read_only_filesystem; else SAP_EC=permission_denied; fi
    return 0
  fi
  # Almost nothing free: the write ran out of space (the partial file it
  # left is still there). Some writers say only "I/O error" then (dash's
  # printf, BusyBox head), some nothing (a builtin): the file system tells.
  sap_free "$1"
  sap_dg_n=$\{2:-0}
  [ "$sap_dg_n" -ge 65536 ] 2>/dev/null || sap_dg_n=65536
  [ -n "$SAP_FREE" ] && [ "$SAP_FREE" -lt "$sap_dg_n" ] && SAP_EC=no_space
  return 0
}
sap_err_keep() {
  # the failed step's stderr, bounded, on the program's stderr (the client quotes it)
  [ -z "$SAP_ERR" ] || printf 'sap: %s: %.400s\n' "$1" "$SAP_ERR" >&2
}
sap_fail_class() {
  # $1 path index or -, $2 directory (physical path), $3 what could not be
  # written, $4 bytes needed there (optional): print the classified FAIL
  # (and SPACE) lines.
  sap_diag "$2" "$4"
  case $SAP_EC in
  no_space)
    sap_out "FAIL no_space $1 $3"
    [ -n "$SAP_FREE" ] || sap_free "$2"
    sap_out "SPACE $1 $\{SAP_FREE:--}" ;;
  read_only_filesystem|permission_denied) sap_out "FAIL $SAP_EC $1 $3" ;;
  *) sap_out "FAIL remote_error $1 $3" ;;
  esac
  sap_err_keep "$3"
}
`;
