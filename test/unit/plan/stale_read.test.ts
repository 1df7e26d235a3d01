/**
 * A stale read that still applies (issue 29.3): `expectedSha256` is not the
 * current file's, but every chunk locates uniquely and exactly in the
 * current text — the failure carries `currentSha256` and the one-call path,
 * with what changed when the caller's version is known. Never applied.
 */
import { describe, expect, test } from "bun:test";
import { parsePatch } from "../../../lib/patch/parse.ts";
import { planPatch } from "../../../lib/plan/plan.ts";
import { sha256Hex } from "../../../lib/text/sha256.ts";
import type { FileSnapshot, PatchFailure, PlanOptions, Snapshots } from "../../../lib/types.ts";

const enc = new TextEncoder();
const P = (...lines: string[]): string => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");
const lines = (n: number, f: (i: number) => string = (i) => `line ${i}`): string => Array.from({ length: n }, (_, i) => f(i + 1)).join("\n") + "\n";

function snap(path: string, content: string): FileSnapshot {
  const bytes = enc.encode(content);
  return { path, kind: "file", bytes, sha256: sha256Hex(bytes), size: bytes.length, mode: 0o640, nlink: 1 };
}

function failureOf(text: string, path: string, content: string, options: PlanOptions): PatchFailure {
  const parsed = parsePatch(text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const snapshots: Snapshots = new Map([[path, snap(path, content)]]);
  const r = planPatch(parsed.patch, snapshots, options);
  if (r.ok) throw new Error("planned: a stale read must never apply");
  expect(r.errors).toHaveLength(1);
  return r.errors[0]!;
}

const OLD = lines(30);
const NOW = OLD.replace("line 20\n", "line 20 changed by someone\nline 20b\n");
const PATCH = P("*** Update File: app.txt", "@@", " line 4", "-line 5", "+line five", " line 6", "@@", " line 27", "+line 27b");
const old = sha256Hex(enc.encode(OLD));
const now = sha256Hex(enc.encode(NOW));

describe("precondition_failed whose chunks still apply to the current text", () => {
  test("the caller's version known: currentSha256, the changed lines as a bounded diff, the one-call path", () => {
    const e = failureOf(PATCH, "app.txt", NOW, { expectedSha256: { "app.txt": old }, contentOf: (sha) => (sha === old ? enc.encode(OLD) : undefined) });
    expect(e).toMatchObject({ code: "precondition_failed", path: "app.txt", expectedSha256: old, actualSha256: now, currentSha256: now });
    expect(e.message).toStartWith("precondition_failed: app.txt: the file changed since your read at lines 20–21:");
    expect(e.message).toContain("Your chunks still apply to its current text, each exactly and in one place only (chunk 1 at lines 4–6, chunk 2 at line 28).");
    expect(e.message).toContain("  @@ -19,3 +19,4 @@\n   line 19\n  -line 20\n  +line 20 changed by someone\n  +line 20b\n   line 21");
    expect(e.message).toContain(`Next step: to apply your chunks to the current text, send the same patch again with this SHA-256 (pass expectedSha256 {"app.txt": "${now}"}); or read lines 20–21 of app.txt again to see what changed first. Nothing was applied.`);
    expect(e.hints).toEqual([
      { kind: "expectedSha256", path: "app.txt", sha256: now, says: `pass expectedSha256 {"app.txt": "${now}"}` },
      { kind: "read", path: "app.txt", startLine: 20, endLine: 21, says: "read lines 20–21 of app.txt again" },
    ]);
  });

  test("the caller's version not known: the lines the chunks touch instead", () => {
    for (const contentOf of [undefined, () => enc.encode("not that version\n")]) {
      const e = failureOf(PATCH, "app.txt", NOW, { expectedSha256: { "app.txt": old }, ...(contentOf ? { contentOf } : {}) });
      expect(e.currentSha256).toBe(now);
      expect(e.message).toContain("the file changed since your read (where is not known here: this client did not keep the version you read)");
      expect(e.message).not.toContain("What changed");
      expect(e.message).toContain("or read lines 4–28 of app.txt again (the lines your chunks touch) to check them first.");
    }
  });

  test("the diff of a large change stays within the excerpt's bounds", () => {
    const big = lines(2000);
    const changed = lines(2000, (i) => (i > 100 && i <= 1900 ? `rewritten ${i}` : `line ${i}`));
    const patch = P("*** Update File: big.txt", "@@", " line 1", "-line 2", "+line two");
    const e = failureOf(patch, "big.txt", changed, { expectedSha256: { "big.txt": sha256Hex(enc.encode(big)) }, contentOf: () => enc.encode(big) });
    expect(e.currentSha256).toBeDefined();
    expect(e.message).toMatch(/… \(\d+ more lines\)/);
    expect(e.message.length).toBeLessThan(6000);
  });

  // Not every chunk exactly and uniquely: the plain failure, no currentSha256.
  const plain: [string, string][] = [
    ["a chunk that no longer matches", P("*** Update File: app.txt", "@@", "-line 20", "+line twenty")],
    ["a chunk that matches only ignoring whitespace", P("*** Update File: app.txt", "@@", "-line 5   ", "+line five")],
    ["a chunk that matches in two places", P("*** Update File: app.txt", "@@", "-line 20b", "+x")],
  ];
  for (const [name, patch] of plain) {
    test(`${name}: the plain stale-read failure`, () => {
      const twice = NOW.replace("line 30\n", "line 30\nline 20b\n");
      const e = failureOf(patch, "app.txt", twice, { expectedSha256: { "app.txt": old }, contentOf: () => enc.encode(OLD) });
      expect(e.code).toBe("precondition_failed");
      expect(e.currentSha256).toBeUndefined();
      expect(e.message).toContain("the file changed since that version was read");
    });
  }
});
