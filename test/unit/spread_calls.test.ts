/**
 * No spread into a call in lib/ or examples/ (issue 28 item 2), checked on
 * every run instead of by eye: `list.push(...items)`, `Math.max(...xs)`,
 * `String.fromCharCode(...codes)` pass every element as an argument, and
 * engines throw `RangeError: Maximum call stack size exceeded` past about
 * 125,000 (V8: Node, Deno) or 640,000 (JSC: Bun). Use `appendAll`
 * (lib/text/append_all.ts) or a loop. A spread whose length is bounded by
 * construction stays allowed when its line says `bounded spread` and why.
 *
 * Spreads in array and object literals (`[...a, ...b]`, `{ ...o }`) are
 * iteration, not arguments, and are fine at any size; rest parameters are
 * declarations.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const REPO = join(import.meta.dir, "..", "..");

/** The code of a TypeScript source with comments, strings and template text blanked (newlines kept). */
function codeOnly(source: string): string {
  let out = "";
  let i = 0;
  const templates: number[] = []; // brace depth at each open `${`
  let depth = 0;
  const blank = (s: string): string => s.replace(/[^\n]/g, " ");
  const readString = (quote: string): void => {
    let j = i + 1;
    while (j < source.length && source[j] !== quote && source[j] !== "\n") j += source[j] === "\\" ? 2 : 1;
    out += blank(source.slice(i, j + 1));
    i = j + 1;
  };
  const readTemplate = (): void => {
    // from just after "`" or "}" of a `${…}`, up to the closing "`" or the next "${"
    let j = i;
    while (j < source.length && source[j] !== "`" && !(source[j] === "$" && source[j + 1] === "{")) j += source[j] === "\\" ? 2 : 1;
    out += blank(source.slice(i, j));
    if (source[j] === "`") {
      out += " ";
      i = j + 1;
    } else {
      out += "  ";
      templates.push(depth);
      depth++;
      i = j + 2;
    }
  };
  while (i < source.length) {
    const c = source[i]!;
    if (c === "/" && source[i + 1] === "/") {
      const end = source.indexOf("\n", i);
      const stop = end < 0 ? source.length : end;
      out += blank(source.slice(i, stop));
      i = stop;
    } else if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end < 0 ? source.length : end + 2;
      out += blank(source.slice(i, stop));
      i = stop;
    } else if (c === '"' || c === "'") {
      readString(c);
    } else if (c === "`") {
      out += " ";
      i++;
      readTemplate();
    } else if (c === "}" && templates.length > 0 && templates.at(-1) === depth - 1) {
      templates.pop();
      depth--;
      out += " ";
      i++;
      readTemplate();
    } else {
      if (c === "{") depth++;
      else if (c === "}") depth--;
      out += c;
      i++;
    }
  }
  return out;
}

/** 1-based line numbers of spreads whose innermost bracket is a call's argument list. */
export function spreadCallLines(source: string): number[] {
  const code = codeOnly(source);
  const stack: boolean[] = [];
  const found: number[] = [];
  let line = 1;
  for (let i = 0; i < code.length; i++) {
    const c = code[i]!;
    if (c === "\n") line++;
    else if (c === "(" || c === "[" || c === "{") {
      const before = code.slice(Math.max(0, i - 40), i);
      const call = c === "(" &&
        /[\w$\])]\s*$/.test(before) &&
        !/\bfunction\s*\*?\s*[\w$]*\s*$/.test(before) &&
        !/\b(if|for|while|switch|catch|return|typeof|await|in|of|case|void|delete)\s*$/.test(before);
      stack.push(call);
    } else if (c === ")" || c === "]" || c === "}") stack.pop();
    else if (c === "." && code.startsWith("...", i)) {
      if (stack.at(-1) === true) found.push(line);
      i += 2;
    }
  }
  return [...new Set(found)];
}

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...tsFiles(full));
    else if (name.endsWith(".ts")) out.push(full);
  }
  return out.sort();
}

describe("no spread into a call in lib/ and examples/", () => {
  test.each([
    ["out.push(...inserts);", [1]],
    ["Math.max(...xs.map((x) => x.n))", [1]],
    ["String.fromCharCode(...codes)", [1]],
    ["f(a,\n  ...rest)", [2]],
    ["target.push(`${a}`, ...more)", [1]],
    ["const a = [...x, ...y];", []],
    ["const o = { ...base, k: f(...[]) === 0 };", [1]],
    ["g({ ...o });", []],
    ["function sh(strings: T, ...values: never[]) {}", []],
    ["const h = (...args: unknown[]) => args;", []],
    ["// push(...x) in a comment\nconst s = \"f(...x)\";", []],
    ["const t = `${f([...a])} and (...) ${g(...b)}`;", [1]],
    ["if (...x) {}", []],
    ["new Set(...lists)", [1]],
  ] as [string, number[]][])("the scanner: %p → lines %p", (source, lines) => {
    expect(spreadCallLines(source)).toEqual(lines);
  });

  const files = [...tsFiles(join(REPO, "lib")), ...tsFiles(join(REPO, "examples")), join(REPO, "mod.ts")];
  test("the scanner reads every source (lib/ and examples/ are there)", () => {
    expect(files.length).toBeGreaterThan(100);
  });
  for (const file of files) {
    const name = relative(REPO, file);
    test(`${name}: every spread into a call is marked "bounded spread"`, () => {
      const source = readFileSync(file, "utf8");
      const lines = source.split("\n");
      const unmarked = spreadCallLines(source).filter((n) => !/bounded spread/.test(lines[n - 1]!)).map((n) => `${name}:${n}: ${lines[n - 1]!.trim()}`);
      expect(unmarked).toEqual([]);
    });
  }
});
