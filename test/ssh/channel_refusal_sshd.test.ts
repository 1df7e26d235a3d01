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
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectSsh } from "../../lib/ssh/shell.ts";
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
