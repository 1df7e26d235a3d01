/**
 * The real-sshd environment of the SSH campaigns: a throwaway sshd on
 * 127.0.0.1 (test/support/sshd.ts), the uid/gid of its login user (trees
 * are handed to it when that is not us), and a connect helper that touches
 * nothing of the machine's own ssh setup.
 *
 * @module
 */
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { connectSsh } from "../../lib/ssh/shell.ts";
import type { SshShell } from "../../lib/ssh/shell.ts";
import { startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd } from "../support/sshd.ts";
import { tempDir } from "../support/local_trees.ts";
import type { Owner } from "./fixture.ts";

/** A running sshd and what the campaigns need around it. */
export interface SshEnv {
  sshd: Sshd;
  /** The login user's uid/gid, when it is not the current user (trees must be handed over). */
  owner: Owner | undefined;
  /** Its home directory (an executed injection could drop a canary there). */
  home: string;
  /** A directory for known_hosts files. */
  workDir: string;
  /** A fresh connection straight to sshd (with `sudo`: the programs run as root through sudo -n). */
  connect(options?: { sudo?: boolean }): Promise<SshShell>;
  stop(): Promise<void>;
}

/**
 * Start the sshd of a campaign.
 *
 * @example
 * ```ts
 * const env = await startSshEnv();
 * try { const shell = await env.connect(); … } finally { await env.stop(); }
 * ```
 */
export async function startSshEnv(): Promise<SshEnv> {
  const sshd = await startSshd();
  const workDir = tempDir("sap-hardening-ssh-");
  const knownHostsFile = writeKnownHosts(workDir, [sshd.hostKeyLine]);
  const me = process.env.USER ?? execFileSync("id", ["-un"]).toString().trim();
  const id = (flag: string): number => Number(execFileSync("id", [flag, sshd.user]).toString().trim());
  const owner = sshd.user === me || process.getuid?.() !== 0 ? undefined : { uid: id("-u"), gid: id("-g") };
  const home = execFileSync("sh", ["-c", 'getent passwd "$1" | cut -d: -f6', "sh", sshd.user]).toString().trim();
  return {
    sshd,
    owner,
    home,
    workDir,
    connect: (options = {}) =>
      connectSsh({
        host: "127.0.0.1",
        port: sshd.port,
        username: sshd.user,
        identityFile: sshd.userKeyPath,
        knownHostsFile,
        sshConfigFile: false,
        agent: false,
        ...(options.sudo ? { sudo: true } : {}),
      }),
    stop: async () => {
      await sshd.stop();
      rmSync(workDir, { recursive: true, force: true });
    },
  };
}
