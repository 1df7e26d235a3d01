/**
 * A call that names no configured root (an unknown `root`, or none while
 * several are configured) learns, in the same call, which configured roots
 * hold the paths it is about (issue 29 item 5): the answer names the root
 * and the exact corrected arguments instead of only listing names.
 *
 * Two readings are checked:
 * - the path's first segment is a root's name (`site/index.html` for root
 *   `site`): that root, with the path below it;
 * - the paths as given, in the other roots.
 *
 * Bounded: at most {@linkcode PROBE_MAX_ROOTS} roots (those a first segment
 * names, then the closest names to the one given, then configuration
 * order), at most {@linkcode PROBE_MAX_PATHS} paths each, all roots at
 * once, each root given {@linkcode PROBE_TIMEOUT_MS} including its
 * connection (a host that does not answer in time counts as not holding
 * them, and the answer says it was not checked). Each path is one
 * `listFiles` of its directory filtered to its name: a symlink is never
 * followed, the path rules and root confinement apply as in every tool.
 *
 * @module
 */
import { closestName, listFiles } from "../../mod.ts";
import type { PatchFailure, RemoteShell } from "../../mod.ts";
import { failure } from "../../mod.ts";
import type { Extra, ToolContext } from "./context.ts";
import { pickRoot } from "./context.ts";
import type { RootConfig } from "./roots.ts";

/** Most roots one probe looks into. */
export const PROBE_MAX_ROOTS = 8;
/** Most paths looked for in each root. */
export const PROBE_MAX_PATHS = 3;
/** Time each root gets, its SSH connection included. */
export const PROBE_TIMEOUT_MS = 3_000;

/**
 * A path the call is about: an existing file (read, Update, Delete), or the
 * directory an Add File creates its file in.
 */
export interface ProbeTarget {
  path: string;
  kind: "file" | "directory";
}

/** One tool's words for the corrected call. */
export interface ProbeCall {
  /** The tool name, as the model calls it. */
  tool: string;
  /**
   * The corrected arguments besides root, in the message (`the same patch`,
   * `"path": "x"`), given the first segment to drop from the paths, if any.
   */
  rest(prefix: string | null): string;
}

interface Reading {
  root: RootConfig;
  /** The first segment stripped from every target (the root's name), or null. */
  prefix: string | null;
}

/**
 * The root `name` picks (as {@linkcode pickRoot}), or a failure that, when
 * the name is unknown or missing, names the configured roots holding
 * `targets()` (only then computed) and the corrected call.
 *
 * @example
 * ```ts
 * const root = await pickRootProbing(ctx, args.root, () => [{ path: args.path, kind: "file" }], extra, { tool: "read_file", rest: (p) => `"path": ${JSON.stringify(p ?? args.path)}` });
 * if ("code" in root) return failed(root);
 * ```
 */
export async function pickRootProbing(ctx: ToolContext, name: string | undefined, targets: () => readonly ProbeTarget[], extra: Extra, call: ProbeCall): Promise<RootConfig | PatchFailure> {
  const picked = pickRoot(ctx, name);
  const roots = ctx.connection.roots;
  if (!("code" in picked) || roots.length === 0) return picked;
  const wanted = targets().slice(0, PROBE_MAX_PATHS);
  if (wanted.length === 0) return picked;

  // Which readings to check, most likely first.
  const readings: Reading[] = [];
  const seen = new Set<string>();
  const add = (root: RootConfig, prefix: string | null): void => {
    const key = `${root.name}\0${prefix ?? ""}`;
    if (seen.has(key) || readings.length >= PROBE_MAX_ROOTS) return;
    seen.add(key);
    readings.push({ root, prefix });
  };
  const first = firstSegment(wanted);
  const prefixed = first === null ? undefined : roots.find((r) => r.name === first);
  if (prefixed !== undefined) add(prefixed, first);
  const names = roots.map((r) => r.name);
  const near = name === undefined ? null : closestName(name, names);
  if (near !== null) add(roots.find((r) => r.name === near)!, null);
  for (const root of roots) add(root, null);

  const results = await Promise.all(readings.map((reading) => holds(ctx, reading, wanted, extra)));
  const holders = readings.filter((_, i) => results[i] === true);
  const unchecked = readings.filter((_, i) => results[i] === null).map((r) => r.root.name);
  return explain(picked, name, wanted, readings, holders, unchecked, roots, call);
}

/** The first segment every target shares, when each has one below it. */
function firstSegment(targets: readonly ProbeTarget[]): string | null {
  let segment: string | null = null;
  for (const t of targets) {
    const slash = t.path.indexOf("/");
    if (slash <= 0 || slash === t.path.length - 1) return null;
    const s = t.path.slice(0, slash);
    if (segment !== null && s !== segment) return null;
    segment = s;
  }
  return segment;
}

function strip(path: string, prefix: string | null): string {
  return prefix === null ? path : path.slice(prefix.length + 1);
}

/** Whether the root holds every target under this reading; null when it could not be checked in time. */
async function holds(ctx: ToolContext, reading: Reading, targets: readonly ProbeTarget[], extra: Extra): Promise<boolean | null> {
  const stop = new AbortController();
  const signal = extra.signal === undefined ? stop.signal : AbortSignal.any([extra.signal, stop.signal]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => {
      stop.abort();
      resolve(null);
    }, PROBE_TIMEOUT_MS);
  });
  const check = async (): Promise<boolean | null> => {
    let shell: RemoteShell;
    try {
      shell = await ctx.shells.shellFor(reading.root);
    } catch {
      return null;
    }
    for (const target of targets) {
      if (!(await present(shell, reading.root, strip(target.path, reading.prefix), target.kind, signal))) return false;
    }
    return true;
  };
  try {
    return await Promise.race([check(), late]);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** A glob that matches exactly `name` (names with glob characters are listed unfiltered, a bounded page). */
const PLAIN_NAME = /^[A-Za-z0-9._+@%,:=-]+$/;

async function present(shell: RemoteShell, root: RootConfig, path: string, kind: ProbeTarget["kind"], signal: AbortSignal): Promise<boolean> {
  const slash = path.lastIndexOf("/");
  const dir = slash < 0 ? undefined : path.slice(0, slash);
  const base = path.slice(slash + 1);
  if (base === "" || base === "." || base === "..") return false;
  const plain = PLAIN_NAME.test(base);
  const listing = await listFiles(shell, root.path, {
    ...(dir !== undefined ? { path: dir } : {}),
    depth: 1,
    ...(plain ? { glob: base } : {}),
    maxEntries: plain ? 4 : 1000,
    signal,
    timeoutMs: PROBE_TIMEOUT_MS,
  });
  return listing.ok && listing.entries.some((e) => e.path === path && e.kind === kind);
}

function explain(
  picked: PatchFailure,
  name: string | undefined,
  targets: readonly ProbeTarget[],
  readings: readonly Reading[],
  holders: readonly Reading[],
  unchecked: readonly string[],
  roots: readonly RootConfig[],
  call: ProbeCall,
): PatchFailure {
  const what = targets.map((t) => t.path).join(", ");
  const verb = targets.length === 1 ? "is" : "are";
  const probed = readings.length < roots.length ? ` (${readings.length} of the ${roots.length} roots were checked: those most likely)` : "";
  const notChecked = unchecked.length > 0 ? ` Not checked (no answer within ${PROBE_TIMEOUT_MS / 1000} s): ${unchecked.join(", ")}.` : "";
  if (holders.length === 0) return { ...picked, message: `${picked.message} None of the roots checked holds ${what}${probed}.${notChecked}` };
  const names = roots.map((r) => r.name).join(", ");
  const lead = name === undefined
    ? `several roots are configured (${names}) and no "root" was passed`
    : `there is no root named ${JSON.stringify(name)} (the roots are: ${names})`;
  if (holders.length > 1) {
    const list = holders.map((h) => `"${h.root.name}"${h.prefix !== null ? ` (as ${targets.map((t) => strip(t.path, h.prefix)).join(", ")})` : ""}`).join(", ");
    return failure("invalid_argument", `${lead}; ${what} ${verb} in several roots: ${list}. Next step: call ${call.tool} again with the one you mean as "root".${notChecked}`);
  }
  const h = holders[0]!;
  const where = h.prefix === null
    ? `${what} ${verb} in root "${h.root.name}"`
    : `"${h.prefix}" is a root, not a directory: ${targets.map((t) => `${t.path} is ${strip(t.path, h.prefix)} in root "${h.root.name}"`).join(", ")}`;
  const single = targets.length === 1 && h.prefix !== null ? { suggestedPath: strip(targets[0]!.path, h.prefix) } : {};
  return failure(
    "invalid_argument",
    `${lead}; ${where}. Next step: call ${call.tool} again with "root": "${h.root.name}" and ${call.rest(h.prefix)}.${notChecked}`,
    { suggestedRoot: h.root.name, ...single },
  );
}
