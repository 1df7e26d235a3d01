/**
 * The search program: one exec greps the regular files below a directory
 * of the root, never following a symlink, never reading a file outside the
 * root (SPEC §9 round 2, §6.1).
 *
 * Arguments: `<root> <max lines> <line bytes> <E|F> <0|1 ignore case>`.
 * Stdin: `SAP-SEARCH-2`, `K <secret>` (marks the private directories),
 * the root-relative directory (empty line: the root), the file glob
 * (empty: every file), the pattern (one line). The
 * pattern reaches grep only through `grep -f <private file>`: never as an
 * argument (no option injection, nothing in /proc/<pid>/cmdline), never as
 * code.
 *
 * Stdout:
 * - `SAP-BEGIN search`; `ROOT`, `UNSUPPORTED`, `BAD_INPUT`, `REJECT`,
 *   `NOTDIR` (as the list program), `BADPATTERN <grep's message>` NUL,
 *   newline, or `TMPFAIL <class> <free bytes|-> <directory>` NUL, newline
 *   (a temporary could not be made or written in $TMPDIR or /tmp; class
 *   as in sh_faults.ts: no_space, read_only_filesystem, permission_denied,
 *   else remote_error) end it early;
 * - `F <n> <path>` NUL, newline, then exactly n lines `N:text` (grep -n,
 *   each cut to `<line bytes> + 17` bytes — the text after a number of up to 15 digits and the colon keeps more than `<line bytes>` when it was cut, so the client sees the cut):
 *   the matching lines of one file, at most `<max lines>` in all;
 * - `B <path>` (skipped as binary: it holds a NUL byte), `U <path>` (not
 *   readable, or a directory that could not be entered), `X <path>`
 *   (changed or swapped while being read: skipped), `P <cause> <path>`
 *   (in a shared directory and not pinnable there: hard_link_refused,
 *   no_space, read_only_filesystem, permission_denied, private_failed),
 *   each NUL, newline, at most 20 of each;
 * - `REAP <n> <path>` NUL, newline: making the private directory of the
 *   directory at <path> removed n leftovers of killed snapshots and
 *   searches there (sh_reap.ts);
 * - `FULL` when `<max lines>` were found (the walk stops there);
 * - `C <unreadable> <binary> <changed> <files searched> <directories> <unpinnable>`;
 * - `SAP-END ok`.
 *
 * How files are read. The walk (sh_walk.ts) enters each directory through
 * the verified `cd` and names entries `./name` inside it; symlinks are
 * skipped, as are `.git`, `.hg` and `.svn` below the searched directory.
 * - In a directory nobody else can change (owned by the effective user or
 *   root, no group or other write bit) names cannot be swapped under us:
 *   its files are grepped in batches (`grep -l`, then `grep -n` on the files
 *   that match).
 * - In any other directory a co-tenant could swap a name for a symlink
 *   or a FIFO between our check and grep's open. There each file is first
 *   pinned: hard-linked into the search's private directory in that
 *   directory (sh_private.ts: `mktemp -d`, mode 0700, marked with the
 *   stdin secret; one per directory, removed when the directory is done)
 *   — link(2) opens nothing and does not follow a symlink — and the pin is
 *   checked to be a regular file that the name still is. grep then reads
 *   the pin, `./p<n>` inside the private directory, where nobody else can
 *   rename, add or remove anything, and whose inode cannot turn into
 *   anything else: the bytes are those of the regular file that was inside
 *   the root, and no open can wait on a FIFO swapped in. Slower (a link
 *   and a grep per file, a private directory per directory), but only for
 *   shared directories. A file that cannot be pinned — another user's
 *   file this user may not hard-link (fs.protected_hardlinks), a directory
 *   this user may not write, a full or read-only file system — is not read
 *   at all: `P <cause> <path>` (the same files the snapshot refuses).
 * Binary files are skipped with `grep -I` where grep has it (GNU, BSD);
 * elsewhere (BusyBox) a matching file is first checked for a NUL byte.
 *
 * @module
 */
import { shQuote } from "../shell.ts";
import { assertRoot } from "./programs.ts";
import { SH_PATHS, SH_PRELUDE, SH_PROBE, SH_STAT_SHA } from "./sh_common.ts";
import { SH_FAULTS } from "./sh_faults.ts";
import { SH_MANIFEST } from "./sh_manifest.ts";
import { SH_PRIVATE } from "./sh_private.ts";
import { SH_REAP } from "./sh_reap.ts";
import { SH_SEARCH_PIN } from "./sh_search_pin.ts";
import { sh } from "./sh_text.ts";
import { SH_WALK } from "./sh_walk.ts";

const SH_SEARCH_MAIN: string = sh`
SAP_STATUS= SAP_PAT= SAP_OUT=
trap 'trap "" HUP INT TERM; sap_pclean_all; [ -z "$SAP_PAT" ] || rm -f "$SAP_PAT"; [ -z "$SAP_OUT" ] || rm -f "$SAP_OUT"; [ -n "$SAP_STATUS" ] || SAP_STATUS=interrupted; sap_out "SAP-END $SAP_STATUS"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
SAP_NU=0 SAP_NB=0 SAP_NX=0 SAP_NP=0 SAP_NF=0 SAP_ND=0 SAP_DONE=0 SAP_GBC=0 SAP_OP=srch. SAP_REAP=1 SAP_PSWAP= SAP_PFAIL= SAP_PN=0 SAP_LOST=
sap_note() {
  # $1 U|B|X|P, $2 root-relative path (P: $3 why): the first 20 of each kind are named
  case $1 in
  U) SAP_NU=$((SAP_NU + 1)); [ $SAP_NU -gt 20 ] || sap_rec U "$2" ;;
  B) SAP_NB=$((SAP_NB + 1)); [ $SAP_NB -gt 20 ] || sap_rec B "$2" ;;
  X) SAP_NX=$((SAP_NX + 1)); [ $SAP_NX -gt 20 ] || sap_rec X "$2" ;;
  P) SAP_NP=$((SAP_NP + 1)); [ $SAP_NP -gt 20 ] || sap_rec "P $3" "$2" ;;
  esac
}
sap_tmp_fail() {
  # A temporary could not be made or written in SAP_TMPD (SAP_ERR: what
  # mktemp said, if it was mktemp): the class of sh_faults.ts, the
  # directory, free bytes for no_space; then the program ends. Matching
  # lines are never lost silently to a full disk: grep's output is
  # written to a temporary, and a failed write ends the search here.
  [ -n "$SAP_GID" ] || SAP_GID=$(id -g 2>/dev/null)
  SAP_FREE=
  sap_diag "$SAP_TMPD"
  case $SAP_EC in no_space|read_only_filesystem|permission_denied) ;; *) SAP_EC=remote_error ;; esac
  [ "$SAP_EC" != no_space ] || [ -n "$SAP_FREE" ] || sap_free "$SAP_TMPD"
  sap_rec "TMPFAIL $SAP_EC $\{SAP_FREE:--}" "$SAP_TMPD"
  sap_err_keep tmp
  SAP_STATUS=failed
  exit 0
}
sap_has_nul() {
  # stdin holds a NUL byte
  sap_z=$(tr -dc '\000' | head -c 1 | wc -c)
  [ "$((sap_z))" -gt 0 ]
}
sap_search_one() {
  # $1 the file relative to the current directory (./…), $2 its
  # root-relative path, $3 1 = read it through a pin (sap_search_pin)
  sap_sf=$1
  if [ "$3" = 1 ]; then
    sap_search_pin "$\{1#./}"
    case $? in
    0) sap_sf=$SAP_PF ;;
    3) sap_note P "$2" "$SAP_PC"; return 0 ;;
    *) sap_note X "$2"; return 0 ;;
    esac
  fi
  if [ -z "$SAP_GI" ]; then
    sap_has_nul < "$sap_sf"; sap_bin=$?
    if [ $sap_bin -eq 0 ]; then
      sap_note B "$2"
      [ "$3" != 1 ] || sap_search_back
      return 0
    fi
  fi
  sap_m=
  [ "$SAP_GM" = 0 ] || sap_m="-m $SAP_LEFT"
  SAP_ERR=$(grep -n $sap_m $SAP_GI $SAP_GF -f "$SAP_PAT" -- "$sap_sf" 2>/dev/null | cut -b "1-$SAP_CUT" 2>&1 > "$SAP_OUT")
  sap_rc=$?
  # cut's stderr is captured because BusyBox cut exits 0 after a failed write
  [ $sap_rc = 0 ] && [ -z "$SAP_ERR" ] || sap_tmp_fail
  [ "$3" != 1 ] || sap_search_back
  sap_c=$(wc -l < "$SAP_OUT")
  sap_c=$((sap_c))
  [ $sap_c -gt 0 ] || return 0
  [ $sap_c -le $SAP_LEFT ] || sap_c=$SAP_LEFT
  printf 'F %s %s\000\n' "$sap_c" "$2"
  head -n $sap_c "$SAP_OUT"
  SAP_LEFT=$((SAP_LEFT - sap_c))
  if [ $SAP_LEFT -le 0 ]; then SAP_DONE=1; return 1; fi
  return 0
}
sap_search_batch() {
  # "$@": files (./…, none with a newline) relative to the current
  # directory, every directory on their way trusted; $SAP_BP: the
  # root-relative path of the current directory followed by /, or empty.
  [ $# -gt 0 ] || return 0
  sap_hits=$(grep -l $SAP_GI $SAP_GF -f "$SAP_PAT" -- "$@" 2>/dev/null)
  sap_ifs=$IFS
  IFS=$SAP_NL
  set -- $sap_hits
  IFS=$sap_ifs
  for sap_h in "$@"; do
    case $sap_h in ./*) ;; *) continue ;; esac
    sap_search_one "$sap_h" "$SAP_BP$\{sap_h#./}" 0 || return 1
  done
  return 0
}
sap_flush() {
  # The files queued across directories (GB_*, relative to the start
  # directory), grepped from the start directory, 200 per grep. The start
  # directory is re-entered by its path and must be the very directory
  # held open on fd 4 (a directory put in its place is not searched).
  [ $SAP_GBC -gt 0 ] || return 0
  if ! { sap_cd "$SD" && [ . -ef /dev/fd/4 ]; }; then
    sap_q=0
    while [ $sap_q -lt $SAP_GBC ]; do sap_get GB_$sap_q; sap_note X "$SAP_BQ$\{SAP_V#./}"; unset GB_$sap_q; sap_q=$((sap_q + 1)); done
    SAP_GBC=0
    return 0
  fi
  SAP_BP=$SAP_BQ
  sap_q=0
  while [ $sap_q -lt $SAP_GBC ]; do
    set --
    while [ $sap_q -lt $SAP_GBC ] && [ $# -lt 200 ]; do sap_get GB_$sap_q; set -- "$@" "$SAP_V"; unset GB_$sap_q; sap_q=$((sap_q + 1)); done
    sap_search_batch "$@" || { SAP_GBC=0; return 1; }
  done
  SAP_GBC=0
}
sap_trust() {
  # SAP_TR=1 when the entry stat'ed last (ST_UID, ST_MODE) can be changed
  # only by us or root: owned by one of them, no group or other write bit.
  SAP_TR=0
  [ -n "$SAP_EUID" ] && [ -n "$ST_UID" ] || return 0
  [ "$ST_UID" = "$SAP_EUID" ] || [ "$ST_UID" = 0 ] || return 0
  [ $((ST_MODE & 18)) -ne 0 ] || SAP_TR=1
}
sap_search_dir() {
  # Trust is judged on the directory actually entered (a stat of "."), so
  # a directory put in place of the one queued is judged for what it is.
  # WT (from the parent): 2 = the parent and every directory up to the
  # start are trusted. Here: 2 = this one too (its files join the
  # cross-directory batch), 1 = this one is (batch here, by ./name), 0 =
  # it is not (pin each file).
  ST_UID= ST_MODE=0
  sap_stat . || :
  sap_trust
  if [ $SAP_TR = 0 ]; then WT=0; elif [ "$WT" != 2 ]; then WT=1; fi
  SAP_ND=$((SAP_ND + 1)) SAP_LOST=
  if [ $WT = 0 ]; then
    # its pins go into a private directory of its own (index 0 of the
    # directory table, sh_private.ts), made on the first file
    sap_set DIR_0 "$WD"
    sap_set DP_0 ""
    SAP_DN=1 SAP_PFAIL= SAP_PN=0
  fi
  sap_dir_names
  set --
  if [ -z "$SAP_REL" ]; then sap_sr=$WR; elif [ "$WR" = "$SAP_REL" ]; then sap_sr=; else sap_sr=$\{WR#"$SAP_REL"/}; fi
  [ -z "$sap_sr" ] || sap_sr=$sap_sr/
  if [ -z "$WR" ]; then SAP_BP=; else SAP_BP=$WR/; fi
  sap_i=0
  while [ $sap_i -lt $SAP_NC ]; do
    sap_get N_$sap_i
    sap_nm=$SAP_V
    sap_i=$((sap_i + 1))
    sap_kind "$sap_nm"
    case $SAP_K in
    directory)
      case $sap_nm in .git|.hg|.svn) continue ;; esac
      if [ "$WL" -lt 64 ]; then
        sap_join "$WD" "$sap_nm"
        sap_child_rel "$sap_nm"
        sap_walk_push "$SAP_J1" "$SAP_CR" $((WL + 1)) $((WT == 2 ? 2 : 0))
      fi
      continue ;;
    file) ;;
    *) continue ;;
    esac
    if [ -n "$SAP_GLOB" ]; then
      case $SAP_GLOB in
      */*) case $sap_sr$sap_nm in $SAP_GLOB) ;; *) continue ;; esac ;;
      *) case $sap_nm in $SAP_GLOB) ;; *) continue ;; esac ;;
      esac
    fi
    sap_child_rel "$sap_nm"
    sap_rel=$SAP_CR
    if ! [ -r "./$sap_nm" ]; then sap_note U "$sap_rel"; continue; fi
    SAP_NF=$((SAP_NF + 1))
    case $WT$sap_nm in
    *"$SAP_NL"*|0*)
      sap_search_one "./$sap_nm" "$sap_rel" $((WT == 0)) || return 1
      # $WD could not be entered again after a pin: the rest of it is not searched
      if [ -n "$SAP_LOST" ]; then sap_note X "$WR"; return 0; fi ;;
    2*)
      sap_set GB_$SAP_GBC "./$sap_sr$sap_nm"
      SAP_GBC=$((SAP_GBC + 1)) ;;
    *)
      set -- "$@" "./$sap_nm"
      if [ $# -ge 200 ]; then sap_search_batch "$@" || return 1; set --; fi ;;
    esac
  done
  sap_search_batch "$@" || return 1
  [ $SAP_GBC -lt 200 ] || sap_flush
}
sap_out "SAP-BEGIN search"
sap_probe stat mktemp
command -v grep >/dev/null 2>&1 || sap_unsupported grep
command -v cut >/dev/null 2>&1 || sap_unsupported cut
SAP_MAXR=$2
sap_isnum "$SAP_MAXR" || sap_bad_input max
sap_isnum "$3" || sap_bad_input cut
SAP_CUT=$(($3 + 17))
case $4 in E) SAP_GF=-E ;; F) SAP_GF=-F ;; *) sap_bad_input mode ;; esac
case $5 in 1) SAP_GF="$SAP_GF -i" ;; 0) ;; *) sap_bad_input case ;; esac
sap_root "$1" || { sap_out "ROOT $SAP_ROOTERR"; SAP_STATUS=root; exit 0; }
IFS= read -r SAP_L || sap_bad_input eof
[ "$SAP_L" = SAP-SEARCH-2 ] || sap_bad_input header
IFS= read -r SAP_L || sap_bad_input eof
case $SAP_L in "K "????????????????*) SAP_SECRET=$\{SAP_L#K } ;; *) sap_bad_input secret ;; esac
case $SAP_SECRET in *[!0-9a-f]*) sap_bad_input secret ;; esac
IFS= read -r SAP_REL || sap_bad_input eof
IFS= read -r SAP_GLOB || sap_bad_input eof
IFS= read -r SAP_PATTERN || sap_bad_input eof
case $SAP_REL in /*) sap_bad_input path ;; esac
if printf 'a\n' | grep -I -e a >/dev/null 2>&1; then SAP_GI=-I; else SAP_GI=; command -v tr >/dev/null 2>&1 || sap_unsupported tr; fi
SAP_LEFT=$((SAP_MAXR + 1))
SAP_GM=0
[ "$(printf 'a\na\n' | grep -m 1 -e a 2>/dev/null)" != a ] || SAP_GM=1
[ / -ef / ] 2>/dev/null || sap_unsupported test-ef
SAP_EUID=$(id -u 2>/dev/null)
sap_isnum "$SAP_EUID" || SAP_EUID=
umask 077
# The two temporaries go where mktemp puts them ($TMPDIR, else /tmp): the
# search needs no write permission in the root. mktemp's stderr rides
# along, so a refusal is told as what it is (sap_tmp_fail).
SAP_TMPD=$\{TMPDIR:-/tmp}
case $SAP_TMPD in /*) ;; *) SAP_TMPD=/tmp ;; esac
SAP_PAT=$(mktemp "$SAP_TMPD/sap-search.XXXXXX" 2>&1) || { SAP_ERR=$SAP_PAT SAP_PAT=; sap_tmp_fail; }
SAP_OUT=$(mktemp "$SAP_TMPD/sap-search.XXXXXX" 2>&1) || { SAP_ERR=$SAP_OUT SAP_OUT=; sap_tmp_fail; }
{ printf '%s\n' "$SAP_PATTERN" > "$SAP_PAT"; } 2>/dev/null || sap_tmp_fail
# One line of input: BusyBox compiles the pattern only when it reads a line.
sap_e=$(printf 'x\n' | grep $SAP_GF -f "$SAP_PAT" 2>&1 >/dev/null)
if [ $? -gt 1 ]; then sap_rec BADPATTERN "$sap_e"; SAP_STATUS=ok; exit 0; fi
sap_start_dir "$SAP_REL" || { SAP_STATUS=ok; exit 0; }
if [ -z "$SAP_REL" ]; then SAP_BQ=; else SAP_BQ=$SAP_REL/; fi
# fd 4 holds the start directory, so a re-entry can prove it is the same one;
# without it no cross-directory batch is made.
if { command exec 4< .; } 2>/dev/null && [ . -ef /dev/fd/4 ]; then sap_wt=2; else sap_wt=0; fi
sap_walk_start "$SD" "$SAP_REL" $sap_wt
while sap_walk_next; do
  if ! sap_walk_enter; then sap_note U "$WR"; continue; fi
  sap_search_dir
  sap_sd_rc=$?
  sap_search_unpin
  [ $sap_sd_rc = 0 ] || break
done
[ "$SAP_DONE" = 1 ] || sap_flush
[ "$SAP_DONE" = 0 ] || sap_out FULL
sap_out "C $SAP_NU $SAP_NB $SAP_NX $SAP_NF $SAP_ND $SAP_NP"
SAP_STATUS=ok
exit 0
`;

const SEARCH_BODY = SH_PRELUDE + SH_PROBE + SH_STAT_SHA + SH_PATHS + SH_MANIFEST + SH_FAULTS + SH_PRIVATE + SH_REAP + SH_WALK + SH_SEARCH_PIN + SH_SEARCH_MAIN;

/** Settings of one search program. */
export interface SearchProgramSettings {
  /** Most matching lines to print (the program prints one more when there are more). */
  maxLines: number;
  /** Lines are cut to this many bytes plus one (so the client sees the cut). */
  lineBytes: number;
  /** grep -F instead of grep -E. */
  fixedString: boolean;
  ignoreCase: boolean;
}

/**
 * The search program for `root` (see the module doc for its protocol).
 *
 * @example
 * ```ts
 * const command = searchProgram("/srv/app", { maxLines: 100, lineBytes: 4096, fixedString: true, ignoreCase: false });
 * ```
 */
export function searchProgram(root: string, settings: SearchProgramSettings): string {
  assertRoot(root);
  for (const [name, value] of [["maxLines", settings.maxLines], ["lineBytes", settings.lineBytes]] as const) {
    if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`${name} must be a positive integer`);
  }
  const args = [root, String(settings.maxLines), String(settings.lineBytes), settings.fixedString ? "F" : "E", settings.ignoreCase ? "1" : "0"];
  // The one place caller data meets program text: single-quoted words (as programs.ts does).
  return `set -- ${args.map(shQuote).join(" ")}\n${SEARCH_BODY}`;
}
