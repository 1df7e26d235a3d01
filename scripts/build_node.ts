/**
 * Build the JavaScript that Node and Deno load when this package is installed
 * as a dependency (`npm install git+https://…` or a tarball): both runtimes
 * refuse to strip TypeScript types under `node_modules`
 * (ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING), so `mod.ts` and `lib/` are
 * transpiled one file to one file into `dist/` (same tree, `.ts` → `.js`,
 * relative `.ts` specifiers rewritten). Bun, and anyone importing the
 * sources by path, use the `.ts` files directly; package.json's `exports`
 * sends Bun to `mod.ts` and everything else to `dist/mod.js`.
 *
 * Run by npm's `prepare` (so a git install builds it), or by hand:
 * `bun scripts/build_node.ts [--out DIR]` (default: the package directory).
 * The sources are erasable TypeScript only (tsconfig `erasableSyntaxOnly`),
 * so removing the types is the whole transformation.
 *
 * @module
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

const packageDir = join(import.meta.dir, "..");
const outIndex = process.argv.indexOf("--out");
const outRoot = outIndex >= 0 ? process.argv[outIndex + 1]! : packageDir;
const dist = join(outRoot, "dist");

/** Every `.ts` source of the published library: mod.ts and lib/ (no tests). */
function sources(): string[] {
  const files = ["mod.ts"];
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(packageDir, dir)).sort()) {
      const path = `${dir}/${name}`;
      if (statSync(join(packageDir, path)).isDirectory()) walk(path);
      else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) files.push(path);
    }
  };
  walk("lib");
  return files;
}

/** Relative `./x.ts` / `../x.ts` specifiers in static and dynamic imports and re-exports. */
const RELATIVE_TS = /((?:\bfrom|\bimport)\s*\(?\s*)(["'])(\.\.?\/[^"'\n]+)\.ts\2/g;

const transpiler = new Bun.Transpiler({ loader: "ts", target: "node", trimUnusedImports: false });
const files = sources();
rmSync(dist, { recursive: true, force: true });
const emitted = new Set(files.map((f) => f.replace(/\.ts$/, ".js")));
for (const file of files) {
  const js = transpiler.transformSync(readFileSync(join(packageDir, file), "utf8")).replace(
    RELATIVE_TS,
    (_whole, lead: string, quote: string, spec: string) => {
      const target = join(dirname(file), `${spec}.js`);
      if (!emitted.has(relative(".", target))) throw new Error(`${file}: import ${spec}.ts is not a library source`);
      return `${lead}${quote}${spec}.js${quote}`;
    },
  );
  if (/["']\.\.?\/[^"'\n]+\.ts["']/.test(js)) throw new Error(`${file}: a relative .ts specifier was not rewritten`);
  const out = join(dist, file.replace(/\.ts$/, ".js"));
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, js);
}
console.error(`build_node: ${files.length} files → ${relative(process.cwd(), dist) || dist}`);
