/**
 * Shared bits of the fleet tests: roots standing in for hosts, the patch
 * they get, a meter that counts programs in flight and connections open
 * across a whole fleet, and a fault-injecting wrapper that kills a host's
 * commit program at one of its hook points.
 *
 * @module
 */
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HOOK_DEFINITION } from "../../lib/remote/programs/programs.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";

/** The file every host has, before the patch. */
export const BEFORE = "listen 80\nworkers 2\nlog /var/log/app.log\n";
/** The same file after it. */
export const AFTER = "listen 80\nworkers 8\nlog /var/log/app.log\n";
/** A host whose file was edited by hand: the patch's context is not there. */
export const DRIFTED = "listen 80\nworkers 3\nlog /var/log/app.log\n";

/** The patch: one changed line in app.conf. */
export const PATCH: string = ["*** Begin Patch", "*** Update File: app.conf", "@@", " listen 80", "-workers 2", "+workers 8", "*** End Patch"].join("\n");

/** SHA-256 of a string's UTF-8. */
export function sha(text: string): string {
  return sha256Hex(new TextEncoder().encode(text));
}

/** Roots standing in for hosts: `h01`, `h02`, … each holding app.conf. */
export interface Hosts {
  names: string[];
  roots: Map<string, string>;
  /** app.conf of a host now. */
  read(name: string): string;
  write(name: string, text: string): void;
  remove(): void;
}

/**
 * `n` fresh roots, each with app.conf = `content(name)` (default BEFORE),
 * made readable for a login user when `owner` is given.
 */
export function makeHosts(n: number, content: (name: string, i: number) => string = () => BEFORE, owner?: { uid: number; gid: number }): Hosts {
  const base = mkdtempSync(join(tmpdir(), "sap-fleet-"));
  // A login user other than us must be able to reach its roots.
  if (owner !== undefined) chmodSync(base, 0o755);
  const names = Array.from({ length: n }, (_, i) => `h${String(i + 1).padStart(2, "0")}`);
  const roots = new Map<string, string>();
  const file = (name: string): string => join(roots.get(name)!, "app.conf");
  for (const [i, name] of names.entries()) {
    const root = mkdtempSync(join(base, `${name}-`));
    roots.set(name, root);
    writeFileSync(join(root, "app.conf"), content(name, i));
  }
  const hosts: Hosts = {
    names,
    roots,
    read: (name) => readFileSync(file(name), "utf8"),
    write: (name, text) => writeFileSync(file(name), text),
    remove: () => rmSync(base, { recursive: true, force: true }),
  };
  if (owner !== undefined) chownAll(hosts, owner);
  return hosts;
}

function chownAll(hosts: Hosts, owner: { uid: number; gid: number }): void {
  for (const root of hosts.roots.values()) {
    chownSync(root, owner.uid, owner.gid);
    chownSync(join(root, "app.conf"), owner.uid, owner.gid);
  }
}

/**
 * Counts, across every shell it wraps, the programs running at once and the
 * connections open at once (a wrapped shell is "open" from wrap to close),
 * and remembers the highest of each.
 */
export class FleetMeter {
  inFlight = 0;
  maxInFlight = 0;
  open = 0;
  maxOpen = 0;
  opened = 0;
  closed = 0;
  execs = 0;

  /** A shell over `inner` that this meter counts; its close() closes `inner` too. */
  wrap(inner: RemoteShell): RemoteShell {
    this.opened++;
    this.open++;
    this.maxOpen = Math.max(this.maxOpen, this.open);
    let closed = false;
    const meter = this;
    return {
      label: inner.label,
      elevated: inner.elevated,
      link: inner.link,
      async exec(command: string, options?: ExecOptions): Promise<ExecResult> {
        if (closed) throw new Error("FleetMeter: exec on a closed shell");
        meter.execs++;
        meter.inFlight++;
        meter.maxInFlight = Math.max(meter.maxInFlight, meter.inFlight);
        try {
          return await inner.exec(command, options);
        } finally {
          meter.inFlight--;
        }
      },
      async close(): Promise<void> {
        if (closed) return;
        closed = true;
        meter.open--;
        meter.closed++;
        await inner.close?.();
      },
    };
  }
}

/**
 * FAULT INJECTION: the commit program gets `kill -9 $$` at hook `hook`
 * (e.g. `done`: after its commit point; `after_finalize 0`: after the first
 * file was renamed into place, before the commit point), the way a host
 * crash or an OOM kill would end it. Other programs pass through untouched.
 * `fired` counts the commit programs that had the kill put in. It does not
 * forward the inner shell's `link`, so its programs always travel as plain
 * text (a packed program would hide the hook points).
 */
export class CommitKiller implements RemoteShell {
  fired = 0;
  readonly label: string | undefined;
  readonly #inner: RemoteShell;
  readonly #hook: string;
  constructor(inner: RemoteShell, hook: string) {
    this.#inner = inner;
    this.#hook = hook;
    this.label = inner.label;
  }
  exec(command: string, options?: ExecOptions): Promise<ExecResult> {
    if (!command.includes('sap_out "SAP-BEGIN commit"') || !command.includes(HOOK_DEFINITION)) return this.#inner.exec(command, options);
    this.fired++;
    const body = `case "$1 $2" in ${JSON.stringify(this.#hook.includes(" ") ? this.#hook : `${this.#hook} `)}) kill -9 $$ ;; esac`;
    // A replacer function: a replacement string would turn "$$" into "$".
    return this.#inner.exec(command.replace(HOOK_DEFINITION, () => `sap_hook() {\n${body}\n:\n}`), options);
  }
  close(): Promise<void> {
    return this.#inner.close?.() ?? Promise.resolve();
  }
}

/** A promise and its resolver. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
