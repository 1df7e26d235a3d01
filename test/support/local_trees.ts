/**
 * Test helpers for the remote engine on real local files: the shells to
 * run the programs under, temp trees, hand-made plans, the no-leftovers
 * assertion (and its after-each form), root-only test registration, and two
 * adapters wrapping a real {@linkcode RemoteShell} (one counting execs, one
 * injecting faults at the programs' hook points). The contract suite's
 * list of LocalShell and SshShell cases is in shells_under_test.ts.
 *
 * @module
 */
import { afterEach, beforeEach, test } from "bun:test";
import { dlopen, FFIType, ptr } from "bun:ffi";
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import type { LocalShellOptions } from "../../lib/remote/local_shell.ts";
import { HOOK_DEFINITION } from "../../lib/remote/programs/programs.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";
import type { Plan, PlannedFile } from "../../lib/types.ts";

const encoder = new TextEncoder();

/** A temp directory removed by {@linkcode cleanupTemps}. */
const temps: string[] = [];

/** A fresh temp directory under os.tmpdir(). */
export function tempDir(prefix = "sap-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/** Remove every temp directory made so far. */
export function cleanupTemps(): void {
  while (temps.length > 0) rmSync(temps.pop()!, { recursive: true, force: true });
}

let busyboxDir: string | null = null;

/** The busybox binary (found on PATH; the apt package puts it in /usr/bin). */
export function busyboxBinary(): string {
  const found = Bun.which("busybox");
  if (found === null) throw new Error("busybox is not installed (apt-get install -y busybox); the remote programs must be tested under it");
  return found;
}

/**
 * A directory holding only BusyBox applets (`busybox --install -s`), so a
 * shell run with PATH set to it uses BusyBox's own cat, stat, head, tail,
 * dd, sha256sum… — not the GNU tools (see FIELD_NOTES). One directory per
 * user, reused across runs (bun test fires no exit hooks to remove a
 * per-run one); created atomically by renaming a finished temp directory.
 */
export function busyboxUserland(): string {
  if (busyboxDir !== null) return busyboxDir;
  const dir = join(tmpdir(), `sap-busybox-userland-${process.getuid?.() ?? 0}`);
  if (!existsSync(join(dir, "sh"))) {
    const fresh = mkdtempSync(join(tmpdir(), "sap-busybox-"));
    execFileSync(busyboxBinary(), ["--install", "-s", fresh]);
    chmodSync(fresh, 0o755); // other users (setpriv tests) must reach the applets too
    try {
      renameSync(fresh, dir);
    } catch {
      rmSync(fresh, { recursive: true, force: true }); // another process made it first
    }
  }
  busyboxDir = dir;
  return dir;
}

/** One shell the programs are tested under. */
export interface ShellCase {
  name: string;
  options: LocalShellOptions;
}

/**
 * `/bin/sh`, dash, bash, and BusyBox sh with a pure BusyBox userland.
 * `SAP_TEST_SHELLS=dash,busybox` narrows the list.
 */
export function shellCases(): ShellCase[] {
  const all: { name: string; options: () => LocalShellOptions }[] = [
    { name: "sh", options: () => ({ shell: ["/bin/sh"] }) },
    { name: "dash", options: () => ({ shell: ["dash"] }) },
    { name: "bash", options: () => ({ shell: ["bash"] }) },
    { name: "busybox", options: () => ({ shell: [busyboxBinary(), "sh"], env: { PATH: busyboxUserland(), HOME: "/" } }) },
  ];
  const only = process.env.SAP_TEST_SHELLS?.split(",").map((s) => s.trim()).filter(Boolean);
  const chosen = only && only.length > 0 ? all.filter((c) => only.includes(c.name)) : all;
  return chosen.map((c) => ({ name: c.name, options: c.options() }));
}

/** The same shell case running as another user through setpriv (root only). */
export function asUser(c: ShellCase, uid: number, gid: number): LocalShellOptions {
  return {
    ...c.options,
    shell: [Bun.which("setpriv") ?? "/usr/bin/setpriv", `--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", ...c.options.shell!],
  };
}

/** A file to create: text or bytes, optional mode. */
export type TreeEntry = string | Uint8Array | { content: string | Uint8Array; mode?: number } | { symlink: string } | { dir: true; mode?: number };

/** Create a tree in a fresh temp root; returns the root. */
export function makeTree(entries: Record<string, TreeEntry>, prefix?: string): string {
  const root = tempDir(prefix);
  writeTree(root, entries);
  return root;
}

/** Create entries below an existing directory. */
export function writeTree(root: string, entries: Record<string, TreeEntry>): void {
  for (const [path, entry] of Object.entries(entries)) {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    if (typeof entry === "string" || entry instanceof Uint8Array) {
      writeFileSync(full, entry);
    } else if ("symlink" in entry) {
      symlinkSync(entry.symlink, full);
    } else if ("dir" in entry) {
      mkdirSync(full, { recursive: true });
      if (entry.mode !== undefined) chmodSync(full, entry.mode);
    } else {
      writeFileSync(full, entry.content);
      if (entry.mode !== undefined) chmodSync(full, entry.mode);
    }
  }
}

/** Every `.sap-` entry below root (not following symlinks). */
export function leftovers(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (name.startsWith(".sap-")) found.push(full);
      const st = lstatSync(full);
      if (st.isDirectory()) walk(full);
    }
  };
  walk(root);
  return found;
}

/** Throw when any stage, backup, journal, blob or lock is left below root. */
export function assertNoLeftovers(root: string): void {
  const found = leftovers(root);
  if (found.length > 0) throw new Error(`leftover engine files: ${found.join(", ")}`);
}

/**
 * Make "no stage, lock, backup, journal or blob is left in the test trees"
 * the end of EVERY test of the file: after each test, every temp directory
 * made during it (trees, outside targets, working directories) is checked
 * with {@linkcode assertNoLeftovers}; a leftover fails that test. Call once
 * at the top level of a test file. A test that leaves a file on purpose
 * (a kept backup) must remove it itself — and says so.
 *
 * @example
 * ```ts
 * noLeftoversAfterEach();
 * ```
 */
export function noLeftoversAfterEach(): void {
  let mark = 0;
  beforeEach(() => {
    mark = temps.length;
  });
  afterEach(() => {
    const made = temps.slice(mark).filter((dir) => existsSync(dir));
    const found = made.flatMap((dir) => leftovers(dir));
    if (found.length > 0) throw new Error(`leftover engine files after the test: ${found.join(", ")}`);
  });
}

const isRoot = process.getuid?.() === 0;

/**
 * Register a test that needs root (chown to other uids, setpriv). As root:
 * a normal test. Not root: with `REQUIRE_SSHD=1` (CI mode, where every
 * suite must run) a test that FAILS saying root is needed; otherwise a
 * skipped test — counted and listed by bun as skipped, never silently
 * absent. CI runs as root, so there it is always a real test.
 *
 * @example
 * ```ts
 * rootTest("owner and group are kept", async () => { ... });
 * ```
 */
export function rootTest(name: string, fn: () => Promise<void> | void, timeoutMs?: number): void {
  if (isRoot) {
    test(name, fn, timeoutMs);
  } else if (process.env.REQUIRE_SSHD === "1") {
    test(name, () => {
      throw new Error(`this test needs root (uid 0) and REQUIRE_SSHD=1 demands that every suite runs; run the tests as root`);
    });
  } else {
    test.skip(`${name} [needs root]`, fn);
  }
}

/**
 * Give a file a POSIX ACL (an extra entry for `uid`) through setxattr(2),
 * so no acl package is needed; GNU `ls -l` then shows `+`.
 */
export function setPosixAcl(path: string, uid: number): void {
  const libc = dlopen("libc.so.6", {
    setxattr: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.i32 },
  });
  const NONE = 0xffffffff;
  const entries: [number, number, number][] = [[0x01, 6, NONE], [0x02, 4, uid], [0x04, 4, NONE], [0x10, 6, NONE], [0x20, 4, NONE]];
  const acl = Buffer.alloc(4 + entries.length * 8);
  acl.writeUInt32LE(2, 0);
  entries.forEach(([tag, perm, id], i) => {
    acl.writeUInt16LE(tag, 4 + i * 8);
    acl.writeUInt16LE(perm, 6 + i * 8);
    acl.writeUInt32LE(id, 8 + i * 8);
  });
  const cstr = (s: string): Buffer => Buffer.from(s + "\0");
  const rc = libc.symbols.setxattr(ptr(cstr(path)), ptr(cstr("system.posix_acl_access")), ptr(acl), acl.length, 0);
  libc.close();
  if (rc !== 0) throw new Error(`setxattr(system.posix_acl_access) failed on ${path}`);
}

/** Bytes of a string. */
export function bytes(text: string): Uint8Array {
  return encoder.encode(text);
}

function planned(file: Omit<PlannedFile, "diff" | "hunks" | "warnings" | "newSha256">): PlannedFile {
  return {
    ...file,
    ...(file.newBytes ? { newSha256: sha256Hex(file.newBytes) } : {}),
    diff: `diff --git a/${file.path} b/${file.moveTo ?? file.path}\n`,
    hunks: [],
    warnings: [],
  };
}

/** Hand-made planned files (the engine's input), old content given as bytes or text. */
export const P = {
  add(path: string, content: string | Uint8Array): PlannedFile {
    return planned({ op: "add", path, expected: { state: "missing" }, newBytes: toBytes(content) });
  },
  update(path: string, oldContent: string | Uint8Array, content: string | Uint8Array): PlannedFile {
    return planned({ op: "update", path, expected: { state: "sha256", sha256: sha256Hex(toBytes(oldContent)) }, newBytes: toBytes(content) });
  },
  delete(path: string, oldContent: string | Uint8Array): PlannedFile {
    return planned({ op: "delete", path, expected: { state: "sha256", sha256: sha256Hex(toBytes(oldContent)) } });
  },
  move(path: string, moveTo: string, oldContent: string | Uint8Array, content: string | Uint8Array): PlannedFile {
    return planned({
      op: "move",
      path,
      moveTo,
      expected: { state: "sha256", sha256: sha256Hex(toBytes(oldContent)) },
      expectedDestination: { state: "missing" },
      newBytes: toBytes(content),
    });
  },
};

/** A plan from planned files. */
export function plan(files: PlannedFile[], createParents = true): Plan {
  return { files, warnings: [], createParents };
}

function toBytes(content: string | Uint8Array): Uint8Array {
  return typeof content === "string" ? encoder.encode(content) : content;
}

/** Counts execs and the stdin bytes of each, delegating to a real shell. */
export class CountingShell implements RemoteShell {
  count = 0;
  /** Stdin bytes handed to each exec, in call order. */
  readonly stdinBytes: number[] = [];
  readonly label: string;
  readonly elevated: boolean;
  readonly #inner: RemoteShell;
  constructor(inner: RemoteShell) {
    this.#inner = inner;
    this.label = inner.label ?? "counting";
    this.elevated = inner.elevated ?? false;
  }
  exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    this.count++;
    this.stdinBytes.push(options?.stdin?.length ?? 0);
    return this.#inner.exec(command, options);
  }
}

/**
 * FAULT INJECTION: replaces the programs' no-op `sap_hook` with `body`
 * (shell code receiving the hook name in $1 and its argument in $2) before
 * delegating to a real shell. Throws if the program has no hook line, so a
 * test can never pass without its fault actually being injected.
 */
export class HookedShell implements RemoteShell {
  readonly label: string;
  readonly elevated: boolean;
  /** Forwarded: the options (stdinGate among them) go to the inner shell as they are. */
  readonly stdinGate: boolean;
  readonly #inner: RemoteShell;
  readonly #body: string;
  constructor(inner: RemoteShell, body: string) {
    this.#inner = inner;
    this.#body = body;
    this.label = inner.label ?? "hooked";
    this.elevated = inner.elevated ?? false;
    this.stdinGate = inner.stdinGate ?? false;
  }
  exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    if (!command.includes(HOOK_DEFINITION)) throw new Error("HookedShell: the program has no hook point");
    // A replacer function: a replacement string would turn "$$" into "$".
    return this.#inner.exec(command.replace(HOOK_DEFINITION, () => `sap_hook() {\n${this.#body}\n:\n}`), options);
  }
}

/** A LocalShell for a case, with a private working directory (checked for stray files by some tests). */
export function localShell(c: ShellCase, extra: LocalShellOptions = {}): LocalShell {
  return new LocalShell({ ...c.options, ...extra });
}
