/**
 * The public surface of `mod.ts` is deliberate: its value and type exports are
 * compared against the checked-in list `mod_exports.txt`. A change to the
 * surface must change that list in the same commit (regenerate it with
 * `UPDATE_MOD_EXPORTS=1 bun test test/unit/mod_exports.test.ts`).
 */
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import * as mod from "../../mod.ts";

const REPO = join(import.meta.dir, "..", "..");
const LIST = join(import.meta.dir, "mod_exports.txt");

/** Names a TypeScript source declares with `export interface|type|class|…`. */
function declaredTypeNames(source: string): string[] {
  return [...source.matchAll(/^export\s+(?:declare\s+)?(?:interface|type|class|enum)\s+([A-Za-z0-9_$]+)/gm)].map((m) => m[1]!);
}

/** The type-only names `mod.ts` exports: `export type { … }` and `export type * from`. */
function typeExports(modSource: string): string[] {
  const names: string[] = [];
  for (const m of modSource.matchAll(/export\s+type\s*\{([^}]*)\}\s*from/g)) {
    for (const part of m[1]!.split(",")) {
      const name = part.trim().split(/\s+as\s+/).pop()!.trim();
      if (name) names.push(name);
    }
  }
  for (const m of modSource.matchAll(/export\s+type\s+\*\s+from\s+["']([^"']+)["']/g)) {
    names.push(...declaredTypeNames(readFileSync(join(REPO, dirname("mod.ts"), m[1]!), "utf8")));
  }
  return names;
}

function currentSurface(): string {
  const values = Object.keys(mod).map((n) => `value ${n}`);
  const types = typeExports(readFileSync(join(REPO, "mod.ts"), "utf8")).map((n) => `type ${n}`);
  return [...new Set([...values, ...types])].sort().join("\n") + "\n";
}

test("mod.ts exports exactly the names in test/unit/mod_exports.txt", () => {
  const surface = currentSurface();
  if (process.env.UPDATE_MOD_EXPORTS === "1") writeFileSync(LIST, surface);
  expect(surface).toBe(readFileSync(LIST, "utf8"));
});

test("the type scanner reads inline lists, renames and `export type *`", () => {
  expect(declaredTypeNames("export interface A {}\nexport type B = 1;\nexport class C {}\nexport function d() {}")).toEqual(["A", "B", "C"]);
  expect(typeExports(`export type { X, Y as Z } from "./lib/x.ts";`)).toEqual(["X", "Z"]);
});
