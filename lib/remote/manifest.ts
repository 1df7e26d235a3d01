/**
 * The stdin of the remote programs: the snapshot path list and the
 * transaction manifest (layout documented in lib/remote/programs/sh_manifest.ts),
 * with the checks that make them safe to frame by lines.
 *
 * @module
 */
import { compareCanonicalPaths, validatePath } from "../patch/paths.ts";
import { sha256Hex } from "../text/sha256.ts";
import type { Plan } from "../types.ts";
import { copyNewContent, isUnjoined, newContentLength } from "../plan/new_content.ts";
import { deltaUpload, piecesProblem } from "./delta.ts";
import type { DeltaUpload } from "./delta.ts";

const encoder = new TextEncoder();
const SHA = /^[0-9a-f]{64}$/;

/**
 * Why a path cannot be sent to a remote program, or `null`. On top of the
 * §6 lexical rules (which already refuse newlines and other control
 * characters, so a path is always exactly one manifest line), names
 * starting with `.sap-` are reserved for the engine's stages, backups,
 * journals and locks: a patch touching them could break a concurrent
 * operation's bookkeeping.
 *
 * @example
 * ```ts
 * remotePathProblem("src/a.ts"); // null
 * remotePathProblem("src/.sap-lock-x"); // "…reserved…"
 * ```
 */
export function remotePathProblem(path: string): string | null {
  const lexical = validatePath(path);
  if (lexical !== null) return lexical.message;
  if (path.split("/").some((part) => part.startsWith(".sap-"))) {
    return `invalid_path: ${JSON.stringify(path)}: names starting with ".sap-" are reserved for the temporary files and locks of this tool; choose another name.`;
  }
  return null;
}

/** How a plan maps onto the manifest: distinct paths (sorted, = lock order) and per-file indices. */
export interface TransactionLayout {
  /** Every path of the plan (sources and move destinations), sorted by UTF-8 bytes. */
  paths: string[];
  /**
   * Per planned file, in plan order: index of its path and of its move
   * destination; `delta` when only new stretches of its content are sent.
   */
  files: { src: number; dst: number | null; delta: DeltaUpload | null }[];
  /** Total bytes of content in the blob after the manifest. */
  contentBytes: number;
}

/** Options of {@linkcode transactionLayout}. */
export interface LayoutOptions {
  /** Send only the new stretches of updates and moves where worth it (lib/remote/delta.ts). Default false. */
  delta?: boolean;
  /**
   * The plan carries no contents, only SHA-256s (reconcile of a
   * `ReconcileTicket`): check their form instead of the bytes.
   */
  contentless?: boolean;
}

/**
 * Check a plan and lay it out. A plan that breaks the engine's assumptions
 * (a bad path, a path twice, a SHA that does not match its bytes) is a
 * programmer error: planPatch never makes one. Throws `TypeError`.
 *
 * @example
 * ```ts
 * const layout = transactionLayout(plan);
 * layout.paths; // sorted lock order
 * ```
 */
export function transactionLayout(plan: Plan, options: LayoutOptions = {}): TransactionLayout {
  if (plan === null || typeof plan !== "object" || !Array.isArray(plan.files)) {
    throw new TypeError("plan must be a Plan");
  }
  const seen = new Set<string>();
  const take = (path: unknown): string => {
    if (typeof path !== "string") throw new TypeError("plan paths must be strings");
    const problem = remotePathProblem(path);
    if (problem !== null) throw new TypeError(`plan path cannot be sent to the remote side: ${problem}`);
    if (seen.has(path)) throw new TypeError(`plan names ${JSON.stringify(path)} twice`);
    seen.add(path);
    return path;
  };
  let contentBytes = 0;
  for (const file of plan.files) {
    take(file.path);
    if (file.op === "move") take(file.moveTo);
    else if (file.moveTo !== undefined) throw new TypeError("only a move has moveTo");
    checkExpected(file.op, file.expected);
    if (file.op === "delete") {
      if (file.newBytes !== undefined) throw new TypeError("a delete has no new content");
    } else if (options.contentless === true) {
      if (typeof file.newSha256 !== "string" || !SHA.test(file.newSha256)) {
        throw new TypeError(`${file.op} of ${file.path} needs a lowercase newSha256`);
      }
    } else {
      // planPatch's unjoined content hashed its own parts (lib/plan/new_content.ts):
      // hashing it again here would be one more full pass over a large file.
      if (isUnjoined(file)) {
        if (typeof file.newSha256 !== "string" || !SHA.test(file.newSha256)) throw new TypeError(`${file.op} of ${file.path} needs a lowercase newSha256`);
      } else {
        if (!(file.newBytes instanceof Uint8Array)) throw new TypeError(`${file.op} of ${file.path} needs newBytes`);
        if (typeof file.newSha256 !== "string" || file.newSha256 !== sha256Hex(file.newBytes)) {
          throw new TypeError(`newSha256 of ${file.path} does not match its newBytes`);
        }
      }
      const problem = piecesProblem(file);
      if (problem !== null) throw new TypeError(`the pieces of ${file.path} do not describe its newBytes: ${problem}`);
    }
  }
  const paths = [...seen].sort(compareCanonicalPaths);
  const index = new Map(paths.map((p, i) => [p, i]));
  const files = plan.files.map((file) => {
    const delta = options.delta === true ? deltaUpload(file) : null;
    contentBytes += delta !== null ? delta.blobBytes : newContentLength(file) ?? 0;
    return { src: index.get(file.path)!, dst: file.op === "move" ? index.get(file.moveTo!)! : null, delta };
  });
  return { paths, files, contentBytes };
}

/**
 * Bytes of file `i`'s content a commit sends: all of it, or for a delta
 * upload the blob stretches and the manifest lines of its pieces.
 *
 * @example
 * ```ts
 * uploadedBytes(plan, layout, 0); // 212 for a 1-line change in a 10 MB file
 * ```
 */
export function uploadedBytes(plan: Plan, layout: TransactionLayout, i: number): number {
  const delta = layout.files[i]!.delta;
  return delta !== null ? delta.blobBytes + delta.lineBytes : newContentLength(plan.files[i]!) ?? 0;
}

/**
 * The op as the host programs know it: a whole-file replace is, on the host,
 * exactly an update (stage, copy mode and owner, one rename over the file),
 * so the programs need no case of their own and every guarantee of an
 * update holds for it.
 */
function wireOp(op: Plan["files"][number]["op"]): "add" | "update" | "delete" | "move" {
  return op === "replace" ? "update" : op;
}

function checkExpected(op: string, expected: Plan["files"][number]["expected"]): void {
  if (!["add", "update", "delete", "move", "replace"].includes(op)) throw new TypeError(`unknown op ${op}`);
  if (op === "add") {
    if (expected?.state !== "missing") throw new TypeError("an add expects its path missing");
  } else if (expected?.state !== "sha256" || !SHA.test(expected.sha256)) {
    throw new TypeError(`an ${op} expects a lowercase sha256 of the current file`);
  }
}

/**
 * The transaction manifest, followed (commit) by all new contents.
 *
 * @example
 * ```ts
 * const stdin = transactionInput(plan, transactionLayout(plan), "SAP-COMMIT-2", true, randomBytes(16).toString("hex"));
 * ```
 */
export function transactionInput(
  plan: Plan,
  layout: TransactionLayout,
  header: "SAP-COMMIT-2" | "SAP-RECONCILE-2",
  withContent: boolean,
  secret: string,
): Uint8Array {
  checkToken(secret, "secret");
  const lines: string[] = [header, `K ${secret}`, String(layout.paths.length)];
  for (const path of layout.paths) lines.push(path, suffixLockHashes(path).join(" "));
  lines.push(String(plan.files.length));
  let offset = 0;
  plan.files.forEach((file, i) => {
    const { src, dst } = layout.files[i]!;
    const delta = withContent ? layout.files[i]!.delta : null;
    const size = newContentLength(file);
    const sent = delta !== null ? delta.blobBytes : size;
    lines.push(
      wireOp(file.op),
      String(src),
      dst === null ? "-" : String(dst),
      file.expected.state === "sha256" ? file.expected.sha256 : "-",
      file.newSha256 ?? "-",
      size !== undefined ? String(sent) : "-",
      size !== undefined ? String(offset) : "-",
    );
    if (delta === null) {
      lines.push("-");
    } else {
      lines.push(String(delta.pieces.length));
      for (const p of delta.pieces) {
        lines.push(p.kind === "source" ? `S ${p.offset} ${p.length}` : p.kind === "blob" ? `B ${p.end - p.start}` : `I ${p.escaped}`);
      }
    }
    if (size !== undefined) offset += sent!;
  });
  lines.push(String(withContent ? layout.contentBytes : 0));
  if (withContent) lines.push("SAP-DATA");
  const head = encoder.encode(lines.join("\n") + "\n");
  if (!withContent) return head;
  const out = new Uint8Array(head.length + layout.contentBytes);
  out.set(head, 0);
  let at = head.length;
  plan.files.forEach((file, i) => {
    const size = newContentLength(file);
    if (size === undefined) return;
    const delta = layout.files[i]!.delta;
    if (delta === null) {
      copyNewContent(file, 0, size, out, at);
      at += size;
      return;
    }
    for (const p of delta.pieces) {
      if (p.kind !== "blob") continue;
      copyNewContent(file, p.start, p.end, out, at);
      at += p.end - p.start;
    }
  });
  return out;
}

/**
 * The name of the lock directory guarding `suffix`: the basename of a path
 * whose parent exists, else the rest of the path below the deepest existing
 * ancestor (see lib/remote/programs/sh_locks.ts).
 *
 * @example
 * ```ts
 * lockDirName("app.conf"); // ".sap-lock-" + 16 hex digits
 * ```
 */
export function lockDirName(suffix: string): string {
  return `.sap-lock-${sha256Hex(suffix).slice(0, 16)}`;
}

/** The lock hashes of a path's suffixes, basename first. */
function suffixLockHashes(path: string): string[] {
  const parts = path.split("/");
  const out: string[] = [];
  for (let n = 1; n <= parts.length; n++) out.push(sha256Hex(parts.slice(parts.length - n).join("/")).slice(0, 16));
  return out;
}

/** What the snapshot request offers for compressed sends (lib/remote/host_wire.ts). */
export interface SnapshotOffer {
  /** Codecs this client can decompress, best first; empty: send everything as it is. */
  codecs: readonly ("zstd" | "gzip")[];
  /** Smallest file worth compressing. */
  minBytes: number;
  /**
   * This client can read the files itself (RemoteShell.localFiles) as this
   * effective uid: the program may hand over, instead of sending, a file of
   * at least `localMinBytes` that it would read by name in a trusted
   * directory, when its own effective uid is this one (`L` line).
   */
  localEuid?: number;
  localMinBytes?: number;
}

/**
 * The snapshot program's stdin: header, secret, nonce, compression offer,
 * local-read offer (`L <euid|-> <min bytes>`), count, the number of hint
 * lines, the hint lines (`<k> <sha256|-> <size|-> [n]`, in path order, only
 * for paths with one: a content this client holds for path k; `n`: the
 * client needs the path to exist), then the paths.
 *
 * @example
 * ```ts
 * snapshotInput([{ path: "a.txt" }, { path: "b/c.txt", hint: { sha256: "ab…", size: 12 } }], secret, nonce, { codecs: [], minBytes: 0 });
 * ```
 */
export function snapshotInput(
  entries: readonly { path: string; hint?: { sha256: string; size: number }; need?: boolean }[],
  secret: string,
  nonce: string,
  offer: SnapshotOffer = { codecs: [], minBytes: 0 },
): Uint8Array {
  checkToken(secret, "secret");
  checkToken(nonce, "nonce");
  const local = offer.localEuid;
  if (local !== undefined && !(Number.isSafeInteger(local) && local >= 0 && Number.isSafeInteger(offer.localMinBytes ?? 0) && (offer.localMinBytes ?? 0) >= 0)) {
    throw new TypeError("snapshotInput: a local-read offer is a uid and a size");
  }
  const lines = [
    "SAP-SNAPSHOT-5",
    `K ${secret}`,
    `N ${nonce}`,
    `Z ${offer.codecs.length ? offer.codecs.join(",") : "-"} ${offer.minBytes}`,
    local === undefined ? "L - 0" : `L ${local} ${offer.localMinBytes ?? 0}`,
    String(entries.length),
  ];
  // the hint lines (path index first, in path order, only where there is
  // something to say), then the paths: the program hands the paths to its
  // tools as one run of arguments
  const hints: string[] = [];
  entries.forEach(({ hint, need }, k) => {
    if (hint !== undefined && (!SHA.test(hint.sha256) || !Number.isSafeInteger(hint.size) || hint.size < 0)) throw new TypeError("snapshotInput: a hint is a SHA-256 and a size");
    if (hint === undefined && need !== true) return;
    // " n": the client needs the path to exist (names near it when missing: sh_near.ts)
    hints.push(`${k} ${hint ? `${hint.sha256} ${hint.size}` : "- -"}${need === true ? " n" : ""}`);
  });
  lines.push(String(hints.length));
  for (const hint of hints) lines.push(hint);
  for (const { path } of entries) lines.push(path);
  return encoder.encode(lines.join("\n") + "\n");
}

function checkToken(value: string, name: string): void {
  if (typeof value !== "string" || !/^[0-9a-f]{16,128}$/.test(value)) throw new TypeError(`${name} must be 16-128 lowercase hex digits`);
}
