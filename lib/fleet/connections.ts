/**
 * The shell of one fleet target for the time its turn lasts: the caller's
 * own shell (never closed here), or one the target's `connect` opens and
 * this module closes again — so a fleet holds no more connections than
 * hosts in flight.
 *
 * @module
 */
import { failure } from "../failure.ts";
import { RemoteShellError } from "../remote/shell.ts";
import type { RemoteShell } from "../remote/shell.ts";
import type { PatchFailure } from "../types.ts";
import type { FleetTarget } from "./types.ts";

/** Longest wait for a target's `connect` by default (FleetOptions.connectTimeoutMs). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 60_000;

/** Longest wait for a shell to close: a hung close must not hold a host's slot for ever. */
const CLOSE_WAIT_MS = 10_000;

/** A target's shell while in use, and how to give it back. */
export interface HeldShell {
  shell: RemoteShell;
  /** Close what the fleet opened (never the caller's own shell); never rejects. */
  release(): Promise<void>;
}

/**
 * Open (or take) the shell of `target`. Resolves with the shell or the
 * typed failure that stands for the host: what the adapter said
 * (`connect_failed`, `auth_failed`, `host_key_unknown`, …), or a
 * `connect_failed` with the message of any other error the factory threw.
 *
 * @example
 * ```ts
 * const held = await holdShell(target, signal);
 * if ("code" in held) return failed(held);
 * try { await applyPatch(held.shell, request); } finally { await held.release(); }
 * ```
 */
export async function holdShell(target: FleetTarget, signal: AbortSignal, connectTimeoutMs: number = DEFAULT_CONNECT_TIMEOUT_MS): Promise<HeldShell | PatchFailure> {
  if (target.shell !== undefined) return { shell: target.shell, release: () => Promise.resolve() };
  let shell: RemoteShell;
  const connecting = Promise.resolve().then(() => target.connect(signal));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), connectTimeoutMs)));
  try {
    const first = await Promise.race([connecting, timedOut]);
    if (first === "timeout") {
      // A shell that arrives after all is closed at once: nobody will use it.
      connecting.then((late) => closeOpened(target, late), () => {});
      return failure("timeout", `connecting to ${target.name} took longer than ${connectTimeoutMs} ms; nothing was changed there. Check that the host is up and reachable, then send the patch to it again.`);
    }
    shell = first;
  } catch (error) {
    if (signal.aborted) return failure("cancelled", `the rollout was cancelled while connecting to ${target.name}; nothing was changed there.`);
    if (error instanceof RemoteShellError) return error.failure;
    const what = error instanceof Error ? error.message : String(error);
    return failure("connect_failed", `could not open a shell on ${target.name}: ${what}. Check the host and its connection settings, then send the patch to it again.`);
  } finally {
    clearTimeout(timer);
  }
  if (!shell || typeof shell.exec !== "function") {
    throw new TypeError(`applyFleet: the connect() of target ${JSON.stringify(target.name)} did not resolve with a RemoteShell`);
  }
  return { shell, release: () => closeOpened(target, shell) };
}

/** Close a shell the fleet opened: the target's `release`, else `close()`; errors and hangs are the host's own business. */
async function closeOpened(target: FleetTarget, shell: RemoteShell): Promise<void> {
  const release = target.connect !== undefined ? target.release : undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const closing = (async () => {
    try {
      await (release !== undefined ? release(shell) : shell.close?.());
    } catch {
      // A failed close changes nothing on the host: the report is already true.
    }
  })();
  await Promise.race([closing, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)))]);
  clearTimeout(timer);
}
