/**
 * Reading the transaction manifest from stdin (commit and reconcile).
 *
 * The layout is written by lib/remote/manifest.ts — one field per line,
 * read with `IFS= read -r` so every byte of a line is kept (paths cannot
 * contain newlines: the lexical rules refuse control characters, and the
 * TypeScript side checks again before sending). Shells read a pipe one
 * byte at a time for `read`, so the content that follows the `SAP-DATA`
 * line is left untouched for `cat`.
 *
 * ```
 * <header>            SAP-COMMIT-1 | SAP-RECONCILE-1
 * <m>                 number of distinct paths, sorted by bytes (lock order)
 * <path> × m, each followed by a line with the lock-name hashes of its
 *                     suffixes: basename first, then one more component each
 * <n>                 number of planned files, in plan order
 * × n: <op> <src path index> <dst path index|-> <expected sha|-> <new sha|-> <length|-> <offset|->
 * <total>             content bytes that follow
 * SAP-DATA            (commit only) then exactly <total> raw bytes
 * ```
 * Malformed input ends the program with `SAP-END bad_input` before it
 * touches anything.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** sap_read_manifest HEADER: fills P_k, F_<field>_i, SAP_M, SAP_N, SAP_TOTAL. */
export const SH_MANIFEST: string = sh`
SAP_M=0 SAP_N=0 SAP_TOTAL=0
sap_bad_input() { sap_out "BAD_INPUT $1"; SAP_STATUS=bad_input; exit 0; }
sap_read_line() { IFS= read -r SAP_L || sap_bad_input eof; }
sap_read_count() {
  sap_read_line
  sap_isnum "$SAP_L" || sap_bad_input count
}
sap_read_manifest() {
  sap_read_line
  [ "$SAP_L" = "$1" ] || sap_bad_input header
  sap_read_count
  SAP_M=$SAP_L
  k=0
  while [ $k -lt $SAP_M ]; do
    sap_read_line
    case $SAP_L in ''|/*) sap_bad_input path ;; esac
    sap_set P_$k "$SAP_L"
    sap_read_line
    case $SAP_L in ''|*[!0-9a-f\ ]*) sap_bad_input lock_names ;; esac
    sap_set PH_$k "$SAP_L"
    k=$((k + 1))
  done
  sap_read_count
  SAP_N=$SAP_L
  i=0
  while [ $i -lt $SAP_N ]; do
    sap_read_line
    case $SAP_L in add|update|delete|move) ;; *) sap_bad_input op ;; esac
    sap_set F_op_$i "$SAP_L"
    sap_read_line
    sap_isnum "$SAP_L" && [ "$SAP_L" -lt "$SAP_M" ] || sap_bad_input src
    sap_set F_src_$i "$SAP_L"
    sap_read_line
    case $SAP_L in -) ;; *) sap_isnum "$SAP_L" && [ "$SAP_L" -lt "$SAP_M" ] || sap_bad_input dst ;; esac
    sap_set F_dst_$i "$SAP_L"
    for sap_f in exp new; do
      sap_read_line
      case $SAP_L in -) ;; *) [ $\{#SAP_L} -eq 64 ] || sap_bad_input sha; case $SAP_L in *[!0-9a-f]*) sap_bad_input sha ;; esac ;; esac
      sap_set F_$\{sap_f}_$i "$SAP_L"
    done
    for sap_f in len off; do
      sap_read_line
      case $SAP_L in -) ;; *) sap_isnum "$SAP_L" || sap_bad_input number ;; esac
      sap_set F_$\{sap_f}_$i "$SAP_L"
    done
    i=$((i + 1))
  done
  sap_read_count
  SAP_TOTAL=$SAP_L
}
`;
