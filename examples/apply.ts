/**
 * `apply.ts`: apply a Codex-format patch from the command line, to files on
 * this machine (LocalShell) or on a host reached over SSH (connectSsh).
 *
 *     bun examples/apply.ts --root DIR [--dry-run] [--expect PATH=SHA ...] [--json]
 *         [--matching exact|whitespace|lenient] [--encoding utf-8|latin1|windows-1252] [--require-sha-for-delete]
 *         [--ssh [user@]host[:port]] [--sudo | --sudo-password-env VAR]
 *         [--identity FILE] [--known-hosts FILE] [--accept-new-host-key]
 *         [--timeout-ms N] [--patch FILE] < patch
 *     bun examples/apply.ts --root DIR --reconcile FILE|- [connection flags]
 *     bun examples/apply.ts --hosts web1,web2,... --root DIR [--canary N] [--max-failures N]
 *         [--concurrency N] [--host-expect NAME=PATH=SHA ...] [options] < patch
 *
 * `--help` prints every flag (examples/cli/args.ts). Output: a human summary
 * (per file op, path, previous → new SHA prefix, bytes, metadata kept,
 * warnings, the `--expect` flags with full SHA-256s, then the diffs or each
 * failure's recovery message in CLI words: examples/cli/hint_words.ts), or with
 * `--json` the library's `ApplyReport` on stdout in the wire format
 * (snake_case fields: examples/wire/types.ts), messages in the same CLI
 * words (plus `reconciled`
 * when the CLI settled an unknown outcome) — also when the connection could
 * not be opened (then `files` is empty and `errors` holds the
 * `connect_failed` / `auth_failed` / `host_key_*` failure). Notes about the
 * connection (ssh_config settings not applied, a host key recorded by
 * --accept-new-host-key) and, with --json, how to reconcile later go to
 * stderr, so stdout is only ever the report.
 *
 * Exit codes:
 *   0  applied (with --dry-run: planned)
 *   1  refused or failed and NOTHING changed: every failure code except the
 *      two below — patch, plan, precondition_failed, conflict, locked,
 *      permission_denied, path refusals, timeouts before the commit,
 *      cancelled, and connection / authentication / host-key failures
 *   2  usage error: bad flags, unreadable --patch or --identity file, no
 *      patch on stdin; nothing was contacted, stdout stays empty
 *   3  files MAY have changed, or changed uncleanly: the commit's outcome
 *      was unknown (`outcome_unknown`, `partial_apply`) and the reconcile
 *      run right after found diverged or mixed files or did not finish.
 *      When that reconcile settles it cleanly the code is 0 (applied) or
 *      1 (nothing applied) instead.
 *
 * With `--hosts` the same patch goes to many hosts through `applyFleet`
 * (examples/cli/fleet_run.ts: progress on stderr, a fleet report on stdout,
 * its own exit codes in `--help`).
 *
 * Decisions worth knowing before you copy this:
 * - An unknown outcome is settled at once: the failure carries a reconcile
 *   ticket (paths and SHA-256s of the committed plan), and the CLI runs
 *   reconcile with it on the same shell (an SSH shell reconnects after a
 *   drop), so the exit code says applied (0) or not applied (1) whenever the
 *   host can tell. Re-planning the patch instead would be wrong: once files
 *   may have changed, the patch no longer describes them. When reconcile
 *   cannot finish (host unreachable, the commit still holds its locks) the
 *   CLI prints the ticket and `--reconcile FILE` settles it later.
 * - The sudo password is read from an environment variable named by
 *   `--sudo-password-env`, never from argv (visible in `ps`), and reaches
 *   sudo only on stdin. `--sudo` without `--ssh` is a usage error: LocalShell
 *   never elevates, run the CLI itself with the rights it needs.
 * - No flag for `insecure-accept-any`: `--accept-new-host-key` (trust on first
 *   use, recorded in known_hosts) is as far as a copy-paste CLI should go.
 * - Ctrl-C before the commit starts cancels cleanly (exit 1, nothing
 *   changed). Once the commit's upload has begun, the first Ctrl-C only
 *   says it is waiting, because killing the commit half-way is exactly what
 *   makes an outcome unknown; a second Ctrl-C quits anyway.
 *
 * @module
 */
import { readFileSync, readSync } from "node:fs";
import { applyPatch, LocalShell, newOperationId, reconcile, reconcileTicketOf, RemoteShellError, shQuote, SnapshotCache } from "../mod.ts";
import type { ApplyReport, CommitReport, PatchFailure, ReconcileTicket, RemoteShell } from "../mod.ts";
import { parseApplyArgs, PROGRAM, USAGE } from "./cli/args.ts";
import type { ApplyCliOptions, FleetCliOptions } from "./cli/args.ts";
import { reconcileFleetCli, runFleetCli } from "./cli/fleet_run.ts";
import { formatReconcile, readReconcileTicket, reconcileExitCode, reconcileLater } from "./cli/reconcile_text.ts";
import { cliReport } from "./cli/hint_words.ts";
import { exitCodeFor, formatReport } from "./cli/report_text.ts";
import { wireApplyOutcome, wireApplyReport, wireCommitReport } from "./wire/convert.ts";
import { connectWithNotes } from "./cli/ssh_options.ts";

/**
 * Run the CLI with `argv` (without runtime and script); resolves the exit code.
 *
 * @example
 * ```ts
 * process.exitCode = await main(["--root", "/srv/site", "--dry-run"]);
 * ```
 */
export async function main(argv: readonly string[]): Promise<number> {
  guardStdout();
  const parsed = parseApplyArgs(argv);
  if (parsed.kind === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  if (parsed.kind === "usage_error") return usageError(parsed.message);
  const options = parsed.options;
  const fleet = options.fleet !== undefined ? { ...options, fleet: options.fleet } : undefined;
  if (options.reconcileFile !== undefined) {
    return fleet !== undefined ? await reconcileFleetFromFile(fleet, options.reconcileFile) : await reconcileFromFile(options, options.reconcileFile);
  }

  let patch: string;
  try {
    const text = await readPatch(options.patchFile);
    if (text === null) return usageError("no patch: pipe it on stdin or pass --patch FILE");
    patch = text;
  } catch (error) {
    return usageError(`cannot read the patch: ${(error as Error).message}`);
  }

  let cache: SnapshotCache | undefined;
  try {
    cache = options.cacheDir === undefined ? undefined : new SnapshotCache({ dir: options.cacheDir });
  } catch (error) {
    return usageError(`--cache-dir ${options.cacheDir}: ${(error as Error).message}`);
  }

  if (fleet !== undefined) return await runFleetCli(fleet, patch, cache);

  const operationId = newOperationId();
  let shell: RemoteShell;
  try {
    shell = await openShell(options);
  } catch (error) {
    if (!(error instanceof RemoteShellError)) throw error;
    const report: ApplyReport = { ...notConnected(error.failure, operationId), dryRun: options.dryRun };
    return print(report, options, `ssh ${options.ssh!.text} ${options.root}`);
  }

  const interrupt = cancelOnInterrupt();
  try {
    const report = await applyPatch(shell, {
      root: options.root,
      patch,
      dryRun: options.dryRun,
      expectedSha256: options.expectedSha256,
      matching: options.matching,
      ...(options.encoding !== undefined ? { encoding: options.encoding } : {}),
      requireShaForDelete: options.requireShaForDelete,
      sharedDirectories: options.sharedDirectories,
      trustRootAncestors: options.trustRootAncestors,
      timeoutMs: options.timeoutMs,
      operationId,
      signal: interrupt.signal,
      // The first progress call means the commit program has started.
      onProgress: interrupt.commitStarted,
      ...(cache !== undefined ? { cache } : {}),
      ...(options.compress !== undefined ? { compress: options.compress } : {}),
    });
    interrupt.dispose();
    // The cache's disk writes finish before the process may exit.
    await cache?.flush();
    const where = `${shell.label ?? "local"} ${options.root}`;
    // Only an unknown outcome is reconciled here. A commit that died before
    // changing anything (remote_error, exit 1) also carries a ticket, for its
    // leftover stage files: nothing changed, so the exit code stays 1 and
    // `--reconcile` with this run's --json report removes them.
    const ticket = exitCodeFor(report) === 3 ? reconcileTicketOf(report) : null;
    if (ticket === null) return print(report, options, where);
    const settled = await settle(shell, options, ticket);
    const words = { reconciled: settled.ok };
    if (options.json) {
      process.stdout.write(JSON.stringify(wireApplyOutcome({ ...cliReport(report, words), reconciled: settled }), null, 2) + "\n");
    } else {
      process.stdout.write(formatReport(report, where, words) + "\n" + formatReconcile(settled, where));
    }
    return afterReconcile(settled, ticket, options);
  } finally {
    interrupt.dispose();
    await shell.close?.();
  }
}

/** `--reconcile FILE`: settle the operation of a saved ticket or report. */
async function reconcileFromFile(options: ApplyCliOptions, file: string): Promise<number> {
  let text: string;
  try {
    text = file === "-" ? readStdin() : readFileSync(file, "utf8");
  } catch (error) {
    return usageError(`cannot read --reconcile ${file}: ${(error as Error).message}`);
  }
  const ticket = readReconcileTicket(text);
  if (typeof ticket === "string") return usageError(`--reconcile ${file}: ${ticket}`);
  let shell: RemoteShell;
  try {
    shell = await openShell(options);
  } catch (error) {
    if (!(error instanceof RemoteShellError)) throw error;
    return printSettled(notConnected(error.failure, ticket.operationId), ticket, options, `ssh ${options.ssh!.text} ${options.root}`);
  }
  try {
    return printSettled(await settle(shell, options, ticket), ticket, options, `${shell.label ?? "local"} ${options.root}`);
  } finally {
    await shell.close?.();
  }
}

/** `--hosts … --reconcile FILE`: settle a saved fleet report. */
async function reconcileFleetFromFile(options: ApplyCliOptions & { fleet: FleetCliOptions }, file: string): Promise<number> {
  let text: string;
  try {
    text = file === "-" ? readStdin() : readFileSync(file, "utf8");
  } catch (error) {
    return usageError(`cannot read --reconcile ${file}: ${(error as Error).message}`);
  }
  const code = await reconcileFleetCli(options, text);
  return typeof code === "string" ? usageError(`--reconcile ${file}: ${code}`) : code;
}

/** Run reconcile; Ctrl-C stops it (safe: it can run again) and keeps the ticket on screen. */
async function settle(shell: RemoteShell, options: ApplyCliOptions, ticket: ReconcileTicket): Promise<CommitReport> {
  const controller = new AbortController();
  const onInterrupt = (): void => controller.abort();
  process.on("SIGINT", onInterrupt);
  try {
    return await reconcile(shell, options.root, ticket, { timeoutMs: options.timeoutMs, signal: controller.signal, sharedDirectories: options.sharedDirectories, trustRootAncestors: options.trustRootAncestors });
  } finally {
    process.off("SIGINT", onInterrupt);
  }
}

function printSettled(settled: CommitReport, ticket: ReconcileTicket, options: ApplyCliOptions, where: string): number {
  process.stdout.write(options.json ? JSON.stringify(wireCommitReport(settled), null, 2) + "\n" : formatReconcile(settled, where));
  return afterReconcile(settled, ticket, options);
}

/** The exit code of a reconcile; when it did not finish, how to run it again (stderr with --json). */
function afterReconcile(settled: CommitReport, ticket: ReconcileTicket, options: ApplyCliOptions): number {
  if (!settled.ok) {
    const later = reconcileLater(ticket, reconcileCommand(options));
    if (options.json) process.stderr.write(later);
    else process.stdout.write("\n" + later);
  }
  return reconcileExitCode(settled);
}

/** This run's command line as a reconcile needs it: root and connection flags. */
function reconcileCommand(options: ApplyCliOptions): string {
  const parts = [PROGRAM, "--root", shQuote(options.root)];
  if (options.ssh !== undefined) {
    parts.push("--ssh", shQuote(options.ssh.text));
    for (const file of options.identityFiles) parts.push("--identity", shQuote(file));
    if (options.knownHostsFile !== undefined) parts.push("--known-hosts", shQuote(options.knownHostsFile));
    if (options.sshConfigFile !== undefined) parts.push("--ssh-config", shQuote(options.sshConfigFile));
    if (options.sudoPasswordEnv !== undefined) parts.push("--sudo-password-env", options.sudoPasswordEnv);
    else if (options.sudo) parts.push("--sudo");
    if (options.passwordEnv !== undefined) parts.push("--password-env", options.passwordEnv);
  }
  if (options.timeoutMs !== undefined) parts.push("--timeout-ms", String(options.timeoutMs));
  return parts.join(" ");
}

/** Print the report (text or JSON) and return its exit code. */
function print(report: ApplyReport, options: ApplyCliOptions, where: string): number {
  process.stdout.write(options.json ? JSON.stringify(wireApplyReport(cliReport(report)), null, 2) + "\n" : formatReport(report, where));
  return exitCodeFor(report);
}

/**
 * A reader that stops early (`… | head -1`) closes stdout under a report
 * that is still being written: that is not a failure of the apply, whose
 * outcome the exit code already carries. Write errors on stdout are noted
 * on stderr (once) and otherwise ignored, so they never replace the exit
 * code of what happened to the files.
 */
function guardStdout(): void {
  let noted = false;
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (noted) return;
    noted = true;
    if (error.code === "EPIPE") return; // the reader is gone: nothing to tell it
    process.stderr.write(`apply.ts: could not write the report to stdout (${error.code ?? error.message}); the exit code still says what happened.\n`);
  });
}

async function openShell(options: ApplyCliOptions): Promise<RemoteShell> {
  if (options.ssh === undefined) return new LocalShell();
  return await connectWithNotes(options, options.ssh.destination);
}

/** The patch from `--patch FILE` or stdin; `null` when stdin is a terminal. */
async function readPatch(file: string | undefined): Promise<string | null> {
  if (file !== undefined) return readFileSync(file, "utf8");
  if (process.stdin.isTTY) return null;
  return readStdin();
}

/**
 * All of stdin, read with readSync: the stream machinery behind
 * `process.stdin` costs a few ms of a short run. A descriptor left
 * non-blocking by whoever shares it answers EAGAIN while no data is there:
 * then wait a millisecond and read on (nothing read is ever dropped).
 */
function readStdin(): string {
  const chunks: Uint8Array[] = [];
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    const chunk = new Uint8Array(STDIN_CHUNK);
    let n: number;
    try {
      n = readSync(0, chunk, 0, chunk.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error;
      Atomics.wait(pause, 0, 0, 1);
      continue;
    }
    if (n === 0) break;
    chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
  }
  return Buffer.concat(chunks).toString("utf8");
}
const STDIN_CHUNK = 1024 * 1024;

/** The report of a connection that never opened: nothing was read or changed. */
function notConnected(failure: PatchFailure, operationId: string): CommitReport {
  return {
    ok: false,
    operationId,
    atomicity: "batch_preflight_per_file_commit",
    elevated: false,
    files: [],
    warnings: [],
    errors: [failure],
  };
}

function cancelOnInterrupt(): { signal: AbortSignal; commitStarted: () => void; dispose: () => void } {
  const controller = new AbortController();
  let committing = false;
  let warned = false;
  const onInterrupt = (): void => {
    if (!committing) return controller.abort();
    if (warned) process.exit(130);
    warned = true;
    process.stderr.write("The commit is running; waiting for it to finish so every file ends all-old or all-new. Press Ctrl-C again to quit anyway (the outcome is then unknown).\n");
  };
  process.on("SIGINT", onInterrupt);
  return {
    signal: controller.signal,
    commitStarted: () => (committing = true),
    dispose: () => process.off("SIGINT", onInterrupt),
  };
}

function usageError(message: string): number {
  process.stderr.write(`apply.ts: ${message}\nRun with --help for usage.\n`);
  return 2;
}

// No top-level await: the bundled CLI (scripts/bun_cli.ts) is CommonJS, for Bun's bytecode cache.
if (import.meta.main) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
