/**
 * A throttled link on 127.0.0.1 for the wire bench (SPEC §11.1): a TCP
 * proxy to a local port that behaves like a slow network path — each
 * direction has its own bandwidth (bytes leave one after another at
 * `rate` bytes/s, shared by every connection, as on one link) and one-way
 * delay (`rtt / 2`), with a bounded bottleneck buffer (the sender is paused
 * while more than that is queued, so TCP's own flow control sees the slow
 * link instead of an unbounded queue in this process).
 *
 * It runs as its own process so that its timers do not compete with the
 * client under test on the event loop, and every contender — ours, `ssh`,
 * `scp` — goes through the very same link. (`tc netem` in a network
 * namespace would be the kernel's version of this; the sch_netem module is
 * not available in this project's containers, so the bench uses this.)
 *
 * Usage: `bun bench/throttle_proxy.ts --target PORT --rate BYTES_PER_S --rtt MS`.
 * Prints `LISTEN <port>` when ready. Commands on stdin, one per line:
 * `stats` → `STATS <bytes up> <bytes down> <connections>` (counted as
 * delivered), `reset` → zero the counters (`OK`). Ends when stdin closes.
 *
 * @module
 */
import net from "node:net";
import { createInterface } from "node:readline";

interface Args {
  target: number;
  rate: number;
  rttMs: number;
}

function parseArgs(argv: readonly string[]): Args {
  const get = (name: string): number => {
    const i = argv.indexOf(`--${name}`);
    const value = i < 0 ? NaN : Number(argv[i + 1]);
    if (!Number.isFinite(value) || value < 0) throw new Error(`throttle_proxy: --${name} <number> is required`);
    return value;
  };
  return { target: get("target"), rate: get("rate"), rttMs: get("rtt") };
}

/** Pieces a chunk is cut into, so that the link delivers smoothly. */
const PIECE = 16 * 1024;

/** One direction of the link, shared by every connection. */
class Direction {
  readonly #rate: number;
  readonly #delayMs: number;
  /** When the link is free to start sending the next byte (ms, performance.now()). */
  #free = 0;
  delivered = 0;

  constructor(rate: number, delayMs: number) {
    this.#rate = rate;
    this.#delayMs = delayMs;
  }

  /** When a piece of `n` bytes handed over now arrives at the far end. */
  arrival(n: number): number {
    const now = performance.now();
    if (this.#rate === 0) return now + this.#delayMs;
    this.#free = Math.max(this.#free, now) + (n * 1000) / this.#rate;
    return this.#free + this.#delayMs;
  }
}

/** A queue of pieces from one socket to another, released at their arrival times. */
class Pipe {
  readonly #from: net.Socket;
  readonly #to: net.Socket;
  readonly #link: Direction;
  readonly #limit: number;
  readonly #queue: { at: number; piece: Buffer }[] = [];
  #queued = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #ended = false;

  constructor(from: net.Socket, to: net.Socket, link: Direction, limit: number) {
    this.#from = from;
    this.#to = to;
    this.#link = link;
    this.#limit = limit;
    from.on("data", (chunk: Buffer) => this.#push(chunk));
    from.on("end", () => {
      this.#ended = true;
      this.#pump();
    });
  }

  #push(chunk: Buffer): void {
    for (let at = 0; at < chunk.length; at += PIECE) {
      const piece = chunk.subarray(at, Math.min(chunk.length, at + PIECE));
      this.#queue.push({ at: this.#link.arrival(piece.length), piece });
      this.#queued += piece.length;
    }
    if (this.#queued > this.#limit) this.#from.pause();
    this.#pump();
  }

  #pump(): void {
    if (this.#timer !== null) return;
    const now = performance.now();
    while (this.#queue.length > 0 && this.#queue[0]!.at <= now + 0.5) {
      const { piece } = this.#queue.shift()!;
      this.#queued -= piece.length;
      this.#link.delivered += piece.length;
      if (!this.#to.destroyed) this.#to.write(piece);
    }
    if (this.#queued <= this.#limit && this.#from.isPaused()) this.#from.resume();
    if (this.#queue.length > 0) {
      this.#timer = setTimeout(() => {
        this.#timer = null;
        this.#pump();
      }, Math.max(0, this.#queue[0]!.at - now));
    } else if (this.#ended && !this.#to.destroyed) {
      this.#to.end();
    }
  }
}

const args = parseArgs(process.argv.slice(2));
const up = new Direction(args.rate, args.rttMs / 2);
const down = new Direction(args.rate, args.rttMs / 2);
// The bottleneck buffer: 50 ms of the link, at least 64 KiB.
const limit = Math.max(64 * 1024, Math.round(args.rate * 0.05));
let connections = 0;
let upBase = 0;
let downBase = 0;

// Half-open sockets: an end travels through the link like the data before
// it (a socket that closed at once would cut the bytes still delayed).
const server = net.createServer({ allowHalfOpen: true }, (client) => {
  connections++;
  client.setNoDelay(true);
  const upstream = net.connect({ port: args.target, host: "127.0.0.1", allowHalfOpen: true });
  upstream.setNoDelay(true);
  new Pipe(client, upstream, up, limit);
  new Pipe(upstream, client, down, limit);
  const close = (): void => {
    client.destroy();
    upstream.destroy();
  };
  client.on("error", close);
  upstream.on("error", close);
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`LISTEN ${(server.address() as net.AddressInfo).port}\n`);
});

const commands = createInterface({ input: process.stdin });
commands.on("line", (line) => {
  const command = line.trim();
  if (command === "stats") process.stdout.write(`STATS ${up.delivered - upBase} ${down.delivered - downBase} ${connections}\n`);
  else if (command === "reset") {
    upBase = up.delivered;
    downBase = down.delivered;
    connections = 0;
    process.stdout.write("OK\n");
  } else process.stdout.write(`ERROR unknown command\n`);
});
commands.on("close", () => {
  server.close();
  process.exit(0);
});
