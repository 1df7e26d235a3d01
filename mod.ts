/**
 * ssh-apply-patch: apply Codex-format patches to files on remote hosts over
 * SSH, safely.
 *
 * @module
 */
export { formatLineId } from "./lib/line_id.ts";
export type * from "./lib/types.ts";
