/**
 * scripts/docs_lint.ts's pure parts: which files deno.json `exports` names
 * (read at run time, so a new entry point is linted without editing the
 * script), and which exported symbols `deno doc --json` shows without an
 * `@example`. The deno runs themselves are `.ci/run`'s `npm run docs:lint`.
 */
import { describe, expect, test } from "bun:test";
import { entryPoints, symbolsWithoutExample } from "../../scripts/docs_lint.ts";

describe("entryPoints", () => {
  const cases: [string, { exports?: unknown }, string[]][] = [
    ["one path", { exports: "./mod.ts" }, ["mod.ts"]],
    ["a map of subpaths", { exports: { ".": "./mod.ts", "./core": "./core.ts", "./ssh": "./ssh.ts" } }, ["mod.ts", "core.ts", "ssh.ts"]],
    ["the same file under two subpaths, once", { exports: { ".": "./mod.ts", "./all": "./mod.ts" } }, ["mod.ts"]],
    ["a path without ./", { exports: "mod.ts" }, ["mod.ts"]],
  ];
  for (const [name, json, files] of cases) test(name, () => expect(entryPoints(json)).toEqual(files));
  const bad: [string, { exports?: unknown }][] = [
    ["no exports", {}],
    ["an empty map", { exports: {} }],
    ["a non-string value", { exports: { ".": { default: "./mod.ts" } } }],
    ["an empty path", { exports: "" }],
  ];
  for (const [name, json] of bad) test(`refuses ${name}`, () => expect(() => entryPoints(json)).toThrow(/"exports" must be a path or a map/));
});

describe("symbolsWithoutExample", () => {
  const at = (file: string, line: number) => ({ filename: `file:///repo/${file}`, line });
  const json = {
    version: 2,
    nodes: {
      "file:///repo/mod.ts": {
        symbols: [
          { name: "parsePatch", declarations: [{ kind: "function", location: at("lib/parse.ts", 10), jsDoc: { doc: "Parse.", tags: [{ kind: "example" }] } }] },
          { name: "Plan", declarations: [{ kind: "interface", location: at("lib/types.ts", 12), jsDoc: { doc: "A plan." } }] },
          { name: "Limits", declarations: [{ kind: "interface", location: at("lib/types.ts", 40) }] },
          {
            name: "overloaded",
            declarations: [
              { kind: "function", location: at("lib/o.ts", 1), jsDoc: { doc: "First." } },
              { kind: "function", location: at("lib/o.ts", 2), jsDoc: { doc: "Second.", tags: [{ kind: "param" }, { kind: "example" }] } },
            ],
          },
        ],
      },
      "file:///repo/core.ts": {
        symbols: [
          { name: "Plan", declarations: [{ kind: "interface", location: at("lib/types.ts", 12), jsDoc: { doc: "A plan." } }] },
          // A second entry re-exporting a symbol another entry documents: deno doc lists it as a reference to it.
          { name: "parsePatch", declarations: [{ kind: "reference", location: at("core.ts", 3), def: { target: at("lib/parse.ts", 10) } }] },
        ],
      },
      "file:///repo/ssh.ts": {
        // A reference whose target no entry documents in full is still a finding.
        symbols: [{ name: "orphan", declarations: [{ kind: "reference", location: at("ssh.ts", 4), def: { target: at("lib/ssh/x.ts", 7) } }] }],
      },
    },
  };
  test("lists each undocumented or example-less export once, across entry points; one example among overloads suffices", () => {
    expect(symbolsWithoutExample(json, "/repo")).toEqual(["lib/types.ts:12 Plan (interface)", "lib/types.ts:40 Limits (interface)", "ssh.ts:4 orphan (reference)"]);
  });
  test("an unknown output format is an error, not an empty list", () => {
    expect(() => symbolsWithoutExample({ version: 3, modules: [] }, "/repo")).toThrow(/no `nodes`/);
  });
});
