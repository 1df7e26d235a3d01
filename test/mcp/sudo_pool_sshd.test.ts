/**
 * The MCP server's shell pool with a sudo root: roots of one host with the
 * same credentials share one SSH connection whether they use sudo or not (a
 * sudo root runs on a `withSudo` view of it); other credentials never share.
 * Real sshd, real sudo, the SDK client (in-process, and over stdio to the
 * example server's process), the server's own pool. Connections are counted
 * on sshd's side: its log ("Connection from") and its established sockets.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ApplyPatchOutput, ReadFileOutput } from "../../examples/mcp/schemas.ts";
import { ensureTestUsers, sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd, TestUsers } from "../support/sshd.ts";
import { call, connect, localRoots } from "./helpers.ts";
import type { Session } from "./helpers.ts";
import { startStdio } from "./stdio_helpers.ts";
import type { StdioSession } from "./stdio_helpers.ts";

const ready = sshdReady("MCP server: a sudo root shares the host's connection (test/mcp/sudo_pool_sshd.test.ts)", true);

describe.skipIf(!ready)("the MCP server's pool: sudo and plain roots of one host on one SSH connection", () => {
  let sshd: Sshd;
  let users: TestUsers;
  let work: string;
  let session: Session;
  let logOffset: number;

  const connections = (): number => (sshd.readLog().slice(logOffset).match(/^Connection from 127\.0\.0\.1/gm) ?? []).length;
  const connectedLines = (): string[] => session.logs.filter((line) => line.startsWith("connected to "));

  beforeAll(async () => {
    sshd = await startSshd();
    users = ensureTestUsers();
    work = mkdtempSync(join(tmpdir(), "sap-mcp-sudo-"));
    chmodSync(work, 0o755);
    // site: the login user's; etc: root's (0755 dir, 0644 file) — the login user reads it, only sudo writes it.
    mkdirSync(join(work, "site"));
    writeFileSync(join(work, "site", "index.html"), "<h1>Old</h1>\n");
    const chown = spawnSync("chown", ["-R", `${users.nopasswdUser}:`, join(work, "site")]);
    if (chown.status !== 0) throw new Error(`chown failed: ${String(chown.stderr)}`);
    mkdirSync(join(work, "etc"), { mode: 0o755 });
    writeFileSync(join(work, "etc", "app.conf"), "port = 80\n", { mode: 0o644 });
    const knownHosts = writeKnownHosts(work, [sshd.hostKeyLine]);
    // The same key under another path: another credential as far as the pool can tell.
    const otherKey = join(work, "other_key");
    copyFileSync(sshd.userKeyPath, otherKey);
    chmodSync(otherKey, 0o600);
    const at = (path: string, query: string): string =>
      `ssh://${users.nopasswdUser}@127.0.0.1:${sshd.port}${join(work, path)}?sshConfigFile=none&knownHostsFile=${knownHosts}&${query}`;
    const roots = localRoots({
      site: at("site", `identityFile=${sshd.userKeyPath}`),
      etc: at("etc", `identityFile=${sshd.userKeyPath}&sudo=1`),
      etcplain: at("etc", `identityFile=${sshd.userKeyPath}`),
      other: at("site", `identityFile=${otherKey}`),
    });
    logOffset = sshd.readLog().length;
    session = await connect({ roots });
  }, 30_000);

  afterAll(async () => {
    await session?.close();
    await sshd?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  }, 30_000);

  test("a sudo root and two plain roots with the same credentials: concurrent calls, each elevated or not, one connection", async () => {
    const update = "*** Begin Patch\n*** Update File: app.conf\n@@\n-port = 80\n+port = 8080\n*** End Patch";
    const add = "*** Begin Patch\n*** Add File: about.html\n+<h1>About</h1>\n*** End Patch";
    const [elevated, plain, refused] = await Promise.all([
      call(session, "apply_patch", { root: "etc", patch: update }),
      call(session, "apply_patch", { root: "site", patch: add }),
      call(session, "apply_patch", { root: "etcplain", patch: "*** Begin Patch\n*** Add File: new.conf\n+x\n*** End Patch" }),
    ]);
    expect(elevated.isError).toBeFalsy();
    expect(elevated.structuredContent as ApplyPatchOutput).toMatchObject({ ok: true, elevated: true });
    expect(readFileSync(join(work, "etc", "app.conf"), "utf8")).toBe("port = 8080\n");
    expect(statSync(join(work, "etc", "app.conf")).uid).toBe(0);
    expect(plain.structuredContent as ApplyPatchOutput).toMatchObject({ ok: true, elevated: false });
    expect(statSync(join(work, "site", "about.html")).uid).toBe(Number(uidOf(users.nopasswdUser)));
    // The plain root on the same directory runs as the login user, who may not write there.
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent as ApplyPatchOutput).toMatchObject({ ok: false, elevated: false });
    expect((refused.structuredContent as ApplyPatchOutput).errors!.map((e) => e.code)).toEqual(["permission_denied"]);

    const read = (await call(session, "read_file", { root: "etcplain", path: "app.conf" })).structuredContent as ReadFileOutput;
    expect(read).toMatchObject({ ok: true, text: "port = 8080\n" });
    expect(connections()).toBe(1);
    expect(connectedLines()).toEqual([`connected to ${users.nopasswdUser}@127.0.0.1:${sshd.port}`]);
  }, 30_000);

  test("a root with another identity file gets a connection of its own (the pool key keeps credentials apart)", async () => {
    const read = (await call(session, "read_file", { root: "other", path: "about.html" })).structuredContent as ReadFileOutput;
    expect(read).toMatchObject({ ok: true, text: "<h1>About</h1>\n" });
    expect(connections()).toBe(2);
    expect(connectedLines()).toHaveLength(2);
    // The roots of the first connection still share it.
    expect((await call(session, "read_file", { root: "etc", path: "app.conf" })).isError).toBeFalsy();
    expect(connections()).toBe(2);
  }, 30_000);
});

function uidOf(user: string): string {
  return spawnSync("id", ["-u", user], { encoding: "utf8" }).stdout.trim();
}

/** SSH connections sshd holds open on `port` right now (its side of each established TCP connection). */
function openConnections(port: number): number {
  const listed = spawnSync("ss", ["-tnH", "state", "established", `( sport = :${port} )`], { encoding: "utf8" });
  if (listed.status !== 0) throw new Error(`ss failed: ${listed.stderr}`);
  return listed.stdout.split("\n").filter((line) => line.trim() !== "").length;
}

describe.skipIf(!ready)("the example server over stdio: sudo -S roots with right and wrong passwords and a plain root on one connection", () => {
  let sshd: Sshd;
  let users: TestUsers;
  let work: string;
  let session: StdioSession;
  let logOffset: number;
  const wrongPassword = `wrong-${process.pid}-${Date.now()}`;

  const connections = (): number => (sshd.readLog().slice(logOffset).match(/^Connection from 127\.0\.0\.1/gm) ?? []).length;

  beforeAll(async () => {
    sshd = await startSshd();
    users = ensureTestUsers();
    work = mkdtempSync(join(tmpdir(), "sap-mcp-sudo-pw-"));
    chmodSync(work, 0o755);
    mkdirSync(join(work, "home"));
    writeFileSync(join(work, "home", "notes.txt"), "one\n");
    const chown = spawnSync("chown", ["-R", `${users.passwordUser}:`, join(work, "home")]);
    if (chown.status !== 0) throw new Error(`chown failed: ${String(chown.stderr)}`);
    mkdirSync(join(work, "etc"), { mode: 0o755 });
    writeFileSync(join(work, "etc", "app.conf"), "port = 80\n", { mode: 0o644 });
    const knownHosts = writeKnownHosts(work, [sshd.hostKeyLine]);
    const root = (path: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
      location: `ssh://${users.passwordUser}@127.0.0.1:${sshd.port}${join(work, path)}`,
      identityFile: sshd.userKeyPath,
      knownHostsFile: knownHosts,
      sshConfigFile: false,
      ...extra,
    });
    const config = join(work, "roots.json");
    writeFileSync(config, JSON.stringify({
      roots: {
        home: root("home"),
        etc: root("etc", { sudoPasswordEnv: "SAP_TEST_SUDO_GOOD" }),
        etcwrong: root("etc", { sudoPasswordEnv: "SAP_TEST_SUDO_WRONG" }),
        // the password user (sapp<id>) has no NOPASSWD rule: `sudo -n` is refused.
        etcnopass: root("etc", { sudo: true }),
      },
    }));
    logOffset = sshd.readLog().length;
    session = await startStdio(process.execPath, ["examples/mcp_server.ts", "--config", config], {
      SAP_TEST_SUDO_GOOD: users.password,
      SAP_TEST_SUDO_WRONG: wrongPassword,
    });
  }, 30_000);

  afterAll(async () => {
    await session?.close();
    await sshd?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  }, 30_000);

  test("each root runs as its own uid; a wrong password and a refused sudo -n fail only their roots; one connection; closing the client ends it", async () => {
    const update = "*** Begin Patch\n*** Update File: app.conf\n@@\n-port = 80\n+port = 8080\n*** End Patch";
    const add = (name: string): string => `*** Begin Patch\n*** Add File: ${name}\n+x\n*** End Patch`;
    const [elevated, plain, wrong, nopass] = await Promise.all([
      session.call("apply_patch", { root: "etc", patch: update }),
      session.call("apply_patch", { root: "home", patch: add("by-user.txt") }),
      session.call("apply_patch", { root: "etcwrong", patch: add("never.conf") }),
      session.call("read_file", { root: "etcnopass", path: "app.conf" }),
    ]);
    expect(elevated.structuredContent as ApplyPatchOutput).toMatchObject({ ok: true, elevated: true });
    expect(readFileSync(join(work, "etc", "app.conf"), "utf8")).toBe("port = 8080\n");
    expect(statSync(join(work, "etc", "app.conf")).uid).toBe(0);
    expect(plain.structuredContent as ApplyPatchOutput).toMatchObject({ ok: true, elevated: false });
    expect(statSync(join(work, "home", "by-user.txt")).uid).toBe(Number(uidOf(users.passwordUser)));

    expect(wrong.isError).toBe(true);
    const wrongFailure = wrong.structuredContent as ApplyPatchOutput;
    expect(wrongFailure.ok).toBe(false);
    expect(wrongFailure.errors!.map((e) => e.code)).toEqual(["auth_failed"]);
    expect(wrongFailure.errors![0]!.message).toContain(`sudo rejected the password for user ${users.passwordUser}`);
    expect(JSON.stringify(wrong)).not.toContain(wrongPassword);
    expect(nopass.isError).toBe(true);
    expect(JSON.stringify(nopass.structuredContent)).toContain("auth_failed");
    expect(existsSync(join(work, "etc", "never.conf"))).toBe(false);

    // The refusals are the views' own: asked again they fail again, and the other roots still work.
    const [again, read, whoami] = await Promise.all([
      session.call("apply_patch", { root: "etcwrong", patch: add("never.conf") }),
      session.call("read_file", { root: "etc", path: "app.conf" }),
      session.call("apply_patch", { root: "home", patch: add("by-user-2.txt") }),
    ]);
    expect((again.structuredContent as ApplyPatchOutput).errors!.map((e) => e.code)).toEqual(["auth_failed"]);
    expect(read.structuredContent as ReadFileOutput).toMatchObject({ ok: true, text: "port = 8080\n" });
    expect(whoami.structuredContent as ApplyPatchOutput).toMatchObject({ ok: true, elevated: false });
    expect(statSync(join(work, "home", "by-user-2.txt")).uid).toBe(Number(uidOf(users.passwordUser)));

    // Four roots, three elevations, one SSH connection — and the password is in no log.
    expect(connections()).toBe(1);
    expect(openConnections(sshd.port)).toBe(1);
    expect(session.stderr()).not.toContain(users.password);
    expect(session.stderr()).not.toContain(wrongPassword);

    // The client goes away: the server exits and sshd sees the one connection end.
    await session.close();
    const deadline = Date.now() + 10_000;
    while (openConnections(sshd.port) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(openConnections(sshd.port)).toBe(0);
    expect(connections()).toBe(1);
  }, 60_000);
});
