/**
 * Identity files as OpenSSH loads them: the private key when it is not
 * encrypted, and otherwise its public half without the passphrase — from
 * `<file>.pub`, or from the unencrypted header of an `openssh-key-v1` file —
 * so an agent that holds the same key can sign for it (IdentitiesOnly) and
 * the passphrase is asked only when the file itself is about to be used.
 * Also notes `<file>-cert.pub` user certificates, which ssh2 cannot present.
 * Nothing here logs or reports key material or passphrases.
 *
 * @module
 */
import type { ParsedKey } from "ssh2";
import type { Ssh2Module } from "./ssh2_module.ts";

/**
 * A passphrase, or a callback asked once per encrypted key file.
 *
 * @example
 * ```ts
 * await connectSsh({ host: "web1", identityFile: "~/.ssh/id_ed25519", passphrase: async (keyPath) => await askUser(`passphrase for ${keyPath}`) });
 * ```
 */
export type PassphraseSource = string | ((keyPath: string) => Promise<string>);

/** One identity, loaded as far as possible without a passphrase. */
export interface LoadedIdentity {
  /** `key file /path` or `the privateKey option`, for messages. */
  label: string;
  /** The key file path (passed to the passphrase callback), or the label. */
  path: string;
  /** SSH wire public key blob, when known (for agent matching and de-duplication). */
  publicBlob: Uint8Array | null;
  /** The private key, when it is not encrypted. */
  key?: ParsedKey;
  /** The encrypted file's bytes: decrypted with the passphrase when it is tried. */
  encrypted?: Uint8Array;
  /** Only `<file>.pub` exists: usable through an agent that holds the key, not on its own. */
  publicOnly?: true;
}

/**
 * An identity whose private file is missing but whose `<path>.pub` exists
 * (OpenSSH lists it too: an agent holding the key signs for it), else `null`.
 *
 * @example
 * ```ts
 * const id = publicOnlyIdentity(ssh2, "/home/me/.ssh/id_rsa", "key file /home/me/.ssh/id_rsa", readFileOrUndefined);
 * ```
 */
export function publicOnlyIdentity(
  ssh2: Ssh2Module,
  path: string,
  label: string,
  readFile: (path: string) => Uint8Array | undefined,
): LoadedIdentity | null {
  const pub = readFile(`${path}.pub`);
  if (pub === undefined) return null;
  const parsed = ssh2.utils.parseKey(Buffer.from(pub));
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key || key instanceof Error) return null;
  return { label, path, publicBlob: new Uint8Array(key.getPublicSSH()), publicOnly: true };
}

/**
 * Load `data` (a private key's text or bytes) as far as possible without a
 * passphrase. Returns a problem string when it is not a usable private key.
 *
 * @example
 * ```ts
 * const id = loadIdentity(ssh2, readFileSync(path), path, `key file ${path}`, readFileOrUndefined);
 * ```
 */
export function loadIdentity(
  ssh2: Ssh2Module,
  data: string | Uint8Array,
  path: string,
  label: string,
  readFile: (path: string) => Uint8Array | undefined,
): LoadedIdentity | string {
  const input = typeof data === "string" ? data : Buffer.from(data);
  const parsed = ssh2.utils.parseKey(input);
  if (parsed instanceof Error) {
    if (/passphrase|encrypted/i.test(parsed.message)) {
      const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
      return { label, path, publicBlob: publicBlobOf(ssh2, bytes, path, readFile), encrypted: bytes };
    }
    return `${label} is not a private key this library can use (${parsed.message})`;
  }
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key || key.isPrivateKey() === false) return `${label} is not a private key`;
  // OpenSSH 9 no longer offers DSA keys by default (PubkeyAcceptedAlgorithms); neither does this.
  if (key.type === "ssh-dss") return `${label} is a DSA key, which OpenSSH no longer offers by default; not offered`;
  return { label, path, publicBlob: new Uint8Array(key.getPublicSSH()), key };
}

/**
 * Decrypt an encrypted identity with the passphrase (asked now, once).
 *
 * @example
 * ```ts
 * const key = await decryptIdentity(ssh2, identity, "secret");
 * ```
 */
export async function decryptIdentity(
  ssh2: Ssh2Module,
  identity: LoadedIdentity,
  passphrase: PassphraseSource | undefined,
): Promise<ParsedKey | string> {
  if (identity.publicOnly) return `${identity.label} does not exist (only ${identity.path}.pub), and the agent does not hold that key`;
  if (identity.encrypted === undefined) return identity.key ?? `${identity.label} has no private key`;
  if (passphrase === undefined) return `${identity.label} is encrypted and no passphrase (or passphrase callback) was given`;
  let secret: string;
  try {
    secret = typeof passphrase === "string" ? passphrase : await passphrase(identity.path);
  } catch (error) {
    return `the passphrase callback for ${identity.label} failed (${(error as Error).message})`;
  }
  const parsed = ssh2.utils.parseKey(Buffer.from(identity.encrypted), secret);
  if (parsed instanceof Error) return `the passphrase for ${identity.path} is wrong (the key could not be decrypted)`;
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  return key ?? `${identity.label} holds no key`;
}

/**
 * The public blob of an encrypted key without its passphrase: `<path>.pub`,
 * else the public key stored in clear in an `openssh-key-v1` file (PEM
 * files encrypt everything: `null` then, as for OpenSSH).
 *
 * @example
 * ```ts
 * publicBlobOf(ssh2, bytes, "/home/me/.ssh/id_ed25519", readFileOrUndefined);
 * ```
 */
export function publicBlobOf(
  ssh2: Ssh2Module,
  bytes: Uint8Array,
  path: string,
  readFile: (path: string) => Uint8Array | undefined,
): Uint8Array | null {
  const pub = readFile(`${path}.pub`);
  if (pub !== undefined) {
    const parsed = ssh2.utils.parseKey(Buffer.from(pub));
    const key = Array.isArray(parsed) ? parsed[0] : parsed;
    if (key && !(key instanceof Error)) return new Uint8Array(key.getPublicSSH());
  }
  return opensshV1PublicBlob(new TextDecoder().decode(bytes));
}

/** `openssh-key-v1\0`, cipher, kdf, kdf options, key count, then the first public key in clear. */
function opensshV1PublicBlob(text: string): Uint8Array | null {
  const match = /-----BEGIN OPENSSH PRIVATE KEY-----([\s\S]*?)-----END OPENSSH PRIVATE KEY-----/.exec(text);
  if (match === null) return null;
  const bytes = Buffer.from(match[1]!.replace(/\s+/g, ""), "base64");
  const magic = "openssh-key-v1\0";
  if (bytes.subarray(0, magic.length).toString("latin1") !== magic) return null;
  let offset = magic.length;
  const field = (): Buffer | null => {
    if (offset + 4 > bytes.length) return null;
    const length = bytes.readUInt32BE(offset);
    if (offset + 4 + length > bytes.length) return null;
    const value = bytes.subarray(offset + 4, offset + 4 + length);
    offset += 4 + length;
    return value;
  };
  if (field() === null || field() === null || field() === null) return null; // cipher, kdf, kdf options
  if (offset + 4 > bytes.length || bytes.readUInt32BE(offset) < 1) return null;
  offset += 4;
  const blob = field();
  return blob === null || blob.length === 0 ? null : new Uint8Array(blob);
}

/**
 * Equal key blobs (the same public key).
 *
 * @example
 * ```ts
 * sameBlob(a.publicBlob, new Uint8Array(agentKey.getPublicSSH()));
 * ```
 */
export function sameBlob(a: Uint8Array | null, b: Uint8Array | null): boolean {
  if (a === null || b === null || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
