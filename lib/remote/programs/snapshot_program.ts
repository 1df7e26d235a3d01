/**
 * The snapshot program: one exec reads every path of a patch.
 *
 * Arguments: `<root> <max file bytes>`. Stdin: `SAP-SNAPSHOT-1`, the number
 * of paths, then one path per line. Stdout, per path index k:
 * - `S k <kind> <size|-> <mode|-> <uid|-> <gid|-> <nlink|-> <parent exists 0|1>`
 *   followed by exactly `size` raw bytes when size is not `-`;
 * - `R k <code> <detail>` when the path is refused (§6, permissions, limit);
 *   a component refusal has no `S` line.
 * then `SAP-END ok`. `ROOT <reason>` and `UNSUPPORTED <tool>` end early.
 *
 * A regular file is first copied to a private temp file and the copy is
 * measured and sent, so the size in the header and the bytes that follow
 * always agree even if the file changes while being read; the SHA-256 that
 * identifies the snapshot is computed by the client from the bytes it
 * received. After the copy the name is checked to still be the same
 * regular file (same inode, not a symlink); a swap in that window is
 * reported `conflict` (read again). The remaining window — the name swapped
 * for a symlink and back while `cat` runs — cannot be closed from `sh`
 * (no O_NOFOLLOW) and is documented in the README's security notes.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** Main part of the snapshot program (needs the common functions before it). */
export const SH_SNAPSHOT_MAIN: string = sh`
SAP_STATUS= SAP_TMP=
sap_snap_exit() {
  trap '' HUP INT TERM
  [ -n "$SAP_TMP" ] && rm -f "$SAP_TMP" 2>/dev/null
  [ -n "$SAP_STATUS" ] || SAP_STATUS=interrupted
  sap_out "SAP-END $SAP_STATUS"
}
trap 'sap_snap_exit' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
sap_snap_one() {
  sap_get P_$1
  if ! sap_resolve "$SAP_V"; then
    [ "$RK" = symlink ] && sap_out "S $1 symlink - - - - - 1"
    sap_out "R $1 $RJ $RD"
    return 0
  fi
  if [ "$RK" = missing ]; then sap_out "S $1 missing - - - - - $RX"; return 0; fi
  sap_join "$RP" "$RN"
  sap_f=$SAP_J1
  if ! sap_stat "$sap_f"; then
    sap_out "S $1 $RK - - - - - 1"
    sap_out "R $1 remote_error 0"
    return 0
  fi
  sap_meta="$ST_MODE $ST_UID $ST_GID $ST_NLINK 1"
  if [ "$RK" != file ]; then sap_out "S $1 $RK - $sap_meta"; return 0; fi
  if [ "$ST_SIZE" -gt "$SAP_MAX" ]; then
    sap_out "S $1 file - $sap_meta"
    sap_out "R $1 limit_exceeded $ST_SIZE"
    return 0
  fi
  sap_ino=$ST_INO
  if ! { sap_cd "$RP" && [ -r "./$RN" ]; }; then
    sap_out "S $1 file - $sap_meta"
    sap_out "R $1 permission_denied 0"
    return 0
  fi
  if ! { sap_cd "$RP" && cat "./$RN" > "$SAP_TMP"; } 2>/dev/null; then
    sap_out "S $1 file - $sap_meta"
    sap_out "R $1 remote_error 0"
    return 0
  fi
  sap_hook snapshot_read $1
  if [ -L "$sap_f" ] || ! sap_stat "$sap_f" || [ "$ST_INO" != "$sap_ino" ]; then
    sap_out "S $1 file - $sap_meta"
    sap_out "R $1 conflict 0"
    return 0
  fi
  if ! sap_stat "$SAP_TMP"; then
    sap_out "S $1 file - $sap_meta"
    sap_out "R $1 remote_error 0"
    return 0
  fi
  if [ "$ST_SIZE" -gt "$SAP_MAX" ]; then
    sap_out "S $1 file - $sap_meta"
    sap_out "R $1 limit_exceeded $ST_SIZE"
    return 0
  fi
  sap_out "S $1 file $ST_SIZE $sap_meta"
  cat "$SAP_TMP"
}
sap_out "SAP-BEGIN snapshot"
sap_probe stat mktemp
SAP_MAX=$2
sap_isnum "$SAP_MAX" || sap_bad_input max
sap_root "$1" || { sap_out "ROOT $SAP_ROOTERR"; SAP_STATUS=root; exit 0; }
sap_read_line
[ "$SAP_L" = SAP-SNAPSHOT-1 ] || sap_bad_input header
sap_read_count
SAP_M=$SAP_L
k=0
while [ $k -lt $SAP_M ]; do
  sap_read_line
  case $SAP_L in ''|/*) sap_bad_input path ;; esac
  sap_set P_$k "$SAP_L"
  k=$((k + 1))
done
umask 077
SAP_TMP=$(mktemp 2>/dev/null) || { SAP_TMP=; sap_out "FAIL remote_error - tmp"; SAP_STATUS=failed; exit 0; }
k=0
while [ $k -lt $SAP_M ]; do
  sap_snap_one $k
  k=$((k + 1))
done
SAP_STATUS=ok
exit 0
`;
