/**
 * A fleet report as the CLI's `--json` and the MCP tool send it: the same
 * values with every field name in snake_case (`dryRun` → `dry_run`,
 * `operationId` → `operation_id`, `firstFailure` → `first_failure`), the
 * spelling of the library's reports on the wire. The one place the fleet's
 * names are converted.
 *
 * Every object key of a fleet report is a field name (none is data: host
 * names and paths are values; `counts` is keyed by state names, already
 * snake_case), so converting every key is exact.
 *
 * @module
 */

/**
 * `value` with every object key from camelCase to snake_case, deeply.
 *
 * @example
 * ```ts
 * fleetWire({ dryRun: false, summary: { firstFailure: null } }); // { dry_run: false, summary: { first_failure: null } }
 * ```
 */
export function fleetWire(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(fleetWire);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) out[snake(key)] = fleetWire(inner);
  return out;
}

function snake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
