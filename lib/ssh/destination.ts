/**
 * SSH destinations as users write them: `[user@]host[:port]`,
 * `ssh://[user@]host[:port]`, `[ipv6]:port` (ProxyJump hops, a CLI's
 * `--ssh` argument).
 *
 * @module
 */

/**
 * One hop of a `ProxyJump` chain, as written (`[user@]host[:port]`).
 *
 * @example
 * ```ts
 * parseSshDestination("deploy@web1:2222"); // { host: "web1", user: "deploy", port: 2222 } satisfies SshDestination
 * ```
 */
export interface SshDestination {
  /** Host name, alias or IP address (an IPv6 address without its brackets). */
  host: string;
  /** The user before `@`, when given. */
  user?: string;
  /** The port after `:`, when given. */
  port?: number;
}

/**
 * Parse a destination `[user@]host[:port]`, `ssh://[user@]host[:port]` or
 * `[user@][ipv6]:port`. Returns `null` when it is not one.
 *
 * @example
 * ```ts
 * parseSshDestination("deploy@jump.example:2222"); // { user: "deploy", host: "jump.example", port: 2222 }
 * ```
 */
export function parseSshDestination(text: string): SshDestination | null {
  let rest = text.startsWith("ssh://") ? text.slice(6).replace(/\/$/, "") : text;
  if (rest === "") return null;
  const result: SshDestination = { host: "" };
  const at = rest.lastIndexOf("@");
  if (at >= 0) {
    if (at === 0) return null;
    result.user = rest.slice(0, at);
    rest = rest.slice(at + 1);
  }
  let portText: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(rest);
  if (bracketed) {
    result.host = bracketed[1]!;
    portText = bracketed[2];
  } else {
    const colons = rest.split(":").length - 1;
    if (colons === 1) {
      [result.host, portText] = rest.split(":") as [string, string];
    } else {
      result.host = rest; // a bare IPv6 address, or no port
    }
  }
  if (result.host === "" || /[\s/]/.test(result.host)) return null;
  if (portText !== undefined) {
    const port = Number(portText);
    if (!/^\d+$/.test(portText) || port < 1 || port > 65535) return null;
    result.port = port;
  }
  return result;
}

/**
 * Write a destination back as `[user@]host[:port]` (IPv6 in brackets when a
 * port follows), the form ProxyJump lists use.
 *
 * @example
 * ```ts
 * formatSshDestination({ user: "ops", host: "::1", port: 2200 }); // "ops@[::1]:2200"
 * ```
 */
export function formatSshDestination(destination: SshDestination): string {
  const host = destination.port !== undefined && destination.host.includes(":") ? `[${destination.host}]` : destination.host;
  return `${destination.user !== undefined ? `${destination.user}@` : ""}${host}${destination.port !== undefined ? `:${destination.port}` : ""}`;
}
