/**
 * The example server's command line (examples/mcp/args.ts, auth.ts,
 * unix_socket.ts), in-process and table-driven: where the bearer token
 * comes from and how its file is judged, --socket's directory rules,
 * --no-auth, the bounds, and unknown flags named with the closest one
 * (issue 26 items 1, 2, 3 and 7).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_CACHE_BYTES, DEFAULT_MAX_SESSIONS, DEFAULT_REPLAY_BYTES, parseServerArgs } from "../../examples/mcp/args.ts";
import type { ServerArgs } from "../../examples/mcp/args.ts";
import { bearerCheck, privateDirProblem, writeGeneratedToken } from "../../examples/mcp/auth.ts";
import type { AuthVerdict } from "../../examples/mcp/auth.ts";
import { ConfigError } from "../../examples/mcp/roots.ts";
import { rootTest } from "../support/local_trees.ts";

const work = mkdtempSync(join(tmpdir(), "sap-mcp-args-"));
chmodSync(work, 0o700);
afterAll(() => rmSync(work, { recursive: true, force: true }));
const site = join(work, "site");
mkdirSync(site);
const token = join(work, "token");
writeFileSync(token, "0123456789abcdef0123\n", { mode: 0o600 });
const R = ["--root", `s=${site}`];

const parse = (argv: string[], env: Record<string, string> = {}): ServerArgs => {
  const args = parseServerArgs(argv, work, env);
  if (args === "help") throw new Error("unexpected help");
  return args;
};

describe("what the flags turn into", () => {
  const ok: { name: string; argv: string[]; env?: Record<string, string>; expected: unknown }[] = [
    { name: "stdio, no roots (client roots), default cache", argv: [], expected: { roots: [], http: null, cacheBytes: DEFAULT_CACHE_BYTES } },
    {
      name: "--http PORT binds 127.0.0.1 and makes a token (written at start)",
      argv: [...R, "--http", "8080"],
      expected: { http: { listen: { kind: "tcp", host: "127.0.0.1", port: 8080 }, auth: { kind: "token", bearer: { origin: "generated", file: null } }, allowedOrigins: [], maxSessions: DEFAULT_MAX_SESSIONS, replayBytes: DEFAULT_REPLAY_BYTES } },
    },
    { name: "--http=[::1]:0", argv: [...R, "--http=[::1]:0"], expected: { http: { listen: { kind: "tcp", host: "::1", port: 0 } } } },
    {
      name: "--token-file and origins",
      argv: [...R, "--http", "localhost:9", "--token-file", token, "--allow-origin", "https://app.example/", "--allow-origin", "http://localhost:5173"],
      expected: { http: { listen: { host: "localhost" }, auth: { kind: "token", bearer: { token: "0123456789abcdef0123", origin: "token-file", file: token } }, allowedOrigins: ["https://app.example", "http://localhost:5173"] } },
    },
    {
      name: "SAP_MCP_TOKEN, also on a non-loopback address",
      argv: [...R, "--http", "0.0.0.0:8080"],
      env: { SAP_MCP_TOKEN: "abcdefghijklmnopqrstu" },
      expected: { http: { listen: { host: "0.0.0.0" }, auth: { kind: "token", bearer: { token: "abcdefghijklmnopqrstu", origin: "environment" } } } },
    },
    { name: "--no-auth on loopback", argv: [...R, "--http", "8080", "--no-auth"], expected: { http: { auth: { kind: "none", reason: "no-auth" } } } },
    { name: "--socket: no token by default", argv: [...R, "--socket", "s.sock"], expected: { http: { listen: { kind: "socket", path: join(work, "s.sock") }, auth: { kind: "none", reason: "socket" } } } },
    { name: "--socket with a token file", argv: [...R, "--socket", "s.sock", "--token-file", token], expected: { http: { auth: { kind: "token", bearer: { origin: "token-file" } } } } },
    {
      name: "bounds with size suffixes",
      argv: [...R, "--http", "1", "--max-sessions", "3", "--cache-bytes", "64M", "--replay-bytes", "512K"],
      expected: { cacheBytes: 64 * 1024 * 1024, http: { maxSessions: 3, replayBytes: 512 * 1024 } },
    },
    { name: "--cache-bytes 0 (no cache) over stdio", argv: ["--cache-bytes", "0"], expected: { cacheBytes: 0 } },
  ];
  for (const c of ok) test(c.name, () => expect(parse(c.argv, c.env)).toMatchObject(c.expected as object));

  test("a generated token is 256 bits of base64url, new at each start", () => {
    const a = parse([...R, "--http", "1"]).http!.auth;
    const b = parse([...R, "--http", "1"]).http!.auth;
    if (a.kind !== "token" || b.kind !== "token") throw new Error("no token");
    expect(a.bearer.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.bearer.token).not.toBe(b.bearer.token);
  });

  test("--help", () => expect(parseServerArgs(["--root", `s=${site}`, "--help"], work, {})).toBe("help"));
});

describe("refused, with the fix", () => {
  const open = join(work, "token-open");
  writeFileSync(open, "0123456789abcdef0123\n");
  chmodSync(open, 0o644);
  const link = join(work, "token-link");
  symlinkSync(token, link);
  const fifo = join(work, "token-fifo");
  execFileSync("mkfifo", [fifo]);
  const bad: { name: string; argv: string[]; env?: Record<string, string>; says: RegExp }[] = [
    { name: "HTTP without a configured root", argv: ["--http", "8080"], says: /--http needs --root or --config: .*never roots a client declares/ },
    { name: "--socket without a configured root", argv: ["--socket", "s.sock"], says: /--socket needs --root or --config/ },
    { name: "a token file others can read", argv: [...R, "--http", "8080", "--token-file", open], says: /group or others can read it \(mode 644\); chmod 600 it/ },
    { name: "a token file that is a symlink", argv: [...R, "--http", "8080", "--token-file", link], says: /it is a symlink; give the file itself/ },
    { name: "a token file that is a FIFO (opened without blocking)", argv: [...R, "--http", "8080", "--token-file", fifo], says: /not a regular file/ },
    { name: "a short token", argv: [...R, "--http", "1"], env: { SAP_MCP_TOKEN: "short" }, says: /at least 16 characters/ },
    { name: "--no-auth off loopback", argv: [...R, "--http", "0.0.0.0:1", "--no-auth"], says: /not a loopback address/ },
    { name: "--no-auth with --token-file", argv: [...R, "--http", "1", "--no-auth", "--token-file", token], says: /contradict/ },
    { name: "--no-auth with SAP_MCP_TOKEN", argv: [...R, "--http", "1", "--no-auth"], env: { SAP_MCP_TOKEN: "abcdefghijklmnopqrstu" }, says: /contradict/ },
    { name: "--http and --socket", argv: [...R, "--http", "1", "--socket", "s.sock"], says: /choose one/ },
    { name: "a known flag with one dash (the message named no flag)", argv: [...R, "-http", "8080"], says: /^-http: a flag takes two dashes: --http/ },
    { name: "--token-file without HTTP", argv: ["--token-file", token], says: /applies to --http and --socket only/ },
    { name: "--no-auth without HTTP", argv: ["--no-auth"], says: /applies to --http and --socket only/ },
    { name: "a socket in a directory others can write (/tmp)", argv: [...R, "--socket", join(tmpdir(), "sap-x.sock")], says: /other users can write the directory/ },
    { name: "a bad port", argv: [...R, "--http", "99999"], says: /write --http PORT/ },
    { name: "a bad origin", argv: [...R, "--http", "1", "--allow-origin", "app.example"], says: /give an origin/ },
    { name: "a bad size", argv: [...R, "--http", "1", "--replay-bytes", "lots"], says: /a number of bytes/ },
    { name: "--max-sessions 0", argv: [...R, "--http", "1", "--max-sessions", "0"], says: /from 1 to 10000/ },
    { name: "a misspelt flag, named with the closest", argv: [...R, "--http", "1", "--tokenfile", token], says: /unknown flag --tokenfile: did you mean --token-file\?/ },
    { name: "a camelCase flag", argv: [...R, "--maxSessions", "3"], says: /unknown flag --maxSessions: did you mean --max-sessions\?/ },
    { name: "a stray value", argv: [...R, "8080"], says: /unexpected argument "8080"/ },
  ];
  for (const c of bad) {
    test(c.name, () => {
      expect(() => parse(c.argv, c.env)).toThrow(ConfigError);
      expect(() => parse(c.argv, c.env)).toThrow(c.says);
    });
  }

  rootTest("a token file owned by another user, even mode 0600", () => {
    const theirs = join(work, "token-theirs");
    writeFileSync(theirs, "0123456789abcdef0123\n", { mode: 0o600 });
    chownSync(theirs, 65534, 65534);
    expect(() => parse([...R, "--http", "1", "--token-file", theirs])).toThrow(/belongs to uid 65534, not to this user/);
  });

  test("a socket in a private directory whose parent others can write: they could rename it away and plant an impostor", () => {
    const shared = join(work, "shared");
    mkdirSync(join(shared, "mine"), { recursive: true, mode: 0o700 });
    chmodSync(shared, 0o777);
    expect(() => parse([...R, "--socket", join(shared, "mine", "s.sock")])).toThrow(`other users can write ${shared} (mode 777), so they could rename ${join(shared, "mine")} away`);
    chmodSync(shared, 0o1777); // sticky, and mine/ is ours: no one else can rename it
    expect(parse([...R, "--socket", join(shared, "mine", "s.sock")]).http!.listen).toEqual({ kind: "socket", path: join(shared, "mine", "s.sock") });
  });

  rootTest("a socket in our directory inside a sticky directory, under a directory another user owns", () => {
    const theirs = join(work, "theirs-sticky");
    mkdirSync(join(theirs, "mine"), { recursive: true, mode: 0o700 });
    chmodSync(theirs, 0o1777);
    chownSync(theirs, 65534, 65534); // its owner may rename anything in it, sticky or not
    expect(() => parse([...R, "--socket", join(theirs, "mine", "s.sock")])).toThrow(`${theirs} belongs to uid 65534`);
  });

  rootTest("a socket in a directory another user owns", () => {
    const dir = join(work, "theirs");
    mkdirSync(dir, { mode: 0o755 });
    chownSync(dir, 65534, 65534);
    expect(() => parse([...R, "--socket", join(dir, "s.sock")])).toThrow(/belongs to uid 65534/);
  });
});

describe("token files", () => {
  test("a missing --token-file is created exclusively, mode 0600, with a new token, and read back next time", () => {
    const file = join(work, "new-token");
    const first = parse([...R, "--http", "1", "--token-file", file]).http!.auth;
    if (first.kind !== "token") throw new Error("no token");
    expect(first.bearer.origin).toBe("created-token-file");
    expect(lstatSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8")).toBe(`${first.bearer.token}\n`);
    const again = parse([...R, "--http", "1", "--token-file", file]).http!.auth;
    expect(again.kind === "token" && again.bearer).toMatchObject({ token: first.bearer.token, origin: "token-file" });
  });

  test("a planted dangling symlink at the --token-file name is never written through", () => {
    const target = join(work, "planted-target");
    const file = join(work, "planted");
    symlinkSync(target, file);
    expect(() => parse([...R, "--http", "1", "--token-file", file])).toThrow(ConfigError);
    expect(() => lstatSync(target)).toThrow(); // nothing was created through the link
  });

  test("a generated token goes to $XDG_RUNTIME_DIR/ssh-apply-patch when that is private, replacing a stale file", () => {
    const runtime = join(work, "runtime");
    mkdirSync(runtime, { mode: 0o700 });
    const stale = join(runtime, "ssh-apply-patch");
    mkdirSync(stale, { mode: 0o700 });
    writeFileSync(join(stale, "mcp-8080.token"), "old\n", { mode: 0o600 });
    const written = writeGeneratedToken("t".repeat(43), "8080", { XDG_RUNTIME_DIR: runtime });
    expect(written).toMatchObject({ file: join(stale, "mcp-8080.token"), note: null });
    expect(readFileSync(written.file, "utf8")).toBe(`${"t".repeat(43)}\n`);
    expect(lstatSync(written.file).mode & 0o777).toBe(0o600);
    written.remove();
    expect(() => lstatSync(written.file)).toThrow();
  });

  test("a private XDG_RUNTIME_DIR in a directory others can write is not (they could swap it): mkdtemp instead, said why", () => {
    const open = join(work, "open-parent");
    mkdirSync(join(open, "runtime"), { recursive: true, mode: 0o700 });
    chmodSync(open, 0o777);
    const written = writeGeneratedToken("v".repeat(43), "2", { XDG_RUNTIME_DIR: join(open, "runtime") });
    expect(written.file.startsWith(open)).toBe(false);
    expect(written.note).toContain(`other users can write ${open} (mode 777)`);
    written.remove();
  });

  test("an XDG_RUNTIME_DIR others can use is not: a fresh mkdtemp directory instead, said why", () => {
    const shared = join(work, "shared-runtime");
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    const written = writeGeneratedToken("u".repeat(43), "1", { XDG_RUNTIME_DIR: shared });
    expect(written.file.startsWith(shared)).toBe(false);
    expect(written.note).toContain("group or others can use it (mode 777)");
    expect(privateDirProblem(join(written.file, ".."))).toBe(null);
    expect(lstatSync(written.file).mode & 0o777).toBe(0o600);
    written.remove();
    expect(() => lstatSync(join(written.file, ".."))).toThrow();
  });
});

describe("bearerCheck", () => {
  const check = bearerCheck("the-token-0123456789");
  const url = new URL("http://127.0.0.1/mcp");
  const cases: { name: string; header: string | undefined; url?: string; verdict: AuthVerdict }[] = [
    { name: "the token", header: "Bearer the-token-0123456789", verdict: "ok" },
    { name: "the scheme in any case", header: "bearer the-token-0123456789", verdict: "ok" },
    { name: "no header", header: undefined, verdict: "missing" },
    { name: "an empty header", header: "", verdict: "missing" },
    { name: "a wrong token", header: "Bearer the-token-0123456788", verdict: "wrong" },
    { name: "a prefix of the token", header: "Bearer the-token", verdict: "wrong" },
    { name: "the token and more", header: "Bearer the-token-0123456789x", verdict: "wrong" },
    { name: "another scheme", header: "Basic dGhlLXRva2Vu", verdict: "wrong" },
    { name: "the bare token", header: "the-token-0123456789", verdict: "wrong" },
    { name: "the token in the URL", header: undefined, url: "http://127.0.0.1/mcp?access_token=the-token-0123456789", verdict: "in_url" },
    { name: "the token in the URL, even with the header", header: "Bearer the-token-0123456789", url: "http://127.0.0.1/mcp?token=the-token-0123456789", verdict: "in_url" },
  ];
  for (const c of cases) test(c.name, () => expect(check(c.header, c.url ? new URL(c.url) : url)).toBe(c.verdict));
});
