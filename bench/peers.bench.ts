/**
 * mitata benchmarks: ours against the in-process peers on the same file
 * bytes and patch text, each end to end from text to new bytes:
 * `ours` = parsePatch + planPatch (which also checks uniqueness, renders a
 * diff and hashes the result), `naive` = the Codex-style first-match
 * scanner, `diff` = the `diff` package's applyPatch on the converted
 * unified diff. Also the naive scanner on the near-miss adversarial input
 * that matches once, to show what the first-match scan costs there.
 *
 * Run alone: `bun bench/peers.bench.ts [--quick]`.
 *
 * @module
 */
import { oursApply, snapshotsOf } from "./ours.ts";
import { diffApply, naiveApply, toUnifiedDiff } from "./peers.ts";
import type { Registrar, Suite } from "./suite.ts";

/**
 * Register `ours|naive|diff code-N-c100` for the small and large files, and
 * `ours|naive braces-odd-N-nearmiss`.
 *
 * @example
 * ```ts
 * registerPeerBenches(loadSuite(FULL_SIZES), mitataRegistrar);
 * ```
 */
export function registerPeerBenches(suite: Suite, registrar: Registrar): void {
  for (const lines of [suite.sizes.small, suite.sizes.large]) {
    const fixture = suite.patch(`code-${lines}-c100`);
    const snapshots = snapshotsOf(fixture.file);
    const unified = toUnifiedDiff(new TextDecoder().decode(fixture.file.bytes), fixture.text);
    registrar.group(`peers, 100 chunks, ${lines} lines`, () => {
      registrar.summary(() => {
        registrar.bench(`ours ${fixture.name}`, () => oursApply(fixture.text, snapshots));
        registrar.bench(`naive ${fixture.name}`, () => naiveApply(fixture.file.bytes, fixture.text));
        registrar.bench(`diff ${fixture.name}`, () => diffApply(fixture.file.bytes, unified));
      });
    });
  }
  const nearMiss = suite.patch(`braces-odd-${suite.sizes.adversarial}-nearmiss`);
  const snapshots = snapshotsOf(nearMiss.file);
  registrar.group(`peers, adversarial near miss`, () => {
    registrar.summary(() => {
      registrar.bench(`ours ${nearMiss.name}`, () => oursApply(nearMiss.text, snapshots));
      registrar.bench(`naive ${nearMiss.name}`, () => naiveApply(nearMiss.file.bytes, nearMiss.text));
    });
  });
}

if (import.meta.main) {
  const { run } = await import("mitata");
  const { FULL_SIZES, QUICK_SIZES, loadSuite, mitataRegistrar } = await import("./suite.ts");
  const suite = loadSuite(process.argv.includes("--quick") ? QUICK_SIZES : FULL_SIZES);
  registerPeerBenches(suite, mitataRegistrar);
  await run();
}
