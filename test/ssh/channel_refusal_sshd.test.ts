/**
 * sshd frees the session of a closed channel only when its main loop
 * collects the channel, after it has dispatched every packet it read
 * together with our CLOSE. So an open we send right after a channel
 * closed — nothing of ours open by our count — is refused ("open failed")
 * when both reach sshd in one read, as on a loaded host. The adapter must
 * ask again, not report the program refused.
 *
 * Fault-injected timing, real sshd: a TCP proxy holds the client's bytes
 * from just before the first program ends and forwards the CLOSE and the
 * next CHANNEL_OPEN in one write. sshd's log shows the refusal happened,
 * so the test cannot pass without the race being reproduced.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { connectSsh } from "../../lib/ssh/shell.ts";
import type { Warning } from "../../lib/types.ts";
import { sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd } from "../support/sshd.ts";
import { startTcpProxy } from "../support/tcp_proxy.ts";
import { bytes, failureOf, sshOptions, text } from "./helpers.ts";

const ready = sshdReady("SSH channel refusals (test/ssh/channel_refusal_sshd.test.ts)");

/** Let the event loop run a few full turns (timers, then I/O polls), independent of load. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe.skipIf(!ready)("a channel open sshd refuses for a session it has not freed yet", () => {
  let sshd: Sshd;
  let work: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "sap-refusal-"));
    sshd = await startSshd({ maxSessions: 1 });
  }, 30_000);
  afterAll(async () => {
    await sshd?.stop();
    rmSync(work, { recursive: true, force: true });
  }, 30_000);

  const table: { name: string; maxChannels: number }[] = [
    { name: "maxChannels 1 (nothing else ever open)", maxChannels: 1 },
    { name: "the default maxChannels 8 on MaxSessions 1", maxChannels: 8 },
  ];
  for (const c of table) {
    test(`${c.name}: an exec whose open reaches sshd in one read with the previous channel's CLOSE is asked again and runs`, async () => {
      const proxy = await startTcpProxy({ targetPort: sshd.port });
      const line = sshd.hostKeyLine.replace(`]:${sshd.port} `, `]:${proxy.port} `);
      const knownHosts = writeKnownHosts(work, [line], `kh-${proxy.port}`);
      const shell = await connectSsh({ ...sshOptions(sshd, knownHosts, { maxChannels: c.maxChannels }), port: proxy.port });
      try {
        const logStart = sshd.readLog().length;
        for (let round = 0; round < 3; round++) {
          // Hold from the moment the first program's stdin went out: its channel is open, it runs.
          const first = shell.exec(`sleep 0.2; echo first ${round}`, { stdin: bytes("x"), onStdinProgress: () => proxy.holdUp() });
          expect(text((await first).stdout)).toBe(`first ${round}\n`);
          // Our CLOSE of it is held now; the next exec's CHANNEL_OPEN goes out within these turns and is held too.
          const second = shell.exec(`echo second ${round}`);
          await turns(3);
          proxy.releaseUp();
          expect(text((await second).stdout)).toBe(`second ${round}\n`);
        }
        // The race happened (sshd refused at least one open) and every program still ran.
        await turns(5);
        expect(sshd.readLog().slice(logStart)).toContain("server_input_channel_open: failure session");
      } finally {
        await shell.close();
        await proxy.close();
      }
    }, 30_000);
  }

  test("a refusal on a connection that never closed a channel stays final at once (no retries hide a server that refuses sessions)", async () => {
    const refusing = await startSshd({ maxSessions: 0 });
    try {
      const knownHosts = writeKnownHosts(work, [refusing.hostKeyLine], "kh-refusing");
      const shell = await connectSsh(sshOptions(refusing, knownHosts));
      try {
        const started = Date.now();
        const failed = await failureOf(shell.exec("echo never"));
        expect(failed.code).toBe("remote_error");
        expect(failed.message).toContain("open failed");
        expect(Date.now() - started).toBeLessThan(5000); // not a lower bound on time, only "not retried for long"
      } finally {
        await shell.close();
      }
    } finally {
      await refusing.stop();
    }
  }, 30_000);
});

/** `server_input_channel_open: failure session` lines: sshd's record of each refused session open. */
const refusalsIn = (log: string): number => log.split("server_input_channel_open: failure session").length - 1;

describe.skipIf(!ready)("many concurrent calls on one connection against MaxSessions 10 (issue 28 item 5)", () => {
  let sshd: Sshd;
  let work: string;
  let knownHosts: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "sap-storm-"));
    chmodSync(work, 0o755); // the login user must reach its directory below
    sshd = await startSshd({ maxSessions: 10 });
    knownHosts = writeKnownHosts(work, [sshd.hostKeyLine], "kh-storm");
  }, 30_000);
  afterAll(async () => {
    await sshd?.stop();
    rmSync(work, { recursive: true, force: true });
  }, 30_000);

  test("50 concurrent applyPatch calls with maxChannels 50: all 50 correct, fewer than 100 refused opens, the limit lowered to 9 (10 held, one kept free) with one warning", async () => {
    const root = join(work, "root");
    mkdirSync(root, { mode: 0o755 });
    for (let i = 0; i < 50; i++) writeFileSync(join(root, `f${i}.txt`), `line one\nvalue ${i}\nline three\n`);
    if (process.getuid?.() === 0) spawnSync("chown", ["-R", `${sshd.user}:`, root]);
    const warned: Warning[] = [];
    const shell = await connectSsh(sshOptions(sshd, knownHosts, { maxChannels: 50, onWarning: (w) => warned.push(w) }));
    try {
      const logStart = sshd.readLog().length;
      const patch = (i: number): string => `*** Begin Patch\n*** Update File: f${i}.txt\n@@\n line one\n-value ${i}\n+value ${i} changed\n line three\n*** End Patch`;
      const reports = await Promise.all(Array.from({ length: 50 }, (_, i) => applyPatch(shell, { root, patch: patch(i) })));
      expect(reports.map((r) => r.errors ?? [])).toEqual(Array.from({ length: 50 }, () => []));
      for (let i = 0; i < 50; i++) expect(readFileSync(join(root, `f${i}.txt`), "utf8")).toBe(`line one\nvalue ${i} changed\nline three\n`);
      await turns(20); // sshd writes its log as it refuses; let the last lines land
      const refused = refusalsIn(sshd.readLog().slice(logStart));
      expect(refused).toBeGreaterThan(0); // the server did refuse: the limit was found, not assumed
      expect(refused).toBeLessThan(100);
      expect(shell.maxChannels).toBe(9); // the 10 it held, one kept free (a handed-over slot's open, a kill)
      const lowered = shell.warnings.filter((w) => w.code === "channel_limit_lowered");
      expect(lowered).toHaveLength(1);
      expect(lowered[0]!.message).toContain("MaxSessions");
      expect(warned.filter((w) => w.code === "channel_limit_lowered")).toEqual(lowered);
    } finally {
      await shell.close();
    }
  }, 60_000);
});
