/**
 * planPatch and readWindow under an opt-in single-byte encoding (issue 29
 * item 6): byte-exact, hashes over the bytes, characters the encoding lacks
 * refused with their patch line, and the UTF-8 refusal naming the option.
 */
import { describe, expect, test } from "bun:test";
import { parsePatch } from "../../../lib/patch/parse.ts";
import { planPatch } from "../../../lib/plan/plan.ts";
import { readWindow } from "../../../lib/plan/read_window.ts";
import { sha256Hex } from "../../../lib/text/sha256.ts";
import type { PlanOptions, PlanResult, Snapshots } from "../../../lib/types.ts";

const P = (...lines: string[]): string => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");
const bytes = (...parts: (string | number[])[]): Uint8Array =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === "string" ? [...p].map((c) => c.charCodeAt(0)) : p)));

function plan(text: string, files: Record<string, Uint8Array | null>, options?: PlanOptions): PlanResult {
  const parsed = parsePatch(text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const snapshots: Snapshots = new Map(Object.entries(files).map(([path, b]) => [
    path,
    b === null ? { path, kind: "missing" as const, parentExists: true } : { path, kind: "file" as const, bytes: b, sha256: sha256Hex(b), size: b.length, mode: 0o644, nlink: 1 },
  ]));
  return planPatch(parsed.patch, snapshots, options);
}

// "name = Zoé\r\ncity = Köln\r\n" in latin-1, CRLF.
const LATIN = bytes("name = Zo", [0xe9], "\r\ncity = K", [0xf6], "ln\r\n");

describe("planPatch with encoding", () => {
  test("latin1, CRLF: the chunk matches the decoded text; kept bytes kept, new text in latin-1 with CRLF; SHAs over the bytes", () => {
    const r = plan(P("*** Update File: a.ini", "@@", " name = Zoé", "-city = Köln", "+city = Zürich"), { "a.ini": LATIN }, { encoding: "latin1", expectedSha256: { "a.ini": sha256Hex(LATIN) } });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const f = r.plan.files[0]!;
    const want = bytes("name = Zo", [0xe9], "\r\ncity = Z", [0xfc], "rich\r\n");
    expect([...f.newBytes!]).toEqual([...want]);
    expect(f.newSha256).toBe(sha256Hex(want));
    expect(f.expected).toEqual({ state: "sha256", sha256: sha256Hex(LATIN) });
    expect(f.diff).toContain("+city = Zürich");
  });

  test("windows-1252: € and curly quotes in new text, the undefined bytes 0x81 0x8D 0x8F 0x90 0x9D of an untouched line kept", () => {
    const file = bytes("odd = ", [0x81, 0x8d, 0x8f, 0x90, 0x9d], "\nprice = 5 EUR\n");
    const r = plan(P("*** Update File: p.ini", "@@", "-price = 5 EUR", "+price = 5 € “net”"), { "p.ini": file }, { encoding: "windows-1252" });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect([...r.plan.files[0]!.newBytes!]).toEqual([...bytes("odd = ", [0x81, 0x8d, 0x8f, 0x90, 0x9d], "\nprice = 5 ", [0x80], " ", [0x93], "net", [0x94], "\n")]);
  });

  test("Add and Replace write the encoding's bytes", () => {
    const r = plan(P("*** Add File: n.txt", "+café", "*** Replace File: a.ini", "+name = Zoë"), { "n.txt": null, "a.ini": LATIN }, { encoding: "latin1" });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect([...r.plan.files[0]!.newBytes!]).toEqual([...bytes("caf", [0xe9], "\n")]);
    expect([...r.plan.files[1]!.newBytes!]).toEqual([...bytes("name = Zo", [0xeb], "\r\n")]);
  });

  test("a + line with a character latin1 lacks: unencodable_character with path, patch line and character; nothing planned; windows-1252 named", () => {
    const r = plan(P("*** Update File: b.ini", "@@", "-x = 1", "+x = 2", "*** Update File: a.ini", "@@", "-city = Köln", "+city = Köln €"), { "a.ini": LATIN, "b.ini": bytes("x = 1\n") }, { encoding: "latin1" });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toHaveLength(1);
    const e = r.errors[0]!;
    expect(e).toMatchObject({
      code: "unencodable_character",
      path: "a.ini",
      patchLine: 9,
      retryable: false,
      unencodable: { character: "€", codePoint: 0x20ac, encoding: "latin1", column: 13 },
      hints: [{ kind: "option", option: "encoding", value: "windows-1252" }],
    });
    expect(e.message).toContain('patch line 9 "city = Köln €" has the character "€" (U+20AC) at column 13, which latin1 cannot represent');
    expect(e.message).toContain('send encoding: "windows-1252" instead');
  });

  test("an Add line with a character neither encoding has: no encoding suggested, the line to rewrite named", () => {
    const r = plan(P("*** Add File: n.txt", "+ok", "+Ελλάδα"), { "n.txt": null }, { encoding: "windows-1252" });
    expect(!r.ok && r.errors[0]).toMatchObject({ code: "unencodable_character", patchLine: 4, unencodable: { character: "Ε", column: 1 } });
    expect(!r.ok && r.errors[0]!.hints).toBeUndefined();
  });

  test("a Delete + Add replace counts the Add's lines for the patch line", () => {
    const r = plan(P("*** Delete File: a.ini", "*** Add File: a.ini", "+fine", "+€"), { "a.ini": LATIN }, { encoding: "latin1" });
    expect(!r.ok && r.errors[0]).toMatchObject({ code: "unencodable_character", patchLine: 5 });
  });

  test("without encoding a latin-1 file is invalid_utf8 naming the option (latin1; windows-1252 when it has 0x80–0x9F bytes)", () => {
    const r = plan(P("*** Update File: a.ini", "@@", "-x", "+y"), { "a.ini": LATIN });
    expect(!r.ok && r.errors[0]).toMatchObject({ code: "invalid_utf8", path: "a.ini", line: 1, patchLine: 2, hints: [{ kind: "option", option: "encoding", value: "latin1" }] });
    expect(!r.ok && r.errors[0]!.message).toContain('first bad byte 0xE9 at offset 9, line 1');
    expect(!r.ok && r.errors[0]!.message).toContain('send the request again with encoding: "latin1" (or "windows-1252")');
    const cp = plan(P("*** Update File: q.txt", "@@", "-x", "+y"), { "q.txt": bytes([0x93], "hi", [0x94], "\n") });
    expect(!cp.ok && cp.errors[0]!.hints?.[0]).toMatchObject({ option: "encoding", value: "windows-1252" });
  });

  test("an encoding name it does not know is a programmer error", () => {
    expect(() => plan(P("*** Add File: n.txt", "+x"), { "n.txt": null }, { encoding: "latin-1" as never })).toThrow(TypeError);
  });
});

describe("readWindow with encoding", () => {
  test("latin1: the text is decoded, the SHA-256s are of the bytes, eol CRLF", () => {
    const w = readWindow(LATIN, { encoding: "latin1", offset: 2, limit: 1 });
    if ("code" in w) throw new Error(w.message);
    expect(w.text).toBe("city = Köln\n");
    expect(w.fileSha256).toBe(sha256Hex(LATIN));
    expect(w.contentSha256).toBe(sha256Hex(LATIN.subarray(12)));
    expect(w.eol).toBe("crlf");
  });

  test("without: invalid_utf8 with the encoding hint", () => {
    const w = readWindow(LATIN, { path: "a.ini" });
    expect(w).toMatchObject({ code: "invalid_utf8", path: "a.ini", hints: [{ kind: "option", option: "encoding", value: "latin1" }] });
  });
});

describe("applyPatch with an encoding it does not know", () => {
  test("invalid_request naming the known ones, before anything is read", async () => {
    const { applyPatch } = await import("../../../lib/apply.ts");
    const { CountingShell } = await import("../../support/local_trees.ts");
    const { LocalShell } = await import("../../../lib/remote/local_shell.ts");
    const shell = new CountingShell(new LocalShell());
    const r = await applyPatch(shell, { root: "/nonexistent", patch: P("*** Add File: a", "+x"), encoding: "cp1252" as never });
    expect(r.ok).toBe(false);
    expect(r.errors?.[0]).toMatchObject({ code: "invalid_request" });
    expect(r.errors?.[0]?.message).toContain("encoding");
    expect(r.errors?.[0]?.message).toContain("windows-1252");
    expect(shell.count).toBe(0);
  });
});

describe("the other diagnoses read the file in the request's encoding too", () => {
  test("a stale expectedSha256 whose chunk still applies to the current latin-1 text carries currentSha256", () => {
    const r = plan(P("*** Update File: a.ini", "@@", "-city = Köln", "+city = Bonn"), { "a.ini": LATIN }, { encoding: "latin1", expectedSha256: { "a.ini": "1".repeat(64) } });
    expect(!r.ok && r.errors[0]).toMatchObject({ code: "precondition_failed", path: "a.ini", currentSha256: sha256Hex(LATIN) });
  });
});

describe("readWindow's byte budget under a single-byte encoding", () => {
  test("counts the UTF-8 of the text it returns, not the file's bytes (é is 1 byte in the file, 2 in text)", () => {
    // Four lines of 10 × é (10 bytes each in latin-1, 20 in UTF-8).
    const file = Uint8Array.from(Array.from({ length: 4 }, () => [...Array(10).fill(0xe9), 0x0a]).flat());
    const w = readWindow(file, { encoding: "latin1", maxBytes: 45 });
    if ("code" in w) throw new Error(w.message);
    expect(w.endLine).toBe(2);
    expect(new TextEncoder().encode(w.text).length).toBeLessThanOrEqual(45);
  });
});
