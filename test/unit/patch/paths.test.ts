import { describe, expect, test } from "bun:test";
import {
  ancestors,
  canonicalPathKey,
  compareCanonicalPaths,
  components,
  MAX_COMPONENT_BYTES,
  MAX_PATH_BYTES,
  parentOf,
  pathProblem,
  utf8Length,
  validatePath,
} from "../../../lib/patch/paths.ts";

describe("validatePath accepts", () => {
  const accepted: [string, string][] = [
    ["plain file", "a.txt"],
    ["nested file", "src/lib/app.ts"],
    ["dot file", ".env"],
    ["dot directory", ".github/workflows/ci.yml"],
    ["three dots is a name", "..."],
    ["name starting with two dots", "..hidden"],
    ["name ending with dot", "file."],
    ["option-like name (data, not an option)", "-rf"],
    ["option-like nested", "dir/--help"],
    ["shell metacharacters", "a $HOME `x` ;rm 'q' \"d\"|&<>*?.txt"],
    ["spaces", "my dir/my file.txt"],
    ["leading and trailing spaces in a component", " a /b "],
    ["tilde is a name here", "~/notes.md"],
    ["Cyrillic", "документы/отчёт.md"],
    ["CJK", "文件/测试.txt"],
    ["emoji (astral plane)", "😀/🎉.txt"],
    ["NBSP and other non-control Unicode", "a\u00a0b/\u2028c"],
    ["combining marks (not normalised)", "e\u0301.txt"],
    ["colon without backslash", "C:/x"],
    ["exactly 255-byte component", "a".repeat(MAX_COMPONENT_BYTES)],
    ["127 two-byte chars is 254 bytes", "é".repeat(127)],
    // 20 components of 200 bytes plus their slashes is 4020; the last is 76.
    ["exactly 4096 bytes total", "a".repeat(200).concat("/").repeat(20) + "b".repeat(76)],
  ];
  for (const [name, path] of accepted) {
    test(name, () => {
      expect(pathProblem(path)).toBeNull();
      expect(validatePath(path)).toBeNull();
    });
  }

  test("the 4096-byte fixture really is 4096 bytes", () => {
    const path = accepted.at(-1)![1];
    expect(utf8Length(path)).toBe(MAX_PATH_BYTES);
  });
});

describe("validatePath rejects with invalid_path and names the rule and fix", () => {
  // [name, path, a fragment of the rule, a fragment of the fix]
  const rejected: [string, string, string, string][] = [
    ["empty", "", "empty", "src/app.ts"],
    ["absolute", "/etc/passwd", "absolute", "root-relative path such as src/app.ts"],
    ["root only", "/", "absolute", "root-relative"],
    ["dot-dot at start", "../secret", "'..'", "from the root"],
    ["dot-dot in middle", "a/../b", "'..'", "from the root"],
    ["dot-dot at end", "a/..", "'..'", "from the root"],
    ["dot-dot alone", "..", "'..'", "from the root"],
    ["dot alone", ".", "'.'", "src/app.ts"],
    ["dot at start", "./a/b", "'.'", "write a/b"],
    ["dot in middle", "a/./b", "'.'", "write a/b"],
    ["trailing slash", "src/", "trailing '/'", "write src"],
    ["double slash", "a//b", "'//'", "write a/b"],
    ["NUL", "a\0b", "NUL", "remove it"],
    ["newline", "a\nb", "U+000A", "remove it"],
    ["carriage return", "a.txt\r", "U+000D", "remove it"],
    ["tab", "a\tb", "U+0009", "control characters"],
    ["escape (C0)", "a\x1b[31m", "U+001B", "control characters"],
    ["unit separator (C0 end)", "a\x1f", "U+001F", "control characters"],
    ["DEL", "a\x7f", "U+007F", "control characters"],
    ["C1 start", "a\u0080", "U+0080", "C1"],
    ["C1 end", "a\u009f", "U+009F", "C1"],
    ["backslash", "src\\app.ts", "backslashes", "write src/app.ts"],
    ["Windows drive", "C:\\Users\\x", "Windows", "src/app.ts"],
    ["lone high surrogate", "a\ud800b", "unpaired surrogate", "valid UTF-8"],
    ["lone low surrogate", "a\udc00", "unpaired surrogate", "valid UTF-8"],
    ["component of 256 bytes", "d/" + "a".repeat(256), "256 UTF-8 bytes", "at most 255"],
    ["component of 128 two-byte chars", "é".repeat(128), "256 UTF-8 bytes", "at most 255"],
    ["component of 64 emoji", "😀".repeat(64), "256 UTF-8 bytes", "at most 255"],
    [
      "total of 4097 bytes",
      "a".repeat(200).concat("/").repeat(20) + "b".repeat(77),
      "4097 UTF-8 bytes",
      "at most 4096",
    ],
  ];
  for (const [name, path, rule, fix] of rejected) {
    test(name, () => {
      const f = validatePath(path);
      expect(f).not.toBeNull();
      expect(f!.code).toBe("invalid_path");
      expect(f!.retryable).toBe(false);
      expect(f!.path).toBe(path);
      expect(f!.message).toContain(rule);
      expect(f!.message).toContain(fix);
      expect(pathProblem(path)).not.toBeNull();
    });
  }

  test("control characters are shown escaped in the message, never raw", () => {
    const f = validatePath("evil\x1b]0;title\x07.txt")!;
    expect(f.message).not.toContain("\x1b");
    expect(f.message).toContain("\\u001b");
  });

  test("a suggestion is never itself an invalid path", () => {
    // Stripping the empty components of "//" leaves nothing valid: fall back to the example.
    expect(validatePath("//")!.message).toContain("src/app.ts");
    // "./.." minus its '.' is "..", still invalid: the message must not suggest it.
    const f = validatePath("./..")!;
    expect(f.message).toContain("'.' components");
    expect(f.message).not.toContain("write ..");
    expect(f.message).toContain("src/app.ts");
  });

  test("a long path is cut in the message", () => {
    const f = validatePath("/" + "x".repeat(5000))!;
    expect(f.message.length).toBeLessThan(600);
  });
});

describe("pathProblem", () => {
  test("throws on a non-string (programmer error)", () => {
    expect(() => pathProblem(42 as unknown as string)).toThrow(TypeError);
  });
});

describe("helpers", () => {
  const table: [string, string[], string, string[]][] = [
    ["a.txt", ["a.txt"], "", []],
    ["src/a.ts", ["src", "a.ts"], "src", ["src"]],
    ["a/b/c/d.md", ["a", "b", "c", "d.md"], "a/b/c", ["a", "a/b", "a/b/c"]],
    ["я/ё.txt", ["я", "ё.txt"], "я", ["я"]],
  ];
  for (const [path, comps, parent, ancs] of table) {
    test(`components / parentOf / ancestors of ${path}`, () => {
      expect(components(path)).toEqual(comps);
      expect(parentOf(path)).toBe(parent);
      expect(ancestors(path)).toEqual(ancs);
    });
  }

  test("canonicalPathKey is the hex of the UTF-8 bytes", () => {
    expect(canonicalPathKey("a/b")).toBe("612f62");
    expect(canonicalPathKey("é")).toBe("c3a9");
    expect(canonicalPathKey("😀")).toBe("f09f9880");
    expect(canonicalPathKey("")).toBe("");
  });

  test("sorting by key is byte order, not UTF-16 order", () => {
    // U+FF21 (EF BC A1) sorts before U+1F600 (F0 9F 98 80) in bytes,
    // but after it in UTF-16 code units (FF21 > D83D).
    const fullwidth = "\uff21";
    const emoji = "😀";
    expect(emoji < fullwidth).toBe(true); // the JS default we must not use
    expect([emoji, fullwidth].sort(compareCanonicalPaths)).toEqual([fullwidth, emoji]);
    expect(canonicalPathKey(fullwidth) < canonicalPathKey(emoji)).toBe(true);
  });

  test("byte order puts a directory before its children and '-' before '/'", () => {
    const paths = ["b", "a/c", "a", "a-b", "a/b", "B", "é", "z"];
    expect(paths.sort(compareCanonicalPaths)).toEqual([
      "B",
      "a",
      "a-b",
      "a/b",
      "a/c",
      "b",
      "z",
      "é",
    ]);
  });

  test("utf8Length matches TextEncoder, also for lone surrogates", () => {
    const enc = new TextEncoder();
    for (const s of ["", "abc", "é", "€", "😀", "a\ud800", "\udc00x", "mixé😀€"]) {
      expect(utf8Length(s)).toBe(enc.encode(s).length);
    }
  });
});
