/**
 * The call-counting harness of test/model_mistakes/follow_up.test.ts
 * (issue 29 item 7): a model mistake is recovered when the file is right
 * after at most one follow-up call, and the follow-up is built from
 * nothing but the failure the server returned.
 *
 * One server per transport × root kind serves the whole table: the example
 * server (examples/mcp_server.ts, a real process) over stdio and over
 * Streamable HTTP (with the bearer token it writes), with local roots and
 * with roots on a real sshd (test/support/sshd.ts). Each case gets its own
 * root, named by the case's `id`, in each of the four servers, so cases
 * never see each other's files.
 *
 * @module
 */
import { expect } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import type { WirePatchFailure } from "../../examples/wire/types.ts";
import type { FailureCode } from "../../mod.ts";
import type { Sshd } from "../support/sshd.ts";
import { writeKnownHosts } from "../support/sshd.ts";
import { httpClient, startHttpServer } from "../mcp/http_helpers.ts";
import type { Running } from "../mcp/http_helpers.ts";
import { startStdio } from "../mcp/stdio_helpers.ts";
import type { StdioSession } from "../mcp/stdio_helpers.ts";

/** A root's content, path → text (UTF-8) or bytes. */
export type Files = Record<string, string | Uint8Array>;

/** One tool call as a model sends it. */
export interface ToolCall {
  tool: string;
  /** The arguments; without a `root` key the harness adds the case's root (a key set to `undefined` is dropped). */
  arguments: Record<string, unknown>;
}

/** What the server answered, as the model sees it. */
export interface Answer {
  isError: boolean;
  /** Every text content block, joined by a newline: what a model reads first. */
  text: string;
  /** The structuredContent (ApplyPatchOutput, ReadFileOutput, …). */
  structured: Record<string, unknown>;
  /** `structured.errors`, or `[]`. */
  errors: WirePatchFailure[];
}

/** A step before the mistake; not counted. */
export type SetupStep =
  /** A call the model made earlier (a read whose answer the mistaken call uses). */
  | { call: ToolCall }
  /** Another writer changes the root (written as the root's owner). */
  | { write: Files };

/**
 * One model mistake.
 *
 * `model` stands for the model: it gets only the answer to its last call
 * and that call (a model knows what it sent), never the case's files or
 * expectation. It returns the next call, or null to give up.
 */
export interface FollowUpCase {
  /** The case's root name in every server (letters, digits, `.`, `_`, `-`; unique). */
  id: string;
  /** The bullet of the issue this case stands for. */
  why: string;
  /** The case root's files before anything happens. */
  files: Files;
  /** More roots of the case (name → files), configured in every server; they must end unchanged. */
  otherRoots?: Record<string, Files>;
  /** Calls and writes before the mistake (not counted); their answers go to `first`. */
  setup?: SetupStep[];
  /** The mistaken call; a function gets the answers to the setup calls, in order. */
  first: ToolCall | ((seen: Answer[]) => ToolCall);
  /** The code of the first failure the mistaken call gets (it must fail: a row that succeeds at once tests no recovery). */
  firstCode: FailureCode;
  model: (answer: Answer, sent: ToolCall) => ToolCall | null;
  /** Every file of the case's root once recovered. */
  expect: Files;
  /** Calls allowed, the first included (default 2: the mistake and one follow-up). */
  maxCalls?: number;
}

/** How a case went. */
export interface Run {
  calls: number;
  ok: boolean;
  files: Files;
  /** Each counted call and the text it got, for the failure message. */
  transcript: string[];
  /** The code of the first failure of the first counted call (null: it succeeded). */
  firstCode: FailureCode | null;
}

/** A server of the matrix. */
export interface Endpoint {
  transport: "stdio" | "http";
  roots: "local" | "ssh";
  call(call: ToolCall): Promise<Answer>;
  /** The local directory behind a root of this server. */
  dirOf(root: string): string;
  close(): Promise<void>;
}

/** A call past which a run stops even when the model keeps going (the count is then reported). */
const HARD_CAP = 4;

const decoder = new TextDecoder("utf-8", { fatal: false });

function writeFiles(dir: string, files: Files): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/** Every regular file under `dir`; a file that was given as bytes compares as bytes. */
export function readRoot(dir: string, like: Files = {}): Files {
  const out: Files = {};
  for (const path of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    const full = join(dir, path);
    if (!statSync(full).isFile()) continue;
    const bytes = new Uint8Array(readFileSync(full));
    const rel = relative(dir, full);
    out[rel] = like[rel] instanceof Uint8Array ? bytes : decoder.decode(bytes);
  }
  return out;
}

function chownTo(user: string | null, dir: string): void {
  if (user === null) return;
  const chown = spawnSync("chown", ["-R", `${user}:`, dir]);
  if (chown.status !== 0) throw new Error(`chown failed: ${String(chown.stderr)}`);
}

function answerOf(result: CallToolResult): Answer {
  const text = result.content.filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join("\n");
  const structured = (result.structuredContent ?? {}) as Record<string, unknown>;
  return { isError: result.isError === true, text, structured, errors: (structured.errors as WirePatchFailure[] | undefined) ?? [] };
}

function withRoot(call: ToolCall, root: string): ToolCall {
  const args: Record<string, unknown> = "root" in call.arguments ? { ...call.arguments } : { root, ...call.arguments };
  for (const [key, value] of Object.entries(args)) if (value === undefined) delete args[key];
  return { tool: call.tool, arguments: args };
}

/**
 * Start one server of the matrix with every case's roots (fresh copies of
 * their files under `work`). An SSH server logs in as `sshd.user`, which
 * owns the trees.
 */
export async function startEndpoint(transport: "stdio" | "http", kind: "local" | "ssh", cases: readonly FollowUpCase[], work: string, sshd?: Sshd): Promise<Endpoint> {
  const base = join(work, `${transport}-${kind}`);
  mkdirSync(base, { recursive: true });
  const dirs = new Map<string, string>();
  for (const c of cases) {
    for (const [name, files] of [[c.id, c.files] as const, ...Object.entries(c.otherRoots ?? {})]) {
      if (dirs.has(name)) throw new Error(`root ${name} is used by two cases: give each case its own id and root names`);
      const dir = join(base, name);
      mkdirSync(dir);
      writeFiles(dir, files);
      dirs.set(name, dir);
    }
  }
  const owner = kind === "ssh" && process.getuid?.() === 0 && sshd!.user !== "root" ? sshd!.user : null;
  chownTo(owner, base);
  const roots: Record<string, unknown> = {};
  if (kind === "local") {
    for (const [name, dir] of dirs) roots[name] = dir;
  } else {
    const knownHostsFile = writeKnownHosts(base, [sshd!.hostKeyLine], ".known_hosts");
    const common = { knownHostsFile, identityFile: sshd!.userKeyPath, sshConfigFile: false, hostKeyPolicy: "strict" };
    for (const [name, dir] of dirs) roots[name] = { location: `ssh://${sshd!.user}@127.0.0.1:${sshd!.port}${dir}`, ...common };
  }
  const config = join(work, `${transport}-${kind}.json`);
  writeFileSync(config, JSON.stringify({ roots }));

  let client: Client;
  let stop: () => Promise<void>;
  let protocolErrors: () => Error[];
  if (transport === "stdio") {
    const session: StdioSession = await startStdio(process.execPath, ["examples/mcp_server.ts", "--config", config]);
    client = session.client;
    protocolErrors = () => session.protocolErrors;
    stop = () => session.close();
  } else {
    const server: Running = await startHttpServer(["--config", config]);
    expect(server.token).not.toBeNull(); // the default: a bearer token, read from the file the server named
    client = await httpClient(server.url, server.auth);
    await client.listTools(); // so callTool validates structuredContent against the output schemas
    const errors: Error[] = [];
    client.onerror = (error) => errors.push(error);
    protocolErrors = () => errors;
    stop = async () => {
      await client.close();
      await server.stop();
    };
  }
  return {
    transport,
    roots: kind,
    call: async (call) => {
      const answer = answerOf(await client.callTool({ name: call.tool, arguments: call.arguments }) as CallToolResult);
      expect(protocolErrors()).toEqual([]);
      return answer;
    },
    dirOf: (root) => dirs.get(root)!,
    close: stop,
  };
}

/**
 * Run one case on one server: the setup, then the mistaken call and the
 * model's follow-ups until the root holds `expect` after a call that
 * succeeded (or the model gives up, or HARD_CAP calls).
 */
export async function runCase(endpoint: Endpoint, c: FollowUpCase, sshd?: Sshd): Promise<Run> {
  const dir = endpoint.dirOf(c.id);
  const seen: Answer[] = [];
  for (const step of c.setup ?? []) {
    if ("call" in step) seen.push(await endpoint.call(withRoot(step.call, c.id)));
    else {
      writeFiles(dir, step.write);
      if (endpoint.roots === "ssh" && process.getuid?.() === 0 && sshd!.user !== "root") chownTo(sshd!.user, dir);
    }
  }
  let call: ToolCall | null = withRoot(typeof c.first === "function" ? c.first(seen) : c.first, c.id);
  const transcript: string[] = [];
  let calls = 0;
  let ok = false;
  let firstCode: FailureCode | null = null;
  while (call !== null && calls < HARD_CAP) {
    calls++;
    const answer = await endpoint.call(call);
    if (calls === 1) firstCode = answer.isError ? answer.errors[0]?.code ?? "invalid_argument" : null;
    transcript.push(`call ${calls}: ${call.tool} ${JSON.stringify(call.arguments)}\n→ ${answer.isError ? "error" : "ok"}: ${answer.text}`);
    if (!answer.isError && sameFiles(readRoot(dir, c.expect), c.expect)) {
      ok = true;
      break;
    }
    const next = c.model(answer, call);
    call = next === null ? null : withRoot(next, c.id);
  }
  return { calls, ok, files: readRoot(dir, c.expect), transcript, firstCode };
}

function sameFiles(a: Files, b: Files): boolean {
  const keys = Object.keys(a).sort();
  if (keys.join("\0") !== Object.keys(b).sort().join("\0")) return false;
  return keys.every((k) => {
    const x = a[k]!;
    const y = b[k]!;
    return typeof x === "string" || typeof y === "string" ? x === y : Buffer.from(x).equals(Buffer.from(y));
  });
}

/** The checks of a run: recovered within `maxCalls`, the exact files, other roots untouched. */
export function checkRun(endpoint: Endpoint, c: FollowUpCase, run: Run): void {
  const max = c.maxCalls ?? 2;
  if (run.firstCode !== c.firstCode) {
    throw new Error(`${c.id}: the mistaken call should fail with ${c.firstCode}, got ${run.firstCode ?? "success"}:\n\n${run.transcript[0]}`);
  }
  if (!run.ok || run.calls > max) {
    throw new Error(`${c.id}: ${run.ok ? `recovered in ${run.calls} calls` : `not recovered after ${run.calls} calls`} (at most ${max} allowed):\n\n${run.transcript.join("\n\n")}`);
  }
  expect(run.files).toEqual(c.expect);
  for (const [name, files] of Object.entries(c.otherRoots ?? {})) expect(readRoot(endpoint.dirOf(name), files)).toEqual(files);
}

/** A work directory the SSH user can traverse. */
export function workDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "sap-follow-up-"));
  chmodSync(dir, 0o755);
  return dir;
}

/** Remove the work directory. */
export function removeWork(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------
// What a model does with a failure: small helpers the cases' models share.
// ---------------------------------------------------------------------------

/** The first failure of an answer (a model reads the first one first). */
export function firstError(answer: Answer): WirePatchFailure | undefined {
  return answer.errors[0];
}

/** The same call with other arguments merged in. */
export function resend(sent: ToolCall, changes: Record<string, unknown>): ToolCall {
  return { tool: sent.tool, arguments: { ...sent.arguments, ...changes } };
}

/** A patch from its lines. */
export function patchOf(...lines: string[]): string {
  return ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");
}

/** The line of the message after `label` (e.g. "add the line below it as context: "), or null. */
export function lineAfter(text: string, label: string | RegExp): string | null {
  for (const line of text.split("\n")) {
    const at = typeof label === "string" ? line.indexOf(label) : line.search(label);
    if (at < 0) continue;
    const match = typeof label === "string" ? label : line.match(label)![0];
    return line.slice(at + match.length);
  }
  return null;
}

/** `12:5e  text` as messages show a file line: the text without its id. */
export function withoutId(shown: string): string {
  const m = /^\s*\d+:[0-9a-f]{2}  (.*)$/.exec(shown);
  if (m === null) throw new Error(`not a line with an id: ${JSON.stringify(shown)}`);
  return m[1]!;
}
