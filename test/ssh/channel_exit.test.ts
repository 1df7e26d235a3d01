/**
 * An exit status that arrives in the same tick as the exec's success must
 * not be lost. ssh2 emits `exit` while it parses the packet; a fast program's
 * whole answer can come in one read, before the caller that awaited the
 * channel resumes. Seen on the real sshd under CPU load as `exitCode: null`
 * for programs that had exited (1 in ~10 runs of connection_sshd.test.ts
 * with two busy loops beside it); here the timing is forced.
 */
import { describe, expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import type { Client, ClientChannel } from "ssh2";
import { openExecChannel, runChannel } from "../../lib/ssh/channel.ts";

/** FAULT INJECTION: an ssh2 client stand-in whose exec answers everything at once, exit status included. */
function instantClient(exit: [number | null, string?]): Client {
  return {
    exec(_command: string, callback: (error: Error | undefined, channel: ClientChannel) => void) {
      const channel = Object.assign(new PassThrough(), { stderr: new PassThrough() });
      callback(undefined, channel as unknown as ClientChannel);
      channel.emit("exit", ...exit); // same tick as the callback, as a single read would do it
      setTimeout(() => channel.emit("close"), 5);
      return this;
    },
  } as unknown as Client;
}

describe("exit status emitted with the exec's success (fault-injected instant channel)", () => {
  const cases: { name: string; exit: [number | null, string?]; want: { exitCode: number | null; signal: string | null } }[] = [
    { name: "an exit code", exit: [3], want: { exitCode: 3, signal: null } },
    { name: "a signal", exit: [null, "KILL"], want: { exitCode: null, signal: "SIGKILL" } },
  ];
  for (const c of cases) {
    test(`${c.name} is kept`, async () => {
      const channel = await openExecChannel(instantClient(c.exit), "true");
      const outcome = await runChannel(channel, undefined, {});
      expect(outcome).toMatchObject({ gotExit: true, ...c.want });
    });
  }
});
