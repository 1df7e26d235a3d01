/**
 * Locks as the commit and reconcile programs make them (lib/remote/programs/sh_locks.ts):
 * a directory holding one owner record `o.<boot id>.<pid ns>.<pid>.<start time>.<machine id>`
 * with an `info` file `<pid> <host> <epoch> <operation id>`. For tests that
 * plant live, dead or foreign locks.
 *
 * @module
 */
import { mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { lockDirName } from "../../lib/remote/manifest.ts";

function firstLine(path: string): string | null {
  try {
    return readFileSync(path, "utf8").split("\n")[0]!.trim();
  } catch {
    return null;
  }
}

/** This host's boot id, pid namespace of this process and machine id, as the programs record them. */
export function hostIdentity(): { boot: string; ns: string; machine: string } {
  const machine = firstLine("/etc/machine-id") ?? firstLine("/var/lib/dbus/machine-id");
  return {
    boot: firstLine("/proc/sys/kernel/random/boot_id") ?? "-",
    ns: String(statSync("/proc/self/ns/pid").ino),
    machine: machine !== null && /^[0-9a-f]{32}$/.test(machine) ? machine : "-",
  };
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), or null when there is no such process. */
export function startTime(pid: number): string | null {
  const line = firstLine(`/proc/${pid}/stat`);
  if (line === null) return null;
  return line.slice(line.lastIndexOf(") ") + 2).split(" ")[19] ?? null;
}

/** A pid that no process has (checked). */
export function deadPid(): number {
  for (let pid = 4_000_000; ; pid--) {
    try {
      process.kill(pid, 0);
    } catch {
      return pid;
    }
  }
}

/** The owner record of process `pid` (default: this one), with overrides for the fields a test falsifies. */
export function ownerRecord(pid: number = process.pid, over: Partial<{ boot: string; ns: string; start: string; machine: string }> = {}): string {
  const id = hostIdentity();
  const start = over.start ?? startTime(pid) ?? "1";
  return `o.${over.boot ?? id.boot}.${over.ns ?? id.ns}.${pid}.${start}.${over.machine ?? id.machine}`;
}

/** The record of a process that is gone: this host, this boot, this namespace, a pid nobody has. */
export function deadRecord(): string {
  return ownerRecord(deadPid(), { start: "12345" });
}

/**
 * Plant the lock of `suffix` in `dir` as a program would have left it;
 * returns its path. `ageSeconds` sets its mtime that far back (shown in
 * warnings, never judged).
 */
export function plantLock(dir: string, suffix: string, record: string, op: string, ageSeconds = 0): string {
  const lock = join(dir, lockDirName(suffix));
  mkdirSync(join(lock, record), { recursive: true, mode: 0o700 });
  const pid = record.split(".")[3];
  writeFileSync(join(lock, record, "info"), `${pid} ${hostname()} ${Math.floor(Date.now() / 1000)} ${op}\n`);
  const when = Date.now() / 1000 - ageSeconds;
  utimesSync(lock, when, when);
  return lock;
}
