/**
 * Reading ssh_config files: lines split into a keyword and arguments as
 * OpenSSH's `argv_split` does (single and double quotes, backslash escapes,
 * `#` starts a comment only at the start of a word, `Key=value`), and
 * `Include` followed with OpenSSH's bounds. Which blocks apply is the
 * caller's business (lib/ssh/config.ts); this file only walks the text.
 *
 * Bounds (issue 13): OpenSSH stops at the 17th nested `Include` with "Too
 * many recursive configuration includes" and refuses the configuration, so
 * a config that includes itself fails at once instead of being read
 * 3^16 times. It also reads `Include`s inside blocks that do not apply (to
 * check them), so the same happens here. On top, the total work is bounded:
 * at most {@linkcode MAX_CONFIG_FILES} files read and
 * {@linkcode MAX_CONFIG_BYTES} bytes in all — a wide fan-out that never nests
 * too deep still cannot make resolving a host name unbounded.
 *
 * @module
 */
import { matchWildcard } from "./known_hosts.ts";

/** OpenSSH's READCONF_MAX_DEPTH: the 17th nested Include is refused. */
export const MAX_INCLUDE_DEPTH = 16;
/** Most files one resolution reads (the user file, the system file and every include). */
export const MAX_CONFIG_FILES = 256;
/** Most bytes one resolution reads over all files. */
export const MAX_CONFIG_BYTES: number = 4 * 1024 * 1024;

/** One keyword line of a config file. */
export interface ConfigDirective {
  /** The keyword, lowercased. */
  keyword: string;
  /** Its arguments after argv_split (quotes removed). */
  args: string[];
  /** The raw text after the keyword and its separator (`ProxyCommand` takes it verbatim). */
  rest: string;
  /** `file:line`, for messages. */
  where: string;
}

/** Where the reader gets files, and what it reports to. */
export interface ConfigReaderHooks {
  readFile(path: string): string | undefined;
  listDir?(path: string): string[] | undefined;
  /** Expands `~` of an `Include` path in a user file (`undefined`: no such user). */
  expandTilde(path: string): string | undefined;
  /**
   * A `Host` or `Match` line: whether the lines after it apply, or
   * `"unknown"` when it cannot be evaluated (`Match exec`, never run).
   */
  block(directive: ConfigDirective): boolean | "unknown";
  /** Any other line inside a block that applies. */
  apply(directive: ConfigDirective): void;
  /** A line inside a block that could not be evaluated (it may or may not apply for OpenSSH). */
  undecided(directive: ConfigDirective): void;
  warning(message: string): void;
}

/** Thrown inside the reader to stop at the first fatal problem; caught by the resolver. */
export class ConfigFatal extends Error {
  override name = "ConfigFatal";
}

interface Budget {
  files: number;
  bytes: number;
}

/**
 * Read `path` (a user config, or the system one when `system`), calling
 * the hooks for every line, following `Include`. Throws
 * {@linkcode ConfigFatal} on what OpenSSH refuses; a missing top file is
 * not an error (it reads as empty).
 *
 * @example
 * ```ts
 * readConfig("/home/me/.ssh/config", false, hooks);
 * ```
 */
export function readConfig(path: string, system: boolean, hooks: ConfigReaderHooks, budget: Budget = { files: 0, bytes: 0 }): Budget {
  const text = readBounded(path, hooks, budget);
  if (text !== undefined) walk(text, path, system, hooks, budget, 0, true);
  return budget;
}

function readBounded(path: string, hooks: ConfigReaderHooks, budget: Budget): string | undefined {
  let text: string | undefined;
  try {
    text = hooks.readFile(path);
  } catch (error) {
    throw new ConfigFatal(`${path}: ${(error as Error).message}`);
  }
  if (text === undefined) return undefined;
  budget.files++;
  budget.bytes += text.length;
  if (budget.files > MAX_CONFIG_FILES) {
    throw new ConfigFatal(`more than ${MAX_CONFIG_FILES} configuration files read (Include fan-out); refusing the configuration`);
  }
  if (budget.bytes > MAX_CONFIG_BYTES) {
    throw new ConfigFatal(`more than ${MAX_CONFIG_BYTES} bytes of configuration read; refusing the configuration`);
  }
  return text;
}

function walk(text: string, path: string, system: boolean, hooks: ConfigReaderHooks, budget: Budget, depth: number, applies: boolean): void {
  let active = applies;
  let undecided = false;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const where = `${path}:${i + 1}`;
    const directive = splitConfigLine(lines[i]!, where);
    if (directive === null) continue;
    if (directive.keyword === "host" || directive.keyword === "match") {
      // Inside an Include of a block that does not apply, nothing matches
      // (and nothing is evaluated).
      const verdict = applies ? hooks.block(directive) : false;
      active = verdict === true;
      undecided = verdict === "unknown";
      continue;
    }
    if (directive.keyword === "include") {
      if (directive.args.length === 0) throw new ConfigFatal(`${where}: Include needs a file name`);
      for (const pattern of directive.args) include(pattern, where, system, hooks, budget, depth, active);
      continue;
    }
    if (active) hooks.apply(directive);
    else if (undecided) hooks.undecided(directive);
  }
}

function include(pattern: string, where: string, system: boolean, hooks: ConfigReaderHooks, budget: Budget, depth: number, active: boolean): void {
  if (depth + 1 > MAX_INCLUDE_DEPTH) {
    throw new ConfigFatal(`${where}: Too many recursive configuration includes (more than ${MAX_INCLUDE_DEPTH} nested, as OpenSSH refuses)`);
  }
  const expanded = system ? pattern : hooks.expandTilde(pattern);
  if (expanded === undefined) throw new ConfigFatal(`${where}: Include ${pattern}: no such user`);
  const absolute = expanded.startsWith("/") ? expanded : `${system ? "/etc/ssh" : hooks.expandTilde("~/.ssh")}/${expanded}`;
  const glob = /[*?]/.test(absolute);
  const files = glob ? globPaths(absolute, hooks) : [absolute];
  for (const file of files) {
    const text = readBounded(file, hooks, budget);
    if (text === undefined) {
      if (!glob && active) hooks.warning(`${where}: Include ${file} cannot be read; ignored`);
      continue;
    }
    // An included file starts applying (if its Include line applies); its
    // Host/Match lines do not leak into the including file.
    walk(text, file, system, hooks, budget, depth + 1, active);
  }
}

/** Expand a glob with `*`/`?` in any component, in sorted order (as glob(3)). */
function globPaths(pattern: string, hooks: ConfigReaderHooks): string[] {
  const parts = pattern.split("/").filter((p) => p !== "");
  let bases = [""];
  for (const part of parts) {
    const next: string[] = [];
    for (const base of bases) {
      if (!/[*?]/.test(part)) {
        next.push(`${base}/${part}`);
        continue;
      }
      const names = hooks.listDir?.(base === "" ? "/" : base) ?? [];
      for (const name of [...names].sort()) {
        if (name.startsWith(".") && !part.startsWith(".")) continue;
        if (matchWildcard(part, name)) next.push(`${base}/${name}`);
      }
    }
    bases = next;
  }
  return bases;
}

/**
 * Split one config line into its keyword and arguments, or `null` for a
 * blank or comment line. Throws {@linkcode ConfigFatal} on unbalanced quotes.
 *
 * @example
 * ```ts
 * splitConfigLine(`  IdentityFile "~/my key" # mine`, "config:3");
 * // { keyword: "identityfile", args: ["~/my key"], rest: `"~/my key" # mine`, where: "config:3" }
 * ```
 */
export function splitConfigLine(line: string, where: string): ConfigDirective | null {
  const text = line.replace(/[\r\s]+$/, "").replace(/^\s+/, "");
  if (text === "" || text.startsWith("#")) return null;
  const keywordEnd = text.search(/[ \t=]/);
  const keyword = keywordEnd < 0 ? text : text.slice(0, keywordEnd);
  // OpenSSH's strdelim: whitespace, at most one "=", whitespace.
  const rest = keywordEnd < 0 ? "" : text.slice(keywordEnd).replace(/^[ \t]*=?[ \t]*/, "");
  const args = argvSplit(rest);
  if (args === null) throw new ConfigFatal(`${where}: unbalanced quotes`);
  return { keyword: keyword.toLowerCase(), args, rest, where };
}

/** OpenSSH `argv_split(s, …, terminate_on_comment = 1)`. */
function argvSplit(text: string): string[] | null {
  const args: string[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === " " || ch === "\t") {
      i++;
      continue;
    }
    if (ch === "#") break;
    let arg = "";
    let quote = "";
    for (; i < text.length; i++) {
      const c = text[i]!;
      const next = text[i + 1];
      if (c === "\\" && (next === "'" || next === '"' || next === "\\" || (quote === "" && next === " "))) {
        arg += next;
        i++;
      } else if (quote === "" && (c === " " || c === "\t")) {
        break;
      } else if (quote === "" && (c === '"' || c === "'")) {
        quote = c;
      } else if (quote !== "" && c === quote) {
        quote = "";
      } else {
        arg += c;
      }
    }
    if (quote !== "") return null;
    args.push(arg);
  }
  return args;
}
