/**
 * The snapshot wire against a hostile or broken host (SPEC §7 round 2,
 * §11.1): a host that answers with crafted output (FAULT INJECTED: a fake
 * RemoteShell that speaks the protocol with the request's own nonce), a
 * compressor that fails, a file that changes while it is compressed or
 * hashed, a packed program the host cannot unpack, and the co-tenant who
 * swaps a name while the engine proves a hash in a shared directory.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { applyPatch } from "../../lib/apply.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { SnapshotCache } from "../../lib/remote/snapshot_cache.ts";
import { RemoteShellError, shQuote } from "../../lib/remote/shell.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";
import { NEED_PLAIN } from "../../lib/remote/host_wire.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import { cleanupTemps, HookedShell, makeTree, noLeftoversAfterEach, rootTest, shellCases, tempDir } from "../support/local_trees.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();

const enc = new TextEncoder();
const concat = (...parts: (string | Uint8Array)[]): Uint8Array => {
  const bytes = parts.map((p) => (typeof p === "string" ? enc.encode(p) : p));
  const out = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of bytes) {
    out.set(b, at);
    at += b.length;
  }
  return out;
};

/**
 * FAULT INJECTION: a host that answers every snapshot with `reply(nonce,
 * hints)` — the request's nonce and per-path hint lines read from stdin.
 */
class FakeHost implements RemoteShell {
  readonly label = "fake-host";
  readonly link = "network" as const;
  readonly requests: string[] = [];
  readonly #reply: (nonce: string, hints: string[], offer: string) => Uint8Array;
  constructor(reply: (nonce: string, hints: string[], offer: string) => Uint8Array) {
    this.#reply = reply;
  }
  exec(_command: string, options?: ExecOptions): Promise<ExecResult> {
    const stdin = new TextDecoder().decode(options?.stdin);
    this.requests.push(stdin);
    const lines = stdin.split("\n");
    const nonce = lines.find((l) => l.startsWith("N "))!.slice(2);
    const offer = lines.find((l) => l.startsWith("Z "))!;
    // after the header, K, N, Z and L lines: the count, then hint and path per file
    const at = lines.findIndex((l) => l.startsWith("L ")) + 1;
    const count = Number(lines[at]);
    const hints = Array.from({ length: count }, (_, k) => lines[at + 1 + 2 * k]!);
    return Promise.resolve({ stdout: this.#reply(nonce, hints, offer), stderr: new Uint8Array(), exitCode: 0, signal: null });
  }
}

const META = "420 0 0 1 1";
const begin = "SAP-BEGIN snapshot\nHAVE base64 gzip zstd\nROOTID 1:2\n";

describe("a hostile host's compressed replies", () => {
  test("a zip bomb (a small stream that inflates far past the announced size) is refused without inflating it all", async () => {
    const bomb = gzipSync(new Uint8Array(64 * 1024 * 1024));
    const host = new FakeHost((nonce) => concat(begin, `Z 0 gzip ${"a".repeat(64)}\nS 0 file 100000 ${META}\n`, bomb, `\nE ${nonce}\nSAP-END ok\n`));
    const rss = process.memoryUsage().rss;
    const error = await readSnapshots(host, "/srv", ["a.txt"], { compress: true }).catch((e) => e);
    expect(error).toBeInstanceOf(RemoteShellError);
    expect(error.failure.code).toBe("remote_error");
    expect(error.failure.message).toContain("did not decompress");
    expect(process.memoryUsage().rss - rss).toBeLessThan(48 * 1024 * 1024);
  });

  test("decompressed bytes that do not hash to the host's SHA-256 are refused, and that codec is not offered again", async () => {
    const content = enc.encode("x".repeat(100_000));
    const host = new FakeHost((nonce, _hints, offer) =>
      offer.includes("gzip")
        ? concat(begin, `Z 0 gzip ${"b".repeat(64)}\nS 0 file ${content.length} ${META}\n`, gzipSync(content), `\nE ${nonce}\nSAP-END ok\n`)
        : concat(begin, `S 0 file ${content.length} ${META}\n`, content, `E ${nonce}\nSAP-END ok\n`)
    );
    const error = await readSnapshots(host, "/srv", ["a.txt"], { compress: true }).catch((e) => e);
    expect(error.failure?.code).toBe("remote_error");
    const next = await readSnapshots(host, "/srv", ["a.txt"], { compress: true });
    expect(host.requests[1]).not.toContain("gzip");
    expect(next.get("a.txt")!.sha256).toBe(sha256Hex(content));
  });

  test.each([
    ["a compressed stream for a codec that was not offered", (nonce: string) => concat(begin, `Z 0 gzip ${sha256Hex("hi")}\nS 0 file 2 ${META}\n`, gzipSync(enc.encode("hi")), `\nE ${nonce}\nSAP-END ok\n`), false],
    ["a stream with no end marker within its bound", (nonce: string) => concat(begin, `Z 0 gzip ${"c".repeat(64)}\nS 0 file 10 ${META}\n`, new Uint8Array(5000), `\nE ${nonce}\nSAP-END ok\n`), true],
    ["a hash proof for a path the client named no content for", () => concat(begin, `H 0\nS 0 file 2 ${META}\nSAP-END ok\n`), true],
    ["a compressor failure", (nonce: string) => concat(begin, `Z 0 gzip ${sha256Hex("hi")}\nS 0 file 2 ${META}\n`, gzipSync(enc.encode("hi")), `\nE ${nonce}\nF 0\nSAP-END ok\n`), true],
  ])("%s is a protocol failure (remote_error, nothing changed)", async (_name, reply, compress) => {
    const host = new FakeHost(reply);
    const error = await readSnapshots(host, "/srv", ["a.txt"], { compress: compress as boolean }).catch((e) => e);
    expect(error).toBeInstanceOf(RemoteShellError);
    expect(error.failure.code).toBe("remote_error");
    expect(error.failure.message).toContain("nothing was changed");
  });

  test("a hash proof of another size than the content held is refused", async () => {
    const cache = new SnapshotCache();
    const held = enc.encode("held content\n");
    const sha = cache.put(held);
    cache.see("fake-host\u0000/srv", "a.txt", { sha256: sha, size: held.length });
    const host = new FakeHost((_nonce, hints) => {
      expect(hints[0]).toBe(`${sha} ${held.length}`);
      return concat(begin, `H 0\nS 0 file 5 ${META}\nSAP-END ok\n`);
    });
    const error = await readSnapshots(host, "/srv", ["a.txt"], { cache }).catch((e) => e);
    expect(error.failure?.code).toBe("remote_error");
  });
});

describe("packed programs", () => {
  test("a host that cannot unpack a program answers before reading anything; the call is repeated once in plain text, and later ones go plain", async () => {
    const root = makeTree({ "a.txt": "alpha\n" });
    const inner = new LocalShell();
    const commands: string[] = [];
    // FAULT INJECTION: base64 is missing on this "host" for packed programs.
    const host: RemoteShell = {
      label: "no-base64",
      link: "network",
      exec(command, options) {
        commands.push(command);
        return inner.exec(command.includes("sap_z=") ? `base64() { return 1; }\n${command}` : command, options);
      },
    };
    const first = await readSnapshots(host, root, ["a.txt"]); // plain: the host's tools are not known yet
    expect(first.get("a.txt")!.sha256).toBe(sha256Hex("alpha\n"));
    const report = await applyPatch(host, { root, patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+beta\n*** End Patch\n" });
    expect(report.errors).toBeUndefined();
    expect(commands.map((c) => c.includes("sap_z="))).toEqual([false, true, false, false]);
    const packedAnswer = await inner.exec(`base64() { return 1; }\n${commands[1]!}`);
    expect(new TextDecoder().decode(packedAnswer.stdout)).toBe(`${NEED_PLAIN}\n`);
    await readSnapshots(host, root, ["a.txt"]);
    expect(commands.length).toBe(5);
    expect(commands[4]).not.toContain("sap_z=");
  });
});

for (const c of shellCases()) {
  describe(`compressed and hashed reads of files that change (${c.name})`, () => {
    const big = "y".repeat(200_000) + "\n";
    test("a file that grows while it is compressed is refused as changed (conflict) (FAULT INJECTED: hook appends)", async () => {
      const root = makeTree({ "a.txt": big, "b.txt": "bee\n" });
      const shell = new HookedShell(new LocalShell({ ...c.options, cwd: tempDir() }), `case "$1:$2" in snapshot_read:0) printf more >> ${shQuote(join(root, "a.txt"))} ;; esac`);
      const snaps = await readSnapshots(shell, root, ["a.txt", "b.txt"], { compress: true });
      expect(snaps.get("a.txt")!.rejected?.code).toBe("conflict");
      expect(snaps.get("a.txt")!.bytes).toBeUndefined();
      expect(snaps.get("b.txt")!.sha256).toBe(sha256Hex("bee\n"));
    });

    test("a file replaced (same size, other bytes) right after its hash was proved is refused as changed, not served from the cache (FAULT INJECTED: hook replaces)", async () => {
      const root = makeTree({ "a.txt": big });
      const cache = new SnapshotCache();
      await readSnapshots(new LocalShell({ ...c.options, cwd: tempDir() }), root, ["a.txt"], { cache });
      writeFileSync(join(root, "side.txt"), "z".repeat(200_000) + "\n");
      const shell = new HookedShell(
        new LocalShell({ ...c.options, cwd: tempDir() }),
        `case "$1:$2" in snapshot_read:0) mv -f ${shQuote(join(root, "side.txt"))} ${shQuote(join(root, "a.txt"))} ;; esac`,
      );
      const snaps = await readSnapshots(shell, root, ["a.txt"], { cache });
      expect(snaps.get("a.txt")!.rejected?.code).toBe("conflict");
      expect(snaps.get("a.txt")!.bytes).toBeUndefined();
    });
  });
}

describe("a hash proof in a shared directory is made on the pinned inode", () => {
  rootTest("a co-tenant who swaps the name for a link to a same-size file outside after the pin gets the read refused, and no byte of the outside file is sent (FAULT INJECTED: hook swaps)", async () => {
    const content = "inside content\n".repeat(5000);
    const secret = "SECRET-SECRET-\n".repeat(5000);
    const outside = makeTree({ "secret.txt": secret });
    const root = makeTree({ "shared/f.txt": content });
    chmodSync(join(root, "shared"), 0o777); // writable by everyone, not sticky
    const cache = new SnapshotCache();
    const plain = new LocalShell({ cwd: tempDir() });
    const first = await readSnapshots(plain, root, ["shared/f.txt"], { cache, sharedDirectories: "allow" });
    expect(first.get("shared/f.txt")).toMatchObject({ directoryTrust: "shared", sha256: sha256Hex(content) });
    const target = join(root, "shared/f.txt");
    const swap = `case "$1" in snapshot_hash) ln -s ${shQuote(join(outside, "secret.txt"))} ${shQuote(target + ".new")} && mv -f ${shQuote(target + ".new")} ${shQuote(target)} ;; esac`;
    let stdout: Uint8Array = new Uint8Array();
    const recording: RemoteShell = {
      label: plain.label,
      async exec(command, options) {
        const result = await plain.exec(command, options);
        stdout = result.stdout;
        return result;
      },
    };
    const snaps = await readSnapshots(new HookedShell(recording, swap), root, ["shared/f.txt"], { cache, sharedDirectories: "allow" });
    expect(snaps.get("shared/f.txt")!.rejected?.code).toBe("conflict");
    expect(new TextDecoder().decode(stdout)).not.toContain("SECRET");
    // The name is a symlink now: the next read refuses it outright.
    const after = await readSnapshots(plain, root, ["shared/f.txt"], { cache, sharedDirectories: "allow" });
    expect(after.get("shared/f.txt")!.rejected?.code).toBe("symlink_rejected");
    renameSync(join(root, "shared"), join(root, "gone"));
    writeFileSync(join(root, "x"), "");
  });
});

describe("tools missing on the host", () => {
  test("a userland without zstd and gzip sends as it is", async () => {
    const bin = tempDir();
    const root = makeTree({ "a.txt": "q".repeat(100_000) });
    const busybox = Bun.which("busybox")!;
    for (const tool of ["sh", "stat", "id", "head", "dd", "cat", "mktemp", "sha256sum", "ls", "rm", "printf"]) symlinkSync(busybox, join(bin, tool));
    const shell = new LocalShell({ shell: [busybox, "sh"], env: { PATH: bin } });
    const snaps = await readSnapshots(shell, root, ["a.txt"], { compress: true });
    expect(snaps.get("a.txt")!.transfer).toBe("downloaded");
    expect(snaps.get("a.txt")!.sha256).toBe(sha256Hex("q".repeat(100_000)));
  });
});
