/**
 * `bun examples/apply.ts --hosts …` as a real process: local directories
 * standing in for hosts (text and --json reports, progress on stderr, dry
 * run → real run with --host-expect, usage errors, an unknown outcome
 * reconciled at once and later from the saved report), and SSH hosts on a
 * real sshd.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chownSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { applyFleet, applyPatch, LocalShell } from "../../mod.ts";
import { wireFleetReport } from "../../examples/wire/fleet.ts";
import { HookedShell } from "../support/local_trees.ts";
import { sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd } from "../support/sshd.ts";
import { AFTER, BEFORE, CommitKiller, DRIFTED, PATCH, sha } from "../fleet/helpers.ts";
import { removeTemps, runApply, tempDir } from "./run_cli.ts";

afterAll(removeTemps, 30_000);

/** `n` host directories `a`, `b`, … with app.conf; `drifted` ones hold another version. */
function hostDirs(n: number, drifted: string[] = []): { names: string[]; dir: (name: string) => string; flag: string; read: (name: string) => string } {
  const base = tempDir("sap-cli-fleet-");
  const names = Array.from({ length: n }, (_, i) => String.fromCharCode(97 + i));
  for (const name of names) {
    spawnSync("mkdir", [join(base, name)]);
    writeFileSync(join(base, name, "app.conf"), drifted.includes(name) ? DRIFTED : BEFORE);
  }
  return {
    names,
    dir: (name) => join(base, name),
    flag: names.map((name) => `${name}=${join(base, name)}`).join(","),
    read: (name) => readFileSync(join(base, name, "app.conf"), "utf8"),
  };
}

describe("apply.ts --hosts over local directories", () => {
  test("a drifted host in the middle (defaults: canary 1, max-failures 0): exit 1, a progress line per host on stderr, the report and the re-run command on stdout", async () => {
    const h = hostDirs(5, ["c"]);
    const run = await runApply(["--hosts", h.flag, "--concurrency", "1"], PATCH);
    expect(run.code).toBe(1);
    expect(h.names.map(h.read)).toEqual([AFTER, AFTER, DRIFTED, BEFORE, BEFORE]);
    const progress = run.stderr.trimEnd().split("\n");
    expect(progress[0]).toMatch(/^\[1\/5\] a {2}applied {2}\d+ ms$/);
    expect(progress[1]).toMatch(/^\[2\/5\] b {2}applied/);
    expect(progress[2]).toMatch(/^\[3\/5\] c {2}FAILED {2}\d+ ms {2}context_mismatch app\.conf$/);
    expect(progress[3]).toBe("stopping: 1 host(s) failed (more than --max-failures); no new host starts");
    expect(progress).toHaveLength(4);
    expect(run.stdout).toContain("  c  failed  context_mismatch\n");
    expect(run.stdout).toContain("  d  not_started\n");
    expect(run.stdout).toContain("On c:\n[1] context_mismatch · app.conf · chunk 1");
    expect(run.stdout).toContain(`5 hosts: 2 applied, 1 failed, 2 not_started. Stopped after c: 1 host failed, more than allowed; the hosts that were running finished. Next step: Fix the cause of the first failure (on c), then run it again with --hosts c=${h.dir("c")},d=${h.dir("d")},e=${h.dir("e")}.`);
  }, 30_000);

  test("--json: the fleet report in snake_case, messages in CLI words; the re-run after fixing the cause skips the hosts already done", async () => {
    const h = hostDirs(4, ["b"]);
    const run = await runApply(["--hosts", h.flag, "--json", "--canary", "0", "--concurrency", "1"], PATCH);
    expect(run.code).toBe(1);
    const out = JSON.parse(run.stdout);
    expect(out.dry_run).toBe(false);
    expect(out.hosts.map((x: { name: string; state: string }) => [x.name, x.state])).toEqual([["a", "applied"], ["b", "failed"], ["c", "not_started"], ["d", "not_started"]]);
    expect(out.stopped).toEqual({ reason: "max_failures", after: "b", failures: 1 });
    expect(out.summary.first_failure.code).toBe("context_mismatch");
    expect(out.summary.first_failure.message).toBe(out.hosts[1].error.message);
    expect(out.summary.rerun).toEqual(["b", "c", "d"]);
    expect(out.summary.next_step).toContain(`run it again with --hosts b=${h.dir("b")},c=`);
    expect(out.hosts[0].report.files[0].new_sha256).toBe(sha(AFTER));

    writeFileSync(join(h.dir("b"), "app.conf"), BEFORE);
    const again = await runApply(["--hosts", h.flag, "--json"], PATCH);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).hosts.map((x: { state: string }) => x.state)).toEqual(["skipped", "applied", "applied", "applied"]);
    expect(h.names.map(h.read)).toEqual([AFTER, AFTER, AFTER, AFTER]);
  }, 30_000);

  test("--dry-run prints the --host-expect flags of the versions planned on; the real run with them applies, and refuses a host changed in between", async () => {
    const h = hostDirs(3);
    const dry = await runApply(["--hosts", h.flag, "--dry-run"], PATCH);
    expect(dry.code).toBe(0);
    expect(h.names.map(h.read)).toEqual([BEFORE, BEFORE, BEFORE]);
    const flags = /--host-expect .*$/m.exec(dry.stdout)![0].split(" ");
    expect(flags).toEqual(["--host-expect", `a=app.conf=${sha(BEFORE)}`, "--host-expect", `b=app.conf=${sha(BEFORE)}`, "--host-expect", `c=app.conf=${sha(BEFORE)}`]);
    writeFileSync(join(h.dir("c"), "app.conf"), BEFORE.replace("listen 80", "listen 80 "));
    const real = await runApply(["--hosts", h.flag, "--max-failures", "1", ...flags], PATCH);
    expect(real.code).toBe(1);
    expect(real.stdout).toContain("  c  failed  precondition_failed");
    expect([h.read("a"), h.read("b")]).toEqual([AFTER, AFTER]);
  }, 30_000);

  const usage: { name: string; args: string[]; says: string }[] = [
    { name: "--canary without --hosts", args: ["--root", "/tmp", "--canary", "2"], says: "--canary needs --hosts" },
    { name: "--hosts with --ssh", args: ["--hosts", "a=/tmp", "--ssh", "web1"], says: "--hosts and --ssh do not go together" },
    { name: "a host listed twice", args: ["--hosts", "a=/tmp,a=/var"], says: '"a" is listed twice' },
    { name: "an SSH host without --root", args: ["--hosts", "web1"], says: "give --root DIR" },
    { name: "a bad --host-expect", args: ["--hosts", "a=/tmp", "--host-expect", "a=app.conf=123"], says: "expected NAME=PATH=SHA256" },
    { name: "--host-expect of another host", args: ["--hosts", "a=/tmp", "--host-expect", `b=app.conf=${"0".repeat(64)}`], says: '"b" is not one of --hosts' },
    { name: "--concurrency 0", args: ["--hosts", "a=/tmp", "--concurrency", "0"], says: "--concurrency must be a whole number ≥ 1" },
    { name: "--identity with only local hosts", args: ["--hosts", "a=/tmp", "--identity", "/etc/hostname"], says: "--identity needs --ssh" },
  ];
  for (const c of usage) {
    test(`usage error (exit 2, nothing contacted): ${c.name}`, async () => {
      const run = await runApply(c.args, PATCH);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain(c.says);
    });
  }

  // Fault injected: another commit holds a's lock (paused at its `locked`
  // hook) while the fleet's commit on a waits for it and is stopped by
  // --timeout-ms. That is before its go-ahead (docs/guarantees.md, "A cancel
  // means what it says"), so the host is a plain failure: timeout, nothing
  // applied, nothing of its own left, no reconcile asked for.
  test("a host's commit stopped by --timeout-ms while another writer holds its lock: failed with timeout, nothing applied, no reconcile needed", async () => {
    // One host only: --timeout-ms bounds every host's programs, and on a loaded
    // machine a healthy host's commit could come near it too.
    const h = hostDirs(1);
    const other = PATCH.replace("+workers 8", "+workers 16");
    const holder = applyPatch(new HookedShell(new LocalShell(), `case "$1" in locked) sleep 4 ;; esac`), { root: h.dir("a"), patch: other });
    const deadline = Date.now() + 3000;
    while (!readdirSync(h.dir("a")).some((name) => name.startsWith(".sap-lock-")) && Date.now() < deadline) await Bun.sleep(10);

    const run = await runApply(["--hosts", h.flag, "--json", "--timeout-ms", "800"], PATCH);
    expect(run.code).toBe(1);
    const out = JSON.parse(run.stdout);
    expect(out.hosts.map((x: { state: string }) => x.state)).toEqual(["failed"]);
    expect(out.hosts[0].report.errors[0].code).toBe("timeout");
    expect(out.hosts[0].report.errors[0].message).toContain("nothing was applied");
    expect(out.reconciled ?? []).toEqual([]);
    expect(run.stderr).not.toContain("reconciling");

    expect((await holder).ok).toBe(true);
    expect(h.read("a")).toBe(BEFORE.replace("workers 2", "workers 16"));
    expect(readdirSync(h.dir("a")).filter((name) => name.startsWith(".sap-"))).toEqual([]);
  }, 30_000);

  // Fault injected: the host's commit program is killed (kill -9) right after
  // its commit point, in this test's own applyFleet (CommitKiller), so the
  // saved --json report holds a host whose outcome is unknown; --reconcile
  // with that file then settles it: applied.
  test("--reconcile with a saved report whose host's outcome is unknown settles it: applied, nothing left", async () => {
    const h = hostDirs(1);
    const report = await applyFleet(
      [{ name: "a", root: h.dir("a"), shell: new CommitKiller(new LocalShell(), "done") }],
      { patch: PATCH },
      { canary: 0 },
    );
    expect(report.hosts.map((x) => x.state)).toEqual(["outcome_unknown"]);
    const operationId = report.hosts[0]!.state === "outcome_unknown" ? report.hosts[0]!.operationId : "";
    const saved = join(tempDir(), "fleet.json");
    writeFileSync(saved, JSON.stringify(wireFleetReport(report)));
    const later = await runApply(["--hosts", h.flag, "--reconcile", saved]);
    expect(later.code).toBe(0);
    expect(later.stdout).toContain(`Reconciled operation ${operationId} in a ${h.dir("a")}: the patch IS applied`);
    expect(h.read("a")).toBe(AFTER);
    expect(readdirSync(h.dir("a")).filter((name) => name.startsWith(".sap-"))).toEqual([]);
  }, 30_000);

  test("--reconcile with a file that is no fleet report: usage error", async () => {
    const h = hostDirs(1);
    const file = join(tempDir(), "x.json");
    writeFileSync(file, JSON.stringify({ ok: false }));
    const run = await runApply(["--hosts", h.flag, "--reconcile", file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("no fleet report in it");
  });
});

const sshReady = sshdReady("CLI fleet over ssh (test/cli/fleet_cli.test.ts)");

describe.skipIf(!sshReady)("apply.ts --hosts against a real sshd", () => {
  let sshd: Sshd;
  let knownHosts: string;
  beforeAll(async () => {
    sshd = await startSshd();
    knownHosts = writeKnownHosts(tempDir(), [sshd.hostKeyLine]);
  }, 30_000);
  afterAll(async () => {
    await sshd?.stop();
  }, 30_000);

  test("four SSH roots as hosts (NAME=ssh://…/path) and one local directory: all applied", async () => {
    const h = hostDirs(5);
    const uid = Number(spawnSync("id", ["-u", sshd.user], { encoding: "utf8" }).stdout.trim());
    const gid = Number(spawnSync("id", ["-g", sshd.user], { encoding: "utf8" }).stdout.trim());
    spawnSync("chmod", ["755", join(h.dir("a"), "..")]);
    const entries = h.names.map((name) => {
      if (name === "e") return `${name}=${h.dir(name)}`;
      if (process.getuid?.() === 0) for (const p of [h.dir(name), join(h.dir(name), "app.conf")]) chownSync(p, uid, gid);
      return `${name}=ssh://${sshd.user}@127.0.0.1:${sshd.port}${h.dir(name)}`;
    });
    const run = await runApply(["--hosts", entries.join(","), "--identity", sshd.userKeyPath, "--known-hosts", knownHosts, "--concurrency", "2", "--json"], PATCH);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).hosts.map((x: { state: string }) => x.state)).toEqual(["applied", "applied", "applied", "applied", "applied"]);
    expect(h.names.map(h.read)).toEqual(Array(5).fill(AFTER));
  }, 30_000);
});
