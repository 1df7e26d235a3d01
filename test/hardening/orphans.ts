/**
 * Remote programs that outlive their connection: after a cut, sshd does
 * not kill a session's processes (no pty, no SIGHUP), so the commit
 * program may still be running when the client already reported
 * `outcome_unknown`. The campaigns find such orphans by their operation id
 * in /proc (the id is part of the program text, hence of its command line)
 * and wait for them, so the disk is judged only once it can no longer
 * change. Test machine only: sshd runs here on 127.0.0.1.
 *
 * @module
 */
import { readdirSync, readFileSync } from "node:fs";

/**
 * Pids of the processes whose command line contains `needle`.
 *
 * @example
 * ```ts
 * processesMentioning("'cut_up_5123_x'"); // [] once the program ended
 * ```
 */
export function processesMentioning(needle: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name) || Number(name) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${name}/cmdline`, "latin1");
    } catch {
      continue; // gone meanwhile
    }
    if (cmdline.includes(needle)) found.push(Number(name));
  }
  return found;
}

/**
 * Wait until no process mentions `needle` (or `timeoutMs` passed).
 * Resolves how long it waited and whether anything was still running.
 *
 * @example
 * ```ts
 * const { orphan } = await waitForNoProcess("'op_1'");
 * ```
 */
export async function waitForNoProcess(needle: string, timeoutMs = 15_000): Promise<{ orphan: boolean; waitedMs: number; stillRunning: boolean }> {
  const start = performance.now();
  let orphan = false;
  for (;;) {
    const pids = processesMentioning(needle);
    if (pids.length === 0) return { orphan, waitedMs: performance.now() - start, stillRunning: false };
    orphan = true;
    if (performance.now() - start > timeoutMs) return { orphan, waitedMs: performance.now() - start, stillRunning: true };
    await Bun.sleep(10);
  }
}
