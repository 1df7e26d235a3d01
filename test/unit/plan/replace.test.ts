/**
 * Planning a whole-file replace (issue 29 item 2): the file must exist,
 * `expectedSha256` is honoured, the new lines take the old file's endings,
 * BOM and final-newline state, and the plan says `replace`.
 */
import { describe, expect, test } from "bun:test";
import { parsePatch } from "../../../lib/patch/parse.ts";
import { planPatch } from "../../../lib/plan/plan.ts";
import { sha256Hex } from "../../../lib/text/sha256.ts";
import type { FileSnapshot, PlanOptions, PlanResult, Snapshots } from "../../../lib/types.ts";

const enc = new TextEncoder();
const P = (...lines: string[]): string => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");

function snap(path: string, content: string | Uint8Array | null): FileSnapshot {
  if (content === null) return { path, kind: "missing", parentExists: true };
  const bytes = typeof content === "string" ? enc.encode(content) : content;
  return { path, kind: "file", bytes, sha256: sha256Hex(bytes), size: bytes.length, mode: 0o640, nlink: 1 };
}

function plan(text: string, files: Record<string, string | Uint8Array | null>, options?: PlanOptions): PlanResult {
  const parsed = parsePatch(text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const snapshots: Snapshots = new Map(Object.entries(files).map(([p, c]) => [p, snap(p, c)]));
  return planPatch(parsed.patch, snapshots, options);
}

const decoder = new TextDecoder();

describe("planPatch: replace", () => {
  const forms: [string, string][] = [
    ["*** Replace File:", P("*** Replace File: a.ini", "+x = 2", "+y = 3")],
    ["Delete + Add", P("*** Delete File: a.ini", "*** Add File: a.ini", "+x = 2", "+y = 3")],
  ];
  const contents: [string, string, string][] = [
    ["LF file", "x = 1\n", "x = 2\ny = 3\n"],
    ["CRLF file keeps CRLF", "x = 1\r\nz = 0\r\n", "x = 2\r\ny = 3\r\n"],
    ["BOM kept", "\ufeffx = 1\n", "\ufeffx = 2\ny = 3\n"],
    ["no final newline stays none", "x = 1", "x = 2\ny = 3"],
    ["empty file gets a final newline", "", "x = 2\ny = 3\n"],
  ];
  for (const [form, text] of forms) {
    for (const [name, before, after] of contents) {
      test(`${form}: ${name}`, () => {
        const r = plan(text, { "a.ini": before });
        if (!r.ok) throw new Error(JSON.stringify(r.errors));
        expect(r.plan.files).toHaveLength(1);
        const f = r.plan.files[0]!;
        expect(f.op).toBe("replace");
        expect(f.expected).toEqual({ state: "sha256", sha256: sha256Hex(enc.encode(before)) });
        expect([...f.newBytes!]).toEqual([...enc.encode(after)]);
        expect(f.newSha256).toBe(sha256Hex(f.newBytes!));
        expect(f.diff).toContain("--- a/a.ini\n+++ b/a.ini\n");
        expect(f.diff).toContain("+x = 2\n+y = 3\n");
      });
    }
  }

  test("a replace with no lines empties the file", () => {
    const r = plan(P("*** Replace File: a.ini"), { "a.ini": "x\n" });
    expect(r.ok && r.plan.files[0]!.newBytes!.length).toBe(0);
  });

  test("old content that is not text is replaced by the new lines as an Add writes them", () => {
    const r = plan(P("*** Replace File: a.bin", "+text"), { "a.bin": new Uint8Array([0xff, 0xfe, 0x00, 0x0d]) });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(decoder.decode(r.plan.files[0]!.newBytes!)).toBe("text\n");
    expect(r.plan.files[0]!.diff).toContain("4 bytes that are not text");
  });

  test("expectedSha256 of the file is honoured: right one plans, wrong one is precondition_failed", () => {
    const before = "x = 1\n";
    const good = plan(P("*** Replace File: a.ini", "+x = 2"), { "a.ini": before }, { expectedSha256: { "a.ini": sha256Hex(enc.encode(before)) } });
    expect(good.ok).toBe(true);
    const bad = plan(P("*** Delete File: a.ini", "*** Add File: a.ini", "+x = 2"), { "a.ini": before }, { expectedSha256: { "a.ini": "0".repeat(64) } });
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.errors[0]).toMatchObject({ code: "precondition_failed", path: "a.ini", patchLine: 2, actualSha256: sha256Hex(enc.encode(before)) });
  });

  test("a missing file is not_found, and the message says to use Add", () => {
    for (const text of [P("*** Replace File: new.ini", "+x"), P("*** Delete File: new.ini", "*** Add File: new.ini", "+x")]) {
      const r = plan(text, { "new.ini": null });
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expect(r.errors[0]).toMatchObject({ code: "not_found", path: "new.ini", patchLine: 2, actualState: "missing" });
      expect(r.errors[0]!.message).toContain(`To create it, use "*** Add File: new.ini"`);
    }
    const pair = plan(P("*** Delete File: new.ini", "*** Add File: new.ini", "+x"), { "new.ini": null });
    expect(!pair.ok && pair.errors[0]!.message).toContain("*** Delete File: new.ini followed by *** Add File: new.ini (a whole-file replace)");
  });

  test("a directory or symlink is refused as for an Update", () => {
    const snapshots: Snapshots = new Map([
      ["d", { path: "d", kind: "directory", mode: 0o755 }],
      ["l", { path: "l", kind: "symlink" }],
    ]);
    const parsed = parsePatch(P("*** Replace File: d", "+x", "*** Replace File: l", "+y"));
    if (!parsed.ok) throw new Error("parse");
    const r = planPatch(parsed.patch, snapshots);
    expect(!r.ok && r.errors.map((e) => e.code)).toEqual(["not_regular_file", "symlink_rejected"]);
  });

  test("requireShaForDelete covers a replace (it throws the old content away)", () => {
    const r = plan(P("*** Replace File: a.ini", "+x"), { "a.ini": "old\n" }, { requireShaForDelete: true });
    expect(!r.ok && r.errors[0]).toMatchObject({ code: "precondition_failed", path: "a.ini", expectedSha256: null });
    const ok = plan(P("*** Replace File: a.ini", "+x"), { "a.ini": "old\n" }, { requireShaForDelete: true, expectedSha256: { "a.ini": sha256Hex(enc.encode("old\n")) } });
    expect(ok.ok).toBe(true);
  });

  test("maxFileBytes bounds the new content", () => {
    const r = plan(P("*** Replace File: a.ini", "+" + "x".repeat(100)), { "a.ini": "x\n" }, { limits: { maxFileBytes: 50 } });
    expect(!r.ok && r.errors[0]).toMatchObject({ code: "limit_exceeded", path: "a.ini" });
  });
});
