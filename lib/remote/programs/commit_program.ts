/**
 * The commit program: SPEC §7's seven steps in one exec.
 *
 * Arguments: `<root> <operation id> <lock wait ms> <gate s>
 * <create parents 0|1> <large content 0|1> <refuse|allow> <root id|->`
 * (gate: 0 for none, else how long to wait for the client's go-ahead and
 * for upload progress, commit_gate.ts; large: hash with OpenSSL where it
 * works, see sap_fast_sha; root id: the `device:inode` readSnapshots saw,
 * so a root replaced in between is refused). Stdin: the manifest
 * (lib/remote/programs/sh_manifest.ts, with this run's secret) then all new
 * contents concatenated; with the gate, later the client's `GO`.
 *
 * Where its files live. Nothing of the program's own is ever created under
 * a name that others could predict or reach: every temporary of directory
 * n lives in its private directory (sh_private.ts: `.sap-<op>-XXXXXX`,
 * made by mktemp, 0700, ours, marked with the secret), re-entered only
 * through sap_pcd. Inside it: `b` the contents as received (work
 * directory: the first file's existing directory; removed once the stages
 * are cut from it), `s<i>` file i's new content with, after step 4, its
 * mode and owner, `r/s<i>` a second link of an update's stage,
 * `p/<name>` the source's pin (hard link, named as the source in its
 * directory: the delta source, the content checked, the backup), `c<i>` a copy where no hard link may be made, `d<i>` a deleted /
 * moved source, `t<i>` a delta's part of the blob, `j` the journal (work
 * directory; written only through fd 8), `h` the stages' SHA-256s (work
 * directory; written by the background hash of step 1 through fd 6, read
 * through fd 5), `k/<lock>` / `L<k>` / `u/<lock>`
 * / `X<n>` locks built ahead / built alone / being released / broken. An add or move whose parents are
 * missing: the directories are made 0700 in step 5, the stage is copied
 * into the last one (`.sap-<op>-a<i>`, private there) and linked to its
 * name; the directories get their real mode before the commit point. The
 * locks `.sap-lock-…` (sh_locks.ts), the operation's own
 * `.sap-lock-op-<op>` in the root among them.
 *
 * Order of work: resolve every path and check the directory trust policy
 * (step 0: `UNSAFE` → nothing written), the operation lock, stage (1),
 * lock (2), check every path's kind (3), pin the sources, copy metadata
 * onto the stages (4), copies and second links, create the journal, and
 * only then compare every source's content with the plan (the rest of 3)
 * and, once the client said GO (commit_gate.ts), finalize (5). The content comparison comes last so that between it
 * and each rename only shell builtins and the earlier files' renames run:
 * that is the whole window in which a writer that ignores the locks can be
 * lost (SPEC §7 "only the tiny window between step 3 and 5"); and each
 * rename is preceded by `-ef` against the pin, so a file replaced (not
 * just rewritten) in that window is not lost either.
 *
 * Step 1 of a delta upload assembles the stage from ranges of the pinned
 * source and the uploaded stretches. Every stage's SHA-256 is computed in
 * the background from the end of step 1 (overlapping the locks, the
 * re-check and the sources' re-hash) and judged together with the content
 * comparison, under the locks, before anything is written: a whole upload
 * that came out wrong ends `failed` with `FAIL remote_error k stage_sha`;
 * a delta stage that came out wrong means the source changed since the
 * snapshot — a `CONFLICT` from the comparison (`refused`), or, when the
 * source is back as planned by then, `failed` with `FAIL remote_error k
 * delta`. A delta source that is not a regular file when it is to be
 * pinned is reported as step 3 would, before any lock (sap_delta_refuse).
 *
 * State machine (what a crash leaves, and what reconcile does with it):
 * - steps 0–4 (no `B` line in the journal): private directories with
 *   stages, pins, copies, the blob, maybe an empty journal, and locks may
 *   remain; no file was touched → reconcile removes them; every file is
 *   `not_applied`.
 * - step 5: before the first change of file i the line `B i` is appended;
 *   an Add / Move destination appends `L i` right after its no-replace
 *   link. Per op:
 *     update  rename s<i> → name (checked: the name was p/name before, is
 *             r/s<i> after)
 *     add     mkdir missing parents (each journalled `C i q` before, `N i q`
 *             if it existed after all), link s<i> (or its copy) → name
 *             (fails if the name exists)
 *     delete  rename name → d<i> (the backup is now the only copy)
 *     move    as add at the destination, then as delete at the source
 *   A crash anywhere here leaves a journal without `D`: reconcile takes the
 *   locks (clearing this operation's own dead ones) and undoes every begun
 *   file in reverse order with sap_undo, which judges by the disk through
 *   the links in the private directories (so a deleted file's backup is
 *   put back when its name is still free), then removes the parent
 *   directories journalled by `C` once empty.
 * - commit point: the created directories get their mode, then `D` is
 *   appended once every file is finalized. A crash after it: reconcile only
 *   removes leftovers (private directories, locks).
 * - step 6 (a finalize failure — the name changed, was replaced right after,
 *   could not be renamed — or HUP/INT/TERM during step 5): undo the begun
 *   files in reverse order right here; all undone → `rolled_back`, journal
 *   and backups removed; otherwise `partial` with the real state of every
 *   path, keeping journal and backups so reconcile can finish later.
 * - step 7 (always, from the EXIT trap): remove the journal, release the
 *   locks (each renamed into its private directory, checked there),
 *   remove the private directories (all kept but the locks when partial).
 *
 * Extending it (issues 13, 17). Lock release is already a rename into the
 * private directory followed by a check there (sh_locks.ts), so a kill at
 * any point leaves a lock at its name (dead: cleared by the next commit or
 * reconcile) or inside a private
 * directory (removed with it). Durability belongs right before the commit
 * point (`sap_widen`, then `D`): the stages sit in the private directories
 * until their rename, so `sync` of each stage in step 4 and of each changed
 * directory after step 5 needs no new temporary. New batched work (hashes,
 * stats) goes through sap_batch_* so it stays one process per private
 * directory, or one for all where every directory is trusted. A snapshot
 * that only proves a hash would hash the same pin it now reads.
 *
 * Stdout protocol (lib/remote/protocol.ts parses it strictly):
 * `SAP-BEGIN commit`, `STEP n`, `REJECT k code depth`, `CONFLICT k kind sha|-`,
 * `UNSAFE k …` / `TRUST k shared` (sh_trust.ts),
 * `LOCKED k|op age uid|- pid|- host|- op|-` (sh_locks.ts: whose lock it is),
 * `FAIL code k|- detail` (code no_space / read_only_filesystem /
 * permission_denied / … , sh_faults.ts), `SPACE k|- free|-`,
 * `WARN code k|- detail`, `META i mode_ok owner_ok`,
 * `FINAL i`, `FAILED i detail`, `WHY i class note|-` (why that was refused),
 * `DURABLE 0|1` (stages and directories synced), `DONE`, `UNDO i ok|failed|diverged`,
 * `STATE k kind sha|-`, `INTERRUPTED signal`, `GATE`, `CANCELLED eof|timeout|stalled`, `UNSUPPORTED tool`,
 * `ROOT reason`, `BAD_INPUT what`, and last `SAP-END
 * ok|refused|unsafe|locked|failed|rolled_back|partial|interrupted|cancelled|unsupported|root|bad_input`.
 *
 * @module
 */
import { sh } from "./sh_text.ts";
import { SH_COMMIT_DELTA } from "./commit_delta.ts";
import { SH_COMMIT_PREPARE } from "./commit_prepare.ts";
import { SH_COMMIT_FINALIZE } from "./commit_finalize.ts";
import { SH_COMMIT_LINKS } from "./commit_links.ts";
import { SH_COMMIT_GATE } from "./commit_gate.ts";

/** The main sequence. */
const SH_COMMIT_MAIN: string = sh`
SAP_STATUS= SAP_PHASE=0 SAP_DONE= SAP_W= SAP_WK=- SAP_J= SAP_BLOB= SAP_BEGUN=-1 SAP_SIG= SAP_CLEAN_FAIL= SAP_STAGE_BAD= SAP_DELTA_BAD= SAP_PSWAP=
SAP_HASH_N=0 SAP_HASH_PID= SAP_UPLOAD_BAD=
SAP_IFS=$IFS
trap 'sap_commit_exit' EXIT
trap 'SAP_SIG=HUP; exit 129' HUP
trap 'SAP_SIG=INT; exit 130' INT
trap 'SAP_SIG=TERM; exit 143' TERM
trap '' PIPE
sap_out "SAP-BEGIN commit"
SAP_ROOT_ARG=$1 SAP_OP=$2 SAP_WAIT_MS=$3 SAP_GATE=$4 SAP_MKP=$5 SAP_POLICY=$7 SAP_EXPECT_ROOT=$8
sap_isnum "$SAP_WAIT_MS" && sap_isnum "$SAP_GATE" || sap_bad_input args
case $SAP_OP in ''|*[!A-Za-z0-9_]*) sap_bad_input operation ;; esac
case $SAP_POLICY in refuse|allow) ;; *) sap_bad_input policy ;; esac
case $SAP_EXPECT_ROOT in -|*[0-9]:[0-9]*) ;; *) sap_bad_input root_id ;; esac
case $9 in 1) SAP_TRUST_ANC=1 SAP_RPIN=1 ;; 0|'') ;; *) sap_bad_input ancestors ;; esac
sap_probe sha stat date link mvt id
# a dd that copies byte ranges itself needs neither head nor tail
sap_dd_probe
[ -n "$SAP_DDB" ] || sap_probe head tail dd
[ "$6" != 1 ] || sap_fast_sha
sap_root "$1" || { sap_out "ROOT $SAP_ROOTERR"; SAP_STATUS=root; exit 0; }
SAP_UMASK=$(umask)
case $SAP_UMASK in ''|*[!0-7]*) SAP_UMASK=022 ;; esac
umask 077
sap_identity
sap_read_manifest SAP-COMMIT-2
[ $SAP_N -gt 0 ] || { SAP_STATUS=ok; exit 0; }
sap_hook start
sap_commit_resolve
sap_hook trusted
sap_gate_stdin
# the data marker before the operation lock: a link that stalls here
# leaves nothing held
sap_read_line
[ "$SAP_L" = SAP-DATA ] || sap_bad_input data
sap_op_lock
sap_commit_stage
sap_hook staged
[ -z "$SAP_DELTA_BAD" ] || sap_delta_refuse
SAP_PHASE=2
sap_out "STEP 2"
sap_lock_all
sap_hook locked
sap_commit_check
sap_hook checked
sap_commit_pins
sap_commit_meta
sap_commit_copies
sap_commit_refs
sap_commit_journal
sap_commit_gate
sap_commit_compare final
sap_hook compared
sap_commit_finalize
SAP_PHASE=7
sap_out "STEP 7"
exit 0
`;

/** The commit program body (after the common functions). */
export const SH_COMMIT: string = SH_COMMIT_DELTA + SH_COMMIT_GATE + SH_COMMIT_PREPARE + SH_COMMIT_LINKS + SH_COMMIT_FINALIZE + SH_COMMIT_MAIN;
