/**
 * Generators of hostile inputs for the pure core: patches (mutations of
 * the scenario patches, random bytes, huge lines, deep `@@` nesting,
 * adversarial repetition) and file contents (mutations of the scenario
 * files, CRLF / lone CR / BOM / invalid UTF-8 / no final newline, random
 * bytes, very long lines), plus the snapshots a patch's paths are given.
 *
 * @module
 */
import { sha256Hex } from "../../lib/text/sha256.ts";
import type { FileSnapshot, MatchingMode, Patch, PlanOptions, Snapshots } from "../../lib/types.ts";
import { loadScenarios } from "../support/scenarios.ts";
import type { Tree } from "../support/scenarios.ts";
import type { Rng } from "./prng.ts";

const TOKENS = [
  " ", " ", "+", "-", "@", "@@", "@@ ", "*", "***", "*** ", "\n", "\n", "\r", "\r\n", "\t", "<<", "'", '"', "EOF", "/", "..",
  ".", "\\", "\0", "\u0085", "\u2028", "\ufeff", "\ud83d", "\ude00", "😀", "é", "a", "z", "0", "—", "“", "\u00a0", "$(x)", "`x`",
  "*** Begin Patch", "*** End Patch", "*** End of File", "*** Add File: ", "*** Update File: ", "*** Delete File: ",
  "*** Move to: ", "@@ -1,2 +1,3 @@", "\\n", "\\t", "    ", "}", "{",
];

/** The material the generators mutate: every scenario's patch and files. */
export interface FuzzCorpus {
  /** Each scenario's patch with the tree it applies to. */
  scenarios: { patch: string; input: Tree }[];
  files: Uint8Array[];
}

/**
 * Load the scenario fixtures as fuzzing seeds.
 *
 * @example
 * ```ts
 * const corpus = loadFuzzCorpus();
 * corpus.patches.length; // one per scenario
 * ```
 */
export function loadFuzzCorpus(): FuzzCorpus {
  const scenarios = loadScenarios();
  const files: Uint8Array[] = [];
  for (const s of scenarios) for (const bytes of s.input.values()) files.push(bytes);
  return { scenarios: scenarios.map((s) => ({ patch: s.patch, input: s.input })), files };
}

/** One to four random edits of a text (characters, tokens, lines). */
export function mutateText(rng: Rng, text: string): string {
  const steps = rng.int(1, 4);
  for (let s = 0; s < steps; s++) {
    const at = rng.int(0, text.length);
    const lines = text.split("\n");
    const li = rng.int(0, Math.max(0, lines.length - 1));
    switch (rng.int(0, 9)) {
      case 0:
        text = text.slice(0, at) + text.slice(at + rng.int(1, 4));
        break;
      case 1:
        text = text.slice(0, at) + rng.pick(TOKENS) + text.slice(at);
        break;
      case 2:
        lines.splice(li, 1);
        text = lines.join("\n");
        break;
      case 3:
        lines.splice(li, 0, lines[li] ?? "");
        text = lines.join("\n");
        break;
      case 4: {
        const lj = rng.int(0, Math.max(0, lines.length - 1));
        [lines[li], lines[lj]] = [lines[lj] ?? "", lines[li] ?? ""];
        text = lines.join("\n");
        break;
      }
      case 5:
        text = text.slice(0, at);
        break;
      case 6:
        lines.splice(li, 0, rng.pick(TOKENS) + rng.pick(["a", "a/b", "", " x ", "/abs", "a/", "../x", ".sap-x", "-rf", "a\tb"]));
        text = lines.join("\n");
        break;
      case 7:
        lines[li] = rng.pick([" ", "+", "-", "@", "*", "\t", ""]) + (lines[li] ?? "").slice(1);
        text = lines.join("\n");
        break;
      case 8:
        text = text.replaceAll("\n", rng.pick(["\r\n", "\r", "\n\n"]));
        break;
      default:
        lines.splice(li, 0, ...Array.from({ length: rng.int(1, 6) }, () => `@@ ${rng.pick(["", "x", "class A", "def f():", "}"])}`));
        text = lines.join("\n");
    }
  }
  return text;
}

/** Random bytes, returned both raw and decoded (lossy) as a string. */
export function randomBytes(rng: Rng, max: number): Uint8Array {
  const n = rng.int(0, max);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = rng() < 0.3 ? rng.pick([10, 13, 32, 43, 45, 64, 42, 0xef, 0xbb, 0xbf, 0xc3, 0x80]) : rng.int(0, 255);
  return out;
}

/** A few hostile file contents: encodings, endings, long lines, repetition. */
export function hostileFile(rng: Rng, corpus: FuzzCorpus, big: boolean): Uint8Array {
  const enc = new TextEncoder();
  const base = corpus.files.length > 0 ? rng.pick(corpus.files) : enc.encode("a\nb\n");
  switch (rng.int(0, 9)) {
    case 0:
      return enc.encode(new TextDecoder().decode(base).replaceAll("\n", "\r\n"));
    case 1:
      return concat(new Uint8Array([0xef, 0xbb, 0xbf]), base);
    case 2: {
      const out = new Uint8Array(base);
      if (out.length > 0) out[rng.int(0, out.length - 1)] = rng.pick([0xff, 0xc3, 0x80, 0xed]);
      return out;
    }
    case 3:
      return base.subarray(0, Math.max(0, base.length - 1)); // usually: no final newline
    case 4:
      return randomBytes(rng, 300);
    case 5:
      return enc.encode(new TextDecoder().decode(base).replaceAll("\n", "\r"));
    case 6:
      return enc.encode("x".repeat(big ? rng.int(100_000, 2_000_000) : rng.int(1000, 20_000)) + (rng.chance(0.5) ? "\n" : ""));
    case 7:
      return enc.encode("}\n".repeat(big ? rng.int(50_000, 200_000) : rng.int(10, 2000)));
    case 8:
      return enc.encode(mutateText(rng, new TextDecoder().decode(base)));
    default:
      return base;
  }
}

/** The file as is (mostly), or with CRLF endings, a BOM, or no final newline. */
function reencode(rng: Rng, bytes: Uint8Array): Uint8Array {
  const text = new TextDecoder().decode(bytes);
  const enc = new TextEncoder();
  switch (rng.int(0, 9)) {
    case 0:
      return enc.encode(text.replaceAll("\n", "\r\n"));
    case 1:
      return concat(new Uint8Array([0xef, 0xbb, 0xbf]), bytes);
    case 2:
      return enc.encode(text.replace(/\n$/, ""));
    case 3:
      return enc.encode(text.replaceAll("\n", "  \n"));
    default:
      return bytes;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** A patch text of one of the hostile kinds (and, for a scenario's patch, the tree it was written for). */
export function hostilePatch(rng: Rng, corpus: FuzzCorpus, big: boolean): { kind: string; text: string; tree?: Tree } {
  const pick = rng.int(0, 99);
  if (pick < 60) {
    const scenario = rng.pick(corpus.scenarios);
    if (rng.chance(0.15)) return { kind: "scenario patch", text: scenario.patch, tree: scenario.input };
    return { kind: "mutated scenario patch", text: mutateText(rng, scenario.patch), tree: scenario.input };
  }
  if (pick < 70) return { kind: "random bytes", text: new TextDecoder().decode(randomBytes(rng, big ? 200_000 : 400)) };
  if (pick < 78) {
    let s = "";
    for (let i = rng.int(0, 60); i > 0; i--) s += rng.pick(TOKENS);
    return { kind: "random tokens", text: s };
  }
  if (pick < 86) {
    const depth = big ? rng.int(20_000, 100_000) : rng.int(10, 2000);
    const anchors = Array.from({ length: depth }, (_, i) => `@@ ${rng.chance(0.5) ? "}" : `level ${i % 7}`}`);
    return { kind: "deep @@ nesting", text: ["*** Begin Patch", "*** Update File: f.txt", ...anchors, " }", "-}", "+{", "*** End Patch"].join("\n") };
  }
  if (pick < 93) {
    const line = "y".repeat(big ? rng.int(200_000, 3_000_000) : rng.int(500, 20_000));
    return { kind: "huge line", text: ["*** Begin Patch", "*** Update File: f.txt", "@@", ` ${line}`, `-${line}`, `+${line}z`, "*** End Patch"].join("\n") };
  }
  if (pick < 96) {
    // keys alike in every character a sampled signature would look at
    const count = big ? rng.int(20_000, 60_000) : rng.int(10, 1500);
    const key = (i: number): string => {
      const d = String(i).padStart(8, "0");
      return "K" + d.slice(0, 5) + "M" + d.slice(5, 7) + "N" + d[7] + "Z";
    };
    return {
      kind: "signature-colliding anchors",
      text: ["*** Begin Patch", "*** Update File: f.txt", ...Array.from({ length: count }, (_, i) => `@@ ${key(i)}`), ` ${key(count)}`, `-${key(count + 1)}`, "+new", "*** End Patch"].join("\n"),
    };
  }
  const chunk = Array.from({ length: big ? 100 : 10 }, () => " }");
  return {
    kind: "adversarial repetition",
    text: ["*** Begin Patch", "*** Update File: f.txt", "@@", ...chunk, "-}", "+{", ...chunk, "*** End Patch"].join("\n"),
  };
}

/**
 * Snapshots for every path of a parsed patch: the scenario's own file
 * (mostly as is, sometimes re-encoded), hostile files, missing paths,
 * other kinds, refusals.
 */
export function hostileSnapshots(rng: Rng, corpus: FuzzCorpus, patch: Patch, big: boolean, tree?: Tree): Snapshots {
  const snaps = new Map<string, FileSnapshot>();
  for (const op of patch.ops) {
    const paths = op.type === "update" && op.moveTo !== undefined ? [op.path, op.moveTo] : [op.path];
    for (const path of paths) {
      const own = tree?.get(path);
      const roll = own !== undefined && rng.chance(0.8) ? -1 : rng.int(0, 99);
      if (roll < 65) {
        const bytes = roll === -1 ? reencode(rng, own!) : hostileFile(rng, corpus, big);
        snaps.set(path, { path, kind: "file", bytes, sha256: sha256Hex(bytes), size: bytes.length, mode: rng.pick([0o644, 0o755, 0o600]), nlink: rng.pick([1, 1, 2]) });
      } else if (roll < 85) {
        snaps.set(path, { path, kind: "missing", parentExists: rng.chance(0.7) });
      } else if (roll < 95) {
        snaps.set(path, { path, kind: rng.pick(["directory", "symlink", "other"] as const) });
      } else {
        snaps.set(path, {
          path,
          kind: "other",
          rejected: { code: rng.pick(["symlink_rejected", "permission_denied", "path_outside_root"] as const), message: `refused by the host: ${path}`, retryable: false, path },
        });
      }
    }
  }
  return snaps;
}

/** Random plan options, sometimes with a caller SHA (right or wrong) per path. */
export function hostileOptions(rng: Rng, snapshots: Snapshots): PlanOptions {
  const options: PlanOptions = {
    matching: rng.pick(["exact", "whitespace", "lenient", "lenient"] as MatchingMode[]),
    requireShaForDelete: rng.chance(0.2),
    createParents: rng.chance(0.8),
  };
  if (rng.chance(0.25)) {
    const expected: Record<string, string> = {};
    for (const [path, snap] of snapshots) {
      if (rng.chance(0.5)) expected[path] = rng.chance(0.5) && snap.sha256 ? snap.sha256 : rng.pick(["0".repeat(64), "not a sha", sha256Hex(new Uint8Array([1]))]);
    }
    options.expectedSha256 = expected;
  }
  if (rng.chance(0.05)) options.limits = { maxFiles: rng.int(1, 3), maxChunksPerFile: rng.int(1, 3), maxFileBytes: rng.int(10, 10_000) };
  return options;
}
