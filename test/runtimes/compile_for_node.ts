/**
 * The runtime matrix's checks for a Node without type stripping (the system
 * Node 20 of a fresh machine, which the npm package supports from its
 * `engines`): test/runtimes/suite.ts and the test files it imports are
 * transpiled (Bun's transpiler, as scripts/build.ts does) to `*.compiled.mjs` next to
 * their sources (so the scenario loader's `import.meta.url` still finds
 * test/scenarios/), and their imports of the library are pointed at the
 * built package, `dist/` (what an npm consumer runs), never at `lib/*.ts`.
 * `removeCompiled` deletes them; `.gitignore` keeps them out of commits.
 *
 * @module
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

const REPO = join(import.meta.dir, "..", "..");
// target "browser": "node" would turn import.meta.main into require.main, which an ES module cannot run.
const transpiler = new Bun.Transpiler({ loader: "ts", target: "browser", trimUnusedImports: false });
const RELATIVE = /((?:\bfrom|\bimport)\s*\(?\s*)(["'])(\.\.?\/[^"'\n]+)\.ts\2/g;

/**
 * Compile `entry` (repo-relative) and the test files it imports; returns the
 * repo-relative path of the compiled entry and every file written.
 *
 * @example
 * ```ts
 * const { entry, written } = compileForNode("test/runtimes/suite.ts");
 * ```
 */
export function compileForNode(entry: string): { entry: string; written: string[] } {
  const written: string[] = [];
  const queue = [entry];
  const seen = new Set<string>();
  const compiledName = (file: string): string => file.replace(/\.ts$/, ".compiled.mjs");
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const source = readFileSync(join(REPO, file), "utf8");
    const js = transpiler.transformSync(source).replace(RELATIVE, (_whole, lead: string, quote: string, spec: string) => {
      const target = normalize(join(dirname(file), `${spec}.ts`));
      let to: string;
      if (target === "mod.ts" || target.startsWith("lib/")) to = join("dist", target.replace(/\.ts$/, ".js"));
      else if (target.startsWith("test/")) {
        queue.push(target);
        to = compiledName(target);
      } else throw new Error(`${file}: cannot compile an import of ${target}`);
      let rel = relative(dirname(file), to);
      if (!rel.startsWith(".")) rel = `./${rel}`;
      return `${lead}${quote}${rel}${quote}`;
    });
    writeFileSync(join(REPO, compiledName(file)), js);
    written.push(compiledName(file));
  }
  return { entry: compiledName(entry), written };
}

/**
 * Delete what {@linkcode compileForNode} wrote.
 *
 * @example
 * ```ts
 * removeCompiled(compileForNode("test/runtimes/suite.ts").written);
 * ```
 */
export function removeCompiled(written: readonly string[]): void {
  for (const file of written) rmSync(join(REPO, file), { force: true });
}
