// When a supervised service that died is started again: exponential backoff, and a bound on
// restarts within a window so a service that cannot stay up (bad config, a crash loop) ends the
// cluster with a clear message instead of flapping forever.

/** @typedef {{ baseMs: number, maxMs: number, maxRestarts: number, windowMs: number }} RestartPolicy */

/** @type {RestartPolicy} */
export const DEFAULT_RESTART_POLICY = { baseMs: 500, maxMs: 10_000, maxRestarts: 5, windowMs: 60_000 };

/**
 * Milliseconds to wait before the next restart, or null to give up.
 * @param {readonly number[]} restarts times (ms) of earlier restarts
 * @param {number} now
 * @param {RestartPolicy} [policy]
 * @returns {number | null}
 */
export function restartDelay(restarts, now, policy = DEFAULT_RESTART_POLICY) {
  const recent = restarts.filter((t) => now - t < policy.windowMs).length;
  if (recent >= policy.maxRestarts) return null;
  return Math.min(policy.maxMs, policy.baseMs * 2 ** recent);
}
