/**
 * OpenSSH `known_hosts` parsing and host-key verification (SPEC §8).
 *
 * Supports plain host patterns (comma lists, `*` / `?` wildcards, `!`
 * negation), hashed `|1|salt|hash` entries, `[host]:port` tokens, several keys
 * per host, `@revoked` and — reported, not silently ignored —
 * `@cert-authority` (host certificates are not supported by this adapter).
 * Only `node:crypto`; no I/O.
 *
 * @module
 */
import { createHash, createHmac, randomBytes } from "node:crypto";

/**
 * One parsed key line of a known_hosts file.
 *
 * @example
 * ```ts
 * const [entry] = parseKnownHosts("web1 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n").entries;
 * entry?.keyType; // "ssh-ed25519"
 * ```
 */
export interface KnownHostEntry {
  /** `@revoked` / `@cert-authority` marker, or `none`. */
  marker: "none" | "revoked" | "cert-authority";
  /** Host patterns of a plain line (lowercased), or empty for a hashed one. */
  patterns: string[];
  /** `{ salt, hash }` of a hashed `|1|salt|hash` line. */
  hashed?: { salt: Uint8Array; hash: Uint8Array };
  /** Key type named on the line, e.g. `ssh-ed25519`. */
  keyType: string;
  /** The raw key blob (base64-decoded). */
  keyBlob: Uint8Array;
  /** 1-based line number in the source text. */
  line: number;
}

/**
 * A line that could not be used, with the reason.
 *
 * @example
 * ```ts
 * for (const p of parseKnownHosts(text).invalid) console.error(`known_hosts line ${p.line}: ${p.reason}`);
 * ```
 */
export interface KnownHostsProblem {
  /** 1-based line in the source text. */
  line: number;
  /** Why the line was skipped. */
  reason: string;
}

/**
 * The result of {@linkcode parseKnownHosts}.
 *
 * @example
 * ```ts
 * const known: KnownHosts = parseKnownHosts(readFileSync(`${homedir()}/.ssh/known_hosts`, "utf8"));
 * console.log(known.entries.length, known.invalid.length, known.unsupported.length);
 * ```
 */
export interface KnownHosts {
  /** The usable key lines, in file order. */
  entries: KnownHostEntry[];
  /** Malformed lines (skipped, as OpenSSH does). */
  invalid: KnownHostsProblem[];
  /** `@cert-authority` lines: parsed (they are in `entries`) but not supported for verification. */
  unsupported: KnownHostsProblem[];
}

/**
 * The verdict of {@linkcode verifyHostKey}.
 *
 * @example
 * ```ts
 * const verdict: HostKeyVerdict = verifyHostKey(known.entries, "web1", 22, keyBlob);
 * if (verdict.status === "mismatch") console.error(`changed key; known types ${verdict.knownTypes.join(", ")} on lines ${verdict.lines.join(", ")}`);
 * ```
 */
export type HostKeyVerdict =
  | {
    status: "match";
    line: number;
    /** The line names the bare host, not `[host]:port` (OpenSSH's fallback for a port nothing is known for). */
    withoutPort?: true;
  }
  | {
    status: "unknown";
    /** Lines of `@cert-authority` entries covering this host (not supported). */
    certAuthorityLines?: number[];
  }
  | { status: "mismatch"; knownTypes: string[]; lines: number[] }
  | { status: "revoked"; line: number };

/**
 * Parse known_hosts text. Comments, blank lines and malformed lines are
 * skipped; malformed ones are listed in `invalid`.
 *
 * @example
 * ```ts
 * const kh = parseKnownHosts("[127.0.0.1]:2222 ssh-ed25519 AAAAC3Nz...\n");
 * kh.entries[0].patterns; // ["[127.0.0.1]:2222"]
 * ```
 */
export function parseKnownHosts(text: string): KnownHosts {
  const result: KnownHosts = { entries: [], invalid: [], unsupported: [] };
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const lineNumber = i + 1;
    const raw = lines[i]!.replace(/\r$/, "").trim();
    if (raw === "" || raw.startsWith("#")) continue;
    const fields = raw.split(/[ \t]+/);
    let marker: KnownHostEntry["marker"] = "none";
    if (fields[0]!.startsWith("@")) {
      const name = fields.shift()!;
      if (name === "@revoked") marker = "revoked";
      else if (name === "@cert-authority") marker = "cert-authority";
      else {
        result.invalid.push({ line: lineNumber, reason: `unknown marker ${name}` });
        continue;
      }
    }
    if (fields.length < 3) {
      result.invalid.push({ line: lineNumber, reason: "expected: hosts keytype base64-key [comment]" });
      continue;
    }
    const [hostField, keyType, keyBase64] = fields as [string, string, string];
    const keyBlob = decodeBase64Strict(keyBase64);
    if (keyBlob === null || keyTypeOfBlob(keyBlob) !== keyType) {
      result.invalid.push({ line: lineNumber, reason: `key blob is not a valid ${keyType} key` });
      continue;
    }
    const entry: KnownHostEntry = { marker, patterns: [], keyType, keyBlob, line: lineNumber };
    if (hostField.startsWith("|")) {
      const hashed = parseHashedHost(hostField);
      if (hashed === null) {
        result.invalid.push({ line: lineNumber, reason: "malformed hashed host (expected |1|salt|hash)" });
        continue;
      }
      entry.hashed = hashed;
    } else {
      entry.patterns = hostField.toLowerCase().split(",").filter((p) => p !== "");
    }
    if (marker === "cert-authority") {
      result.unsupported.push({
        line: lineNumber,
        reason: "@cert-authority (host certificates) is not supported; add the host's own key as a plain line",
      });
    }
    result.entries.push(entry);
  }
  return result;
}

/**
 * The host token known_hosts uses: `host` for port 22, `[host]:port` otherwise.
 *
 * @example
 * ```ts
 * hostToken("web1", 22); // "web1"
 * hostToken("127.0.0.1", 2222); // "[127.0.0.1]:2222"
 * ```
 */
export function hostToken(host: string, port: number): string {
  const lower = host.toLowerCase();
  return port === 22 ? lower : `[${lower}]:${port}`;
}

/**
 * Whether an entry's host field covers `host:port` (plain patterns with
 * wildcards and negation, or a hashed token).
 *
 * @example
 * ```ts
 * entryMatchesHost(parseKnownHosts("*.lan,!db.lan ssh-ed25519 AAAA...").entries[0], "web.lan", 22);
 * ```
 */
export function entryMatchesHost(entry: KnownHostEntry, host: string, port: number): boolean {
  const token = hostToken(host, port);
  if (entry.hashed) {
    const digest = createHmac("sha1", entry.hashed.salt).update(token).digest();
    return bytesEqual(digest, entry.hashed.hash);
  }
  let matched = false;
  for (const pattern of entry.patterns) {
    const negated = pattern.startsWith("!");
    const body = negated ? pattern.slice(1) : pattern;
    if (wildcardMatch(body, token)) {
      if (negated) return false; // a matching negation vetoes the whole line, as in OpenSSH
      matched = true;
    }
  }
  return matched;
}

/**
 * Verify a server's host key blob for `host:port` against parsed entries.
 * A revoked key is refused even when another line accepts it. When the host
 * is known but with other keys, the verdict is `mismatch` listing the known
 * key types (offer only those with {@linkcode knownKeyTypes} to avoid a false
 * mismatch when the server simply preferred another type).
 *
 * On a port other than 22, when nothing at all is known for `[host]:port`,
 * a line for the bare `host` with the same key is accepted (`withoutPort`),
 * as OpenSSH does ("found matching key w/out port"; checked with the real
 * client): a bare line with another key leaves the host unknown, never a
 * mismatch, and any `[host]:port` line — even with another key — wins.
 *
 * @example
 * ```ts
 * const verdict = verifyHostKey(parseKnownHosts(text).entries, "127.0.0.1", 2222, serverKeyBlob);
 * if (verdict.status !== "match") refuse(verdict);
 * ```
 */
export function verifyHostKey(
  entries: readonly KnownHostEntry[],
  host: string,
  port: number,
  keyBlob: Uint8Array,
): HostKeyVerdict {
  const verdict = verifyToken(entries, host, port, keyBlob);
  if (port === 22 || verdict.status !== "unknown") return verdict;
  const bare = verifyToken(entries, host, 22, keyBlob);
  if (bare.status === "match") return { ...bare, withoutPort: true };
  return bare.status === "revoked" ? bare : verdict;
}

function verifyToken(
  entries: readonly KnownHostEntry[],
  host: string,
  port: number,
  keyBlob: Uint8Array,
): HostKeyVerdict {
  let matchLine: number | null = null;
  const others: KnownHostEntry[] = [];
  const certAuthorityLines: number[] = [];
  for (const entry of entries) {
    const sameKey = bytesEqual(entry.keyBlob, keyBlob);
    if (entry.marker === "revoked") {
      // OpenSSH applies @revoked lines whose host field covers the host; a
      // `*` pattern revokes the key everywhere.
      if (sameKey && entryMatchesHost(entry, host, port)) return { status: "revoked", line: entry.line };
      continue;
    }
    if (!entryMatchesHost(entry, host, port)) continue;
    if (entry.marker === "cert-authority") {
      certAuthorityLines.push(entry.line);
      continue;
    }
    if (sameKey) matchLine ??= entry.line;
    else others.push(entry);
  }
  if (matchLine !== null) return { status: "match", line: matchLine };
  if (others.length > 0) {
    return {
      status: "mismatch",
      knownTypes: [...new Set(others.map((e) => e.keyType))],
      lines: others.map((e) => e.line),
    };
  }
  return certAuthorityLines.length > 0 ? { status: "unknown", certAuthorityLines } : { status: "unknown" };
}

/**
 * The key types known (not revoked, not CA) for `host:port`, in file order.
 *
 * @example
 * ```ts
 * knownKeyTypes(parseKnownHosts(text).entries, "web1", 22); // ["ssh-ed25519"]
 * ```
 */
export function knownKeyTypes(entries: readonly KnownHostEntry[], host: string, port: number): string[] {
  const types: string[] = [];
  for (const entry of entries) {
    if (entry.marker !== "none" || !entryMatchesHost(entry, host, port)) continue;
    if (!types.includes(entry.keyType)) types.push(entry.keyType);
  }
  return types;
}

/**
 * The OpenSSH SHA-256 fingerprint of a key blob: `SHA256:` + base64 without
 * padding (what `ssh-keygen -lf` and `ssh` print).
 *
 * @example
 * ```ts
 * fingerprintSha256(blob); // "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8"
 * ```
 */
export function fingerprintSha256(blob: Uint8Array): string {
  return "SHA256:" + createHash("sha256").update(blob).digest("base64").replace(/=+$/, "");
}

/**
 * The key type embedded in a key blob (its first SSH string), or `null`.
 *
 * @example
 * ```ts
 * keyTypeOfBlob(blob); // "ssh-ed25519"
 * ```
 */
export function keyTypeOfBlob(blob: Uint8Array): string | null {
  if (blob.length < 4) return null;
  const length = ((blob[0]! << 24) | (blob[1]! << 16) | (blob[2]! << 8) | blob[3]!) >>> 0;
  if (length === 0 || length > 64 || 4 + length > blob.length) return null;
  const name = new TextDecoder().decode(blob.subarray(4, 4 + length));
  return /^[\x21-\x7e]+$/.test(name) ? name : null;
}

/**
 * The exact known_hosts line to add for a key: `token type base64`, or with
 * `hashed` a `|1|salt|hash` host field (fresh random salt) as
 * `ssh-keygen -H` writes it.
 *
 * @example
 * ```ts
 * formatKnownHostsLine("127.0.0.1", 2222, "ssh-ed25519", blob, { hashed: false });
 * // "[127.0.0.1]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA..."
 * ```
 */
export function formatKnownHostsLine(
  host: string,
  port: number,
  type: string,
  blob: Uint8Array,
  options: { hashed?: boolean } = {},
): string {
  const token = hostToken(host, port);
  const key = `${type} ${Buffer.from(blob).toString("base64")}`;
  if (!options.hashed) return `${token} ${key}`;
  const salt = randomBytes(20);
  const hash = createHmac("sha1", salt).update(token).digest();
  return `|1|${salt.toString("base64")}|${hash.toString("base64")} ${key}`;
}

function parseHashedHost(field: string): { salt: Uint8Array; hash: Uint8Array } | null {
  const parts = field.split("|");
  // "|1|salt|hash" splits into ["", "1", salt, hash]
  if (parts.length !== 4 || parts[0] !== "" || parts[1] !== "1") return null;
  const salt = decodeBase64Strict(parts[2]!);
  const hash = decodeBase64Strict(parts[3]!);
  if (salt === null || hash === null || salt.length !== 20 || hash.length !== 20) return null;
  return { salt, hash };
}

function decodeBase64Strict(text: string): Uint8Array | null {
  if (text === "" || !/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return null;
  const bytes = Buffer.from(text, "base64");
  return bytes.length === 0 ? null : new Uint8Array(bytes);
}

/** OpenSSH `match_pattern`: `*` any run, `?` one character; whole-string match. */
function wildcardMatch(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let starP = -1;
  let starT = 0;
  while (t < text.length) {
    if (p < pattern.length && (pattern[p] === "?" || pattern[p] === text[t])) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === "*") {
      starP = p++;
      starT = t;
    } else if (starP >= 0) {
      p = starP + 1;
      t = ++starT;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === "*") p++;
  return p === pattern.length;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Match a host name against an OpenSSH wildcard pattern (`*`, `?`), exactly
 * and case-sensitively (callers lowercase when the context is a host name).
 *
 * @example
 * ```ts
 * matchWildcard("*.lan", "web.lan"); // true
 * ```
 */
export function matchWildcard(pattern: string, text: string): boolean {
  return wildcardMatch(pattern, text);
}
