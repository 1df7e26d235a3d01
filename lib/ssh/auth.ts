/**
 * SSH client authentication: which keys and agent to offer, in which order,
 * and how to say what was tried when all of them fail.
 *
 * Order: an explicit `privateKey`, explicit `identityFile`s, the agent
 * (unless `IdentitiesOnly`), then the ssh_config / default identity files.
 * Encrypted keys ask the passphrase callback (once per key file). Nothing
 * here logs or reports key material or passphrases.
 *
 * @module
 */
import type { AnyAuthMethod, ParsedKey } from "ssh2";
import { loadSsh2 } from "./ssh2_module.ts";

/** A passphrase, or a callback asked once per encrypted key file. */
export type PassphraseSource = string | ((keyPath: string) => Promise<string>);

/** What the adapter knows about credentials for one hop. */
export interface AuthInputs {
  username: string;
  /** An explicit private key (OpenSSH/PEM text or bytes). */
  privateKey?: string | Uint8Array;
  /** Key files from options: tried first, and a missing one is reported. */
  explicitIdentityFiles: string[];
  /** Key files from ssh_config or the OpenSSH defaults: a missing one is skipped silently. */
  implicitIdentityFiles: string[];
  passphrase?: PassphraseSource;
  /** The agent socket path, or null for none. */
  agent: string | null;
  /** Reads a key file; `undefined` when missing/unreadable. */
  readFile: (path: string) => Uint8Array | undefined;
}

/** The methods to hand to ssh2, and a human summary of them. */
export interface AuthPlan {
  methods: AnyAuthMethod[];
  /** e.g. `key file /root/.ssh/id_ed25519`, `agent /tmp/ssh-x/agent.1`. */
  described: string[];
  /** Keys that could not be used, and why (for the auth_failed message). */
  problems: string[];
}

/**
 * Build the ordered auth methods for one hop.
 *
 * @example
 * ```ts
 * const plan = await planAuth({ username: "deploy", explicitIdentityFiles: ["/k/id"], implicitIdentityFiles: [],
 *   agent: null, readFile: (p) => readFileSync(p) });
 * ```
 */
export async function planAuth(inputs: AuthInputs): Promise<AuthPlan> {
  const plan: AuthPlan = { methods: [], described: [], problems: [] };
  const seen = new Set<string>();
  const addKey = (key: ParsedKey, description: string): void => {
    const fingerprint = Buffer.from(key.getPublicSSH()).toString("base64");
    if (seen.has(fingerprint)) return; // one key offered twice only burns a MaxAuthTries attempt
    seen.add(fingerprint);
    plan.methods.push({ type: "publickey", username: inputs.username, key });
    plan.described.push(description);
  };
  if (inputs.privateKey !== undefined) {
    const key = await loadKey(inputs.privateKey, "the privateKey option", inputs.passphrase, plan);
    if (key) addKey(key, "the privateKey option");
  }
  const tryFiles = async (files: string[], explicit: boolean): Promise<void> => {
    for (const path of files) {
      const data = inputs.readFile(path);
      if (data === undefined) {
        if (explicit) plan.problems.push(`identity file ${path} does not exist or cannot be read`);
        continue;
      }
      const key = await loadKey(data, path, inputs.passphrase, plan);
      if (key) addKey(key, `key file ${path}`);
    }
  };
  await tryFiles(inputs.explicitIdentityFiles, true);
  if (inputs.agent !== null) {
    plan.methods.push({ type: "agent", username: inputs.username, agent: inputs.agent });
    plan.described.push(`agent ${inputs.agent}`);
  }
  await tryFiles(inputs.implicitIdentityFiles.filter((f) => !inputs.explicitIdentityFiles.includes(f)), false);
  return plan;
}

/**
 * The OpenSSH default identity files, in its order (used when neither the
 * options nor ssh_config name any key).
 *
 * @example
 * ```ts
 * defaultIdentityFiles("/home/me"); // ["/home/me/.ssh/id_ed25519", "/home/me/.ssh/id_ecdsa", "/home/me/.ssh/id_rsa"]
 * ```
 */
export function defaultIdentityFiles(homeDir: string): string[] {
  return ["id_ed25519", "id_ecdsa", "id_rsa"].map((name) => `${homeDir}/.ssh/${name}`);
}

async function loadKey(
  data: string | Uint8Array,
  label: string,
  passphrase: PassphraseSource | undefined,
  plan: AuthPlan,
): Promise<ParsedKey | null> {
  const { utils } = await loadSsh2();
  const input = typeof data === "string" ? data : Buffer.from(data);
  let parsed = utils.parseKey(input);
  if (parsed instanceof Error && /passphrase|encrypted/i.test(parsed.message)) {
    if (passphrase === undefined) {
      plan.problems.push(`${label} is encrypted and no passphrase (or passphrase callback) was given`);
      return null;
    }
    const secret = typeof passphrase === "string" ? passphrase : await passphrase(label);
    parsed = utils.parseKey(input, secret);
    if (parsed instanceof Error) {
      plan.problems.push(`the passphrase for ${label} is wrong (the key could not be decrypted)`);
      return null;
    }
  }
  if (parsed instanceof Error) {
    plan.problems.push(`${label} is not a private key ssh2 can read (${parsed.message})`);
    return null;
  }
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key || key.isPrivateKey() === false) {
    plan.problems.push(`${label} is not a private key`);
    return null;
  }
  return key;
}
