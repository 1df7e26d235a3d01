/**
 * Checking a hop's host key against its known_hosts files, before any
 * authentication (SPEC §8): `strict`, `accept-new` (records a hashed line)
 * or `insecure-accept-any` (warns), and the recovery messages of
 * `host_key_unknown` / `host_key_mismatch`, with the fingerprint and the
 * exact line to add.
 *
 * @module
 */
import { failure, optionHint, warning } from "../failure.ts";
import {
  fingerprintSha256,
  formatKnownHostsLine,
  hostToken,
  keyTypeOfBlob,
  parseKnownHosts,
  verifyHostKey,
} from "./known_hosts.ts";
import type { KnownHostEntry } from "./known_hosts.ts";
import type { PatchFailure, Warning } from "../types.ts";
import { appendAll } from "../text/append_all.ts";

/**
 * What to do with a host key that known_hosts does not vouch for.
 *
 * @example
 * ```ts
 * const policy: HostKeyPolicy = "accept-new"; // trust a host seen for the first time and record it
 * const shell = await connectSsh({ host: "web1", hostKeyPolicy: policy });
 * ```
 */
export type HostKeyPolicy = "strict" | "accept-new" | "insecure-accept-any";

/** Where known hosts are read from and (accept-new) appended to. */
export interface KnownHostsStore {
  /** Files read, in order (user files first, then global ones). */
  files: string[];
  /** The file `accept-new` appends to; `null` for `UserKnownHostsFile none` (nothing can be recorded). */
  writeFile: string | null;
  read(path: string): string | undefined;
  append(path: string, line: string): void;
}

/**
 * A host key added under `accept-new`.
 *
 * @example
 * ```ts
 * for (const added of shell.addedHostKeys) console.error(`recorded ${added.fingerprint} for ${added.host}:${added.port} in ${added.file}`);
 * ```
 */
export interface AddedHostKey {
  /** The host name the key was recorded for (the `HostKeyAlias` when one is set). */
  host: string;
  /** Its port. */
  port: number;
  /** `SHA256:…` fingerprint of the key. */
  fingerprint: string;
  /** The known_hosts file the line was appended to. */
  file: string;
  /** The line appended (hashed host name). */
  line: string;
}

/** The hop fields the check needs. */
export interface CheckedHop {
  hostName: string;
  port: number;
  knownHosts: KnownHostsStore;
  hostKeyAlias?: string;
}

/** A verifier for ssh2's `hostVerifier`, and the failure it decided on. */
export interface HostKeyChecker {
  entries: KnownHostEntry[];
  /** The known_hosts name (`HostKeyAlias`, else the host name) and port. */
  host: string;
  port: number;
  verify(key: Buffer, done: (valid: boolean) => void): void;
  /** The host-key failure, once verify refused. */
  failure(): PatchFailure | null;
}

/**
 * Build the host-key check of one hop.
 *
 * @example
 * ```ts
 * const checker = hostKeyVerifier(hop, { policy: "strict", warnings: [], addedHostKeys: [] }, "host");
 * client.connect({ ...config, hostVerifier: checker.verify });
 * ```
 */
export function hostKeyVerifier(
  hop: CheckedHop,
  context: { policy: HostKeyPolicy; warnings: Warning[]; addedHostKeys: AddedHostKey[] },
  role: string,
): HostKeyChecker {
  const store = hop.knownHosts;
  const entries: KnownHostEntry[] = [];
  for (const file of store.files) {
    const text = store.read(file);
    if (text !== undefined) appendAll(entries, parseKnownHosts(text).entries);
  }
  // As OpenSSH: with HostKeyAlias the alias alone is the known_hosts name.
  const host = hop.hostKeyAlias ?? hop.hostName;
  const port = hop.hostKeyAlias === undefined ? hop.port : 22;
  let refused: PatchFailure | null = null;
  const where = `${role} ${hop.hostName} port ${hop.port}`;
  const files = store.files.length > 0 ? store.files.join(", ") : "none: UserKnownHostsFile and GlobalKnownHostsFile are none";
  const addTo = store.writeFile ?? "a known_hosts file (UserKnownHostsFile is none for this host, so set one)";

  const verify = (key: Buffer, done: (valid: boolean) => void): void => {
    const blob = new Uint8Array(key);
    const verdict = verifyHostKey(entries, host, port, blob);
    const type = keyTypeOfBlob(blob) ?? "unknown-type";
    const fingerprint = fingerprintSha256(blob);
    const line = formatKnownHostsLine(host, port, type, blob, { hashed: false });
    if (verdict.status === "match") return done(true);
    if (context.policy === "insecure-accept-any" && verdict.status !== "revoked") {
      context.warnings.push(
        warning(
          "insecure_host_key",
          `the host key of ${where} was NOT verified (hostKeyPolicy "insecure-accept-any"; known_hosts says ` +
            `${verdict.status}); the server presented ${type} ${fingerprint}. Anyone on the network path could be ` +
            `this server. Add this line to ${addTo} and use the strict policy: ${line}`,
        ),
      );
      return done(true);
    }
    if (verdict.status === "unknown" && context.policy === "accept-new") {
      const hashedLine = formatKnownHostsLine(host, port, type, blob, { hashed: true });
      try {
        if (store.writeFile === null) throw new Error("UserKnownHostsFile is none, so there is no file to record it in");
        store.append(store.writeFile, hashedLine);
        context.addedHostKeys.push({ host, port, fingerprint, file: store.writeFile, line: hashedLine });
        return done(true);
      } catch (error) {
        refused = failure(
          "host_key_unknown",
          `the host key of ${where} (${type} ${fingerprint}) is new and accept-new could not record it in ` +
            `${store.writeFile ?? "known_hosts"} (${(error as Error).message}). Fix the file's permissions or add ` +
            `this line yourself to ${addTo}: ${line}`,
          { fingerprint, knownHostsLine: line },
        );
        return done(false);
      }
    }
    refused = refusal(verdict, where, type, fingerprint, line, files, hostToken(host, port), store.writeFile, addTo);
    done(false);
  };
  return { entries, host, port, verify, failure: () => refused };
}

function refusal(
  verdict: ReturnType<typeof verifyHostKey>,
  where: string,
  type: string,
  fingerprint: string,
  line: string,
  files: string,
  token: string,
  writeFile: string | null,
  addTo: string,
): PatchFailure {
  const fields = { fingerprint, knownHostsLine: line };
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
        `(ssh-keygen -R '${token}'${writeFile ? ` -f ${writeFile}` : ""}) and add this line: ${line}`,
      fields,
    );
  }
  const ca = verdict.status === "unknown" && verdict.certAuthorityLines?.length
    ? ` A @cert-authority line covers this host, but host certificates are not supported by this adapter.`
    : "";
  // A typed next step: each front end words it (the CLI as --accept-new-host-key).
  const acceptNew = optionHint("hostKeyPolicy", "accept-new");
  return failure(
    "host_key_unknown",
    `the host key of ${where} is not in known_hosts (${files}); the server presented ${type} ${fingerprint}.${ca} ` +
      `Confirm this fingerprint out of band (on the server: ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub), then add ` +
      `this line to ${addTo}: ${line} — or connect once with ${acceptNew.says} to trust it on first use.`,
    { ...fields, hints: [acceptNew] },
  );
}
