/**
 * The adversarial families of SPEC §11.1 (issue 16): inputs where the work
 * could grow with the file times the patch, each at a size `n` and at `2n`
 * with the patch doubled too (so the doubling ratio checks "near-linear in
 * file AND patch together"). Every family is a generator of a file's lines
 * and of chunks, with what planning must produce.
 *
 * - `anchors`: `@@` anchors found nowhere (a typo in a function header),
 *   one chunk per 1250 lines; every chunk fails `anchor_not_found`.
 * - `lowentropy`: a file drawn from 8 distinct lines, one unique 7-line chunk
 *   per 200 lines: every chunk line is frequent, so no line narrows the search.
 * - `failing`: one failing chunk (a context line changed) per 100 lines.
 * - `sigchain`: 240-character lines alike at every sampled character, eight
 *   keys of the same signature matched only at tier 4 (Unicode dashes).
 * - `alternating`: two alternating lines; one 100-line chunk per 2000 lines
 *   that nearly matches at every second position and fails on its last line.
 * - `crowded`: lines alike at every sampled character (`signatureSamples`), one
 *   11-line chunk per 200 lines: thousands of keys share one signature.
 * - `everywhere`: a file of `}`; one all-`}` chunk per 2000 lines, each of a
 *   different length, each matching everywhere (`ambiguous_hunk`).
 * - `tier2`, `tier3`, `tier4`: 100 chunks on real-looking code matching only
 *   with trailing whitespace ignored, re-indented, or with an odd space
 *   (NBSP) folded — the fuzzy tiers at the full code size.
 *
 * @module
 */
import { signatureSamples } from "../lib/match/tier_keyer.ts";
import {
  type BodyLine,
  type ChunkSpec,
  generateCodeLines,
  LineIndex,
  oldSide,
  Prng,
  uniqueChunks,
} from "./gen.ts";

/** What a family's patch must plan to. */
export type FamilyExpectation =
  | { ok: true; tier: number }
  | { ok: false; code: "anchor_not_found" | "context_mismatch" | "ambiguous_hunk"; failures: number };

/** One generated family input. */
export interface FamilyInput {
  lines: string[];
  chunks: ChunkSpec[];
  /** The chunks as the result must read (when the patch's differ: re-indented `+` lines); default `chunks`. */
  oracle?: ChunkSpec[];
  expect: FamilyExpectation;
}

/** A family: its name, what it exercises, and its generator at `n` lines. */
export interface Family {
  name: string;
  what: string;
  /** File lines at the base size (the bench doubles it). */
  baseLines: number;
  generate(n: number, seed: number): FamilyInput;
}

function typo(line: string, rng: Prng): string {
  // Swap two adjacent letters of the longest word: the kind of slip a model makes.
  const words = [...line.matchAll(/[A-Za-z]{5,}/g)];
  if (words.length === 0) return line + "X";
  const word = words.reduce((a, b) => (b[0].length > a[0].length ? b : a));
  const at = word.index! + 1 + rng.int(word[0].length - 3);
  return line.slice(0, at) + line[at + 1] + line[at] + line.slice(at + 2);
}

/** The nearest function header above `start` (the anchor a model would give). */
function headerAbove(lines: readonly string[], start: number): string | undefined {
  for (let i = start; i >= 0 && i > start - 60; i--) if (/function /.test(lines[i]!)) return lines[i];
  return undefined;
}

const anchors: Family = {
  name: "anchors",
  what: "@@ anchors found nowhere (a typo), one chunk per 1250 lines",
  baseLines: 250_000,
  generate(n, seed) {
    const lines = generateCodeLines(n, seed);
    const present = new Set(lines.map((l) => l.trim()));
    const rng = new Prng(seed + 1);
    const chunks = uniqueChunks(lines, Math.max(1, Math.floor(n / 1250)), seed + 2, new LineIndex(lines, (s) => s)).map((c) => {
      let anchor = typo(headerAbove(lines, c.start) ?? lines[c.start]!, rng);
      while (present.has(anchor.trim())) anchor += "X";
      return { ...c, anchor };
    });
    return { lines, chunks, expect: { ok: false, code: "anchor_not_found", failures: chunks.length } };
  },
};

const LOW_ENTROPY_LINES = [
  "    x = step(x);",
  "    y = step(y);",
  "    if (x > y) swap();",
  "    count++;",
  "    emit(x, y);",
  "    }",
  "    {",
  "",
];

const lowentropy: Family = {
  name: "lowentropy",
  what: "a file of 8 distinct lines, one unique 7-line chunk per 200 lines (every chunk line frequent)",
  baseLines: 200_000,
  generate(n, seed) {
    const rng = new Prng(seed);
    const lines = Array.from({ length: n }, () => rng.pick(LOW_ENTROPY_LINES));
    // Windows of 7 lines by text: LineIndex would walk n / 8 occurrences per check.
    const windows = new Map<string, number>();
    for (let p = 0; p + 7 <= n; p++) {
      const key = lines.slice(p, p + 7).join("\n");
      windows.set(key, (windows.get(key) ?? 0) + 1);
    }
    const count = Math.floor(n / 200);
    const chunks: ChunkSpec[] = [];
    for (let k = 0; k < count; k++) {
      for (let attempt = 0; ; attempt++) {
        const p = k * 200 + rng.int(190);
        const old = lines.slice(p, p + 7);
        if (old[3] === "" || old[6] === "" || windows.get(old.join("\n")) !== 1) {
          if (attempt > 1000) throw new Error("lowentropy: no unique chunk");
          continue;
        }
        const body: BodyLine[] = [
          ...old.slice(0, 3).map((text) => ({ marker: " " as const, text })),
          { marker: "-", text: old[3]! },
          { marker: "+", text: `    changed(${k});` },
          ...old.slice(4).map((text) => ({ marker: " " as const, text })),
        ];
        chunks.push({ start: p, body });
        break;
      }
    }
    return { lines, chunks, expect: { ok: true, tier: 1 } };
  },
};

const failing: Family = {
  name: "failing",
  what: "one failing chunk (a context line changed) per 100 lines",
  baseLines: 500_000,
  generate(n, seed) {
    const lines = generateCodeLines(n, seed);
    const trim = new LineIndex(lines, (s) => s.trim());
    const chunks = uniqueChunks(lines, Math.floor(n / 100), seed + 5, new LineIndex(lines, (s) => s)).map((c, k) => {
      const body = c.body.slice();
      body[1] = { marker: " ", text: `${body[1]!.text} /* stale ${k} */` };
      return { start: c.start, body };
    });
    for (const c of chunks) if (trim.count(oldSide(c), 1) !== 0) throw new Error("failing: a chunk matches");
    return { lines, chunks, expect: { ok: false, code: "context_mismatch", failures: chunks.length } };
  },
};

/**
 * `length` characters alike at every position the matcher's signature
 * samples (first, middle, three-quarter, last): only `tail`, near the end,
 * differs.
 */
function chainLine(tail: string, length: number): string {
  const head = "const table = lookup(" + "a".repeat(length - 40);
  return (head + tail.padEnd(18, "_")).slice(0, length - 1) + ";";
}

const sigchain: Family = {
  name: "sigchain",
  what: "240-char lines alike at every sampled character; 8 keys of one signature matched at tier 4",
  baseLines: 200_000,
  generate(n, seed) {
    const rng = new Prng(seed);
    // One signature per chunk (its own line length): every chain holds
    // exactly the 8 keys of one chunk, and n / count lines share it.
    const count = Math.max(1, Math.floor(n / 25_000));
    const lines = Array.from({ length: n }, (_, i) => chainLine(`v${i}_${rng.int(1000)}`, 240 + (i % count)));
    const chunks: ChunkSpec[] = [];
    for (let k = 0; k < count; k++) {
      const start = Math.floor(((k + 0.5) * n) / count);
      // The file has "-" where the chunk has an en dash: tier 4 folds it.
      const texts = Array.from({ length: 8 }, (_, j) => chainLine(`k${k}-${j}`, 240 + k));
      for (let j = 0; j < 8; j++) lines[start + j] = texts[j]!;
      const body: BodyLine[] = texts.map((t) => ({ marker: " ", text: t.replace("-", "\u2013") }));
      body[7] = { marker: "-", text: body[7]!.text };
      body.push({ marker: "+", text: `const changed${k} = true;` });
      chunks.push({ start, body });
    }
    return { lines, chunks, expect: { ok: true, tier: 4 } };
  },
};

const alternating: Family = {
  name: "alternating",
  what: "two alternating lines; one 100-line near-miss chunk per 2000 lines, failing on its last line",
  baseLines: 200_000,
  generate(n) {
    const a = "    value = first(value);";
    const b = "    value = second(value);";
    const lines = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? a : b));
    const count = Math.max(1, Math.floor(n / 2000));
    const chunks: ChunkSpec[] = [];
    for (let k = 0; k < count; k++) {
      // Different lengths, so no two chunks are the same pattern.
      const length = 99 + 2 * k;
      const body: BodyLine[] = Array.from({ length }, (_, i) => ({ marker: " " as const, text: i % 2 === 0 ? a : b }));
      body.push({ marker: "-", text: a });
      body.push({ marker: "+", text: "    value = third(value);" });
      chunks.push({ start: 0, body });
    }
    return { lines, chunks, expect: { ok: false, code: "context_mismatch", failures: count } };
  },
};

/**
 * Twelve characters alike at every position the matcher's signature samples
 * (`signatureSamples`), the digits of `i` everywhere else: keys like these
 * all share one signature.
 */
export function crowdedKey(i: number): string {
  const sampled = new Set(signatureSamples(12));
  const digits = String(i).padStart(8, "0");
  let out = "";
  let d = 0;
  for (let p = 0; p < 12; p++) out += sampled.has(p) ? "KMNZ"[out.length % 4] : (digits[d++] ?? "X");
  return out;
}

const crowded: Family = {
  name: "crowded",
  what: "lines alike at every sampled character of the signature, one 11-line chunk per 200 lines",
  baseLines: 200_000,
  generate(n) {
    const lines = Array.from({ length: n }, (_, i) => crowdedKey(i));
    const chunks: ChunkSpec[] = [];
    for (let k = 0; k < Math.floor(n / 200); k++) {
      const start = k * 200 + 50;
      const body: BodyLine[] = lines.slice(start, start + 10).map((text) => ({ marker: " ", text }));
      body.push({ marker: "-", text: lines[start + 10]! });
      body.push({ marker: "+", text: `X${k}` });
      chunks.push({ start, body });
    }
    return { lines, chunks, expect: { ok: true, tier: 1 } };
  },
};

const everywhere: Family = {
  name: "everywhere",
  what: "a file of `}`; one all-`}` chunk of its own length per 2000 lines, each matching everywhere",
  baseLines: 200_000,
  generate(n) {
    const lines = new Array<string>(n).fill("}");
    const count = Math.max(1, Math.floor(n / 2000));
    const chunks: ChunkSpec[] = [];
    for (let k = 0; k < count; k++) {
      const body: BodyLine[] = Array.from({ length: 20 + k }, () => ({ marker: " " as const, text: "}" }));
      body.push({ marker: "-", text: "}" });
      body.push({ marker: "+", text: "};" });
      chunks.push({ start: 0, body });
    }
    return { lines, chunks, expect: { ok: false, code: "ambiguous_hunk", failures: count } };
  },
};

/**
 * A fuzzy-tier family on real-looking code: 100 unique chunks, each old line
 * (and with `inserts`, each `+` line) changed by `change`; each proved to
 * match nowhere below `tier` and once at it.
 */
function fuzzy(name: string, what: string, tier: 2 | 3 | 4, inserts: boolean, change: (line: string) => string): Family {
  return {
    name,
    what,
    baseLines: 500_000,
    generate(n, seed) {
      const lines = generateCodeLines(n, seed);
      const exact = new LineIndex(lines, (s) => s);
      const at = [exact, new LineIndex(lines, (s) => s.trimEnd()), new LineIndex(lines, (s) => s.trim())];
      const fold = (s: string) => s.trim().replace(/\u00a0/g, " ");
      const oracle = uniqueChunks(lines, 100, seed + 7, exact, [0, 1]);
      const chunks = oracle.map((c) => ({
        start: c.start,
        body: c.body.map((l) => ((l.marker === "+" && !inserts) || l.text.trim() === "" ? l : { marker: l.marker, text: change(l.text) })),
      }));
      const levels = [...at.slice(0, tier - 1)];
      for (const c of chunks) {
        const old = oldSide(c);
        if (levels.some((index) => index.count(old, 1) > 0)) throw new Error(`${name}: a chunk matches below tier ${tier}`);
        const target = tier === 4 ? old.map(fold) : old;
        if (tier < 4 && at[tier - 1]!.count(target, 2) !== 1) throw new Error(`${name}: a chunk is not unique at tier ${tier}`);
      }
      return { lines, chunks, oracle, expect: { ok: true, tier } };
    },
  };
}

const tier2 = fuzzy("tier2", "100 chunks with trailing whitespace added to their old lines (tier 2)", 2, false, (l) => l + "  ");
const tier3 = fuzzy("tier3", "100 chunks re-indented by two spaces (tier 3)", 3, true, (l) => "  " + l);
const tier4 = fuzzy("tier4", "100 chunks with one space of each old line an NBSP (tier 4)", 4, false, (l) => {
  const at = l.trimStart().indexOf(" ");
  if (at < 0) return l;
  const i = l.length - l.trimStart().length + at;
  return l.slice(0, i) + "\u00a0" + l.slice(i + 1);
});

/** Every family, in report order. */
export const FAMILIES: readonly Family[] = [anchors, lowentropy, failing, sigchain, alternating, crowded, everywhere, tier2, tier3, tier4];
