/**
 * The docs' relative links resolve: every `[text](path#anchor)` in README.md,
 * CHANGELOG.md, SECURITY.md and docs/ names a file of the repository and, with
 * an anchor, a heading of that file (GitHub's slugs). The checker itself is
 * tested first on synthetic Markdown, so a checker that accepts everything
 * fails here.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkDocLinks, headingAnchors, headingSlug, markdownLinks, withoutCode } from "../support/doc_links.ts";

const REPO = join(import.meta.dir, "..", "..");

/** The Markdown a reader of the repository follows links in. */
function projectDocs(): string[] {
  const top = ["README.md", "CHANGELOG.md", "SECURITY.md"].filter((f) => existsSync(join(REPO, f)));
  const docs = readdirSync(join(REPO, "docs"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`);
  return [...top, ...docs.sort()];
}

describe("GitHub heading slugs", () => {
  const cases: [string, string][] = [
    ["Guarantees", "guarantees"],
    ["Durable before `ok`", "durable-before-ok"],
    ["What `\"allow\"` gives up", "what-allow-gives-up"],
    ["Failures speak the front end's language", "failures-speak-the-front-ends-language"],
    ["Adapters: `RemoteShell`, `LocalShell`, `connectSsh`", "adapters-remoteshell-localshell-connectssh"],
    ["Discovery: `list_files` and `search`", "discovery-list_files-and-search"],
    ["Elevation (sudo)", "elevation-sudo"],
    ["The runs at `054dc51` and `9bc797a` (2026-12-02)", "the-runs-at-054dc51-and-9bc797a-2026-12-02"],
    ["From Node, Deno or Bun", "from-node-deno-or-bun"],
    ["[0.1.0] - 2026-12-02", "010---2026-12-02"],
    ["Ünïcode → arrows × signs", "ünïcode--arrows--signs"],
  ];
  for (const [heading, slug] of cases) {
    test(`${heading} → #${slug}`, () => expect(headingSlug(heading)).toBe(slug));
  }
  test("repeated headings are numbered; headings inside code fences do not count", () => {
    const text = "# A\n## Notes\n```sh\n# on this machine\n```\n### Notes\n## Notes ##\n";
    expect([...headingAnchors(text)]).toEqual(["a", "notes", "notes-1", "notes-2"]);
  });
});

describe("link extraction", () => {
  const cases: [string, string, string[]][] = [
    ["an inline link with an anchor", "see [SSH](docs/ssh.md#host-keys).", ["docs/ssh.md#host-keys"]],
    ["two links on a line, an image and an external one", "[a](a.md) and ![b](b.png) and [c](https://example.org)", ["a.md", "b.png", "https://example.org"]],
    ["a link in a code span is not a link", "run `[x](missing.md)` then [y](y.md)", ["y.md"]],
    ["a link in a fenced block is not a link", "```md\n[x](missing.md)\n```\n[y](y.md)", ["y.md"]],
    ["link text holding code and brackets", "[`a` [b]](a.md#x)", ["a.md#x"]],
    ["a title after the target", "[a](a.md \"A\")", ["a.md"]],
  ];
  for (const [name, text, targets] of cases) {
    test(name, () => expect(markdownLinks(text).map((l) => l.target)).toEqual(targets));
  }
  test("line numbers count the blanked code lines", () => {
    expect(markdownLinks("x\n```\n[a](a.md)\n```\n[b](b.md)")).toEqual([{ line: 5, target: "b.md" }]);
    expect(withoutCode("a\n```\nb\n```\nc").split("\n")).toHaveLength(5);
  });
});

describe("checkDocLinks on a synthetic repository", () => {
  test("reports a missing file, a missing anchor, an anchor into a non-Markdown file and a path outside; accepts the rest", () => {
    const repo = mkdtempSync(join(tmpdir(), "sap-doclinks-"));
    try {
      mkdirSync(join(repo, "docs"));
      writeFileSync(join(repo, "mod.ts"), "export {};\n");
      writeFileSync(join(repo, "docs", "a.md"), "# A\n\n## Host keys\n\n[self](#host-keys) [bad self](#nope)\n");
      writeFileSync(
        join(repo, "README.md"),
        [
          "# R",
          "[ok](docs/a.md) [ok anchor](docs/a.md#host-keys) [ok dir](docs/) [ok file](mod.ts) [ext](https://example.org/x#y)",
          "[missing](docs/b.md)",
          "[missing anchor](docs/a.md#options)",
          "[anchor into ts](mod.ts#L3)",
          "[outside](../elsewhere.md)",
          "`[in code](docs/none.md)`",
        ].join("\n"),
      );
      const broken = checkDocLinks(repo, ["README.md", "docs/a.md"]);
      expect(broken.map((b) => `${b.file}:${b.line} ${b.target}`)).toEqual([
        "README.md:3 docs/b.md",
        "README.md:4 docs/a.md#options",
        "README.md:5 mod.ts#L3",
        "README.md:6 ../elsewhere.md",
        "docs/a.md:5 #nope",
      ]);
      expect(broken[1]!.reason).toBe("docs/a.md has no heading with the anchor #options");
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});

/** Commands shown in Markdown: inline code spans and the lines of sh / bash / console fences. */
function shownCommands(text: string): { line: number; command: string }[] {
  const out: { line: number; command: string }[] = [];
  let shell = false;
  let inFence = false;
  text.split("\n").forEach((raw, i) => {
    const fence = /^ {0,3}(`{3,}|~{3,})\s*([a-z]*)/.exec(raw);
    if (fence) {
      if (inFence) inFence = shell = false;
      else {
        inFence = true;
        shell = ["sh", "bash", "console", "shell"].includes(fence[2]!);
      }
      return;
    }
    if (inFence) {
      if (shell && raw.trim() !== "" && !raw.trim().startsWith("#")) out.push({ line: i + 1, command: raw.trim() });
      return;
    }
    for (const m of raw.matchAll(/`([^`]+)`/g)) out.push({ line: i + 1, command: m[1]! });
  });
  return out;
}

/**
 * A command that runs `bun` or `node` by its bare name (issue 27 item 6): after `npm install` Bun is
 * only in node_modules/.bin, and the system's Node may be older than 22.18. (`deno` commands are
 * for Deno users, who have it.)
 */
function offPathRuntime(command: string): string | null {
  const m = /^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(bun|node)\s/.exec(command);
  return m ? m[1]! : null;
}

describe("README.md is the front page", () => {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  test("at most 250 lines (the reference lives in docs/)", () => {
    expect(readme.split("\n").length - (readme.endsWith("\n") ? 1 : 0)).toBeLessThanOrEqual(250);
  });
  test("opens with the newcomer's two commands", () => {
    const head = readme.split("\n").slice(0, 8).join("\n");
    expect(head).toContain("npm install && npm run demo");
    expect(head).toContain("npm install && npm test");
  });
  test("shownCommands / offPathRuntime find a bare runtime and accept npx, node_modules/.bin and prose", () => {
    const text = "Run `bun test` or `npx bun test`.\n```sh\nSUDO_PW=x bun examples/apply.ts\nnode_modules/.bin/node x.ts\n# bun in a comment\n```\n```ts\nbun (not a shell block)\n```";
    expect(shownCommands(text).filter((c) => offPathRuntime(c.command)).map((c) => c.line)).toEqual([1, 3]);
  });
});

describe("the project's docs", () => {
  test("never tell the reader to run bun or node by a bare name (npx bun, node_modules/.bin/node)", () => {
    const found: string[] = [];
    for (const file of projectDocs().filter((f) => f !== "docs/performance-notes.md")) {
      for (const c of shownCommands(readFileSync(join(REPO, file), "utf8"))) {
        if (offPathRuntime(c.command)) found.push(`${file}:${c.line}: ${c.command}`);
      }
    }
    expect(found).toEqual([]);
  });
  test("docs/ exists with its index, and README.md links into it", () => {
    expect(existsSync(join(REPO, "docs", "README.md"))).toBe(true);
    expect(markdownLinks(readFileSync(join(REPO, "README.md"), "utf8")).some((l) => l.target.startsWith("docs/"))).toBe(true);
  });
  test("every relative link and anchor resolves", () => {
    const broken = checkDocLinks(REPO, projectDocs());
    expect(broken.map((b) => `${b.file}:${b.line}: [${b.target}] ${b.reason}`)).toEqual([]);
  });
});
