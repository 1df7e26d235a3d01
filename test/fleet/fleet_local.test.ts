/**
 * applyFleet and reconcileFleet over LocalShell: separate roots stand in
 * for hosts (each target its own root, some through a lazy `connect`, some
 * with a shell of the caller's), real files, the real programs.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { applyFleet } from "../../lib/fleet/fleet.ts";
import { reconcileFleet } from "../../lib/fleet/reconcile_fleet.ts";
import type { FleetHost, FleetOptions, FleetProgress, FleetReport, FleetTarget } from "../../lib/fleet/types.ts";
import { failure } from "../../lib/failure.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { RemoteShellError } from "../../lib/remote/shell.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";
import { chmodSync } from "node:fs";
import { AFTER, BEFORE, CommitKiller, DRIFTED, FleetMeter, makeHosts, PATCH, sha } from "./helpers.ts";
import type { Hosts } from "./helpers.ts";

// Real programs on a shared machine: a test that takes 1 s on an idle one may take ten times that.
setDefaultTimeout(30_000);

const made: Hosts[] = [];
afterEach(() => {
  while (made.length > 0) made.pop()!.remove();
});

function hosts(n: number, content?: (name: string, i: number) => string): Hosts {
  const h = makeHosts(n, content);
  made.push(h);
  return h;
}

/** Targets that connect lazily, each to a metered LocalShell (wrapped by `around`, when given). */
function lazyTargets(h: Hosts, meter: FleetMeter, around?: (name: string, shell: RemoteShell) => RemoteShell): FleetTarget[] {
  return h.names.map((name) => ({
    name,
    root: h.roots.get(name)!,
    connect: () => Promise.resolve(meter.wrap(around ? around(name, new LocalShell()) : new LocalShell())),
  }));
}

function states(report: FleetReport): Record<string, string> {
  return Object.fromEntries(report.hosts.map((h) => [h.name, h.state]));
}

function byName(report: FleetReport, name: string): FleetHost {
  return report.hosts.find((h) => h.name === name)!;
}

/** A shell that waits `ms` before each program, so that hosts overlap in time. */
function slow(inner: RemoteShell, ms: number): RemoteShell {
  return {
    label: inner.label,
    exec: async (command: string, options?: ExecOptions): Promise<ExecResult> => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return inner.exec(command, options);
    },
    close: () => inner.close?.() ?? Promise.resolve(),
  };
}

describe("applyFleet over LocalShell roots", () => {
  test("ten hosts: the canary alone first, then the rest; all applied; the fleet closes the shells it opened and never the caller's", async () => {
    const h = hosts(10);
    const meter = new FleetMeter();
    const callerShells = h.names.slice(5).map(() => {
      const shell = meter.wrap(new LocalShell());
      let closes = 0;
      return { shell: { ...shell, exec: shell.exec, close: () => (closes++, Promise.resolve()) } as RemoteShell, closes: () => closes };
    });
    const targets: FleetTarget[] = h.names.map((name, i) =>
      i < 5
        ? { name, root: h.roots.get(name)!, connect: () => Promise.resolve(meter.wrap(new LocalShell())) }
        : { name, root: h.roots.get(name)!, shell: callerShells[i - 5]!.shell }
    );
    const events: FleetProgress[] = [];
    const report = await applyFleet(targets, { patch: PATCH }, { onProgress: (e) => events.push(e) });

    expect(report.ok).toBe(true);
    expect(Object.values(states(report))).toEqual(Array(10).fill("applied"));
    for (const name of h.names) expect(h.read(name)).toBe(AFTER);
    // The canary finished before anything else started.
    const firstOther = events.findIndex((e) => e.type === "host_started" && e.name !== "h01");
    const canaryDone = events.findIndex((e) => e.type === "host_finished" && e.name === "h01");
    expect(canaryDone).toBeGreaterThanOrEqual(0);
    expect(canaryDone).toBeLessThan(firstOther);
    expect((byName(report, "h01") as FleetHost & { phase: string }).phase).toBe("canary");
    expect((byName(report, "h02") as FleetHost & { phase: string }).phase).toBe("rollout");
    // Five opened by the fleet and closed by it; the caller's five never closed.
    expect(meter.closed).toBe(5);
    expect(callerShells.map((c) => c.closes())).toEqual([0, 0, 0, 0, 0]);
    expect(report.summary.counts.applied).toBe(10);
    expect(report.summary.nextStep).toBe("Nothing to do: every host holds the change.");
    expect(report.stopped).toBeUndefined();
  });

  test("a failing host in the middle, maxFailures 0: earlier hosts applied, the failed one unchanged, later ones not_started; the summary quotes its failure and names the re-run", async () => {
    const h = hosts(8, (name) => (name === "h04" ? DRIFTED : BEFORE));
    const meter = new FleetMeter();
    const report = await applyFleet(lazyTargets(h, meter), { patch: PATCH }, { concurrency: 1 });

    expect(states(report)).toEqual({ h01: "applied", h02: "applied", h03: "applied", h04: "failed", h05: "not_started", h06: "not_started", h07: "not_started", h08: "not_started" });
    expect(h.read("h04")).toBe(DRIFTED);
    for (const name of ["h05", "h06", "h07", "h08"]) expect(h.read(name)).toBe(BEFORE);
    expect(report.ok).toBe(false);
    expect(report.stopped).toEqual({ reason: "max_failures", after: "h04", failures: 1 });
    const failed = byName(report, "h04");
    if (failed.state !== "failed") throw new Error("h04 should have failed");
    expect(failed.error.code).toBe("context_mismatch");
    expect(report.summary.firstFailure).toEqual({ host: "h04", code: "context_mismatch", message: failed.report.errors![0]!.message });
    expect(report.summary.text).toContain(failed.report.errors![0]!.message); // verbatim
    expect(report.summary.rerun).toEqual(["h04", "h05", "h06", "h07", "h08"]);
    expect(report.summary.nextStep).toBe("Fix the cause of the first failure (on h04), then call applyFleet again with only the targets h04, h05, h06, h07, h08.");
    // Hosts that never started never connected.
    expect(meter.opened).toBe(4);
  });

  const stopping: { name: string; drifted: string[]; options: FleetOptions; states: Record<string, string>; stopped?: FleetReport["stopped"] }[] = [
    {
      name: "a canary that fails stops the rollout whatever maxFailures allows",
      drifted: ["h01"],
      options: { canary: 1, maxFailures: 5 },
      states: { h01: "failed", h02: "not_started", h03: "not_started", h04: "not_started", h05: "not_started", h06: "not_started" },
      stopped: { reason: "canary_failed", after: "h01", failures: 1 },
    },
    {
      name: "canaries named: they go first, in their order",
      drifted: ["h05"],
      options: { canary: ["h03", "h05"], maxFailures: 5 },
      states: { h01: "not_started", h02: "not_started", h03: "applied", h04: "not_started", h05: "failed", h06: "not_started" },
      stopped: { reason: "canary_failed", after: "h05", failures: 1 },
    },
    {
      name: "maxFailures 2: two failures are tolerated, the third stops it",
      drifted: ["h02", "h03", "h04"],
      options: { canary: 0, maxFailures: 2, concurrency: 1 },
      states: { h01: "applied", h02: "failed", h03: "failed", h04: "failed", h05: "not_started", h06: "not_started" },
      stopped: { reason: "max_failures", after: "h04", failures: 3 },
    },
    {
      name: "maxFailures 2 with two failures: every host has its turn",
      drifted: ["h02", "h05"],
      options: { canary: 0, maxFailures: 2, concurrency: 2 },
      states: { h01: "applied", h02: "failed", h03: "applied", h04: "applied", h05: "failed", h06: "applied" },
    },
    {
      name: "canary 0: no canary phase, the first failure stops new starts (the running host finishes)",
      drifted: ["h01"],
      options: { canary: 0, concurrency: 2 },
      states: { h01: "failed", h02: "applied", h03: "not_started", h04: "not_started", h05: "not_started", h06: "not_started" },
      stopped: { reason: "max_failures", after: "h01", failures: 1 },
    },
  ];
  for (const c of stopping) {
    test(c.name, async () => {
      const h = hosts(6, (name) => (c.drifted.includes(name) ? DRIFTED : BEFORE));
      // h01 slower than h02 where they run side by side, so "the running host finishes" is what is seen.
      const report = await applyFleet(lazyTargets(h, new FleetMeter(), (name, shell) => (name === "h01" ? slow(shell, 5) : shell)), { patch: PATCH }, c.options);
      expect(states(report)).toEqual(c.states);
      expect(report.stopped).toEqual(c.stopped);
      for (const name of h.names) expect(h.read(name)).toBe(c.states[name] === "applied" ? AFTER : c.drifted.includes(name) ? DRIFTED : BEFORE);
    });
  }

  test("concurrency honoured: 12 hosts at concurrency 3 never have more than 3 programs running or 3 connections open, and reach 3", async () => {
    const h = hosts(12);
    const meter = new FleetMeter();
    const report = await applyFleet(lazyTargets(h, meter, (_, shell) => slow(shell, 15)), { patch: PATCH }, { concurrency: 3, canary: 1 });
    expect(report.ok).toBe(true);
    expect(meter.maxInFlight).toBe(3);
    expect(meter.maxOpen).toBe(3);
    expect(meter.opened).toBe(12);
    expect(meter.closed).toBe(12);
    expect(meter.open).toBe(0);
  });

  test("re-running a partly applied rollout: hosts already holding the change are skipped (already applied), with and without their original expectedSha256", async () => {
    const h = hosts(6, (name) => (name === "h04" ? DRIFTED : BEFORE));
    const targets = lazyTargets(h, new FleetMeter());
    const first = await applyFleet(targets, { patch: PATCH }, { concurrency: 1 });
    expect(first.summary.rerun).toEqual(["h04", "h05", "h06"]);
    h.write("h04", BEFORE); // the cause fixed

    // Again on every host, each with the SHA-256 it was planned on the first time.
    const withSha = targets.map((t) => ({ ...t, expectedSha256: { "app.conf": sha(BEFORE) } }));
    const again = await applyFleet(withSha, { patch: PATCH }, { concurrency: 2 });
    expect(states(again)).toEqual({ h01: "skipped", h02: "skipped", h03: "skipped", h04: "applied", h05: "applied", h06: "applied" });
    expect(again.ok).toBe(true);
    const skipped = byName(again, "h01");
    expect(skipped.state === "skipped" && skipped.reason).toBe("already_applied");
    expect(skipped.state === "skipped" && skipped.report.errors![0]!.code).toBe("precondition_failed");
    for (const name of h.names) expect(h.read(name)).toBe(AFTER);

    // And once more without preconditions: every host skipped (context_mismatch, already applied).
    const third = await applyFleet(targets, { patch: PATCH });
    expect(Object.values(states(third))).toEqual(Array(6).fill("skipped"));
    expect(third.summary.text).toContain("6 skipped (already applied)");
  });

  test("a host where only part of the patch is already there is a failure, not skipped", async () => {
    const two = ["*** Begin Patch", "*** Update File: app.conf", "@@", "-workers 2", "+workers 8", "@@", "-log /var/log/app.log", "+log /srv/log/app.log", "*** End Patch"].join("\n");
    const h = hosts(2, (name) => (name === "h02" ? AFTER : BEFORE));
    const report = await applyFleet(lazyTargets(h, new FleetMeter()), { patch: two }, { canary: 0, maxFailures: 5 });
    expect(states(report)).toEqual({ h01: "applied", h02: "failed" });
    expect(h.read("h02")).toBe(AFTER);
  });

  test("dry run: every host planned (failures do not stop it), nothing written", async () => {
    const h = hosts(6, (name) => (name === "h01" || name === "h04" ? DRIFTED : BEFORE));
    const meter = new FleetMeter();
    const report = await applyFleet(lazyTargets(h, meter), { patch: PATCH }, { dryRun: true, canary: 1, maxFailures: 0 });
    expect(states(report)).toEqual({ h01: "failed", h02: "planned", h03: "planned", h04: "failed", h05: "planned", h06: "planned" });
    expect(report.dryRun).toBe(true);
    expect(report.stopped).toBeUndefined();
    for (const name of h.names) expect(h.read(name)).toBe(name === "h01" || name === "h04" ? DRIFTED : BEFORE);
    const planned = byName(report, "h02");
    expect(planned.state === "planned" && planned.report.files[0]!.previousSha256).toBe(sha(BEFORE));
    expect(report.summary.text.startsWith("Dry run, 6 hosts: 4 planned, 2 failed.")).toBe(true);

    const clean = await applyFleet(lazyTargets(hosts(2), meter), { patch: PATCH, dryRun: true });
    expect(clean.ok).toBe(true);
    expect(clean.summary.nextStep).toContain("without dryRun");
  });

  test("per-host expectedSha256: a wrong one fails only its host, and a target's entry wins over the request's", async () => {
    const h = hosts(4);
    const targets = lazyTargets(h, new FleetMeter()).map((t) =>
      t.name === "h03" ? { ...t, expectedSha256: { "app.conf": sha("something else\n") } } : t.name === "h02" ? { ...t, expectedSha256: { "app.conf": sha(BEFORE) } } : t
    );
    const report = await applyFleet(targets, { patch: PATCH, expectedSha256: { "app.conf": sha("wrong for everyone\n") } }, { canary: 0, maxFailures: 10 });
    expect(states(report)).toEqual({ h01: "failed", h02: "applied", h03: "failed", h04: "failed" });
    const h03 = byName(report, "h03");
    expect(h03.state === "failed" && h03.error.code).toBe("precondition_failed");
    expect(h03.state === "failed" && h03.error.expectedSha256).toBe(sha("something else\n"));
  });

  test("per-host options: a target's own apply options win over the request's for that host alone", async () => {
    // Trailing spaces everywhere: the default (lenient) matching accepts them, exact does not.
    const h = hosts(3, () => BEFORE.replace("workers 2", "workers 2  "));
    const targets = lazyTargets(h, new FleetMeter()).map((t) => (t.name === "h02" ? { ...t, options: { matching: "exact" as const } } : t));
    const report = await applyFleet(targets, { patch: PATCH }, { canary: 0, maxFailures: 5 });
    expect(states(report)).toEqual({ h01: "applied", h02: "failed", h03: "applied" });
    const h01 = byName(report, "h01");
    expect(h01.state === "applied" && h01.report.files[0]!.warnings.map((w) => w.code)).toContain("fuzzy_match");
  });

  test("connection failures are host failures that count toward maxFailures: a typed one from the adapter, any other error as connect_failed", async () => {
    const h = hosts(5);
    const targets = lazyTargets(h, new FleetMeter()).map((t): FleetTarget => {
      if (t.name === "h02") return { ...t, shell: undefined, connect: () => Promise.reject(new RemoteShellError(failure("host_key_unknown", "the host key of h02 is not known", { fingerprint: "SHA256:test", knownHostsLine: "h02 ssh-ed25519 AAAA" }))) };
      if (t.name === "h04") return { ...t, shell: undefined, connect: () => Promise.reject(new Error("no such host in the inventory")) };
      return t;
    });
    const report = await applyFleet(targets, { patch: PATCH }, { maxFailures: 1, concurrency: 1 });
    expect(states(report)).toEqual({ h01: "applied", h02: "failed", h03: "applied", h04: "failed", h05: "not_started" });
    const h02 = byName(report, "h02");
    const h04 = byName(report, "h04");
    expect(h02.state === "failed" && h02.error.code).toBe("host_key_unknown");
    expect(h04.state === "failed" && [h04.error.code, h04.error.message]).toEqual(["connect_failed", "connect_failed: could not open a shell on h04: no such host in the inventory. Check the host and its connection settings, then send the patch to it again."]);
    expect(h04.state === "failed" && h04.report.operationId).toMatch(/^[0-9a-f]{16}$/);
    expect(report.stopped).toEqual({ reason: "max_failures", after: "h04", failures: 2 });
  });

  test("timeouts are host failures: a program past the request's timeoutMs, a connect past connectTimeoutMs (its late shell closed)", async () => {
    const h = hosts(4);
    const meter = new FleetMeter();
    let lateClosed = false;
    const targets = lazyTargets(h, meter, (name, shell) =>
      name === "h02"
        ? { label: shell.label, exec: (command, options) => shell.exec(`sleep 5\n${command}`, options), close: () => shell.close?.() ?? Promise.resolve() }
        : shell
    ).map((t): FleetTarget =>
      t.name === "h02"
        // Only h02's programs are bounded this tightly: the others keep the default (a loaded machine is slow).
        ? { ...t, options: { timeoutMs: 300 } }
        : t.name === "h03"
        ? {
          ...t,
          shell: undefined,
          connect: () =>
            new Promise((resolve) =>
              setTimeout(() => resolve({ exec: () => Promise.reject(new Error("unused")), close: () => ((lateClosed = true), Promise.resolve()) }), 400)
            ),
        }
        : t
    );
    const report = await applyFleet(targets, { patch: PATCH }, { canary: 0, concurrency: 1, maxFailures: 3, connectTimeoutMs: 150 });
    expect(states(report)).toEqual({ h01: "applied", h02: "failed", h03: "failed", h04: "applied" });
    const codes = ["h02", "h03"].map((name) => {
      const host = byName(report, name);
      return host.state === "failed" ? host.error.code : host.state;
    });
    expect(codes).toEqual(["timeout", "timeout"]);
    expect(h.read("h02")).toBe(BEFORE);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(lateClosed).toBe(true);
  });

  test("abort: no host starts after it; the running host stops before its commit with nothing changed (cancelled)", async () => {
    const h = hosts(6);
    const controller = new AbortController();
    const report = await applyFleet(lazyTargets(h, new FleetMeter()), { patch: PATCH }, {
      concurrency: 1,
      signal: controller.signal,
      onProgress: (e) => {
        if (e.type === "host_started" && e.name === "h03") controller.abort();
      },
    });
    expect(states(report)).toEqual({ h01: "applied", h02: "applied", h03: "cancelled", h04: "not_started", h05: "not_started", h06: "not_started" });
    expect(report.stopped).toEqual({ reason: "cancelled", after: "h03", failures: 0 });
    expect(h.read("h03")).toBe(BEFORE);
    expect(report.summary.rerun).toEqual(["h03", "h04", "h05", "h06"]);
    expect(report.summary.nextStep).toBe("Call applyFleet again with only the targets h03, h04, h05, h06 to finish the rollout.");
  });

  test("abort while a host reads its files: the program is stopped, the host cancelled, nothing changed", async () => {
    const h = hosts(3);
    const controller = new AbortController();
    const around = (name: string, shell: RemoteShell): RemoteShell => ({
      label: shell.label,
      exec: (command, options) => {
        const running = shell.exec(command, options);
        if (name === "h02") setTimeout(() => controller.abort(), 1);
        return running;
      },
      close: () => shell.close?.() ?? Promise.resolve(),
    });
    const report = await applyFleet(lazyTargets(h, new FleetMeter(), around), { patch: PATCH }, { concurrency: 1, signal: controller.signal });
    expect(states(report)).toEqual({ h01: "applied", h02: "cancelled", h03: "not_started" });
    expect(h.read("h02")).toBe(BEFORE);
  });

  test("stop signal: no new host starts, the running ones finish their commits", async () => {
    const h = hosts(6);
    const stop = new AbortController();
    const report = await applyFleet(lazyTargets(h, new FleetMeter(), (_, shell) => slow(shell, 10)), { patch: PATCH }, {
      canary: 0,
      concurrency: 2,
      stopSignal: stop.signal,
      onProgress: (e) => {
        if (e.type === "host_started" && e.name === "h02") stop.abort();
      },
    });
    expect(states(report)).toEqual({ h01: "applied", h02: "applied", h03: "not_started", h04: "not_started", h05: "not_started", h06: "not_started" });
    expect(report.stopped?.reason).toBe("stopped");
  });

  test("hosts killed mid-commit are outcome_unknown with their operation id and reconcile ticket; reconcileFleet settles each (after the commit point: applied; before it: rolled back)", async () => {
    const h = hosts(6);
    const kills = new Map([["h03", "done"], ["h05", "after_finalize 0"]]);
    const killers: CommitKiller[] = [];
    const targets = lazyTargets(h, new FleetMeter(), (name, shell) => {
      const hook = kills.get(name);
      if (hook === undefined) return shell;
      const killer = new CommitKiller(shell, hook);
      killers.push(killer);
      return killer;
    });
    const report = await applyFleet(targets, { patch: PATCH }, { canary: 0, maxFailures: 5, concurrency: 2 });
    expect(killers.map((k) => k.fired)).toEqual([1, 1]);
    expect(states(report)).toEqual({ h01: "applied", h02: "applied", h03: "outcome_unknown", h04: "applied", h05: "outcome_unknown", h06: "applied" });
    const h03 = byName(report, "h03");
    if (h03.state !== "outcome_unknown") throw new Error("h03 should be unknown");
    expect(h03.operationId).toBe(h03.report.operationId);
    expect(h03.reconcile.operationId).toBe(h03.operationId);
    expect(h03.reconcile.files.map((f) => [f.path, f.newSha256])).toEqual([["app.conf", sha(AFTER)]]);
    expect(report.summary.reconcile.map((r) => r.host)).toEqual(["h03", "h05"]);
    expect(report.summary.nextStep).toStartWith("Call reconcileFleet with this report to settle h03 (operation ");

    // Settled from the report as it would come back from a file: plain JSON.
    const saved = JSON.parse(JSON.stringify(report)) as FleetReport;
    const settled = await reconcileFleet(saved, lazyTargets(h, new FleetMeter()));
    expect(settled.ok).toBe(true);
    expect(settled.hosts.map((s) => [s.name, s.state])).toEqual([["h03", "applied"], ["h05", "not_applied"]]);
    expect(h.read("h03")).toBe(AFTER);
    expect(h.read("h05")).toBe(BEFORE);
    expect(states(settled.fleet)).toEqual({ h01: "applied", h02: "applied", h03: "applied", h04: "applied", h05: "failed", h06: "applied" });
    expect(settled.fleet.summary.rerun).toEqual(["h05"]);
    expect(settled.fleet.summary.text).toContain("(Reconciled since: not_applied, nothing of the patch is there.)");

    // Safe to call again: the settled hosts are no longer unknown, nothing to do.
    const twice = await reconcileFleet(settled.fleet, lazyTargets(h, new FleetMeter()));
    expect(twice.hosts).toEqual([]);
  });

  test("reconcileFleet settles each host under its target's own options: a root others can write, allowed for that host alone, is reconciled with the same policy", async () => {
    const h = hosts(2);
    chmodSync(h.roots.get("h02")!, 0o777); // writable by every user: refused unless allowed
    const targets = lazyTargets(h, new FleetMeter(), (name, shell) => (name === "h02" ? new CommitKiller(shell, "done") : shell))
      .map((t) => (t.name === "h02" ? { ...t, options: { sharedDirectories: "allow" as const } } : t));
    const report = await applyFleet(targets, { patch: PATCH }, { canary: 0, maxFailures: 1 });
    expect(states(report)).toEqual({ h01: "applied", h02: "outcome_unknown" });
    const settled = await reconcileFleet(report, lazyTargets(h, new FleetMeter()).map((t) => (t.name === "h02" ? { ...t, options: { sharedDirectories: "allow" as const } } : t)));
    expect(settled.hosts.map((x) => [x.name, x.state])).toEqual([["h02", "applied"]]);
    // Without the host's own policy the same reconcile is refused there (and stays unsettled).
    const again = await applyFleet(targets, { patch: PATCH.replace("+workers 8", "+workers 9").replace("-workers 2", "-workers 8") }, { canary: 0, maxFailures: 1 });
    expect(states(again).h02).toBe("outcome_unknown");
    const strict = await reconcileFleet(again, lazyTargets(h, new FleetMeter()));
    expect(strict.hosts.map((x) => [x.state, x.report.ok ? "" : x.report.errors[0]!.code])).toEqual([["unsettled", "unsafe_directory"]]);
  });

  test("reconcileFleet without a target of a host's name: that host stays unsettled, with the reason", async () => {
    const h = hosts(2);
    const targets = lazyTargets(h, new FleetMeter(), (name, shell) => (name === "h02" ? new CommitKiller(shell, "done") : shell));
    const report = await applyFleet(targets, { patch: PATCH }, { canary: 0, maxFailures: 1 });
    expect(states(report)).toEqual({ h01: "applied", h02: "outcome_unknown" });
    const settled = await reconcileFleet(report, targets.filter((t) => t.name !== "h02"));
    expect(settled.ok).toBe(false);
    expect(settled.hosts[0]!.state).toBe("unsettled");
    expect(settled.hosts[0]!.report.errors![0]!.code).toBe("invalid_argument");
    expect(states(settled.fleet).h02).toBe("outcome_unknown");
    const done = await reconcileFleet(settled.fleet, targets);
    expect(done.hosts.map((s) => s.state)).toEqual(["applied"]);
  });

  test("reconcileFleet with a host that lost its ticket (an edited report): unsettled, invalid_argument, the host never contacted", async () => {
    let connects = 0;
    const targets: FleetTarget[] = [{ name: "h01", root: "/nonexistent", connect: () => (connects++, Promise.resolve(new LocalShell())) }];
    const edited = JSON.parse(JSON.stringify({ ok: false, dryRun: false, hosts: [{ name: "h01", state: "outcome_unknown", operationId: "0123456789abcdef" }], summary: {} })) as FleetReport;
    const settled = await reconcileFleet(edited, targets);
    expect(settled.hosts.map((h) => [h.state, h.report.errors![0]!.code])).toEqual([["unsettled", "invalid_argument"]]);
    expect(connects).toBe(0);
  });

  test("the report is plain JSON", async () => {
    const h = hosts(4, (name) => (name === "h03" ? DRIFTED : BEFORE));
    const report = await applyFleet(lazyTargets(h, new FleetMeter()), { patch: PATCH }, { concurrency: 1 });
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
  });

  test("an onProgress that throws does not stop the rollout", async () => {
    const h = hosts(3);
    const report = await applyFleet(lazyTargets(h, new FleetMeter()), { patch: PATCH }, {
      onProgress: () => {
        throw new Error("display bug");
      },
    });
    expect(report.ok).toBe(true);
  });

  const strange: { name: string; call: (targets: FleetTarget[]) => Promise<FleetReport>; says: string }[] = [
    { name: "a misspelt dryRun in the options", call: (t) => applyFleet(t, { patch: PATCH }, { dryrun: true } as FleetOptions), says: "unknown applyFleet options field `dryrun`: did you mean `dryRun`?" },
    { name: "an unknown request field", call: (t) => applyFleet(t, { patch: PATCH, expected_sha256: {} } as never), says: "unknown applyFleet request field `expected_sha256`: did you mean `expectedSha256`?" },
    {
      name: "a target's misspelt expectedSha256",
      call: (t) => applyFleet(t.map((x, i) => (i === 1 ? { ...x, expectedSha: {} } as unknown as FleetTarget : x)), { patch: PATCH }),
      says: 'unknown applyFleet target "h02" field `expectedSha`: did you mean `expectedSha256`?',
    },
    {
      name: "a target's unknown apply option",
      call: (t) => applyFleet(t.map((x, i) => (i === 2 ? { ...x, options: { timeout: 5 } } as unknown as FleetTarget : x)), { patch: PATCH }),
      says: 'unknown applyFleet target "h03" options field `timeout`',
    },
    // A known field with a value of the wrong type: `dryRun: "true"` was a real run on every host.
    { name: 'dryRun: "true" in the request', call: (t) => applyFleet(t, { patch: PATCH, dryRun: "true" } as never), says: 'applyFleet request field `dryRun` must be true or false, not the string "true"' },
    { name: "dryRun: 1 in the options", call: (t) => applyFleet(t, { patch: PATCH }, { dryRun: 1 } as never), says: "applyFleet options field `dryRun` must be true or false, not number 1" },
    {
      name: "a target's expectedSha256 as a Map",
      call: (t) => applyFleet(t.map((x, i) => (i === 1 ? { ...x, expectedSha256: new Map([["app.conf", "0".repeat(64)]]) } as unknown as FleetTarget : x)), { patch: PATCH }),
      says: 'applyFleet target "h02" field `expectedSha256` must be a plain object of path → SHA-256 strings',
    },
    {
      name: "a target's requireShaForDelete as a string",
      call: (t) => applyFleet(t.map((x, i) => (i === 2 ? { ...x, options: { requireShaForDelete: "yes" } } as unknown as FleetTarget : x)), { patch: PATCH }),
      says: 'applyFleet target "h03" options field `requireShaForDelete` must be true or false',
    },
  ];
  for (const c of strange) {
    test(`a field the fleet does not read refuses the call before any host starts (invalid_request): ${c.name}`, async () => {
      const h = hosts(3);
      const meter = new FleetMeter();
      const report = await c.call(lazyTargets(h, meter));
      expect(report.ok).toBe(false);
      expect(report.refused?.code).toBe("invalid_request");
      expect(report.refused?.message).toContain(c.says);
      expect(Object.values(states(report))).toEqual(["not_started", "not_started", "not_started"]);
      expect(meter.opened).toBe(0);
      expect(report.summary.firstFailure).toEqual({ host: null, code: "invalid_request", message: report.refused!.message });
      expect(report.summary.nextStep).toBe("Fix what the failure names and call again; no host was contacted.");
      for (const name of h.names) expect(h.read(name)).toBe(BEFORE);
    });
  }

  test("reconcileFleet refuses an option it does not read: every unknown host stays unsettled, none contacted", async () => {
    const h = hosts(2);
    const report = await applyFleet(lazyTargets(h, new FleetMeter(), (name, shell) => (name === "h02" ? new CommitKiller(shell, "done") : shell)), { patch: PATCH }, { canary: 0, maxFailures: 1 });
    const meter = new FleetMeter();
    const settled = await reconcileFleet(report, lazyTargets(h, meter), { concurency: 2 } as never);
    expect(settled.hosts.map((x) => [x.name, x.state, x.report.ok ? "" : x.report.errors[0]!.code])).toEqual([["h02", "unsettled", "invalid_request"]]);
    expect(meter.opened).toBe(0);
    expect((await reconcileFleet(report, lazyTargets(h, meter))).hosts.map((x) => x.state)).toEqual(["applied"]);
  });

  const misuse: { name: string; call: () => Promise<unknown>; message: RegExp }[] = [
    { name: "no targets", call: () => applyFleet([], { patch: PATCH }), message: /non-empty array/ },
    { name: "two targets with one name", call: () => applyFleet([{ name: "a", root: "/x", shell: new LocalShell() }, { name: "a", root: "/y", shell: new LocalShell() }], { patch: PATCH }), message: /named "a"/ },
    { name: "neither shell nor connect", call: () => applyFleet([{ name: "a", root: "/x" } as FleetTarget], { patch: PATCH }), message: /exactly one of shell and connect/ },
    { name: "a root in the request", call: () => applyFleet([{ name: "a", root: "/x", shell: new LocalShell() }], { patch: PATCH, root: "/x" } as never), message: /has no root/ },
    { name: "concurrency 0", call: () => applyFleet([{ name: "a", root: "/x", shell: new LocalShell() }], { patch: PATCH }, { concurrency: 0 }), message: /concurrency/ },
    { name: "a canary that is no target", call: () => applyFleet([{ name: "a", root: "/x", shell: new LocalShell() }], { patch: PATCH }, { canary: ["b"] }), message: /"b" is not the name of a target/ },
  ];
  for (const c of misuse) {
    test(`programmer error, thrown before anything starts: ${c.name}`, async () => {
      await expect(c.call()).rejects.toThrow(c.message);
    });
  }
});
