/**
 * The ssh-agent, as OpenSSH uses it: its keys are listed once per
 * connection attempt (bounded in time), and each key the auth order picks is
 * offered on its own — so `IdentitiesOnly` can restrict the agent to the
 * listed identities, a listed key whose file is encrypted is signed by the
 * agent without its passphrase, and RSA keys sign with the algorithm the
 * server asked for. An agent that cannot be reached (stale or missing
 * `SSH_AUTH_SOCK`, a dead socket, no answer) is reported and skipped:
 * OpenSSH falls back to the key files, and so does this adapter.
 *
 * @module
 */
import type * as Net from "node:net";
import type { BaseAgent, ParsedKey } from "ssh2";
import type { Ssh2Module } from "./ssh2_module.ts";
import { lazyBuiltin } from "../remote/lazy_builtin.ts";

/** How long listing the agent's keys may take before the agent counts as unreachable. */
export const AGENT_TIMEOUT_MS = 5000;

/** The agent's keys, or why there are none. */
export type AgentListing = { ok: true; keys: ParsedKey[] } | { ok: false; reason: string };

/**
 * List the keys of the agent at `socket` (SSH_AGENTC_REQUEST_IDENTITIES),
 * within `timeoutMs`. Certificates and key types ssh2 cannot parse are
 * left out.
 *
 * @example
 * ```ts
 * const listing = await listAgentKeys(ssh2, process.env.SSH_AUTH_SOCK!);
 * if (listing.ok) console.log(listing.keys.length);
 * ```
 */
export function listAgentKeys(ssh2: Ssh2Module, socket: string, timeoutMs: number = AGENT_TIMEOUT_MS): Promise<AgentListing> {
  return new Promise((resolve) => {
    let settled = false;
    // node:net is loaded here, not with the module: mod.ts loads this
    // file for every user, and a local apply never talks to an agent.
    const sock = lazyBuiltin<typeof Net>("node:net").connect(socket);
    const done = (listing: AgentListing): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(listing);
    };
    const timer = setTimeout(() => done({ ok: false, reason: `no answer within ${timeoutMs} ms` }), timeoutMs);
    sock.on("error", (error: NodeJS.ErrnoException) => done({ ok: false, reason: error.code ?? error.message }));
    sock.on("close", () => done({ ok: false, reason: "the agent closed the connection" }));
    sock.on("connect", () => {
      const protocol = new ssh2.AgentProtocol(true);
      protocol.on("error", (error: Error) => done({ ok: false, reason: error.message }));
      protocol.pipe(sock).pipe(protocol);
      protocol.getIdentities((error, keys) => {
        if (error) return done({ ok: false, reason: error.message });
        const usable = (keys ?? []).filter((k): k is ParsedKey => !(k instanceof Error) && typeof k?.getPublicSSH === "function");
        done({ ok: true, keys: usable });
      });
    });
  });
}

/**
 * An agent that offers exactly one of the real agent's keys, so the adapter
 * decides the order key by key. `signatureType` (`rsa-sha2-512`,
 * `rsa-sha2-256`) makes an RSA key sign with that algorithm (ssh2 alone picks
 * rsa-sha2-256 whenever the server lists it, which fails on a server that
 * accepts only rsa-sha2-512).
 *
 * @example
 * ```ts
 * const method = { type: "agent", username, agent: singleKeyAgent(ssh2, socket, key, "rsa-sha2-512") };
 * ```
 */
export function singleKeyAgent(ssh2: Ssh2Module, socket: string, key: ParsedKey, signatureType: string | null): BaseAgent {
  const real = new ssh2.OpenSSHAgent(socket);
  const hash = signatureType === "rsa-sha2-512" ? "sha512" : signatureType === "rsa-sha2-256" ? "sha256" : undefined;
  const offered = signatureType === null ? key : withSignatureType(key, signatureType, null);
  const agent = Object.create(ssh2.BaseAgent.prototype) as BaseAgent;
  Object.assign(agent, {
    getIdentities(cb: (error: Error | null, keys?: ParsedKey[]) => void): void {
      cb(null, [offered]);
    },
    sign(_pub: unknown, data: Buffer, options: unknown, cb?: (error: Error | null, signature?: Buffer) => void): void {
      const callback = typeof options === "function" ? (options as typeof cb) : cb;
      real.sign(key, data, hash === undefined ? {} : { hash }, (error, signature) => callback?.(error ?? null, signature));
    },
  });
  return agent;
}

/**
 * `key`, presenting `type` as its algorithm (ssh2 writes a key's `type` as
 * the public-key algorithm of the auth request and of the signature) and,
 * for a private key, signing with `hash`. The key blob stays the key's own.
 *
 * @example
 * ```ts
 * const key512 = withSignatureType(rsaKey, "rsa-sha2-512", "sha512");
 * ```
 */
export function withSignatureType(key: ParsedKey, type: string, hash: "sha256" | "sha512" | null): ParsedKey {
  const wrapped = Object.create(key) as ParsedKey;
  Object.defineProperty(wrapped, "type", { value: type });
  if (hash !== null) Object.defineProperty(wrapped, "sign", { value: (data: Buffer) => key.sign(data, hash) });
  return wrapped;
}
