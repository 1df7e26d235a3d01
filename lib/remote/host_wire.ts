/**
 * What goes over the wire besides the data (SPEC §11.1): whether to
 * compress, what this host can decompress, and the programs' own text.
 *
 * `compress` (`"auto" | true | false`, option of readSnapshots,
 * commitRemote, reconcile and applyPatch):
 * - `"auto"` (default): compress when the shell says it crosses a network
 *   (`RemoteShell.link === "network"`: SshShell). A shell that does not
 *   say (a custom adapter, a test wrapper) is treated as local, so nothing
 *   changes for it unless it opts in. LocalShell never compresses: piping
 *   through a compressor costs more than it saves on a pipe.
 * - `true`: whenever the host can (the tests use it under LocalShell).
 * - `false`: never.
 *
 * Two things are compressed when it is on:
 * - snapshot contents of at least {@linkcode COMPRESS_MIN_BYTES}, by the
 *   host's `zstd -1` (or `gzip -1`), decompressed here with a bound
 *   (lib/remote/inflate.ts) and checked against the host's SHA-256;
 * - the programs' own text (35–80 KiB of `sh`; a cached 1-line change would
 *   otherwise send more program than data): gzip'd and base64'd once per
 *   process, unpacked on the host by `base64 -d | gzip -dc` into `eval`.
 *   Only once a snapshot of this shell has reported that the host has both
 *   tools (the first program on a connection always goes as plain text), and
 *   a host that then cannot unpack it answers `SAP-NEED-PLAIN` before
 *   reading anything: the call is repeated once in plain text.
 *
 * What the host reported is remembered per shell object (a WeakMap: no
 * global state outlives the shell).
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type * as Zlib from "node:zlib";
import { lazyBuiltin } from "./lazy_builtin.ts";
import type { Codec } from "./inflate.ts";
import { localCodecs } from "./inflate.ts";
import { execChecked } from "./shell.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "./shell.ts";

/**
 * The compression switch of the remote operations.
 *
 * @example
 * ```ts
 * await readSnapshots(shell, root, paths, { compress: "auto" satisfies CompressMode }); // only over a network link
 * await readSnapshots(shell, root, paths, { compress: false }); // never
 * ```
 */
export type CompressMode = "auto" | boolean;

/** Smallest snapshot content sent compressed (below it a compressor's start costs more than it saves). */
export const COMPRESS_MIN_BYTES: number = 64 * 1024;

/** The line a packed program prints, alone, when the host cannot unpack it. */
export const NEED_PLAIN = "SAP-NEED-PLAIN";

/** What the host of one shell said about its tools. */
interface HostTools {
  /** `base64` and `gzip` are there: programs may travel packed. */
  unpack: boolean;
  /** Compressors the host has, in the host's report order. */
  codecs: Codec[];
  /** A packed program was refused once: plain text from now on. */
  plainOnly: boolean;
  /** Codecs whose output did not decompress (or whose tool failed) here: not offered again. */
  broken: Set<Codec>;
}

const HOSTS = new WeakMap<RemoteShell, HostTools>();

/**
 * Whether compression is on for this shell and mode.
 *
 * @example
 * ```ts
 * compressionOn(new LocalShell(), "auto"); // false
 * ```
 */
export function compressionOn(shell: RemoteShell, mode: CompressMode | undefined): boolean {
  const m = mode ?? "auto";
  if (m !== "auto" && m !== true && m !== false) throw new TypeError('compress must be "auto", true or false');
  return m === "auto" ? shell.link === "network" : m;
}

/**
 * The codecs to offer the host for snapshot contents: what this runtime can
 * decompress, best first (empty when compression is off).
 *
 * @example
 * ```ts
 * offeredCodecs(sshShell, "auto"); // ["zstd", "gzip"]
 * ```
 */
export function offeredCodecs(shell: RemoteShell, mode: CompressMode | undefined): Codec[] {
  if (!compressionOn(shell, mode)) return [];
  const broken = HOSTS.get(shell)?.broken;
  return localCodecs().filter((c) => broken === undefined || !broken.has(c));
}

/**
 * Stop offering `codec` to this shell's host (its output did not check out).
 *
 * @example
 * ```ts
 * noteBrokenCodec(shell, "zstd");
 * ```
 */
export function noteBrokenCodec(shell: RemoteShell, codec: Codec): void {
  const host = HOSTS.get(shell) ?? { unpack: false, codecs: [], plainOnly: false, broken: new Set<Codec>() };
  host.broken.add(codec);
  HOSTS.set(shell, host);
}

/**
 * Record the tools a snapshot program found on the host (`HAVE …` line).
 *
 * @example
 * ```ts
 * noteHostTools(shell, ["base64", "gzip", "zstd"]);
 * ```
 */
export function noteHostTools(shell: RemoteShell, tools: readonly string[]): void {
  const had = HOSTS.get(shell);
  HOSTS.set(shell, {
    unpack: tools.includes("base64") && tools.includes("gzip"),
    codecs: (["zstd", "gzip"] as const).filter((c) => tools.includes(c)),
    plainOnly: had?.plainOnly ?? false,
    broken: had?.broken ?? new Set<Codec>(),
  });
}

const PACKED = new Map<string, string>();
const PACKED_MAX = 16;


/**
 * A program as it goes to the host: the `set -- …` line, then the body —
 * packed (gzip + base64, unpacked into `eval`) when compression is on and
 * the host is known to unpack, else as plain text.
 *
 * @example
 * ```ts
 * const command = wireProgram(shell, snapshotProgram(root, max), "auto");
 * ```
 */
export function wireProgram(shell: RemoteShell, program: string, mode: CompressMode | undefined): string {
  const host = HOSTS.get(shell);
  if (!compressionOn(shell, mode) || host === undefined || !host.unpack || host.plainOnly) return program;
  const cut = program.indexOf("\n");
  if (cut < 0 || !program.startsWith("set -- ")) return program;
  const body = program.slice(cut + 1);
  let packed = PACKED.get(body);
  if (packed === undefined) {
    packed = Buffer.from(lazyBuiltin<typeof Zlib>("node:zlib").gzipSync(new TextEncoder().encode(body), { level: 9 })).toString("base64");
    if (PACKED.size >= PACKED_MAX) PACKED.delete(PACKED.keys().next().value!);
    PACKED.set(body, packed);
  }
  // The body is this library's fixed text; only the `set --` line carries
  // caller data, and it stays outside, as written. A failed unpack (no
  // tool, corrupt stream: gzip checks its CRC) says so before the program
  // has read a byte of stdin or touched anything.
  return `${program.slice(0, cut)}
sap_z='${packed}'
sap_p=$(printf '%s' "$sap_z" | base64 -d 2>/dev/null | gzip -dc 2>/dev/null) && [ -n "$sap_p" ] || { printf '%s\\n' ${NEED_PLAIN}; exit 0; }
unset sap_z
eval "$sap_p"
`;
}

/**
 * Run a program through `shell`, packed when {@linkcode wireProgram} says
 * so; a host that answers {@linkcode NEED_PLAIN} gets it once more as
 * plain text (and only plain text from then on).
 *
 * @example
 * ```ts
 * const result = await execProgram(shell, commitProgram(…), { stdin }, "auto");
 * ```
 */
export async function execProgram(
  shell: RemoteShell,
  program: string,
  options: ExecOptions,
  mode: CompressMode | undefined,
): Promise<ExecResult> {
  const command = wireProgram(shell, program, mode);
  const result = await execChecked(shell, command, options);
  if (command === program || !refusedUnpack(result)) return result;
  const host = HOSTS.get(shell);
  if (host !== undefined) host.plainOnly = true;
  return await execChecked(shell, program, options);
}

function refusedUnpack(result: ExecResult): boolean {
  if (result.exitCode !== 0 || result.stdout.length !== NEED_PLAIN.length + 1) return false;
  return new TextDecoder().decode(result.stdout) === `${NEED_PLAIN}\n`;
}
