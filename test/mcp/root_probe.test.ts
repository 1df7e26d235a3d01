/**
 * A call that names no configured root learns which configured root holds
 * its paths, in the same call (issue 29 item 5; examples/mcp/root_probe.ts):
 * real files, the in-process SDK client, counted execs for the bounds.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import type { RemoteShell } from "../../mod.ts";
import { LocalShell } from "../../mod.ts";
import type { RootConfig } from "../../examples/mcp/roots.ts";
import type { ShellSource } from "../../examples/mcp/pool.ts";
import { PROBE_MAX_PATHS, PROBE_MAX_ROOTS, PROBE_TIMEOUT_MS } from "../../examples/mcp/root_probe.ts";
import type { ApplyPatchOutput, ReadFileOutput } from "../../examples/mcp/schemas.ts";
import { call, connect, FaultShell, localRoots, makeTree, textOf } from "./helpers.ts";
import type { Session } from "./helpers.ts";

let session: Session | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await session?.close();
  session = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const tree = (files: Record<string, string>): string => {
  const dir = makeTree(files);
  dirs.push(dir);
  return dir;
};

/** Every root's shell is a LocalShell whose execs are counted, per root. */
function counting(): { source: ShellSource; execs: Map<string, number>; total(): number } {
  const shells = new Map<string, FaultShell>();
  const execs = new Map<string, number>();
  return {
    source: {
      shellFor: (root: RootConfig): Promise<RemoteShell> => {
        let shell = shells.get(root.name);
        if (shell === undefined) {
          shell = new FaultShell(new LocalShell(), { before: () => void execs.set(root.name, (execs.get(root.name) ?? 0) + 1) });
          shells.set(root.name, shell);
        }
        return Promise.resolve(shell);
      },
    },
    execs,
    total: () => [...execs.values()].reduce((a, b) => a + b, 0),
  };
}

const update = (path: string, from: string, to: string): string => `*** Begin Patch\n*** Update File: ${path}\n@@\n-${from}\n+${to}\n*** End Patch`;

interface Row {
  name: string;
  roots: Record<string, Record<string, string>>;
  tool: "apply_patch" | "read_file";
  args: Record<string, unknown>;
  /** The whole message, or substrings of it. */
  says: string[];
  suggestedRoot?: string;
  suggestedPath?: string;
}

const rows: Row[] = [
  {
    name: "an unknown root: the one holding the patch's file, with the same patch",
    roots: { site: { "index.html": "<h1>a</h1>\n" }, app: { "deploy/app.conf": "port = 1\n" } },
    tool: "apply_patch",
    args: { root: "prod", patch: update("deploy/app.conf", "port = 1", "port = 2") },
    says: [`invalid_argument: there is no root named "prod" (the roots are: site, app); deploy/app.conf is in root "app". Next step: call apply_patch again with "root": "app" and the same patch.`],
    suggestedRoot: "app",
  },
  {
    name: "read_file with a root's name as the path's first segment: that root and the path below it",
    roots: { site: { "index.html": "<h1>a</h1>\n" }, app: { "x.txt": "x\n" } },
    tool: "read_file",
    args: { root: "www", path: "site/index.html" },
    says: [`invalid_argument: there is no root named "www" (the roots are: site, app); "site" is a root, not a directory: site/index.html is index.html in root "site". Next step: call read_file again with "root": "site" and "path": "index.html".`],
    suggestedRoot: "site",
    suggestedPath: "index.html",
  },
  {
    name: "no root passed, several configured, the root's name in the patch's paths: the corrected headers",
    roots: { site: { "index.html": "<h1>a</h1>\n", "css/a.css": "a {}\n" }, app: { "x.txt": "x\n" } },
    tool: "apply_patch",
    args: { patch: `${update("site/index.html", "<h1>a</h1>", "<h1>b</h1>").replace("\n*** End Patch", "")}\n*** Add File: site/css/b.css\n+b {}\n*** End Patch` },
    says: [`several roots are configured (site, app) and no "root" was passed; "site" is a root, not a directory:`, `the patch's paths without their "site/": *** Update File: index.html, *** Add File: css/b.css.`],
    suggestedRoot: "site",
  },
  {
    name: "an Add's directory counts: the root that has it",
    roots: { site: { "index.html": "<h1>a</h1>\n" }, app: { "conf.d/a.conf": "a\n" } },
    tool: "apply_patch",
    args: { root: "nginx", patch: "*** Begin Patch\n*** Add File: conf.d/b.conf\n+b\n*** End Patch" },
    says: [`conf.d is in root "app"`],
    suggestedRoot: "app",
  },
  {
    name: "two roots hold the file: both named, none suggested",
    roots: { blue: { "app.conf": "a\n" }, green: { "app.conf": "a\n" }, docs: { "README": "r\n" } },
    tool: "read_file",
    args: { root: "prod", path: "app.conf" },
    says: [`app.conf is in several roots: "blue", "green". Next step: call read_file again with the one you mean as "root".`],
  },
  {
    name: "no root holds it: the roots listed, and so said",
    roots: { site: { "index.html": "x\n" }, app: { "x.txt": "x\n" } },
    tool: "read_file",
    args: { root: "prod", path: "nothing.txt" },
    says: [`there is no root named "prod"; the configured roots are: site, app. Pass one of these as "root". None of the roots checked holds nothing.txt.`],
  },
  {
    name: "a symlink of that name is not the file (never followed)",
    roots: { site: { "target.txt": "x\n" }, app: { "y.txt": "y\n" } },
    tool: "read_file",
    args: { root: "prod", path: "link.txt" },
    says: ["None of the roots checked holds link.txt."],
  },
];

describe("an unknown or missing root names the configured root that holds the paths", () => {
  for (const row of rows) {
    test(row.name, async () => {
      const dirsOf = Object.fromEntries(Object.entries(row.roots).map(([name, files]) => [name, tree(files)]));
      if (row.name.includes("symlink")) (await import("node:fs")).symlinkSync("target.txt", `${dirsOf.site}/link.txt`);
      session = await connect({ roots: localRoots(dirsOf) });
      const result = await call(session, row.tool, row.args);
      expect(result.isError).toBe(true);
      const out = result.structuredContent as ApplyPatchOutput | ReadFileOutput;
      const e = out.errors![0]!;
      expect(e.code).toBe("invalid_argument");
      for (const s of row.says) expect(textOf(result)).toContain(s);
      expect({ root: e.suggested_root, path: e.suggested_path }).toEqual({ root: row.suggestedRoot, path: row.suggestedPath });
    });
  }
});

describe("the probe is bounded", () => {
  test(`${PROBE_MAX_ROOTS} roots at most and ${PROBE_MAX_PATHS} paths each: counted execs, whatever the number of roots and files`, async () => {
    const files = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`f${i}.txt`, "x\n"]));
    const roots = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`r${String(i).padStart(2, "0")}`, tree(files)]));
    const count = counting();
    session = await connect({ roots: localRoots(roots), shells: count.source });
    const patch = "*** Begin Patch\n" + Object.keys(files).map((p) => `*** Update File: ${p}\n@@\n-x\n+y\n`).join("") + "*** End Patch";
    const result = await call(session, "apply_patch", { root: "prod", patch });
    expect(textOf(result)).toContain(`f0.txt, f1.txt, f2.txt are in several roots: "r00", "r01", "r02", "r03", "r04", "r05", "r06", "r07".`);
    // Every probed root holds every path, so each of them is listed once per path: exactly the bound.
    expect(count.execs.size).toBe(PROBE_MAX_ROOTS);
    expect(count.total()).toBe(PROBE_MAX_ROOTS * PROBE_MAX_PATHS);
  });

  test("the closest name to the one given is checked first, even past the bound in configuration order", async () => {
    const roots = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`r${i}`, tree({ "a.txt": "a\n" })]));
    roots["webapp-prod"] = tree({ "only-here.txt": "x\n" });
    session = await connect({ roots: localRoots(roots) });
    const result = await call(session, "read_file", { root: "webapp", path: "only-here.txt" });
    expect(textOf(result)).toContain(`only-here.txt is in root "webapp-prod". Next step: call read_file again with "root": "webapp-prod" and "path": "only-here.txt".`);
    expect(textOf(result)).not.toContain("of the 11 roots were checked"); // it was found: no word on the others
  });

  test(`FAULT INJECTED: a root whose host never answers is given ${PROBE_TIMEOUT_MS / 1000} s, named as not checked, and the others still answer`, async () => {
    const good = tree({ "app.conf": "a\n" });
    const count = counting();
    const source: ShellSource = {
      shellFor: (root) => (root.name === "stuck" ? new Promise<RemoteShell>(() => {}) : count.source.shellFor(root)),
    };
    session = await connect({ roots: localRoots({ stuck: tree({}), app: good }), shells: source });
    const started = Date.now();
    const result = await call(session, "read_file", { root: "prod", path: "app.conf" });
    expect(Date.now() - started).toBeLessThan(PROBE_TIMEOUT_MS + 2_000);
    expect(textOf(result)).toContain(`app.conf is in root "app". Next step: call read_file again with "root": "app" and "path": "app.conf". Not checked (no answer within ${PROBE_TIMEOUT_MS / 1000} s): stuck.`);
    expect((result.structuredContent as ReadFileOutput).errors![0]!.suggested_root).toBe("app");
  }, 15_000);
});
