/**
 * Relative links of the project's Markdown, checked the way GitHub renders
 * them: every `[text](path)` and `[text](path#anchor)` outside code must name
 * a file or directory of the repository, and every anchor a heading of its
 * target (GitHub's slugs: lowercased, punctuation dropped, spaces as `-`,
 * `-1`, `-2` … for repeated headings). External links (`https:`, `mailto:`)
 * are not fetched: tests talk to 127.0.0.1 only.
 *
 * @module
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative, sep } from "node:path";

/** One link found in a Markdown text. */
export interface MarkdownLink {
  /** 1-based line of the link. */
  line: number;
  /** The target as written, e.g. `docs/ssh.md#host-keys` or `#limits`. */
  target: string;
}

/** A link that does not resolve, with why. */
export interface BrokenLink extends MarkdownLink {
  /** Repository-relative file the link is in. */
  file: string;
  reason: string;
}

/**
 * The text with its fenced code blocks blanked (lines kept, so line numbers
 * stay true): a fence holds neither links nor headings.
 *
 * @example
 * ```ts
 * withoutFences("a\n```\n# not a heading\n```\nb"); // "a\n\n\n\nb"
 * ```
 */
export function withoutFences(text: string): string {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of text.split("\n")) {
    const opener = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence !== null) {
      if (opener && opener[1]![0] === fence[0] && opener[1]!.length >= fence.length && line.trim() === opener[1]) fence = null;
      out.push("");
    } else {
      if (opener) fence = opener[1]!;
      out.push(opener ? "" : line);
    }
  }
  return out.join("\n");
}

/**
 * The text without fenced code blocks and without inline code spans: what
 * GitHub renders as links can only be in what is left.
 *
 * @example
 * ```ts
 * withoutCode("a `[x](y)` b"); // "a  b"
 * ```
 */
export function withoutCode(text: string): string {
  return withoutFences(text).replace(/(`+)(?:(?!\1)[^\n])+?\1/g, "");
}

/**
 * GitHub's anchor for a heading text (github-slugger): lowercase, drop
 * everything but letters, marks, numbers, `_`, `-` and spaces, spaces as `-`.
 *
 * @example
 * ```ts
 * headingSlug("What `\"allow\"` gives up"); // "what-allow-gives-up"
 * ```
 */
export function headingSlug(heading: string): string {
  return heading
    .replace(/<[^>]*>/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/**
 * The anchors of a Markdown text's ATX headings (`#` … `######`), repeated
 * slugs numbered as GitHub does.
 *
 * @example
 * ```ts
 * headingAnchors("# A\n## B\n## B\n"); // Set { "a", "b", "b-1" }
 * ```
 */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(text).split("\n")) {
    const m = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (!m) continue;
    const slug = headingSlug(m[1]!);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/**
 * Every inline link and image target outside code, with its line.
 *
 * @example
 * ```ts
 * markdownLinks("see [SSH](docs/ssh.md#host-keys)"); // [{ line: 1, target: "docs/ssh.md#host-keys" }]
 * ```
 */
export function markdownLinks(text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  withoutCode(text).split("\n").forEach((line, i) => {
    for (const m of line.matchAll(/!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line: i + 1, target: m[1]! });
    }
  });
  return links;
}

/** Whether a target leaves the repository's files (a URL scheme). */
function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}

/**
 * Check the links of the given repository-relative Markdown files.
 *
 * @example
 * ```ts
 * checkDocLinks("/work/repo", ["README.md", "docs/ssh.md"]); // [] when every link resolves
 * ```
 */
export function checkDocLinks(repo: string, files: readonly string[]): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchorsOf = (path: string): Set<string> => {
    let anchors = anchorCache.get(path);
    if (!anchors) {
      anchors = headingAnchors(readFileSync(path, "utf8"));
      anchorCache.set(path, anchors);
    }
    return anchors;
  };
  for (const file of files) {
    const full = join(repo, file);
    for (const link of markdownLinks(readFileSync(full, "utf8"))) {
      if (isExternal(link.target)) continue;
      const hash = link.target.indexOf("#");
      const pathPart = decodeURIComponent(hash === -1 ? link.target : link.target.slice(0, hash));
      const anchor = hash === -1 ? null : decodeURIComponent(link.target.slice(hash + 1));
      const target = pathPart === "" ? full : normalize(join(dirname(full), pathPart));
      const inside = relative(repo, target);
      if (inside.startsWith(`..${sep}`) || inside === "..") {
        broken.push({ ...link, file, reason: "points outside the repository" });
        continue;
      }
      if (!existsSync(target)) {
        broken.push({ ...link, file, reason: `${inside} does not exist` });
        continue;
      }
      if (anchor === null) continue;
      if (statSync(target).isDirectory() || !target.endsWith(".md")) {
        broken.push({ ...link, file, reason: `an anchor into ${inside}, which is not a Markdown file` });
        continue;
      }
      if (!anchorsOf(target).has(anchor)) broken.push({ ...link, file, reason: `${inside} has no heading with the anchor #${anchor}` });
    }
  }
  return broken;
}
