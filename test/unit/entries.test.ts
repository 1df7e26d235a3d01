/**
 * The subpath entries (package.json and deno.json `exports`): `./core`
 * (core.ts: the pure layers, no `node:` import anywhere in its graph, so it
 * bundles for browsers) and `./ssh` (ssh.ts: the SSH adapter) each export
 * exactly what `mod.ts` exports from their layers, so a name added to the
 * main entry cannot be forgotten in its subpath, and nothing is exported by a
 * subpath alone.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import * as core from "../../core.ts";
import * as mod from "../../mod.ts";
import * as ssh from "../../ssh.ts";

const REPO = join(import.meta.dir, "..", "..");
const PURE = /^lib\/(text|patch|match|plan)\/|^lib\/(types|failure)\.ts$/;

/** `export [type] { a, b as c } from "x"` and `export type * from "x"` of a source: `kind name <- source` lines. */
function reExports(file: string): string[] {
  const source = readFileSync(join(REPO, file), "utf8");
  const out: string[] = [];
  for (const m of source.matchAll(/^export\s+(type\s+)?(\*|\{[^}]*\})\s*from\s*["']([^"']+)["']/gm)) {
    const from = normalize(join(dirname(file), m[3]!));
    if (m[2] === "*") out.push(`${m[1] ? "type" : "value"} * <- ${from}`);
    else {
      for (const part of m[2]!.slice(1, -1).split(",")) {
        const name = part.trim();
        if (name) out.push(`${m[1] ? "type" : "value"} ${name} <- ${from}`);
      }
    }
  }
  return out.sort();
}

/** Every local module `file` imports or re-exports, transitively, with its external specifiers. */
function graph(file: string, seen = new Map<string, string[]>()): Map<string, string[]> {
  if (seen.has(file)) return seen;
  const source = readFileSync(join(REPO, file), "utf8");
  const specs = [...source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1] ?? m[2]!);
  seen.set(file, specs.filter((s) => !s.startsWith(".")));
  for (const spec of specs.filter((s) => s.startsWith("."))) graph(normalize(join(dirname(file), spec)), seen);
  return seen;
}

describe("subpath entries", () => {
  test("core.ts re-exports exactly what mod.ts exports from the pure layers", () => {
    expect(reExports("core.ts")).toEqual(reExports("mod.ts").filter((line) => PURE.test(line.split(" <- ")[1]!)));
  });

  test("ssh.ts re-exports exactly what mod.ts exports from lib/ssh/", () => {
    expect(reExports("ssh.ts")).toEqual(reExports("mod.ts").filter((line) => line.split(" <- ")[1]!.startsWith("lib/ssh/")));
  });

  test("the values of core.ts and ssh.ts are the very objects mod.ts exports", () => {
    for (const entry of [core, ssh] as Record<string, unknown>[]) {
      expect(Object.keys(entry).length).toBeGreaterThan(5);
      for (const [name, value] of Object.entries(entry)) expect([name, (mod as Record<string, unknown>)[name] === value]).toEqual([name, true]);
    }
  });

  test("core.ts reaches only pure lib files and imports no external module at all (no node:, no ssh2)", () => {
    const reached = graph("core.ts");
    expect([...reached.keys()].filter((f) => f !== "core.ts" && !PURE.test(f))).toEqual([]);
    expect([...reached].filter(([, external]) => external.length > 0)).toEqual([]);
    expect(reached.size).toBeGreaterThan(20);
  });
});
