/**
 * Every model mistake of test/model_mistakes/cases.ts through every front
 * end: planPatch (in memory, with the parse refinements applyPatch uses),
 * applyPatch on LocalShell (real files), the MCP server (SDK client,
 * in-process, real files) and the CLI (`bun examples/apply.ts --json`, a
 * real process). Each checks the code, the location and the next step in
 * that front end's own words — and that no other front end's vocabulary
 * leaks in — or, for a leniency, the exact files afterwards and the warning.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { applyPatch, LocalShell, parsePatch, planPatch } from "../../mod.ts";
import type { FailureCode, PatchFailure, Warning } from "../../mod.ts";
import { parseFailurePaths, refineParseFailures } from "../../lib/plan/refine.ts";
import type { ApplyPatchOutput } from "../../examples/mcp/schemas.ts";
import { applyPlanInMemory, buildSnapshots, patchPaths } from "../support/scenarios.ts";
import type { Tree } from "../support/scenarios.ts";
import { call, connect, localRoots, textOf } from "../mcp/helpers.ts";
import { removeTemps, runApply } from "../cli/run_cli.ts";
import { failureFromWire, warningFromWire } from "../../examples/wire/convert.ts";
import { FOREIGN_WORDS, FRONT_ENDS, MISTAKES } from "./cases.ts";
import type { ExpectedFailure, ExpectedSuccess, Files, FrontEnd, Mistake } from "./cases.ts";

/** What one front end answered: failures or the files afterwards, and every warning. */
interface Outcome {
  ok: boolean;
  errors: PatchFailure[];
  warnings: Warning[];
  files?: Files;
  /** The per-file ops of the report (plan: of the plan). */
  ops?: string[];
  /** The text a model reads first (the MCP text block), when it differs from the messages. */
  text?: string;
}

const PLAN_ROOT = "/srv/app";
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const temps: string[] = [];
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
  removeTemps();
}, 30_000);

function patchText(m: Mistake, root: string): string {
  return typeof m.patch === "function" ? m.patch(root) : m.patch;
}

function tempRoot(files: Files): string {
  const root = mkdtempSync(join(tmpdir(), "sap-mistake-"));
  temps.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** Every file of the root: text, or bytes where the row's files say bytes (non-UTF-8). */
function readRoot(root: string, like: Files = {}): Files {
  const out: Files = {};
  for (const path of readdirSync(root, { recursive: true, encoding: "utf8" })) {
    const full = join(root, path);
    if (!statSync(full).isFile()) continue;
    const rel = relative(root, full);
    const bytes = new Uint8Array(readFileSync(full));
    out[rel] = like[rel] instanceof Uint8Array ? bytes : decoder.decode(bytes);
  }
  return out;
}

/** The files a successful row expects, to read the root like (bytes where bytes are expected). */
function likeOf(m: Mistake): Files {
  return "ok" in m.expect ? m.expect.files : m.files;
}

async function viaPlan(m: Mistake): Promise<Outcome> {
  let tree: Tree = new Map(Object.entries(m.files).map(([p, t]) => [p, typeof t === "string" ? encoder.encode(t) : t]));
  const expectedSha256 = m.expectedSha256?.(m.files);
  const once = (): Outcome => {
    const text = patchText(m, PLAN_ROOT);
    const parsed = parsePatch(text);
    if (!parsed.ok) {
      // What applyPatch does with a parse failure: the root, and the files it names.
      const snapshots = buildSnapshots(tree, parseFailurePaths(text, parsed.errors), {});
      return { ok: false, errors: refineParseFailures(text, parsed.errors, { root: PLAN_ROOT, snapshots }), warnings: parsed.warnings };
    }
    const result = planPatch(parsed.patch, buildSnapshots(tree, patchPaths(parsed.patch), {}), { ...(expectedSha256 ? { expectedSha256 } : {}), ...(m.encoding ? { encoding: m.encoding } : {}) });
    if (!result.ok) return { ok: false, errors: result.errors, warnings: [...parsed.warnings, ...result.warnings] };
    tree = applyPlanInMemory(tree, result.plan);
    const like = likeOf(m);
    const files = Object.fromEntries([...tree].map(([p, b]) => [p, like[p] instanceof Uint8Array ? b : decoder.decode(b)]));
    return { ok: true, errors: [], warnings: [...parsed.warnings, ...result.plan.warnings, ...result.plan.files.flatMap((f) => f.warnings)], files, ops: result.plan.files.map((f) => f.op) };
  };
  if (m.resend) expect(once().ok).toBe(true);
  return once();
}

async function viaApply(m: Mistake): Promise<Outcome> {
  const root = tempRoot(m.files);
  const expectedSha256 = m.expectedSha256?.(m.files);
  const once = async (): Promise<Outcome> => {
    const r = await applyPatch(new LocalShell(), { root, patch: patchText(m, root), ...(expectedSha256 ? { expectedSha256 } : {}), ...(m.encoding ? { encoding: m.encoding } : {}) });
    return { ok: r.ok, errors: r.errors ?? [], warnings: [...r.warnings, ...r.files.flatMap((f) => f.warnings)], files: readRoot(root, likeOf(m)), ops: r.files.map((f) => f.op) };
  };
  if (m.resend) expect((await once()).ok).toBe(true);
  return await once();
}

async function viaMcp(m: Mistake): Promise<Outcome> {
  const root = tempRoot(m.files);
  const session = await connect({ roots: localRoots({ site: root }) });
  try {
    const expected = m.expectedSha256?.(m.files);
    const once = async (): Promise<Outcome> => {
      const result = await call(session, "apply_patch", { patch: patchText(m, root), ...(expected ? { expected_sha256: expected } : {}), ...(m.encoding ? { encoding: m.encoding } : {}) });
      const out = result.structuredContent as ApplyPatchOutput;
      // The wire's snake_case back in the library's spelling, so one expectation fits every front end.
      return {
        ok: out.ok,
        errors: (out.errors ?? []).map(failureFromWire),
        warnings: [...out.warnings, ...out.files.flatMap((f) => f.warnings)].map(warningFromWire),
        files: readRoot(root, likeOf(m)),
        ops: out.files.map((f) => f.op),
        text: result.content.map((_, i) => textOf(result, i)).join("\n"),
      };
    };
    if (m.resend) expect((await once()).ok).toBe(true);
    return await once();
  } finally {
    await session.close();
  }
}

async function viaCli(m: Mistake): Promise<Outcome> {
  const root = tempRoot(m.files);
  const expected = Object.entries(m.expectedSha256?.(m.files) ?? {}).flatMap(([p, s]) => ["--expect", `${p}=${s}`]);
  const once = async (): Promise<Outcome> => {
    const run = await runApply(["--root", root, "--json", ...expected, ...(m.encoding ? ["--encoding", m.encoding] : [])], patchText(m, root));
    const report = JSON.parse(run.stdout);
    expect(run.code).toBe(report.ok ? 0 : 1);
    const warnings: unknown[] = [...report.warnings, ...report.files.flatMap((f: { warnings: unknown[] }) => f.warnings)];
    return { ok: report.ok, errors: (report.errors ?? []).map(failureFromWire), warnings: warnings.map(warningFromWire), files: readRoot(root, likeOf(m)), ops: report.files.map((f: { op: string }) => f.op) };
  };
  if (m.resend) expect((await once()).ok).toBe(true);
  return await once();
}

const RUN: Record<FrontEnd, (m: Mistake) => Promise<Outcome>> = { plan: viaPlan, apply: viaApply, mcp: viaMcp, cli: viaCli };

const ALL_CODES: FailureCode[] = ["invalid_patch", "invalid_path", "context_mismatch", "ambiguous_hunk", "anchor_not_found", "precondition_failed", "already_exists", "not_found", "outcome_unknown", "connect_failed"];

function checkFailure(fe: FrontEnd, want: ExpectedFailure, got: Outcome): void {
  if (got.ok) throw new Error(`expected ${want.code}, but the patch applied`);
  const e = got.errors[0]!;
  const location = Object.fromEntries(["path", "hunk", "line", "patchLine"].filter((k) => k in want).map((k) => [k, e[k as keyof PatchFailure]]));
  expect({ code: e.code, ...location }).toEqual({ code: want.code, ...Object.fromEntries(Object.keys(location).map((k) => [k, want[k as keyof ExpectedFailure]])) });
  for (const s of [...want.says, ...(want.frontEnd?.[fe] ?? [])]) expect(e.message).toContain(s);
  if (want.fields) expect(e).toMatchObject(want.fields);
  if (got.text !== undefined) expect(got.text).toContain(e.message);
  for (const f of got.errors) {
    expect({ leaked: FOREIGN_WORDS[fe].filter((word) => f.message.includes(word)), message: f.message }).toEqual({ leaked: [], message: f.message });
    // Each code said once per message (a nested cause does not repeat it).
    for (const code of ALL_CODES) expect(f.message.split(`${code}:`).length - 1).toBeLessThanOrEqual(1);
  }
}

function checkSuccess(fe: FrontEnd, want: ExpectedSuccess, got: Outcome): void {
  if (!got.ok) throw new Error(`expected success, got ${JSON.stringify(got.errors.map((e) => e.message), null, 1)}`);
  expect(got.files).toEqual(want.files);
  if (want.ops !== undefined) expect(got.ops).toEqual(want.ops);
  const codes = got.warnings.map((w) => w.code);
  for (const code of want.warnings) expect(codes).toContain(code);
  const said = got.warnings.map((w) => w.message).join("\n");
  for (const s of want.warningSays?.[fe] ?? []) expect(said).toContain(s);
  expect(FOREIGN_WORDS[fe].filter((word) => said.includes(word))).toEqual([]);
}

describe("model mistakes (issue 15), through every front end", () => {
  for (const m of MISTAKES) {
    for (const fe of FRONT_ENDS.filter((f) => m.only === undefined || m.only.includes(f))) {
      test(`${fe}: ${m.name}`, async () => {
        const got = await RUN[fe](m);
        if ("ok" in m.expect) checkSuccess(fe, m.expect, got);
        else checkFailure(fe, m.expect, got);
      }, 20_000);
    }
  }
});

describe("numbers the report and the progress agree on", () => {
  let session: Awaited<ReturnType<typeof connect>> | undefined;
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });
  const big = Array.from({ length: 4000 }, (_, i) => `line ${i} of a file large enough for a delta upload`).join("\n") + "\n";
  const patches: { name: string; files: Files; patch: string }[] = [
    { name: "a small Add (the trial's 373 B of progress for 153 B uploaded)", files: { "keep.txt": "x\n" }, patch: "*** Begin Patch\n*** Add File: notes.md\n+" + "n".repeat(150) + "\n*** End Patch" },
    { name: "a delta update of a large file", files: { "big.txt": big }, patch: "*** Begin Patch\n*** Update File: big.txt\n@@\n-line 2000 of a file large enough for a delta upload\n+line 2000 changed\n*** End Patch" },
  ];
  for (const c of patches) {
    test(`applyPatch: the last progress total is the sum of bytesUploaded — ${c.name}`, async () => {
      const root = tempRoot(c.files);
      const seen: [number, number][] = [];
      const r = await applyPatch(new LocalShell(), { root, patch: c.patch, onProgress: (sent, total) => seen.push([sent, total]) });
      expect(r.ok).toBe(true);
      const uploaded = r.files.reduce((sum, f) => sum + f.bytesUploaded!, 0);
      expect(seen.at(-1)).toEqual([uploaded, uploaded]);
      for (const [sent, total] of seen) expect(sent).toBeLessThanOrEqual(total);
    });
  }
  test("MCP: progress notifications count the bytes structuredContent reports as uploaded", async () => {
    const root = tempRoot({ "keep.txt": "x\n" });
    session = await connect({ roots: localRoots({ site: root }) });
    const seen: { progress: number; total?: number }[] = [];
    const result = await session.client.callTool(
      { name: "apply_patch", arguments: { patch: "*** Begin Patch\n*** Add File: notes.md\n+" + "n".repeat(150) + "\n*** End Patch" } },
      undefined,
      { onprogress: (p) => seen.push({ progress: p.progress, total: p.total }) },
    );
    const out = result.structuredContent as ApplyPatchOutput;
    expect(out.ok).toBe(true);
    expect(seen.at(-1)).toEqual({ progress: out.files[0]!.bytes_uploaded!, total: out.files[0]!.bytes_uploaded! });
  });
});
