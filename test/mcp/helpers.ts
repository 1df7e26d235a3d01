/**
 * Shared bits of the MCP server tests: a temp copy of a site, an in-process
 * client/server pair, a fault-injecting shell wrapper, and a check that a
 * structured result declares every field it carries.
 *
 * @module
 */
import { expect } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { z } from "zod";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";
import { ShellPool } from "../../examples/mcp/pool.ts";
import type { ShellSource } from "../../examples/mcp/pool.ts";
import { loadRoots } from "../../examples/mcp/roots.ts";
import type { RootConfig } from "../../examples/mcp/roots.ts";
import { createServer } from "../../examples/mcp/tools.ts";
import type { ServerOptions } from "../../examples/mcp/tools.ts";
import { ServerTransport } from "../../examples/mcp/transport.ts";

/** SHA-256 hex of bytes or a string's UTF-8. */
export function sha256(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** A fresh temp directory holding `files` (path → content). */
export function makeTree(files: Record<string, string | Uint8Array>, prefix = "sap-mcp-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

/** Roots from `--root name=dir` flags, as the server parses them. */
export function localRoots(dirs: Record<string, string>): RootConfig[] {
  const roots = loadRoots(Object.entries(dirs).flatMap(([name, dir]) => ["--root", `${name}=${dir}`]));
  if (roots === "help") throw new Error("unexpected help");
  return roots;
}

/** A connected in-process client and server; `logs` collects the server's log lines. */
export interface Session {
  client: Client;
  logs: string[];
  close(): Promise<void>;
}

/** Start the server in-process over a linked in-memory pair (through the same transport wrapper as stdio). */
export async function connect(options: Partial<ServerOptions> & { roots: readonly RootConfig[] }): Promise<Session> {
  const logs: string[] = [];
  const pool = options.shells ? null : new ShellPool((line) => logs.push(line));
  const server = createServer({ shells: pool ?? options.shells!, log: (line) => logs.push(line), ...options });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  await Promise.all([server.connect(new ServerTransport(serverSide)), client.connect(clientSide)]);
  // The SDK client validates each structuredContent against the output
  // schema it got from tools/list (JSON Schema, additionalProperties and all).
  await client.listTools();
  return {
    client,
    logs,
    close: async () => {
      await client.close();
      await server.close();
      await pool?.close();
    },
  };
}

/** Call a tool; the client validates structuredContent against the listed output schema (see connect). */
export async function call(session: Session, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return await session.client.callTool({ name, arguments: args }) as CallToolResult;
}

/** The text of content block `index`. */
export function textOf(result: CallToolResult, index = 0): string {
  const block = result.content[index];
  if (block?.type !== "text") throw new Error(`content block ${index} is not text`);
  return block.text;
}

/** Hooks around each exec of a wrapped shell: `n` counts execs from 1. */
export interface FaultHooks {
  before?(n: number, options: ExecOptions): void | Promise<void>;
  after?(n: number, options: ExecOptions): void | Promise<void>;
}

/** A RemoteShell that runs hooks around the real one's execs (fault injection). */
export class FaultShell implements RemoteShell {
  readonly label = "local";
  readonly elevated = false;
  execs = 0;
  readonly #inner: RemoteShell;
  readonly #hooks: FaultHooks;
  constructor(inner: RemoteShell, hooks: FaultHooks) {
    this.#inner = inner;
    this.#hooks = hooks;
  }
  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const n = ++this.execs;
    await this.#hooks.before?.(n, options);
    const result = await this.#inner.exec(command, options);
    await this.#hooks.after?.(n, options);
    return result;
  }
}

/** A ShellSource that always hands out `shell`. */
export function sourceOf(shell: RemoteShell): ShellSource {
  return { shellFor: () => Promise.resolve(shell) };
}

// deno-lint-ignore no-explicit-any
type AnySchema = any;

/**
 * Paths of fields in `value` that `schema` does not declare (the report
 * schemas are loose so that clients tolerate growth; the tests keep them
 * complete).
 */
export function undeclaredFields(schema: z.ZodType, value: unknown, at = "$"): string[] {
  let s: AnySchema = schema;
  while (s.def.type === "optional" || s.def.type === "nullable") s = s.def.innerType;
  if (value === null || value === undefined) return [];
  if (s.def.type === "array" && Array.isArray(value)) {
    return value.flatMap((item, i) => undeclaredFields(s.element, item, `${at}[${i}]`));
  }
  if (s.def.type === "object" && typeof value === "object") {
    return Object.entries(value as Record<string, unknown>).flatMap(([key, item]) =>
      key in s.shape ? undeclaredFields(s.shape[key], item, `${at}.${key}`) : [`${at}.${key}`]
    );
  }
  return [];
}

/** The structured result parses with `schema` and declares every field it carries. */
export function expectValid(schema: z.ZodType, structured: unknown): void {
  const parsed = schema.safeParse(structured);
  if (!parsed.success) throw new Error(`structuredContent does not match the output schema: ${parsed.error.message}`);
  expect(undeclaredFields(schema, structured)).toEqual([]);
}
