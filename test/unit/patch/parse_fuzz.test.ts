/**
 * parsePatch never throws and always returns a well-formed, JSON-plain result,
 * whatever the input: 10k seeded mutations of valid patches plus random
 * strings. A seeded PRNG keeps every failure reproducible (the seed and case
 * number are in the assertion message).
 */
import { describe, expect, test } from "bun:test";
import { parsePatch } from "../../../lib/patch/parse.ts";
import { validatePath } from "../../../lib/patch/paths.ts";
import type { FailureCode, ParseResult } from "../../../lib/types.ts";

/** mulberry32: a tiny, well-distributed 32-bit PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEEDS: readonly string[] = [
  [
    "*** Begin Patch",
    "*** Add File: src/new.ts",
    "+export const x = 1;",
    "+",
    "*** Update File: src/app.ts",
    "*** Move to: src/main.ts",
    "@@ class App",
    "@@ run() {",
    "   const a = 1;",
    "-  return a;",
    "+  return a + 1;",
    "",
    "@@",
    " }",
    "+// end",
    "*** End of File",
    "*** Delete File: old/gone.txt",
    "*** End Patch",
  ].join("\n"),
  [
    "apply_patch <<'EOF'",
    "*** Begin Patch",
    "*** Update File: README.md",
    " intro",
    "-old",
    "+new",
    "@@ -10,3 +10,4 @@ section",
    " *** End Patch",
    "+*** Add File: x",
    "*** End Patch",
    "EOF",
  ].join("\r\n"),
  "  \n*** Begin Patch\n  *** Delete File: документы/отчёт.md\n*** Add File: -rf\n+$HOME `x`\n*** End Patch\n\n",
];

const ALPHABET = [
  " ", " ", "+", "-", "@", "@@", "@@ ", "*", "***", "*** ", "\n", "\n", "\r", "\r\n", "\t", "<<", "'", '"',
  "EOF", "/", "..", ".", "\\", "\0", "\u0085", "\u2028", "\ufeff", "\ud83d", "\ude00", "😀", "é", "a", "z", "0",
  "*** Begin Patch", "*** End Patch", "*** End of File", "*** Add File: ", "*** Update File: ", "*** Delete File: ",
  "*** Move to: ", "@@ -1,2 +1,3 @@",
];

const CODES: ReadonlySet<FailureCode> = new Set<FailureCode>([
  "invalid_patch",
  "invalid_path",
  "duplicate_path",
  "limit_exceeded",
]);

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)]!;
}

function mutate(rand: () => number, text: string): string {
  const steps = 1 + Math.floor(rand() * 4);
  for (let s = 0; s < steps; s++) {
    const at = Math.floor(rand() * (text.length + 1));
    const lines = text.split("\n");
    const li = Math.floor(rand() * lines.length);
    switch (Math.floor(rand() * 8)) {
      case 0: // delete a character range
        text = text.slice(0, at) + text.slice(at + 1 + Math.floor(rand() * 3));
        break;
      case 1: // insert a token
        text = text.slice(0, at) + pick(rand, ALPHABET) + text.slice(at);
        break;
      case 2: // delete a line
        lines.splice(li, 1);
        text = lines.join("\n");
        break;
      case 3: // duplicate a line
        lines.splice(li, 0, lines[li]!);
        text = lines.join("\n");
        break;
      case 4: // swap two lines
        {
          const lj = Math.floor(rand() * lines.length);
          [lines[li], lines[lj]] = [lines[lj]!, lines[li]!];
          text = lines.join("\n");
        }
        break;
      case 5: // truncate
        text = text.slice(0, at);
        break;
      case 6: // insert a marker-ish line
        lines.splice(li, 0, pick(rand, ALPHABET) + pick(rand, ["a", "a/b", "", " x ", "/abs", "a/"]));
        text = lines.join("\n");
        break;
      default: // replace a line's first character
        lines[li] = pick(rand, [" ", "+", "-", "@", "*", "\t", ""]) + lines[li]!.slice(1);
        text = lines.join("\n");
    }
  }
  return text;
}

function randomString(rand: () => number): string {
  let s = "";
  const n = Math.floor(rand() * 40);
  for (let i = 0; i < n; i++) s += pick(rand, ALPHABET);
  return s;
}

/** Everything a caller may rely on, checked on every result. */
function checkShape(text: string, r: ParseResult, label: string): void {
  const lineCount = text.split("\n").length;
  const inRange = (n: unknown): boolean => Number.isInteger(n) && (n as number) >= 1 && (n as number) <= lineCount;
  if (typeof r !== "object" || r === null || typeof r.ok !== "boolean" || !Array.isArray(r.warnings)) {
    throw new Error(`${label}: malformed result`);
  }
  for (const w of r.warnings) {
    if (typeof w.code !== "string" || typeof w.message !== "string") throw new Error(`${label}: bad warning`);
    if (w.patchLine !== undefined && !inRange(w.patchLine)) throw new Error(`${label}: warning line ${w.patchLine}`);
  }
  if (r.ok) {
    for (const op of r.patch.ops) {
      if (!inRange(op.patchLine)) throw new Error(`${label}: op line ${op.patchLine}`);
      if (validatePath(op.path) !== null) throw new Error(`${label}: invalid path accepted: ${op.path}`);
      if (op.type === "update") {
        if (op.chunks.length === 0) throw new Error(`${label}: update without chunks`);
        if (op.moveTo !== undefined && (validatePath(op.moveTo) !== null || op.moveTo === op.path)) {
          throw new Error(`${label}: bad move accepted`);
        }
        for (const c of op.chunks) {
          if (!inRange(c.patchLine) || c.lines.length === 0) throw new Error(`${label}: bad chunk`);
          for (const l of c.lines) {
            if (!inRange(l.patchLine) || typeof l.text !== "string") throw new Error(`${label}: bad chunk line`);
            if (l.text.includes("\n")) throw new Error(`${label}: newline inside a chunk line`);
          }
        }
      }
    }
  } else {
    if (r.errors.length === 0) throw new Error(`${label}: failure without errors`);
    for (const e of r.errors) {
      if (!CODES.has(e.code) || typeof e.message !== "string" || e.message.length === 0) {
        throw new Error(`${label}: bad error ${JSON.stringify(e)}`);
      }
      if (e.patchLine !== undefined && !inRange(e.patchLine)) {
        throw new Error(`${label}: error line ${e.patchLine} of ${lineCount}: ${e.message}`);
      }
    }
  }
}

describe("parsePatch fuzz", () => {
  test("the seed patches themselves parse", () => {
    for (const seed of SEEDS) expect(parsePatch(seed).ok).toBe(true);
  });

  test("10k seeded mutations of valid patches: typed result, never a throw", () => {
    const rand = prng(0x5eed);
    let ok = 0;
    for (let i = 0; i < 10_000; i++) {
      const text = mutate(rand, pick(rand, SEEDS));
      const label = `seed 0x5eed case ${i} ${JSON.stringify(text.slice(0, 200))}`;
      let r: ParseResult;
      try {
        r = parsePatch(text);
      } catch (e) {
        throw new Error(`${label}: threw ${e}`);
      }
      checkShape(text, r, label);
      if (i % 50 === 0) {
        expect(JSON.parse(JSON.stringify(r))).toEqual(r);
        expect(parsePatch(text)).toEqual(r); // deterministic
      }
      if (r.ok) ok++;
    }
    // The mutations must exercise both outcomes, or the test proves little.
    expect(ok).toBeGreaterThan(500);
    expect(ok).toBeLessThan(9_500);
  });

  test("5k random strings: typed result, never a throw", () => {
    const rand = prng(42);
    for (let i = 0; i < 5_000; i++) {
      const text = randomString(rand);
      checkShape(text, parsePatch(text), `seed 42 case ${i} ${JSON.stringify(text)}`);
    }
  });
});

describe("parsePatch stays linear on adversarial input", () => {
  // A quadratic parser takes minutes on these shapes and trips the test timeout;
  // speed itself is measured by the hardening fuzz report, never asserted here.
  const N = 100_000;
  const shapes: [string, string][] = [
    ["many bad chunk lines (error cap)", ["*** Begin Patch", "*** Update File: a", "@@", ...Array(N).fill("x"), "*** End Patch"].join("\n")],
    ["many unknown header lines", ["*** Begin Patch", ...Array(N).fill("junk"), "*** End Patch"].join("\n")],
    ["many @@ lines", ["*** Begin Patch", "*** Update File: a", ...Array(N).fill("@@ a"), "-x", "*** End Patch"].join("\n")],
    ["many Delete sections", ["*** Begin Patch", ...Array.from({ length: N }, (_, i) => `*** Delete File: f${i}`), "*** End Patch"].join("\n")],
    ["many duplicate paths", ["*** Begin Patch", ...Array(N).fill("*** Delete File: same"), "*** End Patch"].join("\n")],
    ["Begin missing, huge text", Array(N).fill("*** Begin Patc").join("\n")],
    ["a single huge line", "<<" + "x".repeat(2_000_000)],
    ["heredoc opener over a long line", "a".repeat(1_000_000) + " <" + "b".repeat(1_000_000)],
  ];
  for (const [name, text] of shapes) {
    test(name, () => {
      checkShape(text, parsePatch(text), name);
    });
  }
});
