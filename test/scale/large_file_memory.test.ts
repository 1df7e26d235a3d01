/**
 * Peak memory of a one-line change to a 64 MiB file (issue 28 item 3), in a
 * child process each (test/scale/large_file_memory.ts): the RSS the apply
 * adds over the setup, as a multiple of the file. A measurement, so the
 * bounds are generous; what they catch is a whole extra copy of the file —
 * the SSH channel joining its output chunks was one (3.4–3.7× here, 1.8–2×
 * since). Today's cost is about 2× (the snapshot's bytes and their decoded
 * text); docs give the figures per size and runtime.
 */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { sshdReady } from "../support/sshd.ts";
import type { MemoryRun } from "./large_file_memory.ts";

const REPO = join(import.meta.dir, "..", "..");
const ssh = sshdReady("large-file memory over SSH (test/scale/large_file_memory.test.ts)");

function run(args: string[]): MemoryRun {
  const out = spawnSync(process.execPath, ["test/scale/large_file_memory.ts", "64", ...args], { cwd: REPO, encoding: "utf8", timeout: 120_000 });
  const line = out.stdout.trim().split("\n").at(-1) ?? "";
  if (!line.startsWith("{")) throw new Error(`no result line; stderr: ${out.stderr.slice(0, 2000)}`);
  return JSON.parse(line) as MemoryRun;
}

const table: { name: string; args: string[]; bound: number; needsSsh?: boolean; snapshot: string }[] = [
  { name: "LocalShell", args: ["local"], bound: 2.75, snapshot: "downloaded" },
  // Measured 1.2–2.2× over runs of the same code on an idle machine (the GC takes the decoded text's
  // garbage or not before the peak sample); 2 failed two full CI runs in three at 2.19×. An extra copy
  // of the file adds 1× to the ~1.8× median, past 2.5.
  { name: "LocalShell, the content in a SnapshotCache (nothing downloaded)", args: ["local", "--cached"], bound: 2.5, snapshot: "cached" },
  { name: "SSH, uncompressed", args: ["ssh-plain"], bound: 2.75, needsSsh: true, snapshot: "downloaded" },
  // The decompressor's output chunks are garbage the GC has not taken yet at this size.
  { name: "SSH, compressed (the default on a network link)", args: ["ssh"], bound: 3.25, needsSsh: true, snapshot: "compressed" },
];

describe("a one-line change to a 64 MiB file: the apply adds at most a bounded multiple of the file to the peak RSS", () => {
  for (const c of table) {
    test.skipIf(c.needsSsh === true && !ssh)(`${c.name}: at most ${c.bound}× the file`, () => {
      const r = run(c.args);
      expect(r.error).toBeUndefined();
      expect(r).toMatchObject({ ok: true, snapshot: c.snapshot });
      const added = (r.peakBytes - r.setupPeakBytes) / r.fileBytes;
      expect(added).toBeLessThan(c.bound);
      expect(added).toBeGreaterThan(0.5); // it did read and decode the file: the measure measures something
    }, 130_000);
  }
});
