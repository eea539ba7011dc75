// When a supervised service that died is started again: exponential backoff, and a bound on
// restarts within a window so a service that cannot stay up (bad config, a crash loop) ends the
// cluster with a clear message instead of flapping forever.

export interface RestartPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
  readonly maxRestarts: number;
  readonly windowMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = { baseMs: 500, maxMs: 10_000, maxRestarts: 5, windowMs: 60_000 };

/** Milliseconds to wait before the next restart, or null to give up; `restarts` are the times (ms) of earlier ones. */
export function restartDelay(restarts: readonly number[], now: number, policy: RestartPolicy = DEFAULT_RESTART_POLICY): number | null {
  const recent = restarts.filter((t) => now - t < policy.windowMs).length;
  if (recent >= policy.maxRestarts) return null;
  return Math.min(policy.maxMs, policy.baseMs * 2 ** recent);
}
