/**
 * The list program: one exec lists a directory below the root, breadth
 * first to a depth, never following a symlink (SPEC §9 round 2, §6).
 *
 * Arguments: `<root> <max entries> <depth>`. Stdin: `SAP-LIST-1`, the
 * root-relative directory (an empty line for the root), the glob (an empty
 * line for none). Stdout:
 * - `SAP-BEGIN list`; then `ROOT <reason>`, `UNSUPPORTED <tool>`,
 *   `BAD_INPUT <what>`, `REJECT <code> <depth>` or `NOTDIR <kind>` end it
 *   early (the directory cannot be listed);
 * - `E <kind> <depth> <size|-> <mode|-> <mtime|-> <path>` NUL, newline: one
 *   entry (`sap_rec` in sh_walk.ts: the path runs to the NUL); size for
 *   regular files only; mode and mtime decimal; depth 1 = directly inside;
 * - `U <path>` NUL, newline: a directory that could not be entered (no
 *   permission, or swapped since it was seen); at most 20, and
 *   `UCOUNT <n>` before the end when there were more;
 * - `MORE` when there are more entries than the maximum (the walk stops);
 * - `SAP-END ok`.
 *
 * The glob is matched as a `case` pattern — data, never code: against the
 * entry's name, or, when it contains `/`, against its path below the
 * listed directory (where `*` also matches `/`). Directories are walked
 * whether or not they match it.
 *
 * @module
 */
import { shQuote } from "../shell.ts";
import { assertRoot } from "./programs.ts";
import { SH_PATHS, SH_PRELUDE, SH_PROBE, SH_STAT_SHA } from "./sh_common.ts";
import { SH_MANIFEST } from "./sh_manifest.ts";
import { sh } from "./sh_text.ts";
import { SH_WALK } from "./sh_walk.ts";

const SH_LIST_MAIN: string = sh`
SAP_STATUS=
trap 'trap "" HUP INT TERM; [ -n "$SAP_STATUS" ] || SAP_STATUS=interrupted; sap_out "SAP-END $SAP_STATUS"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
SAP_COUNT=0 SAP_UNREAD=0 SAP_FULL=0
sap_list_dir() {
  # Collect the entries to print (at most one more than still allowed),
  # queue the subdirectories, then stat the entries in batches and print.
  sap_dir_names
  sap_i=0 sap_cn=0 sap_room=$((SAP_MAXE - SAP_COUNT + 1))
  while [ $sap_i -lt $SAP_NC ]; do
    sap_get N_$sap_i
    sap_nm=$SAP_V
    sap_i=$((sap_i + 1))
    sap_kind "$sap_nm"
    sap_child_rel "$sap_nm"
    sap_rel=$SAP_CR
    if [ "$SAP_K" = directory ] && [ $((WL + 1)) -lt "$SAP_DEPTH" ]; then
      sap_join "$WD" "$sap_nm"
      sap_walk_push "$SAP_J1" "$sap_rel" $((WL + 1))
    fi
    if [ -n "$SAP_GLOB" ]; then
      case $SAP_GLOB in
      */*)
        sap_sub=$sap_rel
        [ -z "$SAP_REL" ] || sap_sub=$\{sap_rel#"$SAP_REL"/}
        case $sap_sub in $SAP_GLOB) ;; *) continue ;; esac ;;
      *) case $sap_nm in $SAP_GLOB) ;; *) continue ;; esac ;;
      esac
    fi
    [ $sap_cn -lt $sap_room ] || break
    sap_set C_n_$sap_cn "$sap_nm"
    sap_set C_k_$sap_cn "$SAP_K"
    sap_set C_r_$sap_cn "$sap_rel"
    sap_cn=$((sap_cn + 1))
  done
  sap_stat_batch $sap_cn
  sap_j=0
  while [ $sap_j -lt $sap_cn ]; do
    if [ "$SAP_COUNT" -ge "$SAP_MAXE" ]; then SAP_FULL=1; return 1; fi
    sap_get C_k_$sap_j; sap_k=$SAP_V
    sap_get C_r_$sap_j; sap_rel=$SAP_V
    sap_get CM_$sap_j; sap_md=$\{SAP_V:--}
    sap_get CT_$sap_j; sap_mt=$\{SAP_V:--}
    sap_sz=-
    if [ "$sap_k" = file ]; then sap_get CZ_$sap_j; sap_sz=$\{SAP_V:--}; fi
    printf 'E %s %s %s %s %s %s\000\n' "$sap_k" "$((WL + 1))" "$sap_sz" "$sap_md" "$sap_mt" "$sap_rel"
    SAP_COUNT=$((SAP_COUNT + 1))
    sap_j=$((sap_j + 1))
  done
  [ $sap_cn -lt $sap_room ] || { SAP_FULL=1; return 1; }
}
sap_out "SAP-BEGIN list"
sap_probe stat
SAP_MAXE=$2 SAP_DEPTH=$3
sap_isnum "$SAP_MAXE" || sap_bad_input max
sap_isnum "$SAP_DEPTH" || sap_bad_input depth
sap_root "$1" || { sap_out "ROOT $SAP_ROOTERR"; SAP_STATUS=root; exit 0; }
IFS= read -r SAP_L || sap_bad_input eof
[ "$SAP_L" = SAP-LIST-1 ] || sap_bad_input header
IFS= read -r SAP_REL || sap_bad_input eof
IFS= read -r SAP_GLOB || sap_bad_input eof
case $SAP_REL in /*) sap_bad_input path ;; esac
sap_start_dir "$SAP_REL" || { SAP_STATUS=ok; exit 0; }
sap_walk_start "$SD" "$SAP_REL"
while sap_walk_next; do
  if ! sap_walk_enter; then
    [ "$SAP_UNREAD" -ge 20 ] || sap_rec U "$WR"
    SAP_UNREAD=$((SAP_UNREAD + 1))
    continue
  fi
  sap_list_dir || break
done
[ "$SAP_FULL" = 0 ] || sap_out MORE
[ "$SAP_UNREAD" -le 20 ] || sap_out "UCOUNT $SAP_UNREAD"
SAP_STATUS=ok
exit 0
`;

const LIST_BODY = SH_PRELUDE + SH_PROBE + SH_STAT_SHA + SH_PATHS + SH_MANIFEST + SH_WALK + SH_LIST_MAIN;

/**
 * The list program for `root` (see the module doc for its protocol).
 *
 * @example
 * ```ts
 * const command = listProgram("/srv/app", 1000, 2);
 * ```
 */
export function listProgram(root: string, maxEntries: number, depth: number): string {
  assertRoot(root);
  for (const [name, value] of [["maxEntries", maxEntries], ["depth", depth]] as const) {
    if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`${name} must be a positive integer`);
  }
  // The one place caller data meets program text: single-quoted words (as programs.ts does).
  return `set -- ${[root, String(maxEntries), String(depth)].map(shQuote).join(" ")}\n${LIST_BODY}`;
}
