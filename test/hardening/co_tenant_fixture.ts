/**
 * The co-tenant setting of issue 12 (SPEC §6.1): a root that holds one
 * directory another local user can write (group-writable `2775`, sticky
 * `1777`, or the root's own parent), next to an "outside" tree the engine
 * must never read, write, create, move, chown or delete anything in.
 *
 * The other user is a real second uid (the harness's `sapp<id>` account),
 * so an attack only works where that uid really has the permissions: every
 * attacker action runs through `setpriv` as that uid.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import { sha256Hex } from "../../lib/text/sha256.ts";
import { ensureTestUsers } from "../support/sshd.ts";
import { tempDir } from "../support/local_trees.ts";

/** A uid with its primary gid. */
export interface Account {
  name: string;
  uid: number;
  gid: number;
}

function account(name: string): Account {
  const id = (flag: string): number => Number(spawnSync("id", [flag, name], { encoding: "utf8" }).stdout.trim());
  return { name, uid: id("-u"), gid: id("-g") };
}

/** The other local user (root only: the harness creates it). */
export function attackerAccount(): Account {
  return account(ensureTestUsers().passwordUser);
}

/** The non-root login user of the harness (the engine runs as it in the non-root cases). */
export function loginAccount(): Account {
  return account(ensureTestUsers().nopasswdUser);
}

/** How the shared directory is shared. */
export type Sharing = "group" | "sticky" | "parent";

/** A base directory with `root/` (holding `shared/`) and `outside/`. */
export interface CoTenantTree {
  base: string;
  root: string;
  /** The directory the attacker can write (for "parent": the root's parent, `base`). */
  shared: string;
  /** `root/shared` in every setting (the patched files live there). */
  work: string;
  outside: string;
  /** Unique marker in every outside file: no snapshot or file in the root may ever contain it. */
  marker: string;
  attacker: Account;
  /** Owner of the root and everything in it (root, or the login user in the non-root cases). */
  owner: Account | null;
}

/** Options of {@linkcode coTenantTree}. */
export interface CoTenantOptions {
  sharing?: Sharing;
  /** Files below `root/shared` (text), created by the owner. */
  files?: Record<string, string | { text: string; mode: number }>;
  /** Give the root and its contents to this account (default: stay root's). */
  owner?: Account | null;
}

/**
 * Build the setting. Runs as root.
 *
 * @example
 * ```ts
 * const t = coTenantTree({ files: { "f.txt": "v1\n" } });
 * const before = treeDigest(t.outside);
 * ```
 */
export function coTenantTree(options: CoTenantOptions = {}): CoTenantTree {
  const sharing = options.sharing ?? "group";
  const attacker = attackerAccount();
  const owner = options.owner ?? null;
  const base = tempDir("sap-cotenant-");
  chmodSync(base, 0o755);
  const marker = `OUTSIDE-${randomBytes(8).toString("hex")}`;
  const outside = join(base, "outside");
  const files: Record<string, [string, number]> = {
    "secret.txt": [`${marker} root-only secret\n`, 0o600],
    "target.txt": [`${marker} ORIGINAL\n`, 0o644],
    "dir/inner.txt": [`${marker} inner\n`, 0o644],
    "home/.ssh/authorized_keys": [`${marker} ssh-ed25519 AAAA user@host\n`, 0o600],
  };
  for (const [path, [text, mode]] of Object.entries(files)) {
    mkdirSync(dirname(join(outside, path)), { recursive: true, mode: 0o755 });
    writeFileSync(join(outside, path), text, { mode });
    chmodSync(join(outside, path), mode);
  }
  if (owner) {
    // a home of the login user: theirs, as their ~/.ssh would be
    for (const p of ["home", "home/.ssh", "home/.ssh/authorized_keys"]) chownSync(join(outside, p), owner.uid, owner.gid);
  }
  const root = join(base, "root");
  const work = join(root, "shared");
  mkdirSync(work, { recursive: true });
  for (const [path, entry] of Object.entries(options.files ?? {})) {
    const full = join(work, path);
    mkdirSync(dirname(full), { recursive: true });
    const text = typeof entry === "string" ? entry : entry.text;
    writeFileSync(full, text);
    if (typeof entry !== "string") chmodSync(full, entry.mode);
  }
  if (owner) spawnSync("chown", ["-R", `${owner.uid}:${owner.gid}`, root]);
  chmodSync(root, 0o755);
  let shared = work;
  if (sharing === "group") {
    chownSync(work, owner?.uid ?? 0, attacker.gid);
    chmodSync(work, 0o2775);
  } else if (sharing === "sticky") {
    chmodSync(work, 0o1777);
  } else {
    chmodSync(work, 0o755);
    chownSync(base, 0, attacker.gid);
    chmodSync(base, 0o2775);
    shared = base;
  }
  return { base, root, shared, work, outside, marker, attacker, owner };
}

/**
 * Run a shell command as the attacker (`setpriv`, no supplementary
 * groups but its own): it succeeds only where that uid may act.
 *
 * @example
 * ```ts
 * asAttacker(t, `ln -s ${shQuote(t.outside)} ${shQuote(join(t.shared, "x"))}`);
 * ```
 */
export function asAttacker(t: CoTenantTree, script: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync("setpriv", [`--reuid=${t.attacker.uid}`, `--regid=${t.attacker.gid}`, "--clear-groups", "/bin/sh", "-c", script], { encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The `setpriv` prefix of an attacker action, for shell wrappers (one quoted word per element). */
export function attackerPrefix(t: CoTenantTree): string[] {
  return ["/usr/bin/setpriv", `--reuid=${t.attacker.uid}`, `--regid=${t.attacker.gid}`, "--clear-groups"];
}

/**
 * Everything that identifies a tree, not following symlinks: per entry its
 * kind, permission bits, owner, group, link count, size, modification and
 * change times, content SHA-256 and symlink target. Any write, create,
 * move, chmod, chown or hard link the engine made there changes it (reads
 * do not: atime is left out).
 *
 * @example
 * ```ts
 * expect(treeDigest(t.outside)).toEqual(before);
 * ```
 */
export function treeDigest(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string): void => {
    const full = rel === "" ? dir : join(dir, rel);
    let names: string[];
    try {
      names = readdirSync(full).sort();
    } catch {
      return; // gone: another user's entry, removed meanwhile
    }
    for (const name of names) {
      const child = rel === "" ? name : `${rel}/${name}`;
      const path = join(dir, child);
      let st;
      try {
        st = lstatSync(path, { bigint: true });
      } catch {
        continue;
      }
      const meta = `${(Number(st.mode) & 0o7777).toString(8)} ${st.uid}:${st.gid} n${st.nlink} m${st.mtimeNs} c${st.ctimeNs}`;
      try {
        if (st.isSymbolicLink()) out.set(child, `symlink ${meta} → ${readlinkSync(path)}`);
        else if (st.isDirectory()) {
          out.set(child, `dir ${meta}`);
          walk(child);
        } else if (st.isFile()) out.set(child, `file ${meta} ${st.size} ${sha256Hex(new Uint8Array(readFileSync(path)))}`);
        else out.set(child, `other ${meta}`);
      } catch {
        out.delete(child); // gone while being read
      }
    }
  };
  walk("");
  return out;
}

/** What differs between two digests, one line per entry. */
export function digestChanges(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of before) if (after.get(k) !== v) out.push(`${k}: ${v} → ${after.get(k) ?? "gone"}`);
  for (const [k, v] of after) if (!before.has(k)) out.push(`${k}: new ${v}`);
  return out;
}

/** Every regular file below `dir` (not following symlinks) whose bytes contain `marker`. */
export function filesContaining(dir: string, marker: string): string[] {
  const found: string[] = [];
  const walk = (d: string): void => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return; // gone (another user may be changing the tree)
    }
    for (const name of names) {
      const full = join(d, name);
      try {
        const st = lstatSync(full);
        if (st.isDirectory()) walk(full);
        else if (st.isFile() && readFileSync(full).includes(marker)) found.push(full);
      } catch {
        // gone again
      }
    }
  };
  walk(dir);
  return found;
}

/**
 * One FAULT INJECTION rule of {@linkcode attackShell}: when the engine runs
 * `tool` with arguments matching `pattern` (a `case` pattern over "$*"),
 * run `before` and/or `after` (shell code) AS THE ATTACKER, right before /
 * after the real tool. They see `W_PWD` (the engine's working directory at
 * that moment), `W_LAST` (the tool's last argument), `W_FIRST` (the first
 * argument that is not an option) and, for `after`, `W_OUT` (the tool's
 * stdout) and `W_RC` (its exit status).
 */
export interface AttackRule {
  tool: string;
  pattern: string;
  before?: string;
  after?: string;
}

/**
 * FAULT INJECTION: a PATH directory of wrappers that make the other user
 * act at the exact moment the engine runs a tool (what a watching attacker
 * does at best timing, made deterministic). The attacker's actions run
 * through setpriv, so they only succeed where that uid may act.
 *
 * @example
 * ```ts
 * const bin = attackBin(t, [{ tool: "mkdir", pattern: "*.sap-*", after: 'cd "$W_PWD" && mv "$W_LAST" x && ln -s /etc "$W_LAST"' }], process.env.PATH!);
 * ```
 */
export function attackBin(t: CoTenantTree, rules: readonly AttackRule[], path: string): string {
  const bin = tempDir("sap-attack-bin-");
  chmodSync(bin, 0o755);
  const which = (tool: string): string => {
    for (const dir of path.split(":")) {
      try {
        lstatSync(join(dir, tool));
        return join(dir, tool);
      } catch {
        // not here
      }
    }
    throw new Error(`attackBin: ${tool} is not on ${path}`);
  };
  const as = attackerPrefix(t).map((w) => `'${w}'`).join(" ");
  const q = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;
  const byTool = new Map<string, AttackRule[]>();
  for (const r of rules) byTool.set(r.tool, [...(byTool.get(r.tool) ?? []), r]);
  for (const [tool, list] of byTool) {
    const real = which(tool);
    const act = (code: string): string => `${as} /bin/sh -c ${q(code)} >/dev/null 2>&1 </dev/null`;
    const lines = [
      "#!/bin/sh",
      'W_PWD=$(pwd) W_LAST= W_FIRST=',
      'for a in "$@"; do W_LAST=$a; case $a in -*) ;; *) [ -n "$W_FIRST" ] || W_FIRST=$a ;; esac; done',
      "export W_PWD W_LAST W_FIRST",
      "W_RULE=",
      ...list.map((r, n) => `case "$*" in ${r.pattern}) W_RULE=${n} ;; esac`),
      ...list.map((r, n) => (r.before ? `[ "$W_RULE" = ${n} ] && ${act(r.before)}` : ":")),
      // Only mktemp's output (one line, the name it made) is captured; every
      // other tool's stdout (file bytes) passes through untouched.
      ...(tool === "mktemp"
        ? [`W_OUT=$(${q(real)} "$@")`, "W_RC=$?", '[ -z "$W_OUT" ] || printf "%s\\n" "$W_OUT"']
        : [`W_OUT= ; ${q(real)} "$@"`, "W_RC=$?"]),
      "export W_OUT W_RC",
      ...list.map((r, n) => (r.after ? `[ "$W_RULE" = ${n} ] && ${act(r.after)}` : ":")),
      'exit "$W_RC"',
      "",
    ];
    writeFileSync(join(bin, tool), lines.join("\n"), { mode: 0o755 });
  }
  return bin;
}
