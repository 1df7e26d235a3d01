/**
 * Peak memory of a one-line change to a large file (issue 28 item 3): one
 * applyPatch through LocalShell or a real sshd (which this process starts:
 * Bun only, as the sshd harness), measured with the process's peak RSS
 * (an interval sampler cannot fire during the synchronous decode and
 * planning).
 *
 *   bun test/scale/large_file_memory.ts <MiB> <local|ssh|ssh-plain> [--cached]
 *
 * `ssh` uses the default compression (`auto`: compressed on the network),
 * `ssh-plain` sends the snapshot as it is. `--cached` reads the file once
 * into a SnapshotCache first, so the apply downloads nothing (a hash proof).
 * Prints one JSON line: sizes in bytes, peak RSS before the apply (setup:
 * runtime, sshd client, the written file) and after it (test/support/peak_rss.ts:
 * this process's own high-water mark, not one inherited across exec), the time, and what
 * the report said. test/scale/large_file_memory.test.ts runs it at 64 MiB
 * with a bound; the bench figures (docs) come from the same script at
 * larger sizes.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, openSync, closeSync, writeSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyPatch, connectSsh, LocalShell, readSnapshots, SnapshotCache } from "../../mod.ts";
import type { RemoteShell } from "../../mod.ts";
import { peakRssBytes } from "../support/peak_rss.ts";

/** What one run printed. */
export interface MemoryRun {
  mode: string;
  cached: boolean;
  fileBytes: number;
  /** Peak RSS (bytes) before the apply: runtime, connection, cache contents. */
  setupPeakBytes: number;
  /** Peak RSS (bytes) of the whole process after the apply. */
  peakBytes: number;
  ms: number;
  ok: boolean;
  snapshot?: string;
  error?: string;
}

/** A code-like line of about 50 bytes, unique by its number. */
export const lineOf = (i: number): string => `    const value${i} = compute(${i}, options); // line\n`;

/** Write about `bytes` bytes of lines; returns how many lines. */
export function writeLines(path: string, bytes: number): number {
  const fd = openSync(path, "w");
  let written = 0;
  let i = 0;
  try {
    while (written < bytes) {
      let block = "";
      for (let k = 0; k < 20_000 && written + block.length < bytes; k++) block += lineOf(i++);
      writeSync(fd, block);
      written += block.length;
    }
  } finally {
    closeSync(fd);
  }
  return i;
}

const peak = peakRssBytes;

if ((process.argv[1] ?? "").endsWith("large_file_memory.ts")) {
  const mib = Number(process.argv[2] ?? 64);
  const mode = process.argv[3] ?? "local";
  const cached = process.argv.includes("--cached");
  const root = mkdtempSync(join(tmpdir(), "sap-large-"));
  chmodSync(root, 0o755);
  const lines = writeLines(join(root, "big.txt"), mib * 1024 * 1024);
  const fileBytes = statSync(join(root, "big.txt")).size;
  let shell: RemoteShell;
  let stop = async (): Promise<void> => {};
  if (mode === "local") {
    shell = new LocalShell({ cwd: root });
  } else {
    const { startSshd, writeKnownHosts } = await import("../support/sshd.ts");
    const sshd = await startSshd();
    if (process.getuid?.() === 0) spawnSync("chown", ["-R", `${sshd.user}:`, root]);
    const knownHostsFile = writeKnownHosts(sshd.dir, [sshd.hostKeyLine], "kh-large");
    const ssh = await connectSsh({ host: sshd.host, port: sshd.port, username: sshd.user, identityFile: sshd.userKeyPath, knownHostsFile, sshConfigFile: false, agent: false });
    shell = ssh;
    stop = async () => {
      await ssh.close();
      await sshd.stop();
    };
  }
  const limits = { maxFileBytes: 4 * fileBytes };
  const compress = mode === "ssh-plain" ? false : "auto" as const;
  let cache: SnapshotCache | undefined;
  if (cached) {
    cache = new SnapshotCache({ maxBytes: 2 * fileBytes });
    await readSnapshots(shell, root, ["big.txt"], { cache, maxFileBytes: limits.maxFileBytes, compress });
  }
  const setupPeakBytes = peak();
  const i = Math.floor(lines / 2);
  const patch = `*** Begin Patch\n*** Update File: big.txt\n@@\n-${lineOf(i).slice(0, -1)}\n+${lineOf(i).slice(0, -6)}changed\n*** End Patch`;
  const started = performance.now();
  const report = await applyPatch(shell, { root, patch, limits, compress, ...(cache ? { cache } : {}) });
  const ms = Math.round(performance.now() - started);
  const run: MemoryRun = {
    mode,
    cached,
    fileBytes,
    setupPeakBytes,
    peakBytes: peak(),
    ms,
    ok: report.ok,
    ...(report.files[0]?.snapshot !== undefined ? { snapshot: report.files[0].snapshot } : {}),
    ...(report.errors?.[0] ? { error: `${report.errors[0].code}: ${report.errors[0].message.slice(0, 300)}` } : {}),
  };
  await stop();
  rmSync(root, { recursive: true, force: true });
  process.stdout.write(JSON.stringify(run) + "\n");
}
