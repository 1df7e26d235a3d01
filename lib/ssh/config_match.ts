/**
 * Which `Host` and `Match` blocks of an ssh_config apply, as OpenSSH 9 decides
 * (each rule below was checked against the real client with `ssh -G`):
 * - `Host` patterns are whitespace-separated and each is one pattern: a
 *   comma is a literal character (`Host a,b` matches neither `a` nor `b`);
 *   they are matched case-sensitively against the name as typed.
 * - `Match` criteria take comma-separated pattern lists, case-sensitive.
 *   `host` is the `HostName` obtained so far (else the typed name in lower
 *   case), `originalhost` the name as typed, `user` the remote user so far,
 *   `localuser` the local account.
 * - `Match exec` is never run (it would run a program on this machine) and
 *   `canonical`, `final`, `localnetwork` are not evaluated: such a block is
 *   treated as not matching, with a warning — and its verdict is
 *   `"unknown"`, so the resolver can refuse a block that would change where
 *   the connection goes.
 *
 * @module
 */
import { matchWildcard } from "./known_hosts.ts";

/** What `Match` criteria are evaluated against. */
export interface MatchContext {
  /** The `HostName` obtained so far (tokens expanded), else the typed name lowercased. */
  host: string;
  /** The name as typed. */
  originalHost: string;
  /** The remote user so far (given, `User`, or the local user). */
  user: string;
  localUser: string;
}

/** A `Match` line's verdict, with the reason when it was not evaluated. */
export interface MatchVerdict {
  /** `"unknown"`: a criterion could not be evaluated (it might apply for OpenSSH). */
  matches: boolean | "unknown";
  /** Set when a criterion could not be evaluated (the block is treated as not matching). */
  warning?: string;
  /** Set when the line is malformed (OpenSSH refuses the configuration). */
  error?: string;
}

/**
 * Whether a `Host` line's patterns select `alias` (the name as typed): any
 * positive pattern matches and no negated one does.
 *
 * @example
 * ```ts
 * hostLineMatches(["web*", "!web-old"], "web1"); // true
 * hostLineMatches(["a,b"], "a");                  // false: the comma is literal
 * ```
 */
export function hostLineMatches(patterns: readonly string[], alias: string): boolean {
  return patternsMatch(patterns, alias);
}

/**
 * OpenSSH `match_pattern_list` over a comma-separated list, case-sensitive.
 *
 * @example
 * ```ts
 * patternListMatches("*.prod,!db.prod", "web.prod"); // true
 * ```
 */
export function patternListMatches(list: string, value: string): boolean {
  return patternsMatch(list.split(","), value);
}

function patternsMatch(patterns: readonly string[], value: string): boolean {
  let matched = false;
  for (const pattern of patterns) {
    if (pattern.startsWith("!")) {
      if (matchWildcard(pattern.slice(1), value)) return false;
    } else if (matchWildcard(pattern, value)) {
      matched = true;
    }
  }
  return matched;
}

/**
 * Evaluate a `Match` line's criteria (all must hold).
 *
 * @example
 * ```ts
 * matchLineMatches(["host", "*.prod", "user", "deploy"], { host: "web.prod", originalHost: "web", user: "deploy", localUser: "me" });
 * // { matches: true }
 * ```
 */
export function matchLineMatches(args: readonly string[], context: MatchContext): MatchVerdict {
  if (args.length === 0) return { matches: false, error: "Match needs criteria" };
  let matches = true;
  let unknown: string | undefined;
  for (let i = 0; i < args.length; i++) {
    let criterion = args[i]!.toLowerCase();
    const negated = criterion.startsWith("!");
    if (negated) criterion = criterion.slice(1);
    if (criterion === "all") continue;
    if (criterion === "canonical" || criterion === "final") {
      unknown ??= `Match ${criterion} is not evaluated (no canonicalisation pass); the block is treated as not matching`;
      continue;
    }
    const value = args[i + 1];
    if (value === undefined) return { matches: false, error: `Match ${criterion} needs an argument` };
    i++;
    let hit: boolean;
    switch (criterion) {
      case "host":
        hit = patternListMatches(value, context.host);
        break;
      case "originalhost":
        hit = patternListMatches(value, context.originalHost);
        break;
      case "user":
        hit = patternListMatches(value, context.user);
        break;
      case "localuser":
        hit = patternListMatches(value, context.localUser);
        break;
      case "exec":
        unknown ??= "Match exec is never executed by this library; the block is treated as not matching";
        continue;
      default:
        unknown ??= `Match ${criterion} is not supported; the block is treated as not matching`;
        continue;
    }
    if (hit === negated) matches = false;
  }
  // A criterion that fails decides, whatever the ones that cannot be evaluated would say.
  if (!matches) return { matches: false };
  return unknown === undefined ? { matches: true } : { matches: "unknown", warning: unknown };
}
