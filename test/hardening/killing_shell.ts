/**
 * FAULT INJECTION: a {@linkcode RemoteShell} wrapper that SIGKILLs the
 * process group of the next commit program after a chosen delay, the way
 * an OOM killer, a `kill -9` by an operator or a host crash would.
 *
 * The killer is a background subshell prepended to the program text: it
 * sleeps, then sends SIGKILL to the program's process group (read from
 * /proc, else `$$`), itself included. Doing it in-band makes the delay
 * exact relative to the program's own start on any transport (LocalShell
 * or SSH). A delay longer than the program's run kills nothing but the
 * killer. Other programs (snapshot, reconcile) pass through untouched.
 *
 * @module
 */
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";

/** The marker that identifies the commit program's text. */
const COMMIT_MARKER = 'sap_out "SAP-BEGIN commit"';

/** Where a killed commit program had got to, from its stdout. */
export type KillPhase = "not started" | "step 1" | "step 2" | "step 3" | "step 4" | "step 5" | "step 6" | "step 7" | "finished";

/**
 * The phase a commit program had reached, read from its stdout lines
 * (`STEP n`, `SAP-END`).
 *
 * @example
 * ```ts
 * phaseOf(new TextEncoder().encode("SAP-BEGIN commit\nSTEP 1\n")); // "step 1"
 * ```
 */
export function phaseOf(stdout: Uint8Array): KillPhase {
  const text = new TextDecoder().decode(stdout);
  if (/^SAP-END /m.test(text)) return "finished";
  let step = 0;
  for (const m of text.matchAll(/^STEP ([1-7])$/gm)) step = Math.max(step, Number(m[1]));
  return step === 0 ? "not started" : (`step ${step}` as KillPhase);
}

/**
 * Prepends a delayed group-SIGKILL to commit programs (fault injection).
 *
 * @example
 * ```ts
 * const shell = new KillingShell(new LocalShell());
 * shell.killAfterMs = 12.5;
 * await commitRemote(shell, root, plan); // killed 12.5 ms into the program
 * shell.lastStdout; // what it printed before dying
 * ```
 */
export class KillingShell implements RemoteShell {
  /** Delay before the kill of the next commit program; null = no kill. */
  killAfterMs: number | null = null;
  /** Stdout of the last commit program run through this wrapper. */
  lastStdout: Uint8Array = new Uint8Array(0);
  /** Wall time of the last commit exec, ms. */
  lastDurationMs = 0;
  readonly label: string;
  readonly elevated: boolean;
  readonly #inner: RemoteShell;

  constructor(inner: RemoteShell) {
    this.#inner = inner;
    this.label = inner.label ?? "killing";
    this.elevated = inner.elevated ?? false;
  }

  async exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    if (!command.includes(COMMIT_MARKER)) return this.#inner.exec(command, options);
    const delay = this.killAfterMs;
    const program = delay === null ? command : killerPrefix(delay) + command;
    const started = performance.now();
    try {
      const result = await this.#inner.exec(program, options);
      this.lastStdout = result.stdout;
      return result;
    } finally {
      this.lastDurationMs = performance.now() - started;
    }
  }

  close(): Promise<void> {
    return this.#inner.close?.() ?? Promise.resolve();
  }
}

/** Shell text: after `delayMs`, SIGKILL this program's whole process group. */
function killerPrefix(delayMs: number): string {
  const seconds = (Math.max(0, delayMs) / 1000).toFixed(4);
  return [
    "__sap_kg=$$",
    "if [ -r /proc/$$/stat ]; then",
    "  read -r __sap_ks < /proc/$$/stat",
    "  __sap_ks=${__sap_ks##*) }",
    "  set -- $__sap_ks",
    "  __sap_kg=${3:-$$}",
    "fi",
    `( sleep ${seconds}; kill -9 -"$__sap_kg" ) </dev/null >/dev/null 2>&1 &`,
    "",
  ].join("\n");
}
