/**
 * Build what the npm packages ship: JavaScript and declaration files, no
 * TypeScript sources (JSR gets those, deno.json).
 *
 * - `dist/` of `ssh-apply-patch`: `mod.ts`, `core.ts`, `ssh.ts` and every
 *   `lib/` file they reach, each to a `.js` (types removed by Bun's
 *   transpiler: the sources are erasable TypeScript, nothing is
 *   downlevelled) and a `.d.ts` (emitted
 *   per file by oxc's `isolatedDeclaration`, which needs no type check
 *   because the sources use `isolatedDeclarations`: 20 ms for the whole
 *   library, against 2.3 s of CPU for TypeScript's `transpileDeclaration`,
 *   which a git install's `prepare`, run twice by npm, pays); the CLI
 *   (`examples/apply.ts` and what it imports) under `dist/examples/`, and its
 *   bin `dist/bin/ssh-apply-patch.js`; and the same CLI bundled into one
 *   file with its bytecode for Bun, `dist/bun/ssh-apply-patch.js` (+ `.jsc`:
 *   scripts/bun_cli.ts), which starts ~20 ms sooner.
 * - `packages/mcp/dist/` of `ssh-apply-patch-mcp`: the example MCP server
 *   (`examples/mcp_server.ts`, `examples/mcp/`, and the snake_case wire
 *   conversion `examples/wire/` it shares with the CLI) with its imports of
 *   `mod.ts` turned into imports of the `ssh-apply-patch` package, and its
 *   bin `dist/bin/ssh-apply-patch-mcp.js`.
 *
 * Relative `.ts` specifiers become `.js` in both outputs, and a source that
 * imports anything outside the set above fails the build.
 *
 * Run by npm's `prepare` (so `npm install`, `npm pack` and a git install
 * build it) with Bun and oxc-transform only (no TypeScript compiler), or by hand: `bun scripts/build.ts [--out DIR]`
 * (DIR replaces the repository root as the place `dist/` and
 * `packages/mcp/dist/` are written; used by test/runtimes/package.test.ts).
 *
 * @module
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { isolatedDeclarationSync } from "oxc-transform";
import { buildBunCli } from "./bun_cli.ts";

const REPO = join(import.meta.dir, "..");
const outIndex = process.argv.indexOf("--out");
const outRoot = outIndex >= 0 ? process.argv[outIndex + 1]! : REPO;

/** One output tree: the sources reached from `entries`, where they go, and how `mod.ts` is imported there. */
interface Target {
  name: string;
  entries: string[];
  dist: string;
  /** Files under this prefix are built here; imports of other repo files are `external`. */
  owns: (file: string) => boolean;
  /** What an import of a repo file this target does not own becomes (a package specifier), or null to fail. */
  external: (file: string) => string | null;
  declarations: boolean;
  bins: Record<string, string>;
}

const TARGETS: Target[] = [
  {
    name: "ssh-apply-patch",
    entries: ["mod.ts", "core.ts", "ssh.ts", "examples/apply.ts"],
    dist: join(outRoot, "dist"),
    owns: (file) => /^(mod|core|ssh)\.ts$/.test(file) || file.startsWith("lib/") || file === "examples/apply.ts" || /^examples\/(cli|wire)\//.test(file),
    external: () => null,
    declarations: true,
    bins: { "ssh-apply-patch": "../examples/apply.js" },
  },
  {
    name: "ssh-apply-patch-mcp",
    entries: ["examples/mcp_server.ts"],
    dist: join(outRoot, "packages", "mcp", "dist"),
    owns: (file) => file === "examples/mcp_server.ts" || /^examples\/(mcp|wire)\//.test(file),
    external: (file) => (file === "mod.ts" ? "ssh-apply-patch" : null),
    declarations: false,
    bins: { "ssh-apply-patch-mcp": "../mcp_server.js" },
  },
];

/** Static and dynamic imports and re-exports with a relative specifier (`from "./x.ts"`, `import("../y.ts")`, `import "./z.ts"`). */
const RELATIVE = /((?:\bfrom|\bimport)\s*\(?\s*)(["'])(\.\.?\/[^"'\n]+)\2/g;

/** Where a target puts `file` (repo-relative), dropping the examples/ prefix of the MCP package. */
function outPath(target: Target, file: string, ext: string): string {
  const inside = target.name === "ssh-apply-patch-mcp" ? file.replace(/^examples\//, "") : file;
  return join(target.dist, inside.replace(/\.ts$/, ext));
}

/** The repo-relative files `file` imports with a relative specifier. */
function localImports(file: string, source: string): string[] {
  return [...source.matchAll(RELATIVE)].map((m) => normalize(join(dirname(file), m[3]!)));
}

/** Rewrite the relative specifiers of `code` (emitted from `file`) for `target`'s tree. */
function rewrite(target: Target, file: string, code: string, ext: string): string {
  return code.replace(RELATIVE, (_whole, lead: string, quote: string, spec: string) => {
    const imported = normalize(join(dirname(file), spec));
    if (!spec.endsWith(".ts")) throw new Error(`${file}: import ${spec} does not name a .ts source`);
    if (!target.owns(imported)) {
      const external = target.external(imported);
      if (external === null) throw new Error(`${file}: import ${spec} is outside the ${target.name} package`);
      return `${lead}${quote}${external}${quote}`;
    }
    let to = relative(dirname(outPath(target, file, ext)), outPath(target, imported, ".js"));
    if (!to.startsWith(".")) to = `./${to}`;
    return `${lead}${quote}${to}${quote}`;
  });
}

/**
 * The published declarations need neither `@types/ssh2` nor `@types/node`
 * (a consumer with `skipLibCheck: false` would otherwise need both, and
 * `@types/node` comes with `@types/ssh2`: three more packages to install).
 * Only internal modules mention ssh2's objects (the connection, channels,
 * parsed keys) or a Node stream, in signatures no export of the package
 * entries has, so their declarations import opaque stand-ins from
 * `lib/ssh/ssh2_opaque.d.ts`, written here; `Buffer` is declared as the
 * `Uint8Array` it is. The sources keep type-checking against the real
 * `@types/ssh2`; test/runtimes/package.test.ts and scripts/consumer_check.sh
 * type-check a consumer without either package.
 */
const OPAQUE = "lib/ssh/ssh2_opaque.ts";
const opaqueNames = new Set<string>();

function portableDeclarations(file: string, dts: string): string {
  const specifier = relative(dirname(file), OPAQUE).replace(/^(?!\.)/, "./").replace(/\.ts$/, ".js");
  const opaque = (names: string): string => {
    for (const name of names.split(",").map((n) => n.trim()).filter(Boolean)) opaqueNames.add(name);
    return `import type {${names}} from "${specifier}";`;
  };
  const out = dts
    .replace(/^import (?:type )?\{([^}]*)\} from "(?:ssh2|node:stream)";$/gm, (_whole, names: string) => opaque(names))
    .replace(/^import type \* as (\w+) from "ssh2";$/gm, (_whole, alias: string) => `import type * as ${alias} from "${specifier}";`)
    .replace(/^(?!\s*(?:\*|\/\/|\/\*)).*$/gm, (line) => line.replace(/\bBuffer\b/g, "Uint8Array"));
  const code = out.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
  if (/from\s*["'](?:ssh2|node:[^"']*)["']|import\(["'](?:ssh2|node:)|\bBuffer\b|\bNodeJS\./.test(code)) {
    throw new Error(`${file}: its declarations still need @types/ssh2 or @types/node`);
  }
  return out;
}

/** The opaque stand-ins, one branded interface per ssh2 / stream name the declarations import. */
function opaqueDeclarations(): string {
  const names = [...opaqueNames].sort();
  return [
    "/**",
    " * Stand-ins for the ssh2 objects and Node streams that internal modules of",
    " * this package pass around (scripts/build.ts). No export of the package's",
    " * entries has them in its type; they are opaque so that a consumer needs",
    " * neither @types/ssh2 nor @types/node.",
    " */",
    "declare const opaque: unique symbol;",
    "/** Present so that `typeof` this module (the ssh2 module object) is a type. */",
    "export declare const ssh2Module: typeof opaque;",
    ...names.map((name) => `/** Opaque: ssh2's or Node's \`${name}\`, internal to this package. */\nexport interface ${name} {\n  readonly [opaque]: ${JSON.stringify(name)};\n}`),
    "",
  ].join("\n");
}

/** The entries' JSDoc examples import them by path (JSR shows that); an npm consumer's editor shows the package names. */
function packageExamples(dts: string): string {
  const names: Record<string, string> = { "./mod.ts": "ssh-apply-patch", "./core.ts": "ssh-apply-patch/core", "./ssh.ts": "ssh-apply-patch/ssh" };
  return dts.replace(/^(\s*\*.*\bfrom )"(\.\/(?:mod|core|ssh)\.ts)"/gm, (_whole, lead: string, spec: string) => `${lead}"${names[spec]}"`);
}

/**
 * JavaScript as written minus the types (no downlevelling: the sources are
 * erasable TypeScript). Bun's transpiler, about 80× less CPU than
 * TypeScript's `transpileModule` here, which matters for a git install's
 * `prepare`; target "browser", because "node" rewrites `import.meta.main`
 * into `require.main == require.module`, which an ES module cannot run.
 */
const transpiler = new Bun.Transpiler({ loader: "ts", target: "browser", trimUnusedImports: false });
let written = 0;
for (const target of TARGETS) {
  rmSync(target.dist, { recursive: true, force: true });
  const queue = [...target.entries];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = readFileSync(join(REPO, file), "utf8");
    for (const imported of localImports(file, source)) if (target.owns(imported)) queue.push(imported);

    const js = rewrite(target, file, transpiler.transformSync(source), ".js");
    if (/\brequire\s*[.(]|\bimport\.meta\.require\b|\bBun\./.test(js)) throw new Error(`${file}: the transpiled JavaScript needs Bun or CommonJS`);
    mkdirSync(dirname(outPath(target, file, ".js")), { recursive: true });
    writeFileSync(outPath(target, file, ".js"), js);
    written++;
    if (!target.declarations || file.startsWith("examples/")) continue;
    const emitted = isolatedDeclarationSync(file, source, { sourcemap: false, stripInternal: false });
    if (emitted.errors.length > 0) throw new Error(`${file}: declarations need explicit types:\n${emitted.errors.map((e) => e.message).join("\n")}`);
    writeFileSync(outPath(target, file, ".d.ts"), portableDeclarations(file, rewrite(target, file, packageExamples(emitted.code), ".d.ts")));
    written++;
  }
  if (target.declarations) {
    writeFileSync(outPath(target, OPAQUE, ".d.ts"), opaqueDeclarations());
    written++;
  }
  for (const [bin, main] of Object.entries(target.bins)) {
    // A bin of its own so the module's `import.meta.main` check (Node < 24.2 lacks it) does not decide whether it runs.
    const path = join(target.dist, "bin", `${bin}.js`);
    mkdirSync(dirname(path), { recursive: true });
    const body = main.endsWith("apply.js")
      ? `import { main } from ${JSON.stringify(main)};\nprocess.exitCode = await main(process.argv.slice(2));\n`
      : `import ${JSON.stringify(main)};\n`;
    writeFileSync(path, `#!/usr/bin/env node\n${body}`);
    chmodSync(path, 0o755);
    written++;
  }
}
await buildBunCli(join(outRoot, "dist", "bun"), REPO);
written += 2;
console.error(`build: ${written} files → ${TARGETS.map((t) => relative(process.cwd(), t.dist) || t.dist).join(", ")}`);
