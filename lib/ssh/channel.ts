/**
 * One exec channel on an ssh2 client: open it, stream stdin with
 * backpressure and progress, collect stdout/stderr, and report how it ended
 * (exit code, signal, or closed without an exit status).
 *
 * @module
 */
import type { Client, ClientChannel } from "ssh2";
import type { GateAnswer } from "../remote/stdin_gate.ts";
import { OutputBuffer } from "../remote/output_buffer.ts";

/** How a channel ended. */
export interface ChannelOutcome {
  stdout: Uint8Array;
  stderr: Uint8Array;
  exitCode: number | null;
  /** `SIGKILL`-style name when the program died of a signal. */
  signal: string | null;
  /** False when the channel closed without an exit status (outcome unknown). */
  gotExit: boolean;
  /** stderr bytes dropped beyond `maxStderrBytes`. */
  stderrDropped: number;
}

/** Hooks of {@linkcode runChannel}. */
export interface ChannelHooks {
  /** Bytes of stdin that belong to the caller (a sudo password line before them is not counted). */
  stdinOffset?: number;
  onStdinProgress?: (sent: number, total: number) => void;
  /** Sees every stderr chunk as it arrives. */
  onStderr?: (chunk: Uint8Array) => void;
  /** Most stdout + stderr bytes kept; past it nothing more is stored and `onOverflow("output")` fires once. */
  maxOutputBytes?: number;
  /** Most stdout bytes kept; past it nothing more is stored and `onOverflow("stdout")` fires once. */
  maxStdoutBytes?: number;
  /** Most stderr bytes kept; later ones are dropped (counted), `onStderr` still sees every chunk. */
  maxStderrBytes?: number;
  onOverflow?: (what: "output" | "stdout") => void;
  /** A go-ahead handshake: stdin stays open after its bytes, and this answers the program's prompt (lib/remote/shell.ts stdinGate). */
  gate?: GateAnswer;
}

/** Write stdin in pieces this large so progress is reported and backpressure honoured. */
const STDIN_CHUNK = 256 * 1024;

/** How the program ended, as the server's exit-status / exit-signal said. */
interface ExitStatus {
  code: number | null;
  signal: string | null;
}

/**
 * Exit statuses by channel, recorded from the moment the channel exists.
 * ssh2 emits `exit` while it parses the packet, and a fast program's whole
 * answer (data, exit-status, close) can arrive in the same read as the
 * exec's success: its callback runs, and the `exit` is emitted before a
 * caller that awaited the channel resumes to listen. Data and close are
 * stream events and wait for a reader; `exit` does not — it was seen lost
 * under load as a null exit code of a program that had exited.
 */
const exits = new WeakMap<ClientChannel, ExitStatus>();
const watched = new WeakSet<ClientChannel>();

function watchExit(channel: ClientChannel): void {
  if (watched.has(channel)) return;
  watched.add(channel);
  channel.on("exit", (code: number | null, signalName?: string) => {
    exits.set(channel, {
      code: typeof code === "number" ? code : null,
      signal: typeof signalName === "string" ? `SIG${signalName.replace(/^SIG/, "")}` : null,
    });
  });
}

/**
 * Open an exec channel; its exit status is recorded from the first moment
 * (see `exits`). Rejects with ssh2's error (e.g. "Channel open failure").
 *
 * @example
 * ```ts
 * const channel = await openExecChannel(client, "sh -c 'id -u'");
 * ```
 */
export function openExecChannel(client: Client, command: string): Promise<ClientChannel> {
  return new Promise((resolve, reject) => {
    try {
      client.exec(command, (error, channel) => {
        if (error) return reject(error);
        watchExit(channel);
        resolve(channel);
      });
    } catch (error) {
      reject(error);
    }
  });
}

/**
 * Feed `stdin` (then EOF) and collect everything until the channel closes.
 *
 * @example
 * ```ts
 * const outcome = await runChannel(channel, new TextEncoder().encode("data"), {});
 * if (!outcome.gotExit) console.log("outcome unknown");
 * ```
 */
export function runChannel(channel: ClientChannel, stdin: Uint8Array | undefined, hooks: ChannelHooks): Promise<ChannelOutcome> {
  return new Promise((resolve) => {
    watchExit(channel);
    // One buffer that grows in place (output_buffer.ts), as LocalShell's: a
    // snapshot reply joined from its chunks was held twice at the join
    // (2 GiB for a 1 GiB file). Without a bound, the chunks are joined.
    const bound = Math.min(hooks.maxStdoutBytes ?? Infinity, hooks.maxOutputBytes ?? Infinity);
    const stdout: Buffer[] | OutputBuffer = Number.isFinite(bound) ? new OutputBuffer(bound) : [];
    const stderr: Buffer[] = [];
    let closed = false;
    let kept = 0;
    let stdoutBytes = 0;
    let stderrKept = 0;
    let stderrDropped = 0;
    let overflowed = false;
    const overflow = (what: "output" | "stdout"): void => {
      overflowed = true;
      hooks.onOverflow?.(what);
    };
    const keep = (into: Buffer[] | OutputBuffer, chunk: Buffer): void => {
      if (overflowed) return;
      kept += chunk.length;
      if (hooks.maxOutputBytes !== undefined && kept > hooks.maxOutputBytes) return overflow("output");
      if (Array.isArray(into)) into.push(chunk);
      else into.append(chunk);
    };
    channel.on("data", (chunk: Buffer) => {
      if (overflowed) return;
      stdoutBytes += chunk.length;
      // Past the limit the chunk is not kept: never more than the limit in memory.
      if (hooks.maxStdoutBytes !== undefined && stdoutBytes > hooks.maxStdoutBytes) return overflow("stdout");
      keep(stdout, chunk);
      hooks.gate?.push(chunk);
    });
    channel.stderr.on("data", (chunk: Buffer) => {
      hooks.onStderr?.(chunk);
      const room = hooks.maxStderrBytes === undefined ? chunk.length : Math.max(0, hooks.maxStderrBytes - stderrKept);
      const part = room >= chunk.length ? chunk : chunk.subarray(0, room);
      stderrDropped += chunk.length - part.length;
      if (part.length === 0) return;
      stderrKept += part.length;
      keep(stderr, part);
    });
    // The channel's stream may error on a dropped connection; the close that
    // follows decides the outcome.
    channel.on("error", () => {});
    channel.on("close", () => {
      if (closed) return;
      closed = true;
      const exit = exits.get(channel);
      resolve({
        stdout: Array.isArray(stdout) ? Buffer.concat(stdout) : stdout.bytes(),
        stderr: Buffer.concat(stderr),
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        gotExit: exit !== undefined,
        stderrDropped,
      });
    });
    void writeStdin(channel, stdin, hooks, () => closed);
  });
}

async function writeStdin(
  channel: ClientChannel,
  stdin: Uint8Array | undefined,
  hooks: ChannelHooks,
  isClosed: () => boolean,
): Promise<void> {
  const bytes = stdin ?? new Uint8Array(0);
  const offset = hooks.stdinOffset ?? 0;
  const total = Math.max(0, bytes.length - offset);
  try {
    for (let start = 0; start < bytes.length; start += STDIN_CHUNK) {
      if (isClosed() || hooks.gate?.ended) return;
      const end = Math.min(bytes.length, start + STDIN_CHUNK);
      const accepted = channel.write(Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start));
      if (end > offset) hooks.onStdinProgress?.(end - offset, total);
      if (!accepted) await drained(channel, isClosed);
    }
    if (isClosed()) return;
    // with a gate, stdin stays open for the answer (GateAnswer ends it)
    if (hooks.gate !== undefined) hooks.gate.stdinDone();
    else channel.end();
  } catch {
    // Writing to a channel that just closed: the close event reports the outcome.
  }
}

function drained(channel: ClientChannel, isClosed: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (isClosed()) return resolve();
    const done = (): void => {
      channel.off("drain", done);
      channel.off("close", done);
      resolve();
    };
    channel.on("drain", done);
    channel.on("close", done);
  });
}
