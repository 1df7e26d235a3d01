import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  fingerprintSha256,
  formatKnownHostsLine,
  hostToken,
  knownKeyTypes,
  parseKnownHosts,
  verifyHostKey,
} from "../../lib/ssh/known_hosts.ts";
import type { HostKeyVerdict } from "../../lib/ssh/known_hosts.ts";

// Real keys from the real ssh-keygen, so blobs, hashes and fingerprints are
// checked against OpenSSH itself, not against our own idea of them.
interface Key {
  type: string;
  base64: string;
  blob: Uint8Array;
  pubPath: string;
}
let dir: string;
const keys: Record<"a" | "b" | "ecdsa", Key> = {} as never;

function keygen(name: string, type: string): Key {
  const path = join(dir, name);
  const made = spawnSync("ssh-keygen", ["-q", "-t", type, "-N", "", "-f", path]);
  if (made.status !== 0) throw new Error(String(made.stderr));
  const [keyType, base64] = readFileSync(`${path}.pub`, "utf8").trim().split(/\s+/) as [string, string];
  return { type: keyType, base64, blob: new Uint8Array(Buffer.from(base64, "base64")), pubPath: `${path}.pub` };
}
const line = (hosts: string, key: Key, marker = ""): string => `${marker}${marker ? " " : ""}${hosts} ${key.type} ${key.base64}`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "sap-kh-"));
  keys.a = keygen("a", "ed25519");
  keys.b = keygen("b", "ed25519");
  keys.ecdsa = keygen("c", "ecdsa");
}, 30_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("verifyHostKey on plain entries", () => {
  const cases: { name: string; lines: () => string[]; host: string; port: number; key: () => Key; status: HostKeyVerdict["status"] }[] = [
    { name: "exact host, port 22", lines: () => [line("web1", keys.a)], host: "web1", port: 22, key: () => keys.a, status: "match" },
    { name: "host case-insensitive", lines: () => [line("WEB1.Example", keys.a)], host: "web1.example", port: 22, key: () => keys.a, status: "match" },
    { name: "[host]:port token", lines: () => [line("[127.0.0.1]:2222", keys.a)], host: "127.0.0.1", port: 2222, key: () => keys.a, status: "match" },
    // Port ≠ 22 with nothing known for [host]:port: OpenSSH accepts a bare-host line with the same key
    // ("found matching key w/out port"), checked with the real client (test/ssh/host_keys_sshd.test.ts).
    { name: "bare host line with the same key covers port 2222 (OpenSSH's fallback)", lines: () => [line("127.0.0.1", keys.a)], host: "127.0.0.1", port: 2222, key: () => keys.a, status: "match" },
    { name: "bare host line with another key: port 2222 stays unknown, not a mismatch", lines: () => [line("127.0.0.1", keys.b)], host: "127.0.0.1", port: 2222, key: () => keys.a, status: "unknown" },
    { name: "a [host]:port line with another key wins over a matching bare line", lines: () => [line("[127.0.0.1]:2222", keys.b), line("127.0.0.1", keys.a)], host: "127.0.0.1", port: 2222, key: () => keys.a, status: "mismatch" },
    { name: "a matching [host]:port line wins over a bare line with another key", lines: () => [line("[127.0.0.1]:2222", keys.a), line("127.0.0.1", keys.b)], host: "127.0.0.1", port: 2222, key: () => keys.a, status: "match" },
    { name: "a bare @revoked line refuses the bare fallback", lines: () => [line("127.0.0.1", keys.a), "@revoked " + line("127.0.0.1", keys.a)], host: "127.0.0.1", port: 2222, key: () => keys.a, status: "revoked" },
    { name: "a bare @revoked line does not touch a [host]:port match", lines: () => [line("[127.0.0.1]:2222", keys.a), "@revoked " + line("127.0.0.1", keys.a)], host: "127.0.0.1", port: 2222, key: () => keys.a, status: "match" },
    { name: "[host]:22 is not the token for port 22", lines: () => [line("[web1]:2222", keys.a)], host: "web1", port: 22, key: () => keys.a, status: "unknown" },
    { name: "comma list", lines: () => [line("alpha,web1,beta", keys.a)], host: "web1", port: 22, key: () => keys.a, status: "match" },
    { name: "* wildcard", lines: () => [line("*.lan", keys.a)], host: "web.lan", port: 22, key: () => keys.a, status: "match" },
    { name: "? wildcard", lines: () => [line("web?.lan", keys.a)], host: "web7.lan", port: 22, key: () => keys.a, status: "match" },
    { name: "? needs exactly one char", lines: () => [line("web?.lan", keys.a)], host: "web77.lan", port: 22, key: () => keys.a, status: "unknown" },
    { name: "negation vetoes the line", lines: () => [line("*.lan,!db.lan", keys.a)], host: "db.lan", port: 22, key: () => keys.a, status: "unknown" },
    { name: "negation leaves others", lines: () => [line("*.lan,!db.lan", keys.a)], host: "web.lan", port: 22, key: () => keys.a, status: "match" },
    { name: "wildcard inside brackets", lines: () => [line("[*.lan]:2222", keys.a)], host: "web.lan", port: 2222, key: () => keys.a, status: "match" },
    { name: "changed key", lines: () => [line("web1", keys.a)], host: "web1", port: 22, key: () => keys.b, status: "mismatch" },
    { name: "several keys per host: second matches", lines: () => [line("web1", keys.ecdsa), line("web1", keys.a)], host: "web1", port: 22, key: () => keys.a, status: "match" },
    { name: "same key on two lines for two hosts", lines: () => [line("web1", keys.a), line("web2", keys.b)], host: "web2", port: 22, key: () => keys.b, status: "match" },
    { name: "comments and blank lines", lines: () => ["# comment", "", "   ", line("web1", keys.a) + " trailing comment"], host: "web1", port: 22, key: () => keys.a, status: "match" },
    { name: "@revoked wins over an accepting line", lines: () => [line("web1", keys.a), line("*", keys.a, "@revoked")], host: "web1", port: 22, key: () => keys.a, status: "revoked" },
    { name: "@revoked for another host does not apply", lines: () => [line("web1", keys.a), line("other", keys.a, "@revoked")], host: "web1", port: 22, key: () => keys.a, status: "match" },
    { name: "@revoked of another key does not block", lines: () => [line("web1", keys.a), line("*", keys.b, "@revoked")], host: "web1", port: 22, key: () => keys.a, status: "match" },
    { name: "@cert-authority never accepts a plain key", lines: () => [line("*.lan", keys.a, "@cert-authority")], host: "web.lan", port: 22, key: () => keys.a, status: "unknown" },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const parsed = parseKnownHosts(c.lines().join("\n") + "\n");
      expect(parsed.invalid).toEqual([]);
      expect(verifyHostKey(parsed.entries, c.host, c.port, c.key().blob).status).toBe(c.status);
    });
  }

  test("mismatch lists the known key types and lines", () => {
    const parsed = parseKnownHosts([line("x", keys.b), line("web1", keys.ecdsa), line("web1", keys.a)].join("\n"));
    const verdict = verifyHostKey(parsed.entries, "web1", 22, keys.b.blob);
    expect(verdict).toEqual({ status: "mismatch", knownTypes: [keys.ecdsa.type, "ssh-ed25519"], lines: [2, 3] });
  });

  test("@cert-authority is reported as unsupported, and named in the unknown verdict", () => {
    const parsed = parseKnownHosts(line("*.lan", keys.a, "@cert-authority") + "\n");
    expect(parsed.unsupported).toHaveLength(1);
    expect(parsed.unsupported[0]!.reason).toContain("not supported");
    expect(verifyHostKey(parsed.entries, "web.lan", 22, keys.b.blob)).toEqual({ status: "unknown", certAuthorityLines: [1] });
  });

  test("malformed lines are listed, not fatal", () => {
    const parsed = parseKnownHosts(
      ["web1 ssh-ed25519", "web1 ssh-ed25519 not*base64", `web1 ssh-rsa ${keys.a.base64}`, "@bogus web1 x y", "|1|short|x ssh-ed25519 " + keys.a.base64, line("ok", keys.a)].join("\n"),
    );
    expect(parsed.invalid.map((p) => p.line)).toEqual([1, 2, 3, 4, 5]);
    expect(parsed.entries.map((e) => e.line)).toEqual([6]);
  });

  test("knownKeyTypes: types for the host only, no revoked or CA lines", () => {
    const parsed = parseKnownHosts(
      [line("web1", keys.ecdsa), line("web1", keys.a), line("web2", keys.b), line("*", keys.b, "@revoked"), line("*", keys.b, "@cert-authority")].join("\n"),
    );
    expect(knownKeyTypes(parsed.entries, "web1", 22)).toEqual([keys.ecdsa.type, "ssh-ed25519"]);
    expect(knownKeyTypes(parsed.entries, "nowhere", 22)).toEqual([]);
  });
});

describe("hashed entries (|1|salt|hash)", () => {
  test("lines hashed by ssh-keygen -H are matched, for port 22 and [host]:port", () => {
    const file = join(dir, "to_hash");
    writeFileSync(file, [line("web1.example", keys.a), line("[127.0.0.1]:2222", keys.b)].join("\n") + "\n");
    const hashed = spawnSync("ssh-keygen", ["-H", "-f", file]);
    expect(hashed.status).toBe(0);
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain("web1.example");
    const parsed = parseKnownHosts(text);
    expect(parsed.entries.every((e) => e.hashed !== undefined)).toBe(true);
    expect(verifyHostKey(parsed.entries, "web1.example", 22, keys.a.blob).status).toBe("match");
    expect(verifyHostKey(parsed.entries, "127.0.0.1", 2222, keys.b.blob).status).toBe("match");
    expect(verifyHostKey(parsed.entries, "127.0.0.1", 2222, keys.a.blob).status).toBe("mismatch");
    expect(verifyHostKey(parsed.entries, "127.0.0.1", 22, keys.b.blob).status).toBe("unknown");
  });

  const formats: { name: string; host: string; port: number; hashed: boolean }[] = [
    { name: "plain, port 22", host: "web1", port: 22, hashed: false },
    { name: "plain, other port", host: "127.0.0.1", port: 2222, hashed: false },
    { name: "hashed, port 22", host: "web1", port: 22, hashed: true },
    { name: "hashed, other port", host: "127.0.0.1", port: 2222, hashed: true },
  ];
  for (const f of formats) {
    test(`formatKnownHostsLine (${f.name}) is found by ssh-keygen -F and by us`, () => {
      const text = formatKnownHostsLine(f.host, f.port, keys.a.type, keys.a.blob, { hashed: f.hashed });
      expect(text.startsWith("|1|")).toBe(f.hashed);
      const file = join(dir, `fmt_${f.hashed}_${f.port}`);
      writeFileSync(file, text + "\n");
      const found = spawnSync("ssh-keygen", ["-F", hostToken(f.host, f.port), "-f", file], { encoding: "utf8" });
      expect(found.status).toBe(0);
      expect(found.stdout).toContain(keys.a.base64);
      expect(verifyHostKey(parseKnownHosts(text).entries, f.host, f.port, keys.a.blob).status).toBe("match");
    });
  }

  test("two hashed lines of the same host use different salts", () => {
    const one = formatKnownHostsLine("web1", 22, keys.a.type, keys.a.blob, { hashed: true });
    const two = formatKnownHostsLine("web1", 22, keys.a.type, keys.a.blob, { hashed: true });
    expect(one).not.toBe(two);
  });
});

describe("fingerprintSha256", () => {
  test("equals ssh-keygen -l -E sha256 for each key type", () => {
    for (const key of Object.values(keys)) {
      const printed = spawnSync("ssh-keygen", ["-l", "-E", "sha256", "-f", key.pubPath], { encoding: "utf8" });
      expect(fingerprintSha256(key.blob)).toBe(printed.stdout.split(/\s+/)[1]!);
    }
  });
});
