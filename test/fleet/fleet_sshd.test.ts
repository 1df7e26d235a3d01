/**
 * applyFleet and reconcileFleet over a real OpenSSH sshd on 127.0.0.1:
 * separate roots stand in for hosts, each target opening its own SSH
 * connection lazily (connectSsh) and the fleet closing it when the host is
 * done.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyFleet } from "../../lib/fleet/fleet.ts";
import { reconcileFleet } from "../../lib/fleet/reconcile_fleet.ts";
import type { FleetReport, FleetTarget } from "../../lib/fleet/types.ts";
import type { RemoteShell } from "../../lib/remote/shell.ts";
import { connectSsh } from "../../lib/ssh/shell.ts";
import { sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd } from "../support/sshd.ts";
import { sshOptions } from "../ssh/helpers.ts";
import { AFTER, BEFORE, CommitKiller, DRIFTED, FleetMeter, makeHosts, PATCH } from "./helpers.ts";
import type { Hosts } from "./helpers.ts";

const ready = sshdReady("fleet over a real sshd (test/fleet/fleet_sshd.test.ts)");

function states(report: FleetReport): Record<string, string> {
  return Object.fromEntries(report.hosts.map((h) => [h.name, h.state]));
}

describe.skipIf(!ready)("applyFleet over a real sshd, one root per host", () => {
  let sshd: Sshd;
  let work: string;
  let knownHosts: string;
  let emptyKnownHosts: string;
  let owner: { uid: number; gid: number } | undefined;
  const made: Hosts[] = [];

  beforeAll(async () => {
    sshd = await startSshd();
    work = mkdtempSync(join(tmpdir(), "sap-fleet-ssh-"));
    knownHosts = writeKnownHosts(work, [sshd.hostKeyLine]);
    emptyKnownHosts = writeKnownHosts(work, [], "empty_known_hosts");
    const id = (flag: string): number => Number(execFileSync("id", [flag, sshd.user]).toString().trim());
    owner = process.getuid?.() === 0 ? { uid: id("-u"), gid: id("-g") } : undefined;
  }, 30_000);
  afterAll(async () => {
    for (const h of made) h.remove();
    await sshd?.stop();
    rmSync(work, { recursive: true, force: true });
  }, 30_000);

  function hosts(n: number, content?: (name: string) => string): Hosts {
    const h = makeHosts(n, content, owner);
    made.push(h);
    return h;
  }

  /** One lazy SSH connection per target, metered; `around` wraps one host's shell. */
  function sshTargets(h: Hosts, meter: FleetMeter, around: (name: string, shell: RemoteShell) => RemoteShell = (_, s) => s, knownHostsOf: (name: string) => string = () => knownHosts): FleetTarget[] {
    return h.names.map((name) => ({
      name,
      root: h.roots.get(name)!,
      connect: async () => meter.wrap(around(name, await connectSsh(sshOptions(sshd, knownHostsOf(name))))),
    }));
  }

  test("eight hosts, concurrency 3: a drifted host and an unknown host key fail on their own (maxFailures 2), the rest apply; at most 3 connections at once, each closed", async () => {
    const h = hosts(8, (name) => (name === "h05" ? DRIFTED : BEFORE));
    const meter = new FleetMeter();
    const logBefore = sshd.readLog().length;
    const targets = sshTargets(h, meter, undefined, (name) => (name === "h03" ? emptyKnownHosts : knownHosts));
    const report = await applyFleet(targets, { patch: PATCH }, { concurrency: 3, maxFailures: 2 });

    expect(states(report)).toEqual({ h01: "applied", h02: "applied", h03: "failed", h04: "applied", h05: "failed", h06: "applied", h07: "applied", h08: "applied" });
    const h03 = report.hosts.find((x) => x.name === "h03")!;
    expect(h03.state === "failed" && h03.error.code).toBe("host_key_unknown");
    const h05 = report.hosts.find((x) => x.name === "h05")!;
    expect(h05.state === "failed" && h05.error.code).toBe("context_mismatch");
    for (const name of h.names) expect(h.read(name)).toBe(name === "h05" ? DRIFTED : name === "h03" ? BEFORE : AFTER);
    expect(meter.maxOpen).toBeLessThanOrEqual(3);
    expect(meter.maxInFlight).toBeLessThanOrEqual(3);
    expect(meter.opened).toBe(7); // h03 never got a shell
    expect(meter.closed).toBe(7);
    // sshd saw one login per host that had a key it knew.
    const logins = sshd.readLog().slice(logBefore).match(/Accepted publickey/g) ?? [];
    expect(logins.length).toBe(7);
    expect(report.summary.rerun).toEqual(["h03", "h05"]);
  }, 60_000);

  test("a host killed mid-commit over SSH is outcome_unknown; reconcileFleet over fresh connections settles it", async () => {
    const h = hosts(4);
    const meter = new FleetMeter();
    const report = await applyFleet(sshTargets(h, meter, (name, shell) => (name === "h02" ? new CommitKiller(shell, "done") : shell)), { patch: PATCH }, { canary: 0, maxFailures: 1, concurrency: 2 });
    expect(states(report)).toEqual({ h01: "applied", h02: "outcome_unknown", h03: "applied", h04: "applied" });
    const unknown = report.hosts.find((x) => x.name === "h02")!;
    expect(unknown.state === "outcome_unknown" && unknown.reconcile.files.map((f) => f.path)).toEqual(["app.conf"]);

    const settled = await reconcileFleet(JSON.parse(JSON.stringify(report)), sshTargets(h, meter));
    expect(settled.hosts.map((s) => [s.name, s.state])).toEqual([["h02", "applied"]]);
    expect(settled.fleet.ok).toBe(true);
    expect(h.read("h02")).toBe(AFTER);
    expect(meter.open).toBe(0);
  }, 60_000);

  test("one shell of the caller's for every root (several roots on one host): used by all, never closed by the fleet", async () => {
    const h = hosts(5);
    const shell = await connectSsh(sshOptions(sshd, knownHosts));
    try {
      const targets: FleetTarget[] = h.names.map((name) => ({ name, root: h.roots.get(name)!, shell }));
      const report = await applyFleet(targets, { patch: PATCH }, { concurrency: 5 });
      expect(report.ok).toBe(true);
      // Still open: a further program runs on it.
      const after = await shell.exec("echo still-open");
      expect(new TextDecoder().decode(after.stdout)).toBe("still-open\n");
    } finally {
      await shell.close();
    }
  }, 60_000);
});
