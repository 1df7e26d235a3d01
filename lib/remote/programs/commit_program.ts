/**
 * The commit program: SPEC §7's seven steps in one exec.
 *
 * Arguments: `<root> <operation id> <lock wait ms> <stale lock s>
 * <create parents 0|1> <large content 0|1>` (large: hash with OpenSSL
 * where it works, see sap_fast_sha). Stdin: the manifest (lib/remote/programs/sh_manifest.ts)
 * then all new contents concatenated.
 *
 * Files this program creates (all `.sap-` names are reserved: patches may
 * not touch them), each within NAME_MAX whatever the file is called:
 * - `.sap-<op>.blob`      all contents as received, in the work directory
 *                         (the first file's existing directory); removed
 *                         right after the stages are cut from it;
 * - `.sap-<op>-<i>.d/s`   file i's new content during steps 1–4, in a
 *                         private directory (0700, ours) next to its
 *                         destination (or in the deepest existing ancestor
 *                         when parents are missing: the final `link` works
 *                         across those directories, which share a
 *                         filesystem) — mode and owner are copied onto it
 *                         there, where nobody else can swap it for a symlink;
 * - `.sap-<op>-<i>.stage` the same file under its working name in that
 *                         directory, from after step 4 until step 5 uses it;
 * - `.sap-<op>-<i>-src.d/src` a delta upload's pin: a hard link of file i's
 *                         source, in a private directory (0700, ours) next
 *                         to it, read while its stage is assembled in step
 *                         1 and removed right after (lib/remote/programs/commit_delta.ts);
 * - `.sap-<op>-<i>.bak`   file i's old content (hard link, else a copy) in
 *                         its directory;
 * - `.sap-<op>.journal`   the finalize journal in the work directory, kept
 *                         open on fd 8 from its creation: it is written
 *                         through the descriptor, never by path again, so a
 *                         work directory swapped for a symlink meanwhile
 *                         cannot make it appear elsewhere;
 * - `.sap-lock-…`         locks (lib/remote/programs/sh_locks.ts), including the
 *                         operation's own `.sap-lock-op-<op>` in the root,
 *                         held from the program's start to its end.
 *
 * Order of work: stage (1), lock (2), check every path's kind (3), copy
 * metadata onto the stages (4), give the stages their working names,
 * hard-link the backups of updated files, create the journal, and only then compare every source's content with
 * the plan (the rest of 3) and finalize (5). The content comparison comes
 * last so that between it and each rename only shell builtins and the
 * earlier files' renames run: that is the whole window in which a writer
 * that ignores the locks can be lost (SPEC §7 "only the tiny window
 * between step 3 and 5").
 *
 * Step 1 of a delta upload assembles the stage from ranges of the current
 * source and the uploaded stretches; a stage that does not come out with
 * the planned SHA-256 means the source changed since the snapshot: the
 * program then reports every path as step 3 would (without locks, nothing
 * will be written) and ends `refused` with `CONFLICT` lines — or, when the
 * source is back as planned by then, `failed` with `FAIL remote_error k
 * delta`.
 *
 * State machine (what a crash leaves, and what reconcile does with it):
 * - steps 1–4 (no `B` line in the journal): stages, blob, pins, backups
 *   (hard links of unchanged files), an empty journal and locks may
 *   remain, no file was touched → reconcile removes them; every file is
 *   `not_applied`.
 * - step 5: before the first change of file i the line `B i` is appended;
 *   an Add / Move destination appends `L i` right after its no-replace
 *   link. Per op:
 *     update  rename stage → n (the backup n → bak was linked before the
 *             content comparison)
 *     add     mkdir missing parents (each journalled `C i q` before, `N i q`
 *             if it existed after all), link stage → n (fails if n exists);
 *             the stage name is removed in step 7
 *     delete  rename n → bak (the backup is now the only copy)
 *     move    as add at the destination, then rename source → bak
 *   A crash anywhere here leaves a journal without `D`: reconcile takes the
 *   locks (adopting this operation's own dead ones) and undoes every begun
 *   file in reverse order with sap_undo, which judges by the disk (so a
 *   deleted file's backup is put back when its name is still free), then
 *   removes the parent directories journalled by `C` once empty.
 * - commit point: `D` appended once every file is finalized. A crash after
 *   it: reconcile only removes leftovers (backups, locks, journal).
 * - step 6 (a finalize failure, or HUP/INT/TERM during step 5): undo the
 *   begun files in reverse order right here; all undone → `rolled_back`,
 *   journal and backups removed; otherwise `partial` with the real state of
 *   every path, keeping journal and backups so reconcile can finish later.
 * - step 7 (always, from the EXIT trap): remove stages and blob, backups
 *   (unless partial), release locks, remove the journal last.
 *
 * Stdout protocol (lib/remote/protocol.ts parses it strictly):
 * `SAP-BEGIN commit`, `STEP n`, `REJECT k code depth`, `CONFLICT k kind sha|-`,
 * `LOCKED k age`, `FAIL code k|- detail`, `WARN code k|- detail`,
 * `META i mode_ok owner_ok`, `FINAL i`, `FAILED i detail`, `DONE`,
 * `UNDO i ok|failed|diverged`, `STATE k kind sha|-`, `INTERRUPTED signal`,
 * `UNSUPPORTED tool`, `ROOT reason`, `BAD_INPUT what`, and last
 * `SAP-END ok|refused|locked|failed|rolled_back|partial|interrupted|unsupported|root|bad_input`.
 *
 * @module
 */
import { sh } from "./sh_text.ts";
import { SH_COMMIT_DELTA } from "./commit_delta.ts";
import { SH_COMMIT_PREPARE } from "./commit_prepare.ts";
import { SH_COMMIT_FINALIZE } from "./commit_finalize.ts";

/** The main sequence. */
const SH_COMMIT_MAIN: string = sh`
SAP_STATUS= SAP_PHASE=0 SAP_DONE= SAP_W= SAP_WK=- SAP_J= SAP_BLOB= SAP_BEGUN=-1 SAP_SIG= SAP_CLEAN_FAIL= SAP_STAGE_BAD= SAP_DELTA_BAD=
trap 'sap_commit_exit' EXIT
trap 'SAP_SIG=HUP; exit 129' HUP
trap 'SAP_SIG=INT; exit 130' INT
trap 'SAP_SIG=TERM; exit 143' TERM
trap '' PIPE
sap_out "SAP-BEGIN commit"
SAP_OP=$2 SAP_WAIT_MS=$3 SAP_STALE=$4 SAP_MKP=$5
sap_isnum "$SAP_WAIT_MS" && sap_isnum "$SAP_STALE" || sap_bad_input args
case $SAP_OP in ''|*[!A-Za-z0-9_]*) sap_bad_input operation ;; esac
sap_probe sha stat head tail dd date link
[ "$6" != 1 ] || sap_fast_sha
sap_root "$1" || { sap_out "ROOT $SAP_ROOTERR"; SAP_STATUS=root; exit 0; }
SAP_UMASK=$(umask)
case $SAP_UMASK in ''|*[!0-7]*) SAP_UMASK=022 ;; esac
umask 077
sap_identity
sap_op_lock
sap_read_manifest SAP-COMMIT-1
[ $SAP_N -gt 0 ] || { SAP_STATUS=ok; exit 0; }
sap_read_line
[ "$SAP_L" = SAP-DATA ] || sap_bad_input data
sap_commit_stage
sap_hook staged
[ -z "$SAP_DELTA_BAD" ] || sap_delta_refuse
SAP_PHASE=2
sap_out "STEP 2"
sap_lock_all
sap_hook locked
sap_commit_check
sap_hook checked
sap_commit_meta
sap_commit_publish
sap_commit_backups
sap_commit_journal
sap_commit_compare
sap_hook compared
sap_commit_finalize
SAP_PHASE=7
sap_out "STEP 7"
exit 0
`;

/** The commit program body (after the common functions). */
export const SH_COMMIT: string = SH_COMMIT_DELTA + SH_COMMIT_PREPARE + SH_COMMIT_FINALIZE + SH_COMMIT_MAIN;
