/**
 * `ProxyCommand`: the user's own ssh_config names a program whose stdin and
 * stdout are the connection (`nc %h %p`, `ssh -W %h:%p jump`, `aws ssm
 * start-session …`, `cloudflared access ssh …`). It runs as OpenSSH runs it:
 * `$SHELL -c "exec <command>"` (tokens already expanded by the resolver),
 * in its own process group so that closing the connection ends it and
 * whatever it started. Its stderr is kept (the last 4 KiB) for the failure
 * message. Only connectSsh with `allowProxyCommand` starts one: the command
 * comes from configuration, never from a model's input.
 *
 * @module
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { Duplex } from "node:stream";

/** Bytes of the command's stderr kept for messages. */
const STDERR_TAIL = 4096;

/** A running ProxyCommand: the stream ssh2 talks over, and what it said. */
export interface ProxyCommandTransport {
  /** Hand this to ssh2 as `sock`. */
  stream: Duplex;
  /** The last bytes the command wrote to stderr (decoded, trimmed). */
  stderr(): string;
  /** How it ended, once it did (`null` while it runs). */
  exit(): { code: number | null; signal: string | null } | null;
  /** Resolves when it has ended. */
  exited: Promise<void>;
  /** End it and its process group (SIGHUP as OpenSSH, SIGKILL shortly after). */
  stop(): void;
}

/**
 * Start `command` (expanded) as a connection's transport.
 *
 * @example
 * ```ts
 * const proxy = startProxyCommand("nc 127.0.0.1 2222");
 * client.connect({ ...config, sock: proxy.stream });
 * ```
 */
export function startProxyCommand(command: string): ProxyCommandTransport {
  const shell = process.env.SHELL || "/bin/sh";
  const child = spawn(shell, ["-c", `exec ${command}`], { stdio: ["pipe", "pipe", "pipe"], detached: true });
  let tail = Buffer.alloc(0);
  let ended: { code: number | null; signal: string | null } | null = null;
  child.stderr!.on("data", (chunk: Buffer) => {
    tail = Buffer.concat([tail, chunk]);
    if (tail.length > STDERR_TAIL) tail = tail.subarray(tail.length - STDERR_TAIL);
  });
  const stream = new ProxyStream(child);
  let markExited: () => void = () => {};
  const exited = new Promise<void>((resolve) => (markExited = resolve));
  child.on("error", (error) => {
    ended ??= { code: null, signal: null };
    markExited();
    tail = Buffer.concat([tail, Buffer.from(`\n${shell}: ${error.message}`)]);
    stream.destroy(error);
  });
  child.on("exit", (code, signal) => {
    ended = { code, signal };
    markExited();
  });
  const stop = (): void => {
    if (ended !== null || child.pid === undefined) return;
    const pid = child.pid;
    const signalGroup = (signal: NodeJS.Signals): void => {
      try {
        process.kill(-pid, signal);
      } catch {
        // already gone
      }
    };
    signalGroup("SIGHUP");
    const timer = setTimeout(() => signalGroup("SIGKILL"), 1000);
    timer.unref?.();
    child.once("exit", () => clearTimeout(timer));
  };
  stream.once("close", stop);
  return {
    stream,
    stderr: () => tail.toString("utf8").trim(),
    exit: () => ended,
    exited,
    stop,
  };
}

/** The child's stdout as the readable side, its stdin as the writable side. */
class ProxyStream extends Duplex {
  readonly #child: ChildProcess;

  constructor(child: ChildProcess) {
    super();
    this.#child = child;
    child.stdout!.on("data", (chunk: Buffer) => {
      if (!this.push(chunk)) child.stdout!.pause();
    });
    child.stdout!.on("end", () => this.push(null));
    child.stdin!.on("error", (error) => this.destroy(error));
  }

  override _read(): void {
    this.#child.stdout!.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#child.stdin!.write(chunk, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#child.stdin!.end(callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#child.stdin!.destroy();
    this.#child.stdout!.destroy();
    callback(error);
  }
}
