/**
 * Seeded generator of code-like text for the benchmarks.
 *
 * The text looks like TypeScript: functions with indented bodies, braces,
 * identifiers, numeric literals and comments, about 38 bytes per line on
 * average (newline included). About a third of the lines come from a small
 * pool of blocks that is pasted again and again, so most short windows of
 * the file occur many times and a locator that does not check uniqueness
 * would pick the wrong one.
 *
 * Deterministic: the same seed and size give the same lines on every
 * machine (own PRNG, never `Math.random`).
 *
 * @module
 */

/**
 * A tiny deterministic PRNG (mulberry32): 32 bits of state, good enough
 * spread for synthetic text, identical on every runtime.
 *
 * @example
 * ```ts
 * const rng = new Prng(42);
 * rng.int(10); // an integer in [0, 10)
 * ```
 */
export class Prng {
  #state: number;

  /** Seed the generator; any 32-bit integer. */
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }
}

const WORDS: readonly string[] = [
  "user", "count", "index", "buffer", "value", "result", "config", "handler",
  "request", "response", "item", "list", "map", "node", "path", "name", "size",
  "offset", "data", "state", "error", "token", "cache", "queue", "stream",
  "block", "entry", "key", "line", "file", "limit", "total", "parent", "child",
  "source", "target", "peer", "frame", "chunk", "range",
];
const VERBS: readonly string[] = [
  "get", "set", "load", "save", "parse", "build", "read", "write", "find",
  "check", "update", "apply", "merge", "split", "send", "open", "close", "push",
];
const METHODS: readonly string[] = [
  "push", "get", "set", "has", "delete", "add", "slice", "map", "filter",
  "join", "trim", "emit", "close", "flush",
];
const OPERATORS: readonly string[] = ["<", ">", "<=", ">=", "===", "!=="];

function capitalise(word: string): string {
  return word[0]!.toUpperCase() + word.slice(1);
}

/** A camelCase identifier of one or two words. */
function identifier(rng: Prng): string {
  const first = rng.pick(WORDS);
  return rng.chance(0.7) ? first + capitalise(rng.pick(WORDS)) : first;
}

function functionName(rng: Prng): string {
  return rng.pick(VERBS) + capitalise(rng.pick(WORDS)) +
    (rng.chance(0.4) ? capitalise(rng.pick(WORDS)) : "");
}

function argumentList(rng: Prng): string {
  const count = 1 + rng.int(3);
  const args: string[] = [];
  for (let i = 0; i < count; i++) args.push(rng.chance(0.25) ? literal(rng) : identifier(rng));
  return args.join(", ");
}

function literal(rng: Prng): string {
  return String(rng.int(rng.chance(0.5) ? 100 : 10000));
}

/** One simple statement (no nesting), without indentation. */
function statement(rng: Prng): string {
  switch (rng.int(9)) {
    case 0:
    case 1:
      return `const ${identifier(rng)} = ${rng.chance(0.3) ? "await " : ""}${functionName(rng)}(${argumentList(rng)});`;
    case 2:
      return `let ${identifier(rng)} = ${identifier(rng)}.length + ${literal(rng)};`;
    case 3:
      return `${identifier(rng)}.${rng.pick(METHODS)}(${argumentList(rng)});`;
    case 4:
      return `${identifier(rng)} += ${literal(rng)};`;
    case 5:
      return `// ${rng.pick(VERBS)} the ${rng.pick(WORDS)} ${rng.pick(WORDS)} before the ${rng.pick(WORDS)} ${rng.pick(WORDS)}`;
    case 6:
      return `return ${functionName(rng)}(${argumentList(rng)});`;
    case 7:
      return `${identifier(rng)} = ${identifier(rng)}.${rng.pick(METHODS)}();`;
    default:
      return `if (!${identifier(rng)}) throw new Error("${rng.pick(WORDS)} ${rng.pick(WORDS)}");`;
  }
}

/** Lines of one statement group at `depth`, with at most one nested block. */
function body(rng: Prng, depth: number, out: string[]): void {
  const indent = "    ".repeat(depth);
  const count = 3 + rng.int(6);
  for (let i = 0; i < count; i++) {
    if (depth < 3 && rng.chance(0.2)) {
      const kind = rng.int(3);
      if (kind === 0) {
        out.push(`${indent}if (${identifier(rng)} ${rng.pick(OPERATORS)} ${literal(rng)}) {`);
      } else if (kind === 1) {
        out.push(`${indent}for (const ${identifier(rng)} of ${identifier(rng)}) {`);
      } else {
        out.push(`${indent}while (${identifier(rng)}.size > ${literal(rng)}) {`);
      }
      body(rng, depth + 1, out);
      out.push(`${indent}}`);
    } else {
      out.push(indent + statement(rng));
    }
  }
}

/** One top-level function (or method-like block) followed by a blank line. */
function functionBlock(rng: Prng, out: string[]): void {
  const args = rng.int(3);
  const params: string[] = [];
  for (let i = 0; i < args; i++) params.push(identifier(rng));
  const prefix = rng.pick(["function", "export function", "async function", "export async function"]);
  out.push(`${prefix} ${functionName(rng)}(${params.join(", ")}) {`);
  body(rng, 1, out);
  out.push("}");
  out.push("");
}

/** Share of the file's lines that are copies of pooled blocks. */
const DUPLICATED_SHARE = 1 / 3;
/** Distinct blocks in the pool: each is pasted many times in a large file. */
const POOL_SIZE = 200;

/**
 * Generate `lineCount` code-like lines (without endings) from `seed`.
 *
 * @example
 * ```ts
 * const lines = generateCodeLines(1000, 7);
 * lines.length; // 1000
 * ```
 */
export function generateCodeLines(lineCount: number, seed: number): string[] {
  const rng = new Prng(seed);
  const pool: string[][] = [];
  for (let i = 0; i < POOL_SIZE; i++) {
    const block: string[] = [];
    functionBlock(rng, block);
    pool.push(block);
  }
  const out: string[] = [];
  let duplicated = 0;
  while (out.length < lineCount) {
    // Keep the duplicated share near one third at every point of the file,
    // so any window of it has the same mix.
    if (duplicated < out.length * DUPLICATED_SHARE && rng.chance(0.6)) {
      const block = rng.pick(pool);
      for (const line of block) out.push(line);
      duplicated += block.length;
    } else {
      functionBlock(rng, out);
    }
  }
  out.length = lineCount;
  return out;
}

/**
 * Join lines into file bytes: `\n` endings and a final newline.
 *
 * @example
 * ```ts
 * linesToBytes(["a", "b"]); // bytes of "a\nb\n"
 * ```
 */
export function linesToBytes(lines: readonly string[]): Uint8Array {
  return new TextEncoder().encode(lines.join("\n") + "\n");
}
