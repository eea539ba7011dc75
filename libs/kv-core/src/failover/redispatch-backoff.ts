import { ErrorCode } from '../errors/error-code.enum.js';

/**
 * How a continuation waits out a cluster with no node to take it. A stream cut by a NATS restart
 * or a cluster-wide blip is moved while the scheduler may not have resubscribed yet (no one
 * answers) or no node has re-registered since (the scheduler dropped the silent ones): both come
 * back within seconds, and the client already holds a 200 and half an answer. So the move is
 * retried with a doubling delay for as long as the request's deadline leaves room, instead of
 * failing the stream on the first no_node_available. Anything else (a timeout that already spent
 * the deadline, a refusal) is not waited out.
 */
export interface RedispatchBackoff {
  /** Delay before the first retry, ms (> 0). */
  readonly firstDelayMs: number;
  /** The delay doubles up to this, ms (≥ firstDelayMs). */
  readonly maxDelayMs: number;
}

export const DEFAULT_REDISPATCH_BACKOFF: RedispatchBackoff = { firstDelayMs: 100, maxDelayMs: 2000 };

/**
 * Milliseconds to wait before retry number `retries` (0 for the first) of a continuation that
 * failed with `code`, or null to give up: the error is not transient, or the wait would leave
 * less than the wait itself before the deadline (`remainingMs`), too little to be served.
 */
export function redispatchDelay(
  code: string,
  retries: number,
  remainingMs: number,
  b: RedispatchBackoff = DEFAULT_REDISPATCH_BACKOFF,
): number | null {
  if (!(Number.isInteger(retries) && retries >= 0)) throw new RangeError(`retries must be an integer >= 0, got ${retries}`);
  if (!(b.firstDelayMs > 0 && b.maxDelayMs >= b.firstDelayMs))
    throw new RangeError(`backoff needs 0 < firstDelayMs <= maxDelayMs, got ${b.firstDelayMs}/${b.maxDelayMs}`);
  if (code !== ErrorCode.NoNodeAvailable) return null;
  const delay = Math.min(b.maxDelayMs, b.firstDelayMs * 2 ** Math.min(retries, 30));
  return 2 * delay <= remainingMs ? delay : null;
}
