/**
 * Opening SSH connections: the transport of the first hop (TCP, or the
 * user's `ProxyCommand`), every next hop through a `forwardOut` stream of the
 * previous one (ProxyJump; every hop's host key verified), host-key
 * verification before authentication, and the mapping of ssh2's errors to
 * typed failures with recovery instructions.
 *
 * @module
 */
import type { Client, ConnectConfig, ServerHostKeyAlgorithm } from "ssh2";
import type { Duplex } from "node:stream";
import { failure, warning } from "../failure.ts";
import { RemoteShellError } from "../remote/shell.ts";
import { acceptedLast, prepareAuth } from "./auth.ts";
import type { AuthPlan, AuthReport } from "./auth.ts";
import { hostKeyVerifier } from "./host_key_check.ts";
import type { AddedHostKey, HostKeyPolicy, KnownHostsStore } from "./host_key_check.ts";
import { knownKeyTypes } from "./known_hosts.ts";
import { startProxyCommand } from "./proxy_command.ts";
import type { ProxyCommandTransport } from "./proxy_command.ts";
import { observeServerSigAlgs } from "./server_sig_algs.ts";
import type { ServerSigAlgs } from "./server_sig_algs.ts";
import { sleep } from "./connection.ts";
import { loadSsh2, type Ssh2Module } from "./ssh2_module.ts";
import type { PatchFailure, Warning } from "../types.ts";

export type { AddedHostKey, HostKeyPolicy, KnownHostsStore } from "./host_key_check.ts";

/** One hop (jump host or the target) of a connection. */
export interface HopConfig {
  /** `user@host:port`, for messages. */
  label: string;
  hostName: string;
  port: number;
  username: string;
  auth: AuthPlan;
  /** The known_hosts files this hop is checked against (its own ssh_config's). */
  knownHosts: KnownHostsStore;
  /** ssh_config `HostKeyAlias`: known_hosts is searched for this name (no port) instead. */
  hostKeyAlias?: string;
  /** First hop only: run this (expanded) `ProxyCommand` and talk over its stdio. */
  proxyCommand?: string;
  readyTimeoutMs: number;
  keepaliveIntervalMs: number;
  keepaliveCountMax: number;
}

/** Shared settings of a connection attempt. */
export interface ConnectContext {
  policy: HostKeyPolicy;
  /** Receives `insecure_host_key` and `agent_unavailable` warnings. */
  warnings: Warning[];
  /** Receives keys appended under accept-new. */
  addedHostKeys: AddedHostKey[];
}

/** The clients of a chain, target last, and the ProxyCommand process if one runs. */
export interface Chain {
  clients: Client[];
  proxy: ProxyCommandTransport | null;
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
 * Connect every hop in order (the first over TCP or its ProxyCommand, each
 * next one through a `forwardOut` stream of the previous) and return the
 * clients, target last. On failure every already-open client is ended, the
 * ProxyCommand stopped, and a {@linkcode RemoteShellError} is thrown.
 *
 * @example
 * ```ts
 * const { clients } = await connectChain([jumpHop, targetHop], context);
 * const target = clients[clients.length - 1];
 * ```
 */
export async function connectChain(hops: readonly HopConfig[], context: ConnectContext): Promise<Chain> {
  const chain: Chain = { clients: [], proxy: null };
  const ssh2 = await loadSsh2();
  try {
    for (let i = 0; i < hops.length; i++) {
      const hop = hops[i]!;
      const previous = chain.clients[i - 1];
      let sock: Duplex | undefined;
      if (previous) sock = await forward(previous, hops[i - 1]!, hop, hop.readyTimeoutMs);
      else if (hop.proxyCommand !== undefined) {
        chain.proxy = startProxyCommand(hop.proxyCommand);
        sock = chain.proxy.stream;
      }
      const role = i < hops.length - 1 ? "jump host" : "host";
      chain.clients.push(await connectHop(ssh2, hop, context, sock, role, i === 0 ? chain.proxy : null));
    }
    const proxy = chain.proxy;
    if (proxy) chain.clients[0]!.once("close", () => proxy.stop());
    return chain;
  } catch (error) {
    for (const client of [...chain.clients].reverse()) client.end();
    chain.proxy?.stop();
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

async function connectHop(
  ssh2: Ssh2Module,
  hop: HopConfig,
  context: ConnectContext,
  sock: Duplex | undefined,
  role: string,
  proxy: ProxyCommandTransport | null,
): Promise<Client> {
  let sigAlgs: ServerSigAlgs | null = null;
  const { handler, report } = await prepareAuth(ssh2, hop.auth, () => sigAlgs?.rsa() ?? null);
  if (report.agentUnavailable !== undefined) {
    const message = `the agent for ${role} ${hop.label} cannot be reached (${report.agentUnavailable}); using key files only, ` +
      `as OpenSSH does. Start an agent or fix SSH_AUTH_SOCK / IdentityAgent if its keys are needed.`;
    if (!context.warnings.some((w) => w.message === message)) context.warnings.push(warning("agent_unavailable", message));
  }
  const checker = hostKeyVerifier(hop, context, role);
  // As OpenSSH: with HostKeyAlias the alias alone is the known_hosts name.
  const known = knownKeyTypes(checker.entries, checker.host, checker.port);
  const offered = known.flatMap((type) => ALGORITHMS_FOR_TYPE[type] ?? []);

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
      // Small messages go out at once (as OpenSSH's interactive sessions
      // do): the commit's go-ahead (lib/remote/programs/commit_gate.ts) is
      // a few bytes written right after a reply; behind Nagle and the
      // server's delayed ACK it waited about 40 ms.
      client.setNoDelay(true);
      acceptedLast(report);
      resolve(client);
    });
    let deciding = false;
    /** The first error or close decides; a ProxyCommand gets a moment to report its exit first. */
    const decide = async (otherwise: () => PatchFailure): Promise<void> => {
      if (settled || deciding) return;
      deciding = true;
      if (proxy !== null && proxy.exit() === null && checker.failure() === null) await Promise.race([proxy.exited, sleep(500)]);
      fail(checker.failure() ?? proxyFailure(proxy, hop, role) ?? otherwise());
    };
    client.on("error", (error: Error & { level?: string; code?: string }) => {
      void decide(() => mapConnectError(error, hop, report, role));
    });
    client.on("close", () => {
      void decide(() =>
        failure(
          "connect_failed",
          `the connection to ${role} ${hop.label} closed during the SSH handshake (the server may limit ` +
            `connections, e.g. MaxStartups, or reject this client). Retry; if it persists, check the server's ` +
            `sshd log.`,
        )
      );
    });
    const config: ConnectConfig = {
      host: hop.hostName,
      port: hop.port,
      username: hop.username,
      hostVerifier: checker.verify,
      authHandler: handler,
      readyTimeout: hop.readyTimeoutMs,
      keepaliveInterval: hop.keepaliveIntervalMs,
      keepaliveCountMax: hop.keepaliveCountMax,
    };
    if (offered.length > 0) config.algorithms = { serverHostKey: offered };
    if (sock) config.sock = sock;
    try {
      client.connect(config);
      sigAlgs = observeServerSigAlgs(client);
    } catch (error) {
      fail(failure("connect_failed", `could not start connecting to ${hop.label}: ${(error as Error).message}`));
    }
  });
}

/** A ProxyCommand that exited (or never started) explains the failure better than ssh2's error. */
function proxyFailure(proxy: ProxyCommandTransport | null, hop: HopConfig, role: string): PatchFailure | null {
  if (proxy === null) return null;
  const exit = proxy.exit();
  if (exit === null) return null;
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with status ${exit.code}`;
  const said = proxy.stderr();
  return failure(
    "connect_failed",
    `the ProxyCommand for ${role} ${hop.label} (${hop.proxyCommand}) ${how} before the SSH session was up` +
      `${said ? `; it said: ${said.slice(-800)}` : " and said nothing on stderr"}. Run it by hand to see why; it is ` +
      `your ssh_config's, so fix it there.`,
  );
}

function mapConnectError(error: Error & { level?: string; code?: string }, hop: HopConfig, report: AuthReport, role: string): PatchFailure {
  const target = `${role} ${hop.label}`;
  if (error.level === "client-authentication") return authFailure(hop, report, target);
  if (error.level === "client-timeout") {
    return failure(
      "connect_failed",
      `no SSH handshake with ${target} within ${hop.readyTimeoutMs} ms (${error.message}). Check that an SSH server ` +
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

function authFailure(hop: HopConfig, report: AuthReport, target: string): PatchFailure {
  const tried = report.tried.length > 0 ? report.tried.join(", ") : "nothing usable";
  const offers = report.serverMethods ? ` The server accepts: ${report.serverMethods.join(", ") || "nothing"}.` : "";
  const problems = report.problems.length > 0 ? ` Problems: ${report.problems.join("; ")}.` : "";
  const agent = report.agentUnavailable ? ` The agent could not be reached (${report.agentUnavailable}).` : "";
  const certificates = hop.auth.certificates;
  if (certificates.length > 0) {
    return failure(
      "auth_unsupported",
      `the server ${target} rejected every authentication method as user ${hop.username} (tried: ${tried}).` +
        `${offers}${problems}${agent} User certificates are configured (${certificates.join(", ")}), but this ` +
        `library (ssh2) cannot present OpenSSH user certificates, so they were not offered. If the server accepts ` +
        `only certificates, authorize the plain public key in ~${hop.username}/.ssh/authorized_keys, or use ` +
        `password / another key.`,
      { retryable: false },
    );
  }
  const passwordHint = hop.auth.password === undefined && report.serverMethods?.some((m) => m === "password" || m === "keyboard-interactive")
    ? " or pass a password source (the password option)"
    : "";
  return failure(
    "auth_failed",
    `the server ${target} rejected every authentication method as user ${hop.username} (tried: ${tried}).` +
      `${offers}${problems}${agent} Next step: add one of these public keys to ~${hop.username}/.ssh/authorized_keys ` +
      `on the server, pass identityFile/privateKey (with passphrase), start an agent (SSH_AUTH_SOCK)${passwordHint}.`,
  );
}
