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
 * <header>            SAP-COMMIT-2 | SAP-RECONCILE-2
 * K <secret>          this run's secret (hex), the id of its private
 *                     directories (lib/remote/programs/sh_private.ts);
 *                     stdin only, never in argv
 * <m>                 number of distinct paths, sorted by bytes (lock order)
 * <path> × m, each followed by a line with the lock-name hashes of its
 *                     suffixes: basename first, then one more component each
 * <n>                 number of planned files, in plan order
 * × n: <op> <src path index> <dst path index|-> <expected sha|-> <new sha|->
 *      <length|-> <offset|->   this file's bytes in the content after SAP-DATA
 *      <pieces|->              `-`: those bytes are the whole new content;
 *                              else a count, then that many lines, in order
 *                              (update and move only, lib/remote/delta.ts):
 *        S <offset> <length>   bytes of the current source file
 *        B <length>            the next bytes of this file's content
 *        I <escaped>           bytes given right here, escaped for
 *                              printf '%b' (printable ASCII, `\\`, `\0ooo`)
 * <total>             content bytes that follow
 * SAP-DATA            (commit only) then exactly <total> raw bytes
 * ```
 * Malformed input ends the program with `SAP-END bad_input` before it
 * touches anything. An `I` line is not checked beyond its prefix: it is
 * only ever stored with sap_set and printed as the argument of
 * `printf '%b'`, so whatever it holds can only change the stage's bytes,
 * which the stage's SHA-256 check then refuses.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** sap_read_manifest HEADER: fills SAP_SECRET, P_k, PH_k, F_<field>_i, PC_i_j, SAP_M, SAP_N, SAP_TOTAL. */
export const SH_MANIFEST: string = sh`
SAP_M=0 SAP_N=0 SAP_TOTAL=0
sap_bad_input() { sap_out "BAD_INPUT $1"; SAP_STATUS=bad_input; exit 0; }
sap_read_line() { IFS= read -r SAP_L || sap_bad_input eof; }
sap_read_count() {
  sap_read_line
  sap_isnum "$SAP_L" || sap_bad_input count
}
sap_piece_nums() {
  # $1 expected words after the kind, then the words of a piece line
  [ $# -eq $(( $1 + 2 )) ] || return 1
  shift 2
  for sap_x in "$@"; do
    sap_isnum "$sap_x" || return 1
    case $sap_x in 0?*) return 1 ;; esac
  done
}
sap_read_pieces() {
  # $1 file index, $2 piece count, $3 its bytes in the content: PC_<i>_<j>
  # holds each piece line, F_np_<i> the count.
  sap_set F_np_$1 $2
  sap_pj=0 sap_pb=0
  while [ $sap_pj -lt $2 ]; do
    sap_read_line
    case $SAP_L in
    "S "*) sap_piece_nums 2 $SAP_L || sap_bad_input piece ;;
    "B "*) sap_piece_nums 1 $SAP_L || sap_bad_input piece; sap_pb=$((sap_pb + $\{SAP_L#B })) ;;
    "I "?*) ;;
    *) sap_bad_input piece ;;
    esac
    sap_set PC_$\{1}_$sap_pj "$SAP_L"
    sap_pj=$((sap_pj + 1))
  done
  [ "$sap_pb" = "$3" ] || sap_bad_input piece_bytes
}
sap_read_manifest() {
  sap_read_line
  [ "$SAP_L" = "$1" ] || sap_bad_input header
  sap_read_line
  case $SAP_L in "K "????????????????*) SAP_SECRET=$\{SAP_L#K } ;; *) sap_bad_input secret ;; esac
  case $SAP_SECRET in *[!0-9a-f]*) sap_bad_input secret ;; esac
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
    sap_read_line
    sap_set F_np_$i ""
    case $SAP_L in
    -) ;;
    *)
      sap_isnum "$SAP_L" && [ "$SAP_L" -gt 0 ] || sap_bad_input pieces
      sap_np=$SAP_L
      sap_get F_op_$i
      case $SAP_V in update|move) ;; *) sap_bad_input pieces ;; esac
      sap_get F_len_$i
      sap_isnum "$SAP_V" || sap_bad_input pieces
      sap_read_pieces $i $sap_np "$SAP_V" ;;
    esac
    i=$((i + 1))
  done
  sap_read_count
  SAP_TOTAL=$SAP_L
}
`;
