/**
 * ssh_config(5) TOKENS and ENVIRONMENT VARIABLES: `%h`-style tokens and
 * `${VAR}` references, and `~` / `~user` at the start of a path — with
 * OpenSSH's strictness: an unknown token, a lone `%`, an unterminated `${`
 * or an unset variable is an error (OpenSSH 9.2 refuses the whole
 * configuration: "unknown key %j", "env var ${X} has no value"), never a
 * silently kept literal. Pure; the caller supplies the values.
 *
 * @module
 */

/** Token letter → value, e.g. `{ h: "web1", p: "22" }`. `%%` is always `%`. */
export type TokenValues = Readonly<Record<string, string>>;

/** Environment variables visible to `${VAR}`. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** An expanded value, or why it cannot be expanded. */
export type Expanded = { ok: true; value: string } | { ok: false; error: string };

/**
 * Expand `%x` tokens (only the letters in `tokens`) and, when `env` is
 * given, `${VAR}` references, in one left-to-right pass (a value produced by
 * one expansion is never expanded again).
 *
 * @example
 * ```ts
 * expandConfigValue("~/.ssh/id_%h", { h: "web1" }, {}); // { ok: true, value: "~/.ssh/id_web1" }
 * expandConfigValue("${NOPE}/x", {}, {});               // { ok: false, error: "environment variable ${NOPE} is not set" }
 * ```
 */
export function expandConfigValue(value: string, tokens: TokenValues, env: Environment | null): Expanded {
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    if (ch === "%") {
      const name = value[i + 1];
      if (name === undefined) return { ok: false, error: `"${value}" ends with a lone %` };
      i++;
      if (name === "%") out += "%";
      else if (Object.hasOwn(tokens, name)) out += tokens[name];
      else return { ok: false, error: `unknown token %${name} in "${value}"` };
    } else if (ch === "$" && value[i + 1] === "{" && env !== null) {
      const end = value.indexOf("}", i + 2);
      if (end < 0) return { ok: false, error: `unterminated \${ in "${value}"` };
      const name = value.slice(i + 2, end);
      const resolved = /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? env[name] : undefined;
      if (resolved === undefined) return { ok: false, error: `environment variable \${${name}} is not set (in "${value}")` };
      out += resolved;
      i = end;
    } else {
      out += ch;
    }
  }
  return { ok: true, value: out };
}

/**
 * `~` and `~/…` become `home`; `~user/…` becomes that account's home (via
 * `homeOf`); anything else is returned as is. `undefined` when `~user`
 * names no account.
 *
 * @example
 * ```ts
 * expandTilde("~/.ssh/config", "/home/me", () => undefined); // "/home/me/.ssh/config"
 * ```
 */
export function expandTilde(path: string, home: string, homeOf: (user: string) => string | undefined): string | undefined {
  if (!path.startsWith("~")) return path;
  const slash = path.indexOf("/");
  const user = slash < 0 ? path.slice(1) : path.slice(1, slash);
  const rest = slash < 0 ? "" : path.slice(slash);
  if (user === "") return home + rest;
  const other = homeOf(user);
  return other === undefined ? undefined : other + rest;
}
