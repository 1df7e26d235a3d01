/**
 * The bench's busy neighbour (issue 31): a child process that spins on one
 * core while some rows are measured, so their targets hold on a busy CI
 * runner or laptop and not only on an idle VM. It is pinned to the last CPU
 * with `taskset` when that exists (the same core every run, so the
 * measurement is repeatable; on a 2-core machine one core is left for the
 * contenders, their JIT, GC and helper processes); without `taskset` it is
 * a plain spinning child and the scheduler places it.
 *
 * The spinner is `sh -c 'while :; do :; done'`: no runtime to load, a few
 * hundred KiB of memory, nothing but CPU. It runs in its own process group
 * and is killed with SIGKILL on stop and on the bench's exit.
 *
 * @module
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { cpus } from "node:os";

/** A running neighbour. */
export interface Neighbour {
  /** e.g. `a spinning sh pinned to CPU 1 (taskset)`. */
  readonly description: string;
  /** The spinner's pid (the leader of its own process group). */
  readonly pid: number;
  /** Stop it (idempotent); resolves once it has exited. */
  stop(): Promise<void>;
}

function haveTaskset(): boolean {
  return spawnSync("sh", ["-c", "command -v taskset"], { stdio: "ignore" }).status === 0;
}

/**
 * Start the neighbour and wait until it has been scheduled (its first 50 ms
 * of spinning), so the first measured sample already sees it.
 *
 * @example
 * ```ts
 * const neighbour = await startNeighbour();
 * try { measure(); } finally { await neighbour.stop(); }
 * ```
 */
export async function startNeighbour(): Promise<Neighbour> {
  const cpu = cpus().length - 1;
  const pinned = haveTaskset();
  const spin = ["sh", "-c", "while :; do :; done"];
  const argv = pinned ? ["taskset", "-c", String(cpu), ...spin] : spin;
  const child: ChildProcess = spawn(argv[0]!, argv.slice(1), { stdio: "ignore", detached: true });
  let exited = false;
  const done = new Promise<void>((resolve) => {
    child.once("exit", () => {
      exited = true;
      resolve();
    });
    child.once("error", () => {
      exited = true;
      resolve();
    });
  });
  const kill = () => {
    if (exited || child.pid === undefined) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  process.once("exit", kill);
  await new Promise((resolve) => setTimeout(resolve, 50));
  if (exited || child.pid === undefined) throw new Error(`the busy neighbour (${argv.join(" ")}) exited at once`);
  return {
    pid: child.pid,
    description: pinned ? `a spinning sh pinned to CPU ${cpu} (taskset)` : "a spinning sh (no taskset: not pinned)",
    async stop() {
      kill();
      await done;
      process.removeListener("exit", kill);
    },
  };
}
