/**
 * The layering rule (SPEC §1), checked on every run instead of by eye.
 *
 * `lib/` has one folder per layer and arrows only point down:
 *
 *   text ← patch ← match ← plan ← remote (with remote/programs) ← ssh ← apply.ts ← fleet
 *
 * A file may import its own layer and the layers below it, plus the two shared
 * files `lib/types.ts` and `lib/failure.ts`. The pure layers (text, patch,
 * match, plan) and the shared files import nothing outside `lib/`, not even a
 * `node:` builtin, so the `/core` entry bundles and runs in a browser; the
 * one place that reaches the runtime's `node:crypto` (lib/text/sha256.ts,
 * through `process.getBuiltinModule`, with a JavaScript fallback) is named
 * below. `lib/apply.ts` joins the layers and only `lib/fleet/` (one patch
 * to many hosts, built on applyPatch) imports it; the fleet never imports
 * `lib/ssh/` (a host is whatever RemoteShell its target gives) and needs no
 * package. The whole `lib/` import graph (type-only imports included) has
 * no cycle.
 * Examples use the library only through `mod.ts`.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

const REPO = join(import.meta.dir, "..", "..");
const LIB = join(REPO, "lib");

/** Layers, lowest first; a file may import from its own rank or lower. */
const LAYERS = ["text", "patch", "match", "plan", "remote", "ssh"] as const;
/** Layers above `lib/apply.ts`, lowest first. */
const ABOVE_APPLY = ["fleet"] as const;
const PURE = new Set<string>(["text", "patch", "match", "plan", "shared"]);
const SHARED = new Set(["types.ts", "failure.ts"]);

/** Every import or re-export specifier of a TypeScript source, static or dynamic. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/g)) found.push(m[1]!);
  for (const m of source.matchAll(/(?:^|\n)\s*import\s*["']([^"']+)["']/g)) found.push(m[1]!);
  for (const m of source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) found.push(m[1]!);
  return found;
}

/** Every `.ts` file under `dir`, as repo-relative paths. */
function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...tsFiles(full));
    else if (name.endsWith(".ts")) out.push(relative(REPO, full));
  }
  return out.sort();
}

/** The layer of a repo-relative lib path: a folder name, "shared" or "apply". */
function layerOf(file: string): string {
  const parts = file.split("/");
  if (parts.length === 2) return SHARED.has(parts[1]!) ? "shared" : parts[1] === "apply.ts" ? "apply" : "unknown";
  return parts[1]!;
}

function rank(layer: string): number {
  if (layer === "shared") return -1;
  if (layer === "apply") return LAYERS.length;
  const above = (ABOVE_APPLY as readonly string[]).indexOf(layer);
  if (above >= 0) return LAYERS.length + 1 + above;
  return (LAYERS as readonly string[]).indexOf(layer);
}

/** Resolve a relative specifier of `file` to a repo-relative path. */
function resolveSpec(file: string, spec: string): string {
  return normalize(join(dirname(file), spec));
}

const libFiles = tsFiles(LIB);
const graph = new Map<string, { local: string[]; external: string[] }>();
for (const file of libFiles) {
  const specs = specifiers(readFileSync(join(REPO, file), "utf8"));
  graph.set(file, {
    local: specs.filter((s) => s.startsWith(".")).map((s) => resolveSpec(file, s)),
    external: specs.filter((s) => !s.startsWith(".")),
  });
}

/** Strongly connected groups of more than one file, or a file importing itself. */
function cycles(g: Map<string, { local: string[] }>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of g.get(v)?.local ?? []) {
      if (!g.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1 || g.get(v)!.local.includes(v)) found.push(group.sort());
    }
  };
  for (const v of g.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("layering", () => {
  test("the specifier scanner sees static, type-only, multi-line and dynamic imports", () => {
    const src = `import type {\n  A,\n} from "./a.ts";\nimport { b } from "node:fs";\nexport { c } from "./c.ts";\nconst m = await import("ssh2");\nimport "./side.ts";`;
    expect(specifiers(src).sort()).toEqual(["./a.ts", "./c.ts", "./side.ts", "node:fs", "ssh2"]);
  });

  test("every lib file belongs to a layer folder or is one of the shared files or apply.ts", () => {
    const known = (layer: string): boolean =>
      layer === "shared" || layer === "apply" || (LAYERS as readonly string[]).includes(layer) || (ABOVE_APPLY as readonly string[]).includes(layer);
    expect(libFiles.filter((f) => !known(layerOf(f)))).toEqual([]);
    for (const layer of [...LAYERS, ...ABOVE_APPLY]) expect(libFiles.some((f) => layerOf(f) === layer)).toBe(true);
  });

  for (const file of libFiles) {
    const layer = layerOf(file);
    test(`${file} (${layer}) imports only its own layer and the layers below it`, () => {
      const { local, external } = graph.get(file)!;
      const upward = local.filter((target) => {
        if (!target.startsWith("lib/")) return true; // never outside lib/
        if (target === "lib/apply.ts") return layer !== "fleet"; // only the fleet is built on the joining file
        if (layer === "fleet" && layerOf(target) === "ssh") return true; // a host is a RemoteShell, not an SSH connection
        return rank(layerOf(target)) > rank(layer);
      });
      expect(upward).toEqual([]);
      const allowedExternal = (spec: string): boolean => {
        if (PURE.has(layer)) return false;
        if (layer === "remote" || layer === "fleet") return spec.startsWith("node:");
        return spec.startsWith("node:") || spec === "ssh2";
      };
      expect(external.filter((s) => !allowedExternal(s))).toEqual([]);
    });
  }

  test("pure layers reach no runtime module by other means (require, getBuiltinModule) except the SHA-256 facade", () => {
    const reaching = libFiles
      .filter((file) => PURE.has(layerOf(file)))
      .filter((file) => /\brequire\s*\(|getBuiltinModule|\bBuffer\b|\bDeno\.|\bBun\./.test(readFileSync(join(REPO, file), "utf8").replace(/^\s*(\/\/|\*).*$/gm, "")));
    expect(reaching).toEqual(["lib/text/sha256.ts"]);
  });

  test("every local import resolves to a real file (the graph cannot silently rot)", () => {
    const known = new Set(libFiles);
    const dangling = [...graph].flatMap(([file, { local }]) => local.filter((t) => !known.has(t)).map((t) => `${file} -> ${t}`));
    expect(dangling).toEqual([]);
  });

  test("lib/ has no import cycle (type-only imports included)", () => {
    expect(cycles(graph)).toEqual([]);
  });

  test("the cycle finder finds a two-file loop and a self-import", () => {
    const g = new Map([
      ["a", { local: ["b"] }],
      ["b", { local: ["a"] }],
      ["c", { local: ["c"] }],
      ["d", { local: ["a"] }],
    ]);
    expect(cycles(g).sort()).toEqual([["a", "b"], ["c"]]);
  });

  test("examples use the library only through mod.ts", () => {
    const bad: string[] = [];
    for (const file of tsFiles(join(REPO, "examples"))) {
      for (const spec of specifiers(readFileSync(join(REPO, file), "utf8"))) {
        if (!spec.startsWith(".")) continue;
        const target = resolveSpec(file, spec);
        if (target !== "mod.ts" && !target.startsWith("examples/")) bad.push(`${file} -> ${target}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
