/**
 * Shared bits of the real-sshd suites.
 *
 * @module
 */
import { expect } from "bun:test";
import { RemoteShellError } from "../../lib/remote/shell.ts";
import type { RemoteShell } from "../../lib/remote/shell.ts";
import type { SshOptions } from "../../lib/ssh/shell.ts";
import type { PatchFailure } from "../../lib/types.ts";
import type { Sshd } from "../support/sshd.ts";

/** Options that touch nothing of the machine's own ssh setup (no ~/.ssh, no agent). */
export function sshOptions(sshd: Sshd, knownHostsFile: string, extra: Partial<SshOptions> = {}): SshOptions {
  return {
    host: sshd.host,
    port: sshd.port,
    username: sshd.user,
    identityFile: sshd.userKeyPath,
    knownHostsFile,
    sshConfigFile: false,
    agent: false,
    ...extra,
  };
}

/** The typed failure a promise rejects with (fails the test if it resolves or throws something else). */
export async function failureOf(promise: Promise<unknown>): Promise<PatchFailure> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RemoteShellError) return error.failure;
    throw error;
  }
  expect.unreachable("expected a RemoteShellError");
  throw new Error("unreachable");
}

/** UTF-8 decode. */
export function text(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

/** UTF-8 encode. */
export function bytes(value: string): Uint8Array {
  return new TextEncoder().encode(value);
}

/** The log written since `offset`, once the connection it belongs to has finished. */
export async function logSince(sshd: Sshd, offset: number, until: RegExp = /Disconnected from|Connection closed by|do_cleanup/): Promise<string> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const segment = sshd.readLog().slice(offset);
    if (until.test(segment) || Date.now() > deadline) return segment;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Command lines of the processes running on the shell's host, read from
 * /proc (no procps needed: minimal images lack ps/pgrep). Zombies have none.
 */
export async function remoteCommandLines(shell: RemoteShell): Promise<string[]> {
  const listed = await shell.exec(
    `for p in /proc/[0-9]*; do [ -r "$p/cmdline" ] && tr '\\000' ' ' < "$p/cmdline" && echo; done 2>/dev/null; true`,
  );
  return text(listed.stdout).split("\n").map((line) => line.trim()).filter((line) => line !== "");
}

/** Kill (SIGKILL) the host's processes whose command line is exactly `commandLine`. */
export async function killRemote(shell: RemoteShell, commandLine: string): Promise<void> {
  await shell.exec(
    `for p in /proc/[0-9]*; do c=$(tr '\\000' ' ' < "$p/cmdline" 2>/dev/null); ` +
      `[ "$c" = ${JSON.stringify(commandLine + " ")} ] && kill -9 "\${p#/proc/}"; done 2>/dev/null; true`,
  );
}
