/**
 * `bun examples/apply.ts` as a real process on temp copies of examples/site:
 * local applies (text and --json), dry runs, preconditions, usage errors,
 * an outcome_unknown (exit 3), and over a real sshd with and without sudo.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { applyPatch, LocalShell, sha256Hex } from "../../mod.ts";
import { HookedShell } from "../support/local_trees.ts";
import { ensureTestUsers, sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import { startTcpProxy } from "../support/tcp_proxy.ts";
import type { Sshd } from "../support/sshd.ts";
import { removeTemps, runApply, siteCopy, tempDir, treeBytes } from "./run_cli.ts";

afterAll(removeTemps, 30_000); // many temp trees; slow to remove on a loaded machine

const CONF_PATCH = [
  "*** Begin Patch",
  "*** Update File: site.conf",
  "@@ server {",
  "     listen 80;",
  "-    server_name harbour.example;",
  "+    server_name harbour.example www.harbour.example;",
  "+    gzip on;",
  "*** End Patch",
].join("\n");
const CONF_AFTER = "server {\r\n    listen 80;\r\n    server_name harbour.example www.harbour.example;\r\n    gzip on;\r\n" +
  "    root /srv/site;\r\n    index index.html;\r\n}\r\n";

const AMBIGUOUS_PATCH = [
  "*** Begin Patch",
  "*** Update File: assets/menu.js",
  "@@",
  "     const li = document.createElement(\"li\");",
  "-    li.textContent = item.name + \" — \" + formatPrice(item.price);",
  "+    li.textContent = \"★ \" + item.name + \" — \" + formatPrice(item.price);",
  "*** End Patch",
].join("\n");

const confSha = (root: string): string => sha256Hex(readFileSync(join(root, "site.conf")));

describe("apply.ts on this machine (LocalShell)", () => {
  test("applies a patch: human summary with op, path, SHA prefixes, bytes, metadata and the diff; CRLF kept", async () => {
    const root = siteCopy();
    const before = confSha(root);
    const run = await runApply(["--root", root], CONF_PATCH);
    expect(run.code).toBe(0);
    expect(readFileSync(join(root, "site.conf"), "utf8")).toBe(CONF_AFTER);
    const after = confSha(root);
    expect(run.stdout).toContain(`Applied 1 file in local ${root}`);
    expect(run.stdout).toContain(`update  site.conf  ${before.slice(0, 8)} → ${after.slice(0, 8)}  ${CONF_AFTER.length} bytes  mode+owner kept`);
    expect(run.stdout).toContain("+    gzip on;");
    expect(run.stderr).toBe("");
  });

  test("--json prints exactly the ApplyReport: parseable, SHAs matching the disk, nothing else on stdout", async () => {
    const root = siteCopy();
    const before = confSha(root);
    const run = await runApply(["--root", root, "--json"], CONF_PATCH);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ ok: true, dry_run: false, elevated: false, atomicity: "batch_preflight_per_file_commit" });
    expect(report.files).toHaveLength(1);
    expect(report.files[0]).toMatchObject({
      op: "update",
      path: "site.conf",
      previous_sha256: before,
      new_sha256: confSha(root),
      metadata_preserved: { mode: true, owner: true },
    });
    expect(report.operation_id).toMatch(/^[0-9a-f]{16}$/);
  });

  test("--cache-dir: the next run on a file this one wrote has the host prove its hash instead of sending it; --compress is checked", async () => {
    const root = siteCopy();
    const cacheDir = join(tempDir(), "cache");
    const first = await runApply(["--root", root, "--json", "--cache-dir", cacheDir], CONF_PATCH);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout).files[0].snapshot).toBe("downloaded");
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    const undo = CONF_PATCH.replace("-    server_name harbour.example;\n+    server_name harbour.example www.harbour.example;\n+    gzip on;", "-    server_name harbour.example www.harbour.example;\n-    gzip on;\n+    server_name harbour.example;");
    const second = await runApply(["--root", root, "--json", "--cache-dir", cacheDir, "--compress", "on"], undo);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout).files[0].snapshot).toBe("cached");
    const bad = await runApply(["--root", root, "--compress", "maybe"], CONF_PATCH);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--compress must be auto, on or off");
  });

  test("--patch FILE reads the patch from a file instead of stdin", async () => {
    const root = siteCopy();
    const file = join(tempDir(), "p.patch");
    writeFileSync(file, CONF_PATCH);
    const run = await runApply(["--root", root, "--patch", file]);
    expect(run.code).toBe(0);
    expect(readFileSync(join(root, "site.conf"), "utf8")).toBe(CONF_AFTER);
  });

  test("--dry-run shows the plan and changes nothing", async () => {
    const root = siteCopy();
    const tree = treeBytes(root);
    const run = await runApply(["--root", root, "--dry-run"], CONF_PATCH);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Dry run: would change 1 file");
    expect(run.stdout).toContain("+    gzip on;");
    expect(treeBytes(root)).toEqual(tree);
    const json = JSON.parse((await runApply(["--root", root, "--dry-run", "--json"], CONF_PATCH)).stdout);
    expect(json).toMatchObject({ ok: true, dry_run: true });
    expect(json.files[0].bytes_written).toBe(0);
    expect(treeBytes(root)).toEqual(tree);
  });

  test("--expect with the file's SHA applies; with another SHA exit 1 precondition_failed and nothing changed", async () => {
    const root = siteCopy();
    const tree = treeBytes(root);
    const wrong = "0".repeat(63) + "1";
    const refused = await runApply(["--root", root, "--json", "--expect", `site.conf=${wrong}`], CONF_PATCH);
    expect(refused.code).toBe(1);
    const report = JSON.parse(refused.stdout);
    expect(report.ok).toBe(false);
    expect(report.errors[0]).toMatchObject({ code: "precondition_failed", path: "site.conf" });
    expect(treeBytes(root)).toEqual(tree);

    const human = await runApply(["--root", root, "--expect", `site.conf=${wrong}`], CONF_PATCH);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain("Refused: nothing was changed");
    expect(human.stdout).toContain("[1] precondition_failed · site.conf");

    const accepted = await runApply(["--root", root, "--expect", `site.conf=${confSha(root)}`], CONF_PATCH);
    expect(accepted.code).toBe(0);
    expect(readFileSync(join(root, "site.conf"), "utf8")).toBe(CONF_AFTER);
  });

  test("an ambiguous chunk: exit 1, the recovery message lists N:hh candidates, nothing changed", async () => {
    const root = siteCopy();
    const tree = treeBytes(root);
    const run = await runApply(["--root", root], AMBIGUOUS_PATCH);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("[1] ambiguous_hunk · assets/menu.js · chunk 1");
    expect(run.stdout).toMatch(/15:[0-9a-f]{2} /);
    expect(run.stdout).toMatch(/24:[0-9a-f]{2} /);
    expect(treeBytes(root)).toEqual(tree);
  });

  test("--help prints the usage with the exit codes, exit 0", async () => {
    const run = await runApply(["--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Usage:");
    expect(run.stdout).toContain("Exit codes:");
    expect(run.stdout).toContain("--sudo-password-env VAR");
  });

  // Every usage rule is tested in-process (args.test.ts); these prove the
  // end-to-end contract: exit 2, empty stdout, the reason on stderr.
  const usageCases: { name: string; args: (root: string) => string[]; stderr: string }[] = [
    { name: "no --root", args: () => [], stderr: "--root DIR is required" },
    { name: "an unknown flag", args: (r) => ["--root", r, "--bogus"], stderr: "--bogus" },
    // The misspelt --dry-run of issue 26 must not run the real change: refused, the file untouched.
    { name: "--dryrun (misspelt --dry-run)", args: (r) => ["--root", r, "--dryrun"], stderr: "unknown flag --dryrun: did you mean --dry-run? nothing was applied" },
    { name: "--sudo without --ssh", args: (r) => ["--root", r, "--sudo"], stderr: "--sudo needs --ssh" },
    { name: "a missing --patch file", args: (r) => ["--root", r, "--patch", join(r, "nope.patch")], stderr: "no such file" },
  ];
  for (const c of usageCases) {
    test(`usage error (exit 2, nothing on stdout, nothing changed): ${c.name}`, async () => {
      const root = siteCopy();
      const tree = treeBytes(root);
      const run = await runApply(c.args(root), CONF_PATCH);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain(c.stderr);
      expect(run.stderr).toContain("--help");
      expect(treeBytes(root)).toEqual(tree);
    });
  }

  // Fault injected: another commit holds site.conf's lock (paused at its
  // `locked` hook) while the CLI's own commit waits for it and is stopped by
  // --timeout-ms. It had not had its go-ahead (lib/remote/programs/commit_gate.ts),
  // so the CLI knows nothing was applied, and the program removed what it made.
  test("a commit stopped by --timeout-ms while it waits for a lock (hooked commit holds it): timeout, nothing applied, nothing of its own left", async () => {
    const root = siteCopy();
    const holderPatch = CONF_PATCH.replace("+    gzip on;", "+    gzip off;");
    const holder = applyPatch(new HookedShell(new LocalShell(), `case "$1" in locked) sleep 4 ;; esac`), { root, patch: holderPatch });
    const deadline = Date.now() + 3000;
    while (!readdirSync(root).some((name) => name.startsWith(".sap-lock-")) && Date.now() < deadline) await Bun.sleep(10);

    const run = await runApply(["--root", root, "--timeout-ms", "800"], CONF_PATCH);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("timeout");
    expect(run.stdout).toContain("nothing was applied");
    expect(run.stdout).not.toContain("OUTCOME UNKNOWN");
    const opid = /operation ([0-9a-f]{16})/.exec(run.stdout)![1]!;
    // the CLI's commit removed its own stages and locks; only the holder's remain
    expect(readdirSync(root).some((name) => name.startsWith(`.sap-${opid}`) || name === `.sap-lock-op-${opid}`)).toBe(false);

    expect((await holder).ok).toBe(true);
    expect(readFileSync(join(root, "site.conf"), "utf8")).toBe(CONF_AFTER.replace("gzip on", "gzip off"));
    expect(readdirSync(root).filter((name) => name.startsWith(".sap-"))).toEqual([]);
  }, 20000);

  test("--reconcile with a report that carries no ticket, or with patch flags: usage error (exit 2), nothing contacted", async () => {
    const root = siteCopy();
    const file = join(tempDir(), "report.json");
    writeFileSync(file, JSON.stringify({ ok: false, operation_id: "op1", errors: [{ code: "conflict", message: "m", retryable: true }] }));
    const noTicket = await runApply(["--root", root, "--reconcile", file]);
    expect(noTicket.code).toBe(2);
    expect(noTicket.stderr).toContain("neither a reconcile ticket nor a report");
    const withPatch = await runApply(["--root", root, "--reconcile", file, "--dry-run"]);
    expect(withPatch.code).toBe(2);
    expect(withPatch.stderr).toContain("--dry-run cannot be combined with --reconcile");
  });
});

const sshReady = sshdReady("CLI over ssh (test/cli/apply_cli.test.ts)");

describe.skipIf(!sshReady)("apply.ts --ssh against a real sshd", () => {
  let sshd: Sshd;
  let knownHosts: string;
  const isRoot = process.getuid?.() === 0;

  /** A site copy the login user owns (as root the login user is the non-root test user). */
  function ownedSite(user: string): string {
    const root = siteCopy();
    if (isRoot) {
      const uid = Number(spawnSync("id", ["-u", user], { encoding: "utf8" }).stdout.trim());
      const gid = Number(spawnSync("id", ["-g", user], { encoding: "utf8" }).stdout.trim());
      for (const path of ["", ...readdirSync(root, { recursive: true, encoding: "utf8" })]) chownSync(join(root, path), uid, gid);
    }
    return root;
  }
  const sshArgs = (user: string, hosts: string): string[] => [
    "--ssh", `${user}@127.0.0.1:${sshd.port}`, "--identity", sshd.userKeyPath, "--known-hosts", hosts,
  ];

  // Starting and stopping an sshd can take longer than bun's 5 s hook default on a loaded machine.
  beforeAll(async () => {
    sshd = await startSshd();
    knownHosts = writeKnownHosts(tempDir(), [sshd.hostKeyLine]);
  }, 30_000);
  afterAll(async () => {
    await sshd?.stop();
  }, 30_000);

  test("applies a patch on the test sshd (issue 4 acceptance)", async () => {
    const root = ownedSite(sshd.user);
    const run = await runApply(["--root", root, ...sshArgs(sshd.user, knownHosts)], CONF_PATCH);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Applied 1 file in ${sshd.user}@127.0.0.1:${sshd.port} ${root}`);
    expect(readFileSync(join(root, "site.conf"), "utf8")).toBe(CONF_AFTER);
  }, 20000);

  // Fault injected: the TCP connection is cut by a proxy in the middle of
  // the commit's content upload, after the commit program started.
  test("a connection cut during the commit's upload (TCP proxy), before its go-ahead: exit 1, nothing applied, and the host program removes what it made", async () => {
    const root = ownedSite(sshd.user);
    const before = treeBytes(root);
    const bigLines = Array.from({ length: 100_000 }, (_, i) => `+line ${i} of a file big enough to be cut mid-upload`);
    const patch = CONF_PATCH.replace("*** End Patch", ["*** Add File: big.txt", ...bigLines, "*** End Patch"].join("\n"));
    const proxy = await startTcpProxy({ targetPort: sshd.port });
    try {
      const line = sshd.hostKeyLine.replace(`]:${sshd.port} `, `]:${proxy.port} `);
      const args = [
        "--root", root, "--json",
        "--ssh", `${sshd.user}@127.0.0.1:${proxy.port}`, "--identity", sshd.userKeyPath, "--known-hosts", writeKnownHosts(tempDir(), [line]),
      ];
      // A dry run measures what one connection sends before the commit (handshake, snapshot).
      expect((await runApply([...args, "--dry-run"], patch)).code).toBe(0);
      const beforeCommit = proxy.bytesUp;
      // The commit program (~50 KB) goes first, then ~5 MB of content: cut 1 MB into it.
      proxy.setCutAfterBytes({ up: beforeCommit + 1_000_000 });
      const running = runApply(args, patch);
      while (proxy.accepted < 2) await Bun.sleep(5);
      proxy.setCutAfterBytes(undefined); // the reconnect for reconcile goes through
      const run = await running;
      const out = JSON.parse(run.stdout);
      // cut before the commit's go-ahead: nothing can have been applied, and the CLI checks it
      expect(out.errors[0].code).toBe("remote_error");
      expect(out.errors[0].message).toContain("nothing was applied");
      expect(out.reconciled).toBeUndefined(); // nothing to settle: no rename happens without the go-ahead
      expect(run.code).toBe(1);
      // the host program saw its stdin end and removed its stages and locks
      const until = Date.now() + 5000;
      while (JSON.stringify(treeBytes(root)) !== JSON.stringify(before) && Date.now() < until) await Bun.sleep(50);
      expect(treeBytes(root)).toEqual(before);
    } finally {
      await proxy.close();
    }
  }, 30000);

  test("--ssh with an ssh_config alias (--ssh-config, like ssh -F): HostName, Port, User, IdentityFile and UserKnownHostsFile come from the config", async () => {
    const root = ownedSite(sshd.user);
    // ~/.ssh/config is the passwd home's (as for ssh), so the test names its file instead of faking $HOME.
    const configFile = join(tempDir("sap-cli-alias-"), "config");
    writeFileSync(configFile, [
      "Host harbour-test",
      "  HostName 127.0.0.1",
      `  Port ${sshd.port}`,
      `  User ${sshd.user}`,
      `  IdentityFile ${sshd.userKeyPath}`,
      `  UserKnownHostsFile ${knownHosts}`,
      "",
    ].join("\n"));
    const run = await runApply(["--root", root, "--ssh", "harbour-test", "--ssh-config", configFile], CONF_PATCH);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Applied 1 file in ${sshd.user}@127.0.0.1:${sshd.port} ${root}`);
    expect(readFileSync(join(root, "site.conf"), "utf8")).toBe(CONF_AFTER);
  }, 20000);

  test("an unknown host key: exit 1, host_key_unknown as an ApplyReport with the line to add, nothing changed", async () => {
    const root = ownedSite(sshd.user);
    const tree = treeBytes(root);
    const empty = writeKnownHosts(tempDir(), []);
    const run = await runApply(["--root", root, "--json", ...sshArgs(sshd.user, empty)], CONF_PATCH);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ ok: false, files: [], dry_run: false });
    expect(report.errors[0].code).toBe("host_key_unknown");
    expect(report.errors[0].fingerprint).toBe(sshd.hostKeyFingerprint);
    // In the CLI's words (issue 15): the flag, not the library option.
    expect(report.errors[0].message).toContain("or connect once with --accept-new-host-key to trust it on first use");
    expect(report.errors[0].hints).toEqual([{ kind: "option", option: "hostKeyPolicy", value: "accept-new", says: 'hostKeyPolicy: "accept-new"' }]);
    const human = await runApply(["--root", root, ...sshArgs(sshd.user, empty)], CONF_PATCH);
    expect(human.stdout).toContain("--accept-new-host-key");
    expect(human.stdout).not.toContain("hostKeyPolicy");
    expect(treeBytes(root)).toEqual(tree);
  }, 20000);

  test("--accept-new-host-key records the key, and the next run trusts it under strict checking", async () => {
    const root = ownedSite(sshd.user);
    const hosts = writeKnownHosts(tempDir(), []);
    const first = await runApply(["--root", root, "--dry-run", "--accept-new-host-key", ...sshArgs(sshd.user, hosts)], CONF_PATCH);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain("known_hosts: recorded a new host key");
    expect(readFileSync(hosts, "utf8").trim()).not.toBe("");
    const second = await runApply(["--root", root, ...sshArgs(sshd.user, hosts)], CONF_PATCH);
    expect(second.code).toBe(0);
    expect(readFileSync(join(root, "site.conf"), "utf8")).toBe(CONF_AFTER);
  }, 20000);

  // Registered only as root (the harness needs root to create the sudo
  // users); CI runs as root, and a skip would fail its no-skip rule.
  if (isRoot) describe("with sudo (as the harness's non-root users)", () => {
    /** A root-owned 0640 site.conf (group daemon) in a root-owned dir the user cannot write. */
    function rootOwnedSite(): { root: string; file: string } {
      const root = siteCopy();
      chmodSync(root, 0o755);
      const file = join(root, "site.conf");
      chownSync(file, 0, 1);
      chmodSync(file, 0o640);
      return { root, file };
    }

    test("without --sudo the non-root user is refused (exit 1) and the file is untouched", async () => {
      const { root, file } = rootOwnedSite();
      const before = readFileSync(file);
      const run = await runApply(["--root", root, "--json", ...sshArgs(ensureTestUsers().nopasswdUser, knownHosts)], CONF_PATCH);
      expect(run.code).toBe(1);
      expect(JSON.parse(run.stdout).errors[0].code).toBe("permission_denied");
      expect(readFileSync(file)).toEqual(before);
    }, 20000);

    test("--sudo (NOPASSWD) edits the root-owned 0640 file keeping owner, group and mode; the report says elevated", async () => {
      const { root, file } = rootOwnedSite();
      const run = await runApply(["--root", root, "--json", "--sudo", ...sshArgs(ensureTestUsers().nopasswdUser, knownHosts)], CONF_PATCH);
      expect(run.code).toBe(0);
      const report = JSON.parse(run.stdout);
      expect(report.elevated).toBe(true);
      expect(report.files[0].metadata_preserved).toEqual({ mode: true, owner: true });
      expect(readFileSync(file, "utf8")).toBe(CONF_AFTER);
      const st = statSync(file);
      expect([st.uid, st.gid, st.mode & 0o7777]).toEqual([0, 1, 0o640]);
    }, 20000);

    test("--sudo-password-env reads the sudo password from the environment (never argv) and applies", async () => {
      const { root, file } = rootOwnedSite();
      const users = ensureTestUsers();
      const run = await runApply(
        ["--root", root, "--sudo-password-env", "SAP_TEST_SUDO_PASSWORD", ...sshArgs(users.passwordUser, knownHosts)],
        CONF_PATCH,
        { SAP_TEST_SUDO_PASSWORD: users.password },
      );
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("sudo");
      expect(run.stdout + run.stderr).not.toContain(users.password);
      expect(readFileSync(file, "utf8")).toBe(CONF_AFTER);
    }, 20000);
  });
});

