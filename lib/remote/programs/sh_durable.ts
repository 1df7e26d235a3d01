/**
 * Durability of a commit (SPEC §7 round 2): before `ok`, every new content
 * is on stable storage and every directory whose entries changed is
 * synced, so that a host crash right after `ok` cannot leave a file empty,
 * old, or missing its name.
 *
 * How: `sync FILE…` opens each file and calls fsync(2) on it — GNU
 * coreutils since 8.24 and BusyBox (checked on coreutils 9.1 and BusyBox
 * 1.35; a test traces the calls: test/remote/durable.test.ts); a
 * directory given to it is fsynced the same way (O_RDONLY|O_NONBLOCK, so a
 * FIFO put at a name cannot make it wait). Two runs per commit:
 * - the stages, right after they are written (step 1, before the locks),
 *   in the background: the data flush is nearly all of the cost (70–100 ms
 *   of waiting for a 38.5 MB stage, no CPU), so it overlaps the stage
 *   hash, the locks and the source's re-hash, and step 5 waits for it
 *   (`sap_sync_wait`) before the first rename — no name ever points at a
 *   stage whose data is not yet on stable storage. A background `sync`
 *   gets /dev/null as stdin (POSIX, for an asynchronous list) and
 *   stdout/stderr, so it cannot eat the upload or hold the channel open;
 *   a kill of the program's process group ends it too;
 * - after the last rename (step 5, outside the window in which an external
 *   writer can be lost), the directories the commit changed: each file's
 *   directory, each directory it created and the one that holds it.
 *   Directories nobody else can rename things in (trusted up to `/`) go
 *   by absolute path in one run; a shared one is synced from inside
 *   (`sync .`), never through a name.
 * Step 4's chmod / chown of a stage change only its inode; they reach the
 * disk with the directory's sync (a journalling file system commits its
 * transactions in order).
 *
 * What it reports: `DURABLE 1` only on Linux (fsync semantics elsewhere
 * vary: macOS's does not reach the platter) when every sync run succeeded;
 * an old `sync` that ignores its arguments still calls sync(2), which on
 * Linux waits for the writes, so it counts. Otherwise `DURABLE 0`: the
 * files are written all the same; the report says `durable: false`.
 *
 * @module
 */
import { sh } from "./sh_text.ts";

/** sap_sync, sap_sync_wait, sap_sync_dirs (needs SAP_OS from sap_identity). */
export const SH_DURABLE: string = sh`
SAP_DURABLE=1 SAP_OS= SAP_SYNC_BG= SAP_SYNC_PIDS=
sap_sync() {
  # fsync each file or directory given (absolute, or ./x from here); with
  # SAP_SYNC_BG set, started in the background (sap_sync_wait collects it)
  [ "$SAP_OS" = Linux ] || { SAP_DURABLE=0; return 0; }
  if [ -n "$SAP_SYNC_BG" ]; then
    sync "$@" >/dev/null 2>&1 &
    SAP_SYNC_PIDS="$SAP_SYNC_PIDS $!"
    return 0
  fi
  sync "$@" 2>/dev/null || SAP_DURABLE=0
}
sap_sync_wait() {
  # every background sync done, and each one's failure counted
  for sap_sw_p in $SAP_SYNC_PIDS; do wait "$sap_sw_p" || SAP_DURABLE=0; done
  SAP_SYNC_PIDS=
}
sap_sync_mark() {
  # note directory index $1 as changed (once)
  [ -n "$1" ] || return 0
  sap_get SY_$1
  [ -z "$SAP_V" ] || return 0
  sap_set SY_$1 1
  sap_set SYL_$SAP_SYN "$1"
  SAP_SYN=$((SAP_SYN + 1))
}
sap_sync_dirs() {
  # after step 5's renames: every changed directory, flushed
  [ "$SAP_OS" = Linux ] || { SAP_DURABLE=0; return 0; }
  SAP_SYN=0
  sap_sd_i=0
  while [ $sap_sd_i -lt $SAP_N ]; do
    sap_get O_d_$sap_sd_i
    sap_sync_mark "$SAP_V"
    sap_get S_d_$sap_sd_i
    sap_sync_mark "$SAP_V"
    sap_sd_i=$((sap_sd_i + 1))
  done
  set --
  sap_sd_j=0
  while [ $sap_sd_j -lt $SAP_SYN ]; do
    sap_get SYL_$sap_sd_j
    sap_sd_d=$SAP_V
    sap_get DIR_$sap_sd_d
    sap_sd_p=$SAP_V
    sap_get DCT_$sap_sd_d
    if [ "$SAP_V" = 1 ]; then set -- "$@" "$sap_sd_p"
    elif sap_cd "$sap_sd_p"; then sap_sync .
    else SAP_DURABLE=0; fi
    sap_sd_j=$((sap_sd_j + 1))
  done
  # the directories made for new files (0700 until widened, ours): from inside each
  sap_sd_i=0
  while [ $sap_sd_i -lt $SAP_N ]; do
    sap_get C_n_$sap_sd_i
    sap_sd_n=$\{SAP_V:-0}
    while [ "$sap_sd_n" -gt 0 ]; do
      sap_get C_$\{sap_sd_i}_$sap_sd_n
      if sap_cd "$SAP_V" && [ -O . ]; then sap_sync .; else SAP_DURABLE=0; fi
      sap_sd_n=$((sap_sd_n - 1))
    done
    sap_sd_i=$((sap_sd_i + 1))
  done
  [ $# -eq 0 ] || sap_sync "$@"
}
`;
