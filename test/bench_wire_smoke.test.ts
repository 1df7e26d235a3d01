/**
 * The wire bench's own tools, checked for correctness (not timed): the
 * throttled link delivers every byte in order, both ways, and never faster
 * than its rate (a lower bound, which load cannot break); the `sed -i`
 * peer makes exactly the change of the patch, special characters included.
 */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256Hex } from "../bench/fixtures.ts";
import { scenarioOf, sedCommand, startLink } from "../bench/wire.ts";

describe("wire bench: the throttled link", () => {
  test("echoes 1 MiB intact both ways, counts it, and takes at least the time its rate allows", async () => {
    const echo = net.createServer((socket) => socket.pipe(socket));
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", () => resolve()));
    const link = await startLink((echo.address() as net.AddressInfo).port, 4 * 1024 * 1024, 20);
    try {
      const payload = new Uint8Array(1024 * 1024).map((_, i) => (i * 131) % 251);
      const socket = net.connect(link.port, "127.0.0.1");
      const chunks: Buffer[] = [];
      let got = 0;
      const started = performance.now();
      const done = new Promise<void>((resolve) => {
        socket.on("data", (d: Buffer) => {
          chunks.push(d);
          got += d.length;
          if (got >= payload.length) resolve();
        });
      });
      socket.write(payload);
      await done;
      const ms = performance.now() - started;
      socket.destroy();
      expect(sha256Hex(new Uint8Array(Buffer.concat(chunks)))).toBe(sha256Hex(payload));
      // 1 MiB each way at 4 MiB/s: at least ~250 ms plus one round trip.
      expect(ms).toBeGreaterThan(250);
      const { up, down } = await link.stats();
      expect(up).toBe(payload.length);
      expect(down).toBe(payload.length);
      await link.reset();
      expect(await link.stats()).toEqual({ up: 0, down: 0 });
    } finally {
      await link.close();
      echo.close();
    }
  });
});

describe("wire bench: the sed -i peer", () => {
  test("makes exactly the patch's change to each file", () => {
    const scenario = scenarioOf("check", [{ path: "a.ts", lines: 3000, seed: 7 }, { path: "b.ts", lines: 3000, seed: 8 }]);
    const dir = mkdtempSync(join(tmpdir(), "sap-wire-sed-"));
    try {
      for (const file of scenario.files) {
        const path = join(dir, file.path);
        writeFileSync(path, file.bytes);
        const run = spawnSync("sh", ["-c", sedCommand(file, path)]);
        expect(run.status).toBe(0);
        expect(sha256Hex(readFileSync(path))).toBe(file.expectedSha256);
      }
      const special = { ...scenario.files[0]!, newLine: `a/b\\c & 'q' $x` };
      const path = join(dir, "special");
      writeFileSync(path, "one\ntwo\n");
      expect(spawnSync("sh", ["-c", sedCommand({ ...special, line: 2 }, path)]).status).toBe(0);
      expect(readFileSync(path, "utf8")).toBe(`one\na/b\\c & 'q' $x\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
