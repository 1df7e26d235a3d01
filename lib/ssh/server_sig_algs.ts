/**
 * The server's `server-sig-algs` (RFC 8308 EXT_INFO), which decides how an
 * RSA user key signs. OpenSSH picks the first of rsa-sha2-512, rsa-sha2-256
 * the server lists; ssh2 1.17 always prefers rsa-sha2-256 and never retries,
 * so a server that accepts only rsa-sha2-512 (`PubkeyAcceptedAlgorithms
 * rsa-sha2-512`) refuses the key although it advertises both. ssh2 does not
 * expose the extension, so this wraps its EXT_INFO handler — an internal of
 * the pinned ssh2 version; test/ssh/auth_sshd.test.ts fails if it moves.
 *
 * @module
 */
import type { Client } from "ssh2";

/** What the server advertised: `undefined` before EXT_INFO (or when it could not be observed), `null` for none. */
export interface ServerSigAlgs {
  /** The advertised algorithms, `null` when the server sent EXT_INFO without them or no EXT_INFO. */
  algorithms(): string[] | null | undefined;
  /** The RSA signature algorithm OpenSSH would choose, or `null` to let ssh2 decide (nothing advertised). */
  rsa(): "rsa-sha2-512" | "rsa-sha2-256" | null;
}

/**
 * Start observing `server-sig-algs` on a client; call right after
 * `client.connect()` (its protocol object exists from then on).
 *
 * @example
 * ```ts
 * client.connect(config);
 * const sigAlgs = observeServerSigAlgs(client);
 * ```
 */
export function observeServerSigAlgs(client: Client): ServerSigAlgs {
  let advertised: string[] | null | undefined;
  const handlers = (client as unknown as { _protocol?: { _handlers?: Record<string, unknown> } })._protocol?._handlers;
  const original = handlers?.EXT_INFO;
  if (handlers && typeof original === "function") {
    handlers.EXT_INFO = (protocol: unknown, extensions: { name: string; algs?: string[] }[]) => {
      if (advertised === undefined) advertised = extensions.find((e) => e.name === "server-sig-algs")?.algs ?? null;
      return (original as (p: unknown, e: unknown) => unknown)(protocol, extensions);
    };
  }
  return {
    algorithms: () => advertised,
    rsa: () => {
      if (!Array.isArray(advertised)) return null;
      if (advertised.includes("rsa-sha2-512")) return "rsa-sha2-512";
      if (advertised.includes("rsa-sha2-256")) return "rsa-sha2-256";
      return null;
    },
  };
}
