/**
 * The server's log: one line per event on stderr (the operator's terminal
 * or the client's log file) and, for the events a client may care about
 * (connections, commits, reconciles), an MCP `notifications/message` to
 * each connection that declared interest (logging capability, SPEC §9
 * round 2).
 *
 * Every value that reaches a log line can come from a model or a host
 * (paths, patch text, error messages). A newline or an ANSI escape in one
 * could forge a line ("apply_patch site applied: delete a.txt") or repaint
 * the operator's terminal, so the whole line is escaped at the sink:
 * C0 and C1 controls, DEL, the Unicode line and paragraph separators and
 * the bidirectional overrides become `\xNN` / `\u{NNNN}`, and a backslash
 * becomes `\\` (so an escape cannot be forged either).
 *
 * @module
 */

// deno-lint-ignore no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\\]/g;

/**
 * `text` with every character that could break or forge a log line escaped.
 *
 * @example
 * ```ts
 * escapeForLog("a\nb\u001b[31m"); // "a\\x0ab\\x1b[31m"
 * ```
 */
export function escapeForLog(text: string): string {
  return text.replace(UNSAFE, (c) => {
    if (c === "\\") return "\\\\";
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
  });
}

/** Severity of an event, as MCP names them. */
export type LogLevel = "debug" | "info" | "notice" | "warning" | "error";

/** One event for the MCP log of a connection. */
export interface LogEvent {
  level: LogLevel;
  /** What happened, e.g. `commit`, `reconcile`, `connection`. */
  event: string;
  /** The one-line summary (escaped before it is sent). */
  message: string;
  /** Structured details (plain JSON). */
  data?: Record<string, unknown>;
}

/**
 * A writer of escaped lines with a fixed prefix.
 *
 * @example
 * ```ts
 * const line = lineWriter((s) => process.stderr.write(s));
 * line("read_file site:a.txt"); // "[ssh-apply-patch] read_file site:a.txt\n"
 * ```
 */
export function lineWriter(write: (text: string) => void, prefix = "[ssh-apply-patch] "): (line: string) => void {
  return (line) => write(`${prefix}${escapeForLog(line)}\n`);
}
