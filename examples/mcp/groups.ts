/**
 * Host groups of the example MCP server: `--group NAME=ROOT,ROOT,…` names
 * configured roots (each a directory on one host, or a local one) that
 * `apply_patch_fleet` patches together. Like the roots, groups are chosen by
 * the operator, never by the model: a model names a group, and at most a
 * subset of its hosts.
 *
 * @module
 */
import { ConfigError } from "./roots.ts";
import type { RootConfig } from "./roots.ts";

/** One configured group. */
export interface GroupConfig {
  name: string;
  /** The member roots, in the order given (the rollout's order: the first is the canary). */
  members: RootConfig[];
}

const GROUP_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * The groups of `--group` values (`NAME=ROOT,ROOT,…`), checked against the
 * configured roots. Throws {@linkcode ConfigError} for anything wrong.
 *
 * @example
 * ```ts
 * const groups = loadGroups(["web=web1,web2"], roots);
 * ```
 */
export function loadGroups(values: readonly string[], roots: readonly RootConfig[]): GroupConfig[] {
  const groups: GroupConfig[] = [];
  for (const value of values) {
    const eq = value.indexOf("=");
    const name = eq > 0 ? value.slice(0, eq) : "";
    if (!GROUP_NAME.test(name)) {
      throw new ConfigError(`--group ${JSON.stringify(value)}: write --group NAME=ROOT,ROOT,… (a NAME is letters, digits, '.', '_' or '-', starting with a letter or digit), e.g. --group web=web1,web2`);
    }
    if (groups.some((g) => g.name === name)) throw new ConfigError(`group "${name}" is configured twice; give each group its own name`);
    if (roots.length === 0) throw new ConfigError(`--group ${name}: groups name configured roots (--root NAME=…); none are configured`);
    const names = value.slice(eq + 1).split(",").map((n) => n.trim());
    const members: RootConfig[] = [];
    for (const member of names) {
      const root = roots.find((r) => r.name === member);
      if (root === undefined) {
        throw new ConfigError(`--group ${name}: ${JSON.stringify(member)} is not a configured root; the roots are ${roots.map((r) => r.name).join(", ")}`);
      }
      if (members.includes(root)) throw new ConfigError(`--group ${name}: root "${member}" is listed twice`);
      members.push(root);
    }
    groups.push({ name, members });
  }
  return groups;
}
