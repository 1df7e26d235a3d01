/**
 * Opening SSH connections: host-key verification before authentication,
 * ProxyJump chains through `forwardOut` (every hop verified), and the mapping
 * of ssh2's errors to typed failures with recovery instructions.
 *
 * @module
 */
import type { Client, ConnectConfig, ServerHostKeyAlgorithm } from "ssh2";
import type { Duplex } from "node:stream";
import { failure, optionHint, warning } from "../failure.ts";
import {
  fingerprintSha256,
  formatKnownHostsLine,
  hostToken,
  keyTypeOfBlob,
  knownKeyTypes,
  parseKnownHosts,
  verifyHostKey,
} from "./known_hosts.ts";
import type { KnownHostEntry } from "./known_hosts.ts";
import { RemoteShellError } from "../remote/shell.ts";
import type { AuthPlan } from "./auth.ts";
import { loadSsh2, type Ssh2Module } from "./ssh2_module.ts";
import type { PatchFailure, Warning } from "../types.ts";

/** What to do with a host key that known_hosts does not vouch for. */
export type HostKeyPolicy = "strict" | "accept-new" | "insecure-accept-any";

/** Where known hosts are read from and (accept-new) appended to. */
export interface KnownHostsStore {
  /** Files read, in order (user files first, then global ones). */
  files: string[];
  /** The file `accept-new` appends to. */
  writeFile: string;
  read(path: string): string | undefined;
  append(path: string, line: string): void;
}

/** A host key added under `accept-new`. */
export interface AddedHostKey {
  host: string;
  port: number;
  fingerprint: string;
  file: string;
  line: string;
}

/** One hop (jump host or the target) of a connection. */
export interface HopConfig {
  /** `user@host:port`, for messages. */
  label: string;
  hostName: string;
  port: number;
  username: string;
  auth: AuthPlan;
  /** ssh_config `HostKeyAlias`: known_hosts is searched for this name (no port) instead. */
  hostKeyAlias?: string;
}

/** Shared settings of a connection attempt. */
export interface ConnectContext {
  policy: HostKeyPolicy;
  knownHosts: KnownHostsStore;
  readyTimeoutMs: number;
  keepaliveIntervalMs: number;
  /** Receives `insecure_host_key` warnings. */
  warnings: Warning[];
  /** Receives keys appended under accept-new. */
  addedHostKeys: AddedHostKey[];
}

/** Host-key algorithms to offer for a known key type (RSA keys sign with SHA-2 first). */
const ALGORITHMS_FOR_TYPE: Record<string, ServerHostKeyAlgorithm[]> = {
  "ssh-ed25519": ["ssh-ed25519"],
  "ecdsa-sha2-nistp256": ["ecdsa-sha2-nistp256"],
  "ecdsa-sha2-nistp384": ["ecdsa-sha2-nistp384"],
  "ecdsa-sha2-nistp521": ["ecdsa-sha2-nistp521"],
  "ssh-rsa": ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"],
  "ssh-dss": ["ssh-dss"],
};

/**
 * Connect every hop in order (the first directly, each next one through a
 * `forwardOut` stream of the previous) and return the clients, target last.
 * On failure every already-open client is ended and a
 * {@linkcode RemoteShellError} is thrown.
 *
 * @example
 * ```ts
 * const clients = await connectChain([jumpHop, targetHop], context);
 * const target = clients[clients.length - 1];
 * ```
 */
export async function connectChain(hops: readonly HopConfig[], context: ConnectContext): Promise<Client[]> {
  const clients: Client[] = [];
  const ssh2 = await loadSsh2();
  try {
    for (let i = 0; i < hops.length; i++) {
      const hop = hops[i]!;
      const previous = clients[i - 1];
      const sock = previous ? await forward(previous, hops[i - 1]!, hop, context.readyTimeoutMs) : undefined;
      clients.push(await connectHop(ssh2, hop, context, sock, i < hops.length - 1 ? "jump host" : "host"));
    }
    return clients;
  } catch (error) {
    for (const client of clients.reverse()) client.end();
    throw error;
  }
}

function forward(via: Client, viaHop: HopConfig, to: HopConfig, timeoutMs: number): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(
        new RemoteShellError(
          failure(
            "connect_failed",
            `jump host ${viaHop.label} did not open a connection to ${to.hostName}:${to.port} within ${timeoutMs} ms. ` +
              `Check that the target is reachable from the jump host; retry.`,
          ),
        ),
      );
    }, timeoutMs);
    via.forwardOut("127.0.0.1", 0, to.hostName, to.port, (error, stream) => {
      clearTimeout(timer);
      if (error) {
        reject(
          new RemoteShellError(
            failure(
              "connect_failed",
              `jump host ${viaHop.label} could not open a connection to ${to.hostName}:${to.port} ` +
                `(${error.message}). Check that ${to.hostName}:${to.port} is reachable from the jump host and that ` +
                `its sshd allows TCP forwarding (AllowTcpForwarding).`,
            ),
          ),
        );
      } else {
        resolve(stream);
      }
    });
  });
}

function loadEntries(store: KnownHostsStore): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  for (const file of store.files) {
    const text = store.read(file);
    if (text !== undefined) entries.push(...parseKnownHosts(text).entries);
  }
  return entries;
}

function connectHop(ssh2: Ssh2Module, hop: HopConfig, context: ConnectContext, sock: Duplex | undefined, role: string): Promise<Client> {
  const entries = loadEntries(context.knownHosts);
  // As OpenSSH: with HostKeyAlias the alias alone is the known_hosts name.
  const khHost = hop.hostKeyAlias ?? hop.hostName;
  const khPort = hop.hostKeyAlias === undefined ? hop.port : 22;
  const known = knownKeyTypes(entries, khHost, khPort);
  const offered = known.flatMap((type) => ALGORITHMS_FOR_TYPE[type] ?? []);
  let hostKeyFailure: PatchFailure | null = null;

  const hostVerifier = (key: Buffer, verify: (valid: boolean) => void): void => {
    const blob = new Uint8Array(key);
    const verdict = verifyHostKey(entries, khHost, khPort, blob);
    const type = keyTypeOfBlob(blob) ?? "unknown-type";
    const fingerprint = fingerprintSha256(blob);
    const line = formatKnownHostsLine(khHost, khPort, type, blob, { hashed: false });
    const where = `${role} ${hop.hostName} port ${hop.port}`;
    const files = context.knownHosts.files.join(", ");
    if (verdict.status === "match") return verify(true);
    if (context.policy === "insecure-accept-any" && verdict.status !== "revoked") {
      context.warnings.push(
        warning(
          "insecure_host_key",
          `the host key of ${where} was NOT verified (hostKeyPolicy "insecure-accept-any"; known_hosts says ` +
            `${verdict.status}); the server presented ${type} ${fingerprint}. Anyone on the network path could be ` +
            `this server. Add this line to ${context.knownHosts.writeFile} and use the strict policy: ${line}`,
        ),
      );
      return verify(true);
    }
    if (verdict.status === "unknown" && context.policy === "accept-new") {
      try {
        const hashedLine = formatKnownHostsLine(khHost, khPort, type, blob, { hashed: true });
        context.knownHosts.append(context.knownHosts.writeFile, hashedLine);
        context.addedHostKeys.push({
          host: khHost,
          port: khPort,
          fingerprint,
          file: context.knownHosts.writeFile,
          line: hashedLine,
        });
        return verify(true);
      } catch (error) {
        hostKeyFailure = failure(
          "host_key_unknown",
          `the host key of ${where} (${type} ${fingerprint}) is new and accept-new could not record it in ` +
            `${context.knownHosts.writeFile} (${(error as Error).message}). Fix the file's permissions or add ` +
            `this line yourself: ${line}`,
          { fingerprint, known_hosts_line: line },
        );
        return verify(false);
      }
    }
    hostKeyFailure = hostKeyMessage(verdict, where, type, fingerprint, line, files, hostToken(khHost, khPort), context.knownHosts.writeFile);
    verify(false);
  };

  return new Promise((resolve, reject) => {
    const client = new ssh2.Client();
    let settled = false;
    const fail = (f: PatchFailure): void => {
      if (settled) return;
      settled = true;
      client.end();
      reject(new RemoteShellError(f));
    };
    client.on("ready", () => {
      if (settled) return;
      settled = true;
      resolve(client);
    });
    client.on("error", (error: Error & { level?: string; code?: string }) => {
      fail(hostKeyFailure ?? mapConnectError(error, hop, context.readyTimeoutMs, role));
    });
    client.on("close", () => {
      fail(
        hostKeyFailure ??
          failure(
            "connect_failed",
            `the connection to ${role} ${hop.label} closed during the SSH handshake (the server may limit ` +
              `connections, e.g. MaxStartups, or reject this client). Retry; if it persists, check the server's ` +
              `sshd log.`,
          ),
      );
    });
    const config: ConnectConfig = {
      host: hop.hostName,
      port: hop.port,
      username: hop.username,
      hostVerifier,
      authHandler: hop.auth.methods,
      readyTimeout: context.readyTimeoutMs,
      keepaliveInterval: context.keepaliveIntervalMs,
      keepaliveCountMax: 3,
    };
    if (offered.length > 0) config.algorithms = { serverHostKey: offered };
    if (sock) config.sock = sock;
    try {
      client.connect(config);
    } catch (error) {
      fail(failure("connect_failed", `could not start connecting to ${hop.label}: ${(error as Error).message}`));
    }
  });
}

function hostKeyMessage(
  verdict: ReturnType<typeof verifyHostKey>,
  where: string,
  type: string,
  fingerprint: string,
  line: string,
  files: string,
  token: string,
  writeFile: string,
): PatchFailure {
  const fields = { fingerprint, known_hosts_line: line };
  if (verdict.status === "revoked") {
    return failure(
      "host_key_mismatch",
      `the host key of ${where} (${type} ${fingerprint}) is marked @revoked (line ${verdict.line} of the ` +
        `known_hosts files ${files}). Refusing to connect. Do not add this key; the server's key must be replaced ` +
        `and its new fingerprint confirmed out of band.`,
      { fingerprint },
    );
  }
  if (verdict.status === "mismatch") {
    return failure(
      "host_key_mismatch",
      `WARNING: the host key of ${where} has CHANGED. The server presented ${type} ${fingerprint}, but known_hosts ` +
        `(${files}) lists a different ${verdict.knownTypes.join("/")} key for it. This is either a reinstalled ` +
        `server or a man-in-the-middle attack: do not retry blindly. Confirm the new fingerprint out of band (on the ` +
        `server: ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub), then remove the old entry ` +
        `(ssh-keygen -R '${token}' -f ${writeFile}) and add this line: ${line}`,
      fields,
    );
  }
  const ca = verdict.status === "unknown" && verdict.certAuthorityLines?.length
    ? ` A @cert-authority line covers this host, but host certificates are not supported by this adapter.`
    : "";
  const acceptNew = optionHint("hostKeyPolicy", "accept-new");
  return failure(
    "host_key_unknown",
    `the host key of ${where} is not in known_hosts (${files}); the server presented ${type} ${fingerprint}.${ca} ` +
      `Confirm this fingerprint out of band (on the server: ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub), then add ` +
      `this line to ${writeFile}: ${line} — or connect once with ${acceptNew.says} to trust it on first use.`,
    { ...fields, hints: [acceptNew] },
  );
}

function mapConnectError(error: Error & { level?: string; code?: string }, hop: HopConfig, readyTimeoutMs: number, role: string): PatchFailure {
  const target = `${role} ${hop.label}`;
  if (error.level === "client-authentication") {
    const tried = hop.auth.described.length > 0 ? hop.auth.described.join(", ") : "no usable method";
    const problems = hop.auth.problems.length > 0 ? ` Problems: ${hop.auth.problems.join("; ")}.` : "";
    return failure(
      "auth_failed",
      `the server ${target} rejected every authentication method as user ${hop.username} (tried: ${tried}).` +
        `${problems} Next step: add one of these public keys to ~${hop.username}/.ssh/authorized_keys on the ` +
        `server, pass identityFile/privateKey (with passphrase), or start an agent (SSH_AUTH_SOCK).`,
    );
  }
  if (error.level === "client-timeout") {
    return failure(
      "connect_failed",
      `no SSH handshake with ${target} within ${readyTimeoutMs} ms (${error.message}). Check that an SSH server ` +
        `answers there, or raise readyTimeoutMs; retry later if the host is busy.`,
    );
  }
  const code = error.code ?? "";
  const hints: Record<string, string> = {
    ECONNREFUSED: `nothing accepts connections on ${hop.hostName}:${hop.port} (connection refused). Check the host ` +
      `and port and that sshd runs there.`,
    ENOTFOUND: `the host name ${hop.hostName} does not resolve (DNS). Check the spelling or the ssh_config alias.`,
    EAI_AGAIN: `the host name ${hop.hostName} could not be resolved right now (temporary DNS failure). Retry.`,
    ETIMEDOUT: `connecting to ${hop.hostName}:${hop.port} timed out. Check the network path and firewall.`,
    EHOSTUNREACH: `${hop.hostName} is unreachable (no route). Check the network path.`,
    ENETUNREACH: `the network of ${hop.hostName} is unreachable. Check the network path.`,
    ECONNRESET: `the connection to ${hop.hostName}:${hop.port} was reset during the handshake. Retry; check the ` +
      `server's sshd log if it persists.`,
  };
  const hint = hints[code];
  if (hint) return failure("connect_failed", `could not connect to ${target}: ${hint}`);
  return failure(
    "connect_failed",
    `could not connect to ${target}: ${error.message}. Check the host, port and the server's sshd log; retry.`,
  );
}
