/**
 * What the commit's go-ahead handshake costs (issue 26 item 4): the same
 * 1-line commit over the wire bench's throttled link (bench/wire.ts LINK:
 * 4 MiB/s each way, 20 ms round trip) and on loopback, gated (the program
 * asks for GO before its first rename: one more round trip) and ungated
 * (an adapter that does not offer the handshake), interleaved round by
 * round; medians and their ratio. The handshake should cost about one
 * round trip of the link and nothing else.
 *
 * Usage: `npx bun bench/gate.ts [--rounds=N]` (needs sshd; run as root: the
 * programs run through sudo as the harness's login user).
 *
 * @module
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commitRemote } from "../lib/remote/commit.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../lib/remote/shell.ts";
import { connectSsh } from "../lib/ssh/shell.ts";
import type { Plan } from "../lib/types.ts";
import { startSshd, writeKnownHosts } from "../test/support/sshd.ts";
import { P, plan } from "../test/support/local_trees.ts";
import { LINK, startLink } from "./wire.ts";

/** The same shell without the handshake: the program then goes through once started. */
class Ungated implements RemoteShell {
  readonly label: string;
  readonly link: "local" | "network";
  readonly #inner: RemoteShell;
  constructor(inner: RemoteShell) {
    this.#inner = inner;
    this.label = inner.label ?? "ungated";
    this.link = inner.link ?? "local";
  }
  exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    return this.#inner.exec(command, options);
  }
}

function updatePlan(before: string, after: string): Plan {
  return plan([P.update("f.txt", before, after)]);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const rounds = Number(process.argv.find((a) => a.startsWith("--rounds="))?.slice(9) ?? 15);
const sshd = await startSshd();
const work = mkdtempSync(join(tmpdir(), "sap-gate-bench-"));
const knownHosts = writeKnownHosts(work, [sshd.hostKeyLine]);
const root = join(work, "root");
mkdirSync(root);
chmodSync(work, 0o755);
try {
  for (const [name, link] of [["loopback", null], [`${LINK.rate / 1024 / 1024} MiB/s, ${LINK.rttMs} ms RTT`, LINK]] as const) {
    const proxy = link === null ? null : await startLink(sshd.port, link.rate, link.rttMs);
    const shell = await connectSsh({
      host: sshd.host,
      port: proxy?.port ?? sshd.port,
      username: process.env.GATE_BENCH_USER ?? sshd.user,
      identityFile: sshd.userKeyPath,
      knownHostsFile: knownHosts,
      hostKeyPolicy: "accept-new",
      sshConfigFile: false,
      agent: false,
      sudo: process.env.GATE_BENCH_USER === undefined,
    });
    const times: Record<"gated" | "ungated", number[]> = { gated: [], ungated: [] };
    let n = 0;
    for (let r = 0; r < rounds; r++) {
      for (const mode of r % 2 === 0 ? ["gated", "ungated"] as const : ["ungated", "gated"] as const) {
        const before = `v${n}\n`;
        const after = `v${n + 1}\n`;
        n++;
        writeFileSync(join(root, "f.txt"), before);
        const t0 = performance.now();
        const report = await commitRemote(mode === "gated" ? shell : new Ungated(shell), root, updatePlan(before, after));
        const ms = performance.now() - t0;
        if (!report.ok) throw new Error(JSON.stringify(report.errors));
        if (r > 0) times[mode].push(ms); // the first round warms the connection
      }
    }
    await shell.close();
    await proxy?.close();
    const g = median(times.gated);
    const u = median(times.ungated);
    console.log(`${name}: 1-line commit, median of ${times.gated.length}: gated ${g.toFixed(1)} ms, ungated ${u.toFixed(1)} ms, difference ${(g - u).toFixed(1)} ms, ratio ${(g / u).toFixed(2)}×`);
  }
} finally {
  await sshd.stop();
  rmSync(work, { recursive: true, force: true });
}
