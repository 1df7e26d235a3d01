import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectSsh } from "../../lib/ssh/shell.ts";
import { sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd } from "../support/sshd.ts";
import { failureOf, logSince, sshOptions, text } from "./helpers.ts";

const ready = sshdReady("host keys (test/ssh/host_keys_sshd.test.ts)");

describe.skipIf(!ready)("host keys against a real sshd", () => {
  let sshd: Sshd;
  let work: string;
  let ecdsaLine: string;
  let otherKeyLine: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "sap-hk-"));
    // A second host key (ECDSA) for the "offer only known types" test, and an
    // unrelated key to stand in for a changed one.
    spawnSync("ssh-keygen", ["-q", "-t", "ecdsa", "-N", "", "-f", join(work, "host_ecdsa")]);
    spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(work, "other")]);
    sshd = await startSshd({ extraConfig: [`HostKey ${join(work, "host_ecdsa")}`] });
    const token = `[127.0.0.1]:${sshd.port}`;
    ecdsaLine = `${token} ${readFileSync(join(work, "host_ecdsa.pub"), "utf8").trim().split(/\s+/).slice(0, 2).join(" ")}`;
    otherKeyLine = `${token} ${readFileSync(join(work, "other.pub"), "utf8").trim().split(/\s+/).slice(0, 2).join(" ")}`;
  }, 30_000);
  afterAll(async () => {
    await sshd?.stop();
    rmSync(work, { recursive: true, force: true });
  }, 30_000);

  test("unknown host key: refused before authentication, with fingerprint and the line to add", async () => {
    const knownHosts = writeKnownHosts(work, [], "empty");
    const offset = sshd.readLog().length;
    const failed = await failureOf(connectSsh(sshOptions(sshd, knownHosts)));
    expect(failed.code).toBe("host_key_unknown");
    expect(failed.fingerprint).toBe(sshd.hostKeyFingerprint);
    expect(failed.knownHostsLine).toBe(sshd.hostKeyLine);
    expect(failed.message).toContain(sshd.hostKeyLine);
    expect(failed.message).toContain("accept-new");
    const log = await logSince(sshd, offset);
    expect(log).toContain("Connection from 127.0.0.1");
    expect(log).not.toContain("userauth-request");
    expect(log).not.toMatch(/Accepted|Failed publickey|Postponed/);
    expect(readFileSync(knownHosts, "utf8")).toBe("");
  }, 10000);

  /** The real client on the same known_hosts file, strict checking, no other known_hosts. */
  function realSshWith(knownHosts: string): number | null {
    return spawnSync("ssh", [
      "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o", `UserKnownHostsFile=${knownHosts}`,
      "-o", "GlobalKnownHostsFile=/dev/null", "-o", "HostKeyAlgorithms=ssh-ed25519", "-i", sshd.userKeyPath,
      "-p", String(sshd.port), `${sshd.user}@127.0.0.1`, "true",
    ], { timeout: 15_000, env: { PATH: process.env.PATH ?? "" } }).status;
  }

  // OpenSSH, checked with the real client: when nothing is known for [host]:port, a bare-host line with
  // the same key is accepted ("found matching key w/out port"); one with another key leaves it unknown;
  // any [host]:port line wins, even with another key. The library offers ssh-ed25519 first here too.
  const bareCases: [string, (bare: string, other: string) => string[], "ok" | "host_key_unknown" | "host_key_mismatch"][] = [
    ["a bare-host line with the server's key is accepted on a non-22 port", (bare) => [bare], "ok"],
    ["a bare-host line with another key: unknown, not a mismatch", (_bare, other) => [other], "host_key_unknown"],
    ["a [host]:port line with another key wins over a matching bare line: mismatch", (bare) => [otherKeyLine, bare], "host_key_mismatch"],
  ];
  for (const [name, lines, want] of bareCases) {
    test(`known_hosts without the port, as OpenSSH: ${name}`, async () => {
      const ed = sshd.hostKeyLine.split(" ").slice(1).join(" ");
      const bare = `127.0.0.1 ${ed}`;
      const otherBare = `127.0.0.1 ${otherKeyLine.split(" ").slice(1).join(" ")}`;
      const file = writeKnownHosts(work, lines(bare, otherBare), `bare-${want}-${lines.length}`);
      expect(realSshWith(file)).toBe(want === "ok" ? 0 : 255);
      if (want === "ok") {
        const shell = await connectSsh(sshOptions(sshd, file));
        expect(text((await shell.exec("echo ok")).stdout)).toBe("ok\n");
        await shell.close();
      } else {
        expect((await failureOf(connectSsh(sshOptions(sshd, file)))).code).toBe(want);
      }
    }, 20000);
  }

  test("UserKnownHostsFile none: no user file is trusted; GlobalKnownHostsFile is (OpenSSH alike)", async () => {
    const global = writeKnownHosts(work, [sshd.hostKeyLine], "global-only");
    const conf = (globalLine: string): string => {
      const path = join(work, `kh-none-${globalLine === "none" ? "none" : "file"}.conf`);
      writeFileSync(path, ["Host box", "  HostName 127.0.0.1", `  Port ${sshd.port}`, `  User ${sshd.user}`, `  IdentityFile ${sshd.userKeyPath}`,
        "  UserKnownHostsFile none", `  GlobalKnownHostsFile ${globalLine}`, "  HostKeyAlgorithms ssh-ed25519", ""].join("\n"));
      return path;
    };
    const real = (path: string): number | null =>
      spawnSync("ssh", ["-F", path, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "box", "true"], { timeout: 15_000, env: { PATH: process.env.PATH ?? "" } }).status;
    expect(real(conf(global))).toBe(0);
    const shell = await connectSsh({ host: "box", sshConfigFile: conf(global), agent: false });
    await shell.close();
    expect(real(conf("none"))).toBe(255);
    const failed = await failureOf(connectSsh({ host: "box", sshConfigFile: conf("none"), agent: false }));
    expect(failed.code).toBe("host_key_unknown");
    expect(failed.message).toContain("UserKnownHostsFile and GlobalKnownHostsFile are none");
    // accept-new cannot record a key when there is no user file.
    const accept = await failureOf(connectSsh({ host: "box", sshConfigFile: conf("none"), agent: false, hostKeyPolicy: "accept-new" }));
    expect(accept.code).toBe("host_key_unknown");
    expect(accept.message).toContain("UserKnownHostsFile is none");
  }, 30000);

  test("positive control: a known key connects and the log shows authentication", async () => {
    const offset = sshd.readLog().length;
    const shell = await connectSsh(sshOptions(sshd, writeKnownHosts(work, [sshd.hostKeyLine], "plain")));
    expect(text((await shell.exec("echo ok")).stdout)).toBe("ok\n");
    await shell.close();
    expect(await logSince(sshd, offset)).toContain("userauth-request");
  }, 10000);

  test("changed host key: host_key_mismatch naming the new fingerprint, before authentication", async () => {
    const offset = sshd.readLog().length;
    const failed = await failureOf(connectSsh(sshOptions(sshd, writeKnownHosts(work, [otherKeyLine], "changed"))));
    expect(failed.code).toBe("host_key_mismatch");
    expect(failed.fingerprint).toBe(sshd.hostKeyFingerprint);
    expect(failed.message).toContain("CHANGED");
    expect(failed.message).toContain(sshd.hostKeyLine);
    expect(failed.retryable).toBe(false);
    expect(await logSince(sshd, offset)).not.toContain("userauth-request");
  }, 10000);

  test("a hashed entry (ssh-keygen -H) is accepted", async () => {
    const knownHosts = writeKnownHosts(work, [sshd.hostKeyLine], "hashed");
    expect(spawnSync("ssh-keygen", ["-H", "-f", knownHosts]).status).toBe(0);
    expect(readFileSync(knownHosts, "utf8")).toStartWith("|1|");
    const shell = await connectSsh(sshOptions(sshd, knownHosts));
    expect((await shell.exec("true")).exitCode).toBe(0);
    await shell.close();
  }, 10000);

  test("accept-new appends one hashed line (creating the file 0600) that a strict connect then accepts", async () => {
    const knownHosts = join(work, "new-dir", "known_hosts");
    const first = await connectSsh(sshOptions(sshd, knownHosts, { hostKeyPolicy: "accept-new" }));
    await first.close();
    const written = readFileSync(knownHosts, "utf8");
    expect(written.trim().split("\n")).toHaveLength(1);
    expect(written).toStartWith("|1|");
    expect(written).not.toContain("127.0.0.1");
    expect(statSync(knownHosts).mode & 0o777).toBe(0o600);
    expect(first.addedHostKeys).toHaveLength(1);
    expect(first.addedHostKeys[0]!.fingerprint).toBe(sshd.hostKeyFingerprint);
    const second = await connectSsh(sshOptions(sshd, knownHosts));
    expect((await second.exec("true")).exitCode).toBe(0);
    expect(second.addedHostKeys).toHaveLength(0);
    await second.close();
    expect(readFileSync(knownHosts, "utf8")).toBe(written);
  }, 10000);

  test("accept-new never accepts a CHANGED key", async () => {
    const knownHosts = writeKnownHosts(work, [otherKeyLine], "changed-accept-new");
    const failed = await failureOf(connectSsh(sshOptions(sshd, knownHosts, { hostKeyPolicy: "accept-new" })));
    expect(failed.code).toBe("host_key_mismatch");
    expect(readFileSync(knownHosts, "utf8")).toBe(otherKeyLine + "\n");
  }, 10000);

  test("insecure-accept-any connects with a warning on the shell (and to onWarning, once) and writes nothing", async () => {
    const knownHosts = writeKnownHosts(work, [], "insecure");
    const handed: string[] = [];
    const shell = await connectSsh(sshOptions(sshd, knownHosts, { hostKeyPolicy: "insecure-accept-any", onWarning: (w) => handed.push(w.code) }));
    expect((await shell.exec("true")).exitCode).toBe(0);
    await shell.close();
    expect(shell.warnings.map((w) => w.code)).toEqual(["insecure_host_key"]);
    expect(handed).toEqual(["insecure_host_key"]);
    expect(shell.warnings[0]!.message).toContain(sshd.hostKeyFingerprint);
    expect(readFileSync(knownHosts, "utf8")).toBe("");
  }, 10000);

  test("@revoked refuses the key even though another line accepts it", async () => {
    const blob = sshd.hostKeyLine.split(" ").slice(1).join(" ");
    const knownHosts = writeKnownHosts(work, [sshd.hostKeyLine, `@revoked * ${blob}`], "revoked");
    const failed = await failureOf(connectSsh(sshOptions(sshd, knownHosts)));
    expect(failed.code).toBe("host_key_mismatch");
    expect(failed.message).toContain("@revoked");
    const insecure = await failureOf(connectSsh(sshOptions(sshd, knownHosts, { hostKeyPolicy: "insecure-accept-any" })));
    expect(insecure.code).toBe("host_key_mismatch");
  }, 10000);

  test("only the known key types are offered: an ECDSA-only entry matches although the server prefers ed25519", async () => {
    const offset = sshd.readLog().length;
    const shell = await connectSsh(sshOptions(sshd, writeKnownHosts(work, [ecdsaLine], "ecdsa-only")));
    expect((await shell.exec("true")).exitCode).toBe(0);
    await shell.close();
    expect(await logSince(sshd, offset)).toContain("kex: host key algorithm: ecdsa-sha2-nistp256");
  }, 10000);

  test("a missing known_hosts file means unknown, and nothing is created in strict mode", async () => {
    const knownHosts = join(work, "absent", "known_hosts");
    const failed = await failureOf(connectSsh(sshOptions(sshd, knownHosts)));
    expect(failed.code).toBe("host_key_unknown");
    expect(existsSync(knownHosts)).toBe(false);
  }, 10000);
});
