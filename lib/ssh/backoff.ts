/**
 * Exponential backoff with jitter for asking sshd again after it refused a
 * channel open.
 *
 * @module
 */

/** The shape of a backoff: the first pause's ceiling and the largest one. */
export interface Backoff {
  baseMs: number;
  capMs: number;
}

/**
 * The pause before retry `attempt` (1-based): "equal jitter", between half
 * and all of `min(capMs, baseMs * 2^(attempt - 1))`. Never zero, so calls
 * refused together do not ask again together; never above `capMs`.
 *
 * @example
 * ```ts
 * backoffDelay(1, { baseMs: 10, capMs: 500 }, () => 0.5); // 7.5
 * backoffDelay(20, { baseMs: 10, capMs: 500 }, () => 1); // 500
 * ```
 */
export function backoffDelay(attempt: number, backoff: Backoff, random: () => number = Math.random): number {
  const ceiling = Math.min(backoff.capMs, backoff.baseMs * 2 ** Math.max(0, Math.min(attempt - 1, 30)));
  return ceiling / 2 + (ceiling / 2) * random();
}
