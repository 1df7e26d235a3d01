/**
 * The directory table and the private directories of the remote programs
 * (SPEC §6.1 "defence in depth").
 *
 * Directory table. Every directory a program works in or checks gets an
 * index n: `DIR_n` its physical path (absolute), `DT_n` its own trust
 * verdict and `DCT_n` whether it and every directory above it up to `/`
 * can be written only by the effective user and root (sh_trust.ts). Index 0
 * is always the root.
 *
 * Private directories. All temporaries a program makes in directory n
 * (stages, backups, pins, blob, journal, locks being built or released)
 * live in ONE private directory inside it, `P = DIR_n/.sap-<op>-XXXXXX`:
 * - made by `mktemp -d` run inside n (entered with sap_cd): the random part
 *   is drawn on the host inside the process that makes the directory, so it
 *   appears nowhere (no argv, no listing) before the directory exists, and
 *   a planted name only makes mktemp draw another one;
 * - mode 0700 and ours, so nobody else can create, rename or remove
 *   anything inside it, nor move it to another parent (that needs write
 *   permission on the directory itself, to update its `..`): `..` seen
 *   from inside P is always n;
 * - marked by the file `id` holding `<op> <secret>` (read-only programs
 *   add a second line saying who made it, sh_reap.ts), the per-run secret
 *   that only ever travels on stdin (never in argv: /proc/<pid>/cmdline is
 *   world-readable). It is written with noclobber right after mktemp, so
 *   a directory swapped in by someone else (theirs: not -O; or another of
 *   ours: already has an id) is refused.
 * Whoever can write n can still rename P within n and put something else
 * under its name; so P is only ever re-entered through sap_pcd, which
 * checks the physical path, the owner and the id again, and then works
 * with `./x` (inside P) and `../name` (an entry of n itself). A file
 * operation therefore never goes through a name in a directory others can
 * write, except the one final name it is about, and those operations are
 * the ones that never follow or open it: rename(2) (`mv -T`, onto the
 * name, never into it), link(2) (fails when the name exists) and stat.
 *
 * Names inside P (no secrecy needed: nobody else can reach them):
 * `id`; `b` the uploaded contents; `e` what the last command whose
 * failure needs telling apart said (its stderr: the command cutting a
 * stage from the blob, for sh_faults.ts; link in sap_pin); `j` the
 * finalize journal; per planned
 * file i: `s<i>` its new content (stage), `r/s<i>` a second link of the stage
 * (after the rename, `../name -ef ./r/s<i>` proves the name holds it),
 * `p/<name>` a hard link of its source `../<name>` (the pin: read for delta
 * uploads and hashed by the content check, and the backup; named as the
 * source, so that one `ln ../a ../b p` links them all), `c<i>` a copy of the source where no
 * hard link may be made, `d<i>` the source renamed aside (delete, move),
 * `x<i>` a created file taken back by an undo, `t<i>` a stage rebuilt for a
 * delta; per lock: `k/<lock name>` the lock built ahead (commit), `L<k>`
 * one built when taken alone, `u/<lock name>` a lock being released,
 * `X<n>` a stale lock being broken; in the snapshot `p<k>` the
 * pin of path k.
 *
 * Batches. A tool run over several files (sha256sum, stat, ls, chmod, sync) takes
 * absolute paths when every directory involved is trusted up to `/` (no
 * one else can rename anything on those paths), else runs once per private
 * directory, inside it, with `./x` names.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** Directory table, private directories, pins and batched tool runs. */
export const SH_PRIVATE: string = sh`
SAP_DN=0 SAP_SECRET= SAP_PDIRTY= SAP_BN=0 SAP_BT=1 SAP_BQP= SAP_REAP= SAP_PKEPT=
sap_dir_index() {
  # SAP_DI: the index of physical directory $1, added when new. Linear
  # whatever the table's size: the last directory seen at each depth is
  # remembered (consecutive paths share their directories, and the snapshot
  # sends its paths sorted, so a subtree's paths come together), and a miss
  # scans only the directories whose path has the same length (DXL_<len>).
  sap_dx_l=$\{#1}
  sap_get DXC_$sap_dx_l
  if [ -n "$SAP_V" ]; then
    eval "[ \"\$DIR_$SAP_V\" = \"\$1\" ]" && { SAP_DI=$SAP_V; return 0; }
  fi
  sap_get DXL_$sap_dx_l
  for sap_dx_n in $SAP_V; do
    eval "[ \"\$DIR_$sap_dx_n\" = \"\$1\" ]" && { SAP_DI=$sap_dx_n; sap_set DXC_$sap_dx_l $sap_dx_n; return 0; }
  done
  sap_set DXL_$sap_dx_l "$SAP_V $SAP_DN"
  sap_set DXC_$sap_dx_l $SAP_DN
  sap_set DIR_$SAP_DN "$1"
  sap_set DP_$SAP_DN ""
  SAP_DI=$SAP_DN
  SAP_DN=$((SAP_DN + 1))
}
sap_dir_chain() {
  # Register $1 and every directory above it up to the root; SAP_DI is
  # $1's index, DPAR_n the index of directory n's parent (for the root: -).
  # Stops at the first directory already known: its ancestors are.
  sap_dc=$1 sap_dct= sap_dc_c=
  while :; do
    sap_dc_o=$SAP_DN
    sap_dir_index "$sap_dc"
    [ -n "$sap_dct" ] || sap_dct=$SAP_DI
    [ -z "$sap_dc_c" ] || sap_set DPAR_$sap_dc_c $SAP_DI
    sap_dc_c=$SAP_DI
    [ $SAP_DN != $sap_dc_o ] || break
    if [ "$sap_dc" = "$SAP_R" ]; then sap_set DPAR_$SAP_DI -; break; fi
    sap_dc=$\{sap_dc%/*}
    [ -n "$sap_dc" ] || sap_dc=/
  done
  SAP_DI=$sap_dct sap_dct=
}
# a hard link that never replaces and never goes into a directory (probed: link(1), or ln -T)
sap_link() { $SAP_LINK "$1" "$2"; }
sap_pmake() {
  # Make the private directory of directory $1 (once). 1: it cannot be
  # made (no permission there, or it was swapped away before its id was in).
  sap_get DP_$1
  [ -z "$SAP_V" ] || return 0
  SAP_ERR=
  sap_get DIR_$1
  sap_pm_pd=$SAP_V
  sap_cd "$sap_pm_pd" || return 1
  # a read-only program's id says who made it (sh_reap.ts)
  [ -z "$SAP_REAP" ] || sap_owner
  # its stderr rides along: on failure it says why (SAP_ERR, sh_faults.ts)
  sap_pm_pn=$(mktemp -d "./.sap-$SAP_OP-XXXXXX" 2>&1) || { SAP_ERR=$sap_pm_pn; return 1; }
  sap_pm_pn=$\{sap_pm_pn##*/}
  case $sap_pm_pn in .sap-"$SAP_OP"-*) ;; *) return 1 ;; esac
  sap_join "$sap_pm_pd" "$sap_pm_pn"
  sap_pm_pp=$SAP_J1 sap_pm_ino=
  # a read-only program notes its inode, to remove it even if it is
  # renamed before it is proved ours (sap_pmade_drop)
  if [ -n "$SAP_REAP" ]; then ST_INO=; sap_stat "./$sap_pm_pn" && sap_pm_ino=$ST_INO; fi
  sap_hook private_made $1
  sap_cd "$sap_pm_pp" && [ -O . ] || { SAP_PSWAP=1; sap_pmade_drop "$sap_pm_pd" "$sap_pm_pn" "$sap_pm_ino" || SAP_PKEPT="$SAP_PKEPT $1"; return 1; }
  set -C
  if [ -z "$SAP_REAP" ]; then
    { printf '%s %s\n' "$SAP_OP" "$SAP_SECRET" > ./id; } 2>/dev/null
  else
    { printf '%s %s\n%s\n' "$SAP_OP" "$SAP_SECRET" "$SAP_OWNER" > ./id; } 2>/dev/null
  fi
  sap_pm_rc=$?
  set +C
  if [ $sap_pm_rc != 0 ]; then
    # our own empty id file: the write failed (a full disk; a builtin says
    # nothing useful, sap_diag asks the file system), not a swap
    if [ -f ./id ] && [ ! -L ./id ] && [ -O ./id ] && [ ! -s ./id ]; then
      SAP_ERR=
      # empty it from inside, then remove it under the name it has now
      rm -f ./id 2>/dev/null
      cd -P . 2>/dev/null && sap_pm_pn=$\{PWD##*/} && cd -P .. 2>/dev/null && rmdir "./$sap_pm_pn" 2>/dev/null
      return 1
    fi
    SAP_PSWAP=1
    sap_pmade_drop "$sap_pm_pd" "$sap_pm_pn" "$sap_pm_ino" || SAP_PKEPT="$SAP_PKEPT $1"
    return 1
  fi
  sap_set DP_$1 "$sap_pm_pn"
  sap_set DPP_$1 "$sap_pm_pp"
  # remove what killed snapshots and searches left here (sh_reap.ts)
  [ -z "$SAP_REAP" ] || sap_reap $1
  return 0
}
sap_pmade_drop() {
  # A private directory just made ($2 in directory $1) that could not be
  # proved ours (renamed or replaced before its id was in): remove it if
  # it is still there under its name and empty, else (a read-only
  # program, which knows its inode $3) under the name it has now — rmdir
  # removes no link to a directory and nothing that is not empty, so
  # whatever stands there loses nothing.
  # 1: not found (moved elsewhere; the caller reports it)
  sap_cd "$1" || return 1
  rmdir "./$2" 2>/dev/null || sap_prmdir_moved "$3"
}
sap_pcd() {
  # Enter directory $1's private directory, proving it is ours: physical
  # path, owner, id.
  sap_get DPP_$1
  [ -n "$SAP_V" ] && sap_cd "$SAP_V" && [ -O . ] || { SAP_PSWAP=1; return 1; }
  SAP_ID=
  { IFS= read -r SAP_ID < ./id; } 2>/dev/null
  [ "$SAP_ID" = "$SAP_OP $SAP_SECRET" ] || { SAP_PSWAP=1; return 1; }
}
sap_dir_still() {
  # From inside directory $1's private directory: its parent is still
  # directory $1, at its path (so whatever was just done to ../name
  # happened there). Leaves the program in directory $1.
  sap_get DIR_$1
  cd -P .. 2>/dev/null && [ "$PWD" = "$SAP_V" ]
}
sap_pclean() {
  # Remove directory $1's private directory and everything in it. Inside
  # it only we create entries, so its content goes with one rm -rf; the
  # directory itself goes with rmdir from its parent, under the name it has
  # now (someone who can write the parent may have renamed it). Where
  # every directory up to / is trusted (nobody else can rename anything on
  # the path), one rm -rf from the parent does both.
  sap_pc_d=$1
  sap_get DP_$1
  [ -n "$SAP_V" ] || return 0
  sap_pc_pn=$SAP_V
  sap_get DCT_$1
  if [ "$SAP_V" = 1 ]; then
    sap_get DIR_$1
    if sap_cd "$SAP_V" && [ -d "./$sap_pc_pn" ] && [ ! -L "./$sap_pc_pn" ] && rm -rf "./$sap_pc_pn" 2>/dev/null; then
      sap_set DP_$1 ""
      return 0
    fi
  fi
  if ! sap_pcd $1 && ! sap_pfind $1; then SAP_CLEAN_FAIL=1; SAP_PKEPT="$SAP_PKEPT $1"; return 1; fi
  set +f
  set -- ./*
  set -f
  [ "$1" = "./*" ] && [ ! -e "./*" ] && set --
  [ $# -eq 0 ] || rm -rf "$@" 2>/dev/null || { SAP_CLEAN_FAIL=1; return 1; }
  cd -P . 2>/dev/null || { SAP_CLEAN_FAIL=1; return 1; }
  sap_pc_pn=$\{PWD##*/} sap_pc_ino=
  # a read-only program (whose operation name all its runs share) notes
  # its inode, to know it again if it is renamed before the rmdir
  if [ -n "$SAP_REAP" ]; then ST_INO=; sap_stat . && sap_pc_ino=$ST_INO; fi
  if cd -P .. 2>/dev/null && { rmdir "./$sap_pc_pn" 2>/dev/null || sap_prmdir_moved "$sap_pc_ino"; }; then
    sap_set DP_$sap_pc_d ""
    return 0
  fi
  SAP_CLEAN_FAIL=1 SAP_PKEPT="$SAP_PKEPT $sap_pc_d"
  return 1
}
sap_prmdir_moved() {
  # From the parent of our emptied private directory, renamed just before
  # the rmdir: remove it under its new name, known by its inode ($1).
  # rmdir removes only an empty directory and never follows a link.
  [ -n "$1" ] || return 1
  sap_pr_r=0
  while [ $sap_pr_r -lt 20 ]; do
    sap_pr_r=$((sap_pr_r + 1))
    set +f
    set -- "$1" ./* ./.[!.]* ./..?*
    set -f
    sap_pr_i=$1
    shift
    for sap_pr_e in "$@"; do
      [ -d "$sap_pr_e" ] && [ ! -L "$sap_pr_e" ] && [ -O "$sap_pr_e" ] || continue
      ST_INO=
      sap_stat "$sap_pr_e" && [ "$ST_INO" = "$sap_pr_i" ] && rmdir "$sap_pr_e" 2>/dev/null && return 0
    done
    set -- "$sap_pr_i"
  done
  return 1
}
sap_pfind() {
  # Directory $1's private directory is not at its name: whoever can write
  # directory $1 renamed it, or put something else there, perhaps in a
  # loop. Look for it among the entries of directory $1, several rounds
  # (a rename may be under way), and enter it when found. Entering a
  # name there may follow whatever it is by then; nothing is read but an
  # ./id of ours, and the directory counts as ours only when that id holds
  # this run's secret, which no one else can have written. 1: not found
  # (moved elsewhere): the caller reports it.
  sap_pf_r=0
  while [ $sap_pf_r -lt 20 ]; do
    sap_pf_r=$((sap_pf_r + 1))
    sap_get DIR_$1
    sap_pf_d=$SAP_V
    sap_cd "$sap_pf_d" || return 1
    set +f
    set -- ./* ./.[!.]* ./..?*
    set -f
    sap_pf_n=0
    for sap_pf_e in "$@"; do
      sap_pf_n=$((sap_pf_n + 1))
      [ $sap_pf_n -le 1000 ] || break
      [ -d "$sap_pf_e" ] && [ ! -L "$sap_pf_e" ] && [ -O "$sap_pf_e" ] || continue
      if cd -P "$sap_pf_e" 2>/dev/null && [ -O . ] && [ -f ./id ] && [ ! -L ./id ] && [ -O ./id ]; then
        SAP_ID=
        { IFS= read -r SAP_ID < ./id; } 2>/dev/null
        [ "$SAP_ID" = "$SAP_OP $SAP_SECRET" ] && return 0
      fi
      sap_cd "$sap_pf_d" || return 1
    done
  done
  return 1
}
sap_pclean_all() {
  sap_pa_n=0
  while [ $sap_pa_n -lt $SAP_DN ]; do
    sap_pclean $sap_pa_n
    sap_pa_n=$((sap_pa_n + 1))
  done
}
sap_pin() {
  # $1 dir index, $2 name in it, $3 pin name in its private directory:
  # hard-link the entry into the private directory (link(2) opens nothing
  # and, on Linux, does not follow a symlink) and check the pin is a
  # regular file that the name still is. 0 pinned; 1 cannot pin (no hard
  # link allowed, another file system); 2 the name is not (any more) a
  # regular file, or kept changing while it was linked: a conflict; 4 no
  # private directory there (no write permission, or it was swapped:
  # SAP_PSWAP).
  # A failed link is not yet a refusal: someone who can write the directory
  # may have renamed the name away while link(2) ran and back right after,
  # so that it is a regular file again by the time we look. link's stderr
  # (LC_ALL=C, sh_common.ts) then says ENOENT, which a real refusal never
  # does (EPERM: fs.protected_hardlinks or a file system without hard
  # links; EXDEV; EMLINK). The link is tried up to 3 times while the name
  # is a regular file; a name still missing under link(2) at the last try
  # is a conflict (retryable: it changed while being read), any other
  # failure the refusal (1). Its stderr goes to ./e in the private
  # directory (no subshell, no fork), read back with a builtin.
  [ -n "$SAP_LINK" ] || sap_probe link
  sap_pmake $1 || return 4
  sap_pcd $1 || return 4
  sap_pn_try=1
  while :; do
    sap_link "../$2" "./$3" 2>|./e && break
    [ -L "../$2" ] && return 2
    [ -f "../$2" ] || return 2
    sap_pn_e=
    { IFS= read -r sap_pn_e < ./e; } 2>/dev/null
    [ $sap_pn_try -lt 3 ] || { case $sap_pn_e in *"No such file or directory"*) return 2 ;; esac; return 1; }
    sap_pn_try=$((sap_pn_try + 1))
    sap_hook pin_retry $3
  done
  [ -f "./$3" ] && [ ! -L "./$3" ] && [ ! -L "../$2" ] && [ "../$2" -ef "./$3" ] && return 0
  return 2
}
sap_group() {
  # Items 0..$3-1 by directory: G$1H_d the first item i whose $2$i is
  # directory d, G$1X_i the next one (in index order, "" after the last).
  # A loop over one directory's items then visits only those, instead of
  # every item once per directory (the square of their numbers).
  sap_gr_d=0
  while [ $sap_gr_d -lt $SAP_DN ]; do unset G$1H_$sap_gr_d; sap_gr_d=$((sap_gr_d + 1)); done
  sap_gr_i=$(($3 - 1))
  while [ $sap_gr_i -ge 0 ]; do
    eval "sap_gr_d=\$\{$2$sap_gr_i-}"
    if [ -n "$sap_gr_d" ]; then
      eval "G$1X_$sap_gr_i=\$\{G$1H_$sap_gr_d-}; G$1H_$sap_gr_d=$sap_gr_i"
    fi
    sap_gr_i=$((sap_gr_i - 1))
  done
}
sap_batch_add() {
  # queue the entry $2 of directory $1's private directory ($3 = 1: $2 is
  # an absolute path of a file in a trusted directory, not in a private one).
  # Each part (a directory's private entries, or the absolute ones: abs)
  # keeps its entries as a list in queue order (BQH_part, BX_j, BQT_part),
  # so a run visits every entry once, whatever the number of directories.
  [ $SAP_BN -gt 0 ] || { sap_batch_reset; SAP_BT=1; }
  sap_set BI_$SAP_BN "$1"
  sap_set BN_$SAP_BN "$2"
  sap_set BA_$SAP_BN "$3"
  sap_set BX_$SAP_BN ""
  if [ "$3" = 1 ]; then sap_bq=abs; else
    sap_bq=$1
    if [ "$SAP_BT" = 1 ]; then sap_get DCT_$1; [ "$SAP_V" = 1 ] || SAP_BT=0; fi
  fi
  sap_get BQT_$sap_bq
  if [ -n "$SAP_V" ]; then sap_set BX_$SAP_V $SAP_BN; else sap_set BQH_$sap_bq $SAP_BN; SAP_BQP="$SAP_BQP $sap_bq"; fi
  sap_set BQT_$sap_bq $SAP_BN
  SAP_BN=$((SAP_BN + 1))
}
sap_batch_reset() {
  for sap_bq in $SAP_BQP; do unset BQH_$sap_bq BQT_$sap_bq; done
  SAP_BQP=
}
sap_batch_run() {
  # Run "$1" (sha, stat, ls, acl or sync) over the queue: BS_j (sha) or BM_j BU_j BG_j
  # BL_j BZ_j BT_j BO_j BY_j (stat), j = 0..SAP_BN-1, or SAP_BFLAG=1 when
  # ls -ld or getfattr shows an ACL or extended attribute on any (ls), when
  # ls -ld shows an ACL on any (acl); then empty the queue, unless $2 is "keep".
  # One run over absolute paths when every directory involved is trusted
  # (SAP_BT), else one per private directory that has entries, from inside it.
  [ $SAP_BN -gt 0 ] || return 0
  if [ "$SAP_BT" = 1 ]; then
    sap_batch_part "$1" all
  else
    for sap_br_d in $SAP_BQP; do
      [ $sap_br_d = abs ] || sap_batch_part "$1" $sap_br_d
    done
    sap_batch_part "$1" abs
  fi
  [ "$2" = keep ] || { SAP_BN=0; sap_batch_reset; }
}
sap_batch_next() {
  # SAP_BJ: the next entry of part $1 after SAP_BJ ("" at the start), "" at the end
  if [ "$1" = all ]; then
    SAP_BJ=$(($\{SAP_BJ:--1} + 1))
    [ $SAP_BJ -lt $SAP_BN ] || SAP_BJ=
  elif [ -z "$SAP_BJ" ]; then sap_get BQH_$1; SAP_BJ=$SAP_V
  else sap_get BX_$SAP_BJ; SAP_BJ=$SAP_V; fi
}
sap_batch_names() {
  # the operands of part $1, one a line (run in a command substitution)
  SAP_BJ=
  while sap_batch_next $1; [ -n "$SAP_BJ" ]; do
    sap_get BN_$SAP_BJ
    case $1 in
    abs) sap_out "$SAP_V" ;;
    all)
      sap_bn=$SAP_V
      sap_get BA_$SAP_BJ
      if [ "$SAP_V" = 1 ]; then sap_out "$sap_bn"
      else sap_get BI_$SAP_BJ; sap_get DPP_$SAP_V; sap_out "$SAP_V/$sap_bn"; fi ;;
    *) sap_out "./$SAP_V" ;;
    esac
  done
}
sap_batch_part() {
  # $2: all (absolute paths), abs (only the absolute entries) or a
  # directory index (that private directory's entries, from inside it)
  sap_bw=$1 sap_bs=$2
  case $sap_bs in all) ;; *) sap_get BQH_$sap_bs; [ -n "$SAP_V" ] || return 0 ;; esac
  # the operands: a short queue grows "$@" here (no fork); a long one
  # comes from one command substitution (growing "$@" costs the square)
  if [ $SAP_BN -le 128 ]; then
    sap_bl= SAP_BJ=
    set --
    while sap_batch_next $sap_bs; [ -n "$SAP_BJ" ]; do
      sap_get BN_$SAP_BJ
      case $sap_bs in
      abs) set -- "$@" "$SAP_V" ;;
      all)
        sap_bn=$SAP_V
        sap_get BA_$SAP_BJ
        if [ "$SAP_V" = 1 ]; then set -- "$@" "$sap_bn"
        else sap_get BI_$SAP_BJ; sap_get DPP_$SAP_V; set -- "$@" "$SAP_V/$sap_bn"; fi ;;
      *) set -- "$@" "./$SAP_V" ;;
      esac
    done
    sap_bp_short=1
  else
    sap_bl=$(sap_batch_names $sap_bs)
    sap_bp_short=
  fi
  case $sap_bs in
  all|abs) ;;
  *)
    if ! sap_pcd $sap_bs; then
      [ "$sap_bw" = ls ] && return 0
      SAP_BJ=
      while sap_batch_next $sap_bs; [ -n "$SAP_BJ" ]; do sap_batch_none $sap_bw $SAP_BJ; done
      return 0
    fi ;;
  esac
  if [ -z "$sap_bp_short" ]; then
    sap_bp_ifs=$IFS
    IFS=$SAP_NL
    set -- $sap_bl
    IFS=$sap_bp_ifs
  fi
  [ $# -gt 0 ] || return 0
  case $sap_bw in
  sync)
    # fsync of each (GNU and BusyBox sync FILE; sh_durable.ts)
    sap_sync "$@"
    return 0 ;;
  sha) sap_sha_list "$@" || sap_sha_each "$@" ;;
  chmod)
    # one mode for all (SAP_BMODE); only ever stages inside our private
    # directories, where nobody else can put a symlink for chmod to follow
    chmod "$SAP_BMODE" "$@" 2>/dev/null
    return 0 ;;
  acl)
    # only an ACL (+), not other extended attributes: SAP_BFLAG=1
    sap_bp_l=$(ls -ld "$@" 2>/dev/null)
    sap_bp_ifs=$IFS
    IFS=$SAP_NL
    for sap_bp_x in $sap_bp_l; do
      case $sap_bp_x in ??????????+*) SAP_BFLAG=1 ;; esac
    done
    IFS=$sap_bp_ifs
    return 0 ;;
  ls)
    sap_bp_l=$(ls -ld "$@" 2>/dev/null)
    sap_bp_ifs=$IFS
    IFS=$SAP_NL
    for sap_bp_x in $sap_bp_l; do
      case $sap_bp_x in ??????????[+@]*) SAP_BFLAG=1 ;; esac
    done
    IFS=$sap_bp_ifs
    if [ -z "$SAP_BFLAG" ] && command -v getfattr >/dev/null 2>&1; then
      sap_bp_l=$(getfattr -d -m - "$@" 2>/dev/null | grep -v -e '^#' -e '^$' -e '^security\.selinux=' 2>/dev/null)
      [ -n "$sap_bp_l" ] && SAP_BFLAG=1
    fi
    return 0 ;;
  *) sap_stat_list "$@" || sap_stat_each "$@" ;;
  esac
  sap_bk=0 SAP_BJ=
  while sap_batch_next $sap_bs; [ -n "$SAP_BJ" ]; do
    sap_bk=$((sap_bk + 1))
    case $sap_bw in
    sha) sap_get SHA_$sap_bk; sap_set BS_$SAP_BJ "$SAP_V" ;;
    *)
      for sap_bp_f in M:STM U:STU G:STG L:STN Z:STS T:STT O:STI Y:STY; do
        eval "sap_set B$\{sap_bp_f%%:*}_$SAP_BJ \"\$$\{sap_bp_f#*:}_$sap_bk\""
      done ;;
    esac
  done
}
sap_batch_none() {
  case $1 in
  sync) SAP_DURABLE=0 ;;
  chmod) ;;
  sha) sap_set BS_$2 "" ;;
  *) for sap_bn_f in M U G L Z T O Y; do sap_set B$\{sap_bn_f}_$2 ""; done ;;
  esac
}
`;
