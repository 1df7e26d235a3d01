/**
 * apply_patch_fleet through the real MCP SDK client (in-process): offered
 * only with host groups, strict arguments, one progress notification per
 * host, the rollout's stops, a re-run of the hosts the summary names, and
 * an unknown outcome reconciled by the server at once.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { loadGroups } from "../../examples/mcp/groups.ts";
import { parseServerArgs } from "../../examples/mcp/args.ts";
import { ConfigError } from "../../examples/mcp/roots.ts";
import { ShellPool } from "../../examples/mcp/pool.ts";
import type { RootConfig } from "../../examples/mcp/roots.ts";
import type { RemoteShell } from "../../lib/remote/shell.ts";
import { AFTER, BEFORE, CommitKiller, DRIFTED, PATCH, sha } from "../fleet/helpers.ts";
import { call, connect, localRoots, makeTree, textOf } from "./helpers.ts";
import type { Session } from "./helpers.ts";

// Real programs on a shared machine: a test that takes 1 s on an idle one may take ten times that.
setDefaultTimeout(30_000);

let session: Session | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

/** Four roots w1…w4 (w3 drifted unless told otherwise) in group "web". */
function web(drifted: string[] = ["w3"]): { roots: RootConfig[]; dirs: Record<string, string>; read: (name: string) => string } {
  const dirs: Record<string, string> = {};
  for (const name of ["w1", "w2", "w3", "w4"]) dirs[name] = makeTree({ "app.conf": drifted.includes(name) ? DRIFTED : BEFORE }, `sap-mcp-fleet-${name}-`);
  return { roots: localRoots(dirs), dirs, read: (name) => readFileSync(join(dirs[name]!, "app.conf"), "utf8") };
}

type Out = {
  ok: boolean;
  hosts: { name: string; state: string; error?: { code: string; message: string }; report?: { operation_id: string } }[];
  stopped?: { reason: string; after: string | null };
  summary: { rerun: string[]; next_step: string; first_failure: { host: string; message: string } | null; text: string };
  reconciled?: { name: string; state: string }[];
};
const out = (r: CallToolResult): Out => r.structuredContent as unknown as Out;

describe("apply_patch_fleet", () => {
  test("offered only with host groups; its input schema refuses unknown arguments (additionalProperties false)", async () => {
    const w = web();
    session = await connect({ roots: w.roots });
    expect((await session.client.listTools()).tools.map((t) => t.name)).not.toContain("apply_patch_fleet");
    await session.close();
    session = await connect({ roots: w.roots, groups: loadGroups(["web=w1,w2,w3,w4"], w.roots) });
    const tool = (await session.client.listTools()).tools.find((t) => t.name === "apply_patch_fleet")!;
    expect(tool.inputSchema.additionalProperties).toBe(false);
    expect(tool.inputSchema.required).toEqual(["group", "patch"]);
    expect(tool.description).toContain("web (w1, w2, w3, w4)");
    const misspelt = await call(session, "apply_patch_fleet", { group: "web", patch: PATCH, max_failure: 3 });
    expect(misspelt.isError).toBe(true);
    expect(textOf(misspelt)).toContain("unknown argument `max_failure`: did you mean `max_failures`? nothing was applied on any host");
    expect(w.read("w1")).toBe(BEFORE); // refused before anything ran
  });

  test("a drifted host stops the rollout (max_failures 0); a progress notification per host; the summary's re-run, sent back, finishes it once the cause is fixed", async () => {
    const w = web();
    session = await connect({ roots: w.roots, groups: loadGroups(["web=w1,w2,w3,w4"], w.roots) });
    const seen: { progress: number; total?: number; message?: string }[] = [];
    const result = await session.client.callTool(
      { name: "apply_patch_fleet", arguments: { group: "web", patch: PATCH, concurrency: 1 } },
      undefined,
      { onprogress: (p) => seen.push({ progress: p.progress, total: p.total, message: p.message }) },
    ) as CallToolResult;
    expect(result.isError).toBe(true);
    const r = out(result);
    expect(r.hosts.map((h) => [h.name, h.state])).toEqual([["w1", "applied"], ["w2", "applied"], ["w3", "failed"], ["w4", "not_started"]]);
    expect(r.stopped).toMatchObject({ reason: "max_failures", after: "w3" });
    expect(seen.map((p) => [p.progress, p.total])).toEqual([[1, 4], [2, 4], [3, 4]]);
    expect(seen[2]!.message).toBe("w3: failed (context_mismatch) (3 of 4 hosts)");
    expect(r.summary.rerun).toEqual(["w3", "w4"]);
    expect(r.summary.next_step).toBe('Fix the cause of the first failure (on w3), then call apply_patch_fleet again with {"group": "web", "hosts": ["w3","w4"]}.');
    // The first block is the summary, with the failure verbatim (in this server's words: read_file, not "read … again").
    expect(textOf(result)).toBe(r.summary.text);
    expect(r.summary.first_failure!.message).toBe(r.hosts[2]!.error!.message);
    expect(r.summary.first_failure!.message).toContain("call read_file");
    expect(session.logs.some((l) => l.includes("apply_patch_fleet web/w3: failed (context_mismatch)"))).toBe(true);

    await Bun.write(join(w.dirs.w3!, "app.conf"), BEFORE);
    const again = await call(session, "apply_patch_fleet", { group: "web", patch: PATCH, hosts: r.summary.rerun });
    expect(again.isError).toBeFalsy();
    expect(out(again).hosts.map((h) => [h.name, h.state])).toEqual([["w3", "applied"], ["w4", "applied"]]);
    expect(["w1", "w2", "w3", "w4"].map(w.read)).toEqual([AFTER, AFTER, AFTER, AFTER]);
  });

  test("dry run with per-host expected_sha256: every host planned, nothing written; a wrong SHA fails only its host", async () => {
    const w = web([]);
    session = await connect({ roots: w.roots, groups: loadGroups(["web=w1,w2,w3,w4"], w.roots) });
    const result = await call(session, "apply_patch_fleet", {
      group: "web",
      patch: PATCH,
      dry_run: true,
      expected_sha256: { w2: { "app.conf": sha(BEFORE) }, w4: { "app.conf": sha("not it\n") } },
    });
    const r = out(result);
    expect(r.hosts.map((h) => h.state)).toEqual(["planned", "planned", "planned", "failed"]);
    expect(r.hosts[3]!.error!.code).toBe("precondition_failed");
    expect(["w1", "w2", "w3", "w4"].map(w.read)).toEqual([BEFORE, BEFORE, BEFORE, BEFORE]);
  });

  const refusals: { name: string; args: Record<string, unknown>; says: string }[] = [
    { name: "an unknown group", args: { group: "db", patch: PATCH }, says: 'there is no host group named "db"; the groups are: web' },
    { name: "a host not in the group", args: { group: "web", patch: PATCH, hosts: ["w9"] }, says: '"w9" is not a host of group web' },
    { name: "expected_sha256 keyed by a path instead of a host", args: { group: "web", patch: PATCH, expected_sha256: { "app.conf": { x: sha(BEFORE) } } }, says: 'expected_sha256 names "app.conf"' },
  ];
  for (const c of refusals) {
    test(`refused before any host is contacted: ${c.name}`, async () => {
      const w = web([]);
      session = await connect({ roots: w.roots, groups: loadGroups(["web=w1,w2,w3,w4"], w.roots) });
      const result = await call(session, "apply_patch_fleet", c.args);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain(c.says);
      expect(out(result).hosts).toEqual([]);
      expect(w.read("w1")).toBe(BEFORE);
    });
  }

  test("a host whose commit is killed mid-way: outcome_unknown, reconciled by the server at once (applied)", async () => {
    const w = web([]);
    const pool = new ShellPool();
    const shells = {
      shellFor: async (root: RootConfig): Promise<RemoteShell> => {
        const shell = await pool.shellFor(root);
        return root.name === "w2" ? new CommitKiller(shell, "done") : shell;
      },
    };
    session = await connect({ roots: w.roots, groups: loadGroups(["web=w1,w2,w3,w4"], w.roots), shells });
    const result = await call(session, "apply_patch_fleet", { group: "web", patch: PATCH, max_failures: 2 });
    const r = out(result);
    expect(r.reconciled).toEqual([expect.objectContaining({ name: "w2", state: "applied" })]);
    expect(r.hosts.map((h) => h.state)).toEqual(["applied", "applied", "applied", "applied"]);
    expect(result.isError).toBeFalsy();
    expect(w.read("w2")).toBe(AFTER);
    expect(session.logs.some((l) => /apply_patch_fleet web\/w2 reconciled operation [0-9a-f]{16}: applied/.test(l))).toBe(true);
    await pool.close();
  });
});

describe("--group", () => {
  const roots = (): RootConfig[] => localRoots({ a: makeTree({}), b: makeTree({}) });
  const bad: { name: string; values: string[]; says: RegExp }[] = [
    { name: "a member that is not a root", values: ["web=a,c"], says: /"c" is not a configured root; the roots are a, b/ },
    { name: "a member listed twice", values: ["web=a,a"], says: /root "a" is listed twice/ },
    { name: "a group configured twice", values: ["web=a", "web=b"], says: /group "web" is configured twice/ },
    { name: "no name", values: ["=a,b"], says: /write --group NAME=ROOT,ROOT/ },
  ];
  for (const c of bad) {
    test(`configuration error: ${c.name}`, () => {
      expect(() => loadGroups(c.values, roots())).toThrow(ConfigError);
      expect(() => loadGroups(c.values, roots())).toThrow(c.says);
    });
  }

  test("parsed from the server's command line, members in the order given", () => {
    const a = makeTree({});
    const b = makeTree({});
    const args = parseServerArgs(["--root", `a=${a}`, "--root", `b=${b}`, "--group", "web=b,a"]);
    if (args === "help") throw new Error("unexpected help");
    expect(args.groups.map((g) => [g.name, g.members.map((m) => m.name)])).toEqual([["web", ["b", "a"]]]);
  });
});
