/**
 * A 127.0.0.1 TCP proxy in the test process, to break live connections on
 * purpose: cut every connection now, cut after N bytes in a direction, or
 * freeze (stop forwarding without closing, like a silent network partition).
 *
 * @module
 */
import net from "node:net";

/** Per-direction byte budgets after which a connection is cut. */
export interface CutAfterBytes {
  /** Client → server bytes forwarded before the cut. */
  up?: number;
  /** Server → client bytes forwarded before the cut. */
  down?: number;
}

/** Options of {@linkcode startTcpProxy}. */
export interface TcpProxyOptions {
  targetPort: number;
  /** Only 127.0.0.1 is allowed in this project's tests. */
  targetHost?: "127.0.0.1";
  /** Cut each new connection after these many bytes (exactly that many are forwarded). */
  cutAfterBytes?: CutAfterBytes;
  /** `reset` sends a TCP RST (default), `close` a FIN. */
  cutMode?: "reset" | "close";
}

/** A running proxy. */
export interface TcpProxy {
  host: "127.0.0.1";
  port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Connections currently open. */
  readonly open: number;
  /** Bytes forwarded so far, all connections. */
  readonly bytesUp: number;
  readonly bytesDown: number;
  /** Cut every open connection now. */
  cutAll(): void;
  /** Change the budget for connections accepted from now on (`undefined`: no cut). */
  setCutAfterBytes(cut: CutAfterBytes | undefined): void;
  /** Stop forwarding on every open connection without closing it. */
  freezeAll(): void;
  /**
   * A silent network partition: as {@linkcode TcpProxy.freezeAll}, and the
   * server side never hears of the client closing either (its connection
   * stays open until {@linkcode TcpProxy.close}), as across a dead link.
   */
  partitionAll(): void;
  /**
   * Hold the client → server bytes of every open connection (nothing is
   * dropped) until {@linkcode TcpProxy.releaseUp}, which forwards them in
   * ONE write per connection: the server then reads messages the client
   * sent apart in a single read, as a busy host would.
   */
  holdUp(): void;
  /** Forward what {@linkcode TcpProxy.holdUp} held, one write per connection, and stop holding. */
  releaseUp(): void;
  /** Client → server bytes held right now, all connections. */
  readonly heldUp: number;
  /** Stop listening and cut everything. */
  close(): Promise<void>;
}

/**
 * Start a proxy on 127.0.0.1 at a free port forwarding to `targetPort`.
 *
 * @example
 * ```ts
 * const proxy = await startTcpProxy({ targetPort: sshd.port });
 * const shell = await connectSsh({ host: "127.0.0.1", port: proxy.port, ... });
 * proxy.cutAll(); // the next exec reconnects
 * ```
 */
export async function startTcpProxy(options: TcpProxyOptions): Promise<TcpProxy> {
  const mode = options.cutMode ?? "reset";
  let cut = options.cutAfterBytes;
  let accepted = 0;
  let bytesUp = 0;
  let bytesDown = 0;
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket; frozen: boolean; partitioned: boolean; held: Buffer[] | null }>();

  const kill = (socket: net.Socket): void => {
    if (socket.destroyed) return;
    if (mode === "reset" && typeof socket.resetAndDestroy === "function") socket.resetAndDestroy();
    else socket.destroy();
  };

  const server = net.createServer((client) => {
    accepted++;
    const budget = cut ? { ...cut } : undefined;
    const upstream = net.connect(options.targetPort, options.targetHost ?? "127.0.0.1");
    const pair = { client, upstream, frozen: false, partitioned: false, held: null as Buffer[] | null };
    pairs.add(pair);
    const cutPair = (): void => {
      kill(client);
      kill(upstream);
    };
    const pipe = (from: net.Socket, to: net.Socket, direction: "up" | "down"): void => {
      from.on("data", (chunk: Buffer) => {
        if (pair.frozen) return;
        if (direction === "up" && pair.held !== null) {
          pair.held.push(chunk);
          return;
        }
        const left = budget?.[direction];
        if (left !== undefined && chunk.length >= left) {
          if (left > 0) to.write(chunk.subarray(0, left));
          budget![direction] = 0;
          if (direction === "up") bytesUp += left;
          else bytesDown += left;
          // Let the last bytes leave before the cut.
          setImmediate(cutPair);
          return;
        }
        if (budget && left !== undefined) budget[direction] = left - chunk.length;
        if (direction === "up") bytesUp += chunk.length;
        else bytesDown += chunk.length;
        if (!to.write(chunk)) {
          from.pause();
          to.once("drain", () => from.resume());
        }
      });
      from.on("end", () => pair.partitioned || to.end());
    };
    pipe(client, upstream, "up");
    pipe(upstream, client, "down");
    const forget = (): void => {
      // across a partition the server hears nothing: its side stays open
      if (pair.partitioned) kill(client);
      else {
        cutPair();
        pairs.delete(pair);
      }
    };
    client.on("error", forget);
    upstream.on("error", forget);
    client.on("close", forget);
    upstream.on("close", forget);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    host: "127.0.0.1",
    port,
    get accepted() {
      return accepted;
    },
    get open() {
      return pairs.size;
    },
    get bytesUp() {
      return bytesUp;
    },
    get bytesDown() {
      return bytesDown;
    },
    cutAll() {
      for (const pair of [...pairs]) {
        kill(pair.client);
        kill(pair.upstream);
      }
    },
    setCutAfterBytes(next) {
      cut = next;
    },
    freezeAll() {
      for (const pair of pairs) pair.frozen = true;
    },
    partitionAll() {
      for (const pair of pairs) {
        pair.frozen = true;
        pair.partitioned = true;
      }
    },
    holdUp() {
      for (const pair of pairs) pair.held ??= [];
    },
    releaseUp() {
      for (const pair of pairs) {
        const held = pair.held;
        pair.held = null;
        if (held === null || held.length === 0) continue;
        const joined = Buffer.concat(held);
        bytesUp += joined.length; // no cut budget applies to held bytes: holding is for timing, not cuts
        pair.upstream.write(joined);
      }
    },
    get heldUp() {
      let n = 0;
      for (const pair of pairs) for (const chunk of pair.held ?? []) n += chunk.length;
      return n;
    },
    close() {
      return new Promise<void>((resolve) => {
        for (const pair of [...pairs]) {
          kill(pair.client);
          kill(pair.upstream);
        }
        server.close(() => resolve());
      });
    },
  };
}
