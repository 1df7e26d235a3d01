/**
 * Issue 26's done-when for the front door: the HTTP server, started by
 * root as a user would, driven by ANOTHER local user (a real second uid,
 * through setpriv, running http_attacker.mjs) with no token, a wrong
 * token, another scheme, the token in the URL, the token file, the Unix
 * socket — and, with the real token, a client root of `/`. Every attempt
 * is refused, and nothing was read or written: the canaries' content
 * never reaches the attacker, the target paths stay absent, and the root
 * and the outside tree are exactly as before (owners, modes, times).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { attackerAccount, treeDigest } from "../hardening/co_tenant_fixture.ts";
import { cleanupTemps, rootTest, tempDir } from "../support/local_trees.ts";
import { startHttpServer } from "./http_helpers.ts";
import { REPO } from "./stdio_helpers.ts";

afterAll(cleanupTemps, 30_000);

interface Attempt {
  name: string;
  status?: number;
  error?: string;
  challenge?: string | null;
  body?: string;
}

/** Start the server on a Unix socket and wait for its ready line. */
async function startSocketServer(args: string[]): Promise<{ stop(): Promise<number | null>; stderr(): string }> {
  const child = spawn(process.execPath, ["examples/mcp_server.ts", ...args], { cwd: REPO, env: { ...process.env, SAP_MCP_TOKEN: "" }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (c) => (stderr += String(c)));
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const deadline = Date.now() + 15_000;
  while (!stderr.includes("ready;")) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the socket server did not start: ${stderr}`);
    await Bun.sleep(20);
  }
  return {
    stderr: () => stderr,
    stop: async () => {
      child.kill("SIGTERM");
      return await exited;
    },
  };
}

describe("another local user against the HTTP server (second uid)", () => {
  rootTest("no token, a wrong token, the token in the URL, the token file, the socket, and a client root of /: refused, nothing read or written", async () => {
    const attacker = attackerAccount();
    const base = tempDir("sap-http-auth-");
    chmodSync(base, 0o755);
    const marker = `CANARY-${crypto.randomUUID()}`;
    const site = join(base, "site");
    const outside = join(base, "outside");
    mkdirSync(site, { mode: 0o755 });
    mkdirSync(outside, { mode: 0o755 });
    writeFileSync(join(site, "app.conf"), `${marker} site secret\n`, { mode: 0o600 });
    writeFileSync(join(site, "public.txt"), "hello\n", { mode: 0o644 });
    writeFileSync(join(outside, "secret.txt"), `${marker} outside secret\n`, { mode: 0o600 });
    // Open to others for lookup (0755, only root writes it): the socket's own mode 0600 must refuse them.
    const privateDir = tempDir("sap-http-auth-sock-");
    chmodSync(privateDir, 0o755);
    const socket = join(privateDir, "mcp.sock");
    const siteBefore = treeDigest(site);
    const outsideBefore = treeDigest(outside);

    const server = await startHttpServer(["--root", `site=${site}`], { SAP_MCP_TOKEN: "" });
    const socketServer = await startSocketServer(["--root", `site=${site}`, "--socket", socket]);
    let attempts: Attempt[];
    let output: string;
    try {
      expect(server.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(server.tokenFile).not.toBe(null);
      const control = tempDir("sap-http-attacker-");
      chmodSync(control, 0o755);
      const script = join(control, "http_attacker.mjs");
      copyFileSync(join(import.meta.dir, "http_attacker.mjs"), script);
      chmodSync(script, 0o644);
      const input = { url: server.url.href, tokenFile: server.tokenFile, socket, leakedToken: server.token, canaryPath: "app.conf", targetPath: "pwned.txt", outsideSecret: join(outside, "secret.txt") };
      const run = spawnSync("setpriv", [`--reuid=${attacker.uid}`, `--regid=${attacker.gid}`, "--clear-groups", process.execPath, script], {
        cwd: control,
        input: JSON.stringify(input),
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(run.status).toBe(0);
      output = run.stdout;
      attempts = JSON.parse(output) as Attempt[];
    } finally {
      expect(await socketServer.stop()).toBe(0);
      expect(await server.stop()).toBe(0);
    }
    const by = (name: string): Attempt => attempts.find((a) => a.name === name) ?? { name, error: "not attempted" };

    // Without the token, in any form, the server answers 401 and nothing else.
    for (const name of [
      "no token: initialize",
      "no token: read the canary",
      "no token: add a file",
      "wrong token: initialize",
      "wrong token: read the canary",
      "another scheme",
      "token in the URL (access_token)",
      "token in the URL (token)",
    ]) {
      expect({ name, status: by(name).status }).toEqual({ name, status: 401 });
      expect(by(name).challenge).toStartWith('Bearer realm="ssh-apply-patch"');
    }
    expect(by("wrong token: initialize").challenge).toContain('error="invalid_token"');
    expect(by("token in the URL (access_token)").body).toContain("a token in the URL is never accepted");
    // The token file and the socket are closed to that uid.
    expect(by("read the token file").error).toBe("EACCES");
    expect(by("the Unix socket").error).toBe("EACCES"); // connect(2) on a 0600 socket of root's

    // With the token, a client root of / adds nothing: only the configured root exists.
    expect(by("with the token, roots capability: initialize").status).toBe(200);
    for (const name of ["client root /: read the outside secret by root name", "client root /: read /etc/shadow", "client root /: read the outside secret by ..", "client root /: add authorized_keys in /", "client root /: list /"]) {
      expect({ name, status: by(name).status }).toEqual({ name, status: 200 });
      expect({ name, isError: by(name).body!.includes('"isError":true') }).toEqual({ name, isError: true });
    }
    expect(by("client root /: read the outside secret by root name").body).toContain('there is no root named \\"root\\"');

    // Nothing was read: no canary content, no shadow line reached the attacker.
    expect(output).not.toContain(marker);
    const shadowRoot = readFileSync("/etc/shadow", "utf8").split("\n").find((l) => l.startsWith("root:"))!;
    expect(output).not.toContain(shadowRoot);
    // Nothing was written: the targets are absent, both trees exactly as before.
    expect(existsSync(join(site, "pwned.txt"))).toBe(false);
    expect(existsSync(join(site, "root"))).toBe(false);
    expect(existsSync("/.ssh/authorized_keys") && readFileSync("/.ssh/authorized_keys", "utf8").includes("pwned")).toBe(false);
    expect(treeDigest(site)).toEqual(siteBefore);
    expect(treeDigest(outside)).toEqual(outsideBefore);
    // The server said what it refused, never the token; its token file is gone with it.
    expect(server.stderr()).toContain("refused a request without a bearer token");
    expect(server.stderr()).toContain("refused a request with a wrong bearer token");
    expect(server.stderr()).toContain("refused a request with a token in the URL");
    expect(server.stderr()).not.toContain(server.token!);
    expect(existsSync(server.tokenFile!)).toBe(false);
    expect(existsSync(socket)).toBe(false);
  }, 120_000);
});

describe("what the server says about its guard", () => {
  const cases = [
    { name: "--socket alone", extra: [] as string[], says: "none beyond the socket's mode 0600" },
    { name: "--socket with --no-auth", extra: ["--no-auth"], says: "--no-auth changes nothing on a socket" },
  ];
  for (const c of cases) {
    test(`${c.name}: the 0600 socket is named as the guard, never 'every local user can reach it'`, async () => {
      const site = tempDir("sap-http-guard-");
      writeFileSync(join(site, "a.txt"), "a\n");
      const socket = join(tempDir("sap-http-guard-sock-"), "mcp.sock");
      const server = await startSocketServer(["--root", `site=${site}`, "--socket", socket, ...c.extra]);
      const said = server.stderr();
      await server.stop();
      expect(said).toContain(c.says);
      expect(said).not.toContain("every process of every local user");
    }, 30_000);
  }
});
