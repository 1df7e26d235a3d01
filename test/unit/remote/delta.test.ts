/**
 * lib/remote/delta.ts: which files get a delta upload and what is sent,
 * the `printf '%b'` escaping (round-tripped through the real printf of
 * dash, bash and BusyBox sh), the shape check of plan pieces, and the
 * manifest lines a delta upload produces.
 */
import { describe, expect, test } from "bun:test";
import {
  DELTA_INLINE_MAX,
  DELTA_MAX_SOURCE_PIECES,
  DELTA_MIN_FILE_BYTES,
  DELTA_MIN_SOURCE_PIECE,
  deltaUpload,
  escapeForPrintfB,
  piecesProblem,
} from "../../../lib/remote/delta.ts";
import { transactionInput, transactionLayout, uploadedBytes } from "../../../lib/remote/manifest.ts";
import { sha256Hex } from "../../../lib/text/sha256.ts";
import type { ContentPiece, PlannedFile } from "../../../lib/types.ts";
import { busyboxBinary, busyboxUserland } from "../../support/local_trees.ts";

/** An update of `length` new bytes made of `pieces` (source ranges of an imaginary old file). */
function update(length: number, pieces: ContentPiece[] | undefined, fill = 0x61): PlannedFile {
  const newBytes = new Uint8Array(length).fill(fill);
  return {
    op: "update",
    path: "f.txt",
    expected: { state: "sha256", sha256: "0".repeat(63) + "1" },
    newBytes,
    newSha256: sha256Hex(newBytes),
    ...(pieces ? { pieces } : {}),
    diff: "",
    hunks: [],
    warnings: [],
  };
}

/** Pieces alternating source ranges of `sourceLengths` with fresh stretches of `freshLength`. */
function alternating(sourceLengths: number[], freshLength: number): { pieces: ContentPiece[]; length: number } {
  const pieces: ContentPiece[] = [];
  let at = 0;
  let src = 0;
  sourceLengths.forEach((len, i) => {
    if (i > 0) {
      pieces.push({ fresh: [at, at + freshLength] });
      at += freshLength;
      src += 10; // the replaced old line
    }
    pieces.push({ source: [src, src + len] });
    src += len;
    at += len;
  });
  return { pieces, length: at };
}

describe("deltaUpload decides per file", () => {
  test("a 1-line change in a large file: two copied ranges and the line inline, nothing in the blob", () => {
    const { pieces, length } = alternating([500_000, 600_000], 30);
    const up = deltaUpload(update(length, pieces))!;
    expect(up.pieces.map((p) => p.kind)).toEqual(["source", "inline", "source"]);
    expect(up.pieces[0]).toEqual({ kind: "source", offset: 0, length: 500_000 });
    expect(up.pieces[2]).toEqual({ kind: "source", offset: 500_010, length: 600_000 });
    expect(up.blobBytes).toBe(0);
    expect(up.lineBytes).toBe("3\n".length + "S 0 500000\n".length + 2 + 30 + 1 + "S 500010 600000\n".length);
  });

  const wholeCases: { name: string; file: PlannedFile }[] = [
    { name: "no pieces", file: update(DELTA_MIN_FILE_BYTES * 2, undefined) },
    { name: `under ${DELTA_MIN_FILE_BYTES} bytes`, file: update(DELTA_MIN_FILE_BYTES - 1, [{ source: [0, DELTA_MIN_FILE_BYTES - 1] }]) },
    { name: "more than half new", file: (() => { const a = alternating([40_000, 40_000], 90_000); return update(a.length, a.pieces); })() },
    {
      name: "an add",
      file: { ...update(DELTA_MIN_FILE_BYTES * 2, undefined), op: "add", expected: { state: "missing" } },
    },
  ];
  for (const c of wholeCases) {
    test(`uploaded whole: ${c.name}`, () => {
      expect(deltaUpload(c.file)).toBeNull();
    });
  }

  test(`ranges shorter than ${DELTA_MIN_SOURCE_PIECE} bytes are uploaded, merged with the new stretches around them`, () => {
    const { pieces, length } = alternating([100_000, DELTA_MIN_SOURCE_PIECE - 1, 100_000], 20);
    const up = deltaUpload(update(length, pieces))!;
    expect(up.pieces.map((p) => p.kind)).toEqual(["source", "blob", "source"]); // 4135 bytes: over the inline limit
    const middle = up.pieces[1]!;
    expect(middle.kind === "blob" && middle.end - middle.start).toBe(20 + DELTA_MIN_SOURCE_PIECE - 1 + 20);
    expect(up.blobBytes).toBe(20 + DELTA_MIN_SOURCE_PIECE - 1 + 20);
  });

  test(`at most ${DELTA_MAX_SOURCE_PIECES} ranges are copied: the largest ones`, () => {
    const sizes = Array.from({ length: 200 }, (_, i) => 5000 + ((i * 7919) % 200) * 10);
    const { pieces, length } = alternating(sizes, 40);
    const up = deltaUpload(update(length, pieces))!;
    const copied = up.pieces.filter((p) => p.kind === "source").map((p) => (p.kind === "source" ? p.length : 0));
    expect(copied.length).toBe(DELTA_MAX_SOURCE_PIECES);
    const smallestCopied = Math.min(...copied);
    const dropped = [...sizes].sort((a, b) => b - a).slice(DELTA_MAX_SOURCE_PIECES);
    expect(Math.max(...dropped)).toBeLessThanOrEqual(smallestCopied);
    // the stretches between copied ranges are longer than the inline limit: they go in the blob
    expect(up.pieces.some((p) => p.kind === "blob")).toBe(true);
    expect(up.blobBytes).toBe(up.pieces.reduce((n, p) => n + (p.kind === "blob" ? p.end - p.start : 0), 0));
    // the output stretches cover the new content exactly, in order
    let at = 0;
    for (const p of up.pieces) {
      if (p.kind === "source") at += p.length;
      else {
        expect(p.start).toBe(at);
        at = p.end;
      }
    }
    expect(at).toBe(length);
  });

  test(`a new stretch is inline only while its escaped form is at most ${DELTA_INLINE_MAX} characters`, () => {
    const { pieces, length } = alternating([100_000, 100_000], 2000);
    const ascii = deltaUpload(update(length, pieces, 0x61))!;
    expect(ascii.pieces[1]!.kind).toBe("inline");
    const binary = deltaUpload(update(length, pieces, 0x01))!; // 2000 × "\0001" = 10000 characters
    expect(binary.pieces[1]!.kind).toBe("blob");
    expect(binary.blobBytes).toBe(2000);
  });
});

describe("escapeForPrintfB", () => {
  const cases: [string, number[], string][] = [
    ["printable ASCII stays", [...new TextEncoder().encode("a Z~!")], "a Z~!"],
    ["backslash doubled", [0x5c, 0x63], "\\\\c"],
    ["newline, CR, tab, NUL, DEL, high bytes as \\0ooo", [0x0a, 0x0d, 0x09, 0x00, 0x7f, 0xc3, 0xa9, 0xff], "\\0012\\0015\\0011\\0000\\0177\\0303\\0251\\0377"],
    ["% is not special in an argument", [0x25, 0x73], "%s"],
  ];
  for (const [name, bytes, escaped] of cases) {
    test(name, () => expect(escapeForPrintfB(new Uint8Array(bytes))).toBe(escaped));
  }

  const shells: [string, string[], Record<string, string> | undefined][] = [
    ["dash", ["dash"], undefined],
    ["bash", ["bash"], undefined],
    ["busybox", [busyboxBinary(), "sh"], { PATH: busyboxUserland() }],
  ];
  const every = new Uint8Array(256 * 2).map((_, i) => i % 256);
  for (const [name, argv, env] of shells) {
    test(`every byte value round-trips through printf '%b' of ${name}`, () => {
      const escaped = escapeForPrintfB(every);
      const run = Bun.spawnSync([...argv, "-c", `IFS= read -r l; printf '%b' "$l"`], { stdin: new TextEncoder().encode(escaped + "\n"), env });
      expect(run.exitCode).toBe(0);
      expect(new Uint8Array(run.stdout)).toEqual(every);
    });
  }
});

describe("piecesProblem and the manifest", () => {
  const cases: { name: string; pieces: unknown; problem: RegExp | null }[] = [
    { name: "well formed", pieces: [{ source: [0, 5] }, { fresh: [5, 7] }, { source: [9, 12] }], problem: null },
    { name: "a fresh range not where it lands", pieces: [{ source: [0, 5] }, { fresh: [6, 8] }, { source: [9, 11] }], problem: /does not start/ },
    { name: "source ranges going back", pieces: [{ source: [5, 9] }, { fresh: [4, 6] }, { source: [0, 4] }], problem: /overlaps or precedes/ },
    { name: "too short in total", pieces: [{ source: [0, 5] }], problem: /make 5 bytes, newBytes has 10/ },
    { name: "an empty range", pieces: [{ source: [0, 0] }, { source: [0, 10] }], problem: /bad range/ },
    { name: "not a piece", pieces: [{ copy: [0, 10] }], problem: /must be/ },
  ];
  for (const c of cases) {
    test(`pieces: ${c.name}`, () => {
      const file = { ...update(10, undefined), pieces: c.pieces as ContentPiece[] };
      const problem = piecesProblem(file);
      if (c.problem === null) expect(problem).toBeNull();
      else expect(problem).toMatch(c.problem);
      if (c.problem !== null) expect(() => transactionLayout({ files: [file], warnings: [], createParents: true })).toThrow(TypeError);
    });
  }

  test("a delta upload's manifest lists its pieces and sends only the blob stretches after SAP-DATA", () => {
    const { pieces, length } = alternating([100_000, 5000, 100_000], 5000);
    const file = update(length, pieces);
    const plan = { files: [file], warnings: [], createParents: true };
    const layout = transactionLayout(plan, { delta: true });
    const delta = layout.files[0]!.delta!;
    expect(delta.pieces.map((p) => p.kind)).toEqual(["source", "blob", "source", "blob", "source"]);
    expect(layout.contentBytes).toBe(10_000);
    const stdin = transactionInput(plan, layout, "SAP-COMMIT-2", true, "00112233445566778899aabbccddeeff");
    const text = new TextDecoder("latin1").decode(stdin);
    const head = text.slice(0, text.indexOf("SAP-DATA\n"));
    expect(head).toContain(["5", "S 0 100000", "B 5000", "S 100010 5000", "B 5000", "S 105020 100000", "10000", ""].join("\n"));
    expect(stdin.length - (head.length + "SAP-DATA\n".length)).toBe(10_000);
    expect(uploadedBytes(plan, layout, 0)).toBe(10_000 + delta.lineBytes);
    // without delta (and for reconcile) the same plan is sent whole, pieces "-"
    const whole = transactionLayout(plan);
    expect(whole.files[0]!.delta).toBeNull();
    expect(whole.contentBytes).toBe(length);
    expect(uploadedBytes(plan, whole, 0)).toBe(length);
  });
});
