/**
 * The peak resident set of this process, immune to what it inherited.
 *
 * `process.resourceUsage().maxRSS` (getrusage) keeps the high-water mark
 * across `execve`: a child spawned by a large parent (the `bun test`
 * process, after a few suites: a GiB or more) starts with the parent's
 * figure, and a measured step that stays below it shows as zero (seen:
 * every large-file memory check read 0 under `npm test`, and passed run
 * alone). Linux's `VmHWM` in `/proc/self/status` belongs to the current
 * address space, which `execve` replaces, so it starts at this program.
 * Elsewhere the getrusage figure is the fallback.
 *
 * @module
 */
import { readFileSync } from "node:fs";

/**
 * Peak RSS in bytes: `VmHWM` where Linux has it, else getrusage's maxRSS.
 *
 * @example
 * ```ts
 * const before = peakRssBytes();
 * work();
 * peakRssBytes() - before; // what the work added to the peak
 * ```
 */
export function peakRssBytes(): number {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (m !== null) return Number(m[1]) * 1024;
  } catch {
    // not Linux: fall back
  }
  return process.resourceUsage().maxRSS * 1024;
}
