/**
 * The commit's go-ahead and its watchdogs (issue 26 item 4, issue 28 item
 * 7): a commit that its client cancelled or lost stops before its first
 * rename, removing everything it made, instead of finishing unseen or
 * holding its locks until some timeout.
 *
 * With the gate on (`SAP_GATE` > 0 seconds; the client's adapter says it
 * can answer, lib/remote/shell.ts `stdinGate`), stdin is not closed after
 * the contents. The program reads exactly the contents (`head -c`, not to
 * EOF), stages, locks, checks, pins, copies metadata and opens the
 * journal, and then — right before the content comparison that precedes
 * the first rename — prints `GATE` and reads the client's answer: `GO` and
 * it goes on; anything else ends it as `CANCELLED eof` (stdin ended: the
 * client cancelled, or its connection closed) or `CANCELLED timeout` (no
 * answer within SAP_GATE seconds: a stalled link, a client gone without a
 * word). The gate comes before the content comparison so that the window
 * between that comparison and the renames (SPEC §7, where a writer that
 * ignores the locks can be lost) stays as small as it was; a cancel that
 * arrives after the client said GO is too late, and the commit finishes.
 *
 * Both reads have a watchdog: a reader blocked on a link that stalls (no
 * data, no EOF) is otherwise stuck for good. The contents are read in the
 * background (sap_timed_read), the answer with the builtin read, which the
 * watchdog interrupts with USR1. The contents' watchdog gives up after SAP_GATE seconds
 * without progress (the blob not growing: `CANCELLED stalled`), the gate's
 * after SAP_GATE seconds in all. Every end of the program before step 5 —
 * these, a SIGTERM from the client's adapter (sent instead of SIGKILL
 * while the gate is unanswered), a failure — goes through the EXIT trap,
 * which releases the locks and removes the private directories; from step
 * 5 on, the TERM trap rolls back (commit_finalize.ts). So nothing is ever
 * left half-applied by a cancel, and nothing is left in the root by one
 * that the program sees.
 *
 * The readers need stdin on fd 9 (5 to 8 are taken): an asynchronous command's own stdin is
 * /dev/null in a shell without job control, before any redirection.
 * Readers and watchdogs are only ever stopped with SIGKILL: a forked
 * shell that has not yet exec'd or reset its traps (seen under bash) runs
 * the program's own TERM and EXIT traps when sent SIGTERM, and would clean
 * up under the program's feet. For the same reason an adapter stopping a
 * gated program sends SIGTERM to its shell alone, never to its group.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** sap_gate_stdin, sap_timed_read, sap_read_blob, sap_commit_gate. */
export const SH_COMMIT_GATE: string = sh`
SAP_GATE=0 SAP_TR_R= SAP_TR_W=
sap_gate_stdin() {
  [ "$SAP_GATE" -gt 0 ] || return 0
  sap_probe head
  exec 9<&0
}
sap_timed_read() {
  # $1 bytes from stdin into the file $2 of the private directory we are
  # in, giving up after $3 seconds in all — or, with $4 = stall, after $3
  # seconds in which $2 did not grow. 0 read (perhaps short: stdin ended),
  # 1 the reader failed (its stderr in ./e), 2 given up.
  rm -f ./w
  head -c "$1" <&9 >| "$2" 2>| ./e &
  SAP_TR_R=$!
  (
    trap - EXIT
    sap_tw_n=0 sap_tw_l=-1
    while [ $sap_tw_n -lt "$3" ]; do
      sleep 1
      kill -0 $SAP_TR_R 2>/dev/null || exit 0
      sap_tw_n=$((sap_tw_n + 1))
      if [ "$4" = stall ] && sap_stat "$2" && [ "$ST_SIZE" != "$sap_tw_l" ]; then sap_tw_l=$ST_SIZE sap_tw_n=0; fi
    done
    : >| ./w
    kill -9 $SAP_TR_R 2>/dev/null
  ) </dev/null >/dev/null 2>&1 &
  SAP_TR_W=$!
  wait $SAP_TR_R
  sap_tr_rc=$?
  SAP_TR_R=
  kill -9 $SAP_TR_W 2>/dev/null
  wait $SAP_TR_W 2>/dev/null
  SAP_TR_W=
  [ ! -e ./w ] || { rm -f ./w; return 2; }
  [ $sap_tr_rc = 0 ] || return 1
  return 0
}
sap_timed_stop() {
  # from the EXIT trap: a reader or watchdog still running
  [ -z "$SAP_TR_R" ] || kill -9 $SAP_TR_R 2>/dev/null
  [ -z "$SAP_TR_W" ] || kill -9 $SAP_TR_W 2>/dev/null
}
sap_read_blob() {
  # The contents, into ./b of the working private directory (entered).
  if [ "$SAP_GATE" -gt 0 ]; then
    set -C
    { : > ./b; } 2>/dev/null || { set +C; SAP_ERR=; return 1; }
    set +C
    sap_timed_read "$SAP_TOTAL" ./b "$SAP_GATE" stall
    case $? in
    0) return 0 ;;
    2) sap_out "CANCELLED stalled"; SAP_STATUS=cancelled; exit 0 ;;
    *) sap_err_file ./e; return 1 ;;
    esac
  fi
  set -C
  SAP_ERR=$( { cat > ./b; } 2>&1 )
  sap_rb_rc=$?
  set +C
  return $sap_rb_rc
}
sap_commit_gate() {
  # Everything is ready but the content comparison and the renames: ask
  # the client, and stop here unless it says GO. Read with the builtin
  # (no file: a full disk must not turn the answer into an EOF); the
  # watchdog ends the wait with USR1, whose trap ends the program (bash
  # resumes a read its trap returned to, dash and BusyBox do not). It
  # signals only this very shell: same start time (sh_locks.ts sap_proc_start).
  [ "$SAP_GATE" -gt 0 ] || return 0
  sap_hook gate
  trap 'sap_out "CANCELLED timeout"; SAP_STATUS=cancelled; exit 0' USR1
  sap_out "GATE"
  (
    trap - EXIT USR1
    sap_gw_n=0
    while [ $sap_gw_n -lt "$SAP_GATE" ]; do sleep 1; sap_gw_n=$((sap_gw_n + 1)); done
    if [ -r /proc/$$/stat ]; then
      sap_gw_l=
      { IFS= read -r sap_gw_l < /proc/$$/stat; } 2>/dev/null
      sap_proc_start "$sap_gw_l" && [ "o.$SAP_BOOT.$SAP_NS.$$.$SAP_ST.$SAP_MID" = "$SAP_REC" ] || exit 0
    fi
    kill -USR1 $$ 2>/dev/null
  ) </dev/null >/dev/null 2>&1 &
  SAP_TR_W=$!
  sap_cg_l=
  IFS= read -r sap_cg_l <&9 2>/dev/null
  kill -9 $SAP_TR_W 2>/dev/null
  wait $SAP_TR_W 2>/dev/null
  SAP_TR_W=
  trap '' USR1
  [ "$sap_cg_l" = GO ] && return 0
  sap_out "CANCELLED eof"
  SAP_STATUS=cancelled
  exit 0
}
`;
