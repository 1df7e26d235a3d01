/**
 * The layering rule (SPEC §1): the pure core imports nothing but other core
 * files and `node:crypto` — no `node:fs`, no `node:child_process`, no
 * `ssh2`, no remote-layer file. A new core file must be added to CORE; a new
 * lib file that is neither core nor remote fails the census below.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const LIB = join(import.meta.dir, "..", "..", "lib");

/** The pure core: parse, locate, plan, text, diff, paths and what they need. */
const CORE = new Set([
  "chunk_variants", "closest", "diagnose", "diff", "excerpt", "failure", "hunk_failures", "limits", "line_id",
  "line_scan", "locate", "match_index", "match_search", "normalize", "parse", "parse_chunks", "parse_envelope",
  "parse_markers", "parse_sections", "paths", "plan", "plan_checks", "read_window", "sha256", "text", "tier_index", "tier_keyer",
  "tier_pass", "types", "utf8_errors",
]);

/** Every import or re-export specifier of a TypeScript source, static or dynamic. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/g)) found.push(m[1]!);
  for (const m of source.matchAll(/(?:^|\n)\s*import\s*["']([^"']+)["']/g)) found.push(m[1]!);
  for (const m of source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) found.push(m[1]!);
  return found;
}

describe("layering", () => {
  test("the specifier scanner sees static, type-only, multi-line and dynamic imports", () => {
    const src = `import type {\n  A,\n} from "./a.ts";\nimport { b } from "node:fs";\nexport { c } from "./c.ts";\nconst m = await import("ssh2");\nimport "./side.ts";`;
    expect(specifiers(src).sort()).toEqual(["./a.ts", "./c.ts", "./side.ts", "node:fs", "ssh2"]);
  });

  const files = readdirSync(LIB).filter((f) => f.endsWith(".ts")).map((f) => f.slice(0, -3));
  for (const name of files.filter((f) => CORE.has(f))) {
    test(`core file lib/${name}.ts imports only core files and node:crypto`, () => {
      const bad = specifiers(readFileSync(join(LIB, `${name}.ts`), "utf8")).filter((spec) => {
        if (spec === "node:crypto") return false;
        const local = /^\.\/([a-z0-9_]+)\.ts$/.exec(spec);
        return !(local && CORE.has(local[1]!));
      });
      expect(bad).toEqual([]);
    });
  }

  test("every CORE name is a real file (the list cannot silently rot)", () => {
    expect([...CORE].filter((name) => !files.includes(name))).toEqual([]);
  });
});
