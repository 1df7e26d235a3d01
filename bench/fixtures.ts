/**
 * The benchmark's fixture sets, generated from a seed into a temp dir and
 * cached there by generator version, seed and size (never committed).
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { Limits } from "../lib/types.ts";
import type { Family } from "./families.ts";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  braceLines,
  type ChunkSpec,
  everywhereChunk,
  expectedText,
  failingChunk,
  formatCodexPatch,
  generateCodeLines,
  LineIndex,
  linesToBytes,
  nearMissChunk,
  REPEATED_LINE,
  repeatedLines,
  tier3Chunk,
  uniqueChunks,
} from "./gen.ts";

/** Bump when the generator's output changes, so stale caches are ignored. */
export const GEN_VERSION = 2;

/** A generated file, as a snapshot would carry it. */
export interface FileFixture {
  name: string;
  /** Root-relative path the patches address. */
  path: string;
  bytes: Uint8Array;
  sha256: string;
  lineCount: number;
}

/** What planning a fixture patch must produce. */
export type Expectation =
  | { ok: true; newSha256: string; tier: number }
  | {
    ok: false;
    code: "ambiguous_hunk" | "context_mismatch" | "anchor_not_found";
    /** The closest region must hold this 1-based line. */
    line?: number;
    /** Every chunk fails with `code` (folded failures counted by their chunks). */
    failures?: number;
  };

/** A generated patch against one fixture file. */
export interface PatchFixture {
  name: string;
  file: FileFixture;
  text: string;
  chunks: number;
  expect: Expectation;
  /** Limits to parse and plan with (a family of thousands of chunks raises maxChunksPerFile). */
  limits?: Partial<Limits>;
}

/** Files and patches of one group, by name. */
export interface FixtureGroup {
  files: Map<string, FileFixture>;
  patches: Map<string, PatchFixture>;
}

/** Where fixtures are cached (`null`: generate in memory only). */
export type CacheDir = string | null;

/** The default cache directory under the OS temp dir. */
export function defaultCacheDir(): string {
  return join(tmpdir(), "ssh-apply-patch-bench", `v${GEN_VERSION}`);
}

/** Lowercase hex SHA-256. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

const PATH = "src/big.ts";

interface RawGroup {
  files: { name: string; lines: string[] }[];
  patches: { name: string; file: string; chunks: ChunkSpec[]; expect: Expectation; limits?: Partial<Limits> }[];
}

function okExpectation(lines: readonly string[], oracle: readonly ChunkSpec[], tier = 1): Expectation {
  return { ok: true, newSha256: sha256Hex(expectedText(lines, oracle)), tier };
}

function rawCodeGroup(lineCount: number, seed: number): RawGroup {
  const lines = generateCodeLines(lineCount, seed);
  const exact = new LineIndex(lines, (s) => s);
  const trimEnd = new LineIndex(lines, (s) => s.trimEnd());
  const trim = new LineIndex(lines, (s) => s.trim());
  const file = `code-${lineCount}`;
  const patches: RawGroup["patches"] = [];
  for (const count of [1, 3, 10, 100]) {
    const chunks = uniqueChunks(lines, count, seed + count, exact);
    patches.push({ name: `${file}-c${count}`, file, chunks, expect: okExpectation(lines, chunks) });
  }
  const tier3 = tier3Chunk(lines, seed + 3, exact, trimEnd, trim);
  patches.push({ name: `${file}-tier3`, file, chunks: [tier3.patch], expect: okExpectation(lines, [tier3.oracle], 3) });
  const failing = failingChunk(lines, seed + 4, exact, trim);
  patches.push({
    name: `${file}-fail`,
    file,
    chunks: [failing],
    expect: { ok: false, code: "context_mismatch", line: failing.start + 1 },
  });
  return { files: [{ name: file, lines }], patches };
}

function rawAdversarialGroup(lineCount: number): RawGroup {
  const braces = braceLines(lineCount);
  const oddAt = Math.floor(lineCount / 2);
  const bracesOdd = braceLines(lineCount, oddAt);
  const repeated = repeatedLines(lineCount);
  const b = `braces-${lineCount}`;
  const bo = `braces-odd-${lineCount}`;
  const r = `repeated-${lineCount}`;
  const nearMissUnique = nearMissChunk(oddAt - 99);
  return {
    files: [{ name: b, lines: braces }, { name: bo, lines: bracesOdd }, { name: r, lines: repeated }],
    patches: [
      { name: `${b}-everywhere`, file: b, chunks: [everywhereChunk("}")], expect: { ok: false, code: "ambiguous_hunk" } },
      { name: `${b}-nearmiss`, file: b, chunks: [nearMissChunk(0)], expect: { ok: false, code: "context_mismatch" } },
      { name: `${bo}-nearmiss`, file: bo, chunks: [nearMissUnique], expect: okExpectation(bracesOdd, [nearMissUnique]) },
      {
        name: `${r}-everywhere`,
        file: r,
        chunks: [everywhereChunk(REPEATED_LINE)],
        expect: { ok: false, code: "ambiguous_hunk" },
      },
    ],
  };
}

function materialise(raw: RawGroup): FixtureGroup {
  const files = new Map<string, FileFixture>();
  for (const f of raw.files) {
    const bytes = linesToBytes(f.lines);
    files.set(f.name, { name: f.name, path: PATH, bytes, sha256: sha256Hex(bytes), lineCount: f.lines.length });
  }
  const patches = new Map<string, PatchFixture>();
  for (const p of raw.patches) {
    const file = files.get(p.file)!;
    patches.set(p.name, {
      name: p.name,
      file,
      text: formatCodexPatch(PATH, p.chunks),
      chunks: p.chunks.length,
      expect: p.expect,
      ...(p.limits ? { limits: p.limits } : {}),
    });
  }
  return { files, patches };
}

interface GroupIndex {
  files: { name: string; lineCount: number; sha256: string }[];
  patches: { name: string; file: string; text: string; chunks: number; expect: Expectation; limits?: Partial<Limits> }[];
}

function writeAtomically(path: string, data: Uint8Array | string): void {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, data);
  renameSync(temp, path);
}

/** Load a cached group; `undefined` when absent or damaged. */
function loadGroup(dir: string, key: string): FixtureGroup | undefined {
  const indexPath = join(dir, `${key}.json`);
  if (!existsSync(indexPath)) return undefined;
  const index = JSON.parse(readFileSync(indexPath, "utf8")) as GroupIndex;
  const files = new Map<string, FileFixture>();
  for (const f of index.files) {
    const path = join(dir, `${f.name}.txt`);
    if (!existsSync(path)) return undefined;
    const bytes = new Uint8Array(readFileSync(path));
    if (sha256Hex(bytes) !== f.sha256) return undefined;
    files.set(f.name, { name: f.name, path: PATH, bytes, sha256: f.sha256, lineCount: f.lineCount });
  }
  const patches = new Map<string, PatchFixture>();
  for (const p of index.patches) {
    patches.set(p.name, { name: p.name, file: files.get(p.file)!, text: p.text, chunks: p.chunks, expect: p.expect, ...(p.limits ? { limits: p.limits } : {}) });
  }
  return { files, patches };
}

function saveGroup(dir: string, key: string, group: FixtureGroup): void {
  mkdirSync(dir, { recursive: true });
  for (const f of group.files.values()) writeAtomically(join(dir, `${f.name}.txt`), f.bytes);
  const index: GroupIndex = {
    files: [...group.files.values()].map((f) => ({ name: f.name, lineCount: f.lineCount, sha256: f.sha256 })),
    patches: [...group.patches.values()].map((p) => ({
      name: p.name,
      file: p.file.name,
      text: p.text,
      chunks: p.chunks,
      expect: p.expect,
      ...(p.limits ? { limits: p.limits } : {}),
    })),
  };
  // The index goes last: its presence means the files before it are complete.
  writeAtomically(join(dir, `${key}.json`), JSON.stringify(index));
}

function cachedGroup(cacheDir: CacheDir, key: string, produce: () => RawGroup): FixtureGroup {
  if (cacheDir !== null) {
    const cached = loadGroup(cacheDir, key);
    if (cached) return cached;
  }
  const group = materialise(produce());
  if (cacheDir !== null) saveGroup(cacheDir, key, group);
  return group;
}

/**
 * A code-like file of `lineCount` lines and its patches: `-c1`, `-c10`,
 * `-c100` (unique contexts, file order), `-tier3` (whitespace-only
 * difference) and `-fail` (matches nowhere). Names are `code-<lineCount>…`.
 *
 * @example
 * ```ts
 * const group = codeFixtures(2000, 42, null);
 * group.patches.get("code-2000-c10")!.chunks; // 10
 * ```
 */
export function codeFixtures(lineCount: number, seed: number, cacheDir: CacheDir = defaultCacheDir()): FixtureGroup {
  return cachedGroup(cacheDir, `code-${lineCount}-s${seed}`, () => rawCodeGroup(lineCount, seed));
}

/**
 * The adversarial files of SPEC §5.5 at `lineCount` lines and their 100-line
 * chunks: `braces-N-everywhere` (ambiguous), `braces-N-nearmiss` (no match),
 * `braces-odd-N-nearmiss` (one exact match), `repeated-N-everywhere`.
 *
 * @example
 * ```ts
 * adversarialFixtures(1000, null).patches.get("braces-1000-everywhere")!.expect.ok; // false
 * ```
 */
export function adversarialFixtures(lineCount: number, cacheDir: CacheDir = defaultCacheDir()): FixtureGroup {
  return cachedGroup(cacheDir, `adversarial-${lineCount}`, () => rawAdversarialGroup(lineCount));
}

/** Chunks per file beyond the default limit (1000) need it raised; the families send up to 10,000. */
const FAMILY_LIMITS: Partial<Limits> = { maxChunksPerFile: 100_000 };

function rawFamilyGroup(family: Family, lineCount: number, seed: number): RawGroup {
  const input = family.generate(lineCount, seed);
  const name = `${family.name}-${lineCount}`;
  const expect: Expectation = input.expect.ok
    ? okExpectation(input.lines, input.oracle ?? input.chunks, input.expect.tier)
    : { ok: false, code: input.expect.code, failures: input.expect.failures };
  return {
    files: [{ name, lines: input.lines }],
    patches: [{ name, file: name, chunks: input.chunks, expect, ...(input.chunks.length > 1000 ? { limits: FAMILY_LIMITS } : {}) }],
  };
}

/**
 * One adversarial family (bench/families.ts) at `lineCount` lines: a file
 * and a patch both named `<family>-<lineCount>`.
 *
 * @example
 * ```ts
 * familyFixtures(FAMILIES[0]!, 5000, 42, null).patches.get("anchors-5000")!.expect.ok; // false
 * ```
 */
export function familyFixtures(family: Family, lineCount: number, seed: number, cacheDir: CacheDir = defaultCacheDir()): FixtureGroup {
  return cachedGroup(cacheDir, `family-${family.name}-${lineCount}-s${seed}`, () => rawFamilyGroup(family, lineCount, seed));
}
