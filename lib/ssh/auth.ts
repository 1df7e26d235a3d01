/**
 * SSH client authentication for one hop: what to offer, in which order, and
 * how to say what was tried when everything fails.
 *
 * Order (OpenSSH's `pubkey_prepare`, after the library's explicit keys):
 * 1. the `privateKey` and `identityFile` options, in order (this library's
 *    choice: keys a program names are tried first; each is signed by the
 *    agent when the agent holds it);
 * 2. ssh_config / default identity files the agent holds, in agent order;
 * 3. the agent's other keys — unless `IdentitiesOnly` (matched by public key);
 * 4. the remaining identity files, in order (the passphrase is asked only now);
 * 5. keyboard-interactive, then password, when a `password` source is given.
 *
 * The first request is `none` (as OpenSSH), so only methods the server
 * offers are tried. RSA keys sign with rsa-sha2-512 or rsa-sha2-256, the
 * first the server's `server-sig-algs` lists (OpenSSH's preference). User
 * certificates cannot be presented by ssh2; when one was configured and
 * everything failed, the failure is `auth_unsupported` naming it.
 * Passwords and passphrases are never logged or put in a message.
 *
 * @module
 */
import type { AnyAuthMethod, AuthHandlerMiddleware, NextAuthHandler, ParsedKey } from "ssh2";
import { listAgentKeys, singleKeyAgent, withSignatureType } from "./agent.ts";
import { decryptIdentity, loadIdentity, publicOnlyIdentity, sameBlob } from "./identities.ts";
import type { LoadedIdentity, PassphraseSource } from "./identities.ts";
import { fingerprintSha256 } from "./known_hosts.ts";
import type { Ssh2Module } from "./ssh2_module.ts";

export type { PassphraseSource } from "./identities.ts";

/**
 * What a password callback is told. Never includes anything secret.
 *
 * @example
 * ```ts
 * const password = async ({ target, prompt }: PasswordRequest) => await askUser(`${prompt.trim()} (${target})`);
 * ```
 */
export interface PasswordRequest {
  /** `user@host:port` of the hop asking. */
  target: string;
  /** The server's prompt for keyboard-interactive (e.g. `Password: `), else `"password"`. */
  prompt: string;
}

/**
 * A password, or a callback asked once per connection attempt (password and keyboard-interactive).
 *
 * @example
 * ```ts
 * await connectSsh({ host: "deploy@web1", password: process.env.SSH_PW }); // a string
 * await connectSsh({ host: "deploy@web1", password: async ({ target }) => await askUser(`password for ${target}`) }); // asked per attempt
 * ```
 */
export type PasswordSource = string | ((request: PasswordRequest) => Promise<string>);

/** One identity source, in order. */
export type IdentitySource =
  | { kind: "data"; data: string | Uint8Array; label: string }
  | { kind: "file"; path: string; origin: "option" | "config" | "default" };

/** Everything known before connecting about how one hop authenticates. */
export interface AuthPlan {
  username: string;
  /** `user@host:port`, for messages and password requests. */
  target: string;
  identities: IdentitySource[];
  /** User certificates configured (`CertificateFile`) or found (`<identity>-cert.pub`). */
  certificates: string[];
  identitiesOnly: boolean;
  /** The agent socket, or null for none. */
  agent: string | null;
  passphrase?: PassphraseSource;
  password?: PasswordSource;
  /** ssh_config `PubkeyAuthentication`, `PasswordAuthentication`, `KbdInteractiveAuthentication`. */
  allow: { publickey: boolean; password: boolean; keyboardInteractive: boolean };
  readFile: (path: string) => Uint8Array | undefined;
}

/** What happened during one authentication, for the failure message. */
export interface AuthReport {
  /** `key file … (rejected)`, `agent key ed25519 SHA256:… (accepted)`, `password (rejected)`. */
  tried: string[];
  /** Keys that could not be used, and why. */
  problems: string[];
  /** Methods the server said it accepts (from the `none` probe), if known. */
  serverMethods: string[] | null;
  /** The agent could not be reached: why. */
  agentUnavailable?: string;
}

type Candidate =
  | { kind: "key"; label: string; key: ParsedKey }
  | { kind: "encrypted"; identity: LoadedIdentity }
  | { kind: "agent"; label: string; key: ParsedKey }
  | { kind: "keyboard-interactive" }
  | { kind: "password" };

/**
 * The OpenSSH 9 default identity files, in its order (used when neither the
 * options nor ssh_config name any key; missing ones are skipped silently).
 *
 * @example
 * ```ts
 * defaultIdentityFiles("/home/me")[0]; // "/home/me/.ssh/id_rsa"
 * ```
 */
export function defaultIdentityFiles(homeDir: string): string[] {
  return ["id_rsa", "id_ecdsa", "id_ecdsa_sk", "id_ed25519", "id_ed25519_sk", "id_xmss", "id_dsa"].map((name) => `${homeDir}/.ssh/${name}`);
}

/**
 * Describe a plan before anything is tried (e.g. `key file /k`, `agent /tmp/a`).
 *
 * @example
 * ```ts
 * describePlan(plan); // ["key file /home/me/.ssh/id_ed25519", "agent /run/user/1000/ssh-agent.socket"]
 * ```
 */
export function describePlan(plan: AuthPlan): string[] {
  const out = plan.identities.map((s) => (s.kind === "data" ? s.label : `key file ${s.path}`));
  if (plan.agent !== null) out.push(`agent ${plan.agent}${plan.identitiesOnly ? " (IdentitiesOnly: listed keys only)" : ""}`);
  if (plan.password !== undefined) out.push("password / keyboard-interactive");
  return out;
}

/**
 * Prepare one connection attempt: load the identities, list the agent, and
 * return an ssh2 `authHandler` plus the report it fills. `rsaSignatureType`
 * is asked when an RSA key is about to be offered (it reads the server's
 * `server-sig-algs`, known by then).
 *
 * @example
 * ```ts
 * const { handler, report } = await prepareAuth(ssh2, plan, () => sigAlgs.rsa());
 * client.connect({ ...config, authHandler: handler });
 * ```
 */
export async function prepareAuth(
  ssh2: Ssh2Module,
  plan: AuthPlan,
  rsaSignatureType: () => "rsa-sha2-512" | "rsa-sha2-256" | null,
): Promise<{ handler: AuthHandlerMiddleware; report: AuthReport }> {
  const report: AuthReport = { tried: [], problems: [], serverMethods: null };
  const loaded: { identity: LoadedIdentity; explicit: boolean }[] = [];
  if (plan.allow.publickey) {
    for (const source of plan.identities) {
      const data = source.kind === "data" ? source.data : plan.readFile(source.path);
      const label = source.kind === "data" ? source.label : `key file ${source.path}`;
      const explicit = source.kind === "data" || source.origin === "option";
      if (data === undefined && source.kind === "file") {
        // Only <file>.pub: an agent holding the key can still sign for it, as with OpenSSH.
        const publicOnly = publicOnlyIdentity(ssh2, source.path, label, plan.readFile);
        if (publicOnly !== null) loaded.push({ identity: publicOnly, explicit });
        // OpenSSH skips a missing default identity silently and warns about a named one.
        else if (source.origin !== "default") report.problems.push(`identity file ${source.path} does not exist or cannot be read`);
        continue;
      }
      const identity = loadIdentity(ssh2, data!, source.kind === "data" ? label : source.path, label, plan.readFile);
      if (typeof identity === "string") report.problems.push(identity);
      else loaded.push({ identity, explicit });
    }
  }
  let agentKeys: ParsedKey[] = [];
  if (plan.agent !== null && plan.allow.publickey) {
    const listing = await listAgentKeys(ssh2, plan.agent);
    if (listing.ok) agentKeys = listing.keys;
    else report.agentUnavailable = `${plan.agent}: ${listing.reason}`;
  }
  const candidates = order(loaded, agentKeys, plan);
  return { handler: handlerFor(ssh2, plan, candidates, report, rsaSignatureType), report };
}

function agentLabel(key: ParsedKey): string {
  return `agent key ${key.type} ${fingerprintSha256(new Uint8Array(key.getPublicSSH()))}${key.comment ? ` (${key.comment})` : ""}`;
}

function order(loaded: { identity: LoadedIdentity; explicit: boolean }[], agentKeys: ParsedKey[], plan: AuthPlan): Candidate[] {
  const out: Candidate[] = [];
  const offered: Uint8Array[] = [];
  const push = (candidate: Candidate, blob: Uint8Array | null): void => {
    // One key offered twice only burns a MaxAuthTries attempt.
    if (blob !== null && offered.some((b) => sameBlob(b, blob))) return;
    if (blob !== null) offered.push(blob);
    out.push(candidate);
  };
  const inAgent = (blob: Uint8Array | null): ParsedKey | undefined =>
    agentKeys.find((k) => sameBlob(new Uint8Array(k.getPublicSSH()), blob));
  const fromFile = (identity: LoadedIdentity): Candidate =>
    identity.key !== undefined ? { kind: "key", label: identity.label, key: identity.key } : { kind: "encrypted", identity };
  const viaAgent = (key: ParsedKey, identity: LoadedIdentity): Candidate => ({ kind: "agent", label: `${identity.label} via the agent`, key });
  for (const { identity } of loaded.filter((l) => l.explicit)) {
    const held = inAgent(identity.publicBlob);
    push(held ? viaAgent(held, identity) : fromFile(identity), identity.publicBlob);
  }
  const listed = loaded.filter((l) => !l.explicit).map((l) => l.identity);
  for (const key of agentKeys) {
    const blob = new Uint8Array(key.getPublicSSH());
    const identity = listed.find((i) => sameBlob(i.publicBlob, blob));
    if (identity) push(viaAgent(key, identity), blob);
  }
  if (!plan.identitiesOnly) {
    for (const key of agentKeys) push({ kind: "agent", label: agentLabel(key), key }, new Uint8Array(key.getPublicSSH()));
  }
  for (const identity of listed) push(fromFile(identity), identity.publicBlob);
  if (plan.password !== undefined) {
    if (plan.allow.keyboardInteractive) out.push({ kind: "keyboard-interactive" });
    if (plan.allow.password) out.push({ kind: "password" });
  }
  return out;
}

function needs(candidate: Candidate): string {
  return candidate.kind === "password" || candidate.kind === "keyboard-interactive" ? candidate.kind : "publickey";
}

function handlerFor(
  ssh2: Ssh2Module,
  plan: AuthPlan,
  candidates: Candidate[],
  report: AuthReport,
  rsaSignatureType: () => "rsa-sha2-512" | "rsa-sha2-256" | null,
): AuthHandlerMiddleware {
  let index = -1;
  let probed = false;
  let password: Promise<string | null> | null = null;
  const username = plan.username;
  const askPassword = (prompt: string): Promise<string | null> => {
    const source = plan.password;
    if (source === undefined) return Promise.resolve(null);
    // Asked once per connection attempt, whatever the method.
    password ??= typeof source === "string"
      ? Promise.resolve(source)
      : source({ target: plan.target, prompt }).catch((error: Error) => {
        report.problems.push(`the password callback failed (${error.message})`);
        return null;
      });
    return password;
  };
  const markLast = (verdict: string): void => {
    const last = report.tried.length - 1;
    if (last >= 0 && !/\)$/.test(report.tried[last]!)) report.tried[last] += ` (${verdict})`;
  };
  const signing = (key: ParsedKey): ParsedKey => {
    if (key.type !== "ssh-rsa") return key;
    const type = rsaSignatureType();
    return type === null ? key : withSignatureType(key, type, type === "rsa-sha2-512" ? "sha512" : "sha256");
  };
  return (methodsLeft: string[] | null, _partial: boolean | null, next: NextAuthHandler): void => {
    if (!probed) {
      probed = true;
      next({ type: "none", username });
      return;
    }
    if (report.serverMethods === null && methodsLeft !== null) report.serverMethods = [...methodsLeft];
    else markLast("rejected");
    void (async (): Promise<void> => {
      for (;;) {
        const candidate = candidates[++index];
        if (candidate === undefined) return next(false as unknown as AnyAuthMethod);
        if (methodsLeft !== null && !methodsLeft.includes(needs(candidate))) continue;
        switch (candidate.kind) {
          case "key":
            report.tried.push(candidate.label);
            return next({ type: "publickey", username, key: signing(candidate.key) });
          case "encrypted": {
            const key = await decryptIdentity(ssh2, candidate.identity, plan.passphrase);
            if (typeof key === "string") {
              report.problems.push(key);
              continue;
            }
            report.tried.push(candidate.identity.label);
            return next({ type: "publickey", username, key: signing(key) });
          }
          case "agent": {
            const type = candidate.key.type === "ssh-rsa" ? rsaSignatureType() : null;
            report.tried.push(candidate.label);
            return next({ type: "agent", username, agent: singleKeyAgent(ssh2, plan.agent!, candidate.key, type) });
          }
          case "keyboard-interactive":
            report.tried.push("keyboard-interactive");
            return next({
              type: "keyboard-interactive",
              username,
              prompt: (_name, _instructions, _lang, prompts, finish) => {
                // Answer hidden prompts (PAM's "Password: ") with the password; nothing else is known.
                if (prompts.length === 0) return finish([]);
                if (prompts.some((p) => p.echo)) return finish(prompts.map(() => ""));
                void askPassword(prompts[0]!.prompt).then((secret) => finish(prompts.map(() => secret ?? "")));
              },
            });
          case "password": {
            const secret = await askPassword("password");
            if (secret === null) continue;
            report.tried.push("password");
            return next({ type: "password", username, password: secret });
          }
        }
      }
    })();
  };
}

/**
 * Mark the method tried last as accepted (the hop's client became ready).
 *
 * @example
 * ```ts
 * client.on("ready", () => acceptedLast(report));
 * ```
 */
export function acceptedLast(report: AuthReport): void {
  const last = report.tried.length - 1;
  if (last >= 0 && !/\)$/.test(report.tried[last]!)) report.tried[last] += " (accepted)";
}
