/**
 * Correctness checks run once per benchmark run (and by the smoke test):
 * a benchmark of a wrong answer means nothing. Ours and the peers are each
 * compared with the generator's oracle (the SHA-256 of the expected output,
 * computed from the chunks' known positions), and the peers' output with
 * ours byte for byte.
 *
 * @module
 */
import { sha256Hex } from "./fixtures.ts";
import type { PatchFixture } from "./fixtures.ts";
import { oursApply, oursPlan, parsedPatchOf, snapshotsOf } from "./ours.ts";
import { diffApply, naiveApply, toUnifiedDiff } from "./peers.ts";
import type { Suite } from "./suite.ts";

/** One check's verdict. */
export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
}

/** Patches with unique contexts in file order: every contender must agree. */
function uniqueContextPatches(suite: Suite): PatchFixture[] {
  return suite.patches().filter((p) => /-c\d+$/.test(p.name));
}

function describe(bytes: Uint8Array | null): string {
  return bytes === null ? "no output" : `sha256 ${sha256Hex(bytes).slice(0, 12)}…`;
}

/**
 * The peers against the oracle on every unique-context patch (no ours
 * needed: these hold before the core exists).
 *
 * @example
 * ```ts
 * checkPeers(loadSuite(TINY_SIZES, null)).every((c) => c.ok);
 * ```
 */
export function checkPeers(suite: Suite): CheckResult[] {
  const results: CheckResult[] = [];
  for (const p of uniqueContextPatches(suite)) {
    if (!p.expect.ok) continue;
    const naive = naiveApply(p.file.bytes, p.text);
    results.push({
      name: `naive ${p.name} = oracle`,
      ok: naive !== null && sha256Hex(naive) === p.expect.newSha256,
      detail: describe(naive),
    });
    const unified = toUnifiedDiff(new TextDecoder().decode(p.file.bytes), p.text);
    const viaDiff = diffApply(p.file.bytes, unified);
    results.push({
      name: `diff ${p.name} = oracle`,
      ok: viaDiff !== null && sha256Hex(viaDiff) === p.expect.newSha256,
      detail: describe(viaDiff),
    });
  }
  return results;
}

function sameBytes(a: Uint8Array | null, b: Uint8Array | null | undefined): boolean {
  return a !== null && b != null && Buffer.from(a).equals(Buffer.from(b));
}

/** Ours on one fixture against its expectation. */
function checkOne(p: PatchFixture): CheckResult {
  const name = `ours ${p.name} → ${p.expect.ok ? `ok at tier ${p.expect.tier}` : p.expect.code}`;
  const result = oursPlan(parsedPatchOf(p), snapshotsOf(p.file), p.limits);
  if (p.expect.ok) {
    if (!result.ok) return { name, ok: false, detail: result.errors.map((e) => e.code).join(", ") };
    const planned = result.plan.files[0];
    const bytes = planned?.newBytes;
    const shaOk = bytes !== undefined && sha256Hex(bytes) === p.expect.newSha256 &&
      planned?.newSha256 === p.expect.newSha256;
    const tiers = planned?.hunks.map((h) => h.tier) ?? [];
    const tierOk = tiers.length === p.chunks && tiers.every((t) => t === (p.expect.ok && p.expect.tier));
    return {
      name,
      ok: shaOk && tierOk,
      detail: `${shaOk ? "output = oracle" : "output differs from oracle"}, tiers ${[...new Set(tiers)].join("/")}`,
    };
  }
  if (result.ok) return { name, ok: false, detail: "planned successfully" };
  const code = p.expect.code;
  const error = result.errors.find((e) => e.code === code);
  if (!error) return { name, ok: false, detail: result.errors.map((e) => e.code).join(", ") };
  if (p.expect.failures !== undefined) {
    // Every chunk failed the same way: the folded failures count their chunks.
    const counted = result.errors.reduce((n, e) => n + (e.chunks?.count ?? 1), 0);
    const same = result.errors.every((e) => e.code === code);
    const bytes = result.errors.reduce((n, e) => n + e.message.length, 0);
    return {
      name: `${name} ×${p.expect.failures}`,
      ok: same && counted === p.expect.failures,
      detail: `${result.errors.length} failure(s) for ${counted} chunk(s), ${bytes} characters of message`,
    };
  }
  const line = p.expect.line;
  if (line !== undefined) {
    const closest = error.closest;
    const found = closest !== undefined && closest.startLine <= line && line <= closest.endLine;
    return {
      name: `${name}, closest region at line ${line}`,
      ok: found,
      detail: closest ? `closest ${closest.startLine}-${closest.endLine} (${closest.difference})` : "no closest region",
    };
  }
  return { name, ok: true, detail: `${result.errors.length} error(s)` };
}

/**
 * Ours against every fixture's expectation, and the peers' output against
 * ours byte for byte on the unique-context patches.
 *
 * @example
 * ```ts
 * checkOurs(loadSuite(TINY_SIZES, null)).filter((c) => !c.ok); // []
 * ```
 */
export function checkOurs(suite: Suite): CheckResult[] {
  const results = suite.patches().map(checkOne);
  for (const p of uniqueContextPatches(suite)) {
    const ours = oursApply(p.text, snapshotsOf(p.file));
    const naive = naiveApply(p.file.bytes, p.text);
    const viaDiff = diffApply(p.file.bytes, toUnifiedDiff(new TextDecoder().decode(p.file.bytes), p.text));
    results.push({ name: `naive ${p.name} = ours`, ok: sameBytes(naive, ours), detail: describe(ours) });
    results.push({ name: `diff ${p.name} = ours`, ok: sameBytes(viaDiff, ours), detail: describe(ours) });
  }
  return results;
}
