/**
 * How the search program reads a file of a directory other users can
 * write (search_program.ts): it pins the file — a hard link into the
 * search's private directory there (sh_private.ts) — checks the pin is a
 * regular file that the name still is, and reads only the pin. Nothing
 * opens a name another user can change, so a name swapped for a symlink
 * cannot make it read outside the root and one swapped for a FIFO cannot
 * make it wait (it opened the name after a `[ -f ]` check before, and a
 * FIFO put there in between held the open until the call's timeout).
 *
 * Uses index 0 of the directory table for the directory being searched
 * ($WD, set by sap_search_dir), so the table never grows with the walk.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** sap_search_pin, sap_search_back, sap_search_unpin (need SH_FAULTS, SH_PRIVATE and the walk's WD). */
export const SH_SEARCH_PIN: string = sh`
sap_search_pin() {
  # $1 a name in the current directory, an untrusted one ($WD): hard-link
  # it into this directory's private directory (sh_private.ts: made once
  # per directory, index 0, removed when the directory is done) and check
  # the pin is a regular file that the name still is. link(2) opens
  # nothing and does not follow a symlink, and the pin's inode cannot be
  # changed into anything else, so what is then read — ./p<n> inside the
  # private directory, where nobody else can rename, add or remove — is
  # the regular file that was inside the root, whatever the name is
  # swapped for meanwhile (a FIFO included: nothing here opens a name
  # another user can change, so nothing waits on one).
  # 0: pinned, SAP_PF = the pin (./p<n>), the program is in the private
  # directory; 1: it changed (not a regular file any more, swapped while
  # linked, our private directory swapped); 3: it cannot be pinned
  # (SAP_PC: hard_link_refused, no_space, read_only_filesystem or
  # permission_denied). Both 1 and 3 leave the program in $WD.
  [ -f "./$1" ] && ! [ -L "./$1" ] || return 1
  if [ -n "$SAP_PFAIL" ]; then SAP_PC=$SAP_PFAIL; return 3; fi
  sap_hook search_pin_check "$1"
  SAP_PN=$((SAP_PN + 1))
  sap_pin 0 "$1" p$SAP_PN
  sap_sp_rc=$?
  # leftovers of killed snapshots and searches removed here (sh_reap.ts)
  if [ "$SAP_REAPED" != 0 ]; then sap_rec "REAP $SAP_REAPED" "$WR"; SAP_REAPED=0; fi
  case $sap_sp_rc in
  0) SAP_PF=./p$SAP_PN ;;
  1)
    # link(2) refused (fs.protected_hardlinks: another user's file this
    # user may not write; too many links), or the disk is full
    case $sap_pn_e in *"No space left"*|*"Disk quota exceeded"*) SAP_PC=no_space ;; *) SAP_PC=hard_link_refused ;; esac
    sap_search_back || return 1
    return 3 ;;
  4)
    if [ -n "$SAP_PSWAP" ]; then SAP_PSWAP=; sap_search_back; return 1; fi
    # no private directory here: the same for every file of it
    [ -n "$SAP_GID" ] || SAP_GID=$(id -g 2>/dev/null)
    sap_diag "$WD"
    case $SAP_EC in no_space|read_only_filesystem|permission_denied) SAP_PC=$SAP_EC ;; *) SAP_PC=private_failed ;; esac
    sap_err_keep private
    SAP_PFAIL=$SAP_PC
    sap_search_back || return 1
    return 3 ;;
  *) sap_search_back; return 1 ;;
  esac
  sap_hook search_pin_open "$1"
  return 0
}
sap_search_back() {
  # Back from the private directory (or wherever a failed pin left the
  # program) to $WD: through .. of the private directory when that is
  # still $WD, else by its path. 1 (SAP_LOST=1): $WD cannot be entered
  # any more; the rest of it is not searched.
  [ "$PWD" = "$WD" ] && return 0
  sap_dir_still 0 2>/dev/null && return 0
  sap_cd "$WD" && return 0
  SAP_LOST=1
  return 1
}
sap_search_unpin() {
  # $WD is done: remove its private directory and everything in it
  [ "$SAP_DN" = 0 ] && return 0
  sap_pclean 0
  # one someone else moved out of reach (sh_private.ts, sap_pfind): told
  [ -z "$SAP_PKEPT" ] || sap_rec "KEPT 1" "$WR"
  SAP_DN=0 SAP_PFAIL= SAP_PN=0 SAP_PKEPT=
}
`;
