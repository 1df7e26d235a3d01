import { afterEach, describe, expect, test } from "bun:test";
import net from "node:net";
import { startTcpProxy } from "../support/tcp_proxy.ts";
import type { TcpProxy } from "../support/tcp_proxy.ts";

// The fault injector itself must be exact, or the tests built on it prove nothing.
interface Sink {
  port: number;
  received: () => number;
  closed: Promise<void>;
  server: net.Server;
}

function sink(reply?: Buffer): Promise<Sink> {
  let received = 0;
  let onClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => (onClosed = resolve));
  const server = net.createServer((socket) => {
    if (reply) socket.write(reply);
    socket.on("data", (chunk) => (received += chunk.length));
    socket.on("error", () => {});
    socket.on("close", () => onClosed());
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ port: (server.address() as net.AddressInfo).port, received: () => received, closed, server })
    )
  );
}

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const fn of cleanup) fn();
  cleanup = [];
});

async function withProxy(target: Sink, cut?: { up?: number; down?: number }): Promise<TcpProxy> {
  const proxy = await startTcpProxy({ targetPort: target.port, ...(cut ? { cutAfterBytes: cut } : {}) });
  cleanup.push(() => void proxy.close(), () => target.server.close());
  return proxy;
}

describe("startTcpProxy", () => {
  test("forwards both ways and counts bytes", async () => {
    const target = await sink(Buffer.from("hello"));
    const proxy = await withProxy(target);
    const client = net.connect(proxy.port, "127.0.0.1");
    const got = await new Promise<string>((resolve) => client.once("data", (d) => resolve(d.toString())));
    client.write(Buffer.alloc(3000, 1));
    client.end();
    await target.closed;
    expect(got).toBe("hello");
    expect(target.received()).toBe(3000);
    expect([proxy.bytesUp, proxy.bytesDown, proxy.accepted]).toEqual([3000, 5, 1]);
  });

  test("cutAfterBytes.up forwards exactly N client bytes, then cuts both sides", async () => {
    const target = await sink();
    const proxy = await withProxy(target, { up: 1000 });
    const client = net.connect(proxy.port, "127.0.0.1");
    client.on("error", () => {});
    const clientClosed = new Promise<void>((resolve) => client.on("close", () => resolve()));
    client.write(Buffer.alloc(5000, 2));
    await Promise.all([target.closed, clientClosed]);
    expect(target.received()).toBe(1000);
  });

  test("cutAfterBytes.down forwards exactly N server bytes", async () => {
    const target = await sink(Buffer.alloc(4000, 3));
    const proxy = await withProxy(target, { down: 1500 });
    const client = net.connect(proxy.port, "127.0.0.1");
    client.on("error", () => {});
    let got = 0;
    client.on("data", (d) => (got += d.length));
    await new Promise<void>((resolve) => client.on("close", () => resolve()));
    expect(got).toBe(1500);
  });

  test("setCutAfterBytes applies to new connections; cutAll cuts open ones", async () => {
    const target = await sink();
    const proxy = await withProxy(target);
    proxy.setCutAfterBytes({ up: 10 });
    const client = net.connect(proxy.port, "127.0.0.1");
    client.on("error", () => {});
    client.write(Buffer.alloc(100));
    await target.closed;
    expect(target.received()).toBe(10);
    proxy.setCutAfterBytes(undefined);
    const second = net.connect(proxy.port, "127.0.0.1");
    second.on("error", () => {});
    await new Promise<void>((resolve) => second.on("connect", () => resolve()));
    await new Promise((r) => setTimeout(r, 20));
    expect(proxy.open).toBe(1);
    const closed = new Promise<void>((resolve) => second.on("close", () => resolve()));
    proxy.cutAll();
    await closed;
    expect(proxy.accepted).toBe(2);
  });
});
