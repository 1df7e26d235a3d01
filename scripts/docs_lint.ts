/**
 * `npm run docs:lint` (`bun scripts/docs_lint.ts`): the API reference is
 * generated from JSDoc, and any missing doc fails the job. Run by `.ci/run`.
 *
 * 1. The entry points are read from `deno.json` `exports` at run time (a
 *    string, or a map of subpaths to files), so a new entry point is covered
 *    without editing this script.
 * 2. `deno doc --lint` on all of them, with the pinned
 *    `tools/node_modules/.bin/deno` (`npm run runtimes`): a public symbol without JSDoc, without an
 *    explicit type, or referencing a type that is not exported fails.
 * 3. `deno doc --json`: every exported symbol's JSDoc must have an
 *    `@example` (the project's rule; `--lint` does not check it).
 * 4. `deno doc --html` into a temporary directory, to prove the reference
 *    builds; the directory is removed afterwards.
 *
 * Exit 0 when all pass, 1 with every finding listed otherwise, 2 when the
 * tool itself is missing or `deno.json` has no usable `exports`.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const DENO = join(REPO, "tools", "node_modules", ".bin", "deno");

/**
 * The entry point files of a `deno.json` `exports` field, repository-relative,
 * without duplicates, in the order given.
 *
 * @example
 * ```ts
 * entryPoints({ exports: { ".": "./mod.ts", "./core": "./core.ts" } }); // ["mod.ts", "core.ts"]
 * ```
 */
export function entryPoints(denoJson: { exports?: unknown }): string[] {
  const { exports } = denoJson;
  const files = typeof exports === "string" ? [exports] : exports && typeof exports === "object" ? Object.values(exports as Record<string, unknown>) : [];
  if (files.length === 0 || files.some((f) => typeof f !== "string" || f === "")) {
    throw new Error(`deno.json: "exports" must be a path or a map of subpaths to paths (got ${JSON.stringify(exports)})`);
  }
  return [...new Set((files as string[]).map((f) => f.replace(/^\.\//, "")))];
}

/** One exported symbol as `deno doc --json` (format version 2) lists it. */
interface DocSymbol {
  name: string;
  declarations: {
    kind: string;
    location: { filename: string; line: number };
    jsDoc?: { doc?: string; tags?: { kind: string }[] };
    /** For `kind: "reference"`: the declaration re-exported. */
    def?: { target?: { filename: string; line: number } };
  }[];
}

/**
 * Exported symbols whose JSDoc has no `@example`, as `file:line name (kind)`,
 * from the JSON of `deno doc --json` (format version 2: `nodes` keyed by
 * module URL, each with `symbols`). A symbol declared several times (a
 * function's overloads, a class and its namespace) needs one example in all.
 *
 * @example
 * ```ts
 * symbolsWithoutExample(JSON.parse(stdoutOfDenoDocJson), "/repo"); // ["lib/types.ts:12 Plan (interface)"]
 * ```
 */
export function symbolsWithoutExample(docJson: unknown, repo: string): string[] {
  const nodes = (docJson as { version?: number; nodes?: Record<string, { symbols?: DocSymbol[] }> }).nodes;
  if (!nodes || typeof nodes !== "object") throw new Error("deno doc --json: no `nodes` (an unknown output format; this script reads version 2)");
  const missing = new Set<string>();
  // Where each symbol is documented in full: an entry that re-exports a symbol another entry
  // documents (core.ts and ssh.ts re-export mod.ts's) gets a `reference` to it, not its JSDoc.
  const key = (l: { filename: string; line: number }): string => `${l.filename}:${l.line}`;
  const documented = new Set<string>();
  for (const module of Object.values(nodes)) {
    for (const symbol of module.symbols ?? []) for (const d of symbol.declarations) if (d.kind !== "reference") documented.add(key(d.location));
  }
  for (const module of Object.values(nodes)) {
    for (const symbol of module.symbols ?? []) {
      const target = symbol.declarations.every((d) => d.kind === "reference") ? symbol.declarations[0]!.def?.target : undefined;
      if (target !== undefined && documented.has(key(target))) continue;
      const hasExample = symbol.declarations.some((d) => d.jsDoc?.tags?.some((t) => t.kind === "example"));
      if (hasExample) continue;
      const d = symbol.declarations[0]!;
      const file = d.location.filename.startsWith("file://") ? relative(repo, fileURLToPath(d.location.filename)) : d.location.filename;
      missing.add(`${file}:${d.location.line} ${symbol.name} (${d.kind})`);
    }
  }
  return [...missing].sort();
}

function deno(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(DENO, args, { cwd: REPO, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" }, maxBuffer: 256 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Run the three checks; the findings, empty when the reference is complete. */
function lint(): string[] {
  const entries = entryPoints(JSON.parse(readFileSync(join(REPO, "deno.json"), "utf8")));
  const absent = entries.filter((e) => !existsSync(join(REPO, e)));
  if (absent.length > 0) return [`deno.json exports files that do not exist: ${absent.join(", ")}`];
  console.error(`entry points (deno.json exports): ${entries.join(", ")}`);
  const findings: string[] = [];

  const lintRun = deno(["doc", "--lint", ...entries]);
  if (lintRun.status !== 0) {
    // Only the diagnostics, not the type-resolution warnings of @types/node.
    const report = lintRun.stderr.split("\n").filter((l) => !/^Warning Failed resolving types|^\s+at file:.*@types\//.test(l)).join("\n").trim();
    findings.push(`deno doc --lint ${entries.join(" ")} failed (exit ${lintRun.status}):\n${report}`);
  }

  const jsonRun = deno(["doc", "--json", ...entries]);
  if (jsonRun.status !== 0) findings.push(`deno doc --json failed (exit ${jsonRun.status}): ${jsonRun.stderr.trim()}`);
  else {
    for (const symbol of symbolsWithoutExample(JSON.parse(jsonRun.stdout), REPO)) findings.push(`no @example in the JSDoc of ${symbol}`);
  }

  const out = mkdtempSync(join(tmpdir(), "sap-api-docs-"));
  try {
    const htmlRun = deno(["doc", "--html", `--name=ssh-apply-patch`, `--output=${out}`, ...entries]);
    if (htmlRun.status !== 0) findings.push(`deno doc --html failed (exit ${htmlRun.status}): ${htmlRun.stderr.trim()}`);
    else if (!existsSync(join(out, "index.html"))) findings.push(`deno doc --html wrote no index.html into ${out}`);
    else console.error(`deno doc --html: the reference builds (${entries.length} entry point${entries.length === 1 ? "" : "s"})`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  return findings;
}

if (import.meta.main) {
  if (!existsSync(DENO)) {
    console.error(`FATAL: ${relative(REPO, DENO)} is missing (npm run runtimes installs the pinned deno)`);
    process.exit(2);
  }
  let findings: string[];
  try {
    findings = lint();
  } catch (error) {
    console.error(`FATAL: ${(error as Error).message}`);
    process.exit(2);
  }
  for (const f of findings) console.error(`DOCS: ${f}`);
  console.error(findings.length === 0 ? "docs:lint: every exported symbol is documented with an example" : `docs:lint: ${findings.length} finding(s)`);
  process.exit(findings.length === 0 ? 0 : 1);
}
