/**
 * The scenario suite's loader and in-memory applier (SPEC §10).
 *
 * A scenario is a directory `test/scenarios/NNN_rule_name/` holding:
 * - `input/`: the root's files before the patch (byte-exact; absent for pure Add cases);
 * - `patch.txt`: the patch exactly as a model would send it (byte-exact);
 * - exactly one of `expected/` (the whole root after the patch, byte-exact) or
 *   `expected_failure.json` (`{ "errors": ExpectedFailure[] }`, in order, count exact);
 * - optional `options.json` (a {@linkcode PlanOptions}; its `limits` also go to `parsePatch`),
 *   `expected_warnings.json` (warning codes that must be present: set inclusion),
 *   `setup.json` ({@linkcode ScenarioSetup}: modes and symlinks the files cannot carry),
 *   `README.md` (the rule under test and its §).
 *
 * Directories and files whose names start with `_` or `.` are not scenarios
 * (`_generate.ts` writes the fixtures; they are committed, never generated at
 * test time). Only {@linkcode loadScenarios} does I/O: everything else here is
 * pure, so the end-to-end runner can load the same scenarios, materialise
 * `input/` + `setup.json` under a real root, run `applyPatch` through a real
 * shell and compare the root with the same `expected/` tree.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type {
  DifferenceKind,
  FailureCode,
  FileSnapshot,
  Patch,
  PatchFailure,
  Plan,
  PlanOptions,
  Snapshots,
  WarningCode,
} from "../../lib/types.ts";

/** A file tree: root-relative `/`-separated path → exact bytes. Directories are implicit. */
export type Tree = Map<string, Uint8Array>;

/**
 * One expected failure. Every listed field must match the actual failure at
 * the same position; unlisted fields are not checked. Special keys:
 * - `candidates`: the file line numbers of `failure.candidates` in order;
 * - `closestStartLine` / `closestDifference`: `failure.closest.startLine` / `.difference`;
 * - `messageIncludes`: substrings of `failure.message`, compared case-insensitively.
 * Any other key (e.g. `expectedSha256`, `limit`) is compared by deep equality
 * with the failure's field of the same name.
 */
export interface ExpectedFailure {
  code: FailureCode;
  path?: string;
  hunk?: number;
  line?: number;
  patchLine?: number;
  candidates?: number[];
  alreadyAppliedAt?: number;
  closestStartLine?: number;
  closestDifference?: DifferenceKind;
  messageIncludes?: string[];
  [field: string]: unknown;
}

/**
 * What the files of `input/` cannot carry. `modes`: octal permission strings
 * (`"755"`) for input files (default 644); a runner over a real shell sets them
 * and checks that updated files keep them. `symlinks`: link path → target, both
 * root-relative; the link does not exist in `input/`.
 */
export interface ScenarioSetup {
  modes?: Record<string, string>;
  symlinks?: Record<string, string>;
}

/** What a scenario expects: the whole root after the patch, or the failures. */
export type ScenarioExpectation =
  | { kind: "tree"; tree: Tree }
  | { kind: "failure"; errors: ExpectedFailure[] };

/** One loaded scenario. */
export interface Scenario {
  /** Directory name, e.g. `003_update_one_chunk`. */
  name: string;
  /** Absolute directory. */
  dir: string;
  /** `patch.txt` decoded as UTF-8 (byte-exact otherwise: CRLF, indentation kept). */
  patch: string;
  input: Tree;
  options: PlanOptions;
  setup: ScenarioSetup;
  expected: ScenarioExpectation;
  expectedWarnings: WarningCode[];
  /** `README.md`, when present. */
  readme?: string;
}

/** The default scenario directory (`test/scenarios`). */
// A file URL, not Bun's import.meta.dir: the runtime matrix loads this module under Node and Deno too.
export const SCENARIO_DIR: string = fileURLToPath(new URL("../scenarios", import.meta.url));

function isHidden(name: string): boolean {
  return name.startsWith("_") || name.startsWith(".");
}

/**
 * Read a directory into a {@linkcode Tree} (recursively, byte-exact). A
 * missing directory is an empty tree.
 *
 * @example
 * ```ts
 * const tree = readTree("test/scenarios/003_update_one_chunk/input");
 * tree.get("app.py"); // Uint8Array
 * ```
 */
export function readTree(dir: string): Tree {
  const tree: Tree = new Map();
  if (!existsSync(dir)) return tree;
  const walk = (current: string): void => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const full = join(current, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        tree.set(relative(dir, full).split(sep).join("/"), new Uint8Array(readFileSync(full)));
      } else {
        throw new Error(`${full}: only regular files belong in a scenario tree (use setup.json for symlinks)`);
      }
    }
  };
  walk(dir);
  return tree;
}

function readJson<T>(file: string, fallback: T): T {
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as T) : fallback;
}

/**
 * Load one scenario directory. Throws when the fixture itself is malformed
 * (no patch, both or neither of `expected/` and `expected_failure.json`).
 *
 * @example
 * ```ts
 * const s = loadScenario("test/scenarios/001_add_file");
 * s.expected.kind; // "tree"
 * ```
 */
export function loadScenario(dir: string): Scenario {
  const name = dir.split(sep).pop()!;
  const patchFile = join(dir, "patch.txt");
  if (!existsSync(patchFile)) throw new Error(`${name}: patch.txt is missing`);
  const hasTree = existsSync(join(dir, "expected"));
  const failureFile = join(dir, "expected_failure.json");
  const hasFailure = existsSync(failureFile);
  if (hasTree === hasFailure) {
    throw new Error(`${name}: needs exactly one of expected/ and expected_failure.json`);
  }
  let expected: ScenarioExpectation;
  if (hasTree) {
    expected = { kind: "tree", tree: readTree(join(dir, "expected")) };
  } else {
    const errors = readJson<{ errors: ExpectedFailure[] }>(failureFile, { errors: [] }).errors;
    if (!Array.isArray(errors) || errors.length === 0) {
      throw new Error(`${name}: expected_failure.json lists no errors`);
    }
    expected = { kind: "failure", errors };
  }
  const readmeFile = join(dir, "README.md");
  return {
    name,
    dir,
    patch: new TextDecoder("utf-8").decode(readFileSync(patchFile)),
    input: readTree(join(dir, "input")),
    options: readJson<PlanOptions>(join(dir, "options.json"), {}),
    setup: readJson<ScenarioSetup>(join(dir, "setup.json"), {}),
    expected,
    expectedWarnings: readJson<WarningCode[]>(join(dir, "expected_warnings.json"), []),
    readme: existsSync(readmeFile) ? readFileSync(readmeFile, "utf8") : undefined,
  };
}

/**
 * Load every scenario under `dir` (default {@linkcode SCENARIO_DIR}), sorted
 * by name; names starting with `_` or `.` are skipped.
 *
 * @example
 * ```ts
 * for (const s of loadScenarios()) console.log(s.name, s.expected.kind);
 * ```
 */
export function loadScenarios(dir: string = SCENARIO_DIR): Scenario[] {
  return readdirSync(dir)
    .filter((name) => !isHidden(name) && statSync(join(dir, name)).isDirectory())
    .sort()
    .map((name) => loadScenario(join(dir, name)));
}

/**
 * Lowercase hex SHA-256 of bytes.
 *
 * @example
 * ```ts
 * sha256Hex(new Uint8Array()); // "e3b0c442…"
 * ```
 */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Every root-relative path a parsed patch touches: each op's path and move
 * destination, in patch order, without repeats.
 *
 * @example
 * ```ts
 * patchPaths({ ops: [{ type: "update", path: "a", moveTo: "b", chunks: [], patchLine: 2 }] }); // ["a", "b"]
 * ```
 */
export function patchPaths(patch: Patch): string[] {
  const paths = new Set<string>();
  for (const op of patch.ops) {
    paths.add(op.path);
    if (op.type === "update" && op.moveTo !== undefined) paths.add(op.moveTo);
  }
  return [...paths];
}

function parentOf(path: string): string {
  const cut = path.lastIndexOf("/");
  return cut < 0 ? "" : path.slice(0, cut);
}

function directoriesOf(tree: Tree): Set<string> {
  const dirs = new Set<string>([""]);
  for (const path of tree.keys()) {
    for (let dir = parentOf(path); dir !== ""; dir = parentOf(dir)) dirs.add(dir);
  }
  return dirs;
}

/**
 * The snapshots `readSnapshots` would return for `paths` on a root holding
 * `tree` and `setup`: regular files (mode from setup, default 0o644, nlink 1),
 * directories implied by the tree, symlinks from setup, and missing paths
 * with `parentExists`.
 *
 * @example
 * ```ts
 * const snaps = buildSnapshots(new Map([["a.txt", bytes]]), ["a.txt", "new/b.txt"], {});
 * snaps.get("new/b.txt")?.parentExists; // false
 * ```
 */
export function buildSnapshots(tree: Tree, paths: readonly string[], setup: ScenarioSetup): Snapshots {
  const dirs = directoriesOf(tree);
  const snapshots = new Map<string, FileSnapshot>();
  for (const path of paths) {
    const bytes = tree.get(path);
    if (setup.symlinks?.[path] !== undefined) {
      snapshots.set(path, { path, kind: "symlink" });
    } else if (bytes !== undefined) {
      const mode = setup.modes?.[path];
      snapshots.set(path, {
        path,
        kind: "file",
        bytes,
        sha256: sha256Hex(bytes),
        size: bytes.length,
        mode: mode === undefined ? 0o644 : Number.parseInt(mode, 8),
        nlink: 1,
      });
    } else if (dirs.has(path)) {
      snapshots.set(path, { path, kind: "directory", mode: 0o755 });
    } else {
      snapshots.set(path, { path, kind: "missing", parentExists: dirs.has(parentOf(path)) });
    }
  }
  return snapshots;
}

function checkExpected(tree: Tree, path: string, expected: Plan["files"][number]["expected"]): void {
  const bytes = tree.get(path);
  if (expected.state === "missing") {
    if (bytes !== undefined) throw new Error(`plan expects ${path} missing, but it exists`);
  } else if (bytes === undefined) {
    throw new Error(`plan expects ${path} at sha256 ${expected.sha256}, but it is missing`);
  } else if (sha256Hex(bytes) !== expected.sha256) {
    throw new Error(`plan expects ${path} at sha256 ${expected.sha256}, but it is ${sha256Hex(bytes)}`);
  }
}

/**
 * Apply a plan to an in-memory tree, as commitRemote would on disk: every
 * file's expected state is checked first (like step 3 of SPEC §7) and each
 * `newSha256` against its `newBytes`; any mismatch throws, since a plan that
 * contradicts its own snapshots is a bug. Returns a new tree.
 *
 * @example
 * ```ts
 * const after = applyPlanInMemory(input, result.plan);
 * ```
 */
export function applyPlanInMemory(tree: Tree, plan: Plan): Tree {
  for (const file of plan.files) {
    checkExpected(tree, file.path, file.expected);
    if (file.op === "move") {
      if (file.moveTo === undefined) throw new Error(`move of ${file.path} has no moveTo`);
      checkExpected(tree, file.moveTo, file.expectedDestination ?? { state: "missing" });
    }
    if (file.op !== "delete") {
      if (file.newBytes === undefined) throw new Error(`${file.op} of ${file.path} has no newBytes`);
      if (file.newSha256 !== sha256Hex(file.newBytes)) {
        throw new Error(`${file.path}: newSha256 ${file.newSha256} is not the SHA-256 of newBytes`);
      }
    }
  }
  const next: Tree = new Map(tree);
  for (const file of plan.files) {
    switch (file.op) {
      case "add":
      case "update":
      case "replace":
        next.set(file.path, file.newBytes!);
        break;
      case "delete":
        next.delete(file.path);
        break;
      case "move":
        next.delete(file.path);
        next.set(file.moveTo!, file.newBytes!);
        break;
    }
  }
  return next;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Split text after each ending (CRLF, LF or lone CR), keeping the endings visible. */
function splitKeepingEndings(text: string): string[] {
  return text.match(/[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+$/g) ?? [];
}

function describeFileDifference(path: string, expected: Uint8Array, actual: Uint8Array): string {
  let offset = 0;
  while (offset < expected.length && offset < actual.length && expected[offset] === actual[offset]) offset++;
  const decoder = new TextDecoder("utf-8");
  const want = splitKeepingEndings(decoder.decode(expected));
  const got = splitKeepingEndings(decoder.decode(actual));
  let line = 0;
  while (line < want.length && line < got.length && want[line] === got[line]) line++;
  const from = Math.max(0, line - 2);
  const show = (lines: string[]): string =>
    lines.slice(from, line + 3).map((text, i) => `  ${from + i + 1}: ${JSON.stringify(text)}`).join("\n") ||
    "  (no lines)";
  return [
    `${path} differs at byte ${offset} (expected ${expected.length} bytes, got ${actual.length}), first at line ${line + 1}:`,
    "expected:",
    show(want),
    "actual:",
    show(got),
  ].join("\n");
}

/**
 * A readable description of how `actual` differs from `expected` (missing
 * and unexpected files, then the first differing file line by line with
 * endings shown), or `""` when the trees are byte-for-byte equal.
 *
 * @example
 * ```ts
 * const difference = describeTreeDifference(scenario.expected.tree, after);
 * if (difference !== "") throw new Error(difference);
 * ```
 */
export function describeTreeDifference(expected: Tree, actual: Tree): string {
  const missing = [...expected.keys()].filter((p) => !actual.has(p)).sort();
  const unexpected = [...actual.keys()].filter((p) => !expected.has(p)).sort();
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`missing files: ${missing.join(", ")}`);
  if (unexpected.length > 0) parts.push(`unexpected files: ${unexpected.join(", ")}`);
  for (const path of [...expected.keys()].sort()) {
    const got = actual.get(path);
    if (got !== undefined && !equalBytes(expected.get(path)!, got)) {
      parts.push(describeFileDifference(path, expected.get(path)!, got));
      break;
    }
  }
  return parts.join("\n");
}

/**
 * Project actual failures onto the fields the expectation lists, so that
 * `expect(projectFailures(actual, expected)).toEqual(expected)` checks exactly
 * those fields and shows a readable diff. Extra actual failures are kept
 * (code, path, message) so a count mismatch shows what came in addition.
 *
 * @example
 * ```ts
 * expect(projectFailures(result.errors, scenario.expected.errors)).toEqual(scenario.expected.errors);
 * ```
 */
export function projectFailures(
  actual: readonly PatchFailure[],
  expected: readonly ExpectedFailure[],
): unknown[] {
  return actual.map((failure, index) => {
    const want = expected[index];
    if (want === undefined) return { code: failure.code, path: failure.path, message: failure.message };
    const projection: Record<string, unknown> = {};
    const record = failure as unknown as Record<string, unknown>;
    for (const key of Object.keys(want)) {
      switch (key) {
        case "candidates":
          projection[key] = failure.candidates?.map((c) => c.line);
          break;
        case "closestStartLine":
          projection[key] = failure.closest?.startLine;
          break;
        case "closestDifference":
          projection[key] = failure.closest?.difference;
          break;
        case "messageIncludes":
          projection[key] = (want.messageIncludes ?? []).map((s) =>
            failure.message.toLowerCase().includes(s.toLowerCase()) ? s : `<not in message: ${failure.message}>`
          );
          break;
        default:
          projection[key] = record[key];
      }
    }
    return projection;
  });
}
