/**
 * Leftovers of killed read-only programs (SPEC §6.1, §7 round 2): a
 * snapshot or search program that is SIGKILLed (a timeout or a cancel: the
 * adapters kill its process group) cannot remove its private directories
 * (sh_private.ts), `.sap-snap.-XXXXXX` / `.sap-srch.-XXXXXX`, which hold
 * hard links of the files it read (keeping their old contents alive). The
 * next snapshot or search of the same effective user that makes its own
 * private directory in that directory removes them — only those whose
 * program is provably gone — and reports them (`REAP`, warning
 * `leftovers_removed` on the client).
 *
 * Who made it. With SAP_REAP set, sap_pmake writes a second line into the
 * id file: `<boot id> <pid namespace inode> <pid> <start time>` — the
 * kernel's boot id (/proc/sys/kernel/random/boot_id: this host, this
 * boot), the inode of the program's pid namespace, the pid of the
 * program's shell and its start time in clock ticks since boot (field 22
 * of /proc/<pid>/stat), which a later process reusing the pid cannot
 * have. Read with builtins; only the namespace inode costs one `stat`, once
 * per program, and only when it makes a private directory (shared
 * directories). A host without /proc writes `-`.
 *
 * Provably gone: same boot id and pid namespace as this program, and
 * /proc/<pid> is absent or its start time differs. Anything else — another
 * host sharing the directory (NFS), another boot, another pid namespace (a
 * container sharing the directory), a host without /proc, an id written by
 * an older version — cannot be decided and is left alone (docs/security.md: remove
 * those by hand). No age bound: the caller's timeoutMs has no upper limit,
 * so no age proves a program gone.
 *
 * Ours. A candidate is entered with `cd -P` and must then be: a child of
 * this very directory (physical path), owned by us (`-O .`), writable by
 * nobody else (no group or other write bit: nobody else can have put
 * anything in it), holding a regular file `id`, ours, that parses
 * (`snap.`/`srch.` matching its name's prefix, a hex secret, the owner line
 * above), and nothing but the names those programs make (`id`, `e`,
 * `p<n>`). Its files are removed from inside, `id` last, then the
 * directory under the name it has then, from its parent re-checked by
 * physical path: rmdir removes only an empty directory, so a live one put
 * under that name in between (it holds its `id`) stays. A planted
 * directory (someone else's), one of ours without such an id, or one with
 * anything else in it is never touched.
 *
 * Bounded: one glob of the directory (no fork), at most 1000 names looked
 * at with builtin tests and at most 64 of ours entered per directory and
 * run (a `stat` each); someone who plants many names can delay the
 * removal, never make it remove anything else.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** sap_owner, sap_start_time, sap_reap (need SH_PRIVATE's sap_pmake to call sap_reap, and sap_stat). */
export const SH_REAP: string = sh`
SAP_REAP= SAP_OWNER= SAP_REAPED=0 SAP_NOW=
sap_start_time() {
  # SAP_ST: field 22 of the /proc/<pid>/stat line $1 (after the command
  # name in parentheses, which may hold spaces: cut at its last ") ")
  SAP_ST=
  sap_st_r=$\{1##*) }
  [ "$sap_st_r" != "$1" ] || return 1
  set -- $sap_st_r
  [ $# -ge 20 ] || return 1
  shift 19
  case $1 in ''|*[!0-9]*) return 1 ;; esac
  SAP_ST=$1
}
sap_owner() {
  # SAP_OWNER: this program's identity for its id files (once), or -
  [ -z "$SAP_OWNER" ] || return 0
  SAP_OWNER=-
  sap_ow_b= sap_ow_s=
  { IFS= read -r sap_ow_b < /proc/sys/kernel/random/boot_id; } 2>/dev/null || return 0
  case $sap_ow_b in ''|*[!0-9a-f-]*) return 0 ;; esac
  { IFS= read -r sap_ow_s < /proc/$$/stat; } 2>/dev/null || return 0
  sap_start_time "$sap_ow_s" || return 0
  sap_ow_n=$(stat -L -c %i /proc/$$/ns/pid 2>/dev/null) || return 0
  case $sap_ow_n in ''|*[!0-9]*) return 0 ;; esac
  SAP_OWNER="$sap_ow_b $sap_ow_n $$ $SAP_ST"
}
sap_reap() {
  # $1: the index of the directory whose private directory sap_pmake has
  # just made. SAP_REAPED: how many leftovers were removed there. Leaves
  # the program in that directory (callers re-enter by path).
  SAP_REAPED=0
  [ "$SAP_OWNER" != - ] || return 0
  sap_get DIR_$1
  sap_rp_d=$SAP_V
  sap_get DP_$1
  sap_rp_own=$SAP_V
  sap_cd "$sap_rp_d" || return 0
  set +f
  set -- ./.sap-snap.-* ./.sap-srch.-*
  set -f
  sap_rp_n=0 sap_rp_k=0
  for sap_rp_e in "$@"; do
    sap_rp_n=$((sap_rp_n + 1))
    [ $sap_rp_n -le 1000 ] || break
    [ "$sap_rp_e" != "./$sap_rp_own" ] || continue
    [ -d "$sap_rp_e" ] && [ ! -L "$sap_rp_e" ] && [ -O "$sap_rp_e" ] || continue
    sap_rp_k=$((sap_rp_k + 1))
    [ $sap_rp_k -le 64 ] || break
    sap_hook reap_enter "$sap_rp_e"
    sap_reap_one "$sap_rp_d" "$sap_rp_e" && SAP_REAPED=$((SAP_REAPED + 1))
    sap_cd "$sap_rp_d" || return 0
  done
}
sap_reap_empty() {
  # From inside a private directory of a read program that has no id:
  # one made and renamed by someone else before its id was in, or emptied
  # and renamed just before its rmdir (sh_private.ts), by a program that
  # then could not find it. Removed when it is empty, ours (checked by the
  # caller), 0700 and untouched for 2 s or more — a program that is making
  # one has it empty only for a moment. $1: the directory it is in.
  set +f
  set -- "$1" ./* ./.[!.]* ./..?*
  set -f
  sap_re_d=$1
  shift
  for sap_re_e in "$@"; do
    case $sap_re_e in "./*"|"./.[!.]*"|"./..?*") [ ! -e "$sap_re_e" ] && [ ! -L "$sap_re_e" ] || return 1 ;; *) return 1 ;; esac
  done
  ST_MODE= ST_MTIME=
  sap_stat . || return 1
  [ -n "$ST_MODE" ] && [ $((ST_MODE & 63)) -eq 0 ] || return 1
  [ -n "$SAP_NOW" ] || SAP_NOW=$(date +%s 2>/dev/null)
  sap_isnum "$SAP_NOW" && [ $((SAP_NOW - ST_MTIME)) -ge 2 ] || return 1
  sap_hook reap_remove "$\{PWD##*/}"
  cd -P . 2>/dev/null || return 1
  sap_re_n=$\{PWD##*/}
  cd -P .. 2>/dev/null && [ "$PWD" = "$sap_re_d" ] && rmdir "./$sap_re_n" 2>/dev/null
}
sap_reap_one() {
  # $1 the directory (physical path), $2 ./<candidate>: 0 when it was ours,
  # its program gone, and it is removed (sh_reap.ts); anything else leaves
  # it as it is
  sap_ro_d=$1
  cd -P "$2" 2>/dev/null || return 1
  sap_ro_n=$\{PWD##*/}
  sap_join "$sap_ro_d" "$sap_ro_n"
  [ "$PWD" = "$SAP_J1" ] && [ -O . ] || return 1
  case $sap_ro_n in .sap-snap.-*) sap_ro_op=snap. ;; .sap-srch.-*) sap_ro_op=srch. ;; *) return 1 ;; esac
  if ! sap_exists ./id; then sap_reap_empty "$sap_ro_d"; return; fi
  [ -f ./id ] && [ ! -L ./id ] && [ -O ./id ] || return 1
  ST_MODE=
  sap_stat . || return 1
  [ -n "$ST_MODE" ] && [ $((ST_MODE & 18)) -eq 0 ] || return 1
  sap_ro_1= sap_ro_2=
  { IFS= read -r sap_ro_1; IFS= read -r sap_ro_2; } < ./id 2>/dev/null
  case $sap_ro_1 in "$sap_ro_op "????????????????*) ;; *) return 1 ;; esac
  case $\{sap_ro_1#"$sap_ro_op "} in *[!0-9a-f]*) return 1 ;; esac
  set -- $sap_ro_2
  [ $# -eq 4 ] || return 1
  case $3$4 in *[!0-9]*) return 1 ;; esac
  sap_ro_p=$3 sap_ro_s=$4
  # another host or boot, another pid namespace: it cannot be told
  [ "$1 $2" = "$\{SAP_OWNER% * *}" ] || return 1
  if [ -e "/proc/$sap_ro_p" ]; then
    sap_ro_l=
    { IFS= read -r sap_ro_l < "/proc/$sap_ro_p/stat"; } 2>/dev/null || return 1
    sap_start_time "$sap_ro_l" || return 1
    # the same process, still running (a zombie included): not gone
    [ "$SAP_ST" != "$sap_ro_s" ] || return 1
  fi
  # nothing but what the snapshot and search programs make
  set +f
  set -- ./* ./.[!.]* ./..?*
  set -f
  for sap_ro_e in "$@"; do
    case $sap_ro_e in
    ./id|./e) ;;
    ./p[0-9]*) case $\{sap_ro_e#./p} in *[!0-9]*) return 1 ;; esac ;;
    "./*"|"./.[!.]*"|"./..?*") [ ! -e "$sap_ro_e" ] && [ ! -L "$sap_ro_e" ] || return 1 ;;
    *) return 1 ;;
    esac
  done
  sap_hook reap_remove "$sap_ro_n"
  for sap_ro_e in "$@"; do
    case $sap_ro_e in ./id|"./*"|"./.[!.]*"|"./..?*") ;; *) rm -f "$sap_ro_e" 2>/dev/null || return 1 ;; esac
  done
  rm -f ./id 2>/dev/null || return 1
  cd -P . 2>/dev/null || return 1
  sap_ro_n=$\{PWD##*/}
  cd -P .. 2>/dev/null && [ "$PWD" = "$sap_ro_d" ] && rmdir "./$sap_ro_n" 2>/dev/null
}
`;
